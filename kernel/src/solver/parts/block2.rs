//! Two rows solved together as one 2×2 block: the slider's two linear
//! rows perpendicular to its axis (`dual_axis.rs`) and the hinge's two
//! angular rows (`hinge_rotation.rs`) are both this, with their own
//! Jacobians. Solving the pair at once (Jolt's `DualAxisConstraintPart`,
//! `HingeRotationConstraintPart`) converges where two coupled single rows
//! would fight.

use super::{correction_scale, inverse_sym2, push, row_inverse_mass, Masses, Row, Row3};
use crate::solver::bodies::PairVelocity;
use crate::solver::poses::PairPose;
use archipelago_simd::{Lane, Real, V3};
use bytemuck::{Pod, Zeroable};

/// Row `i`'s Jacobian: a linear axis (zero for angular rows) and both
/// sides' angular parts.
#[derive(Clone, Copy)]
pub(crate) struct Jacobian<R> {
    pub n: V3<R>,
    pub ja: V3<R>,
    pub jb: V3<R>,
}

/// The block's prestep.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct Block2Rows {
    pub on: Row,
    pub n: [Row3; 2],
    pub ja: [Row3; 2],
    pub jb: [Row3; 2],
    /// `K⁻¹` as `(k11, k12, k22)`.
    pub k_inv: [Row; 3],
}

#[inline(always)]
fn k_inverse<R: Real>(m: &Masses<R>, j: &[Jacobian<R>; 2]) -> (R, R, R, R::Mask) {
    let k11 = row_inverse_mass(m, j[0].n, j[0].ja, j[0].jb);
    let k22 = row_inverse_mass(m, j[1].n, j[1].ja, j[1].jb);
    let k12 = (m.ima + m.imb) * j[0].n.dot(j[1].n)
        + j[0].ja.dot(m.ia.mul_vec(j[1].ja))
        + j[0].jb.dot(m.ib.mul_vec(j[1].jb));
    inverse_sym2(k11, k12, k22)
}

/// Sets the block up in the lanes of `on`; returns where it is in use.
#[inline(always)]
pub(crate) fn prepare<L: Lane>(
    l: L,
    m: &Masses<L::R>,
    j: &[Jacobian<L::R>; 2],
    on: <L::R as Real>::Mask,
    p: &mut Block2Rows,
) -> <L::R as Real>::Mask {
    let (a, b, d, ok) = k_inverse(m, j);
    let on = L::R::and(on, ok);
    let zero = L::R::zero();
    let z3 = V3::zero();
    l.store(&mut p.on, L::R::select(on, L::R::splat(1.0), zero));
    for (i, ji) in j.iter().enumerate() {
        l.store3(&mut p.n[i], V3::select(on, ji.n, z3));
        l.store3(&mut p.ja[i], V3::select(on, ji.ja, z3));
        l.store3(&mut p.jb[i], V3::select(on, ji.jb, z3));
    }
    for (r, x) in p.k_inv.iter_mut().zip([a, b, d]) {
        l.store(r, L::R::select(on, x, zero));
    }
    on
}

/// The velocity change of impulses `(l1, l2)` on both rows.
#[inline(always)]
fn apply<R: Real>(
    v: &mut PairVelocity<R>,
    m: &Masses<R>,
    j: &[Jacobian<R>; 2],
    l1: R,
    l2: R,
    on: R::Mask,
) {
    let n = j[0].n.scale(l1) + j[1].n.scale(l2);
    let ja = j[0].ja.scale(l1) + j[1].ja.scale(l2);
    let jb = j[0].jb.scale(l1) + j[1].jb.scale(l2);
    super::apply_row(
        v,
        m,
        n,
        m.ia.mul_vec(ja),
        m.ib.mul_vec(jb),
        R::splat(1.0),
        on,
    );
}

#[inline(always)]
fn load<L: Lane>(l: L, p: &Block2Rows) -> [Jacobian<L::R>; 2] {
    core::array::from_fn(|i| Jacobian {
        n: l.load3(&p.n[i]),
        ja: l.load3(&p.ja[i]),
        jb: l.load3(&p.jb[i]),
    })
}

/// Applies the accumulated impulses `lambda` (the warm start).
#[inline(always)]
pub(crate) fn warm_start<L: Lane>(
    l: L,
    p: &Block2Rows,
    m: &Masses<L::R>,
    lambda: [L::R; 2],
    v: &mut PairVelocity<L::R>,
) {
    let on = l.load(&p.on).gt(L::R::zero());
    if L::R::any(on) {
        apply(v, m, &load(l, p), lambda[0], lambda[1], on);
    }
}

/// One pass: the impulses that zero both rows' velocities.
#[inline(always)]
pub(crate) fn solve<L: Lane>(
    l: L,
    p: &Block2Rows,
    m: &Masses<L::R>,
    lambda: &mut [L::R; 2],
    v: &mut PairVelocity<L::R>,
) {
    let on = l.load(&p.on).gt(L::R::zero());
    if !L::R::any(on) {
        return;
    }
    let j = load(l, p);
    let jv = |j: &Jacobian<L::R>| j.n.dot(v.vb - v.va) + j.jb.dot(v.wb) - j.ja.dot(v.wa);
    let (c1, c2) = (-jv(&j[0]), -jv(&j[1]));
    let (a, b, d) = (
        l.load(&p.k_inv[0]),
        l.load(&p.k_inv[1]),
        l.load(&p.k_inv[2]),
    );
    let (d1, d2) = (a * c1 + b * c2, b * c1 + d * c2);
    lambda[0] = L::R::select(on, lambda[0] + d1, lambda[0]);
    lambda[1] = L::R::select(on, lambda[1] + d2, lambda[1]);
    apply(v, m, &j, d1, d2, on);
}

/// One position push of a fraction `beta` of the errors `c` of rows `j`
/// (built at the current poses).
#[inline(always)]
pub(crate) fn solve_position<R: Real>(
    pose: &mut PairPose<R>,
    m: &Masses<R>,
    j: &[Jacobian<R>; 2],
    c: [R; 2],
    beta: R,
    on: R::Mask,
) {
    let (a, b, d, ok) = k_inverse(m, j);
    let on = R::and(on, ok);
    let (c1, c2) = (-beta * c[0], -beta * c[1]);
    let s = correction_scale(c1 * c1 + c2 * c2);
    let (c1, c2) = (c1 * s, c2 * s);
    let (d1, d2) = (a * c1 + b * c2, b * c1 + d * c2);
    let dx = j[0].n.scale(d1) + j[1].n.scale(d2);
    let ta = m.ia.mul_vec(j[0].ja.scale(d1) + j[1].ja.scale(d2));
    let tb = m.ib.mul_vec(j[0].jb.scale(d1) + j[1].jb.scale(d2));
    push(pose, m, dx, ta, tb, on);
}
