use core::fmt;

/// Every way a public call can refuse its input. A refused call changes
/// nothing in the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhysicsError {
    /// A position is NaN, infinite or beyond
    /// [`MAX_COORDINATE`](crate::MAX_COORDINATE) (a query box: NaN or
    /// infinite).
    InvalidPosition,
    /// A rotation is NaN/infinite or too far from unit length (more than
    /// [`ROTATION_NORM_TOLERANCE`](crate::ROTATION_NORM_TOLERANCE)) to be a
    /// rounding error. Rotations within the tolerance are normalised.
    InvalidRotation,
    /// A velocity is NaN or infinite.
    InvalidVelocity,
    /// A force, torque or impulse is NaN or infinite.
    InvalidForce,
    /// A shape has a NaN radius, extent or height, or one outside
    /// [`MIN_SHAPE_SIZE`](crate::MIN_SHAPE_SIZE)`..=`[`MAX_SHAPE_SIZE`](crate::MAX_SHAPE_SIZE).
    InvalidShape,
    /// A density or mass is zero, negative or non-finite, or gives a mass
    /// outside [`MIN_MASS`](crate::MIN_MASS)`..=`[`MAX_MASS`](crate::MAX_MASS)
    /// or an inertia that overflows or underflows.
    InvalidMass,
    /// Friction (`0..=MAX_FRICTION`), restitution (`0..=1`), damping (finite,
    /// `>= 0`) or gravity factor (`|f| <= MAX_GRAVITY_FACTOR`) out of range.
    InvalidMaterial,
    /// An object layer at or above `MAX_OBJECT_LAYERS`.
    InvalidLayer,
    /// The handle names no live body (never issued, freed, or from another
    /// system).
    InvalidBodyId,
    /// `max_bodies` bodies already exist.
    BodyCapacityReached,
    /// The body is already in the simulation.
    BodyAlreadyAdded,
    /// The body is not in the simulation.
    BodyNotAdded,
    /// The call needs a different motion type (forces on a static body...).
    WrongMotionType,
    /// `dt` is NaN, infinite or above [`MAX_TIME_STEP`](crate::MAX_TIME_STEP),
    /// `collision_steps` is zero or above
    /// [`MAX_COLLISION_STEPS`](crate::MAX_COLLISION_STEPS), or a positive
    /// `dt` gives collision steps shorter than
    /// [`MIN_TIME_STEP`](crate::MIN_TIME_STEP).
    InvalidTimeStep,
    /// A `PhysicsSettings` or capacity value is out of range (each field's
    /// documentation gives its range).
    InvalidSettings,
    /// The allocator refused the buffers a world of these capacities needs
    /// (about [`Capacities::memory_bytes`](crate::Capacities::memory_bytes)).
    OutOfMemory,
    /// An earlier `update` panicked part-way (a bug in the kernel, reported
    /// by the panic itself), so the world's state may be half-stepped; it
    /// refuses to step again. Reading the world still works.
    Poisoned,
    /// MBP regions: none, degenerate or non-finite bounds, more than
    /// `MAX_REGIONS`, an unknown region id, or a region call on a world
    /// that does not use MBP.
    InvalidBroadPhaseRegions,
    /// The handle names no live joint (never issued, removed, or from
    /// another system).
    InvalidJointId,
    /// `max_joints` joints already exist.
    JointCapacityReached,
    /// A joint's two sides are the same body.
    JointToSelf,
    /// Neither side of a joint is a dynamic body (two static or kinematic
    /// bodies, or one and the world): it could never move anything.
    JointWithoutDynamicBody,
    /// A joint frame's anchor is NaN, infinite or beyond
    /// [`MAX_COORDINATE`](crate::MAX_COORDINATE), or its axes are not unit
    /// length and perpendicular (within
    /// [`JOINT_AXIS_TOLERANCE`](crate::JOINT_AXIS_TOLERANCE)).
    InvalidJointFrame,
    /// Joint limits are NaN, `min > max`, or outside their range (angles in
    /// `[-π, π]`, a swing cone in `[0, π]`, distances `>= 0`).
    InvalidJointLimits,
    /// A spring's frequency is not in `(0, MAX_SPRING_FREQUENCY]` or its
    /// damping not in `[0, MAX_SPRING_DAMPING]` (NaN included).
    InvalidSpring,
    /// A motor's target is NaN or out of range, or its maximum force or a
    /// friction is negative or non-finite.
    InvalidMotor,
    /// A joint call for another kind of joint (a motor on a point joint,
    /// limits on a fixed one).
    WrongJointKind,
    /// The body still has joints: remove them before destroying it.
    BodyHasJoints,
    /// A ray with a NaN or infinite origin or direction, a zero-length
    /// direction, or a NaN or negative maximum distance.
    InvalidRay,
    /// A batched query's output buffer is not as long as its input.
    QueryBufferMismatch,
    /// A bulk copy's or bulk write's buffers are not as long as its list
    /// of bodies.
    BufferLengthMismatch,
    /// The [`Executor`](crate::Executor)'s `install` returned without
    /// running the step (a breach of its contract); nothing was stepped.
    ExecutorDidNotRun,
    /// A snapshot is truncated, corrupted (its checksum fails) or
    /// malformed (a length past its capacity, a slot past `max_bodies`,
    /// an unknown tag, an invalid shape or joint, broken lists); nothing
    /// was restored.
    InvalidSnapshot,
    /// A snapshot of another format version
    /// ([`SNAPSHOT_VERSION`](crate::SNAPSHOT_VERSION) is this build's).
    SnapshotVersion,
    /// A snapshot of a world with other capacities or another broad-phase
    /// kind, or from a machine of the other byte order.
    SnapshotMismatch,
    /// The world holds [`MAX_HULLS`](crate::MAX_HULLS) hulls already.
    HullCapacityReached,
    /// The world holds [`MAX_SURFACES`](crate::MAX_SURFACES) meshes (or
    /// height fields, or compounds) already.
    ShapeCapacityReached,
    /// A triangle mesh or a height field on a dynamic or kinematic body:
    /// surfaces have no volume and are static only.
    SurfaceNotStatic,
}

impl fmt::Display for PhysicsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Self::InvalidPosition => "position is NaN, infinite or out of range",
            Self::InvalidRotation => "rotation is NaN, infinite or not a unit quaternion",
            Self::InvalidVelocity => "velocity is NaN or infinite",
            Self::InvalidForce => "force, torque or impulse is NaN or infinite",
            Self::InvalidShape => "shape size is NaN or out of range",
            Self::InvalidMass => "density or mass is not finite or out of range",
            Self::InvalidMaterial => {
                "friction, restitution, damping or gravity factor out of range"
            }
            Self::InvalidLayer => "object layer out of range",
            Self::InvalidBodyId => "unknown or stale body id",
            Self::BodyCapacityReached => "max_bodies reached",
            Self::BodyAlreadyAdded => "body is already added",
            Self::BodyNotAdded => "body is not added",
            Self::WrongMotionType => "operation not allowed for this motion type",
            Self::InvalidTimeStep => "time step or collision_steps out of range",
            Self::InvalidSettings => "physics settings or capacities out of range",
            Self::OutOfMemory => "the world's buffers could not be allocated",
            Self::Poisoned => "an earlier update panicked; the world no longer steps",
            Self::InvalidBroadPhaseRegions => "invalid broad-phase regions",
            Self::InvalidJointId => "unknown or stale joint id",
            Self::JointCapacityReached => "max_joints reached",
            Self::JointToSelf => "a joint joins a body to itself",
            Self::JointWithoutDynamicBody => "a joint needs a dynamic body",
            Self::InvalidJointFrame => {
                "joint anchor out of range or axes not unit and perpendicular"
            }
            Self::InvalidJointLimits => "joint limits NaN, inverted or out of range",
            Self::InvalidSpring => "spring frequency or damping out of range",
            Self::InvalidMotor => "motor target, force or friction out of range",
            Self::WrongJointKind => "operation not allowed for this kind of joint",
            Self::BodyHasJoints => "the body still has joints",
            Self::InvalidRay => "ray origin or direction is NaN, infinite or zero, or its distance is NaN or negative",
            Self::QueryBufferMismatch => "a batched query's output is not as long as its input",
            Self::BufferLengthMismatch => "a bulk call's buffers are not as long as its list of bodies",
            Self::ExecutorDidNotRun => "the executor returned without running the step",
            Self::InvalidSnapshot => "the snapshot is truncated, corrupted or malformed",
            Self::SnapshotVersion => "the snapshot is of another format version",
            Self::SnapshotMismatch => {
                "the snapshot is of a world with other capacities, broad phase or byte order"
            }
            Self::HullCapacityReached => "the world holds MAX_HULLS hulls already",
            Self::ShapeCapacityReached => "the world holds MAX_SURFACES meshes, height fields or compounds already",
            Self::SurfaceNotStatic => "a mesh or height field shape needs a static body",
        };
        f.write_str(s)
    }
}

impl std::error::Error for PhysicsError {}

pub type Result<T> = core::result::Result<T, PhysicsError>;
