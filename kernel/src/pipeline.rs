//! The step: the phases of `shared/DESIGN.md`'s step list, in order, each
//! timed into [`StepStats`]. The whole step runs inside the caller's pool;
//! every phase is either a serial stretch or a parallel loop over chunks
//! that write only their own slots (see `jobs.rs`), so no result depends on
//! which worker ran what:
//!
//! 1. early out when nothing is awake (or `dt <= 0`): broad-phase
//!    bookkeeping only
//! 2. broad phase: candidate pairs; awake bodies touching sleeping ones, or
//!    jointed to them, wake their whole island (repeated until nothing more
//!    wakes); the joints this step solves
//! 3. apply gravity, forces and damping to the awake bodies
//! 4. narrow phase: contact manifolds (none for pairs a joint keeps apart)
//! 5. islands: link contacts and joints, number and sort islands biggest
//!    first
//! 6. split large islands (Jolt's splitter), lay out the constraint order
//! 7. solver setup (warm start is the velocity solve's iteration 0)
//! 8. velocity iterations
//! 9. integrate positions (continuous collision first: fast
//!    `LinearCast` bodies are swept against the static bodies and stopped
//!    where they hit, see `ccd.rs`)
//! 10. position iterations
//! 11. sleep test (last collision step only): whole islands go to sleep
//! 12. bounds and contact cache for the next step

use crate::error::{PhysicsError, Result};
use crate::executor::Executor;
use crate::integrate::{apply_forces, integrate_positions, update_bounds};
use crate::islands::build_islands;
use crate::jobs::StepCtx;
use crate::limits::{MAX_COLLISION_STEPS, MAX_TIME_STEP, MIN_TIME_STEP};
use crate::settings::Capacities;
use crate::sleep::{sleep_islands, wake_touched, SLEEPER_CHECKS_PER_JOB};
use crate::stats::{StepStats, UpdateWarnings};
use crate::system::PhysicsSystem;
use crate::thread_pool::pinning_from_bits;
use crate::trace::{StepTrace, Tracer};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

impl PhysicsSystem {
    /// Advances the world by `dt` seconds in `collision_steps` equal
    /// sub-steps, on the workers of `executor`: a rayon `ThreadPool` (see
    /// [`build_pinned_pool`](crate::build_pinned_pool)), a
    /// [`PinnedPool`](crate::PinnedPool), [`SerialExecutor`](crate::SerialExecutor)
    /// or an engine's own job system behind [`Executor`](crate::Executor).
    /// The result is bit-identical for any executor and number of workers.
    ///
    /// `dt <= 0` or a world without awake bodies does nothing but report.
    /// Refused (`InvalidTimeStep`): a NaN or infinite `dt`,
    /// `dt > MAX_TIME_STEP`,
    /// `collision_steps` of 0 or above `MAX_COLLISION_STEPS`, and a `dt > 0`
    /// whose collision steps are shorter than `MIN_TIME_STEP`. A world
    /// whose earlier `update` panicked refuses with `Poisoned`.
    ///
    /// Called from outside a rayon pool, this hands the step to the pool
    /// (one injected job, which rayon's queue allocates a block for every
    /// 63 calls); called from inside one of its workers, it allocates
    /// nothing in steady state.
    pub fn update(
        &mut self,
        dt: f32,
        collision_steps: u32,
        executor: &dyn Executor,
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
        let threads = executor.workers().max(1);
        let tracer = self.trace_armed.then(|| {
            if self.trace_relayed {
                Tracer::relayed(threads)
            } else {
                Tracer::new(threads)
            }
        });
        self.trace_armed = false;
        self.trace_relayed = false;
        let pin_bits = AtomicU32::new(0);
        let injected = self.injected_panic.take();
        // Cleared when the step returns; a panic unwinds past it.
        self.poisoned = true;
        let stats = {
            let ctx = StepCtx {
                exec: executor,
                threads,
                tracer: tracer.as_ref(),
                pin_bits: &pin_bits,
                abort: AtomicBool::new(false),
                fault: injected.as_ref(),
            };
            let mut stepped = None;
            executor.install(&mut || stepped = Some(self.step(dt, collision_steps, &ctx)));
            stepped
        };
        self.poisoned = false;
        let Some(stats) = stats else {
            return Err(PhysicsError::ExecutorDidNotRun);
        };
        if let Some(t) = tracer {
            let in_use = Capacities {
                max_bodies: stats.active_bodies as usize,
                max_body_pairs: stats.body_pairs as usize,
                max_contact_constraints: stats.manifolds as usize,
                max_joints: stats.active_joints as usize,
            };
            self.last_trace = Some(StepTrace {
                footprint_bytes: in_use.memory_bytes() as u64,
                ..t.finish()
            });
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
        self.events.begin_update();
        if dt > 0.0 && !self.bodies.active.is_empty() {
            let sub_dt = dt / collision_steps as f32;
            for step in 0..collision_steps {
                let last = step + 1 == collision_steps;
                // Nothing enters a step non-finite (see `quarantine.rs`).
                if self.any_non_finite(ctx) {
                    ctx.serial("quarantine", || self.quarantine(&mut stats));
                }
                self.collision_step(ctx, sub_dt, last.then_some(dt), &mut stats);
                if !self.joints.active.is_empty() {
                    ctx.serial("sum joint impulses", || self.joints.sum_impulses(step == 0));
                }
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
            self.solver.forget_placement();
        }
        // The trees see the step's final poses (and bodies added since the
        // last step, simulated or not).
        let factor = self.settings.query_tree_rebuild_factor;
        ctx.phase("query_tree", &mut stats.times.query_tree, || {
            self.queries.update(ctx, &self.bodies, factor)
        });
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
        let joints = &mut self.joints;
        let (maintained, search, woken) = ctx.phase("broad_phase", &mut times.broad_phase, || {
            let maintained = broad.update(ctx, bodies);
            let mut woken = 0;
            let found = loop {
                let search = broad.report(ctx, bodies, &s.layer_filter, pairs, max_pairs);
                // Reported pairs have an awake side; with no sleeper in any
                // pair there is nothing to wake or drop (the common case
                // while everything moves).
                let sleeper = |p: &crate::broadphase::BodyPair| {
                    bodies.is_sleeping(p.a as usize) || bodies.is_sleeping(p.b as usize)
                };
                let mut now = if bodies.sleeping_islands > 0
                    && ctx.par_any("find sleepers", pairs, SLEEPER_CHECKS_PER_JOB, sleeper)
                {
                    ctx.serial("wake touched", || {
                        wake_touched(bodies, pairs, s.speculative_contact_distance)
                    })
                } else {
                    0
                };
                // A joint wakes its sleeping side as a contact would.
                if bodies.sleeping_islands > 0 && !joints.is_empty() {
                    now += ctx.serial("wake jointed", || joints.wake_sleeping_sides(bodies));
                }
                woken += now;
                if now == 0 {
                    break (maintained, search, woken);
                }
            };
            if !joints.is_empty() {
                ctx.serial("active joints", || {
                    joints.collect_active(bodies);
                    joints.refresh_no_contact();
                });
            } else {
                joints.active.clear();
            }
            found
        });
        stats.bodies_woken += woken;
        stats.pairs_created += maintained.created;
        stats.pairs_deleted += maintained.deleted;
        stats.out_of_bounds = search.out_of_bounds;

        ctx.phase("apply_forces", &mut times.apply_forces, || {
            apply_forces(ctx, bodies, &mut self.body_scratch, &s, dt)
        });

        let narrow = ctx.phase("narrow_phase", &mut times.narrow_phase, || {
            let found = self.narrow.run(
                ctx,
                bodies,
                &self.pairs,
                &self.joints.no_contact,
                s.speculative_contact_distance,
                s.pair_cache(),
            );
            // before the solve: the approach speeds are the bodies' now
            if self.events.reporting > 0 || self.events.has_touching() {
                ctx.serial("contact events", || {
                    self.events
                        .after_narrow_phase(&self.narrow.manifolds, bodies)
                });
            }
            found
        });
        let manifolds = &mut self.narrow.manifolds;

        let islands = &mut self.islands;
        ctx.phase("islands", &mut times.islands, || {
            build_islands(ctx, islands, bodies, manifolds, &self.joints)
        });

        let split = ctx.phase("split", &mut times.split, || {
            self.solver
                .split(ctx, bodies, manifolds, &self.joints, islands, &s)
        });

        let warm = ctx.phase("setup", &mut times.setup, || {
            let warm = self.cache.warm_start(
                ctx,
                manifolds,
                s.contact_point_preserve_distance,
                s.contact_normal_preserve_cos,
            );
            self.solver
                .setup(ctx, bodies, manifolds, &self.joints, &s, dt);
            warm
        });

        ctx.phase("velocity_solve", &mut times.velocity_solve, || {
            self.solver.solve_velocities(ctx, s.velocity_iterations, &s);
            self.solver
                .finish_velocities(ctx, bodies, manifolds, &mut self.joints);
        });

        let casts = &mut self.linear_casts;
        let mut faults = ctx.phase("integrate", &mut times.integrate, || {
            let no_contact = &self.joints.no_contact;
            stats.linear_casts += casts.find(ctx, bodies, &self.queries, no_contact, &s, dt);
            let faults = integrate_positions(ctx, bodies, &mut self.body_scratch, &s, dt);
            if casts.hits() > 0 {
                ctx.serial("linear cast moves", || casts.apply(bodies));
            }
            faults
        });
        stats.linear_cast_hits += casts.hits();

        faults += ctx.phase("position_solve", &mut times.position_solve, || {
            self.solver
                .solve_positions(ctx, bodies, &self.joints, &s, dt)
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
            if self.events.has_added() {
                ctx.serial("contact event impulses", || {
                    self.events.after_solve(manifolds)
                });
            }
        });

        stats.islands = islands.num_islands() as u32;
        stats.large_islands = split.large_islands;
        stats.split_items = split.split_items;
        stats.constraints_wide = split.wide;
        stats.constraints_scalar = split.scalar;
        stats.splits = split.split_items.iter().filter(|&&n| n > 0).count() as u32;
        stats.body_pairs = self.pairs.len() as u32;
        stats.manifolds = manifolds.len() as u32;
        stats.contact_points = manifolds.iter().map(|m| m.count).sum();
        stats.sensor_manifolds = manifolds.iter().filter(|m| m.sensor).count() as u32;
        stats.contact_events = self.events.events().len() as u32;
        stats.contact_events_dropped = self.events.dropped;
        if self.events.dropped > 0 {
            stats.warnings.insert(UpdateWarnings::CONTACT_EVENTS_FULL);
        }
        stats.warm_started_points = warm;
        stats.body_pairs_dropped += search.dropped + maintained.dropped;
        stats.manifolds_dropped += narrow.dropped_manifolds;
        stats.body_pair_cache_hits += narrow.cache_hits;
        stats.body_pair_cache_misses += narrow.cache_misses;
        stats.body_pairs_apart_by_bounds += narrow.apart_by_bounds;
        stats.body_pairs_jointed += narrow.jointed;
        stats.active_joints = self.joints.active.len() as u32;
        stats.joints_in_trees = split.tree_joints;
        stats.joint_trees_reused = split.trees_reused;
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
