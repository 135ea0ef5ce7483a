//! Per-phase and whole-step benches on the standard scenes, at 1 and 2
//! threads.
//!
//! Each sample runs real `update`s on a settled scene (sleeping off, so the
//! work stays the same from step to step) and reports the time of one
//! phase as `StepStats` measured it inside the step (`iter_custom`), so a
//! phase is timed with the caches and data it really has.
//!
//! `cargo bench -p archipelago-benches --bench phases`

use archipelago::{
    build_pinned_pool, scenes, PhaseTimes, PhysicsSettings, PhysicsSystem, ThreadPool,
};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::time::Duration;

/// Steps before measuring: the pyramid's layers land and settle.
const SETTLE_STEPS: usize = 120;

fn settled(name: &str, pool: &ThreadPool) -> PhysicsSystem {
    let scene = scenes::by_name(name).expect("standard scene");
    let settings = PhysicsSettings {
        allow_sleeping: false,
        ..PhysicsSettings::default()
    };
    let (mut w, _) = scene.build(settings).expect("builds");
    for _ in 0..SETTLE_STEPS {
        w.update(scenes::DT, 1, pool).expect("step");
    }
    w
}

type Pick = fn(&PhaseTimes) -> Duration;

const PHASES: [(&str, Pick); 9] = [
    ("broad_phase", |t| t.broad_phase),
    ("narrow_phase", |t| t.narrow_phase),
    ("islands", |t| t.islands),
    ("split", |t| t.split),
    ("setup", |t| t.setup),
    ("velocity_solve", |t| t.velocity_solve),
    ("integrate", |t| t.integrate),
    ("position_solve", |t| t.position_solve),
    ("sleep", |t| t.sleep),
];

fn phases(c: &mut Criterion) {
    for threads in [1, 2] {
        let pool = build_pinned_pool(Some(threads)).expect("pool").pool;
        for scene in ["pyramid", "towers", "piles"] {
            let mut group = c.benchmark_group(format!("{scene}/{threads}t"));
            group
                .sample_size(20)
                .measurement_time(Duration::from_secs(3));
            let mut w = settled(scene, &pool);
            group.bench_function("step", |b| {
                b.iter(|| w.update(scenes::DT, 1, &pool).expect("step"))
            });
            for (name, pick) in PHASES {
                group.bench_function(BenchmarkId::new("phase", name), |b| {
                    b.iter_custom(|iters| {
                        (0..iters)
                            .map(|_| pick(&w.update(scenes::DT, 1, &pool).expect("step").times))
                            .sum()
                    })
                });
            }
            group.finish();
        }
    }
}

criterion_group!(benches, phases);
criterion_main!(benches);
