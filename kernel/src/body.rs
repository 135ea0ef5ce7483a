//! Bodies: the creation settings users fill in, and the structure-of-arrays
//! storage the step reads.

use crate::error::{PhysicsError, Result};
use crate::limits::{MAX_FRICTION, MAX_GRAVITY_FACTOR, MAX_MASS, MIN_MASS};
use crate::math::{world_inverse_inertia, Mat3, Quat, Vec3};
use crate::shape::Shape;
use crate::shape_store::ShapeStore;
use archipelago_layout::{Column, SlotAllocator, Vec3Column};

/// Handle to a body: slot index, generation and the world that issued it.
///
/// A handle to a destroyed body stays invalid even after its slot is reused
/// (the generation moved on), and a handle from another
/// [`PhysicsSystem`](crate::PhysicsSystem) is refused by this one (the world
/// tag differs), so an id can never silently name an unrelated body. Ids
/// order by slot index first. World tags are handed out in creation order
/// within a process, so id values (not the bodies they name) differ between
/// runs that create worlds in a different order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyId {
    index: u32,
    generation: u32,
    world: u32,
}

impl BodyId {
    pub(crate) const fn new(index: u32, generation: u32, world: u32) -> Self {
        Self {
            index,
            generation,
            world,
        }
    }

    /// Rebuilds an id from [`to_raw`](Self::to_raw)'s parts, for embedding
    /// layers that store ids as plain integers. A forged id names no body:
    /// every call refuses it with `InvalidBodyId`.
    pub const fn from_raw(raw: [u32; 3]) -> Self {
        Self::new(raw[0], raw[1], raw[2])
    }

    /// `[index, generation, world]`.
    pub const fn to_raw(self) -> [u32; 3] {
        [self.index, self.generation, self.world]
    }

    /// Slot index (stable for the body's life; reused after it is destroyed).
    pub const fn index(self) -> u32 {
        self.index
    }

    /// How many times the slot was freed before this body took it.
    pub const fn generation(self) -> u32 {
        self.generation
    }
}

/// How a body moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MotionType {
    /// Never moves; infinite mass.
    Static = 0,
    /// Moved by its velocity only (set by the user, e.g. through
    /// [`PhysicsSystem::move_kinematic`](crate::PhysicsSystem::move_kinematic));
    /// infinite mass, pushes dynamic bodies.
    Kinematic = 1,
    /// Moved by forces and contacts.
    Dynamic = 2,
}

/// How the step keeps a fast body from passing through thin static bodies
/// (Jolt's `EMotionQuality`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MotionQuality {
    /// Moved by its velocity and collided where it lands: a body that moves
    /// more than its own thickness plus a wall's in one step can pass the
    /// wall (a 0.1 m sphere at 50 m/s moves 0.83 m per 1/60 s step).
    #[default]
    Discrete,
    /// Continuous collision for a dynamic body: in a step where it would
    /// move more than
    /// [`linear_cast_threshold`](crate::PhysicsSettings::linear_cast_threshold)
    /// of its inner radius, its shape is swept along the motion against the
    /// world's static bodies and the body stops where it would first sink
    /// [`linear_cast_max_penetration`](crate::PhysicsSettings::linear_cast_max_penetration)
    /// of its inner radius into one; the contact there is found and solved
    /// by the next step. Rotation is not swept (a long body spinning fast
    /// can still clip a corner), and moving bodies are not cast against
    /// (their discrete contacts stop slower bullets). Costs one shape cast
    /// per such body per step; a body moving less costs a flag test.
    LinearCast,
}

/// How a dynamic body's mass is given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MassSpec {
    /// kg/m³; mass and inertia follow from the shape's volume.
    Density(f32),
    /// kg; inertia is that of the shape at uniform density.
    Mass(f32),
}

/// Object layers are `0..MAX_OBJECT_LAYERS`, so a `u32` mask selects any set.
pub const MAX_OBJECT_LAYERS: u8 = 32;

/// Rotations further than this from unit length are refused as caller bugs;
/// closer ones are renormalised (rounding from user math).
pub const ROTATION_NORM_TOLERANCE: f32 = 1e-3;

/// Everything needed to create a body. Build with [`BodyCreationSettings::new`]
/// and the `with_*` methods; unset fields take Jolt's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyCreationSettings {
    pub shape: Shape,
    pub position: Vec3,
    pub rotation: Quat,
    pub linear_velocity: Vec3,
    pub angular_velocity: Vec3,
    pub motion_type: MotionType,
    pub mass: MassSpec,
    pub friction: f32,
    pub restitution: f32,
    /// `None`: the world's [`PhysicsSettings::linear_damping`](crate::PhysicsSettings).
    pub linear_damping: Option<f32>,
    pub angular_damping: Option<f32>,
    pub gravity_factor: f32,
    pub allow_sleeping: bool,
    /// Continuous collision for fast bodies (dynamic ones only; ignored
    /// for static and kinematic bodies). Default `Discrete`.
    pub motion_quality: MotionQuality,
    /// Sensors detect overlaps but exert no contact forces.
    pub is_sensor: bool,
    /// Report this body's contacts as
    /// [`ContactEvent`](crate::ContactEvent)s (a pair reports when either
    /// body does). Off by default: bodies nobody listens to cost nothing.
    pub contact_events: bool,
    /// Object layer, `0..MAX_OBJECT_LAYERS`; used by layer masks such as
    /// [`PhysicsSystem::activate_bodies_in_aabb`](crate::PhysicsSystem::activate_bodies_in_aabb).
    pub object_layer: u8,
    /// Free for the embedding engine.
    pub user_data: u64,
}

impl BodyCreationSettings {
    pub fn new(shape: Shape, position: Vec3, motion_type: MotionType) -> Self {
        Self {
            shape,
            position,
            rotation: Quat::IDENTITY,
            linear_velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
            motion_type,
            mass: MassSpec::Density(1000.0),
            friction: 0.2,
            restitution: 0.0,
            linear_damping: None,
            angular_damping: None,
            gravity_factor: 1.0,
            allow_sleeping: true,
            motion_quality: MotionQuality::Discrete,
            is_sensor: false,
            contact_events: false,
            object_layer: 0,
            user_data: 0,
        }
    }

    pub fn with_position(mut self, position: Vec3) -> Self {
        self.position = position;
        self
    }
    pub fn with_rotation(mut self, rotation: Quat) -> Self {
        self.rotation = rotation;
        self
    }
    pub fn with_linear_velocity(mut self, v: Vec3) -> Self {
        self.linear_velocity = v;
        self
    }
    pub fn with_angular_velocity(mut self, w: Vec3) -> Self {
        self.angular_velocity = w;
        self
    }
    pub fn with_density(mut self, density: f32) -> Self {
        self.mass = MassSpec::Density(density);
        self
    }
    pub fn with_mass(mut self, mass: f32) -> Self {
        self.mass = MassSpec::Mass(mass);
        self
    }
    pub fn with_friction(mut self, friction: f32) -> Self {
        self.friction = friction;
        self
    }
    pub fn with_restitution(mut self, restitution: f32) -> Self {
        self.restitution = restitution;
        self
    }
    pub fn with_damping(mut self, linear: f32, angular: f32) -> Self {
        self.linear_damping = Some(linear);
        self.angular_damping = Some(angular);
        self
    }
    pub fn with_gravity_factor(mut self, factor: f32) -> Self {
        self.gravity_factor = factor;
        self
    }
    pub fn with_allow_sleeping(mut self, allow: bool) -> Self {
        self.allow_sleeping = allow;
        self
    }
    pub fn with_motion_quality(mut self, quality: MotionQuality) -> Self {
        self.motion_quality = quality;
        self
    }
    pub fn with_sensor(mut self, is_sensor: bool) -> Self {
        self.is_sensor = is_sensor;
        self
    }
    pub fn with_contact_events(mut self, report: bool) -> Self {
        self.contact_events = report;
        self
    }

    pub fn with_object_layer(mut self, layer: u8) -> Self {
        self.object_layer = layer;
        self
    }
    pub fn with_user_data(mut self, user_data: u64) -> Self {
        self.user_data = user_data;
        self
    }
}

/// Checks a rotation and returns it normalised (see [`ROTATION_NORM_TOLERANCE`]).
pub(crate) fn checked_rotation(q: Quat) -> Result<Quat> {
    if !q.is_finite() || (q.length() - 1.0).abs() > ROTATION_NORM_TOLERANCE {
        return Err(PhysicsError::InvalidRotation);
    }
    Ok(q.normalize())
}

/// A body position (or kinematic target): finite and within
/// [`MAX_COORDINATE`](crate::MAX_COORDINATE).
pub(crate) fn checked_position(p: Vec3) -> Result<Vec3> {
    crate::limits::position_ok(p)
        .then_some(p)
        .ok_or(PhysicsError::InvalidPosition)
}

pub(crate) fn checked_velocity(v: Vec3) -> Result<Vec3> {
    v.is_finite()
        .then_some(v)
        .ok_or(PhysicsError::InvalidVelocity)
}

/// Derived, validated per-body values, computed before anything is written so
/// a refused body leaves no trace.
pub(crate) struct ValidatedBody {
    pub rotation: Quat,
    pub inv_mass: f32,
    pub inv_inertia: Vec3,
    pub linear_damping: f32,
    pub angular_damping: f32,
}

pub(crate) fn validate_creation(
    s: &BodyCreationSettings,
    default_linear_damping: f32,
    default_angular_damping: f32,
    hulls: &crate::shape_store::ShapeStore,
) -> Result<ValidatedBody> {
    s.shape.validate_in(hulls)?;
    if s.shape.is_surface() && s.motion_type != MotionType::Static {
        return Err(PhysicsError::SurfaceNotStatic);
    }
    if s.object_layer >= MAX_OBJECT_LAYERS {
        return Err(PhysicsError::InvalidLayer);
    }
    checked_position(s.position)?;
    let rotation = checked_rotation(s.rotation)?;
    checked_velocity(s.linear_velocity)?;
    checked_velocity(s.angular_velocity)?;
    let finite_nonneg = |v: f32| v.is_finite() && v >= 0.0;
    let linear_damping = s.linear_damping.unwrap_or(default_linear_damping);
    let angular_damping = s.angular_damping.unwrap_or(default_angular_damping);
    let material_ok = (0.0..=MAX_FRICTION).contains(&s.friction)
        && (0.0..=1.0).contains(&s.restitution)
        && finite_nonneg(linear_damping)
        && finite_nonneg(angular_damping)
        && s.gravity_factor.abs() <= MAX_GRAVITY_FACTOR;
    if !material_ok {
        return Err(PhysicsError::InvalidMaterial);
    }
    let (mass, inertia) = match s.mass {
        // a surface is static: its mass is never used
        _ if s.shape.is_surface() => (0.0, Vec3::ZERO),
        MassSpec::Density(d) if d.is_finite() && d > 0.0 => s.shape.mass_properties(d, hulls),
        MassSpec::Mass(m) if m.is_finite() && m > 0.0 => (m, s.shape.inertia_for_mass(m, hulls)),
        _ => return Err(PhysicsError::InvalidMass),
    };
    let (inv_mass, inv_inertia) = if s.motion_type == MotionType::Dynamic {
        let (inv_mass, inv_inertia) = (1.0 / mass, inertia.recip());
        // A density so small that mass or inertia underflow and their
        // inverses overflow, or so large that they overflow.
        let ok = (MIN_MASS..=MAX_MASS).contains(&mass)
            && inv_mass.is_finite()
            && inertia.min_element() > 0.0
            && inertia.is_finite()
            && inv_inertia.is_finite();
        if !ok {
            return Err(PhysicsError::InvalidMass);
        }
        (inv_mass, inv_inertia)
    } else {
        (0.0, Vec3::ZERO)
    };
    Ok(ValidatedBody {
        rotation,
        inv_mass,
        inv_inertia,
        linear_damping,
        angular_damping,
    })
}

/// Per-body flag bits.
pub(crate) mod flags {
    pub const ADDED: u8 = 1;
    pub const SENSOR: u8 = 2;
    pub const ALLOW_SLEEPING: u8 = 4;
    /// Asleep: out of the active list, velocities exactly zero.
    pub const SLEEPING: u8 = 8;
    /// Its contacts are reported as events.
    pub const CONTACT_EVENTS: u8 = 16;
    /// [`MotionQuality::LinearCast`](super::MotionQuality::LinearCast).
    pub const LINEAR_CAST: u8 = 32;
    /// One past the highest flag (what a snapshot may hold).
    pub const END: u8 = 64;
}

/// Marker for "not in this list".
pub(crate) const NOT_LISTED: u32 = u32::MAX;

/// All body state as structure-of-arrays columns indexed by slot. Hot solver
/// data (velocities, inverse mass and inertia) lives in its own columns, apart
/// from cold data (shape, material, user data).
pub(crate) struct Bodies {
    pub slots: SlotAllocator,
    /// This world's tag, carried by every id it issues.
    pub world: u32,
    // hot: integration and solver
    pub position: Vec3Column,
    pub rotation: Column<[f32; 4]>,
    pub linear_velocity: Vec3Column,
    pub angular_velocity: Vec3Column,
    pub inv_mass: Column<f32>,
    pub inv_inertia_local: Column<[f32; 3]>,
    pub inv_inertia_world: Column<[f32; 9]>,
    /// Gravity factor for added dynamic bodies, 0 elsewhere: the SIMD gravity
    /// sweep multiplies by it.
    pub gravity_scale: Column<f32>,
    /// 1 for added non-static bodies, 0 elsewhere: the SIMD position sweep
    /// multiplies by it.
    pub move_scale: Column<f32>,
    pub force: Column<[f32; 3]>,
    pub torque: Column<[f32; 3]>,
    pub gravity_factor: Column<f32>,
    // sleeping: seconds the body has been still, and the bounding spheres
    // (centre xyz, radius) of its three sleep test points
    pub sleep_timer: Column<f32>,
    pub sleep_spheres: Column<[[f32; 4]; 3]>,
    /// Sleeping bodies of one island form a ring through this column, so
    /// waking any of them wakes all of them; `NOT_LISTED` when awake.
    pub sleep_next: Vec<u32>,
    /// Number of sleeping islands (rings).
    pub sleeping_islands: usize,
    /// Set by the step on an awake body whose state became non-finite; the
    /// quarantine takes it out at the end of the collision step.
    pub faulted: Vec<bool>,
    // broad phase: world AABBs, empty (min +inf, max -inf) for unused slots
    pub aabb_min: Vec3Column,
    pub aabb_max: Vec3Column,
    // cold
    pub motion_type: Column<u8>,
    pub flags: Column<u8>,
    /// Slots whose flags carry [`flags::LINEAR_CAST`] (so a world without
    /// such a body skips the continuous-collision pass outright); kept by
    /// [`set_flags`](Self::set_flags).
    pub linear_cast_bodies: u32,
    pub friction: Column<f32>,
    pub restitution: Column<f32>,
    pub linear_damping: Column<f32>,
    pub angular_damping: Column<f32>,
    pub user_data: Column<u64>,
    pub object_layer: Column<u8>,
    pub shape: Vec<Shape>,
    /// The hulls [`Shape::Hull`]s name (append-only, shared by id).
    pub shapes: ShapeStore,
    /// The shape's [bounding radius](Shape::bounding_radius) (m), kept
    /// beside it for the narrow phase's first test of every pair.
    pub bounding_radius: Vec<f32>,
    /// Slots of added bodies, and each slot's place in it.
    pub added: Vec<u32>,
    pub added_pos: Vec<u32>,
    /// Slots of added, non-static bodies (Jolt's active-body array), and each
    /// slot's place in it.
    pub active: Vec<u32>,
    /// `active`'s ids, kept beside it (what `active_bodies` returns).
    pub active_ids: Vec<BodyId>,
    pub active_pos: Vec<u32>,
}

const EMPTY_MIN: [f32; 3] = [f32::INFINITY; 3];
const EMPTY_MAX: [f32; 3] = [f32::NEG_INFINITY; 3];
pub(crate) const PLACEHOLDER_SHAPE: Shape = Shape::Sphere { radius: 1.0 };

impl Bodies {
    pub fn new(capacity: usize) -> Self {
        // Tags count worlds created in this process (0 is never issued, so
        // a zeroed id is always foreign).
        static NEXT_WORLD: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        let world = NEXT_WORLD.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Self {
            slots: SlotAllocator::new(capacity),
            world: world.max(1),
            position: Vec3Column::new(capacity, [0.0; 3]),
            rotation: Column::new(capacity, [0.0, 0.0, 0.0, 1.0]),
            linear_velocity: Vec3Column::new(capacity, [0.0; 3]),
            angular_velocity: Vec3Column::new(capacity, [0.0; 3]),
            inv_mass: Column::new(capacity, 0.0),
            inv_inertia_local: Column::new(capacity, [0.0; 3]),
            inv_inertia_world: Column::new(capacity, [0.0; 9]),
            gravity_scale: Column::new(capacity, 0.0),
            move_scale: Column::new(capacity, 0.0),
            force: Column::new(capacity, [0.0; 3]),
            torque: Column::new(capacity, [0.0; 3]),
            gravity_factor: Column::new(capacity, 0.0),
            sleep_timer: Column::new(capacity, 0.0),
            sleep_spheres: Column::new(capacity, [[0.0; 4]; 3]),
            sleep_next: vec![NOT_LISTED; capacity],
            sleeping_islands: 0,
            faulted: vec![false; capacity],
            aabb_min: Vec3Column::new(capacity, EMPTY_MIN),
            aabb_max: Vec3Column::new(capacity, EMPTY_MAX),
            motion_type: Column::new(capacity, MotionType::Static as u8),
            flags: Column::new(capacity, 0),
            linear_cast_bodies: 0,
            friction: Column::new(capacity, 0.0),
            restitution: Column::new(capacity, 0.0),
            linear_damping: Column::new(capacity, 0.0),
            angular_damping: Column::new(capacity, 0.0),
            user_data: Column::new(capacity, 0),
            object_layer: Column::new(capacity, 0),
            shape: vec![PLACEHOLDER_SHAPE; capacity],
            shapes: ShapeStore::new(),
            bounding_radius: vec![0.0; capacity],
            added: Vec::with_capacity(capacity),
            added_pos: vec![NOT_LISTED; capacity],
            active: Vec::with_capacity(capacity),
            active_pos: vec![NOT_LISTED; capacity],
            active_ids: Vec::with_capacity(capacity),
        }
    }

    /// The slot of a live body of this world, or `InvalidBodyId`.
    pub fn check(&self, id: BodyId) -> Result<usize> {
        if id.world != self.world {
            return Err(PhysicsError::InvalidBodyId);
        }
        self.slots
            .validate(id.index(), id.generation())
            .map(|_| id.index() as usize)
            .map_err(|_| PhysicsError::InvalidBodyId)
    }

    pub fn id_of(&self, i: usize) -> BodyId {
        // generation lookup: a live slot's current generation
        BodyId::new(i as u32, self.generation_of(i), self.world)
    }

    fn generation_of(&self, i: usize) -> u32 {
        self.slots.generation(i)
    }

    #[inline]
    pub fn pos(&self, i: usize) -> Vec3 {
        Vec3::from_array(self.position.get(i))
    }
    #[inline]
    pub fn rot(&self, i: usize) -> Quat {
        Quat::from_array(self.rotation[i])
    }
    #[inline]
    pub fn lin_vel(&self, i: usize) -> Vec3 {
        Vec3::from_array(self.linear_velocity.get(i))
    }
    #[inline]
    pub fn ang_vel(&self, i: usize) -> Vec3 {
        Vec3::from_array(self.angular_velocity.get(i))
    }
    #[inline]
    pub fn inv_inertia(&self, i: usize) -> Mat3 {
        Mat3::from_cols_array(&self.inv_inertia_world[i])
    }
    #[inline]
    pub fn motion(&self, i: usize) -> MotionType {
        match self.motion_type[i] {
            2 => MotionType::Dynamic,
            1 => MotionType::Kinematic,
            _ => MotionType::Static,
        }
    }
    #[inline]
    pub fn is_added(&self, i: usize) -> bool {
        self.flags[i] & flags::ADDED != 0
    }
    #[inline]
    pub fn is_sensor(&self, i: usize) -> bool {
        self.flags[i] & flags::SENSOR != 0
    }
    #[inline]
    pub fn reports_contacts(&self, i: usize) -> bool {
        self.flags[i] & flags::CONTACT_EVENTS != 0
    }
    /// Writes slot `i`'s flags, keeping the linear-cast count.
    pub fn set_flags(&mut self, i: usize, f: u8) {
        let cast = |f: u8| (f & flags::LINEAR_CAST != 0) as u32;
        self.linear_cast_bodies = self.linear_cast_bodies - cast(self.flags[i]) + cast(f);
        self.flags[i] = f;
    }

    /// Counts the linear-cast slots anew (after a snapshot wrote the flag
    /// column whole).
    pub fn recount_linear_casts(&mut self) {
        let n = self.slots.high_water();
        self.linear_cast_bodies = self.flags.as_slice()[..n]
            .iter()
            .filter(|&&f| f & flags::LINEAR_CAST != 0)
            .count() as u32;
    }

    #[inline]
    pub fn is_linear_cast(&self, i: usize) -> bool {
        self.flags[i] & flags::LINEAR_CAST != 0
    }
    #[inline]
    pub fn is_sleeping(&self, i: usize) -> bool {
        self.flags[i] & flags::SLEEPING != 0
    }
    /// In the active list (added, non-static, awake).
    #[inline]
    pub fn is_active(&self, i: usize) -> bool {
        self.active_pos[i] != NOT_LISTED
    }

    /// The AABB columns as SIMD lanes (padded with empty boxes to whole
    /// lanes, so a lane load at any slot below the padded length is safe).
    pub fn aabb_lanes(&self) -> archipelago_simd::AabbLanes<'_> {
        let (min_x, min_y, min_z) = self.aabb_min.slices();
        let (max_x, max_y, max_z) = self.aabb_max.slices();
        archipelago_simd::AabbLanes {
            min_x,
            min_y,
            min_z,
            max_x,
            max_y,
            max_z,
        }
    }

    /// The world inverse inertia for the current rotation.
    pub fn world_inertia_of(&self, i: usize) -> [f32; 9] {
        let inv = Vec3::from_array(self.inv_inertia_local[i]);
        world_inverse_inertia(self.rot(i), inv).to_cols_array()
    }

    /// The world AABB for the current pose, inflated by `margin`.
    pub fn aabb_of(&self, i: usize, margin: f32) -> (Vec3, Vec3) {
        let (lo, hi) = self.shape[i].world_aabb(self.pos(i), self.rot(i), &self.shapes);
        (lo - Vec3::splat(margin), hi + Vec3::splat(margin))
    }

    /// Recomputes the world inverse inertia from the rotation.
    pub fn update_world_inertia(&mut self, i: usize) {
        self.inv_inertia_world[i] = self.world_inertia_of(i);
    }

    /// Recomputes the world AABB, inflated by `margin`.
    pub fn update_aabb(&mut self, i: usize, margin: f32) {
        let (lo, hi) = self.aabb_of(i, margin);
        self.aabb_min.set(i, lo.to_array());
        self.aabb_max.set(i, hi.to_array());
    }

    /// Writes a validated body into a fresh slot. Infallible: all checks ran
    /// in [`validate_creation`].
    pub fn write_new(&mut self, i: usize, s: &BodyCreationSettings, v: &ValidatedBody) {
        self.position.set(i, s.position.to_array());
        self.rotation[i] = v.rotation.to_array();
        let dynamic_or_kinematic = s.motion_type != MotionType::Static;
        let (lv, av) = if dynamic_or_kinematic {
            (s.linear_velocity, s.angular_velocity)
        } else {
            (Vec3::ZERO, Vec3::ZERO)
        };
        self.linear_velocity.set(i, lv.to_array());
        self.angular_velocity.set(i, av.to_array());
        self.inv_mass[i] = v.inv_mass;
        self.inv_inertia_local[i] = v.inv_inertia.to_array();
        self.force[i] = [0.0; 3];
        self.torque[i] = [0.0; 3];
        self.motion_type[i] = s.motion_type as u8;
        let mut f = 0;
        if s.is_sensor {
            f |= flags::SENSOR;
        }
        if s.allow_sleeping {
            f |= flags::ALLOW_SLEEPING;
        }
        if s.contact_events {
            f |= flags::CONTACT_EVENTS;
        }
        if s.motion_quality == MotionQuality::LinearCast {
            f |= flags::LINEAR_CAST;
        }
        self.set_flags(i, f);
        self.friction[i] = s.friction;
        self.restitution[i] = s.restitution;
        self.linear_damping[i] = v.linear_damping;
        self.angular_damping[i] = v.angular_damping;
        self.user_data[i] = s.user_data;
        self.object_layer[i] = s.object_layer;
        self.gravity_factor[i] = s.gravity_factor;
        self.shape[i] = s.shape;
        self.bounding_radius[i] = s.shape.bounding_radius(&self.shapes);
        self.gravity_scale[i] = 0.0;
        self.move_scale[i] = 0.0;
        self.update_world_inertia(i);
    }

    /// Puts slot `i` into the simulation, awake. Wakes nobody.
    pub fn add(&mut self, i: usize, margin: f32) {
        self.flags[i] |= flags::ADDED;
        self.added_pos[i] = self.added.len() as u32;
        self.added.push(i as u32);
        if self.motion(i) == MotionType::Static {
            self.update_aabb(i, 0.0);
        } else {
            self.make_active(i);
            self.update_aabb(i, margin);
        }
    }

    /// Takes slot `i` out of the simulation (it keeps its state). A sleeping
    /// body leaves its sleeping island; the rest stay asleep.
    pub fn remove(&mut self, i: usize) {
        if self.is_sleeping(i) {
            self.leave_sleeping_island(i);
        }
        self.flags[i] &= !flags::ADDED;
        swap_remove_listed(&mut self.added, &mut self.added_pos, i);
        if self.is_active(i) {
            self.make_inactive(i);
        }
        self.aabb_min.clear(i);
        self.aabb_max.clear(i);
    }

    /// Takes sleeping body `i` out of its ring (it is being removed from the
    /// world), leaving the rest of its island asleep.
    fn leave_sleeping_island(&mut self, i: usize) {
        let next = self.sleep_next[i];
        if next as usize == i {
            self.sleeping_islands -= 1;
        } else {
            let mut prev = next as usize;
            while self.sleep_next[prev] as usize != i {
                prev = self.sleep_next[prev] as usize;
            }
            self.sleep_next[prev] = next;
        }
        self.sleep_next[i] = NOT_LISTED;
        self.flags[i] &= !flags::SLEEPING;
    }

    /// Enters the active list: integrated, gravity applied (if dynamic).
    pub fn make_active(&mut self, i: usize) {
        self.active_pos[i] = self.active.len() as u32;
        self.active.push(i as u32);
        self.active_ids.push(self.id_of(i));
        self.move_scale[i] = 1.0;
        if self.motion(i) == MotionType::Dynamic {
            self.gravity_scale[i] = self.gravity_factor[i];
        }
    }

    /// Leaves the active list: the SIMD sweeps leave it alone.
    pub fn make_inactive(&mut self, i: usize) {
        // The same swap as `active`'s below.
        self.active_ids.swap_remove(self.active_pos[i] as usize);
        swap_remove_listed(&mut self.active, &mut self.active_pos, i);
        self.gravity_scale[i] = 0.0;
        self.move_scale[i] = 0.0;
    }

    /// Resets every column of a freed slot to its neutral value.
    pub fn clear(&mut self, i: usize) {
        self.position.clear(i);
        self.rotation.clear(i);
        self.linear_velocity.clear(i);
        self.angular_velocity.clear(i);
        self.inv_mass.clear(i);
        self.inv_inertia_local.clear(i);
        self.inv_inertia_world.clear(i);
        self.gravity_scale.clear(i);
        self.move_scale.clear(i);
        self.force.clear(i);
        self.torque.clear(i);
        self.aabb_min.clear(i);
        self.aabb_max.clear(i);
        self.motion_type.clear(i);
        self.set_flags(i, 0);
        self.friction.clear(i);
        self.restitution.clear(i);
        self.linear_damping.clear(i);
        self.angular_damping.clear(i);
        self.user_data.clear(i);
        self.object_layer.clear(i);
        self.gravity_factor.clear(i);
        self.sleep_timer.clear(i);
        self.sleep_spheres.clear(i);
        self.shape[i] = PLACEHOLDER_SHAPE;
        self.bounding_radius[i] = 0.0;
    }
}

/// Removes slot `i` from an index list in O(1), fixing the moved entry's
/// back-reference.
fn swap_remove_listed(list: &mut Vec<u32>, pos: &mut [u32], i: usize) {
    let p = pos[i] as usize;
    let last = list.len() - 1;
    list.swap(p, last);
    list.pop();
    if p < list.len() {
        pos[list[p] as usize] = p as u32;
    }
    pos[i] = NOT_LISTED;
}
