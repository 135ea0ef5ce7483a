//! The contact solver: sequential impulses with accumulated, clamped
//! impulses and warm starting (Box2D/Jolt lineage), on constraints laid out
//! in bundles of 16 lanes (bepu's type batches) and solved 16 lanes wide
//! wherever the lanes share no dynamic body.
//!
//! Stages, in the order the pipeline calls them:
//! 1. [`ContactSolver::split`]: split the large islands (`splitter.rs`) and
//!    lay every constraint out in a slot (`layout.rs`: islands → splits →
//!    bundles), and build the velocity and position schedules
//!    (`schedule.rs`).
//! 2. [`ContactSolver::setup`] (prepare): per bundle, in parallel, each
//!    lane's lever arms, effective masses, target normal velocities
//!    (restitution or speculative bias, from the velocities before any warm
//!    start), friction and twist rows and face block (`contact/prepare.rs`),
//!    with last step's impulses from the contact cache.
//! 3. [`ContactSolver::solve_velocities`]: iteration 0 warm-starts, then
//!    `velocity_iterations` passes (`contact/solve.rs`). A parallel split's
//!    bundles run 16 lanes wide on all workers, split by split with a
//!    barrier between; the non-parallel split and the small islands run one
//!    lane after the other in island order (the scalar path of the same
//!    source). [`SolverWidth::Scalar`](crate::SolverWidth) runs every
//!    bundle lane by lane instead, with bit-identical results.
//! 4. [`ContactSolver::finish_velocities`] (store): velocities back to the
//!    bodies, accumulated impulses back to the manifolds for the contact
//!    cache and the contact report.
//! 5. [`ContactSolver::solve_positions`] (after integration): Baumgarte
//!    pushes that remove `baumgarte` of the penetration beyond the slop each
//!    iteration, moving positions and rotations, never velocities
//!    (`contact/position.rs`).
//!
//! Friction is anchored at the centre of the manifold's points: two tangent
//! rows there plus a twist row about the normal, clamped by μ times the sum
//! of the points' normal impulses (PhysX's patch friction, bepu's manifold
//! friction). Per-point friction rows (4 points × 2 tangents) are redundant:
//! their impulses have a null space of self-cancelling patterns that
//! warm-started Gauss–Seidel drifts along, which made 10-cube towers sway and
//! creep. Three rows per manifold have no such null space and cost less.
//!
//! Body velocities (and, for the position solve, poses) are gathered into
//! per-slot solver arrays for the duration of the solve and scattered back
//! after it (`bodies.rs`). Constraints only write their dynamic bodies, so
//! any number of them may share a static or kinematic body in one split.

use crate::body::{Bodies, MotionType};
use crate::disjoint::{Disjoint, Vec3Disjoint};
use crate::islands::IslandBuilder;
use crate::jobs::StepCtx;
use crate::narrowphase::Manifold;
use crate::settings::{PhysicsSettings, SolverWidth};
use archipelago_simd::{One, LANES};
use bodies::{BodyLanes, BodyVelocity};
use bundles::{PositionBundles, PrepareBundle, VelocityBundles};
use contact::batch::{BundleBodies, ContactImpulses, ContactPrestep, PositionPrestep};
use contact::position::{lane_used, solve_position, BodyPose, PoseLanes};
use contact::prepare::{gather, prepare, prepare_positions, SetupRows};
use contact::solve::{solve, warm_start};
use dispatch::dispatch;
use layout::{Layout, PADDING};
use schedule::Schedule;
use splitter::{LargeIslandSplitter, LARGE_ISLAND_THRESHOLD, NO_BODY, NUM_SPLITS};
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

mod bodies;
mod bundles;
mod contact;
mod dispatch;
mod layout;
mod schedule;
pub(crate) mod splitter;
#[cfg(target_arch = "x86_64")]
mod ymm;
#[cfg(target_arch = "x86_64")]
mod zmm;

/// Per-manifold marker: not solved (sensor, or no awake dynamic body).
const NO_CONSTRAINT: u32 = u32::MAX;

/// Bundles built per setup job.
const SETUP_BUNDLES: usize = 2;
/// Active bodies per velocity-gather job.
const GATHER_CHUNK: usize = 512;
/// Manifolds per impulse write-back job.
const WRITE_BACK_CHUNK: usize = 256;

/// Split statistics of one step (see [`crate::StepStats`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SplitStats {
    pub large_islands: u32,
    pub split_items: [u32; NUM_SPLITS],
    /// Constraints in wide bundles, and solved lane by lane.
    pub wide: u32,
    pub scalar: u32,
}

/// Preallocated solver state.
pub(crate) struct ContactSolver {
    /// `order[start..end]` of each island (islands biggest first).
    island_ranges: Vec<(u32, u32)>,
    /// The same for the small islands only.
    small_ranges: Vec<(u32, u32)>,
    /// Per manifold: its slot, or `NO_CONSTRAINT`.
    manifold_slot: Vec<u32>,
    /// Solver velocities per body slot, plus one last slot that stays zero.
    vel: Vec<BodyVelocity>,
    /// Constraint order: manifold indices, island after island; inside a
    /// split island, split after split.
    order: Vec<u32>,
    zero_slot: u32,
    /// Poses during the position solve, per body slot, plus the zero slot
    /// (static sides' poses come from the position prestep).
    poses: Vec<BodyPose>,
    splitter: LargeIslandSplitter,
    /// Per item of the large islands: its dynamic bodies (`NO_BODY` else).
    item_bodies: Vec<[u32; 2]>,
    layout: Layout,
    /// The contact type batch, per bundle: bodies, prestep, impulses.
    refs: Vec<BundleBodies>,
    prestep: Vec<ContactPrestep>,
    impulses: Vec<ContactImpulses>,
    positions: Vec<PositionPrestep>,
    velocity_schedule: Schedule,
    position_schedule: Schedule,
}

/// Slot `s` as (bundle, lane).
#[inline(always)]
fn bundle_lane(s: usize) -> (usize, usize) {
    (s / LANES, s % LANES)
}

impl ContactSolver {
    pub fn new(max_bodies: usize, max_contact_constraints: usize) -> Self {
        let bundles = Layout::max_slots(max_contact_constraints) / LANES;
        Self {
            island_ranges: Vec::with_capacity(max_bodies),
            small_ranges: Vec::with_capacity(max_bodies),
            manifold_slot: vec![NO_CONSTRAINT; max_contact_constraints],
            vel: vec![BodyVelocity::default(); max_bodies + 1],
            order: Vec::with_capacity(max_contact_constraints),
            zero_slot: max_bodies as u32,
            poses: vec![BodyPose::IDENTITY; max_bodies + 1],
            splitter: LargeIslandSplitter::new(max_bodies, max_contact_constraints),
            item_bodies: Vec::with_capacity(max_contact_constraints),
            layout: Layout::new(max_contact_constraints, max_bodies),
            refs: Vec::with_capacity(bundles),
            prestep: Vec::with_capacity(bundles),
            impulses: Vec::with_capacity(bundles),
            positions: Vec::with_capacity(bundles),
            velocity_schedule: Schedule::new(),
            position_schedule: Schedule::new(),
        }
    }

    /// Splits the large islands (`splitter.rs`), lays the constraints out
    /// in bundles (`layout.rs`) and builds the solve schedules.
    pub fn split(
        &mut self,
        ctx: &StepCtx,
        bodies: &Bodies,
        manifolds: &[Manifold],
        islands: &IslandBuilder,
        settings: &PhysicsSettings,
    ) -> SplitStats {
        let mut stats = SplitStats::default();
        self.island_ranges.clear();
        self.island_ranges
            .extend((0..islands.num_islands()).map(|i| islands.contact_range(i)));
        let all = islands.all_contacts();
        // Islands are sorted biggest first, so the large ones come first and
        // their items are `all[..large_end]`.
        let large = if settings.use_large_island_splitter {
            self.island_ranges
                .iter()
                .take_while(|&&(start, end)| (end - start) as usize >= LARGE_ISLAND_THRESHOLD)
                .count()
        } else {
            0
        };
        let large_end = if large == 0 {
            0
        } else {
            self.island_ranges[large - 1].1 as usize
        };
        // The items' dynamic bodies, looked up in parallel for the serial
        // colouring pass.
        self.item_bodies.resize(large_end, [NO_BODY; 2]);
        ctx.par_chunks_mut(
            "split bodies",
            &mut self.item_bodies,
            GATHER_CHUNK,
            |first, chunk| {
                let dynamic = |i: u32| {
                    if bodies.inv_mass[i as usize] > 0.0 {
                        i
                    } else {
                        NO_BODY
                    }
                };
                for (ends, &mi) in chunk.iter_mut().zip(&all[first..]) {
                    let pair = manifolds[mi as usize].pair;
                    *ends = [dynamic(pair.a), dynamic(pair.b)];
                }
                0
            },
        );
        ctx.serial("split islands", || {
            self.splitter.clear();
            for &(start, end) in &self.island_ranges[..large] {
                // Split islands are the first ones, so the splitter's item
                // offsets are constraint indices.
                debug_assert_eq!(self.splitter.items.len(), start as usize);
                let (start, end) = (start as usize, end as usize);
                self.splitter
                    .split_island(&all[start..end], &self.item_bodies[start..end]);
            }
            self.order.clear();
            self.order.extend_from_slice(&self.splitter.items);
            self.order
                .extend_from_slice(&all[self.splitter.items.len()..]);
            for isl in &self.splitter.islands {
                for s in 0..NUM_SPLITS {
                    let (a, b) = isl.split(s);
                    stats.split_items[s] += b - a;
                }
            }
            stats.large_islands = self.splitter.islands.len() as u32;
            self.small_ranges.clear();
            self.small_ranges
                .extend_from_slice(&self.island_ranges[large..]);
            let dynamic = |i: u32| {
                if bodies.inv_mass[i as usize] > 0.0 {
                    i
                } else {
                    NO_BODY
                }
            };
            self.layout
                .build(&self.order, &self.splitter, &self.small_ranges, |m| {
                    let pair = manifolds[m as usize].pair;
                    [dynamic(pair.a), dynamic(pair.b)]
                });
            (stats.wide, stats.scalar) = (self.layout.wide, self.layout.scalar);
            self.velocity_schedule
                .build(&self.layout, settings.velocity_iterations + 1);
            self.position_schedule
                .build(&self.layout, settings.position_iterations);
        });
        stats
    }

    /// Builds every bundle's constraints in parallel, in the slots `split`
    /// laid out, with last step's impulses (set on the manifolds by the
    /// contact cache) as the warm start.
    pub fn setup(
        &mut self,
        ctx: &StepCtx,
        bodies: &Bodies,
        manifolds: &[Manifold],
        settings: &PhysicsSettings,
        dt: f32,
    ) {
        let zero = self.zero_slot as usize;
        {
            let vel = Disjoint::new(&mut self.vel);
            ctx.par_for(
                "gather velocities",
                bodies.active.len(),
                GATHER_CHUNK,
                |range| {
                    for &i in &bodies.active[range] {
                        let v = BodyVelocity::new(
                            bodies.lin_vel(i as usize),
                            bodies.ang_vel(i as usize),
                        );
                        // SAFETY: active slots are distinct.
                        unsafe { vel.set(i as usize, v) };
                    }
                },
            );
        }
        self.vel[zero] = BodyVelocity::default();
        ctx.par_chunks_mut(
            "clear manifold map",
            &mut self.manifold_slot[..manifolds.len()],
            WRITE_BACK_CHUNK,
            |_, chunk| {
                chunk.fill(NO_CONSTRAINT);
                0
            },
        );
        // Every bundle is rebuilt below, so only a longer batch than last
        // step's writes new bundles here (within the capacity: no
        // allocation).
        let n = self.layout.bundles();
        self.refs.resize(n, bytemuck::Zeroable::zeroed());
        self.prestep.resize(n, bytemuck::Zeroable::zeroed());
        self.impulses.resize(n, bytemuck::Zeroable::zeroed());
        self.positions.resize(n, bytemuck::Zeroable::zeroed());
        let map = Disjoint::new(&mut self.manifold_slot);
        let refs = Disjoint::new(&mut self.refs);
        let impulses = Disjoint::new(&mut self.impulses);
        let positions = Disjoint::new(&mut self.positions);
        let (vel, slots) = (&self.vel[..], &self.layout.slot_manifold[..]);
        let (width, simd) = (settings.solver_width, settings.simd.resolve());
        ctx.par_chunks_mut(
            "build constraints",
            &mut self.prestep,
            SETUP_BUNDLES,
            |first, chunk| {
                let mut rows = SetupRows::new();
                for (k, p) in chunk.iter_mut().enumerate() {
                    let b = first + k;
                    // SAFETY: bundle `b` is this job's alone.
                    let (r, imp, pp) = unsafe {
                        (
                            &mut refs.slice_mut(b, b + 1)[0],
                            &mut impulses.slice_mut(b, b + 1)[0],
                            &mut positions.slice_mut(b, b + 1)[0],
                        )
                    };
                    let lanes: &[u32; LANES] = slots[b * LANES..(b + 1) * LANES]
                        .try_into()
                        .expect("whole bundles");
                    gather(lanes, bodies, manifolds, vel, zero, &mut rows, r);
                    prepare_positions(&rows, pp);
                    match width {
                        SolverWidth::Wide => dispatch(
                            simd,
                            PrepareBundle {
                                rows: &rows,
                                settings,
                                dt,
                                prestep: p,
                                impulses: imp,
                            },
                        ),
                        SolverWidth::Scalar => {
                            for lane in 0..LANES {
                                prepare(One(lane), &rows, settings, dt, p, imp);
                            }
                        }
                    }
                    for (lane, &mi) in lanes.iter().enumerate() {
                        if mi != PADDING {
                            // SAFETY: a manifold is in at most one slot.
                            unsafe { map.set(mi as usize, (b * LANES + lane) as u32) };
                        }
                    }
                }
                0
            },
        );
    }

    /// Warm start (iteration 0) and `iterations` Gauss–Seidel passes: large
    /// islands split by split on all workers, a parallel split's bundles 16
    /// lanes wide, the non-parallel split and small islands lane by lane.
    pub fn solve_velocities(&mut self, ctx: &StepCtx, iterations: u32, settings: &PhysicsSettings) {
        let (width, simd) = (settings.solver_width, settings.simd.resolve());
        let vel = Disjoint::new(&mut self.vel);
        let impulses = Disjoint::new(&mut self.impulses);
        let (refs, prestep, layout) = (&self.refs[..], &self.prestep[..], &self.layout);
        // Runs the slots of `range` one lane after another. The schedule
        // gives each range's slots, bundles and dynamic bodies to one worker
        // at a time (see the callbacks below).
        let lanes = |range: Range<usize>, warm: bool| {
            for s in range {
                let (b, l) = bundle_lane(s);
                let p = &prestep[b];
                if !lane_used(p, l) {
                    continue;
                }
                let (r, one) = (&refs[b], One(l));
                // SAFETY: the slot's bundle and dynamic bodies are this
                // worker's alone (the schedule, below).
                unsafe {
                    let imp = &mut impulses.slice_mut(b, b + 1)[0];
                    let mut v = one.gather(&vel, &r.a, &r.b);
                    if warm {
                        warm_start(one, p, imp, &mut v);
                    } else {
                        solve(one, p, imp, &mut v);
                    }
                    one.scatter(&vel, &r.a, &r.b, &p.inv_mass_a, &p.inv_mass_b, v);
                }
            }
        };
        let bundles = |range: Range<usize>, warm: bool| {
            if width == SolverWidth::Scalar {
                return lanes(range, warm);
            }
            // The bundles and their lanes' dynamic bodies (distinct: one
            // split or colour) are this worker's alone (the schedule, below).
            let kernel = VelocityBundles {
                range: range.start / LANES..range.end.div_ceil(LANES),
                warm,
                refs,
                prestep,
                impulses: &impulses,
                vel: &vel,
            };
            dispatch(simd, kernel);
        };
        self.velocity_schedule.run(
            ctx,
            "velocity batch",
            // The constraints of a stage share no dynamic body (the
            // splitter's invariant; split 31 is one batch on one worker), a
            // stage starts only after the previous stage of its island
            // finished (release/acquire counter), other islands own other
            // bodies, and batches do not overlap: each batch's slots are its
            // worker's alone.
            |stage, range| {
                let warm = stage.iteration == 0;
                if stage.non_parallel {
                    lanes(range, warm)
                } else {
                    bundles(range, warm)
                }
            },
            // A pack's small islands, constraints and dynamic bodies belong
            // to this job alone; it solves them colour after colour (each
            // colour's bundles wide), then the overflow lane by lane.
            |k| {
                let pack = layout.packs[k];
                let colours =
                    &layout.colour_ranges[pack.colours.0 as usize..pack.colours.1 as usize];
                let overflow = pack.overflow.0 as usize..pack.overflow.1 as usize;
                for warm in core::iter::once(true).chain((0..iterations).map(|_| false)) {
                    for &(a, b) in colours {
                        bundles(a as usize..b as usize, warm);
                    }
                    lanes(overflow.clone(), warm);
                }
            },
        );
    }

    /// Writes the solved velocities back to the moving bodies and the
    /// accumulated impulses back to the manifolds (for the cache and users).
    pub fn finish_velocities(
        &self,
        ctx: &StepCtx,
        bodies: &mut Bodies,
        manifolds: &mut [Manifold],
    ) {
        {
            let (active, motion, vel) = (&bodies.active, &bodies.motion_type, &self.vel);
            let lin = Vec3Disjoint::new(&mut bodies.linear_velocity);
            let ang = Vec3Disjoint::new(&mut bodies.angular_velocity);
            ctx.par_for("scatter velocities", active.len(), GATHER_CHUNK, |range| {
                for &i in &active[range] {
                    let i = i as usize;
                    if motion[i] == MotionType::Dynamic as u8 {
                        // SAFETY: active slots are distinct.
                        unsafe {
                            lin.set(i, vel[i].lin.to_array());
                            ang.set(i, vel[i].ang.to_array());
                        }
                    }
                }
            });
        }
        let (imp, prestep, map) = (&self.impulses, &self.prestep, &self.manifold_slot);
        ctx.par_chunks_mut(
            "write impulses",
            manifolds,
            WRITE_BACK_CHUNK,
            |first, chunk| {
                for (m, &s) in chunk.iter_mut().zip(&map[first..]) {
                    if s == NO_CONSTRAINT {
                        continue;
                    }
                    let (b, l) = bundle_lane(s as usize);
                    let (i, p) = (&imp[b], &prestep[b]);
                    for k in 0..p.count[l] as usize {
                        m.normal_impulse[k] = i.normal[k][l];
                    }
                    m.friction_impulse = [i.friction[0][l], i.friction[1][l], i.twist[l]];
                }
                0
            },
        );
    }

    /// Position iterations (after integration), on the manifolds' local
    /// points (copied into the position prestep at setup), with the same splits and packs as the velocity solve. A body
    /// whose corrected pose is non-finite keeps its pose from before the
    /// corrections and is flagged faulted (`quarantine.rs`); returns how
    /// many were.
    pub fn solve_positions(
        &mut self,
        ctx: &StepCtx,
        bodies: &mut Bodies,
        settings: &PhysicsSettings,
    ) -> u32 {
        if settings.position_iterations == 0 || self.order.is_empty() {
            return 0;
        }
        {
            let poses = Disjoint::new(&mut self.poses);
            let b: &Bodies = bodies;
            ctx.par_for("gather poses", b.active.len(), GATHER_CHUNK, |range| {
                for &i in &b.active[range] {
                    let i = i as usize;
                    let pose = BodyPose {
                        pos: b.pos(i),
                        pad: 0.0,
                        rot: b.rot(i),
                    };
                    // SAFETY: active slots are distinct.
                    unsafe { poses.set(i, pose) };
                }
            });
        }
        {
            let poses = Disjoint::new(&mut self.poses);
            let layout = &self.layout;
            let (refs, prestep, positions) =
                (&self.refs[..], &self.prestep[..], &self.positions[..]);
            let iterations = settings.position_iterations;
            let (width, simd) = (settings.solver_width, settings.simd.resolve());
            // One lane after another; the schedule gives each range's slots
            // and dynamic bodies to one worker at a time (as in the velocity
            // solve: same splits, barriers and islands).
            let lanes = |range: Range<usize>| {
                for s in range {
                    let (b, l) = bundle_lane(s);
                    let p = &prestep[b];
                    if !lane_used(p, l) {
                        continue;
                    }
                    let (r, pp, one) = (&refs[b], &positions[b], One(l));
                    // SAFETY: the slot's dynamic bodies are this worker's
                    // alone (the schedule).
                    unsafe {
                        let mut pose = one.gather_poses(&poses, &r.a, &r.b, pp);
                        solve_position(one, p, pp, &mut pose, settings);
                        one.scatter_poses(&poses, &r.a, &r.b, &p.inv_mass_a, &p.inv_mass_b, pose);
                    }
                }
            };
            let bundles = |range: Range<usize>| {
                if width == SolverWidth::Scalar {
                    return lanes(range);
                }
                // The bundles' lanes' dynamic bodies (distinct: one split
                // or colour) are this worker's alone (the schedule).
                let kernel = PositionBundles {
                    range: range.start / LANES..range.end.div_ceil(LANES),
                    refs,
                    prestep,
                    positions,
                    poses: &poses,
                    settings,
                };
                dispatch(simd, kernel);
            };
            self.position_schedule.run(
                ctx,
                "position batch",
                |stage, range| {
                    if stage.non_parallel {
                        lanes(range)
                    } else {
                        bundles(range)
                    }
                },
                |k| {
                    let pack = layout.packs[k];
                    let colours =
                        &layout.colour_ranges[pack.colours.0 as usize..pack.colours.1 as usize];
                    let overflow = pack.overflow.0 as usize..pack.overflow.1 as usize;
                    for _ in 0..iterations {
                        for &(a, b) in colours {
                            bundles(a as usize..b as usize);
                        }
                        lanes(overflow.clone());
                    }
                },
            );
        }
        let (active, motion) = (&bodies.active, &bodies.motion_type);
        let poses = &self.poses;
        let position = Vec3Disjoint::new(&mut bodies.position);
        let rotation = Disjoint::new(bodies.rotation.as_mut_slice());
        let faulted = Disjoint::new(&mut bodies.faulted);
        let faults = AtomicU32::new(0);
        ctx.par_for("scatter poses", active.len(), GATHER_CHUNK, |range| {
            for &i in &active[range] {
                let i = i as usize;
                if motion[i] != MotionType::Dynamic as u8 {
                    continue;
                }
                // SAFETY: active slots are distinct.
                unsafe {
                    let BodyPose { pos, rot, .. } = poses[i];
                    if pos.is_finite() && rot.is_finite() {
                        position.set(i, pos.to_array());
                        rotation.set(i, rot.to_array());
                    } else {
                        faulted.set(i, true);
                        faults.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        });
        faults.into_inner()
    }
}
