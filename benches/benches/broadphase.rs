//! Broad-phase pair finding: SAP, MBP and brute force side by side on four
//! patterns at 1k, 10k and 50k bodies.
//!
//! (a) `sleeping`: 95% of the bodies static or asleep, 5% moving
//! (b) `moving`: every body moving
//! (c) `insert10`: 10% of the bodies inserted in one step
//! (d) `uneven`: a large world, half the bodies packed in one dense cluster
//!
//! Only `update_broad_phase` is timed (queued moves/insertions applied and
//! pairs reported); moving the bodies happens outside the timer.
//!
//! `cargo bench -p archipelago-benches --bench broadphase`

use archipelago::{
    BodyCreationSettings, BodyId, BroadPhaseKind, Capacities, MbpSettings, MotionType,
    PhysicsSettings, PhysicsSystem, Shape, Vec3,
};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::time::{Duration, Instant};

struct Rng(u64);
impl Rng {
    fn f(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let u = archipelago::scenes::splitmix64(self.0);
        lo + (hi - lo) * ((u >> 40) as f32 / (1u64 << 24) as f32)
    }
}

#[derive(Clone, Copy, Debug)]
enum Pattern {
    Sleeping,
    Moving,
    Insert10,
    Uneven,
}

/// Half side of the world: boxes of ~1 m at a density of one per 8 m³
/// (uneven: a 4× larger world, half of the bodies in a cluster).
fn half_world(n: usize, pattern: Pattern) -> f32 {
    let side = (n as f32 * 8.0).cbrt();
    match pattern {
        Pattern::Uneven => 2.0 * side,
        _ => 0.5 * side,
    }
}

fn body(
    rng: &mut Rng,
    k: usize,
    n: usize,
    pattern: Pattern,
    motion: MotionType,
) -> BodyCreationSettings {
    let w = half_world(n, pattern);
    let p = if matches!(pattern, Pattern::Uneven) && k.is_multiple_of(2) {
        let c = 0.1 * w;
        Vec3::new(rng.f(-c, c), rng.f(-c, c), rng.f(-c, c))
    } else {
        Vec3::new(rng.f(-w, w), rng.f(-w, w), rng.f(-w, w))
    };
    let h = Vec3::new(rng.f(0.2, 0.7), rng.f(0.2, 0.7), rng.f(0.2, 0.7));
    BodyCreationSettings::new(Shape::cuboid(h).unwrap(), p, motion)
}

fn kinds(n: usize, pattern: Pattern) -> [(&'static str, BroadPhaseKind); 3] {
    let w = half_world(n, pattern) + 1.0;
    [
        ("sap", BroadPhaseKind::Sap),
        (
            "mbp",
            BroadPhaseKind::Mbp(MbpSettings {
                world_min: Vec3::splat(-w),
                world_max: Vec3::splat(w),
                subdivisions: 8,
            }),
        ),
        ("brute", BroadPhaseKind::BruteForce),
    ]
}

struct Setup {
    world: PhysicsSystem,
    movers: Vec<BodyId>,
    rng: Rng,
}

fn setup(kind: BroadPhaseKind, n: usize, pattern: Pattern) -> Setup {
    let caps = Capacities {
        max_bodies: n + 16,
        max_body_pairs: 4 * n + 1024,
        max_contact_constraints: 1024,
        max_joints: 0,
    };
    let settings = PhysicsSettings {
        broad_phase: kind,
        ..PhysicsSettings::default()
    };
    let mut world = PhysicsSystem::new(caps, settings).unwrap();
    let mut rng = Rng(n as u64);
    let mut movers = Vec::new();
    let initial = if matches!(pattern, Pattern::Insert10) {
        n * 9 / 10
    } else {
        n
    };
    for k in 0..initial {
        let moving = match pattern {
            Pattern::Sleeping => k % 20 == 0,
            _ => true,
        };
        let motion = if moving {
            MotionType::Dynamic
        } else {
            MotionType::Static
        };
        let id = world
            .create_and_add_body(&body(&mut rng, k, n, pattern, motion))
            .unwrap();
        if moving {
            movers.push(id);
        }
    }
    world.update_broad_phase(); // initial batch insertion, not measured
    Setup { world, movers, rng }
}

/// Moves every mover a little (outside the timer).
fn jitter(s: &mut Setup) {
    for &id in &s.movers {
        let p = s.world.position(id).unwrap();
        let d = Vec3::new(
            s.rng.f(-0.05, 0.05),
            s.rng.f(-0.05, 0.05),
            s.rng.f(-0.05, 0.05),
        );
        s.world.set_position(id, p + d).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    for pattern in [
        Pattern::Sleeping,
        Pattern::Moving,
        Pattern::Insert10,
        Pattern::Uneven,
    ] {
        let mut group = c.benchmark_group(format!("broadphase/{pattern:?}").to_lowercase());
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(2));
        for n in [1_000usize, 10_000, 50_000] {
            for (name, kind) in kinds(n, pattern) {
                group.bench_with_input(BenchmarkId::new(name, n), &n, |b, &n| match pattern {
                    Pattern::Insert10 => b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let mut s = setup(kind, n, pattern);
                            let mut rng = Rng(7);
                            for k in 0..n / 10 {
                                s.world
                                    .create_and_add_body(&body(
                                        &mut rng,
                                        k,
                                        n,
                                        pattern,
                                        MotionType::Dynamic,
                                    ))
                                    .unwrap();
                            }
                            let t0 = Instant::now();
                            std::hint::black_box(s.world.update_broad_phase());
                            total += t0.elapsed();
                        }
                        total
                    }),
                    _ => {
                        let mut s = setup(kind, n, pattern);
                        b.iter_custom(|iters| {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                jitter(&mut s);
                                let t0 = Instant::now();
                                std::hint::black_box(s.world.update_broad_phase());
                                total += t0.elapsed();
                            }
                            total
                        })
                    }
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
