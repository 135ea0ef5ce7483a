//! The contact type batch: constraints in bundles of [`LANES`], each field
//! a `[f32; LANES]` row of one cache line (bepu's type batch, and the
//! layout the design promises). A bundle's body references, its prestep
//! data (what setup computes and the iterations only read) and its
//! accumulated impulses (what the iterations read and write) live in three
//! separate arrays, so an iteration streams the prestep once and touches
//! only the impulses it updates.
//!
//! A padding lane is all zeros with both bodies at the zero slot: zero
//! masses and zero points make every row of it a no-op.

use archipelago_simd::LANES;
use bytemuck::{Pod, Zeroable};

/// One value per lane.
pub(crate) type Row = [f32; LANES];
/// A vector per lane, by component.
pub(crate) type Row3 = [Row; 3];

/// Points per manifold (and per constraint).
pub(crate) const POINTS: usize = crate::collide::MAX_POINTS;

/// The two bodies of each lane, as solver body slots (static bodies and
/// padding at the zero slot).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
pub(crate) struct BundleBodies {
    pub a: [u32; LANES],
    pub b: [u32; LANES],
}

/// A non-penetration row at one point.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct PointRow {
    /// `r_a × n`, `r_b × n` (the iterations turn them by the bundle's
    /// inverse inertias: see [`ContactPrestep::ia`]).
    pub ra_x: Row3,
    pub rb_x: Row3,
    /// `1 / (J M⁻¹ Jᵀ)`.
    pub mass: Row,
    /// The normal velocity the solver keeps the point at or above.
    pub target: Row,
}

/// A friction row at the centre of the points.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct FrictionRow {
    pub ra_x: Row3,
    pub rb_x: Row3,
    pub mass: Row,
}

/// The face block of a 3- or 4-point face manifold (see `prepare.rs`).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockPrestep {
    /// 1 where the lane has a face block, else 0.
    pub has: Row,
    /// `r_a × n`, `r_b × n` at the centre of the points.
    pub ra_x: Row3,
    pub rb_x: Row3,
    /// `K3⁻¹` by columns.
    pub k3_inv: [Row3; 3],
    pub u_target: Row3,
    /// `λ_k = p_k · f` per point.
    pub p: [Row3; POINTS],
}

/// What setup computes for a bundle; read-only during the iterations.
///
/// Fields are in the order an iteration reads them, and what only some
/// iterations read comes last (the point rows serve lanes whose face block
/// does not hold, `a_cols` the block's refit after them): the rows an
/// iteration of a face-manifold bundle reads are one contiguous run, which
/// the hardware prefetcher follows from bundle to bundle. (With the point
/// rows in the middle, the velocity solve of the pyramid took ~8% longer.)
///
/// No row keeps its lever arms turned by the inverse inertias (`I⁻¹ (r ×
/// n)`): the iterations compute them from [`ia`](Self::ia), [`ib`](Self::ib)
/// with the same products setup used, so the bits are the same. Stored,
/// they were 60 of 164 floats a lane; an iteration of the pyramid streams
/// its prestep from L3 (5.5 MB a step) and setup is bound by writing it,
/// so 16-lane arithmetic is cheaper than the cache lines.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
pub(crate) struct ContactPrestep {
    pub normal: Row3,
    pub tangent1: Row3,
    pub tangent2: Row3,
    pub inv_mass_a: Row,
    pub inv_mass_b: Row,
    /// Combined friction coefficient.
    pub friction: Row,
    /// Points in the lane's manifold (1–4; 0 for a padding lane).
    pub count: Row,
    /// World inverse inertias by columns, as at the step's start (the
    /// position solve uses them too).
    pub ia: [Row3; 3],
    pub ib: [Row3; 3],
    pub friction_rows: [FrictionRow; 2],
    /// Twist row about the normal: its mass.
    pub twist_mass: Row,
    /// Mean distance of the points from their centre.
    pub twist_radius: Row,
    pub block: BlockPrestep,
    pub points: [PointRow; POINTS],
    /// The face block's `(1, d1_k, d2_k)` per point.
    pub block_a_cols: [Row3; POINTS],
}

/// Accumulated impulses of a bundle (warm-started, then iterated).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
pub(crate) struct ContactImpulses {
    pub normal: [Row; POINTS],
    pub friction: [Row; 2],
    pub twist: Row,
    /// The face block's accumulated reduced impulse.
    pub block_f: Row3,
}

/// What the position solve reads besides the prestep: the manifold's
/// body-local points and the poses of the sides at the step's start (the
/// static ones never move). Setup gathers the poses and points straight
/// into it and reads them from here.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
pub(crate) struct PositionPrestep {
    pub local_a: [Row3; POINTS],
    pub local_b: [Row3; POINTS],
    pub statics: crate::solver::poses::StaticPoses,
}
