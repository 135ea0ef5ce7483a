//! Instruction counts (callgrind, through iai-callgrind) of whole steps on
//! the standard scenes: repeatable to a handful of instructions on a noisy
//! machine, so a 2% change is a real change. `benches/iai-compare.sh` runs
//! them against a saved baseline and fails on regressions over 2%.
//!
//! Only steps are counted: the scene is built in the setup (uncounted), and
//! collection is toggled on `PhysicsSystem::step`, which runs on the
//! (single) pool worker, so every step of the process counts and nothing
//! else does. Each bench is the scene's first `STEPS` steps (the pyramid's
//! layers have landed and formed one island by then). valgrind 3.19 cannot
//! decode AVX-512, so the script builds these with `-C target-cpu=haswell`.
//!
//! `bash benches/iai-compare.sh [save|compare]`

use archipelago::{build_pinned_pool, scenes, PhysicsSettings, PhysicsSystem, ThreadPool};
use iai_callgrind::{
    library_benchmark, library_benchmark_group, main, Callgrind, EntryPoint, LibraryBenchmarkConfig,
};
use std::hint::black_box;

/// Steps counted per scene.
const STEPS: usize = 30;

fn built(name: &str) -> (PhysicsSystem, ThreadPool) {
    let pool = build_pinned_pool(Some(1)).expect("pool").pool;
    let scene = scenes::by_name(name).expect("standard scene");
    let (w, _) = scene.build(PhysicsSettings::default()).expect("builds");
    (w, pool)
}

#[library_benchmark]
#[bench::pyramid(built("pyramid"))]
#[bench::rain(built("rain"))]
#[bench::towers(built("towers"))]
#[bench::piles(built("piles"))]
fn steps((mut world, pool): (PhysicsSystem, ThreadPool)) -> u64 {
    for _ in 0..STEPS {
        black_box(world.update(scenes::DT, 1, &pool).expect("step"));
    }
    world.state_hash()
}

library_benchmark_group!(name = step_group; benchmarks = steps);

main!(
    config = LibraryBenchmarkConfig::default().tool(
        Callgrind::default().entry_point(EntryPoint::Custom("*PhysicsSystem*::step".to_owned()))
    );
    library_benchmark_groups = step_group
);
