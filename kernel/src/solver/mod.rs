//! Contact solver: sequential impulses with accumulated, clamped impulses
//! and warm starting (Box2D/Jolt lineage).
//!
//! Stages, in the order the pipeline calls them:
//! 1. [`ContactSolver::setup`]: split the large islands (`splitter.rs`),
//!    lay the constraints out island by island and split by split, then in
//!    parallel per point: lever arms, effective mass and the target normal
//!    velocity (restitution or speculative bias, from the velocities before
//!    any warm start); per manifold, the friction rows.
//! 2. [`ContactSolver::solve_velocities`]: iteration 0 warm-starts with last
//!    step's impulses, then `velocity_iterations` passes; per manifold
//!    friction first, then the non-penetration impulses, which are solved
//!    last because they matter most. Large islands run split by split on
//!    all workers (a barrier between splits), small islands whole, one
//!    worker each (`jobs.rs`).
//! 3. [`ContactSolver::solve_positions`] (after integration): Baumgarte
//!    pushes that remove `baumgarte` of the penetration beyond the slop each
//!    iteration, moving positions and rotations, never velocities.
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
//! after it. Constraints only write their dynamic bodies, so any number of
//! them may share a static or kinematic body in one split.

use crate::body::{Bodies, MotionType};
use crate::collide::MAX_POINTS;
use crate::disjoint::{Disjoint, Vec3Disjoint};
use crate::islands::IslandBuilder;
use crate::jobs::StepCtx;
use crate::math::{perpendicular, Mat3, Quat, Vec3};
use crate::narrowphase::Manifold;
use crate::settings::PhysicsSettings;
use schedule::Schedule;
use splitter::{LargeIslandSplitter, LARGE_ISLAND_THRESHOLD, NO_BODY, NUM_SPLITS};

mod schedule;
pub(crate) mod splitter;
use std::sync::atomic::{AtomicU32, Ordering};

/// One linear constraint row between two bodies along `axis` at lever arms
/// `ra`, `rb`.
#[derive(Debug, Clone, Copy, Default)]
struct Axis {
    /// `r_a × axis` and `r_b × axis`, and the same premultiplied by the
    /// bodies' world inverse inertia.
    ra_x: Vec3,
    rb_x: Vec3,
    inv_i_ra_x: Vec3,
    inv_i_rb_x: Vec3,
    /// 1 / (J M⁻¹ Jᵀ)
    mass: f32,
    impulse: f32,
}

impl Axis {
    fn new(ra: Vec3, rb: Vec3, axis: Vec3, ima: f32, imb: f32, ia: &Mat3, ib: &Mat3) -> Self {
        let ra_x = ra.cross(axis);
        let rb_x = rb.cross(axis);
        let inv_i_ra_x = *ia * ra_x;
        let inv_i_rb_x = *ib * rb_x;
        let k = ima + imb + inv_i_ra_x.dot(ra_x) + inv_i_rb_x.dot(rb_x);
        Self {
            ra_x,
            rb_x,
            inv_i_ra_x,
            inv_i_rb_x,
            mass: if k > 0.0 { 1.0 / k } else { 0.0 },
            impulse: 0.0,
        }
    }

    /// Relative velocity of B with respect to A along the axis.
    #[inline]
    fn velocity(&self, axis: Vec3, va: Vec3, wa: Vec3, vb: Vec3, wb: Vec3) -> f32 {
        axis.dot(vb - va) + self.rb_x.dot(wb) - self.ra_x.dot(wa)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct PointConstraint {
    normal: Axis,
    /// Normal velocity the solver keeps the point at or above.
    target_velocity: f32,
}

#[derive(Debug, Clone, Copy)]
struct ContactConstraint {
    a: u32,
    b: u32,
    inv_mass_a: f32,
    inv_mass_b: f32,
    normal: Vec3,
    tangent: [Vec3; 2],
    friction: f32,
    count: u32,
    manifold: u32,
    points: [PointConstraint; MAX_POINTS],
    /// Tangent rows at the centre of the points.
    friction_rows: [Axis; 2],
    /// Twist row: angular only, about the normal. `ra_x`/`rb_x` hold the
    /// normal, `inv_i_*` the inertia-weighted normal.
    twist: Axis,
    /// Mean distance of the points from their centre: the twist impulse is
    /// clamped to μ · Σλn · radius.
    twist_radius: f32,
    /// Reduced-coordinate normal block for face manifolds (3–4 points).
    block: Option<FaceBlock>,
}

/// Block solver for the normal rows of a face manifold.
///
/// The normal rows of points lying in one contact plane are affine in the
/// points' in-plane offsets `(d1, d2)` from their centre: row k is
/// `J_c + d1_k J_1 + d2_k J_2`, where `J_c` is a normal row at the centre and
/// `J_1`, `J_2` are angular rows (tilt about the two tangents). So the block
/// has three degrees of freedom, `u = (J_c, J_1, J_2) · V`, moved by a
/// reduced impulse `f = (Σλ, Σλ d1, Σλ d2)` through the 3×3 matrix `K3`.
/// One block step solves `u = u_target` exactly (every point at its target
/// velocity at once) and maps `f` back to per-point impulses with the
/// minimum-norm distribution; if that would make a point pull (λ < 0), the
/// face is partly lifting and the step falls back to a Gauss–Seidel pass.
///
/// Why: point-by-point Gauss–Seidel on four coplanar points leaves an
/// order-dependent torque after each iteration; at 10 iterations a 10-cube
/// tower accumulated those torques into a centimetre-scale sway. Solving the
/// face as a block removes the bias and costs about as much as the four rows.
#[derive(Debug, Clone, Copy)]
struct FaceBlock {
    /// Centre normal row lever arms (`r × n`).
    ra_x: Vec3,
    rb_x: Vec3,
    /// World inverse inertia times `ra_x`, `t1`, `t2` (A) and `rb_x`, `t1`,
    /// `t2` (B): what applying a reduced impulse needs.
    ia_ra_x: Vec3,
    ia_t1: Vec3,
    ia_t2: Vec3,
    ib_rb_x: Vec3,
    ib_t1: Vec3,
    ib_t2: Vec3,
    k3_inv: Mat3,
    /// Fitted target of `u`.
    u_target: Vec3,
    /// Columns of A: `(1, d1_k, d2_k)`.
    a_cols: [Vec3; MAX_POINTS],
    /// λ_k = P_k · f, with P = Aᵀ (A Aᵀ)⁻¹ (minimum-norm distribution).
    p: [Vec3; MAX_POINTS],
    /// Accumulated reduced impulse `A λ`.
    f: Vec3,
}

/// A face block is used only where the targets are affine over the face
/// (always true for resting and planar speculative contacts): worst misfit
/// allowed, in m/s.
const BLOCK_TARGET_FIT: f32 = 1e-4;

/// Per-manifold marker: not solved (sensor, or no awake dynamic body).
const NO_CONSTRAINT: u32 = u32::MAX;

const EMPTY_AXIS: Axis = Axis {
    ra_x: Vec3::ZERO,
    rb_x: Vec3::ZERO,
    inv_i_ra_x: Vec3::ZERO,
    inv_i_rb_x: Vec3::ZERO,
    mass: 0.0,
    impulse: 0.0,
};

const EMPTY_CONSTRAINT: ContactConstraint = ContactConstraint {
    a: 0,
    b: 0,
    inv_mass_a: 0.0,
    inv_mass_b: 0.0,
    normal: Vec3::ZERO,
    tangent: [Vec3::ZERO; 2],
    friction: 0.0,
    count: 0,
    manifold: 0,
    points: [PointConstraint {
        normal: EMPTY_AXIS,
        target_velocity: 0.0,
    }; MAX_POINTS],
    friction_rows: [EMPTY_AXIS; 2],
    twist: EMPTY_AXIS,
    twist_radius: 0.0,
    block: None,
};

/// Constraints built per setup job.
const SETUP_CHUNK: usize = 32;
/// Active bodies per velocity-gather job.
const GATHER_CHUNK: usize = 512;
/// Manifolds per impulse write-back job.
const WRITE_BACK_CHUNK: usize = 256;

/// Split statistics of one step (see [`crate::StepStats`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SplitStats {
    pub large_islands: u32,
    pub split_items: [u32; NUM_SPLITS],
}

/// Preallocated solver state.
pub(crate) struct ContactSolver {
    /// Constraints grouped by island, islands biggest first: constraint `k`
    /// is the island builder's `k`-th contact.
    constraints: Vec<ContactConstraint>,
    /// `constraints[start..end]` of each island.
    island_ranges: Vec<(u32, u32)>,
    /// Per manifold: its constraint, or `NO_CONSTRAINT`.
    manifold_constraint: Vec<u32>,
    /// Solver velocities per body slot, plus one last slot that stays zero:
    /// static bodies' constraints point there, so reading a static body
    /// never touches (or races on) a slot some step left stale.
    vel: Vec<BodyVelocity>,
    /// Constraint order: manifold indices, island after island; inside a
    /// split island, split after split.
    order: Vec<u32>,
    zero_slot: u32,
    /// Poses during the position solve, per body slot.
    pos: Vec<Vec3>,
    rot: Vec<Quat>,
    splitter: LargeIslandSplitter,
    /// Per item of the large islands: its dynamic bodies (`NO_BODY` else).
    item_bodies: Vec<[u32; 2]>,
    velocity_schedule: Schedule,
    position_schedule: Schedule,
}

/// A body's velocities during the solve: one 32-byte record, so a body
/// never straddles two cache lines and two workers' bodies share a line
/// only in pairs.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
struct BodyVelocity {
    lin: Vec3,
    ang: Vec3,
}

/// Solver velocities, written by several workers at disjoint bodies.
type Velocities<'a> = Disjoint<'a, BodyVelocity>;

/// The two bodies' velocities while one constraint is solved.
#[derive(Clone, Copy)]
struct PairVelocity {
    va: Vec3,
    wa: Vec3,
    vb: Vec3,
    wb: Vec3,
}

impl PairVelocity {
    /// # Safety
    /// No other thread writes the constraint's bodies during the call.
    #[inline(always)]
    unsafe fn load(c: &ContactConstraint, vel: &Velocities) -> Self {
        let (a, b) = (c.a as usize, c.b as usize);
        // SAFETY: forwarded to the caller.
        let (va, vb) = unsafe { (vel.get(a), vel.get(b)) };
        Self {
            va: va.lin,
            wa: va.ang,
            vb: vb.lin,
            wb: vb.ang,
        }
    }

    /// Writes back the dynamic sides (static and kinematic bodies are only
    /// read, so constraints sharing them can run at once).
    ///
    /// # Safety
    /// No other thread reads or writes the constraint's dynamic bodies
    /// during the call.
    #[inline(always)]
    unsafe fn store(self, c: &ContactConstraint, vel: &Velocities) {
        // SAFETY: forwarded to the caller.
        unsafe {
            if c.inv_mass_a > 0.0 {
                let v = BodyVelocity {
                    lin: self.va,
                    ang: self.wa,
                };
                vel.set(c.a as usize, v);
            }
            if c.inv_mass_b > 0.0 {
                let v = BodyVelocity {
                    lin: self.vb,
                    ang: self.wb,
                };
                vel.set(c.b as usize, v);
            }
        }
    }

    /// Impulse `lambda` along `dir` through the row's lever arms.
    #[inline(always)]
    fn apply(&mut self, c: &ContactConstraint, row: &Axis, dir: Vec3, lambda: f32) {
        self.va -= dir * (lambda * c.inv_mass_a);
        self.wa -= row.inv_i_ra_x * lambda;
        self.vb += dir * (lambda * c.inv_mass_b);
        self.wb += row.inv_i_rb_x * lambda;
    }

    /// Angular impulse `lambda` about the row's axis.
    #[inline(always)]
    fn apply_angular(&mut self, row: &Axis, lambda: f32) {
        self.wa -= row.inv_i_ra_x * lambda;
        self.wb += row.inv_i_rb_x * lambda;
    }
}

impl ContactSolver {
    pub fn new(max_bodies: usize, max_contact_constraints: usize) -> Self {
        Self {
            constraints: Vec::with_capacity(max_contact_constraints),
            island_ranges: Vec::with_capacity(max_bodies),
            manifold_constraint: vec![NO_CONSTRAINT; max_contact_constraints],
            vel: vec![BodyVelocity::default(); max_bodies + 1],
            order: Vec::with_capacity(max_contact_constraints),
            zero_slot: max_bodies as u32,
            pos: vec![Vec3::ZERO; max_bodies],
            rot: vec![Quat::IDENTITY; max_bodies],
            splitter: LargeIslandSplitter::new(max_bodies, max_contact_constraints),
            item_bodies: Vec::with_capacity(max_contact_constraints),
            velocity_schedule: Schedule::new(),
            position_schedule: Schedule::new(),
        }
    }

    /// Splits the large islands (`splitter.rs`) and lays out the
    /// constraint order (island after island, split after split inside a
    /// split island, so every batch is a contiguous run) and the solve
    /// schedules.
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
            let first_small = large;
            let ranges = &self.island_ranges;
            let size = |i: usize| ranges[i].1 - ranges[i].0;
            let n = ranges.len();
            self.velocity_schedule.build(
                &self.splitter,
                settings.velocity_iterations + 1,
                first_small,
                n,
                size,
            );
            self.position_schedule.build(
                &self.splitter,
                settings.position_iterations,
                first_small,
                n,
                size,
            );
        });
        stats
    }

    /// Builds the constraints in the order `split` laid out, in parallel.
    /// Warm starting is iteration 0 of the velocity solve.
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
                        let v = BodyVelocity {
                            lin: bodies.lin_vel(i as usize),
                            ang: bodies.ang_vel(i as usize),
                        };
                        // SAFETY: active slots are distinct.
                        unsafe { vel.set(i as usize, v) };
                    }
                },
            );
        }
        self.vel[zero] = BodyVelocity::default();
        ctx.par_chunks_mut(
            "clear manifold map",
            &mut self.manifold_constraint[..manifolds.len()],
            WRITE_BACK_CHUNK,
            |_, chunk| {
                chunk.fill(NO_CONSTRAINT);
                0
            },
        );
        {
            let map = Disjoint::new(&mut self.manifold_constraint);
            let order = &self.order;
            ctx.par_for("manifold map", order.len(), WRITE_BACK_CHUNK, |range| {
                for k in range {
                    // SAFETY: a manifold is in at most one island, once.
                    unsafe { map.set(order[k] as usize, k as u32) };
                }
            });
        }
        // Every constraint is rebuilt below, so only a longer list than
        // last step's writes new slots here (clearing first cost a serial
        // memset of ~2 MB, ~1% of a pyramid step).
        self.constraints.resize(self.order.len(), EMPTY_CONSTRAINT);
        let (vel, order) = (&self.vel[..], &self.order[..]);
        ctx.par_chunks_mut(
            "build constraints",
            &mut self.constraints,
            SETUP_CHUNK,
            |first, chunk| {
                for (c, &mi) in chunk.iter_mut().zip(&order[first..]) {
                    *c = build_constraint(
                        bodies,
                        vel,
                        zero,
                        &manifolds[mi as usize],
                        mi,
                        settings,
                        dt,
                    );
                }
                0
            },
        );
    }

    /// Warm start (iteration 0) and `iterations` Gauss–Seidel passes: large
    /// islands split by split on all workers, small islands whole.
    pub fn solve_velocities(&mut self, ctx: &StepCtx, iterations: u32) {
        let cons = Disjoint::new(&mut self.constraints);
        let vel = Disjoint::new(&mut self.vel);
        let ranges = &self.island_ranges;
        self.velocity_schedule.run(
            ctx,
            "velocity batch",
            |stage, range| {
                // SAFETY: the constraints of a stage share no dynamic body
                // (the splitter's invariant; split 31 is one batch on one
                // worker), a stage starts only after the previous stage of
                // its island finished (release/acquire counter), other
                // islands own other bodies, and batches do not overlap.
                unsafe {
                    let batch = cons.slice_mut(range.start, range.end);
                    if stage.iteration == 0 {
                        for c in batch.iter() {
                            warm_start(c, &vel);
                        }
                    } else {
                        for c in batch.iter_mut() {
                            solve_constraint(c, &vel);
                        }
                    }
                }
            },
            |islands| {
                for &(start, end) in &ranges[islands] {
                    // SAFETY: a small island's constraints and dynamic bodies
                    // belong to this job alone.
                    unsafe {
                        let island = cons.slice_mut(start as usize, end as usize);
                        for c in island.iter() {
                            warm_start(c, &vel);
                        }
                        for _ in 0..iterations {
                            for c in island.iter_mut() {
                                solve_constraint(c, &vel);
                            }
                        }
                    }
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
        let (cons, mc) = (&self.constraints, &self.manifold_constraint);
        ctx.par_chunks_mut(
            "write impulses",
            manifolds,
            WRITE_BACK_CHUNK,
            |first, chunk| {
                for (m, &k) in chunk.iter_mut().zip(&mc[first..]) {
                    if k == NO_CONSTRAINT {
                        continue;
                    }
                    let c = &cons[k as usize];
                    for p in 0..c.count as usize {
                        m.normal_impulse[p] = c.points[p].normal.impulse;
                    }
                    m.friction_impulse = [
                        c.friction_rows[0].impulse,
                        c.friction_rows[1].impulse,
                        c.twist.impulse,
                    ];
                }
                0
            },
        );
    }

    /// Position iterations (after integration), on the manifolds' local
    /// points, with the same splits and packs as the velocity solve. A body
    /// whose corrected pose is non-finite keeps its pose from before the
    /// corrections and is flagged faulted (`quarantine.rs`); returns how
    /// many were.
    pub fn solve_positions(
        &mut self,
        ctx: &StepCtx,
        bodies: &mut Bodies,
        manifolds: &[Manifold],
        settings: &PhysicsSettings,
    ) -> u32 {
        if settings.position_iterations == 0 || self.constraints.is_empty() {
            return 0;
        }
        {
            let (pos, rot) = (Disjoint::new(&mut self.pos), Disjoint::new(&mut self.rot));
            let b: &Bodies = bodies;
            ctx.par_for("gather poses", b.active.len(), GATHER_CHUNK, |range| {
                for &i in &b.active[range] {
                    let i = i as usize;
                    // SAFETY: active slots are distinct.
                    unsafe {
                        pos.set(i, b.pos(i));
                        rot.set(i, b.rot(i));
                    }
                }
            });
        }
        {
            let poses = Poses {
                pos: Disjoint::new(&mut self.pos),
                rot: Disjoint::new(&mut self.rot),
                bodies,
            };
            let (ranges, cons) = (&self.island_ranges, &self.constraints);
            let iterations = settings.position_iterations;
            self.position_schedule.run(
                ctx,
                "position batch",
                |_, range| {
                    for c in &cons[range] {
                        // SAFETY: as in the velocity solve (same splits,
                        // barriers and islands).
                        unsafe {
                            solve_position_constraint(
                                c,
                                &manifolds[c.manifold as usize],
                                &poses,
                                settings,
                            )
                        };
                    }
                },
                |islands| {
                    for &(start, end) in &ranges[islands] {
                        let island = &cons[start as usize..end as usize];
                        for _ in 0..iterations {
                            for c in island {
                                // SAFETY: a small island's dynamic bodies
                                // belong to this job alone.
                                unsafe {
                                    solve_position_constraint(
                                        c,
                                        &manifolds[c.manifold as usize],
                                        &poses,
                                        settings,
                                    )
                                };
                            }
                        }
                    }
                },
            );
        }
        let (active, motion) = (&bodies.active, &bodies.motion_type);
        let (pos, rot) = (&self.pos, &self.rot);
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
                    if pos[i].is_finite() && rot[i].is_finite() {
                        position.set(i, pos[i].to_array());
                        rotation.set(i, rot[i].to_array());
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

/// Applies last step's impulses.
///
/// # Safety
/// As [`PairVelocity::store`].
unsafe fn warm_start(c: &ContactConstraint, vel: &Velocities) {
    // SAFETY: forwarded to the caller.
    let mut v = unsafe { PairVelocity::load(c, vel) };
    for p in &c.points[..c.count as usize] {
        v.apply(c, &p.normal, c.normal, p.normal.impulse);
    }
    v.apply(
        c,
        &c.friction_rows[0],
        c.tangent[0],
        c.friction_rows[0].impulse,
    );
    v.apply(
        c,
        &c.friction_rows[1],
        c.tangent[1],
        c.friction_rows[1].impulse,
    );
    v.apply_angular(&c.twist, c.twist.impulse);
    // SAFETY: forwarded to the caller.
    unsafe { v.store(c, vel) };
}

/// One Gauss–Seidel pass over a manifold's rows.
///
/// # Safety
/// As [`PairVelocity::store`].
unsafe fn solve_constraint(c: &mut ContactConstraint, vel: &Velocities) {
    // SAFETY: forwarded to the caller.
    let mut v = unsafe { PairVelocity::load(c, vel) };
    solve_rows(c, &mut v);
    // SAFETY: forwarded to the caller.
    unsafe { v.store(c, vel) };
}

fn solve_rows(c: &mut ContactConstraint, v: &mut PairVelocity) {
    let n = c.normal;
    let [t1, t2] = c.tangent;
    let count = c.count as usize;
    // Friction first, bounded by the normal impulses of the previous
    // iteration (Jolt's order: the rows solved last hold best).
    let normal_sum: f32 = c.points[..count].iter().map(|p| p.normal.impulse).sum();
    let max = c.friction * normal_sum;
    let [r1, r2] = c.friction_rows;
    let l1 = r1.impulse - r1.mass * r1.velocity(t1, v.va, v.wa, v.vb, v.wb);
    let l2 = r2.impulse - r2.mass * r2.velocity(t2, v.va, v.wa, v.vb, v.wb);
    let len2 = l1 * l1 + l2 * l2;
    let (l1, l2) = if len2 > max * max {
        let s = if len2 > 0.0 { max / len2.sqrt() } else { 0.0 };
        (l1 * s, l2 * s)
    } else {
        (l1, l2)
    };
    c.friction_rows[0].impulse = l1;
    c.friction_rows[1].impulse = l2;
    v.apply(c, &r1, t1, l1 - r1.impulse);
    v.apply(c, &r2, t2, l2 - r2.impulse);

    let tw = c.twist;
    if tw.mass > 0.0 && c.twist_radius > 0.0 {
        let max_twist = max * c.twist_radius;
        let w_rel = n.dot(v.wb - v.wa);
        // Not `f32::clamp`, which panics on a NaN bound: a NaN must reach
        // the integration's check (`quarantine.rs`), not abort the step.
        let total = clamp_to(tw.impulse - tw.mass * w_rel, max_twist);
        c.twist.impulse = total;
        v.apply_angular(&tw, total - tw.impulse);
    }

    if let Some(block) = c.block {
        if solve_face_block(c, block, v) {
            return;
        }
    }
    for k in 0..count {
        let p = c.points[k];
        let vn = p.normal.velocity(n, v.va, v.wa, v.vb, v.wb);
        let total = (p.normal.impulse + p.normal.mass * (p.target_velocity - vn)).max(0.0);
        c.points[k].normal.impulse = total;
        v.apply(c, &p.normal, n, total - p.normal.impulse);
    }
    if let Some(block) = c.block.as_mut() {
        block.f = reduced_impulse(&c.points[..count], &block.a_cols);
    }
}

/// `x` limited to `[-max, max]`: `f32::clamp`'s body, bit for bit, less
/// its assertion (which panics on a NaN bound). Measured: 1.2% more
/// instructions in `solve_constraint` than `f32::clamp` on the pyramid
/// (the assertion lets LLVM use plain min/max); `max(0.0)` on the bound, or
/// a `>= 0` test beside the clamp, cost 2–5%.
#[inline]
fn clamp_to(mut x: f32, max: f32) -> f32 {
    if x < -max {
        x = -max;
    }
    if x > max {
        x = max;
    }
    x
}

/// One exact block step on a face manifold; false if it would need a
/// pulling (negative) point impulse, in which case nothing was changed.
fn solve_face_block(c: &mut ContactConstraint, block: FaceBlock, v: &mut PairVelocity) -> bool {
    let n = c.normal;
    let [t1, t2] = c.tangent;
    let (va, wa, vb, wb) = (v.va, v.wa, v.vb, v.wb);
    let dw = wb - wa;
    let u = Vec3::new(
        n.dot(vb - va) + block.rb_x.dot(wb) - block.ra_x.dot(wa),
        -t2.dot(dw),
        t1.dot(dw),
    );
    let df = block.k3_inv * (block.u_target - u);
    let f = block.f + df;
    let count = c.count as usize;
    let mut lambda = [0.0f32; MAX_POINTS];
    for (l, p) in lambda.iter_mut().zip(&block.p).take(count) {
        *l = p.dot(f);
        if *l < 0.0 {
            return false;
        }
    }
    for (pt, &l) in c.points.iter_mut().zip(&lambda).take(count) {
        pt.normal.impulse = l;
    }
    if let Some(bl) = c.block.as_mut() {
        bl.f = f;
    }
    // ΔV = M⁻¹ Bᵀ Δf
    v.va -= n * (df.x * c.inv_mass_a);
    v.vb += n * (df.x * c.inv_mass_b);
    v.wa += block.ia_t2 * df.y - block.ia_t1 * df.z - block.ia_ra_x * df.x;
    v.wb += block.ib_rb_x * df.x - block.ib_t2 * df.y + block.ib_t1 * df.z;
    true
}

/// Builds one manifold's constraint. `vel` are the solver's velocity slots
/// (`zero` is the static bodies' slot).
#[allow(clippy::too_many_arguments)]
fn build_constraint(
    bodies: &Bodies,
    vel: &[BodyVelocity],
    zero: usize,
    m: &Manifold,
    mi: u32,
    settings: &PhysicsSettings,
    dt: f32,
) -> ContactConstraint {
    let (a, b) = (m.pair.a as usize, m.pair.b as usize);
    let slot = |i: usize| {
        if bodies.motion(i) == MotionType::Static {
            zero
        } else {
            i
        }
    };
    let (sa, sb) = (slot(a), slot(b));
    let (xa, xb) = (bodies.pos(a), bodies.pos(b));
    let (qa, qb) = (bodies.rot(a), bodies.rot(b));
    let (ima, imb) = (bodies.inv_mass[a], bodies.inv_mass[b]);
    let (ia, ib) = (bodies.inv_inertia(a), bodies.inv_inertia(b));
    let n = m.normal;
    let t1 = perpendicular(n);
    let t2 = n.cross(t1);
    // Jolt's combination rules: geometric mean friction, max restitution.
    let friction = (bodies.friction[a] * bodies.friction[b]).sqrt();
    let restitution = bodies.restitution[a].max(bodies.restitution[b]);
    let count = m.count as usize;
    let mut points = [PointConstraint::default(); MAX_POINTS];
    let mut mids = [Vec3::ZERO; MAX_POINTS];
    for k in 0..count {
        // Lever arms to the midpoint between the two surfaces (Jolt).
        let mid = 0.5 * ((xa + qa * m.local_a[k]) + (xb + qb * m.local_b[k]));
        mids[k] = mid;
        let normal = Axis {
            impulse: m.normal_impulse[k],
            ..Axis::new(mid - xa, mid - xb, n, ima, imb, &ia, &ib)
        };
        let (va, vb) = (vel[sa], vel[sb]);
        let vn = normal.velocity(n, va.lin, va.ang, vb.lin, vb.ang);
        let sep = m.separation[k];
        let target_velocity = if restitution > 0.0 && vn < -settings.min_velocity_for_restitution {
            -restitution * vn
        } else {
            // Speculative contact: may close the gap this step, no more.
            -sep.max(0.0) / dt
        };
        points[k] = PointConstraint {
            normal,
            target_velocity,
        };
    }
    let centre = mids[..count].iter().copied().sum::<Vec3>() / count.max(1) as f32;
    let twist_radius = mids[..count]
        .iter()
        .map(|&p| (p - centre).length())
        .sum::<f32>()
        / count.max(1) as f32;
    let (ra, rb) = (centre - xa, centre - xb);
    let [f1, f2, ft] = m.friction_impulse;
    let friction_rows = [
        Axis {
            impulse: f1,
            ..Axis::new(ra, rb, t1, ima, imb, &ia, &ib)
        },
        Axis {
            impulse: f2,
            ..Axis::new(ra, rb, t2, ima, imb, &ia, &ib)
        },
    ];
    let (ia_n, ib_n) = (ia * n, ib * n);
    let k_twist = ia_n.dot(n) + ib_n.dot(n);
    let twist = Axis {
        ra_x: n,
        rb_x: n,
        inv_i_ra_x: ia_n,
        inv_i_rb_x: ib_n,
        mass: if k_twist > 0.0 { 1.0 / k_twist } else { 0.0 },
        impulse: ft,
    };
    let block = if count >= 3 {
        face_block(
            &points[..count],
            &mids[..count],
            centre,
            ra,
            rb,
            n,
            t1,
            t2,
            ima,
            imb,
            &ia,
            &ib,
        )
    } else {
        None
    };
    ContactConstraint {
        a: sa as u32,
        b: sb as u32,
        inv_mass_a: ima,
        inv_mass_b: imb,
        normal: n,
        tangent: [t1, t2],
        friction,
        count: m.count,
        manifold: mi,
        points,
        friction_rows,
        twist,
        twist_radius,
        block,
    }
}

/// `A λ`: total normal impulse and its first moments about the centre.
fn reduced_impulse(points: &[PointConstraint], a_cols: &[Vec3; MAX_POINTS]) -> Vec3 {
    points
        .iter()
        .zip(a_cols)
        .fold(Vec3::ZERO, |acc, (pt, &c)| acc + c * pt.normal.impulse)
}

fn outer(a: Vec3, b: Vec3) -> Mat3 {
    Mat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// Builds the reduced normal block of a face manifold, or `None` when the
/// points are (nearly) collinear, the bodies cannot rotate, or the targets
/// are not affine over the face.
#[allow(clippy::too_many_arguments)]
fn face_block(
    points: &[PointConstraint],
    mids: &[Vec3],
    centre: Vec3,
    ra: Vec3,
    rb: Vec3,
    n: Vec3,
    t1: Vec3,
    t2: Vec3,
    ima: f32,
    imb: f32,
    ia: &Mat3,
    ib: &Mat3,
) -> Option<FaceBlock> {
    // A = rows (1, d1_k, d2_k); with d measured from the centroid.
    let a_cols: [Vec3; MAX_POINTS] = core::array::from_fn(|k| {
        mids.get(k)
            .map(|&m| Vec3::new(1.0, (m - centre).dot(t1), (m - centre).dot(t2)))
            .unwrap_or(Vec3::ZERO)
    });
    let cols = &a_cols[..points.len()];
    let aat = cols.iter().fold(Mat3::ZERO, |acc, &c| acc + outer(c, c));
    // Collinear points: the face has no second in-plane direction.
    let spread = aat.y_axis.y * aat.z_axis.z - aat.z_axis.y * aat.y_axis.z;
    if spread <= 1e-8 {
        return None;
    }
    let g = aat.inverse();
    let mut p = [Vec3::ZERO; MAX_POINTS];
    for (k, &c) in cols.iter().enumerate() {
        p[k] = g * c;
    }
    // Affine fit of the point targets: u_t = G A t.
    let at = cols
        .iter()
        .zip(points)
        .fold(Vec3::ZERO, |acc, (&c, pt)| acc + c * pt.target_velocity);
    let u_target = g * at;
    let misfit = cols
        .iter()
        .zip(points)
        .map(|(&c, pt)| (c.dot(u_target) - pt.target_velocity).abs())
        .fold(0.0, f32::max);
    if misfit > BLOCK_TARGET_FIT {
        return None;
    }
    let ra_x = ra.cross(n);
    let rb_x = rb.cross(n);
    let (ia_ra_x, ib_rb_x) = (*ia * ra_x, *ib * rb_x);
    let (ia_t1, ia_t2, ib_t1, ib_t2) = (*ia * t1, *ia * t2, *ib * t1, *ib * t2);
    let kcc = ima + imb + ia_ra_x.dot(ra_x) + ib_rb_x.dot(rb_x);
    let kc1 = -(ia_ra_x + ib_rb_x).dot(t2);
    let kc2 = (ia_ra_x + ib_rb_x).dot(t1);
    let k11 = (ia_t2 + ib_t2).dot(t2);
    let k22 = (ia_t1 + ib_t1).dot(t1);
    let k12 = -(ia_t1 + ib_t1).dot(t2);
    let k3 = Mat3::from_cols(
        Vec3::new(kcc, kc1, kc2),
        Vec3::new(kc1, k11, k12),
        Vec3::new(kc2, k12, k22),
    );
    // Relative to its scale, a singular K3 means a body pair that cannot
    // rotate (infinite inertia on both sides): leave it to Gauss–Seidel.
    // So does a determinant below the normal floats (a 1e6 m box has
    // inverse inertias near 1e-22, and their product underflows): its
    // inverse would overflow.
    let det = k3.determinant();
    if !(det.is_finite() && det > 1e-12 * kcc * k11.max(1e-30) * k22.max(1e-30))
        || det < f32::MIN_POSITIVE
        || k11 <= 0.0
        || k22 <= 0.0
    {
        return None;
    }
    let k3_inv = k3.inverse();
    if !k3_inv.is_finite() {
        return None;
    }
    let mut block = FaceBlock {
        ra_x,
        rb_x,
        ia_ra_x,
        ia_t1,
        ia_t2,
        ib_rb_x,
        ib_t1,
        ib_t2,
        k3_inv,
        u_target,
        a_cols,
        p,
        f: Vec3::ZERO,
    };
    // Warm-started point impulses as a reduced impulse.
    block.f = reduced_impulse(points, &block.a_cols);
    Some(block)
}

/// Poses during the position solve: dynamic bodies' in the solver's
/// arrays (written by several workers at disjoint bodies), the others read
/// from the bodies.
struct Poses<'a> {
    pos: Disjoint<'a, Vec3>,
    rot: Disjoint<'a, Quat>,
    bodies: &'a Bodies,
}

/// Baumgarte pushes on every point of one manifold.
///
/// # Safety
/// No other thread touches the constraint's dynamic bodies during the call.
unsafe fn solve_position_constraint(
    c: &ContactConstraint,
    m: &Manifold,
    poses: &Poses,
    s: &PhysicsSettings,
) {
    let (a, b) = (m.pair.a as usize, m.pair.b as usize);
    let (dyn_a, dyn_b) = (c.inv_mass_a > 0.0, c.inv_mass_b > 0.0);
    // SAFETY: dynamic bodies are this call's alone (caller).
    let pose = |i: usize, dynamic: bool| unsafe {
        if dynamic {
            (poses.pos.get(i), poses.rot.get(i))
        } else {
            (poses.bodies.pos(i), poses.bodies.rot(i))
        }
    };
    let (ia, ib) = (poses.bodies.inv_inertia(a), poses.bodies.inv_inertia(b));
    let n = c.normal;
    for k in 0..c.count as usize {
        let (xa, qa) = pose(a, dyn_a);
        let (xb, qb) = pose(b, dyn_b);
        let pa = xa + qa * m.local_a[k];
        let pb = xb + qb * m.local_b[k];
        let separation = (pb - pa).dot(n) + s.penetration_slop;
        if separation >= 0.0 {
            continue;
        }
        let error = separation.max(-s.max_penetration_distance);
        let mid = 0.5 * (pa + pb);
        let axis = Axis::new(mid - xa, mid - xb, n, c.inv_mass_a, c.inv_mass_b, &ia, &ib);
        let lambda = -s.baumgarte * error * axis.mass;
        // SAFETY: dynamic bodies are this call's alone (caller).
        unsafe {
            if dyn_a {
                poses.pos.set(a, xa - n * (lambda * c.inv_mass_a));
                let q = Quat::from_scaled_axis(-axis.inv_i_ra_x * lambda) * qa;
                poses.rot.set(a, q.normalize());
            }
            if dyn_b {
                poses.pos.set(b, xb + n * (lambda * c.inv_mass_b));
                let q = Quat::from_scaled_axis(axis.inv_i_rb_x * lambda) * qb;
                poses.rot.set(b, q.normalize());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reduced coordinates are exact: every point's normal velocity is
    /// `A_kᵀ u`, and a reduced impulse `f` moves the bodies exactly as the
    /// per-point impulses `λ_k = P_k · f` would through their rows.
    #[test]
    fn face_block_reduced_coordinates_match_point_rows() {
        let n = Vec3::new(0.1, 1.0, -0.2).normalize();
        let t1 = perpendicular(n);
        let t2 = n.cross(t1);
        let (xa, xb) = (Vec3::new(0.3, -0.6, 0.1), Vec3::new(-0.2, 0.55, 0.25));
        let rot = Quat::from_rotation_x(0.4) * Quat::from_rotation_y(-0.7);
        let ia = crate::math::world_inverse_inertia(rot, Vec3::new(0.006, 0.004, 0.005));
        let ib = crate::math::world_inverse_inertia(rot.inverse(), Vec3::new(0.01, 0.02, 0.015));
        let (ima, imb) = (0.001, 0.002);
        // four points of a skewed quad in the contact plane (plus a little
        // normal offset, which must not matter)
        let centre0 = Vec3::new(0.05, 0.0, 0.1);
        let mids: Vec<Vec3> = [(0.5, 0.4), (-0.45, 0.5), (-0.5, -0.35), (0.4, -0.5)]
            .iter()
            .enumerate()
            .map(|(k, &(a, b))| centre0 + t1 * a + t2 * b + n * (0.001 * k as f32))
            .collect();
        let centre = mids.iter().copied().sum::<Vec3>() / 4.0;
        let points: Vec<PointConstraint> = mids
            .iter()
            .map(|&m| PointConstraint {
                normal: Axis::new(m - xa, m - xb, n, ima, imb, &ia, &ib),
                target_velocity: 0.0,
            })
            .collect();
        let block = face_block(
            &points,
            &mids,
            centre,
            centre - xa,
            centre - xb,
            n,
            t1,
            t2,
            ima,
            imb,
            &ia,
            &ib,
        )
        .expect("a quad face has a block");
        let (va, wa, vb, wb) = (
            Vec3::new(0.3, -1.0, 0.2),
            Vec3::new(0.5, 0.1, -0.3),
            Vec3::new(-0.2, 0.4, 0.1),
            Vec3::new(-0.1, 0.7, 0.2),
        );
        let dw = wb - wa;
        let u = Vec3::new(
            n.dot(vb - va) + block.rb_x.dot(wb) - block.ra_x.dot(wa),
            -t2.dot(dw),
            t1.dot(dw),
        );
        for (k, p) in points.iter().enumerate() {
            let direct = p.normal.velocity(n, va, wa, vb, wb);
            assert!((direct - block.a_cols[k].dot(u)).abs() < 1e-4, "point {k}");
        }
        // apply a reduced impulse both ways
        let df = Vec3::new(3.0, 0.4, -0.7);
        let wa_block = wa + block.ia_t2 * df.y - block.ia_t1 * df.z - block.ia_ra_x * df.x;
        let wb_block = wb + block.ib_rb_x * df.x - block.ib_t2 * df.y + block.ib_t1 * df.z;
        let (mut wa_rows, mut wb_rows, mut va_rows) = (wa, wb, va);
        let mut total = 0.0;
        for (k, p) in points.iter().enumerate() {
            let l = block.p[k].dot(df);
            total += l;
            va_rows -= n * (l * ima);
            wa_rows -= p.normal.inv_i_ra_x * l;
            wb_rows += p.normal.inv_i_rb_x * l;
        }
        assert!((total - df.x).abs() < 1e-4);
        assert!((va_rows - (va - n * (df.x * ima))).length() < 1e-5);
        assert!(
            (wa_rows - wa_block).length() < 1e-4,
            "{wa_rows} vs {wa_block}"
        );
        assert!(
            (wb_rows - wb_block).length() < 1e-4,
            "{wb_rows} vs {wb_block}"
        );
        // a block step lands every point on its target at once
        let f = block.k3_inv * (block.u_target - u);
        let (mut va2, mut wa2, mut vb2, mut wb2) = (va, wa, vb, wb);
        va2 -= n * (f.x * ima);
        vb2 += n * (f.x * imb);
        wa2 += block.ia_t2 * f.y - block.ia_t1 * f.z - block.ia_ra_x * f.x;
        wb2 += block.ib_rb_x * f.x - block.ib_t2 * f.y + block.ib_t1 * f.z;
        for p in &points {
            assert!(p.normal.velocity(n, va2, wa2, vb2, wb2).abs() < 1e-4);
        }
    }

    #[test]
    fn collinear_points_have_no_block() {
        let n = Vec3::Y;
        let (t1, t2) = (perpendicular(n), n.cross(perpendicular(n)));
        let mids = [
            Vec3::new(-0.5, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.5, 0.0, 0.0),
        ];
        let ia = Mat3::from_diagonal(Vec3::splat(0.01));
        let points: Vec<PointConstraint> = mids
            .iter()
            .map(|&m| PointConstraint {
                normal: Axis::new(m, m - Vec3::Y, n, 0.1, 0.1, &ia, &ia),
                target_velocity: 0.0,
            })
            .collect();
        assert!(face_block(
            &points,
            &mids,
            Vec3::ZERO,
            Vec3::ZERO,
            -Vec3::Y,
            n,
            t1,
            t2,
            0.1,
            0.1,
            &ia,
            &ia
        )
        .is_none());
    }
}
