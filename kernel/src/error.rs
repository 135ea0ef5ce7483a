use core::fmt;

/// Every way a public call can refuse its input. A refused call changes
/// nothing in the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhysicsError {
    /// A position is NaN or infinite.
    InvalidPosition,
    /// A rotation is NaN/infinite or too far from unit length (more than
    /// [`ROTATION_NORM_TOLERANCE`](crate::ROTATION_NORM_TOLERANCE)) to be a
    /// rounding error. Rotations within the tolerance are normalised.
    InvalidRotation,
    /// A velocity is NaN or infinite.
    InvalidVelocity,
    /// A force, torque or impulse is NaN or infinite.
    InvalidForce,
    /// A shape has a zero, negative or non-finite radius, extent or height.
    InvalidShape,
    /// A density or mass is zero, negative or non-finite.
    InvalidMass,
    /// Friction, restitution, damping or gravity factor out of range.
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
    /// `dt` is NaN or infinite, or `collision_steps` is zero.
    InvalidTimeStep,
    /// A `PhysicsSettings` or capacity value is out of range.
    InvalidSettings,
    /// MBP regions: none, degenerate or non-finite bounds, more than
    /// `MAX_REGIONS`, an unknown region id, or a region call on a world
    /// that does not use MBP.
    InvalidBroadPhaseRegions,
}

impl fmt::Display for PhysicsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Self::InvalidPosition => "position is NaN or infinite",
            Self::InvalidRotation => "rotation is NaN, infinite or not a unit quaternion",
            Self::InvalidVelocity => "velocity is NaN or infinite",
            Self::InvalidForce => "force, torque or impulse is NaN or infinite",
            Self::InvalidShape => "shape size is zero, negative or non-finite",
            Self::InvalidMass => "density or mass is zero, negative or non-finite",
            Self::InvalidMaterial => {
                "friction, restitution, damping or gravity factor out of range"
            }
            Self::InvalidLayer => "object layer out of range",
            Self::InvalidBodyId => "unknown or stale body id",
            Self::BodyCapacityReached => "max_bodies reached",
            Self::BodyAlreadyAdded => "body is already added",
            Self::BodyNotAdded => "body is not added",
            Self::WrongMotionType => "operation not allowed for this motion type",
            Self::InvalidTimeStep => "time step is not finite or collision_steps is 0",
            Self::InvalidSettings => "physics settings or capacities out of range",
            Self::InvalidBroadPhaseRegions => "invalid broad-phase regions",
        };
        f.write_str(s)
    }
}

impl std::error::Error for PhysicsError {}

pub type Result<T> = core::result::Result<T, PhysicsError>;
