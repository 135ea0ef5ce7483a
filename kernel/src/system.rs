//! `PhysicsSystem`: the world, and the body interface in the spirit of
//! Jolt's `BodyInterface`. Every call validates its input first and writes
//! nothing unless all of it is valid.

use crate::body::{
    checked_position, checked_rotation, checked_velocity, validate_creation, Bodies,
    BodyCreationSettings, BodyId, MotionType,
};
use crate::broadphase::{AnyBroadPhase, BodyPair};
use crate::contact_cache::ContactCache;
use crate::error::{PhysicsError, Result};
use crate::islands::IslandBuilder;
use crate::math::{Quat, Vec3};
use crate::narrowphase::NarrowPhase;
use crate::settings::{Capacities, PhysicsSettings};
use crate::shape::Shape;
use crate::sleep::SleepScratch;
use crate::sleep::{put_island_to_sleep, reset_sleep_test, wake_island};
use crate::solver::Solver;
use crate::stats::StepStats;

/// The simulated world.
pub struct PhysicsSystem {
    pub(crate) settings: PhysicsSettings,
    pub(crate) capacities: Capacities,
    pub(crate) bodies: Bodies,
    pub(crate) broad: AnyBroadPhase,
    pub(crate) pairs: Vec<BodyPair>,
    pub(crate) narrow: NarrowPhase,
    pub(crate) cache: ContactCache,
    pub(crate) solver: Solver,
    pub(crate) joints: crate::joint::store::Joints,
    pub(crate) islands: IslandBuilder,
    pub(crate) sleep_scratch: SleepScratch,
    pub(crate) last_stats: StepStats,
    /// Record a trace of the next `update`.
    pub(crate) trace_armed: bool,
    /// The armed trace is a relayed one ([`PhysicsSystem::record_relayed_trace`]).
    pub(crate) trace_relayed: bool,
    /// Per-active-body results of the parallel body loops.
    pub(crate) body_scratch: Vec<crate::integrate::BodyScratch>,
    pub(crate) linear_casts: crate::ccd::LinearCasts,
    pub(crate) last_trace: Option<crate::trace::StepTrace>,
    /// An `update` panicked part-way: the state may be half-stepped.
    pub(crate) poisoned: bool,
    /// A panic to inject into the next `update` (test hook).
    pub(crate) injected_panic: Option<crate::jobs::InjectedPanic>,
    /// Bodies taken out of the simulation by the last `update` because
    /// their state became non-finite (see `quarantine.rs`).
    pub(crate) faulted: Vec<BodyId>,
    pub(crate) quarantine_scratch: Vec<u32>,
    /// Per slot: what user calls did to it since the last step's contacts
    /// were found (`since_step` bits), and the flagged slots.
    pub(crate) since_step: Vec<u8>,
    pub(crate) since_step_slots: Vec<u32>,
    /// Scene-query trees (`query/`).
    pub(crate) queries: crate::query::QueryTrees,
    pub(crate) events: crate::events::ContactEvents,
}

/// Marks of what user calls did to a body since the last step's contacts
/// were found.
pub(crate) mod since_step {
    /// Removed, destroyed or quarantined: its contacts are not reported.
    pub const TAKEN_OUT: u8 = 1;
    /// Put to sleep by `deactivate_body`: it may touch an awake body until
    /// the next step wakes it.
    pub const PUT_TO_SLEEP: u8 = 2;
}

/// One contact point as reported to users.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactPoint {
    /// World position (midway between the two surfaces) when found.
    pub position: Vec3,
    /// Negative when penetrating.
    pub separation: f32,
    /// Accumulated normal impulse of the last step (N·s).
    pub normal_impulse: f32,
}

/// A contact manifold between two bodies after the last step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    pub body_a: BodyId,
    pub body_b: BodyId,
    /// From A to B.
    pub normal: Vec3,
    pub is_sensor: bool,
    /// Friction impulse of the last step, applied at the centre of the
    /// points: along two tangents (N·s) and twist about the normal (N·m·s).
    pub friction_impulse: [f32; 3],
    /// Which part of A and of B the manifold's first point came from: a
    /// compound's child (its index in the order the children were given),
    /// a mesh's triangle (as [`RayHit::sub_shape`](crate::RayHit)) or a
    /// height field's; 0 for a whole shape. A pair touching through
    /// several parts with different normals (a table's top and a leg
    /// against a wall corner) reports one manifold per normal.
    pub sub_shapes: [u32; 2],
    points: [ContactPoint; crate::collide::MAX_POINTS],
    count: usize,
}

impl Contact {
    pub fn points(&self) -> &[ContactPoint] {
        &self.points[..self.count]
    }

    /// Sum of the points' normal impulses.
    pub fn total_normal_impulse(&self) -> f32 {
        self.points().iter().map(|p| p.normal_impulse).sum()
    }
}

impl PhysicsSystem {
    /// Creates an empty world. All buffers are allocated here, once.
    ///
    /// Refused: capacities or settings out of their ranges
    /// (`InvalidSettings`), and capacities whose buffers the allocator
    /// refuses (`OutOfMemory`: the whole estimate,
    /// [`Capacities::memory_bytes`], is reserved once and released before
    /// anything else is allocated, so a world far too big for the machine
    /// is refused instead of aborting the process).
    pub fn new(capacities: Capacities, settings: PhysicsSettings) -> Result<Self> {
        capacities.validate()?;
        settings.validate()?;
        let mut probe: Vec<u8> = Vec::new();
        probe
            .try_reserve_exact(capacities.memory_bytes())
            .map_err(|_| PhysicsError::OutOfMemory)?;
        drop(probe);
        Ok(Self {
            settings,
            capacities,
            bodies: Bodies::new(capacities.max_bodies),
            broad: AnyBroadPhase::new(
                &settings.broad_phase,
                capacities.max_bodies,
                capacities.max_body_pairs,
            )?,
            pairs: Vec::with_capacity(capacities.max_body_pairs),
            narrow: NarrowPhase::new(
                capacities.max_body_pairs,
                capacities.max_contact_constraints,
            ),
            cache: ContactCache::new(capacities.max_contact_constraints),
            solver: Solver::new(
                capacities.max_bodies,
                capacities.max_contact_constraints,
                capacities.max_joints,
            ),
            joints: crate::joint::store::Joints::new(capacities.max_joints, capacities.max_bodies),
            islands: IslandBuilder::new(
                capacities.max_bodies,
                capacities.max_contact_constraints + capacities.max_joints,
            ),
            sleep_scratch: SleepScratch::new(capacities.max_bodies),
            last_stats: StepStats::default(),
            trace_armed: false,
            trace_relayed: false,
            body_scratch: Vec::with_capacity(capacities.max_bodies),
            linear_casts: Default::default(),
            last_trace: None,
            poisoned: false,
            injected_panic: None,
            faulted: Vec::with_capacity(capacities.max_bodies),
            quarantine_scratch: Vec::with_capacity(capacities.max_bodies),
            since_step: vec![0; capacities.max_bodies],
            since_step_slots: Vec::with_capacity(capacities.max_bodies),
            queries: crate::query::QueryTrees::new(capacities.max_bodies),
            events: crate::events::ContactEvents::new(capacities.max_contact_constraints),
        })
    }

    pub fn settings(&self) -> &PhysicsSettings {
        &self.settings
    }

    /// Replaces the settings (validated; refused settings change nothing).
    pub fn set_settings(&mut self, settings: PhysicsSettings) -> Result<()> {
        settings.validate()?;
        if settings.broad_phase != self.settings.broad_phase {
            return Err(PhysicsError::InvalidSettings);
        }
        self.settings = settings;
        Ok(())
    }

    pub fn capacities(&self) -> &Capacities {
        &self.capacities
    }

    /// The instruction set the solver's bundles run on with the current
    /// settings on this CPU ([`PhysicsSettings::simd`] resolved; never
    /// `Auto`).
    pub fn simd_path(&self) -> crate::SimdPath {
        self.settings.simd.resolve()
    }

    /// Records a chrome trace of the next `update` (every phase and job on
    /// its worker's track); fetch it with [`take_trace`](Self::take_trace).
    /// Recording allocates and adds a little time per job, so leave it off
    /// when measuring.
    pub fn record_trace(&mut self) {
        self.trace_armed = true;
        self.trace_relayed = false;
    }

    /// Records a relayed trace of the next `update`
    /// ([`StepTrace::relayed`](crate::StepTrace::relayed)): on an executor
    /// with 2 workers or more, every parallel loop runs its jobs one at a
    /// time, each on the one of two workers whose home range holds it (as a
    /// 2-worker loop hands its jobs out before anyone steals), and the
    /// solver's schedule runs on one worker. The step's results are the
    /// same bits as any other's; only its time differs. Its job
    /// durations against a 1-thread trace's measure what data moving
    /// between cores costs each loop ([`Migration::measure`](crate::Migration::measure)),
    /// which a 1-thread trace cannot show and a parallel trace mixes with
    /// contention. A measuring tool: the step takes longer than a serial one.
    pub fn record_relayed_trace(&mut self) {
        self.trace_armed = true;
        self.trace_relayed = true;
    }

    /// The trace recorded by the last traced `update`, if any.
    pub fn take_trace(&mut self) -> Option<crate::trace::StepTrace> {
        self.last_trace.take()
    }

    /// Statistics of the last `update`.
    pub fn last_stats(&self) -> &StepStats {
        &self.last_stats
    }

    /// Bodies the last `update` took out of the simulation because their
    /// state became non-finite (see
    /// [`StepStats::bodies_faulted`](crate::StepStats::bodies_faulted)), in
    /// the order they were found. They are still created, at their last
    /// finite pose with zero velocity, and can be added again.
    pub fn faulted_bodies(&self) -> &[BodyId] {
        &self.faulted
    }

    /// Test hook (feature `test-hooks`, off by default): makes the `nth` run
    /// (from 0) of the job named `job` (a name in the chrome trace) panic
    /// during the next `update`, to check that a panicking job reaches the
    /// caller in bounded time on any pool instead of deadlocking its
    /// partners.
    #[cfg(feature = "test-hooks")]
    pub fn inject_job_panic(&mut self, job: &'static str, nth: usize) {
        self.injected_panic = Some(crate::jobs::InjectedPanic {
            job,
            nth,
            seen: std::sync::atomic::AtomicUsize::new(0),
        });
    }

    /// Test hook (feature `test-hooks`, off by default): overwrites an awake
    /// body's linear velocity with NaN, as a bug or a stray write would, to
    /// check that the step contains it (no public call can store a NaN).
    #[cfg(feature = "test-hooks")]
    pub fn corrupt_velocity_for_tests(&mut self, id: BodyId) -> Result<()> {
        let i = self.dynamic(id)?;
        if !self.bodies.is_active(i) {
            return Err(PhysicsError::BodyNotAdded);
        }
        self.bodies.linear_velocity.set(i, [f32::NAN, 0.0, 0.0]);
        Ok(())
    }

    // ---- creation and removal ----

    /// Creates a body (not yet simulated: see [`add_body`](Self::add_body)).
    pub fn create_body(&mut self, s: &BodyCreationSettings) -> Result<BodyId> {
        let v = validate_creation(
            s,
            self.settings.linear_damping,
            self.settings.angular_damping,
            &self.bodies.shapes,
        )?;
        let (index, generation) = self
            .bodies
            .slots
            .alloc()
            .map_err(|_| PhysicsError::BodyCapacityReached)?;
        self.bodies.write_new(index as usize, s, &v);
        Ok(BodyId::new(index, generation, self.bodies.world))
    }

    /// Puts a created body into the simulation. Wakes nobody.
    pub fn add_body(&mut self, id: BodyId) -> Result<()> {
        let i = self.bodies.check(id)?;
        if self.bodies.is_added(i) {
            return Err(PhysicsError::BodyAlreadyAdded);
        }
        self.add_slot(i);
        Ok(())
    }

    fn add_slot(&mut self, i: usize) {
        self.bodies
            .add(i, self.settings.speculative_contact_distance);
        self.broad.add(i as u32);
        self.queries.added(i as u32, self.bodies.motion(i));
        self.events.reporting += self.bodies.reports_contacts(i) as usize;
    }

    /// [`create_body`](Self::create_body) then [`add_body`](Self::add_body).
    pub fn create_and_add_body(&mut self, s: &BodyCreationSettings) -> Result<BodyId> {
        let id = self.create_body(s)?;
        self.add_slot(id.index() as usize);
        Ok(id)
    }

    /// Takes a body out of the simulation; it keeps its state and can be
    /// added again. Its contacts of the last step are no longer reported.
    pub fn remove_body(&mut self, id: BodyId) -> Result<()> {
        let i = self.bodies.check(id)?;
        if !self.bodies.is_added(i) {
            return Err(PhysicsError::BodyNotAdded);
        }
        self.take_out(i);
        Ok(())
    }

    /// Takes added slot `i` out of the simulation: bodies, broad phase,
    /// contact cache, and the last step's reported contacts.
    pub(crate) fn take_out(&mut self, i: usize) {
        self.bodies.remove(i);
        self.broad.remove(i as u32);
        self.queries.removed(i as u32);
        self.events.reporting -= self.bodies.reports_contacts(i) as usize;
        self.events.body_removed(i as u32, &self.bodies);
        self.cache.forget_body(i as u32);
        self.mark_since_step(i, since_step::TAKEN_OUT);
    }

    /// Notes what a user call did to slot `i` since the last step.
    fn mark_since_step(&mut self, i: usize, what: u8) {
        if self.since_step[i] == 0 {
            self.since_step_slots.push(i as u32);
        }
        self.since_step[i] |= what;
    }

    /// Forgets the marks of the calls before this step (its contacts are
    /// found anew).
    pub(crate) fn clear_since_step(&mut self) {
        for &i in &self.since_step_slots {
            self.since_step[i as usize] = 0;
        }
        self.since_step_slots.clear();
    }

    /// Whether neither body of a manifold of the last step got one of the
    /// `what` marks since.
    fn manifold_unmarked(&self, m: &crate::narrowphase::Manifold, what: u8) -> bool {
        (self.since_step[m.pair.a as usize] | self.since_step[m.pair.b as usize]) & what == 0
    }

    /// Frees a body's slot (removing it first if needed). Its id goes stale.
    /// Refused (`BodyHasJoints`) while joints use the body: remove them
    /// first ([`body_joints`](Self::body_joints) lists them).
    pub fn destroy_body(&mut self, id: BodyId) -> Result<()> {
        let i = self.bodies.check(id)?;
        if self.joints.per_body[i] > 0 {
            return Err(PhysicsError::BodyHasJoints);
        }
        if self.bodies.is_added(i) {
            self.take_out(i);
        }
        self.bodies.clear(i);
        // cannot fail: checked above
        let _ = self.bodies.slots.free(id.index(), id.generation());
        Ok(())
    }

    pub fn is_added(&self, id: BodyId) -> Result<bool> {
        let i = self.bodies.check(id)?;
        Ok(self.bodies.is_added(i))
    }

    /// Bodies created and not destroyed.
    pub fn num_bodies(&self) -> usize {
        self.bodies.slots.live_count()
    }

    /// Added, non-static bodies.
    pub fn num_active_bodies(&self) -> usize {
        self.bodies.active.len()
    }

    /// Ids of all added bodies, in slot order.
    pub fn body_ids(&self) -> Vec<BodyId> {
        let mut ids: Vec<BodyId> = self
            .bodies
            .added
            .iter()
            .map(|&i| self.bodies.id_of(i as usize))
            .collect();
        ids.sort();
        ids
    }

    // ---- queries ----

    pub fn position(&self, id: BodyId) -> Result<Vec3> {
        self.bodies.check(id).map(|i| self.bodies.pos(i))
    }
    pub fn rotation(&self, id: BodyId) -> Result<Quat> {
        self.bodies.check(id).map(|i| self.bodies.rot(i))
    }
    pub fn linear_velocity(&self, id: BodyId) -> Result<Vec3> {
        self.bodies.check(id).map(|i| self.bodies.lin_vel(i))
    }
    pub fn angular_velocity(&self, id: BodyId) -> Result<Vec3> {
        self.bodies.check(id).map(|i| self.bodies.ang_vel(i))
    }
    pub fn motion_type(&self, id: BodyId) -> Result<MotionType> {
        self.bodies.check(id).map(|i| self.bodies.motion(i))
    }
    /// The body's [`MotionQuality`](crate::MotionQuality).
    pub fn motion_quality(&self, id: BodyId) -> Result<crate::MotionQuality> {
        self.bodies.check(id).map(|i| {
            if self.bodies.is_linear_cast(i) {
                crate::MotionQuality::LinearCast
            } else {
                crate::MotionQuality::Discrete
            }
        })
    }
    /// Switches a body between discrete and continuous collision (Jolt's
    /// `SetMotionQuality`); takes effect from the next step. Any motion
    /// type may carry the setting, only dynamic bodies are swept.
    pub fn set_motion_quality(&mut self, id: BodyId, quality: crate::MotionQuality) -> Result<()> {
        let i = self.bodies.check(id)?;
        let f = self.bodies.flags[i] & !crate::body::flags::LINEAR_CAST;
        let f = match quality {
            crate::MotionQuality::LinearCast => f | crate::body::flags::LINEAR_CAST,
            crate::MotionQuality::Discrete => f,
        };
        self.bodies.set_flags(i, f);
        Ok(())
    }
    pub fn shape(&self, id: BodyId) -> Result<Shape> {
        self.bodies.check(id).map(|i| self.bodies.shape[i])
    }

    // ---- hulls ----

    /// Adds a convex hull to the world's store, moved into its principal
    /// frame (see [`HullShape::frame`](crate::HullShape::frame)), and
    /// returns the shape that names it; bodies made with that shape share
    /// the one copy. Hulls stay for the world's life.
    pub fn add_hull(&mut self, hull: &crate::ConvexHull) -> Result<Shape> {
        self.bodies
            .shapes
            .hulls
            .push(crate::HullShape::new(hull))
            .map(Shape::Hull)
            .ok_or(PhysicsError::HullCapacityReached)
    }

    /// The hull a [`Shape::Hull`] of this world names.
    pub fn hull(&self, id: crate::HullId) -> Option<&crate::HullShape> {
        self.bodies.shapes.hulls.get(id)
    }

    /// Every hull of the world, by id.
    pub fn hulls(&self) -> &crate::HullStore {
        &self.bodies.shapes.hulls
    }

    /// Keeps a triangle mesh in the world (moved in, built once: see
    /// [`TriangleMesh`](crate::TriangleMesh)) and returns the
    /// [`Shape::Mesh`] that names it, for static bodies. Refused
    /// (`ShapeCapacityReached`): the world holds
    /// [`MAX_SURFACES`](crate::MAX_SURFACES) meshes.
    pub fn add_mesh(&mut self, mesh: crate::TriangleMesh) -> Result<Shape> {
        self.bodies
            .shapes
            .push_mesh(mesh)
            .map(Shape::Mesh)
            .ok_or(PhysicsError::ShapeCapacityReached)
    }

    /// Keeps a height field in the world and returns the
    /// [`Shape::HeightField`] that names it, for static bodies. Refused
    /// (`ShapeCapacityReached`): the world holds
    /// [`MAX_SURFACES`](crate::MAX_SURFACES) height fields.
    pub fn add_heightfield(&mut self, field: crate::HeightField) -> Result<Shape> {
        self.bodies
            .shapes
            .push_heightfield(field)
            .map(Shape::HeightField)
            .ok_or(PhysicsError::ShapeCapacityReached)
    }

    /// Keeps a compound in the world and returns the [`Shape::Compound`]
    /// that names it, for bodies of any motion type. Build it with
    /// [`CompoundShape::new`](crate::CompoundShape::new) from this world's
    /// [`shapes`](Self::shapes). Refused: a child names a hull this world
    /// does not hold (`InvalidShape`: the compound was built against
    /// another world's shapes), or the world holds
    /// [`MAX_SURFACES`](crate::MAX_SURFACES) compounds
    /// (`ShapeCapacityReached`).
    pub fn add_compound(&mut self, compound: crate::CompoundShape) -> Result<Shape> {
        let store = &self.bodies.shapes;
        if compound
            .children
            .iter()
            .any(|c| c.shape.validate_in(store).is_err())
        {
            return Err(PhysicsError::InvalidShape);
        }
        self.bodies
            .shapes
            .push_compound(compound)
            .map(Shape::Compound)
            .ok_or(PhysicsError::ShapeCapacityReached)
    }

    /// Every stored shape of the world (hulls, compounds, meshes, height
    /// fields).
    pub fn shapes(&self) -> &crate::ShapeStore {
        &self.bodies.shapes
    }

    pub fn user_data(&self, id: BodyId) -> Result<u64> {
        self.bodies.check(id).map(|i| self.bodies.user_data[i])
    }
    /// Mass (kg); infinite for static and kinematic bodies.
    pub fn mass(&self, id: BodyId) -> Result<f32> {
        self.bodies.check(id).map(|i| {
            let im = self.bodies.inv_mass[i];
            if im > 0.0 {
                1.0 / im
            } else {
                f32::INFINITY
            }
        })
    }
    /// World AABB `(min, max)` as the broad phase sees it (moving bodies are
    /// inflated by the speculative contact distance). Empty if not added.
    pub fn world_aabb(&self, id: BodyId) -> Result<(Vec3, Vec3)> {
        self.bodies.check(id).map(|i| {
            (
                Vec3::from_array(self.bodies.aabb_min.get(i)),
                Vec3::from_array(self.bodies.aabb_max.get(i)),
            )
        })
    }

    // ---- setters ----

    fn refresh_placement(&mut self, i: usize) {
        self.bodies.update_world_inertia(i);
        if self.bodies.is_added(i) {
            let margin = if self.bodies.motion(i) == MotionType::Static {
                0.0
            } else {
                self.settings.speculative_contact_distance
            };
            self.bodies.update_aabb(i, margin);
            self.broad.moved(i as u32);
            self.queries.moved(i as u32, &self.bodies);
        }
    }

    /// Teleports a body.
    pub fn set_position(&mut self, id: BodyId, position: Vec3) -> Result<()> {
        let i = self.bodies.check(id)?;
        let p = checked_position(position)?;
        self.bodies.position.set(i, p.to_array());
        self.refresh_placement(i);
        Ok(())
    }

    /// Sets a rotation (normalised if within the tolerance, else refused).
    pub fn set_rotation(&mut self, id: BodyId, rotation: Quat) -> Result<()> {
        let i = self.bodies.check(id)?;
        let q = checked_rotation(rotation)?;
        self.bodies.rotation[i] = q.to_array();
        self.refresh_placement(i);
        Ok(())
    }

    fn moving(&self, id: BodyId) -> Result<usize> {
        let i = self.bodies.check(id)?;
        match self.bodies.motion(i) {
            MotionType::Static => Err(PhysicsError::WrongMotionType),
            _ => Ok(i),
        }
    }

    fn dynamic(&self, id: BodyId) -> Result<usize> {
        let i = self.bodies.check(id)?;
        match self.bodies.motion(i) {
            MotionType::Dynamic => Ok(i),
            _ => Err(PhysicsError::WrongMotionType),
        }
    }

    /// Activation by a user call (Jolt's `ActivateBody`): a sleeping body
    /// wakes with its whole island; an awake one restarts its sleep timer,
    /// so it cannot nap in the very next step.
    pub(crate) fn activate_slot(&mut self, i: usize) {
        if self.bodies.is_sleeping(i) {
            wake_island(&mut self.bodies, i);
        } else if self.bodies.is_active(i) {
            reset_sleep_test(&mut self.bodies, i);
        }
    }

    /// Sets the linear velocity of a dynamic or kinematic body; a non-zero
    /// velocity wakes it.
    pub fn set_linear_velocity(&mut self, id: BodyId, v: Vec3) -> Result<()> {
        let i = self.moving(id)?;
        let v = checked_velocity(v)?;
        if v != Vec3::ZERO {
            self.activate_slot(i);
        }
        self.bodies.linear_velocity.set(i, v.to_array());
        Ok(())
    }

    /// Sets the angular velocity of a dynamic or kinematic body; a non-zero
    /// velocity wakes it.
    pub fn set_angular_velocity(&mut self, id: BodyId, w: Vec3) -> Result<()> {
        let i = self.moving(id)?;
        let w = checked_velocity(w)?;
        if w != Vec3::ZERO {
            self.activate_slot(i);
        }
        self.bodies.angular_velocity.set(i, w.to_array());
        Ok(())
    }

    /// Adds a force (N) through the centre of mass for the next step.
    pub fn add_force(&mut self, id: BodyId, force: Vec3) -> Result<()> {
        let i = self.dynamic(id)?;
        let total = Vec3::from_array(self.bodies.force[i]) + force;
        if !force.is_finite() || !total.is_finite() {
            return Err(PhysicsError::InvalidForce);
        }
        self.bodies.force[i] = total.to_array();
        self.activate_slot(i);
        Ok(())
    }

    /// Adds a torque (N·m) for the next step.
    pub fn add_torque(&mut self, id: BodyId, torque: Vec3) -> Result<()> {
        let i = self.dynamic(id)?;
        let total = Vec3::from_array(self.bodies.torque[i]) + torque;
        if !torque.is_finite() || !total.is_finite() {
            return Err(PhysicsError::InvalidForce);
        }
        self.bodies.torque[i] = total.to_array();
        self.activate_slot(i);
        Ok(())
    }

    /// Applies an impulse (N·s) at the centre of mass, changing velocity now.
    pub fn add_impulse(&mut self, id: BodyId, impulse: Vec3) -> Result<()> {
        self.add_impulse_at(id, impulse, None)
    }

    /// Applies an impulse at a world point (or the centre of mass if `None`).
    pub fn add_impulse_at(&mut self, id: BodyId, impulse: Vec3, point: Option<Vec3>) -> Result<()> {
        let i = self.dynamic(id)?;
        if !impulse.is_finite() || !point.is_none_or(|p| p.is_finite()) {
            return Err(PhysicsError::InvalidForce);
        }
        let v = self.bodies.lin_vel(i) + impulse * self.bodies.inv_mass[i];
        let w = match point {
            Some(p) => {
                let r = p - self.bodies.pos(i);
                self.bodies.ang_vel(i) + self.bodies.inv_inertia(i) * r.cross(impulse)
            }
            None => self.bodies.ang_vel(i),
        };
        if !v.is_finite() || !w.is_finite() {
            return Err(PhysicsError::InvalidForce);
        }
        self.activate_slot(i);
        self.bodies.linear_velocity.set(i, v.to_array());
        self.bodies.angular_velocity.set(i, w.to_array());
        Ok(())
    }

    /// Applies an angular impulse (N·m·s).
    pub fn add_angular_impulse(&mut self, id: BodyId, impulse: Vec3) -> Result<()> {
        let i = self.dynamic(id)?;
        let w = self.bodies.ang_vel(i) + self.bodies.inv_inertia(i) * impulse;
        if !impulse.is_finite() || !w.is_finite() {
            return Err(PhysicsError::InvalidForce);
        }
        self.activate_slot(i);
        self.bodies.angular_velocity.set(i, w.to_array());
        Ok(())
    }

    /// Sets a kinematic body's velocities so that it reaches `position` and
    /// `rotation` after `dt` seconds (Jolt's `MoveKinematic`).
    pub fn move_kinematic(
        &mut self,
        id: BodyId,
        position: Vec3,
        rotation: Quat,
        dt: f32,
    ) -> Result<()> {
        let (i, v, w) = self.kinematic_velocities(id, position, rotation, dt)?;
        self.bodies.linear_velocity.set(i, v.to_array());
        self.bodies.angular_velocity.set(i, w.to_array());
        Ok(())
    }

    /// `move_kinematic`'s checks and velocities: (slot, linear, angular).
    pub(crate) fn kinematic_velocities(
        &self,
        id: BodyId,
        position: Vec3,
        rotation: Quat,
        dt: f32,
    ) -> Result<(usize, Vec3, Vec3)> {
        let i = self.bodies.check(id)?;
        if self.bodies.motion(i) != MotionType::Kinematic {
            return Err(PhysicsError::WrongMotionType);
        }
        let p = checked_position(position)?;
        let q = checked_rotation(rotation)?;
        if !(dt.is_finite() && dt > 0.0) {
            return Err(PhysicsError::InvalidTimeStep);
        }
        let v = (p - self.bodies.pos(i)) / dt;
        let mut dq = crate::math::quat_mul(q, self.bodies.rot(i).inverse());
        if dq.w < 0.0 {
            dq = -dq; // shortest arc
        }
        let (axis, angle) = dq.to_axis_angle();
        let w = axis * (angle / dt);
        Ok((i, checked_velocity(v)?, checked_velocity(w)?))
    }

    // ---- sleeping ----

    /// Whether the body is awake and simulated (added, non-static, not
    /// sleeping).
    pub fn is_active(&self, id: BodyId) -> Result<bool> {
        self.bodies.check(id).map(|i| self.bodies.is_active(i))
    }

    /// Whether the body is asleep.
    pub fn is_sleeping(&self, id: BodyId) -> Result<bool> {
        self.bodies.check(id).map(|i| self.bodies.is_sleeping(i))
    }

    /// Wakes a sleeping body together with its whole sleeping island, or
    /// restarts an awake body's sleep timer.
    pub fn activate_body(&mut self, id: BodyId) -> Result<()> {
        let i = self.moving(id)?;
        if !self.bodies.is_added(i) {
            return Err(PhysicsError::BodyNotAdded);
        }
        self.activate_slot(i);
        Ok(())
    }

    /// Puts one awake dynamic body to sleep now, as an island of its own
    /// (velocities become zero). If an awake body touches it, it wakes again
    /// in the next step.
    pub fn deactivate_body(&mut self, id: BodyId) -> Result<()> {
        let i = self.dynamic(id)?;
        if !self.bodies.is_added(i) {
            return Err(PhysicsError::BodyNotAdded);
        }
        if self.bodies.is_active(i) {
            put_island_to_sleep(&mut self.bodies, &[i as u32]);
            self.cache.forget_body(i as u32);
            self.mark_since_step(i, since_step::PUT_TO_SLEEP);
        }
        Ok(())
    }

    /// Wakes every sleeping island that has a body whose world AABB overlaps
    /// `[min, max]` and whose object layer is in `layer_mask` (bit `l` for
    /// layer `l`), e.g. around an explosion. Returns how many bodies woke.
    pub fn activate_bodies_in_aabb(
        &mut self,
        min: Vec3,
        max: Vec3,
        layer_mask: u32,
    ) -> Result<usize> {
        if !min.is_finite() || !max.is_finite() {
            return Err(PhysicsError::InvalidPosition);
        }
        // the candidates from the moving tree, woken in the order of the
        // added list as a scan of it would
        let mut found = std::mem::take(&mut self.queries.found);
        self.queries
            .sleepers_in(&self.bodies, min, max, layer_mask, &mut found);
        found.sort_unstable_by_key(|&i| self.bodies.added_pos[i as usize]);
        let mut woken = 0;
        for &i in &found {
            // an island woken by an earlier candidate wakes no more
            if self.bodies.is_sleeping(i as usize) {
                woken += wake_island(&mut self.bodies, i as usize) as usize;
            }
        }
        self.queries.found = found;
        Ok(woken)
    }

    /// Checks the sleeping invariants: no sleeping body moves, every sleeping
    /// island is asleep as a whole (its ring holds only sleeping bodies), no
    /// contact of the last step joins an awake dynamic body to a sleeping one
    /// (which would be a half-asleep island; a body `deactivate_body` put to
    /// sleep since the step is excepted, the next step wakes it if it is
    /// touched), and the ring count matches.
    /// `update` asserts this in debug builds; tests call it too.
    pub fn check_sleep_invariants(&self) -> core::result::Result<(), String> {
        let b = &self.bodies;
        let mut rings = 0usize;
        for &i in &b.added {
            let i = i as usize;
            if !b.is_sleeping(i) {
                continue;
            }
            if b.lin_vel(i) != Vec3::ZERO || b.ang_vel(i) != Vec3::ZERO {
                return Err(format!("sleeping body {i} has non-zero velocity"));
            }
            if b.is_active(i) {
                return Err(format!("sleeping body {i} is in the active list"));
            }
            // walk the ring; count each ring once, at its lowest slot
            let mut k = b.sleep_next[i] as usize;
            let mut lowest = i;
            let mut steps = 0;
            while k != i {
                if !b.is_sleeping(k) {
                    return Err(format!("body {k} is awake in the sleeping island of {i}"));
                }
                lowest = lowest.min(k);
                k = b.sleep_next[k] as usize;
                steps += 1;
                if steps > b.added.len() {
                    return Err(format!("the sleeping ring of {i} does not close"));
                }
            }
            if lowest == i {
                rings += 1;
            }
        }
        if rings != b.sleeping_islands {
            return Err(format!(
                "{rings} sleeping rings, {} counted",
                b.sleeping_islands
            ));
        }
        let awake_dynamic = |i: usize| b.is_active(i) && b.motion(i) == MotionType::Dynamic;
        // A body the user put to sleep since the step may still touch an
        // awake one (it wakes at the next step); a removed one is gone.
        let unmarked = since_step::TAKEN_OUT | since_step::PUT_TO_SLEEP;
        let live = self
            .narrow
            .manifolds
            .iter()
            .filter(|m| !m.sensor && self.manifold_unmarked(m, unmarked));
        for m in live {
            let (x, y) = (m.pair.a as usize, m.pair.b as usize);
            if (b.is_sleeping(x) && awake_dynamic(y)) || (b.is_sleeping(y) && awake_dynamic(x)) {
                return Err(format!(
                    "contact {x}-{y} joins an awake body to a sleeping one"
                ));
            }
        }
        Ok(())
    }

    // ---- broad phase ----

    /// Adds an MBP region; returns its id (worlds of
    /// [`BroadPhaseKind::Mbp`](crate::BroadPhaseKind::Mbp) only: a fitted
    /// grid and `Auto` place their own).
    pub fn add_broad_phase_region(&mut self, min: Vec3, max: Vec3) -> Result<u32> {
        match &mut self.broad {
            AnyBroadPhase::Mbp(m) if !m.is_fitted() => m.add_region(min, max),
            _ => Err(PhysicsError::InvalidBroadPhaseRegions),
        }
    }

    /// Removes an MBP region by id (MBP worlds only).
    pub fn remove_broad_phase_region(&mut self, id: u32) -> Result<()> {
        match &mut self.broad {
            AnyBroadPhase::Mbp(m) if !m.is_fitted() => m.remove_region(id),
            _ => Err(PhysicsError::InvalidBroadPhaseRegions),
        }
    }

    /// Runs only the broad phase on the current state (applying queued
    /// additions, removals and moves, then reporting pairs) and returns the
    /// number of candidate pairs. For benchmarks and tools: `update` runs
    /// it as part of every step. Runs on the calling thread alone (it
    /// starts no thread and touches no rayon pool).
    pub fn update_broad_phase(&mut self) -> usize {
        let ctx = crate::jobs::StepCtx::untraced();
        self.broad.update(&ctx, &self.bodies);
        let max = self.capacities.max_body_pairs;
        self.broad.report(
            &crate::jobs::StepCtx::untraced(),
            &self.bodies,
            &self.settings.layer_filter,
            &mut self.pairs,
            max,
        );
        self.pairs.len()
    }

    /// Bodies outside every MBP region at the last update (empty for other
    /// broad phases). They are still collided, by brute force.
    pub fn out_of_bounds_bodies(&self) -> Vec<BodyId> {
        self.broad.mbp().map_or_else(Vec::new, |m| {
            m.out_of_bounds()
                .iter()
                .map(|&i| self.bodies.id_of(i as usize))
                .collect()
        })
    }

    // ---- results ----

    /// The touching contact manifolds of the last step, in body-pair order,
    /// without those of bodies removed or destroyed since.
    pub fn contacts(&self) -> impl Iterator<Item = Contact> + '_ {
        let live = self
            .narrow
            .manifolds
            .iter()
            .filter(|m| self.manifold_unmarked(m, since_step::TAKEN_OUT));
        live.map(move |m| {
            let (a, b) = (m.pair.a as usize, m.pair.b as usize);
            let (xa, qa) = (self.bodies.pos(a), self.bodies.rot(a));
            let mut c = Contact {
                body_a: self.bodies.id_of(a),
                body_b: self.bodies.id_of(b),
                normal: m.normal,
                is_sensor: m.sensor,
                friction_impulse: m.friction_impulse,
                sub_shapes: m.sub,
                points: [ContactPoint {
                    position: Vec3::ZERO,
                    separation: 0.0,
                    normal_impulse: 0.0,
                }; crate::collide::MAX_POINTS],
                count: m.count as usize,
            };
            for k in 0..c.count {
                c.points[k] = ContactPoint {
                    position: xa
                        + crate::math::rotate(qa, m.local_a[k])
                        + m.normal * (0.5 * m.separation[k]),
                    separation: m.separation[k],
                    normal_impulse: m.normal_impulse[k],
                };
            }
            c
        })
    }

    /// The contact and sensor events of the last `update` (see
    /// [`ContactEvent`]): first the removals made by calls before it (a
    /// body removed, destroyed or quarantined), then per collision step
    /// the additions and removals in body-pair order. The same on any
    /// number of workers.
    pub fn contact_events(&self) -> &[crate::events::ContactEvent] {
        self.events.events()
    }

    /// FNV-1a 64 over every added body's slot index, position, rotation and
    /// linear and angular velocity bits, in slot order, then every joint's
    /// slot index, definition (bodies, frames, kind, limits, motor) and
    /// accumulated impulses (what the next step warm-starts from), in slot
    /// order. Equal hashes mean bit-identical states.
    pub fn state_hash(&self) -> u64 {
        const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
        const PRIME: u64 = 0x0000_0100_0000_01b3;
        let mut h = OFFSET;
        let mut eat = |bytes: &[u8]| {
            for &b in bytes {
                h ^= b as u64;
                h = h.wrapping_mul(PRIME);
            }
        };
        let b = &self.bodies;
        for i in 0..b.slots.high_water() {
            if !b.is_added(i) {
                continue;
            }
            eat(&(i as u32).to_le_bytes());
            let mut fields = [0f32; 13];
            fields[0..3].copy_from_slice(&b.position.get(i));
            fields[3..7].copy_from_slice(&b.rotation[i]);
            fields[7..10].copy_from_slice(&b.linear_velocity.get(i));
            fields[10..13].copy_from_slice(&b.angular_velocity.get(i));
            eat(bytemuck::cast_slice(&fields));
        }
        let j = &self.joints;
        for i in j.live() {
            eat(&(i as u32).to_le_bytes());
            eat(bytemuck::bytes_of(&j.data[i]));
            eat(bytemuck::cast_slice(&j.impulses[i]));
        }
        h
    }
}
