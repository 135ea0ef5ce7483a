//! Prints every standard scene's `state_hash()` after a fixed number of
//! steps on every solver path this CPU can run (each SIMD path, and lane by
//! lane), one line per scene, and fails if the paths disagree.
//!
//! Run from two builds of the same commit on one machine, the outputs must
//! be identical: `.ci/run` compares the default build (`-C
//! target-cpu=native`, from `.cargo/config.toml`) with a baseline x86-64
//! build (SSE2 only: no FMA, no AVX anywhere it was compiled), which is
//! what a crate depending on archipelago without target flags gets.
//!
//!     cargo run --release -p archipelago-benches --bin state_hashes -- [--steps N]

use archipelago::{scenes, PhysicsSettings, SimdPath, SolverWidth};

fn main() {
    let mut steps = 120usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().and_then(|v| v.parse().ok())) {
            ("--steps", Some(n)) => steps = n,
            _ => {
                eprintln!("usage: state_hashes [--steps N]");
                std::process::exit(2);
            }
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a 2-worker pool");
    let mut runs: Vec<(SolverWidth, SimdPath)> = SimdPath::available()
        .map(|p| (SolverWidth::Wide, p))
        .collect();
    runs.push((SolverWidth::Scalar, SimdPath::Auto));
    eprintln!("paths compared: {runs:?}");
    let mut agree = true;
    for name in scenes::NAMES {
        let scene = scenes::by_name(name).expect("a standard scene");
        let hashes: Vec<u64> = runs
            .iter()
            .map(|&(width, simd)| {
                let settings = PhysicsSettings {
                    solver_width: width,
                    simd,
                    ..PhysicsSettings::default()
                };
                let (mut w, ids) = scene.build(settings).expect("the scene builds");
                for step in 0..steps {
                    scene
                        .before_update(&mut w, &ids, step as u32)
                        .expect("late bodies");
                    w.update(scenes::DT, 1, &pool).expect("a step");
                }
                w.state_hash()
            })
            .collect();
        let same = hashes.iter().all(|&h| h == hashes[0]);
        agree &= same;
        if same {
            println!("{name:<12} {steps} steps {:016x}", hashes[0]);
        } else {
            let each: Vec<String> = runs
                .iter()
                .zip(&hashes)
                .map(|((w, p), h)| format!("{w:?}/{p:?} {h:016x}"))
                .collect();
            println!("{name:<12} {steps} steps PATHS DIFFER: {}", each.join(", "));
        }
    }
    if !agree {
        std::process::exit(1);
    }
}
