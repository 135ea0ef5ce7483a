//! The joint type batch: joints in bundles of 16 lanes, each field a
//! `[f32; 16]` row (bepu's type batch, as the contacts'). A bundle's body
//! references (`BundleBodies`, shared with contacts), its definition (what
//! the joint is, gathered once per step, read by setup and the position
//! solve), its prestep (what setup computes and the velocity iterations
//! read) and its accumulated impulses live in four separate arrays.
//!
//! Every joint type is the same set of parts with a per-lane mask of the
//! ones it uses (`parts/`): fixed = point + rotation; point = point;
//! distance = one row; hinge = point + hinge rotation + limit row + motor
//! row; slider = dual axis + rotation + limit row + motor row;
//! swing-twist = point + swing row + twist row. The hinge's two rotation
//! rows and the slider's two perpendicular rows are both a 2×2 block
//! (`block2.rs`) and share its rows. A bundle of one type runs only that
//! type's parts (a part no lane uses is skipped), and a bundle of mixed
//! types runs the union; the rows are generic, so a ragdoll's hinges and
//! swing-twists differ only in the block.
//!
//! A padding lane is all zeros with both bodies at the zero slot: every
//! part is off in it.

use crate::solver::parts::axis_row::AxisRows;
use crate::solver::parts::block2::Block2Rows;
use crate::solver::parts::point::PointRows;
use crate::solver::parts::rotation::RotationRows;
use crate::solver::parts::{MassRows, Row, Row3};
use crate::solver::poses::StaticPoses;
use bytemuck::{Pod, Zeroable};

/// A joint as one lane of the batch: type, parts in use, frames, limits
/// and motor (from `JointData`), and the static sides' poses.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
pub(crate) struct JointDef {
    /// 1 where the lane holds a joint (0: padding).
    pub used: Row,
    /// Kind code (`joint/store.rs`), as a float.
    pub kind: Row,
    /// 1 where the lane uses the part.
    pub point: Row,
    /// The slider's two perpendicular rows (the 2×2 block).
    pub dual: Row,
    /// The hinge's two rotation rows (the 2×2 block).
    pub hinge: Row,
    pub rotation: Row,
    /// Row 0 (limit, or the swing cone) in use.
    pub limit: Row,
    /// Row 0's limits are a spring (distance joints).
    pub soft_limit: Row,
    pub motor_velocity: Row,
    pub motor_position: Row,
    pub local_a: Row3,
    pub local_b: Row3,
    pub frame_a: [Row; 4],
    pub frame_b: [Row; 4],
    pub limits: [Row; 2],
    pub swing_cos: Row,
    pub limit_spring: [Row; 2],
    pub motor_target: Row,
    pub motor_max: Row,
    pub motor_spring: [Row; 2],
    pub friction: Row,
    pub statics: StaticPoses,
}

/// What setup computes for a bundle; read-only during the iterations.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
pub(crate) struct JointPrestep {
    pub masses: MassRows,
    pub point: PointRows,
    /// The slider's dual axis or the hinge's rotation rows.
    pub block: Block2Rows,
    pub rotation: RotationRows,
    /// Row 0: the limit (distance, hinge, slider) or the swing cone; row 1:
    /// the motor or friction (hinge, slider) or the twist limit.
    pub rows: [AxisRows; 2],
}

/// Accumulated impulses of a bundle, in `JOINT_IMPULSES` order.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
pub(crate) struct JointImpulses {
    pub point: Row3,
    pub block: [Row; 2],
    pub rotation: Row3,
    pub rows: [Row; 2],
}

/// Poses and masses of a bundle's bodies at the step's start, as gathered
/// for setup (all sides, static ones too).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct JointBodyRows {
    pub xa: Row3,
    pub qa: [Row; 4],
    pub xb: Row3,
    pub qb: [Row; 4],
    pub masses: MassRows,
}

impl JointBodyRows {
    pub fn new() -> Self {
        Zeroable::zeroed()
    }
}
