//! The step: the phases of `shared/DESIGN.md`'s step list, in order, each
//! timed into [`StepStats`]. The whole step runs inside the caller's pool;
//! every phase is either a serial stretch or a parallel loop over chunks
//! that write only their own slots (see `jobs.rs`), so no result depends on
//! which worker ran what:
//!
//! 1. early out when nothing is awake (or `dt <= 0`): broad-phase
//!    bookkeeping only
//! 2. broad phase: candidate pairs; awake bodies touching sleeping ones wake
//!    their whole island (repeated until nothing more wakes)
//! 3. apply gravity, forces and damping to the awake bodies
//! 4. narrow phase: contact manifolds
//! 5. islands: link contacts, number and sort islands biggest first
//! 6. split large islands (Jolt's splitter), lay out the constraint order
//! 7. solver setup (warm start is the velocity solve's iteration 0)
//! 8. velocity iterations
//! 9. integrate positions
//! 10. position iterations
//! 11. sleep test (last collision step only): whole islands go to sleep
//! 12. bounds and contact cache for the next step

use crate::body::{Bodies, MotionType};
use crate::collide::{collide, Placed};
use crate::disjoint::Disjoint;
use crate::error::{PhysicsError, Result};
use crate::integrate::{apply_forces, integrate_positions, update_bounds};
use crate::jobs::StepCtx;
use crate::limits::{MAX_COLLISION_STEPS, MAX_TIME_STEP, MIN_TIME_STEP};
use crate::narrowphase::Manifold;
use crate::sleep::{
    can_wake_others, next_sleep_state, put_island_to_sleep, wake_island, SleepState,
};
use crate::system::PhysicsSystem;
use crate::thread_pool::{pinning_from_bits, Pinning};
use crate::trace::Tracer;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
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
    /// A body's state became non-finite and the body was taken out of the
    /// simulation (see [`StepStats::bodies_faulted`]).
    pub const BODIES_FAULTED: Self = Self(4);

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
    pub(crate) fn insert(&mut self, other: Self) {
        self.0 |= other.0;
    }
}

/// Wall-clock time of each phase, summed over the collision steps.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct PhaseTimes {
    /// Pair search plus waking sleeping islands touched by awake bodies.
    pub broad_phase: Duration,
    pub apply_forces: Duration,
    pub narrow_phase: Duration,
    pub islands: Duration,
    /// Large-island splitting and the solver's constraint order and
    /// schedules.
    pub split: Duration,
    pub setup: Duration,
    pub velocity_solve: Duration,
    pub integrate: Duration,
    pub position_solve: Duration,
    pub sleep: Duration,
    pub update_bounds: Duration,
}

impl PhaseTimes {
    /// `(name, time)` of every phase, in step order.
    pub fn named(&self) -> [(&'static str, Duration); 11] {
        [
            ("broad_phase", self.broad_phase),
            ("apply_forces", self.apply_forces),
            ("narrow_phase", self.narrow_phase),
            ("islands", self.islands),
            ("split", self.split),
            ("setup", self.setup),
            ("velocity_solve", self.velocity_solve),
            ("integrate", self.integrate),
            ("position_solve", self.position_solve),
            ("sleep", self.sleep),
            ("update_bounds", self.update_bounds),
        ]
    }

    /// Adds another step's times.
    pub fn accumulate(&mut self, other: &PhaseTimes) {
        self.broad_phase += other.broad_phase;
        self.apply_forces += other.apply_forces;
        self.narrow_phase += other.narrow_phase;
        self.islands += other.islands;
        self.split += other.split;
        self.setup += other.setup;
        self.velocity_solve += other.velocity_solve;
        self.integrate += other.integrate;
        self.position_solve += other.position_solve;
        self.sleep += other.sleep;
        self.update_bounds += other.update_bounds;
    }
}

/// What one `update` did. Counts are those of the last collision step (and
/// of the world after it); times, drops and sleep transitions are summed
/// over all of them.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct StepStats {
    pub times: PhaseTimes,
    pub total: Duration,
    /// Awake non-static bodies after the step.
    pub active_bodies: u32,
    /// Awake islands this step.
    pub islands: u32,
    /// Sleeping islands after the step.
    pub sleeping_islands: u32,
    pub bodies_put_to_sleep: u32,
    /// Bodies woken during the step by awake bodies touching them (calls
    /// such as `add_impulse` wake bodies between steps and are not counted).
    pub bodies_woken: u32,
    pub body_pairs: u32,
    /// Touching manifolds (including sensor ones).
    pub manifolds: u32,
    pub contact_points: u32,
    /// Points that started from last step's impulses.
    pub warm_started_points: u32,
    /// Manifolds involving a sensor (reported, not solved).
    pub sensor_manifolds: u32,
    /// Pairs that did not fit (`max_body_pairs`; for SAP and MBP also their
    /// persistent pair sets, twice that size, which then rebuild).
    pub body_pairs_dropped: u32,
    pub manifolds_dropped: u32,
    /// Overlaps the incremental broad phase (SAP) started and ended (net,
    /// per update).
    pub pairs_created: u32,
    pub pairs_deleted: u32,
    /// Bodies whose pose or velocity became non-finite in the step (a bug,
    /// or memory written behind the kernel's back: no accepted input can
    /// cause it). Each was stopped at its last finite pose with zero
    /// velocity and taken out of the simulation before it could spread NaN
    /// to the bodies it touches; [`PhysicsSystem::faulted_bodies`] lists
    /// them and they can be added again.
    pub bodies_faulted: u32,
    /// Bodies outside every MBP region (see
    /// [`PhysicsSystem::out_of_bounds_bodies`](crate::PhysicsSystem::out_of_bounds_bodies)).
    pub out_of_bounds: u32,
    pub warnings: UpdateWarnings,
    /// Workers in the pool the step ran on.
    pub threads: u32,
    /// How the workers that ran the step were tied to cores.
    pub pinning: Pinning,
    /// Islands big enough to split (last collision step).
    pub large_islands: u32,
    /// Non-empty splits over all large islands (last collision step).
    pub splits: u32,
    /// Constraints per split, summed over the large islands; index 31 is
    /// the non-parallel split (last collision step).
    pub split_items: [u32; crate::splitter::NUM_SPLITS],
}

impl StepStats {
    /// Awake plus sleeping islands.
    pub fn total_islands(&self) -> u32 {
        self.islands + self.sleeping_islands
    }
}

impl PhysicsSystem {
    /// Advances the world by `dt` seconds in `collision_steps` equal
    /// sub-steps, on the workers of `pool` (see
    /// [`build_pinned_pool`](crate::build_pinned_pool)). The result is
    /// bit-identical for any number of workers.
    ///
    /// `dt <= 0` or a world without awake bodies does nothing but report.
    /// Refused (`InvalidTimeStep`): a NaN or infinite `dt`,
    /// `dt > MAX_TIME_STEP`,
    /// `collision_steps` of 0 or above `MAX_COLLISION_STEPS`, and a `dt > 0`
    /// whose collision steps are shorter than `MIN_TIME_STEP`. A world
    /// whose earlier `update` panicked refuses with `Poisoned`.
    ///
    /// Called from outside the pool, this hands the step to the pool (one
    /// injected job, which rayon's queue allocates a block for every 63
    /// calls); called from inside one of its workers, it allocates nothing
    /// in steady state.
    pub fn update(
        &mut self,
        dt: f32,
        collision_steps: u32,
        pool: &rayon::ThreadPool,
    ) -> Result<StepStats> {
        let steps_ok = (1..=MAX_COLLISION_STEPS).contains(&collision_steps);
        // NaN fails every compare; -inf is a (no-op) dt <= 0.
        let dt_ok =
            dt <= MAX_TIME_STEP && (dt <= 0.0 || dt / collision_steps as f32 >= MIN_TIME_STEP);
        if !steps_ok || !dt_ok || dt == f32::NEG_INFINITY {
            return Err(PhysicsError::InvalidTimeStep);
        }
        if self.poisoned {
            return Err(PhysicsError::Poisoned);
        }
        let tracer = self
            .trace_armed
            .then(|| Tracer::new(pool.current_num_threads()));
        self.trace_armed = false;
        let pin_bits = AtomicU32::new(0);
        let threads = pool.current_num_threads();
        let injected = self.injected_panic.take();
        // Cleared when the step returns; a panic unwinds past it.
        self.poisoned = true;
        let stats = {
            let ctx = StepCtx {
                threads,
                tracer: tracer.as_ref(),
                pin_bits: &pin_bits,
                abort: AtomicBool::new(false),
                fault: injected.as_ref(),
            };
            pool.install(|| self.step(dt, collision_steps, &ctx))
        };
        self.poisoned = false;
        if let Some(t) = tracer {
            self.last_trace = Some(t.finish());
        }
        let stats = StepStats {
            pinning: pinning_from_bits(pin_bits.load(Ordering::Relaxed)),
            threads: threads as u32,
            ..stats
        };
        self.last_stats = stats;
        debug_assert_eq!(self.check_sleep_invariants(), Ok(()));
        Ok(stats)
    }

    // Never inlined: the instruction-count benches toggle collection on it
    // (it runs on the pool worker, where all the step's work happens).
    #[inline(never)]
    fn step(&mut self, dt: f32, collision_steps: u32, ctx: &StepCtx) -> StepStats {
        let t0 = Instant::now();
        let mut stats = StepStats::default();
        // This step's contacts replace the last's; faults are per update.
        self.clear_since_step();
        self.faulted.clear();
        if dt > 0.0 && !self.bodies.active.is_empty() {
            let sub_dt = dt / collision_steps as f32;
            for step in 0..collision_steps {
                let last = step + 1 == collision_steps;
                // Nothing enters a step non-finite (see `quarantine.rs`).
                if self.any_non_finite(ctx) {
                    ctx.serial("quarantine", || self.quarantine(&mut stats));
                }
                self.collision_step(ctx, sub_dt, last.then_some(dt), &mut stats);
            }
        } else {
            // Nothing simulated: no contacts this step (the cache keeps the
            // sleeping ones for when they wake). Broad-phase bookkeeping
            // only: bodies added, removed or moved since the last update
            // are filed now rather than all at the next awake step.
            if self.broad.has_pending() {
                let m = self.broad.update(ctx, &self.bodies);
                stats.pairs_created += m.created;
                stats.pairs_deleted += m.deleted;
                stats.body_pairs_dropped += m.dropped;
                if m.dropped > 0 {
                    stats.warnings.insert(UpdateWarnings::BODY_PAIRS_FULL);
                }
            }
            self.pairs.clear();
            self.narrow.manifolds.clear();
        }
        stats.active_bodies = self.bodies.active.len() as u32;
        stats.sleeping_islands = self.bodies.sleeping_islands as u32;
        stats.total = t0.elapsed();
        stats
    }

    /// One collision step of `dt`; `sleep_dt` is the whole update's `dt` on
    /// the last collision step (the only one that runs the sleep test).
    fn collision_step(
        &mut self,
        ctx: &StepCtx,
        dt: f32,
        sleep_dt: Option<f32>,
        stats: &mut StepStats,
    ) {
        let s = self.settings;
        let times = &mut stats.times;
        let bodies = &mut self.bodies;
        let max_pairs = self.capacities.max_body_pairs;

        let broad = &mut self.broad;
        let pairs = &mut self.pairs;
        let (maintained, search, woken) = ctx.phase("broad_phase", &mut times.broad_phase, || {
            let maintained = broad.update(ctx, bodies);
            let mut woken = 0;
            loop {
                let search = broad.report(ctx, bodies, &s.layer_filter, pairs, max_pairs);
                // Reported pairs have an awake side; with no sleeper in any
                // pair there is nothing to wake or drop (the common case
                // while everything moves).
                let sleeper = |p: &crate::broadphase::BodyPair| {
                    bodies.is_sleeping(p.a as usize) || bodies.is_sleeping(p.b as usize)
                };
                let now = if bodies.sleeping_islands > 0
                    && ctx.par_any("find sleepers", pairs, SLEEPER_CHECKS_PER_JOB, sleeper)
                {
                    ctx.serial("wake touched", || {
                        wake_touched(bodies, pairs, s.speculative_contact_distance)
                    })
                } else {
                    0
                };
                woken += now;
                if now == 0 {
                    break (maintained, search, woken);
                }
            }
        });
        stats.bodies_woken += woken;
        stats.pairs_created += maintained.created;
        stats.pairs_deleted += maintained.deleted;
        stats.out_of_bounds = search.out_of_bounds;

        ctx.phase("apply_forces", &mut times.apply_forces, || {
            apply_forces(ctx, bodies, &mut self.body_scratch, &s, dt)
        });

        let narrow = ctx.phase("narrow_phase", &mut times.narrow_phase, || {
            self.narrow
                .run(ctx, bodies, &self.pairs, s.speculative_contact_distance)
        });
        let manifolds = &mut self.narrow.manifolds;

        let islands = &mut self.islands;
        ctx.phase("islands", &mut times.islands, || {
            build_islands(ctx, islands, bodies, manifolds)
        });

        let split = ctx.phase("split", &mut times.split, || {
            self.solver.split(ctx, bodies, manifolds, islands, &s)
        });

        let warm = ctx.phase("setup", &mut times.setup, || {
            let warm = self.cache.warm_start(
                ctx,
                manifolds,
                s.contact_point_preserve_distance,
                s.contact_normal_preserve_cos,
            );
            self.solver.setup(ctx, bodies, manifolds, &s, dt);
            warm
        });

        ctx.phase("velocity_solve", &mut times.velocity_solve, || {
            self.solver.solve_velocities(ctx, s.velocity_iterations);
            self.solver.finish_velocities(ctx, bodies, manifolds);
        });

        let mut faults = ctx.phase("integrate", &mut times.integrate, || {
            integrate_positions(ctx, bodies, &mut self.body_scratch, &s, dt)
        });

        faults += ctx.phase("position_solve", &mut times.position_solve, || {
            self.solver.solve_positions(ctx, bodies, manifolds, &s)
        });

        if let Some(sleep_dt) = sleep_dt {
            let slept = ctx.phase("sleep", &mut times.sleep, || {
                sleep_islands(ctx, bodies, islands, &mut self.sleep_scratch, &s, sleep_dt)
            });
            stats.bodies_put_to_sleep += slept;
        }

        ctx.phase("update_bounds", &mut times.update_bounds, || {
            update_bounds(
                ctx,
                bodies,
                &mut self.body_scratch,
                s.speculative_contact_distance,
            );
            ctx.serial("mark moved", || {
                for &i in &bodies.active {
                    broad.moved(i);
                }
            });
            self.cache.store(ctx, manifolds, bodies);
        });

        stats.islands = islands.num_islands() as u32;
        stats.large_islands = split.large_islands;
        stats.split_items = split.split_items;
        stats.splits = split.split_items.iter().filter(|&&n| n > 0).count() as u32;
        stats.body_pairs = self.pairs.len() as u32;
        stats.manifolds = manifolds.len() as u32;
        stats.contact_points = manifolds.iter().map(|m| m.count).sum();
        stats.sensor_manifolds = manifolds.iter().filter(|m| m.sensor).count() as u32;
        stats.warm_started_points = warm;
        stats.body_pairs_dropped += search.dropped + maintained.dropped;
        stats.manifolds_dropped += narrow.dropped_manifolds;
        if search.dropped + maintained.dropped > 0 {
            stats.warnings.insert(UpdateWarnings::BODY_PAIRS_FULL);
        }
        if narrow.dropped_manifolds > 0 {
            stats
                .warnings
                .insert(UpdateWarnings::CONTACT_CONSTRAINTS_FULL);
        }
        // Bodies the integration or the position solve stopped: out of the
        // simulation before the next step (islands and caches of this one
        // are done with them).
        if faults > 0 {
            ctx.serial("quarantine", || self.quarantine(stats));
        }
    }
}

/// Wakes the sleeping island of every sleeping body that an awake body (or
/// a moving kinematic one) touches within the speculative distance, then
/// drops the pairs that still involve a sleeping body (they have nothing to
/// solve). Returns how many bodies woke; the caller searches pairs again if
/// any did, since the woken bodies' pairs with each other were skipped as
/// sleeping–sleeping.
fn wake_touched(
    bodies: &mut Bodies,
    pairs: &mut Vec<crate::broadphase::BodyPair>,
    max_separation: f32,
) -> u32 {
    let mut woken = 0;
    for p in pairs.iter() {
        let (a, b) = (p.a as usize, p.b as usize);
        let (sleeper, other) = match (bodies.is_sleeping(a), bodies.is_sleeping(b)) {
            (true, false) => (a, b),
            (false, true) => (b, a),
            _ => continue,
        };
        if !can_wake_others(bodies, other) {
            continue;
        }
        let placed = |i: usize| Placed {
            shape: bodies.shape[i],
            pos: bodies.pos(i),
            rot: bodies.rot(i),
        };
        if collide(&placed(a), &placed(b), max_separation).is_some() {
            woken += wake_island(bodies, sleeper);
        }
    }
    if woken == 0 {
        pairs.retain(|p| !bodies.is_sleeping(p.a as usize) && !bodies.is_sleeping(p.b as usize));
    }
    woken
}

/// Pairs checked per job of the search for sleeping bodies.
const SLEEPER_CHECKS_PER_JOB: usize = 2048;

/// Links every solvable contact between two awake dynamic bodies and
/// finalizes the islands.
fn build_islands(
    ctx: &StepCtx,
    islands: &mut crate::islands::IslandBuilder,
    bodies: &Bodies,
    manifolds: &[Manifold],
) {
    ctx.serial("init islands", || {
        islands.init(
            bodies
                .active
                .iter()
                .map(|&i| bodies.motion(i as usize) == MotionType::Dynamic),
        )
    });
    let node = |i: u32| -> Option<u32> {
        let i = i as usize;
        (bodies.motion(i) == MotionType::Dynamic && bodies.is_active(i))
            .then(|| bodies.active_pos[i])
    };
    // Lock-free links: the result does not depend on the order of the calls.
    let builder: &crate::islands::IslandBuilder = islands;
    ctx.par_for("link islands", manifolds.len(), LINKS_PER_JOB, |range| {
        for m in manifolds[range].iter().filter(|m| !m.sensor) {
            if let (Some(a), Some(b)) = (node(m.pair.a), node(m.pair.b)) {
                builder.link(a, b);
            }
        }
    });
    islands.finalize(
        ctx,
        manifolds.len(),
        |k| {
            let m = &manifolds[k];
            if m.sensor {
                return None;
            }
            node(m.pair.a).or_else(|| node(m.pair.b))
        },
        |i| bodies.active[i as usize],
    );
}

/// Contacts linked per island-building job.
const LINKS_PER_JOB: usize = 512;

/// The sleep test: every body of every island updates its test (in
/// parallel: each body's test reads only that body), then islands whose
/// bodies can all sleep go to sleep together. Returns how many bodies went
/// to sleep.
fn sleep_islands(
    ctx: &StepCtx,
    bodies: &mut Bodies,
    islands: &crate::islands::IslandBuilder,
    scratch: &mut SleepScratch,
    s: &crate::settings::PhysicsSettings,
    dt: f32,
) -> u32 {
    let max_movement = s.point_velocity_sleep_threshold * s.time_before_sleep;
    // Every body updates its test, even once its island is known to stay
    // awake (Jolt's bitwise AND), so timers are never stale.
    let members = islands.all_bodies();
    scratch.states.resize(members.len(), SleepState::default());
    {
        let b: &Bodies = bodies;
        ctx.par_chunks_mut(
            "sleep test",
            &mut scratch.states,
            SLEEP_TESTS_PER_JOB,
            |first, chunk| {
                for (st, &ai) in chunk.iter_mut().zip(&members[first..]) {
                    let i = b.active[ai as usize] as usize;
                    *st = next_sleep_state(b, i, dt, max_movement, s.time_before_sleep);
                    let allowed =
                        b.flags[i] & crate::body::flags::ALLOW_SLEEPING != 0 && !b.is_sensor(i);
                    st.can_sleep &= allowed;
                }
                0
            },
        );
        let (active, states) = (&bodies.active, &scratch.states);
        let spheres = Disjoint::new(bodies.sleep_spheres.as_mut_slice());
        let timer = Disjoint::new(bodies.sleep_timer.as_mut_slice());
        ctx.par_for(
            "write sleep tests",
            members.len(),
            SLEEP_TESTS_PER_JOB,
            |range| {
                for k in range {
                    let i = active[members[k] as usize] as usize;
                    // SAFETY: a body is in at most one island, once.
                    unsafe {
                        spheres.set(i, states[k].spheres);
                        timer.set(i, states[k].timer);
                    }
                }
            },
        );
    }
    ctx.serial("sleep islands", || {
        scratch.slots.clear();
        scratch.ends.clear();
        for island in 0..islands.num_islands() {
            let range = islands.body_range(island);
            let all =
                s.allow_sleeping && scratch.states[range.clone()].iter().all(|st| st.can_sleep);
            if all {
                scratch
                    .slots
                    .extend(members[range].iter().map(|&ai| bodies.active[ai as usize]));
                scratch.ends.push(scratch.slots.len() as u32);
            }
        }
        // Active indices shift as bodies leave the active list, so the
        // islands were copied out as slots above before any body is
        // deactivated.
        let mut start = 0;
        for &end in &scratch.ends {
            put_island_to_sleep(bodies, &scratch.slots[start..end as usize]);
            start = end as usize;
        }
        scratch.slots.len() as u32
    })
}

/// Bodies per sleep-test job.
const SLEEP_TESTS_PER_JOB: usize = 256;

/// Preallocated buffers of the sleep test.
pub(crate) struct SleepScratch {
    slots: Vec<u32>,
    ends: Vec<u32>,
    /// Per island body (in island order): its advanced sleep test.
    states: Vec<SleepState>,
}

impl SleepScratch {
    pub fn new(max_bodies: usize) -> Self {
        Self {
            slots: Vec::with_capacity(max_bodies),
            ends: Vec::with_capacity(max_bodies),
            states: Vec::with_capacity(max_bodies),
        }
    }
}
