//! Joints: what a user creates ([`JointSettings`], one [`JointKind`] per
//! joint type) and the table the world keeps them in (`store.rs`). The
//! solver's side (the joint type batch and its rows) is in
//! `solver/joint/` and `solver/parts/`.
//!
//! A joint joins body A to body B, or either of them to the world (`None`:
//! Jolt's `sFixedToWorld`), at a frame given in each body's local space: an anchor point, a primary axis (the
//! hinge axis, the slider's direction, the twist axis) and a normal axis
//! perpendicular to it (the zero of the hinge angle and of the twist). The
//! two frames coincide when the joint is at rest; every limit and motor is
//! measured as frame B relative to frame A, so a door is best built with
//! the world (or the frame) as A and the door as B. For the world side the
//! frame is given in world space. [`PhysicsSystem::joint_frame`](crate::PhysicsSystem::joint_frame)
//! turns a world-space frame into a body's local one.
//!
//! Sign conventions: a hinge angle (and a twist) is the rotation of frame B
//! about frame A's axis, right-handed; a slider position is B's anchor minus
//! A's along A's axis; motor velocities are B's relative to A in the same
//! sense.

mod interface;
pub(crate) mod store;

use crate::body::BodyId;
use crate::error::{PhysicsError, Result};
use crate::limits::{MAX_COORDINATE, MAX_SPEED};
use crate::math::Vec3;
use core::f32::consts::PI;

pub use store::JointId;

/// Axes further than this from unit length, or from perpendicular to each
/// other (|axis · normal|), are refused as caller bugs.
pub const JOINT_AXIS_TOLERANCE: f32 = 1e-3;

/// Largest accepted spring frequency (Hz). A spring much stiffer than the
/// step can follow (ω dt ≫ 1) behaves as a hard constraint anyway.
pub const MAX_SPRING_FREQUENCY: f32 = 1.0e4;

/// Largest accepted damping ratio of a spring.
pub const MAX_SPRING_DAMPING: f32 = 1.0e4;

/// A joint's frame in one body's local space (or in world space for the
/// world side): the anchor point (m), the primary axis and a normal axis
/// perpendicular to it, both unit length (within
/// [`JOINT_AXIS_TOLERANCE`]). Point and distance joints use the anchor
/// only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointFrame {
    pub anchor: Vec3,
    pub axis: Vec3,
    pub normal: Vec3,
}

impl JointFrame {
    /// A frame at `anchor` with axis +x and normal +y.
    pub fn at(anchor: Vec3) -> Self {
        Self {
            anchor,
            axis: Vec3::X,
            normal: Vec3::Y,
        }
    }

    /// A frame at `anchor` with the given axis and normal.
    pub fn new(anchor: Vec3, axis: Vec3, normal: Vec3) -> Self {
        Self {
            anchor,
            axis,
            normal,
        }
    }

    pub(crate) fn validate(&self, axes: bool) -> Result<()> {
        let anchor_ok = crate::limits::position_ok(self.anchor);
        let unit = |v: Vec3| v.is_finite() && (v.length() - 1.0).abs() <= JOINT_AXIS_TOLERANCE;
        let axes_ok = !axes
            || (unit(self.axis)
                && unit(self.normal)
                && self.axis.dot(self.normal).abs() <= JOINT_AXIS_TOLERANCE);
        (anchor_ok && axes_ok)
            .then_some(())
            .ok_or(PhysicsError::InvalidJointFrame)
    }
}

/// A soft constraint (Jolt's `SpringSettings`, frequency mode): it pulls
/// towards its target like a damped spring of this natural frequency
/// instead of holding it rigidly, whatever the masses involved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spring {
    /// Natural frequency (Hz), `> 0` and at most [`MAX_SPRING_FREQUENCY`].
    pub frequency: f32,
    /// Damping ratio: 0 none, 1 critical; `0..=MAX_SPRING_DAMPING`. The
    /// implicit integration of the spring (Catto's soft constraints, as in
    /// Jolt and Box2D) damps slightly even at 0.
    pub damping: f32,
}

impl Spring {
    pub fn new(frequency: f32, damping: f32) -> Self {
        Self { frequency, damping }
    }

    fn validate(&self) -> Result<()> {
        let ok = self.frequency > 0.0
            && self.frequency <= MAX_SPRING_FREQUENCY
            && (0.0..=MAX_SPRING_DAMPING).contains(&self.damping);
        ok.then_some(()).ok_or(PhysicsError::InvalidSpring)
    }
}

/// What a hinge or slider motor drives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MotorMode {
    /// No motor: the joint is free between its limits, resisted only by its
    /// friction.
    Off,
    /// Drive the joint's relative velocity (rad/s for a hinge, m/s for a
    /// slider; B relative to A) to this value, with at most the motor's
    /// force.
    Velocity(f32),
    /// Pull the joint's position (rad for a hinge, m for a slider) towards
    /// `target` like a spring of the given frequency and damping, with at
    /// most the motor's force.
    Position { target: f32, spring: Spring },
}

/// A hinge or slider motor. The default is off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointMotor {
    pub mode: MotorMode,
    /// Largest torque (N·m, hinge) or force (N, slider) the motor applies,
    /// finite and `>= 0`; it is applied as an impulse of at most
    /// `max_force × dt` per collision step.
    pub max_force: f32,
}

impl Default for JointMotor {
    fn default() -> Self {
        Self {
            mode: MotorMode::Off,
            max_force: 0.0,
        }
    }
}

impl JointMotor {
    /// A velocity motor.
    pub fn velocity(target: f32, max_force: f32) -> Self {
        Self {
            mode: MotorMode::Velocity(target),
            max_force,
        }
    }

    /// A position motor: a spring towards `target`.
    pub fn position(target: f32, spring: Spring, max_force: f32) -> Self {
        Self {
            mode: MotorMode::Position { target, spring },
            max_force,
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let force_ok = self.max_force.is_finite() && self.max_force >= 0.0;
        let mode_ok = match self.mode {
            MotorMode::Off => true,
            MotorMode::Velocity(v) => v.is_finite() && v.abs() <= MAX_SPEED,
            MotorMode::Position { target, spring } => {
                spring.validate()?;
                target.is_finite() && target.abs() <= MAX_COORDINATE
            }
        };
        (force_ok && mode_ok)
            .then_some(())
            .ok_or(PhysicsError::InvalidMotor)
    }
}

/// A distance joint: the anchors stay between `min` and `max` apart (m,
/// `0 <= min <= max`, finite). `min == max` is a rigid rod; a spring makes
/// the limits soft (inside them the joint does nothing, outside it pulls
/// back like the spring; with `min == max` it is a spring of that rest
/// length).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DistanceJoint {
    pub min: f32,
    pub max: f32,
    pub spring: Option<Spring>,
}

/// A hinge (revolute joint): the anchors meet and frame B turns about
/// frame A's axis only.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HingeJoint {
    /// Angle limits `[min, max]` (rad, within `[-π, π]`, `min <= max`);
    /// `None` turns freely.
    pub limits: Option<[f32; 2]>,
    pub motor: JointMotor,
    /// Friction torque (N·m, finite, `>= 0`) resisting rotation while the
    /// motor is off.
    pub max_friction: f32,
}

/// A slider (prismatic joint): frame B keeps frame A's orientation and
/// moves along A's axis only.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SliderJoint {
    /// Position limits `[min, max]` (m, finite, within
    /// [`MAX_COORDINATE`](crate::MAX_COORDINATE), `min <= max`); `None`
    /// slides freely.
    pub limits: Option<[f32; 2]>,
    pub motor: JointMotor,
    /// Friction force (N, finite, `>= 0`) resisting sliding while the motor
    /// is off.
    pub max_friction: f32,
}

/// A swing-twist joint (ragdoll shoulders and hips): the anchors meet,
/// frame B's axis stays within a cone of half angle `swing` about frame
/// A's axis, and B's twist about its own axis stays within `twist`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwingTwistJoint {
    /// Half angle of the swing cone (rad, `0..=π`).
    pub swing: f32,
    /// Twist limits `[min, max]` (rad, within `[-π, π]`, `min <= max`).
    pub twist: [f32; 2],
}

/// The joint types.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JointKind {
    /// A weld: frame B stays on frame A (position and orientation).
    Fixed,
    /// A ball joint: the anchors meet; rotation is free.
    Point,
    Distance(DistanceJoint),
    Hinge(HingeJoint),
    Slider(SliderJoint),
    SwingTwist(SwingTwistJoint),
}

impl JointKind {
    /// Whether the kind uses the frames' axes (or only their anchors).
    fn uses_axes(&self) -> bool {
        !matches!(self, JointKind::Point | JointKind::Distance(_))
    }
}

/// Everything needed to create a joint (see the module docs for frames and
/// signs). Build with one of the constructors; `collide_connected` is off
/// unless set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointSettings {
    /// `None`: the world (then `frame_a` is in world space).
    pub body_a: Option<BodyId>,
    /// `None`: the world (then `frame_b` is in world space). At most one
    /// side may be the world.
    pub body_b: Option<BodyId>,
    pub frame_a: JointFrame,
    pub frame_b: JointFrame,
    pub kind: JointKind,
    /// Whether the two bodies still collide with each other (Box2D's
    /// `collideConnected`, default false: jointed limbs overlap at their
    /// anchors).
    pub collide_connected: bool,
}

impl JointSettings {
    /// A joint of `kind` between `body_a` and `body_b` (`None`: the world).
    pub fn new(
        body_a: Option<BodyId>,
        body_b: Option<BodyId>,
        frame_a: JointFrame,
        frame_b: JointFrame,
        kind: JointKind,
    ) -> Self {
        Self {
            body_a,
            body_b,
            frame_a,
            frame_b,
            kind,
            collide_connected: false,
        }
    }

    /// A ball joint at `anchor_a` (A's local space, or world space for the
    /// world) and `anchor_b` (B's).
    pub fn point(
        body_a: Option<BodyId>,
        body_b: Option<BodyId>,
        anchor_a: Vec3,
        anchor_b: Vec3,
    ) -> Self {
        Self::new(
            body_a,
            body_b,
            JointFrame::at(anchor_a),
            JointFrame::at(anchor_b),
            JointKind::Point,
        )
    }

    /// A distance joint between two anchors, kept `min..=max` apart.
    pub fn distance(
        body_a: Option<BodyId>,
        body_b: Option<BodyId>,
        anchor_a: Vec3,
        anchor_b: Vec3,
        min: f32,
        max: f32,
    ) -> Self {
        Self::new(
            body_a,
            body_b,
            JointFrame::at(anchor_a),
            JointFrame::at(anchor_b),
            JointKind::Distance(DistanceJoint {
                min,
                max,
                spring: None,
            }),
        )
    }

    pub fn with_collide_connected(mut self, collide: bool) -> Self {
        self.collide_connected = collide;
        self
    }

    /// Checks everything that does not need the world (bodies are checked
    /// by `create_joint`).
    pub(crate) fn validate(&self) -> Result<()> {
        let axes = self.kind.uses_axes();
        self.frame_a.validate(axes)?;
        self.frame_b.validate(axes)?;
        let angle_range = |[lo, hi]: [f32; 2]| (-PI..=PI).contains(&lo) && (lo..=PI).contains(&hi);
        match self.kind {
            JointKind::Fixed | JointKind::Point => {}
            JointKind::Distance(d) => {
                let ok = d.min.is_finite()
                    && d.max.is_finite()
                    && d.min >= 0.0
                    && d.min <= d.max
                    && d.max <= MAX_COORDINATE;
                if !ok {
                    return Err(PhysicsError::InvalidJointLimits);
                }
                if let Some(s) = d.spring {
                    s.validate()?;
                }
            }
            JointKind::Hinge(h) => {
                if !h.limits.is_none_or(angle_range) {
                    return Err(PhysicsError::InvalidJointLimits);
                }
                h.motor.validate()?;
                friction_ok(h.max_friction)?;
            }
            JointKind::Slider(s) => {
                let ok = s.limits.is_none_or(|[lo, hi]| {
                    lo.is_finite()
                        && hi.is_finite()
                        && lo <= hi
                        && lo.abs().max(hi.abs()) <= MAX_COORDINATE
                });
                if !ok {
                    return Err(PhysicsError::InvalidJointLimits);
                }
                s.motor.validate()?;
                friction_ok(s.max_friction)?;
            }
            JointKind::SwingTwist(st) => {
                let ok = (0.0..=PI).contains(&st.swing) && angle_range(st.twist);
                if !ok {
                    return Err(PhysicsError::InvalidJointLimits);
                }
            }
        }
        Ok(())
    }
}

fn friction_ok(f: f32) -> Result<()> {
    (f.is_finite() && f >= 0.0)
        .then_some(())
        .ok_or(PhysicsError::InvalidMotor)
}

/// The impulses a joint applied in the last collision step, as magnitudes:
/// what holds it together, to compare with a breaking threshold (divide by
/// the step's `dt` for a force and torque).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct JointImpulse {
    /// Linear impulse at the anchors (N·s): the point or slider rows, the
    /// distance row and the slider's limit and motor.
    pub linear: f32,
    /// Angular impulse (N·m·s): the rotation rows, limits and motors.
    pub angular: f32,
}
