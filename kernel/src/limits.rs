//! The documented ranges of every public input.
//!
//! Each bound exists so that no accepted value can overflow `f32` anywhere
//! in a step: with every input inside these ranges, positions, velocities,
//! impulses and their products stay many orders of magnitude below
//! `f32::MAX` (3.4e38). A value outside its range is refused with its typed
//! error and changes nothing. The bounds are far beyond what a simulation
//! at `f32` precision can use, so a real scene never meets them.
//!
//! What the step itself guarantees on top (see
//! [`StepStats::bodies_faulted`](crate::StepStats::bodies_faulted)):
//! velocities above the world's maximum are clamped to it (keeping their
//! direction) before the solver reads them, and a body whose state would
//! still become non-finite is stopped at its last finite pose and taken out
//! of the simulation instead of spreading NaN to the bodies it touches.

/// Largest accepted position component (m), for bodies and kinematic
/// targets. At 1e7 m the spacing of `f32` is 1 m, so nothing beyond can be
/// simulated meaningfully; products of two coordinates stay below 1e15.
/// Bodies may move past it during a simulation (only inputs are checked).
pub const MAX_COORDINATE: f32 = 1.0e7;

/// Largest accepted shape size (m): sphere and capsule radius, capsule half
/// height, box half extent. A 1e6 m dynamic box at 1000 kg/m³ weighs 8e21
/// kg, well inside [`MAX_MASS`].
pub const MAX_SHAPE_SIZE: f32 = 1.0e6;

/// Smallest accepted shape size (m), the same dimensions (0.1 mm). With
/// [`MIN_MASS`] it bounds a body's inverse inertia by ~1e21 /(kg·m²), so
/// that inverse inertia times a lever arm across the largest shape stays
/// finite with many orders to spare (a box 1e-38 m thin had inverse
/// inertias of 1e34, and a contact with a huge body overflowed to NaN).
pub const MIN_SHAPE_SIZE: f32 = 1.0e-4;

/// Largest accepted body mass (kg), given or from density × volume. With
/// the velocity bounds below, a contact impulse stays below ~1e31 N·s.
pub const MAX_MASS: f32 = 1.0e24;

/// Smallest accepted body mass (kg), given or from density × volume (a
/// 0.1 mm dust grain weighs ~1e-9 kg): inverse masses stay below 1e12.
pub const MIN_MASS: f32 = 1.0e-12;

/// Largest accepted friction coefficient. Friction combines as the
/// geometric mean `sqrt(μa μb)`, which must not overflow; real materials
/// are below 2.
pub const MAX_FRICTION: f32 = 1.0e3;

/// Largest accepted `max_linear_velocity` (m/s) and `max_angular_velocity`
/// (rad/s) in [`PhysicsSettings`](crate::PhysicsSettings). Body velocities
/// themselves may be set to any finite value: the next step clamps them to
/// the world's maximum.
pub const MAX_SPEED: f32 = 1.0e6;

/// Largest accepted gravity component (m/s², about 100,000 g).
pub const MAX_GRAVITY: f32 = 1.0e6;

/// Largest accepted magnitude of a body's gravity factor.
pub const MAX_GRAVITY_FACTOR: f32 = 1.0e3;

/// Largest accepted contact distance setting (m): the speculative contact
/// distance, penetration slop, maximum penetration per position iteration
/// and the contact point preserve distance. A speculative contact may close
/// its gap in one sub-step, so the target velocity it sets is at most this
/// over [`MIN_TIME_STEP`].
pub const MAX_CONTACT_DISTANCE: f32 = 10.0;

/// Largest accepted `dt` of one `update` (s).
pub const MAX_TIME_STEP: f32 = 10.0;

/// Smallest accepted collision step, `dt / collision_steps` (s), for
/// `dt > 0` (`dt <= 0` runs no simulation, only bookkeeping). Speculative
/// contacts divide a gap by it.
pub const MIN_TIME_STEP: f32 = 1.0e-6;

/// Most collision steps per `update`, so one call is bounded in time.
pub const MAX_COLLISION_STEPS: u32 = 64;

/// Most velocity or position iterations per collision step.
pub const MAX_SOLVER_ITERATIONS: u32 = 256;

/// Most bodies a world may be created for (Jolt's limit is 2^23 too). Each
/// body slot costs about [`Capacities::memory_bytes`](crate::Capacities::memory_bytes)
/// accounts for.
pub const MAX_BODIES: usize = 1 << 23;

/// Most candidate pairs per collision step a world may be created for.
pub const MAX_BODY_PAIRS: usize = 1 << 26;

/// Most contact manifolds per collision step a world may be created for.
pub const MAX_CONTACT_CONSTRAINTS: usize = 1 << 25;

/// Most joints a world may be created for.
pub const MAX_JOINTS: usize = 1 << 23;

/// Whether a position is finite and within [`MAX_COORDINATE`].
#[inline]
pub(crate) fn position_ok(p: crate::math::Vec3) -> bool {
    p.is_finite() && p.abs().max_element() <= MAX_COORDINATE
}
