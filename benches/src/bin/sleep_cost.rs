//! What a step costs once a scene is asleep, against the same scene awake.
//!
//! Runs the `piles` scene (1000 separate cubes on the floor) twice side by
//! side: with sleeping allowed (all asleep after ~0.5 s) and with sleeping
//! disabled (all awake forever), and prints the median ms/step of each over
//! the same step window after everything has settled, and their ratio.
//!
//! `cargo run --release -p archipelago-benches --bin sleep_cost [-- SCENE]`

use archipelago::{scenes, PhysicsSettings, ThreadPool};
use std::time::Instant;

const SETTLE_STEPS: usize = 120; // 2 s: piles are asleep well before
const MEASURE_STEPS: usize = 300;
const RUNS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run(pool: &ThreadPool, scene: &scenes::Scene, allow_sleeping: bool) -> (f64, u32) {
    let settings = PhysicsSettings {
        allow_sleeping,
        ..PhysicsSettings::default()
    };
    let (mut world, _) = scene.build(settings).expect("standard scene");
    for _ in 0..SETTLE_STEPS {
        world.update(scenes::DT, 1, pool).expect("step");
    }
    let t0 = Instant::now();
    for _ in 0..MEASURE_STEPS {
        world.update(scenes::DT, 1, pool).expect("step");
    }
    let ms = t0.elapsed().as_secs_f64() * 1e3 / MEASURE_STEPS as f64;
    (ms, world.last_stats().active_bodies)
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "piles".into());
    let Some(scene) = scenes::by_name(&name) else {
        eprintln!("unknown scene {name:?}");
        std::process::exit(2);
    };
    // One worker: the point is the cost of a sleeping world, not scaling.
    let pool = archipelago::build_pinned_pool(Some(1))
        .expect("thread pool")
        .pool;
    let (mut asleep, mut awake) = (Vec::new(), Vec::new());
    let mut active = (0, 0);
    for _ in 0..RUNS {
        let (ms, a) = run(&pool, &scene, true);
        asleep.push(ms);
        active.0 = a;
        let (ms, a) = run(&pool, &scene, false);
        awake.push(ms);
        active.1 = a;
    }
    let (s, w) = (median(asleep), median(awake));
    println!(
        "{name}: steps {SETTLE_STEPS}..{} median of {RUNS} interleaved runs",
        SETTLE_STEPS + MEASURE_STEPS
    );
    println!(
        "  sleeping allowed : {:.3} us/step ({} active bodies)",
        s * 1e3,
        active.0
    );
    println!(
        "  sleeping disabled: {:.3} us/step ({} active bodies)",
        w * 1e3,
        active.1
    );
    println!("  asleep / awake   : {:.4}%", 100.0 * s / w);
}
