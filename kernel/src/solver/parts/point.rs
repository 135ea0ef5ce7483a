//! Three linear rows that make two anchors meet, solved as one 3×3 block
//! (Jolt's `PointConstraintPart`): `C = p_b − p_a`, and the impulse that
//! zeroes the anchors' relative velocity in one step is `K⁻¹ (−J v)` with
//! `K = (m_a⁻¹ + m_b⁻¹) E + [r_a]× I_a⁻¹ [r_a]×ᵀ + [r_b]× I_b⁻¹ [r_b]×ᵀ`.
//! Used by fixed, point, hinge and swing-twist joints.

use super::{
    apply_linear, correction_scale, inverse_3, load_m3, push, store_m3, Masses, Row, Row3, Rows33,
};
use crate::solver::bodies::PairVelocity;
use crate::solver::poses::PairPose;
use archipelago_simd::{Lane, Real, M3, V3};
use bytemuck::{Pod, Zeroable};

/// The block's prestep.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct PointRows {
    /// 1 where the lane uses the block.
    pub on: Row,
    /// World lever arms from each centre of mass to its anchor.
    pub ra: Row3,
    pub rb: Row3,
    pub k_inv: Rows33,
}

/// `[r]× S [r]×ᵀ` for a symmetric `S`: column `j` is `r × (S (e_j × r))`.
#[inline(always)]
fn sandwich<R: Real>(r: V3<R>, s: &M3<R>) -> M3<R> {
    let z = R::zero();
    let col = |e_x_r: V3<R>| r.cross(s.mul_vec(e_x_r));
    M3 {
        x_axis: col(V3::new(z, -r.z, r.y)),
        y_axis: col(V3::new(r.z, z, -r.x)),
        z_axis: col(V3::new(-r.y, r.x, z)),
    }
}

/// `K` of the block and its inverse, and where it is invertible.
#[inline(always)]
fn effective_mass<R: Real>(m: &Masses<R>, ra: V3<R>, rb: V3<R>) -> (M3<R>, R::Mask) {
    let z = R::zero();
    let s = m.ima + m.imb;
    let diag = M3 {
        x_axis: V3::new(s, z, z),
        y_axis: V3::new(z, s, z),
        z_axis: V3::new(z, z, s),
    };
    let k = diag.add(&sandwich(ra, &m.ia)).add(&sandwich(rb, &m.ib));
    inverse_3(&k)
}

/// Sets the block up at lever arms `ra`, `rb` in the lanes of `on`.
#[inline(always)]
pub(crate) fn prepare<L: Lane>(
    l: L,
    m: &Masses<L::R>,
    ra: V3<L::R>,
    rb: V3<L::R>,
    on: <L::R as Real>::Mask,
    p: &mut PointRows,
) -> <L::R as Real>::Mask {
    let (k_inv, ok) = effective_mass(m, ra, rb);
    let on = L::R::and(on, ok);
    let zero = L::R::zero();
    l.store(&mut p.on, L::R::select(on, L::R::splat(1.0), zero));
    l.store3(&mut p.ra, V3::select(on, ra, V3::zero()));
    l.store3(&mut p.rb, V3::select(on, rb, V3::zero()));
    let k_inv = M3 {
        x_axis: V3::select(on, k_inv.x_axis, V3::zero()),
        y_axis: V3::select(on, k_inv.y_axis, V3::zero()),
        z_axis: V3::select(on, k_inv.z_axis, V3::zero()),
    };
    store_m3(l, &mut p.k_inv, k_inv);
    on
}

/// Whether any lane uses the block, and where.
#[inline(always)]
fn lanes<L: Lane>(l: L, p: &PointRows) -> <L::R as Real>::Mask {
    l.load(&p.on).gt(L::R::zero())
}

/// Applies the accumulated impulse (the warm start).
#[inline(always)]
pub(crate) fn warm_start<L: Lane>(
    l: L,
    p: &PointRows,
    m: &Masses<L::R>,
    lambda: V3<L::R>,
    v: &mut PairVelocity<L::R>,
) {
    let on = lanes(l, p);
    if L::R::any(on) {
        apply_linear(v, m, l.load3(&p.ra), l.load3(&p.rb), lambda, on);
    }
}

/// One pass: the impulse that stops the anchors' relative motion.
#[inline(always)]
pub(crate) fn solve<L: Lane>(
    l: L,
    p: &PointRows,
    m: &Masses<L::R>,
    lambda: &mut V3<L::R>,
    v: &mut PairVelocity<L::R>,
) {
    let on = lanes(l, p);
    if !L::R::any(on) {
        return;
    }
    let (ra, rb) = (l.load3(&p.ra), l.load3(&p.rb));
    let jv = (v.vb + v.wb.cross(rb)) - (v.va + v.wa.cross(ra));
    let d = load_m3(l, &p.k_inv).mul_vec(-jv);
    *lambda = V3::select(on, *lambda + d, *lambda);
    apply_linear(v, m, ra, rb, d, on);
}

/// One position push: a fraction `beta` of the anchors' gap, at the
/// current poses (body-local anchors `la`, `lb`).
#[inline(always)]
pub(crate) fn solve_position<R: Real>(
    pose: &mut PairPose<R>,
    m: &Masses<R>,
    la: V3<R>,
    lb: V3<R>,
    beta: R,
    on: R::Mask,
) {
    let ra = pose.qa.rotate(la);
    let rb = pose.qb.rotate(lb);
    let c = (pose.xb + rb) - (pose.xa + ra);
    let (k_inv, ok) = effective_mass(m, ra, rb);
    let on = R::and(on, ok);
    let want = c.scale(beta);
    let want = want.scale(correction_scale(want.length_squared()));
    let d = k_inv.mul_vec(-want);
    let (ta, tb) = (m.ia.mul_vec(ra.cross(d)), m.ib.mul_vec(rb.cross(d)));
    push(pose, m, d, ta, tb, on);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{world_inverse_inertia, Mat3, Quat, Vec3};

    fn v(g: Vec3) -> V3<f32> {
        V3::new(g.x, g.y, g.z)
    }

    /// The block is `J M⁻¹ Jᵀ` of the three rows along the world axes.
    #[test]
    fn k_matches_the_rows_it_blocks() {
        let ra = Vec3::new(0.3, -0.2, 0.5);
        let rb = Vec3::new(-0.1, 0.4, 0.2);
        let ia = world_inverse_inertia(Quat::from_rotation_x(0.3), Vec3::new(2.0, 3.0, 4.0));
        let ib = world_inverse_inertia(Quat::from_rotation_z(-0.7), Vec3::new(1.0, 0.5, 5.0));
        let m3 = |g: Mat3| M3 {
            x_axis: v(g.x_axis),
            y_axis: v(g.y_axis),
            z_axis: v(g.z_axis),
        };
        let m = Masses {
            ima: 0.5,
            imb: 0.25,
            ia: m3(ia),
            ib: m3(ib),
            dyn_a: true,
            dyn_b: true,
        };
        let (k_inv, ok) = effective_mass(&m, v(ra), v(rb));
        assert!(ok);
        let k_inv = Mat3::from_cols(
            Vec3::new(k_inv.x_axis.x, k_inv.x_axis.y, k_inv.x_axis.z),
            Vec3::new(k_inv.y_axis.x, k_inv.y_axis.y, k_inv.y_axis.z),
            Vec3::new(k_inv.z_axis.x, k_inv.z_axis.y, k_inv.z_axis.z),
        );
        for (i, ei) in [Vec3::X, Vec3::Y, Vec3::Z].into_iter().enumerate() {
            for (j, ej) in [Vec3::X, Vec3::Y, Vec3::Z].into_iter().enumerate() {
                let k = (0.75) * ei.dot(ej)
                    + ra.cross(ei).dot(ia * ra.cross(ej))
                    + rb.cross(ei).dot(ib * rb.cross(ej));
                let kij = k_inv.inverse().col(j)[i];
                assert!(
                    (k - kij).abs() < 1e-4 * k.abs().max(1.0),
                    "{i}{j}: {k} vs {kij}"
                );
            }
        }
    }
}
