//! Three angular rows that lock the relative orientation (Jolt's
//! `RotationEulerConstraintPart`): `J v = ω_b − ω_a`, `K = I_a⁻¹ + I_b⁻¹`.
//! The position error is the rotation that takes frame A onto frame B in
//! world space, `E = W_b W_a⁻¹`, as the small rotation vector `2 E.xyz`
//! (with `E.w ≥ 0`). Used by fixed and slider joints.

use super::{apply_angular, inverse_3, load_m3, push, store_m3, Masses, Row, Rows33};
use crate::solver::bodies::PairVelocity;
use crate::solver::poses::PairPose;
use archipelago_simd::{Lane, Real, M3, Q4, V3};
use bytemuck::{Pod, Zeroable};

/// The block's prestep.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct RotationRows {
    pub on: Row,
    pub k_inv: Rows33,
}

/// Sets the block up in the lanes of `on`; returns where it is in use.
#[inline(always)]
pub(crate) fn prepare<L: Lane>(
    l: L,
    m: &Masses<L::R>,
    on: <L::R as Real>::Mask,
    p: &mut RotationRows,
) -> <L::R as Real>::Mask {
    let (k_inv, ok) = inverse_3(&m.ia.add(&m.ib));
    let on = L::R::and(on, ok);
    l.store(&mut p.on, L::R::select(on, L::R::splat(1.0), L::R::zero()));
    let k_inv = M3 {
        x_axis: V3::select(on, k_inv.x_axis, V3::zero()),
        y_axis: V3::select(on, k_inv.y_axis, V3::zero()),
        z_axis: V3::select(on, k_inv.z_axis, V3::zero()),
    };
    store_m3(l, &mut p.k_inv, k_inv);
    on
}

/// Applies the accumulated impulse (the warm start).
#[inline(always)]
pub(crate) fn warm_start<L: Lane>(
    l: L,
    p: &RotationRows,
    m: &Masses<L::R>,
    lambda: V3<L::R>,
    v: &mut PairVelocity<L::R>,
) {
    let on = l.load(&p.on).gt(L::R::zero());
    if L::R::any(on) {
        apply_angular(v, m, lambda, on);
    }
}

/// One pass: the angular impulse that stops the relative rotation.
#[inline(always)]
pub(crate) fn solve<L: Lane>(
    l: L,
    p: &RotationRows,
    m: &Masses<L::R>,
    lambda: &mut V3<L::R>,
    v: &mut PairVelocity<L::R>,
) {
    let on = l.load(&p.on).gt(L::R::zero());
    if !L::R::any(on) {
        return;
    }
    let d = load_m3(l, &p.k_inv).mul_vec(v.wa - v.wb);
    *lambda = V3::select(on, *lambda + d, *lambda);
    apply_angular(v, m, d, on);
}

/// The small rotation vector taking world frame `wa` onto `wb`.
#[inline(always)]
pub(crate) fn error<R: Real>(wa: Q4<R>, wb: Q4<R>) -> V3<R> {
    let e = wb * wa.conj();
    let e = e.negate_unless(e.w.ge(R::zero()));
    V3::new(e.x, e.y, e.z).scale(R::splat(2.0))
}

/// One position push of a fraction `beta` of the orientation error
/// between the joint's world frames `wa`, `wb` (at the current poses).
#[inline(always)]
pub(crate) fn solve_position<R: Real>(
    pose: &mut PairPose<R>,
    m: &Masses<R>,
    wa: Q4<R>,
    wb: Q4<R>,
    beta: R,
    on: R::Mask,
) {
    let (k_inv, ok) = inverse_3(&m.ia.add(&m.ib));
    let on = R::and(on, ok);
    let d = k_inv.mul_vec(error(wa, wb).scale(-beta));
    push(pose, m, V3::zero(), m.ia.mul_vec(d), m.ib.mul_vec(d), on);
}
