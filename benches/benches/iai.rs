//! Instruction counts (callgrind, through iai-callgrind) of whole steps on
//! the standard scenes: repeatable to a handful of instructions on a noisy
//! machine, so a 2% change is a real change. `benches/iai-compare.sh` runs
//! them against a saved baseline and fails on regressions over 2%.
//!
//! Only the step itself is counted: the scene is built and settled in the
//! setup, and collection is toggled on `PhysicsSystem::step`, which runs on
//! the (single) pool worker. valgrind 3.19 cannot decode AVX-512, so the
//! script builds these with `-C target-cpu=haswell`.
//!
//! `bash benches/iai-compare.sh [save|compare]`

use archipelago::{build_pinned_pool, scenes, PhysicsSettings, PhysicsSystem, ThreadPool};
use iai_callgrind::{
    library_benchmark, library_benchmark_group, main, Callgrind, EntryPoint, LibraryBenchmarkConfig,
};
use std::hint::black_box;

/// Steps run before counting (in the setup, not counted).
const SETTLE_STEPS: usize = 10;
/// Steps counted.
const COUNTED_STEPS: usize = 3;

fn settled(name: &str) -> (PhysicsSystem, ThreadPool) {
    let pool = build_pinned_pool(Some(1)).expect("pool").pool;
    let scene = scenes::by_name(name).expect("standard scene");
    let (mut w, _) = scene.build(PhysicsSettings::default()).expect("builds");
    for _ in 0..SETTLE_STEPS {
        w.update(scenes::DT, 1, &pool).expect("step");
    }
    (w, pool)
}

#[library_benchmark]
#[bench::pyramid(settled("pyramid"))]
#[bench::rain(settled("rain"))]
#[bench::towers(settled("towers"))]
#[bench::piles(settled("piles"))]
fn steps((mut world, pool): (PhysicsSystem, ThreadPool)) -> u64 {
    for _ in 0..COUNTED_STEPS {
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
