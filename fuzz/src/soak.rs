//! The churn soak: a world of `bodies` bodies on a floor where every step
//! destroys a fraction of them (random ones) and creates as many new ones,
//! for `steps` steps. What must hold: the body count is exact after every
//! step (the world is created with room for exactly `bodies + 1` bodies, so
//! every slot is reused), no body faults and none is non-finite, memory is
//! flat (live heap bytes and resident memory per window, after warm-up),
//! and the cost per step is flat.

use crate::ops::Rng;
use archipelago::*;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct SoakConfig {
    pub bodies: usize,
    pub steps: u64,
    /// Bodies replaced per step.
    pub churn: usize,
    pub threads: usize,
    pub seed: u64,
    /// Steps per reported window.
    pub window: u64,
}

/// One window of steps.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Steps done at the window's end.
    pub step: u64,
    pub ms_per_step: f64,
    /// Live heap bytes at the window's end (when the caller counts them).
    pub heap_bytes: Option<i64>,
    /// Resident memory at the window's end, from /proc/self/statm.
    pub rss_bytes: Option<u64>,
    pub active: u32,
    pub manifolds: u32,
    pub sleeping_islands: u32,
}

/// What went wrong, if anything, and the windows.
#[derive(Debug, Clone, Default)]
pub struct SoakReport {
    pub windows: Vec<Window>,
    pub created: u64,
    pub destroyed: u64,
    /// Steps after which the body count was not the expected one.
    pub count_errors: u64,
    pub faulted: u64,
    pub non_finite: u64,
    /// Updates or creations that failed.
    pub call_errors: u64,
    pub elapsed: Duration,
}

impl SoakReport {
    pub fn clean(&self) -> bool {
        self.count_errors == 0 && self.faulted == 0 && self.non_finite == 0 && self.call_errors == 0
    }
}

fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// A random body dropped somewhere above the floor.
fn random_body(r: &mut Rng) -> BodyCreationSettings {
    let shape = match r.below(3) {
        0 => Shape::Sphere {
            radius: r.range(0.2, 0.6),
        },
        1 => Shape::Box {
            half_extents: Vec3::new(r.range(0.2, 0.6), r.range(0.2, 0.6), r.range(0.2, 0.6)),
        },
        _ => Shape::Capsule {
            half_height: r.range(0.1, 0.5),
            radius: r.range(0.15, 0.4),
        },
    };
    let p = Vec3::new(
        r.range(-20.0, 20.0),
        r.range(1.0, 12.0),
        r.range(-20.0, 20.0),
    );
    BodyCreationSettings::new(shape, p, MotionType::Dynamic).with_linear_velocity(Vec3::new(
        r.range(-2.0, 2.0),
        0.0,
        r.range(-2.0, 2.0),
    ))
}

/// Runs the soak. `heap` reads the live heap bytes if the binary counts
/// them; `on_window` sees each window as it ends.
pub fn soak(
    cfg: &SoakConfig,
    heap: Option<&dyn Fn() -> i64>,
    mut on_window: impl FnMut(&Window),
) -> SoakReport {
    let pool = build_pinned_pool(Some(cfg.threads)).expect("a pool").pool;
    let capacities = Capacities {
        max_bodies: cfg.bodies + 1,
        max_body_pairs: 16 * cfg.bodies,
        max_contact_constraints: 8 * cfg.bodies,
        max_joints: 8,
    };
    let mut w = PhysicsSystem::new(capacities, PhysicsSettings::default()).expect("a world");
    let floor = Shape::cuboid(Vec3::new(40.0, 1.0, 40.0)).expect("a floor");
    w.create_and_add_body(&BodyCreationSettings::new(
        floor,
        Vec3::new(0.0, -1.0, 0.0),
        MotionType::Static,
    ))
    .expect("room for the floor");
    let mut r = Rng::new(cfg.seed);
    let mut live: Vec<BodyId> = (0..cfg.bodies)
        .map(|_| w.create_and_add_body(&random_body(&mut r)).expect("room"))
        .collect();
    let mut report = SoakReport {
        // sized up front, so the report's own growth is not in the heap
        windows: Vec::with_capacity((cfg.steps / cfg.window.max(1)) as usize + 1),
        ..SoakReport::default()
    };
    let start = Instant::now();
    let mut window_start = Instant::now();
    for step in 1..=cfg.steps {
        for _ in 0..cfg.churn.min(live.len()) {
            let k = r.below(live.len() as u64) as usize;
            let id = live.swap_remove(k);
            if w.destroy_body(id).is_err() {
                report.call_errors += 1;
            }
            report.destroyed += 1;
        }
        while live.len() < cfg.bodies {
            match w.create_and_add_body(&random_body(&mut r)) {
                Ok(id) => live.push(id),
                Err(_) => {
                    report.call_errors += 1;
                    break;
                }
            }
            report.created += 1;
        }
        match w.update(scenes::DT, 1, &pool) {
            Ok(s) => report.faulted += s.bodies_faulted as u64,
            Err(_) => report.call_errors += 1,
        }
        if w.num_bodies() != cfg.bodies + 1 || w.num_active_bodies() > cfg.bodies {
            report.count_errors += 1;
        }
        if step % cfg.window == 0 {
            let elapsed = window_start.elapsed();
            report.non_finite += live
                .iter()
                .filter(|&&id| {
                    !(w.position(id).is_ok_and(|p| p.is_finite())
                        && w.linear_velocity(id).is_ok_and(|v| v.is_finite())
                        && w.angular_velocity(id).is_ok_and(|v| v.is_finite())
                        && w.rotation(id).is_ok_and(|q| q.is_finite()))
                })
                .count() as u64;
            let s = w.last_stats();
            let win = Window {
                step,
                ms_per_step: elapsed.as_secs_f64() * 1e3 / cfg.window as f64,
                heap_bytes: heap.map(|h| h()),
                rss_bytes: rss_bytes(),
                active: s.active_bodies,
                manifolds: s.manifolds,
                sleeping_islands: s.sleeping_islands,
            };
            on_window(&win);
            report.windows.push(win);
            window_start = Instant::now();
        }
    }
    report.elapsed = start.elapsed();
    report
}
