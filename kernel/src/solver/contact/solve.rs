//! The contact rows' velocity solve, written once over [`Lane`]: `One(l)`
//! solves lane `l` of a bundle (the scalar reference, and every sequential
//! run: the non-parallel split, small islands), `Wide` solves all lanes of
//! a bundle at once (a parallel split's bundle, whose lanes share no
//! dynamic body). Each lane of the wide path computes exactly what the
//! scalar path computes for it: branches are selects, point loops run over
//! all points with a mask, and every operation is the scalar one.
//!
//! Per manifold, friction first (two tangent rows at the centre of the
//! points, then the twist row about the normal), clamped by μ times the
//! sum of the normal impulses of the previous iteration (Jolt's order: the
//! rows solved last hold best), then the non-penetration rows: the face
//! block where it gives no pulling point, else one Gauss–Seidel pass.

use super::batch::{ContactImpulses, ContactPrestep, POINTS};
use super::prepare::block_arms;
use crate::solver::bodies::PairVelocity;
use crate::solver::parts::{keep, load_m3};
use archipelago_simd::{Lane, Real, V3};

/// Impulse `lambda` along `dir` through a row's inertia-weighted lever
/// arms `ia`, `ib` (the scalar solver's `PairVelocity::apply`).
#[inline(always)]
fn apply<R: Real>(
    v: &mut PairVelocity<R>,
    dir: V3<R>,
    ia: V3<R>,
    ib: V3<R>,
    ima: R,
    imb: R,
    lambda: R,
) {
    v.va -= dir.scale(lambda * ima);
    v.wa -= ia.scale(lambda);
    v.vb += dir.scale(lambda * imb);
    v.wb += ib.scale(lambda);
}

/// Angular impulse `lambda` through `ia`, `ib`.
#[inline(always)]
fn apply_angular<R: Real>(v: &mut PairVelocity<R>, ia: V3<R>, ib: V3<R>, lambda: R) {
    v.wa -= ia.scale(lambda);
    v.wb += ib.scale(lambda);
}

/// Relative velocity of B with respect to A along a row.
#[inline(always)]
fn row_velocity<R: Real>(axis: V3<R>, ra_x: V3<R>, rb_x: V3<R>, v: &PairVelocity<R>) -> R {
    axis.dot(v.vb - v.va) + rb_x.dot(v.wb) - ra_x.dot(v.wa)
}

/// Whether point `k` exists in the lane.
#[inline(always)]
fn has_point<R: Real>(count: R, k: usize) -> R::Mask {
    count.gt(R::splat(k as f32))
}

/// Applies last step's impulses (iteration 0 of the velocity solve).
// Inlined whole into each stage's loop per instruction set (`dispatch.rs`).
// In the unit-test build, one out-of-line copy per lane type instead, which
// the property tests then share with the step rather than compiling their
// own (those copies were a third of that build; the bits are the same).
#[cfg_attr(not(test), inline(always))]
#[cfg_attr(test, inline(never))]
pub(crate) fn warm_start<L: Lane>(
    l: L,
    p: &ContactPrestep,
    imp: &ContactImpulses,
    v: &mut PairVelocity<L::R>,
) {
    let n = l.load3(&p.normal);
    let (ima, imb) = (l.load(&p.inv_mass_a), l.load(&p.inv_mass_b));
    // every row's lever arms are turned by these here (see `ContactPrestep`)
    let (ia, ib) = (load_m3(l, &p.ia), load_m3(l, &p.ib));
    let count = l.load(&p.count);
    for k in 0..POINTS {
        let row = &p.points[k];
        let mut next = *v;
        apply(
            &mut next,
            n,
            ia.mul_vec(l.load3(&row.ra_x)),
            ib.mul_vec(l.load3(&row.rb_x)),
            ima,
            imb,
            l.load(&imp.normal[k]),
        );
        *v = keep(has_point(count, k), next, *v);
    }
    for (r, t) in [(0, &p.tangent1), (1, &p.tangent2)] {
        let row = &p.friction_rows[r];
        apply(
            v,
            l.load3(t),
            ia.mul_vec(l.load3(&row.ra_x)),
            ib.mul_vec(l.load3(&row.rb_x)),
            ima,
            imb,
            l.load(&imp.friction[r]),
        );
    }
    apply_angular(v, ia.mul_vec(n), ib.mul_vec(n), l.load(&imp.twist));
}

/// `x` limited to `[-max, max]`: `f32::clamp`'s body without its
/// assertion, which panics on a NaN bound (a NaN must reach the
/// integration's check, `quarantine.rs`, not abort the step).
#[inline(always)]
fn clamp_to<R: Real>(x: R, max: R) -> R {
    let x = R::select(x.lt(-max), -max, x);
    R::select(x.gt(max), max, x)
}

/// One Gauss–Seidel pass over a bundle's (or one lane's) rows.
// Inlined whole into each stage's loop per instruction set (`dispatch.rs`).
// In the unit-test build, one out-of-line copy per lane type instead, which
// the property tests then share with the step rather than compiling their
// own (those copies were a third of that build; the bits are the same).
#[cfg_attr(not(test), inline(always))]
#[cfg_attr(test, inline(never))]
pub(crate) fn solve<L: Lane>(
    l: L,
    p: &ContactPrestep,
    imp: &mut ContactImpulses,
    v: &mut PairVelocity<L::R>,
) {
    let zero = L::R::zero();
    let n = l.load3(&p.normal);
    let (t1, t2) = (l.load3(&p.tangent1), l.load3(&p.tangent2));
    let (ima, imb) = (l.load(&p.inv_mass_a), l.load(&p.inv_mass_b));
    let (ia, ib) = (load_m3(l, &p.ia), load_m3(l, &p.ib));
    let count = l.load(&p.count);
    let mut normal = [zero; POINTS];
    for (k, n) in normal.iter_mut().enumerate() {
        *n = l.load(&imp.normal[k]);
    }

    // Friction: the sum of the points' normal impulses, in point order.
    let mut normal_sum = normal[0];
    for (k, &nk) in normal.iter().enumerate().skip(1) {
        normal_sum = L::R::select(has_point(count, k), normal_sum + nk, normal_sum);
    }
    let max = l.load(&p.friction) * normal_sum;
    let [r1, r2] = &p.friction_rows;
    let (i1, i2) = (l.load(&imp.friction[0]), l.load(&imp.friction[1]));
    let (r1_ra, r1_rb) = (l.load3(&r1.ra_x), l.load3(&r1.rb_x));
    let (r2_ra, r2_rb) = (l.load3(&r2.ra_x), l.load3(&r2.rb_x));
    let l1 = i1 - l.load(&r1.mass) * row_velocity(t1, r1_ra, r1_rb, v);
    let l2 = i2 - l.load(&r2.mass) * row_velocity(t2, r2_ra, r2_rb, v);
    let len2 = l1 * l1 + l2 * l2;
    let over = len2.gt(max * max);
    let s = L::R::select(len2.gt(zero), max / len2.sqrt(), zero);
    let (l1, l2) = (
        L::R::select(over, l1 * s, l1),
        L::R::select(over, l2 * s, l2),
    );
    l.store(&mut imp.friction[0], l1);
    l.store(&mut imp.friction[1], l2);
    apply(
        v,
        t1,
        ia.mul_vec(r1_ra),
        ib.mul_vec(r1_rb),
        ima,
        imb,
        l1 - i1,
    );
    apply(
        v,
        t2,
        ia.mul_vec(r2_ra),
        ib.mul_vec(r2_rb),
        ima,
        imb,
        l2 - i2,
    );

    let tw_mass = l.load(&p.twist_mass);
    let radius = l.load(&p.twist_radius);
    let twist = L::R::and(tw_mass.gt(zero), radius.gt(zero));
    if L::R::any(twist) {
        let it = l.load(&imp.twist);
        let max_twist = max * radius;
        let w_rel = n.dot(v.wb - v.wa);
        let total = clamp_to(it - tw_mass * w_rel, max_twist);
        let total = L::R::select(twist, total, it);
        l.store(&mut imp.twist, total);
        let mut next = *v;
        apply_angular(&mut next, ia.mul_vec(n), ib.mul_vec(n), total - it);
        *v = keep(twist, next, *v);
    }

    // Non-penetration: the face block where it holds, else Gauss–Seidel.
    let b = &p.block;
    let has_block = l.load(&b.has).gt(zero);
    let mut block_done = L::R::and(has_block, has_block);
    if L::R::any(has_block) {
        let (va, wa, vb, wb) = (v.va, v.wa, v.vb, v.wb);
        let dw = wb - wa;
        let (ra_x, rb_x) = (l.load3(&b.ra_x), l.load3(&b.rb_x));
        let u = V3::new(
            n.dot(vb - va) + rb_x.dot(wb) - ra_x.dot(wa),
            -t2.dot(dw),
            t1.dot(dw),
        );
        let k3 = load_m3(l, &b.k3_inv);
        let df = k3.mul_vec(l.load3(&b.u_target) - u);
        let f = l.load3(&imp.block_f) + df;
        let mut lambda = [zero; POINTS];
        for (k, lk) in lambda.iter_mut().enumerate() {
            *lk = l.load3(&b.p[k]).dot(f);
            // a pulling point fails the block (NaN does not: as scalar)
            let pulls = L::R::and(has_point(count, k), lk.lt(zero));
            block_done = L::R::and(block_done, L::R::not(pulls));
        }
        if L::R::any(block_done) {
            for (k, (nk, &lk)) in normal.iter_mut().zip(&lambda).enumerate() {
                let set = L::R::and(block_done, has_point(count, k));
                *nk = L::R::select(set, lk, *nk);
            }
            let old_f = l.load3(&imp.block_f);
            l.store3(&mut imp.block_f, V3::select(block_done, f, old_f));
            let arms = block_arms(&ia, &ib, ra_x, rb_x, t1, t2);
            let mut next = *v;
            next.va -= n.scale(df.x * ima);
            next.vb += n.scale(df.x * imb);
            next.wa += arms.ia_t2.scale(df.y) - arms.ia_t1.scale(df.z) - arms.ia_ra_x.scale(df.x);
            next.wb += arms.ib_rb_x.scale(df.x) - arms.ib_t2.scale(df.y) + arms.ib_t1.scale(df.z);
            *v = keep(block_done, next, *v);
        }
    }
    // (padding lanes, no points, need neither)
    let gauss_seidel = L::R::and(L::R::not(block_done), count.gt(zero));
    if L::R::any(gauss_seidel) {
        for (k, (row, nk)) in p.points.iter().zip(normal.iter_mut()).enumerate() {
            let active = L::R::and(gauss_seidel, has_point(count, k));
            let (ra_x, rb_x) = (l.load3(&row.ra_x), l.load3(&row.rb_x));
            let vn = row_velocity(n, ra_x, rb_x, v);
            let total = (*nk + l.load(&row.mass) * (l.load(&row.target) - vn)).max(zero);
            let mut next = *v;
            apply(
                &mut next,
                n,
                ia.mul_vec(ra_x),
                ib.mul_vec(rb_x),
                ima,
                imb,
                total - *nk,
            );
            *v = keep(active, next, *v);
            *nk = L::R::select(active, total, *nk);
        }
        // The block's reduced impulse follows the points it did not solve.
        let refit = L::R::and(has_block, gauss_seidel);
        if L::R::any(refit) {
            let mut f = V3::zero();
            for (k, &nk) in normal.iter().enumerate() {
                let next = f + l.load3(&p.block_a_cols[k]).scale(nk);
                f = V3::select(has_point(count, k), next, f);
            }
            let old_f = l.load3(&imp.block_f);
            l.store3(&mut imp.block_f, V3::select(refit, f, old_f));
        }
    }
    for (k, &nk) in normal.iter().enumerate() {
        l.store(&mut imp.normal[k], nk);
    }
}
