//! The solver: sequential impulses with accumulated, clamped impulses and
//! warm starting (Box2D/Jolt lineage), on constraints laid out in bundles
//! of 16 lanes, one type batch per constraint type (bepu's type batches:
//! contacts in `contact/`, joints in `joint/`, built from the rows in
//! `parts/`), and solved 16 lanes wide wherever the lanes share no dynamic
//! body.
//!
//! Stages, in the order the pipeline calls them:
//! 1. [`Solver::split`]: split the large islands (`splitter.rs`: contacts
//!    and joints coloured together) and lay every constraint out in a slot
//!    of its type (`layout.rs`: islands → splits → bundles), and build the
//!    velocity and position schedules (`schedule.rs`).
//! 2. [`Solver::setup`] (prepare): per bundle, in parallel, each contact
//!    lane's lever arms, effective masses, target normal velocities
//!    (restitution or speculative bias, from the velocities before any warm
//!    start), friction and twist rows and face block (`contact/prepare.rs`),
//!    with last step's impulses from the contact cache; each joint lane's
//!    parts (`joint/prepare.rs`), with last step's impulses from the joint
//!    table.
//! 3. [`Solver::solve_velocities`]: iteration 0 warm-starts, then
//!    `velocity_iterations` passes (`contact/solve.rs`, `joint/solve.rs`).
//!    A parallel split's
//!    bundles run 16 lanes wide on all workers, split by split with a
//!    barrier between; the non-parallel split and the small islands run one
//!    lane after the other in island order (the scalar path of the same
//!    source). [`SolverWidth::Scalar`](crate::SolverWidth) runs every
//!    bundle lane by lane instead, with bit-identical results.
//! 4. [`Solver::finish_velocities`] (store): velocities back to the
//!    bodies, accumulated impulses back to the manifolds for the contact
//!    cache and the contact report, and to the joint table.
//! 5. [`Solver::solve_positions`] (after integration): Baumgarte pushes
//!    that remove `baumgarte` of the penetration beyond the slop (of a
//!    joint's error) each iteration, moving positions and rotations, never
//!    velocities (`contact/position.rs`, `joint/position.rs`).
//!
//! Where constraints run one lane after the other (the non-parallel split,
//! a pack's overflow), joints go before contacts, as in Jolt: contacts
//! have the last word on penetration.
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
use crate::joint::store::{Joints, JOINT_IMPULSES, WORLD};
use crate::joint::JointImpulse;
use crate::narrowphase::Manifold;
use crate::settings::{PhysicsSettings, SolverWidth};
use archipelago_simd::{One, LANES};
use bodies::BodyVelocity;
use bundles::{
    JointPositionBundles, JointPrepareBundle, PositionBundles, PrepareBundle, VelocityBundles,
};
use constraint::{iterate, Contacts};
use contact::batch::{BundleBodies, ContactImpulses, ContactPrestep, PositionPrestep};
use contact::position::{lane_used, solve_position};
use contact::prepare::{gather, prepare, SetupRows};
use dispatch::dispatch;
use joint::batch::{JointBodyRows, JointDef, JointImpulses, JointPrestep};
use layout::{Layout, PADDING};
use poses::{BodyPose, PoseLanes};
use schedule::{Schedule, SlotBytes};
use splitter::{LargeIslandSplitter, LARGE_ISLAND_THRESHOLD, NO_BODY, NUM_SPLITS};
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};
use tree::JointTrees;

mod bodies;
mod bundles;
mod constraint;
pub(crate) mod contact;
mod dispatch;
pub(crate) mod joint;
pub(crate) mod layout;
pub(crate) mod parts;
pub(crate) mod poses;
mod schedule;
pub(crate) mod splitter;
mod tree;
#[cfg(target_arch = "x86_64")]
mod ymm;
#[cfg(target_arch = "x86_64")]
mod zmm;

/// Per-manifold (and per active joint) marker: not solved (sensor, or no
/// awake dynamic body).
const NO_CONSTRAINT: u32 = u32::MAX;

/// Bundles built per setup job.
const SETUP_BUNDLES: usize = 2;
/// Active bodies per velocity-gather job.
const GATHER_CHUNK: usize = 512;
/// Joints per impulse write-back job.
const WRITE_BACK_CHUNK: usize = 256;
/// Contact bundles per impulse write-back job (256 constraints).
const WRITE_BACK_BUNDLES: usize = 16;

/// What one slot streams per velocity pass, for the traces' bandwidth
/// estimate: its bundle's columns per lane (references, definition,
/// prestep, impulses read and written) and both bodies' records gathered
/// and scattered, each counted once (no reuse between lanes assumed).
const VELOCITY_SLOT_BYTES: SlotBytes = SlotBytes {
    contact: ((size_of::<BundleBodies>()
        + size_of::<ContactPrestep>()
        + 2 * size_of::<ContactImpulses>())
        / LANES
        + 4 * size_of::<BodyVelocity>()) as u64,
    joint: ((size_of::<BundleBodies>()
        + size_of::<JointDef>()
        + size_of::<JointPrestep>()
        + 2 * size_of::<JointImpulses>())
        / LANES
        + 4 * size_of::<BodyVelocity>()) as u64,
};
/// The same per position pass (poses instead of velocities).
const POSITION_SLOT_BYTES: SlotBytes = SlotBytes {
    contact: ((size_of::<BundleBodies>()
        + size_of::<ContactPrestep>()
        + size_of::<PositionPrestep>())
        / LANES
        + 4 * size_of::<BodyPose>()) as u64,
    joint: ((size_of::<BundleBodies>() + size_of::<JointDef>() + size_of::<JointPrestep>()) / LANES
        + 4 * size_of::<BodyPose>()) as u64,
};

/// Split statistics of one step (see [`crate::StepStats`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SplitStats {
    pub large_islands: u32,
    pub split_items: [u32; NUM_SPLITS],
    /// Constraints (contacts and joints) in wide bundles, and solved lane
    /// by lane.
    pub wide: u32,
    pub scalar: u32,
    /// Joints whose equality parts a joint tree solves (`tree/`).
    pub tree_joints: u32,
    /// Whether the trees kept last step's structure.
    pub trees_reused: bool,
}

/// Preallocated solver state.
pub(crate) struct Solver {
    /// `order[start..end]` of each island (islands biggest first).
    island_ranges: Vec<(u32, u32)>,
    /// The same for the small islands only.
    small_ranges: Vec<(u32, u32)>,
    /// Per active joint: its slot.
    joint_slot: Vec<u32>,
    /// Solver velocities per body slot, plus one last slot that stays zero.
    vel: Vec<BodyVelocity>,
    /// Constraint order: items (see `layout.rs`), island after island;
    /// inside a split island, split after split.
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
    /// The joint type batch, per bundle.
    joint_refs: Vec<BundleBodies>,
    joint_def: Vec<JointDef>,
    joint_prestep: Vec<JointPrestep>,
    joint_impulses: Vec<JointImpulses>,
    /// The small islands' joint trees.
    trees: JointTrees,
    velocity_schedule: Schedule,
    position_schedule: Schedule,
}

/// Slot `s` as (bundle, lane).
#[inline(always)]
fn bundle_lane(s: usize) -> (usize, usize) {
    (s / LANES, s % LANES)
}

/// An item's two bodies (`NO_BODY` for the world): a manifold's pair, or
/// an active joint's.
#[inline]
fn item_pair(manifolds: &[Manifold], joints: &Joints, item: u32) -> [u32; 2] {
    let m = manifolds.len() as u32;
    if item < m {
        let pair = manifolds[item as usize].pair;
        [pair.a, pair.b]
    } else {
        let d = &joints.data[joints.active[(item - m) as usize] as usize];
        [d.body_a, d.body_b].map(|i| if i == WORLD { NO_BODY } else { i })
    }
}

impl Solver {
    pub fn new(max_bodies: usize, max_contact_constraints: usize, max_joints: usize) -> Self {
        let bundles = Layout::max_slots(max_contact_constraints) / LANES;
        let joint_bundles = Layout::max_slots(max_joints) / LANES;
        let items = max_contact_constraints + max_joints;
        Self {
            island_ranges: Vec::with_capacity(max_bodies),
            small_ranges: Vec::with_capacity(max_bodies),
            joint_slot: vec![NO_CONSTRAINT; max_joints],
            vel: vec![BodyVelocity::default(); max_bodies + 1],
            order: Vec::with_capacity(items),
            zero_slot: max_bodies as u32,
            poses: vec![BodyPose::IDENTITY; max_bodies + 1],
            splitter: LargeIslandSplitter::new(max_bodies, items),
            item_bodies: Vec::with_capacity(items),
            layout: Layout::new(max_contact_constraints, max_joints, max_bodies),
            refs: Vec::with_capacity(bundles),
            prestep: Vec::with_capacity(bundles),
            impulses: Vec::with_capacity(bundles),
            positions: Vec::with_capacity(bundles),
            joint_refs: Vec::with_capacity(joint_bundles),
            joint_def: Vec::with_capacity(joint_bundles),
            joint_prestep: Vec::with_capacity(joint_bundles),
            joint_impulses: Vec::with_capacity(joint_bundles),
            trees: JointTrees::new(max_bodies, max_joints),
            velocity_schedule: Schedule::new(),
            position_schedule: Schedule::new(),
        }
    }

    /// A step that simulated nothing solved nothing: `placed_items` is
    /// empty until the next `split`.
    pub fn forget_placement(&mut self) {
        self.island_ranges.clear();
    }

    /// The last [`split`](Self::split)'s constraints in solve order, as
    /// (item, island, split): items as in `layout.rs` (manifold index, then
    /// `manifolds + active joint index`), the split only in split islands.
    pub fn placed_items(&self) -> impl Iterator<Item = (u32, u32, Option<u8>)> + '_ {
        self.island_ranges
            .iter()
            .enumerate()
            .flat_map(move |(island, &(start, end))| {
                // Split islands come first and keep their offsets in `order`.
                let split_island = self.splitter.islands.get(island);
                let mut split = 0;
                (start..end).map(move |k| {
                    let split = split_island.map(|s| {
                        while s.split(split).1 <= k {
                            split += 1;
                        }
                        split as u8
                    });
                    (self.order[k as usize], island as u32, split)
                })
            })
    }

    /// Splits the large islands (`splitter.rs`), lays the constraints out
    /// in bundles (`layout.rs`) and builds the solve schedules. Items are
    /// the manifolds, then the active joints (`layout.rs`).
    pub fn split(
        &mut self,
        ctx: &StepCtx,
        bodies: &Bodies,
        manifolds: &[Manifold],
        joints: &Joints,
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
        let dynamic = |i: u32| {
            if i != NO_BODY && bodies.inv_mass[i as usize] > 0.0 {
                i
            } else {
                NO_BODY
            }
        };
        let item_bodies = |item: u32| item_pair(manifolds, joints, item).map(dynamic);
        // The items' dynamic bodies, looked up in parallel for the serial
        // colouring pass.
        self.item_bodies.resize(large_end, [NO_BODY; 2]);
        ctx.par_chunks_mut(
            "split bodies",
            &mut self.item_bodies,
            GATHER_CHUNK,
            |first, chunk| {
                for (ends, &item) in chunk.iter_mut().zip(&all[first..]) {
                    *ends = item_bodies(item);
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
            let m = manifolds.len() as u32;
            let is_dynamic = |b: u32| bodies.inv_mass[b as usize] > 0.0;
            self.trees
                .classify(&self.small_ranges, &self.order, m, joints, is_dynamic);
            // A joint a tree solves needs a slot only for its rows.
            let in_tree = &self.trees.in_tree;
            let include = |item: u32| {
                item < m || {
                    let j = (item - m) as usize;
                    !in_tree[j] || joints.data[joints.active[j] as usize].has_rows()
                }
            };
            self.layout.build(
                &self.order,
                &self.splitter,
                &self.small_ranges,
                m,
                include,
                item_bodies,
            );
            (stats.wide, stats.scalar) = (self.layout.wide, self.layout.scalar);
            self.trees.build(
                self.layout.packs.iter().map(|p| p.islands),
                &self.small_ranges,
                &self.order,
                m,
                joints,
                is_dynamic,
            );
            stats.tree_joints = self.trees.joints;
            stats.trees_reused = self.trees.reused;
            self.velocity_schedule
                .build(&self.layout, settings.velocity_iterations + 1);
            self.position_schedule
                .build(&self.layout, settings.position_iterations);
        });
        stats
    }

    /// Builds every bundle's constraints in parallel, in the slots `split`
    /// laid out, with last step's impulses (set on the manifolds by the
    /// contact cache, kept in the joint table for joints) as the warm
    /// start.
    pub fn setup(
        &mut self,
        ctx: &StepCtx,
        bodies: &Bodies,
        manifolds: &[Manifold],
        joints: &Joints,
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
        // Every bundle is rebuilt below, so only a longer batch than last
        // step's writes new bundles here (within the capacity: no
        // allocation).
        let n = self.layout.bundles();
        self.refs.resize(n, bytemuck::Zeroable::zeroed());
        self.prestep.resize(n, bytemuck::Zeroable::zeroed());
        self.impulses.resize(n, bytemuck::Zeroable::zeroed());
        self.positions.resize(n, bytemuck::Zeroable::zeroed());
        let nj = self.layout.joint_bundles();
        self.joint_refs.resize(nj, bytemuck::Zeroable::zeroed());
        self.joint_def.resize(nj, bytemuck::Zeroable::zeroed());
        self.joint_prestep.resize(nj, bytemuck::Zeroable::zeroed());
        self.joint_impulses.resize(nj, bytemuck::Zeroable::zeroed());
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
                    gather(lanes, bodies, manifolds, vel, zero, &mut rows, pp, r);
                    match width {
                        SolverWidth::Wide => dispatch(
                            simd,
                            PrepareBundle {
                                rows: &rows,
                                positions: pp,
                                settings,
                                dt,
                                prestep: p,
                                impulses: imp,
                            },
                        ),
                        SolverWidth::Scalar => {
                            for lane in 0..LANES {
                                prepare(One(lane), &rows, pp, settings, dt, p, imp);
                            }
                        }
                    }
                }
                0
            },
        );
        self.joint_slot[..joints.active.len()].fill(NO_CONSTRAINT);
        if nj == 0 {
            self.trees.factor(ctx, bodies, joints, self.zero_slot, dt);
            return;
        }
        let joint_map = Disjoint::new(&mut self.joint_slot);
        let refs = Disjoint::new(&mut self.joint_refs);
        let defs = Disjoint::new(&mut self.joint_def);
        let impulses = Disjoint::new(&mut self.joint_impulses);
        let slots = &self.layout.slot_joint[..];
        let in_tree = &self.trees.in_tree[..];
        ctx.par_chunks_mut(
            "build joints",
            &mut self.joint_prestep,
            SETUP_BUNDLES,
            |first, chunk| {
                let mut rows = JointBodyRows::new();
                for (k, p) in chunk.iter_mut().enumerate() {
                    let b = first + k;
                    // SAFETY: bundle `b` is this job's alone.
                    let (r, def, imp) = unsafe {
                        (
                            &mut refs.slice_mut(b, b + 1)[0],
                            &mut defs.slice_mut(b, b + 1)[0],
                            &mut impulses.slice_mut(b, b + 1)[0],
                        )
                    };
                    let lanes: &[u32; LANES] = slots[b * LANES..(b + 1) * LANES]
                        .try_into()
                        .expect("whole bundles");
                    joint::prepare::gather(
                        lanes, joints, in_tree, bodies, zero, def, &mut rows, r, imp,
                    );
                    p.masses = rows.masses;
                    match width {
                        SolverWidth::Wide => dispatch(
                            simd,
                            JointPrepareBundle {
                                def,
                                rows: &rows,
                                dt,
                                prestep: p,
                                impulses: imp,
                            },
                        ),
                        SolverWidth::Scalar => {
                            for lane in 0..LANES {
                                joint::prepare::prepare(One(lane), def, &rows, dt, p, imp);
                            }
                        }
                    }
                    for (lane, &j) in lanes.iter().enumerate() {
                        if j != PADDING {
                            // SAFETY: an active joint is in one slot.
                            unsafe { joint_map.set(j as usize, (b * LANES + lane) as u32) };
                        }
                    }
                }
                0
            },
        );
        self.trees.factor(ctx, bodies, joints, self.zero_slot, dt);
    }

    /// Warm start (iteration 0) and `iterations` Gauss–Seidel passes: large
    /// islands split by split on all workers, a parallel split's bundles 16
    /// lanes wide, the non-parallel split and small islands lane by lane.
    pub fn solve_velocities(&mut self, ctx: &StepCtx, iterations: u32, settings: &PhysicsSettings) {
        let (width, simd) = (settings.solver_width, settings.simd.resolve());
        let trees = self.trees.view(&[], self.zero_slot);
        let vel = Disjoint::new(&mut self.vel);
        let impulses = Disjoint::new(&mut self.impulses);
        let joint_impulses = Disjoint::new(&mut self.joint_impulses);
        let (refs, prestep, layout) = (&self.refs[..], &self.prestep[..], &self.layout);
        let (joint_refs, joint_def, joint_prestep) = (
            &self.joint_refs[..],
            &self.joint_def[..],
            &self.joint_prestep[..],
        );
        // Runs the slots of `contacts` and `joints` one lane after another,
        // joints first. The schedule gives each range's slots, bundles and
        // dynamic bodies to one worker at a time (see the callbacks below).
        let lanes = |contacts: Range<usize>, joints: Range<usize>, warm: bool| {
            for s in joints {
                let (b, l) = bundle_lane(s);
                if joint_def[b].used[l] == 0.0 {
                    continue;
                }
                // SAFETY: the slot's bundle and dynamic bodies are this
                // worker's alone (the schedule, below).
                unsafe {
                    let imp = &mut joint_impulses.slice_mut(b, b + 1)[0];
                    let (r, p) = (&joint_refs[b], &joint_prestep[b]);
                    iterate::<constraint::Joints, _>(One(l), warm, r, p, imp, &vel);
                }
            }
            for s in contacts {
                let (b, l) = bundle_lane(s);
                let p = &prestep[b];
                if !lane_used(p, l) {
                    continue;
                }
                // SAFETY: the slot's bundle and dynamic bodies are this
                // worker's alone (the schedule, below).
                unsafe {
                    let imp = &mut impulses.slice_mut(b, b + 1)[0];
                    iterate::<Contacts, _>(One(l), warm, &refs[b], p, imp, &vel);
                }
            }
        };
        let bundles = |contacts: Range<usize>, joints: Range<usize>, warm: bool| {
            if width == SolverWidth::Scalar {
                return lanes(contacts, joints, warm);
            }
            let whole = |r: Range<usize>| r.start / LANES..r.end.div_ceil(LANES);
            // The bundles and their lanes' dynamic bodies (distinct: one
            // split or colour) are this worker's alone (the schedule, below).
            if !joints.is_empty() {
                let kernel = VelocityBundles::<constraint::Joints> {
                    range: whole(joints),
                    warm,
                    refs: joint_refs,
                    prestep: joint_prestep,
                    impulses: &joint_impulses,
                    vel: &vel,
                };
                dispatch(simd, kernel);
            }
            if !contacts.is_empty() {
                let kernel = VelocityBundles::<Contacts> {
                    range: whole(contacts),
                    warm,
                    refs,
                    prestep,
                    impulses: &impulses,
                    vel: &vel,
                };
                dispatch(simd, kernel);
            }
        };
        self.velocity_schedule.run(
            ctx,
            "velocity batch",
            VELOCITY_SLOT_BYTES,
            // The constraints of a stage share no dynamic body (the
            // splitter's invariant; split 31 is one batch on one worker), a
            // stage starts only after the previous stage of its island
            // finished (release/acquire counter), other islands own other
            // bodies, and batches do not overlap: each batch's slots are its
            // worker's alone.
            |stage, contacts, joints| {
                let warm = stage.iteration == 0;
                if stage.non_parallel {
                    lanes(contacts, joints, warm)
                } else {
                    bundles(contacts, joints, warm)
                }
            },
            // A pack's small islands, constraints and dynamic bodies belong
            // to this job alone; it solves them colour after colour (each
            // colour's bundles wide), then the overflow lane by lane.
            |k| {
                let pack = layout.packs[k];
                let colours =
                    &layout.colour_ranges[pack.colours.0 as usize..pack.colours.1 as usize];
                let range = |(a, b): (u32, u32)| a as usize..b as usize;
                // Nothing but joint trees: their first pass is exact.
                let passes = if pack.has_no_slots() { 0 } else { iterations };
                for warm in core::iter::once(true).chain((0..passes).map(|_| false)) {
                    for c in colours {
                        bundles(range(c.contacts), range(c.joints), warm);
                    }
                    lanes(
                        range(pack.overflow.contacts),
                        range(pack.overflow.joints),
                        warm,
                    );
                    // SAFETY: the pack's trees and bodies are this job's.
                    unsafe { JointTrees::solve_velocities(&trees, k, &vel) };
                }
            },
        );
    }

    /// Writes the solved velocities back to the moving bodies, the
    /// accumulated impulses back to the manifolds (for the cache and users)
    /// and to the joint table (the next step's warm start, and
    /// `joint_impulse`).
    pub fn finish_velocities(
        &self,
        ctx: &StepCtx,
        bodies: &mut Bodies,
        manifolds: &mut [Manifold],
        joints: &mut Joints,
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
        // By bundle, scattering into the manifolds: each job reads its
        // bundles' columns in order and writes ~28 bytes of each of its
        // manifolds, which are 176 bytes apart, so no two jobs write one
        // cache line. (Walking the manifolds in order instead needs a
        // manifold-to-slot map, whose 4-byte entries the setup jobs wrote
        // scattered: 16 bundles' manifolds to a line, a line bouncing
        // between every core that builds constraints.)
        let (imp, prestep, slots) = (&self.impulses, &self.prestep, &self.layout.slot_manifold);
        let out = Disjoint::new(manifolds);
        ctx.par_for(
            "write impulses",
            slots.len() / LANES,
            WRITE_BACK_BUNDLES,
            |range| {
                for b in range {
                    let (i, p) = (&imp[b], &prestep[b]);
                    for (l, &mi) in slots[b * LANES..(b + 1) * LANES].iter().enumerate() {
                        if mi == PADDING {
                            continue;
                        }
                        // SAFETY: a manifold is in at most one slot, so in
                        // one job's bundles.
                        let m = unsafe { &mut out.slice_mut(mi as usize, mi as usize + 1)[0] };
                        for k in 0..p.count[l] as usize {
                            m.normal_impulse[k] = i.normal[k][l];
                        }
                        m.friction_impulse = [i.friction[0][l], i.friction[1][l], i.twist[l]];
                    }
                }
            },
        );
        if joints.active.is_empty() {
            return;
        }
        let (imp, prestep, map) = (&self.joint_impulses, &self.joint_prestep, &self.joint_slot);
        let Joints {
            active,
            impulses,
            last_impulse,
            ..
        } = joints;
        let stored = Disjoint::new(impulses);
        let last = Disjoint::new(last_impulse);
        ctx.par_for(
            "write joint impulses",
            active.len(),
            WRITE_BACK_CHUNK,
            |range| {
                for k in range {
                    let j = active[k] as usize;
                    if map[k] == NO_CONSTRAINT {
                        // a tree solves it whole: its impulses come from there
                        // SAFETY: active joints are distinct.
                        unsafe { last.set(j, JointImpulse::default()) };
                        continue;
                    }
                    let (b, l) = bundle_lane(map[k] as usize);
                    let (i, p) = (&imp[b], &prestep[b]);
                    let v: [f32; JOINT_IMPULSES] = [
                        i.point[0][l],
                        i.point[1][l],
                        i.point[2][l],
                        i.block[0][l],
                        i.block[1][l],
                        i.rotation[0][l],
                        i.rotation[1][l],
                        i.rotation[2][l],
                        i.rows[0][l],
                        i.rows[1][l],
                    ];
                    let magnitudes = joint_impulse_of(p, l, &v);
                    // SAFETY: active joints are distinct.
                    unsafe {
                        stored.set(j, v);
                        last.set(j, magnitudes);
                    }
                }
            },
        );
        ctx.serial("write tree impulses", || self.trees.write_impulses(joints));
    }

    /// Position iterations (after integration), on the manifolds' local
    /// points (copied into the position prestep at setup) and the joints'
    /// definitions, with the same splits and packs as the velocity solve.
    /// A body whose corrected pose is non-finite keeps its pose from before
    /// the corrections and is flagged faulted (`quarantine.rs`); returns
    /// how many were.
    pub fn solve_positions(
        &mut self,
        ctx: &StepCtx,
        bodies: &mut Bodies,
        joints: &Joints,
        settings: &PhysicsSettings,
        dt: f32,
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
            let bodies: &Bodies = bodies;
            let trees = self.trees.view(&joints.active, self.zero_slot);
            let (refs, prestep, positions) =
                (&self.refs[..], &self.prestep[..], &self.positions[..]);
            let (joint_refs, joint_def, joint_prestep) = (
                &self.joint_refs[..],
                &self.joint_def[..],
                &self.joint_prestep[..],
            );
            let iterations = settings.position_iterations;
            let (width, simd) = (settings.solver_width, settings.simd.resolve());
            // One lane after another, joints first; the schedule gives each
            // range's slots and dynamic bodies to one worker at a time (as
            // in the velocity solve: same splits, barriers and islands).
            let lanes = |contacts: Range<usize>, joints: Range<usize>| {
                for s in joints {
                    let (b, l) = bundle_lane(s);
                    let (r, def) = (&joint_refs[b], &joint_def[b]);
                    if def.used[l] == 0.0 {
                        continue;
                    }
                    let (p, one) = (&joint_prestep[b], One(l));
                    // SAFETY: the slot's dynamic bodies are this worker's
                    // alone (the schedule).
                    unsafe {
                        let mut pose = one.gather_poses(&poses, &r.a, &r.b, &def.statics);
                        joint::position::solve_position(
                            one,
                            def,
                            p,
                            &mut pose,
                            settings.joint_baumgarte,
                        );
                        let m = &p.masses;
                        one.scatter_poses(&poses, &r.a, &r.b, &m.inv_mass_a, &m.inv_mass_b, pose);
                    }
                }
                for s in contacts {
                    let (b, l) = bundle_lane(s);
                    let p = &prestep[b];
                    if !lane_used(p, l) {
                        continue;
                    }
                    let (r, pp, one) = (&refs[b], &positions[b], One(l));
                    // SAFETY: the slot's dynamic bodies are this worker's
                    // alone (the schedule).
                    unsafe {
                        let mut pose = one.gather_poses(&poses, &r.a, &r.b, &pp.statics);
                        solve_position(one, p, pp, &mut pose, settings);
                        one.scatter_poses(&poses, &r.a, &r.b, &p.inv_mass_a, &p.inv_mass_b, pose);
                    }
                }
            };
            let bundles = |contacts: Range<usize>, joints: Range<usize>| {
                if width == SolverWidth::Scalar {
                    return lanes(contacts, joints);
                }
                let whole = |r: Range<usize>| r.start / LANES..r.end.div_ceil(LANES);
                // The bundles' lanes' dynamic bodies (distinct: one split
                // or colour) are this worker's alone (the schedule).
                if !joints.is_empty() {
                    let kernel = JointPositionBundles {
                        range: whole(joints),
                        refs: joint_refs,
                        defs: joint_def,
                        prestep: joint_prestep,
                        poses: &poses,
                        baumgarte: settings.joint_baumgarte,
                    };
                    dispatch(simd, kernel);
                }
                if !contacts.is_empty() {
                    let kernel = PositionBundles {
                        range: whole(contacts),
                        refs,
                        prestep,
                        positions,
                        poses: &poses,
                        settings,
                    };
                    dispatch(simd, kernel);
                }
            };
            self.position_schedule.run(
                ctx,
                "position batch",
                POSITION_SLOT_BYTES,
                |stage, contacts, joints| {
                    if stage.non_parallel {
                        lanes(contacts, joints)
                    } else {
                        bundles(contacts, joints)
                    }
                },
                |k| {
                    let pack = layout.packs[k];
                    let colours =
                        &layout.colour_ranges[pack.colours.0 as usize..pack.colours.1 as usize];
                    let range = |(a, b): (u32, u32)| a as usize..b as usize;
                    for _ in 0..iterations {
                        for c in colours {
                            bundles(range(c.contacts), range(c.joints));
                        }
                        lanes(range(pack.overflow.contacts), range(pack.overflow.joints));
                        // SAFETY: the pack's trees and bodies are this job's.
                        unsafe {
                            JointTrees::solve_positions(&trees, k, &poses, bodies, joints, dt)
                        };
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

/// A joint lane's impulses as the magnitudes users see: linear parts in
/// N·s, angular ones in N·m·s (an angular row's impulse times its
/// Jacobian's length: the swing row works on a cosine).
fn joint_impulse_of(p: &JointPrestep, l: usize, v: &[f32; JOINT_IMPULSES]) -> JointImpulse {
    let sq = |x: f32| x * x;
    let mut linear = sq(v[0]) + sq(v[1]) + sq(v[2]);
    let mut angular = sq(v[5]) + sq(v[6]) + sq(v[7]);
    if p.block.on[l] > 0.0 {
        let linear_block =
            p.block.n[0][0][l] != 0.0 || p.block.n[0][1][l] != 0.0 || p.block.n[0][2][l] != 0.0;
        if linear_block {
            linear += sq(v[3]) + sq(v[4]);
        } else {
            let len = |r: &parts::Row3| (sq(r[0][l]) + sq(r[1][l]) + sq(r[2][l])).sqrt();
            angular += sq(v[3] * len(&p.block.ja[0])) + sq(v[4] * len(&p.block.ja[1]));
        }
    }
    for (k, row) in p.rows.iter().enumerate() {
        let n = sq(row.n[0][l]) + sq(row.n[1][l]) + sq(row.n[2][l]);
        if n > 0.0 {
            linear += sq(v[8 + k]);
        } else {
            let ja = (sq(row.ja[0][l]) + sq(row.ja[1][l]) + sq(row.ja[2][l])).sqrt();
            angular += sq(v[8 + k] * ja);
        }
    }
    JointImpulse {
        linear: linear.sqrt(),
        angular: angular.sqrt(),
    }
}
