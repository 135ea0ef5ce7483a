//! The rows joints are built from (Jolt's `ConstraintPart`s), each written
//! once over the lane type like the contact rows: `f32` on one lane of a
//! bundle, or all 16 lanes at once, with the same operations in the same
//! order, so wide and scalar give the same bits.
//!
//! - `point.rs`: three linear rows that make two anchors meet, solved as one
//!   3×3 block (Jolt's `PointConstraintPart`);
//! - `dual_axis.rs`: two linear rows perpendicular to an axis, a 2×2 block
//!   (the slider's; `DualAxisConstraintPart`);
//! - `rotation.rs`: three angular rows that lock the relative orientation
//!   (`RotationEulerConstraintPart`);
//! - `hinge_rotation.rs`: two angular rows that keep two axes aligned
//!   (`HingeRotationConstraintPart`);
//! - `axis_row.rs`: one general row (a linear axis and angular parts on
//!   both sides) with impulse bounds, a target velocity and a spring: every
//!   limit, motor and friction row (`AxisConstraintPart`,
//!   `AngleConstraintPart`, `SpringPart`).
//!
//! Sign convention (the contact rows' own): a row measures B relative to
//! A, `J v = n·(v_b − v_a) + j_b·ω_b − j_a·ω_a`, and an impulse `λ` along
//! it pushes B by `+λ` and A by `−λ`. Every part keeps a per-lane mask of
//! the lanes it is used in: lanes where it is off keep their velocities
//! (and impulses) untouched, and a bundle whose lanes all leave a part off
//! skips it.
//!
//! Velocity rows have no position bias: drift is corrected by the position
//! iterations after integration, each part pushing a fraction `baumgarte`
//! of its error (Jolt's `SolvePositionConstraint`).

pub(crate) mod axis_row;
pub(crate) mod block2;
pub(crate) mod dual_axis;
pub(crate) mod hinge_rotation;
pub(crate) mod point;
pub(crate) mod rotation;

use crate::solver::bodies::PairVelocity;
use crate::solver::poses::{keep_q, turn, PairPose};
use archipelago_simd::{Lane, Real, LANES, M3, V3};
use bytemuck::{Pod, Zeroable};

/// One value per lane.
pub(crate) type Row = [f32; LANES];
/// A vector per lane, by component.
pub(crate) type Row3 = [Row; 3];

/// A matrix per lane, by columns.
pub(crate) type Rows33 = [Row3; 3];

#[inline(always)]
pub(crate) fn load_m3<L: Lane>(l: L, c: &Rows33) -> M3<L::R> {
    M3 {
        x_axis: l.load3(&c[0]),
        y_axis: l.load3(&c[1]),
        z_axis: l.load3(&c[2]),
    }
}

#[inline(always)]
pub(crate) fn store_m3<L: Lane>(l: L, c: &mut Rows33, m: M3<L::R>) {
    l.store3(&mut c[0], m.x_axis);
    l.store3(&mut c[1], m.y_axis);
    l.store3(&mut c[2], m.z_axis);
}

/// Both bodies' inverse masses and world inverse inertias, as the bundle
/// stores them (taken at the step's start, as for contacts).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct MassRows {
    pub inv_mass_a: Row,
    pub inv_mass_b: Row,
    pub ia: Rows33,
    pub ib: Rows33,
}

/// [`MassRows`] loaded.
#[derive(Clone, Copy)]
pub(crate) struct Masses<R: Real> {
    pub ima: R,
    pub imb: R,
    pub ia: M3<R>,
    pub ib: M3<R>,
    /// Which sides move (positive inverse mass).
    pub dyn_a: R::Mask,
    pub dyn_b: R::Mask,
}

impl<R: Real> Masses<R> {
    #[inline(always)]
    pub fn load<L: Lane<R = R>>(l: L, m: &MassRows) -> Self {
        let (ima, imb) = (l.load(&m.inv_mass_a), l.load(&m.inv_mass_b));
        Masses {
            ima,
            imb,
            ia: load_m3(l, &m.ia),
            ib: load_m3(l, &m.ib),
            dyn_a: ima.gt(R::zero()),
            dyn_b: imb.gt(R::zero()),
        }
    }
}

/// Mask `a` where `m` holds, else `b`.
#[inline(always)]
pub(crate) fn select_mask<R: Real>(m: R::Mask, a: R::Mask, b: R::Mask) -> R::Mask {
    R::or(R::and(m, a), R::and(R::not(m), b))
}

/// `x` limited to `[lo, hi]` with selects (a NaN stays NaN for the
/// integration's check to find, as the contact rows' clamp).
#[inline(always)]
pub(crate) fn clamp<R: Real>(x: R, lo: R, hi: R) -> R {
    let x = R::select(x.lt(lo), lo, x);
    R::select(x.gt(hi), hi, x)
}

/// The largest correction one position push of a joint row makes: a gap
/// (m) of the point and slider blocks, a row's error (m, or rad for the
/// angle rows) times the joint Baumgarte factor. Box2D caps its joints the
/// same way (`b2_maxLinearCorrection`, 0.2 m): an anchor kilometres from
/// where it should be (a teleported body, an absurd anchor) is closed over
/// many steps instead of flinging both bodies in one, which with a lever
/// arm of 1e6 m drove them non-finite. Joints within 0.2 m / 0.35 = 0.57 m
/// of their target (every joint in normal use) never meet the cap.
pub(crate) const MAX_POSITION_CORRECTION: f32 = 0.2;

/// The factor that shortens a correction of squared length `len2` to at
/// most [`MAX_POSITION_CORRECTION`] (1 where it is shorter).
#[inline(always)]
pub(crate) fn correction_scale<R: Real>(len2: R) -> R {
    let cap = R::splat(MAX_POSITION_CORRECTION);
    R::select(len2.gt(cap * cap), cap / len2.sqrt(), R::splat(1.0))
}

/// A 2×2 symmetric `[[a, b], [b, d]]` inverted, as `(a', b', d')`, and
/// whether it was invertible (well conditioned relative to its diagonal).
#[inline(always)]
pub(crate) fn inverse_sym2<R: Real>(a: R, b: R, d: R) -> (R, R, R, R::Mask) {
    let det = a * d - b * b;
    let ok = R::and(det.gt(R::splat(1e-10) * a * d), det.finite());
    let inv = R::select(ok, R::splat(1.0) / det, R::zero());
    (d * inv, -b * inv, a * inv, ok)
}

/// A 3×3 (symmetric positive) `k` inverted, and whether it was invertible.
#[inline(always)]
pub(crate) fn inverse_3<R: Real>(k: &M3<R>) -> (M3<R>, R::Mask) {
    let scale = k.x_axis.x * k.y_axis.y * k.z_axis.z;
    let det = k.determinant();
    let inv = k.inverse();
    let ok = R::and(
        R::and(det.gt(R::splat(1e-12) * scale), det.gt(R::zero())),
        inv.finite(),
    );
    (inv, ok)
}

/// The pair velocity where `m` holds, else `old` (no blend at all when
/// `m` holds in every lane, as in a bundle of like constraints).
#[inline(always)]
pub(crate) fn keep<R: Real>(
    m: R::Mask,
    new: PairVelocity<R>,
    old: PairVelocity<R>,
) -> PairVelocity<R> {
    if R::all(m) {
        return new;
    }
    PairVelocity {
        va: V3::select(m, new.va, old.va),
        wa: V3::select(m, new.wa, old.wa),
        vb: V3::select(m, new.vb, old.vb),
        wb: V3::select(m, new.wb, old.wb),
    }
}

/// A row's impulse `lambda`: B by `+λ` along `n` and through `I_b j_b`, A
/// by `−λ` (in the lanes of `on`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply_row<R: Real>(
    v: &mut PairVelocity<R>,
    m: &Masses<R>,
    n: V3<R>,
    ia_ja: V3<R>,
    ib_jb: V3<R>,
    lambda: R,
    on: R::Mask,
) {
    let next = PairVelocity {
        va: v.va - n.scale(lambda * m.ima),
        wa: v.wa - ia_ja.scale(lambda),
        vb: v.vb + n.scale(lambda * m.imb),
        wb: v.wb + ib_jb.scale(lambda),
    };
    *v = keep(on, next, *v);
}

/// A linear impulse `p` at lever arms `ra`, `rb` (B gets `+p`).
#[inline(always)]
pub(crate) fn apply_linear<R: Real>(
    v: &mut PairVelocity<R>,
    m: &Masses<R>,
    ra: V3<R>,
    rb: V3<R>,
    p: V3<R>,
    on: R::Mask,
) {
    let next = PairVelocity {
        va: v.va - p.scale(m.ima),
        wa: v.wa - m.ia.mul_vec(ra.cross(p)),
        vb: v.vb + p.scale(m.imb),
        wb: v.wb + m.ib.mul_vec(rb.cross(p)),
    };
    *v = keep(on, next, *v);
}

/// An angular impulse `p` (B gets `+p`).
#[inline(always)]
pub(crate) fn apply_angular<R: Real>(
    v: &mut PairVelocity<R>,
    m: &Masses<R>,
    p: V3<R>,
    on: R::Mask,
) {
    let next = PairVelocity {
        va: v.va,
        wa: v.wa - m.ia.mul_vec(p),
        vb: v.vb,
        wb: v.wb + m.ib.mul_vec(p),
    };
    *v = keep(on, next, *v);
}

/// The position solve's counterparts: moves instead of velocity changes,
/// each side only where it is dynamic.
#[inline(always)]
pub(crate) fn push<R: Real>(
    pose: &mut PairPose<R>,
    m: &Masses<R>,
    dx: V3<R>,
    theta_a: V3<R>,
    theta_b: V3<R>,
    on: R::Mask,
) {
    let (move_a, move_b) = (R::and(on, m.dyn_a), R::and(on, m.dyn_b));
    pose.xa = V3::select(move_a, pose.xa - dx.scale(m.ima), pose.xa);
    pose.qa = keep_q(move_a, turn(pose.qa, -theta_a), pose.qa);
    pose.xb = V3::select(move_b, pose.xb + dx.scale(m.imb), pose.xb);
    pose.qb = keep_q(move_b, turn(pose.qb, theta_b), pose.qb);
}

/// `K = J M⁻¹ Jᵀ` of one row.
#[inline(always)]
pub(crate) fn row_inverse_mass<R: Real>(m: &Masses<R>, n: V3<R>, ja: V3<R>, jb: V3<R>) -> R {
    (m.ima + m.imb) * n.dot(n) + ja.dot(m.ia.mul_vec(ja)) + jb.dot(m.ib.mul_vec(jb))
}
