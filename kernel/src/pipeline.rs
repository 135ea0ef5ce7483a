//! The step: the phases of `../shared/DESIGN.md`'s step list, in order, each
//! timed into [`StepStats`]. Islands, the splitter and sleeping slot in
//! between these phases as they land.

use crate::broadphase::find_pairs_brute_force;
use crate::error::{PhysicsError, Result};
use crate::integrate::{apply_forces, integrate_positions, update_bounds};
use crate::system::PhysicsSystem;
use std::time::{Duration, Instant};

/// Problems a step worked around (Jolt's `EPhysicsUpdateError`): the step
/// still completed, but dropped work.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct UpdateWarnings(u8);

impl UpdateWarnings {
    /// More candidate pairs than `max_body_pairs`: the extra pairs (highest
    /// body indices) got no contacts this step.
    pub const BODY_PAIRS_FULL: Self = Self(1);
    /// More touching manifolds than `max_contact_constraints`: the
    /// shallowest were dropped.
    pub const CONTACT_CONSTRAINTS_FULL: Self = Self(2);

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
    fn insert(&mut self, other: Self) {
        self.0 |= other.0;
    }
}

/// Wall-clock time of each phase, summed over the collision steps.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct PhaseTimes {
    pub apply_forces: Duration,
    pub broad_phase: Duration,
    pub narrow_phase: Duration,
    pub setup: Duration,
    pub velocity_solve: Duration,
    pub integrate: Duration,
    pub position_solve: Duration,
    pub update_bounds: Duration,
}

impl PhaseTimes {
    /// `(name, time)` of every phase, in step order.
    pub fn named(&self) -> [(&'static str, Duration); 8] {
        [
            ("apply_forces", self.apply_forces),
            ("broad_phase", self.broad_phase),
            ("narrow_phase", self.narrow_phase),
            ("setup", self.setup),
            ("velocity_solve", self.velocity_solve),
            ("integrate", self.integrate),
            ("position_solve", self.position_solve),
            ("update_bounds", self.update_bounds),
        ]
    }
}

/// What one `update` did. Counts are those of the last collision step;
/// times and drops are summed over all of them.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct StepStats {
    pub times: PhaseTimes,
    pub total: Duration,
    pub active_bodies: u32,
    pub body_pairs: u32,
    /// Touching manifolds (including sensor ones).
    pub manifolds: u32,
    pub contact_points: u32,
    /// Points that started from last step's impulses.
    pub warm_started_points: u32,
    /// Manifolds involving a sensor (reported, not solved).
    pub sensor_manifolds: u32,
    pub body_pairs_dropped: u32,
    pub manifolds_dropped: u32,
    pub warnings: UpdateWarnings,
}

/// Runs `f`, adding its wall time to `slot`.
#[inline]
fn timed<T>(slot: &mut Duration, f: impl FnOnce() -> T) -> T {
    let t0 = Instant::now();
    let r = f();
    *slot += t0.elapsed();
    r
}

impl PhysicsSystem {
    /// Advances the world by `dt` seconds in `collision_steps` equal sub-steps.
    ///
    /// `dt <= 0` or a world without moving bodies does nothing but report.
    /// A non-finite `dt` or `collision_steps == 0` is refused.
    pub fn update(&mut self, dt: f32, collision_steps: u32) -> Result<StepStats> {
        if !dt.is_finite() || collision_steps == 0 {
            return Err(PhysicsError::InvalidTimeStep);
        }
        let t0 = Instant::now();
        let mut stats = StepStats {
            active_bodies: self.bodies.active.len() as u32,
            ..StepStats::default()
        };
        if dt <= 0.0 || self.bodies.active.is_empty() {
            stats.total = t0.elapsed();
            self.last_stats = stats;
            return Ok(stats);
        }
        let sub_dt = dt / collision_steps as f32;
        for _ in 0..collision_steps {
            self.collision_step(sub_dt, &mut stats);
        }
        stats.total = t0.elapsed();
        self.last_stats = stats;
        Ok(stats)
    }

    fn collision_step(&mut self, dt: f32, stats: &mut StepStats) {
        let s = self.settings;
        let times = &mut stats.times;
        let bodies = &mut self.bodies;

        timed(&mut times.apply_forces, || apply_forces(bodies, &s, dt));

        let search = timed(&mut times.broad_phase, || {
            find_pairs_brute_force(bodies, &mut self.pairs, self.capacities.max_body_pairs)
        });

        let narrow = timed(&mut times.narrow_phase, || {
            self.narrow
                .run(bodies, &self.pairs, s.speculative_contact_distance)
        });
        let manifolds = &mut self.narrow.manifolds;

        let warm = timed(&mut times.setup, || {
            let warm = self.cache.warm_start(
                manifolds,
                s.contact_point_preserve_distance,
                s.contact_normal_preserve_cos,
            );
            self.solver.setup(bodies, manifolds, &s, dt);
            warm
        });

        timed(&mut times.velocity_solve, || {
            self.solver.solve_velocities(s.velocity_iterations);
            self.solver.finish_velocities(bodies, manifolds);
        });

        timed(&mut times.integrate, || integrate_positions(bodies, &s, dt));

        timed(&mut times.position_solve, || {
            self.solver.solve_positions(bodies, manifolds, &s)
        });

        timed(&mut times.update_bounds, || {
            update_bounds(bodies, s.speculative_contact_distance);
            self.cache.store(manifolds);
        });

        stats.body_pairs = self.pairs.len() as u32;
        stats.manifolds = manifolds.len() as u32;
        stats.contact_points = manifolds.iter().map(|m| m.count).sum();
        stats.sensor_manifolds = manifolds.iter().filter(|m| m.sensor).count() as u32;
        stats.warm_started_points = warm;
        stats.body_pairs_dropped += search.dropped;
        stats.manifolds_dropped += narrow.dropped_manifolds;
        if search.dropped > 0 {
            stats.warnings.insert(UpdateWarnings::BODY_PAIRS_FULL);
        }
        if narrow.dropped_manifolds > 0 {
            stats
                .warnings
                .insert(UpdateWarnings::CONTACT_CONSTRAINTS_FULL);
        }
    }
}
