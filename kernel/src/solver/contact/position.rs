//! The position solve of contacts (after integration), written once over
//! [`Lane`]: Baumgarte pushes on every point along the constraint's
//! normal, re-evaluated from the manifold's body-local points at the
//! current poses; poses move, velocities do not.
//!
//! A push turns a body by `θ = I⁻¹ (r × n) λ`, applied to its rotation to
//! first order (`poses.rs`: [`turn`]).

use super::batch::{ContactPrestep, PositionPrestep, POINTS};
use super::prepare::axis_row;
use crate::settings::PhysicsSettings;
use crate::solver::parts::load_m3;
use crate::solver::poses::{keep_q, turn, PairPose};
use archipelago_simd::{Lane, Real, V3};

/// Baumgarte pushes on every point of a bundle's (or one lane's) contacts.
// Inlined whole into each stage's loop per instruction set (`dispatch.rs`).
// In the unit-test build, one out-of-line copy per lane type instead, which
// the property tests then share with the step rather than compiling their
// own (those copies were a third of that build; the bits are the same).
#[cfg_attr(not(test), inline(always))]
#[cfg_attr(test, inline(never))]
pub(crate) fn solve_position<L: Lane>(
    l: L,
    p: &ContactPrestep,
    pp: &PositionPrestep,
    pose: &mut PairPose<L::R>,
    s: &PhysicsSettings,
) {
    let zero = L::R::zero();
    let n = l.load3(&p.normal);
    let (ima, imb) = (l.load(&p.inv_mass_a), l.load(&p.inv_mass_b));
    let (dyn_a, dyn_b) = (ima.gt(zero), imb.gt(zero));
    let (ia, ib) = (load_m3(l, &p.ia), load_m3(l, &p.ib));
    let count = l.load(&p.count);
    let slop = L::R::splat(s.penetration_slop);
    let deepest = L::R::splat(-s.max_penetration_distance);
    let push = L::R::splat(-s.baumgarte);
    let half = L::R::splat(0.5);
    for k in 0..POINTS {
        let PairPose { xa, qa, xb, qb } = *pose;
        let pa = xa + qa.rotate(l.load3(&pp.local_a[k]));
        let pb = xb + qb.rotate(l.load3(&pp.local_b[k]));
        let separation = (pb - pa).dot(n) + slop;
        let active = L::R::and(count.gt(L::R::splat(k as f32)), separation.lt(zero));
        if !L::R::any(active) {
            continue;
        }
        let error = separation.max(deepest);
        let mid = (pa + pb).scale(half);
        let axis = axis_row(mid - xa, mid - xb, n, ima, imb, &ia, &ib);
        let lambda = push * error * axis.mass;
        let move_a = L::R::and(active, dyn_a);
        let move_b = L::R::and(active, dyn_b);
        pose.xa = V3::select(move_a, xa - n.scale(lambda * ima), xa);
        pose.qa = keep_q(move_a, turn(qa, -axis.ia_ra_x.scale(lambda)), qa);
        pose.xb = V3::select(move_b, xb + n.scale(lambda * imb), xb);
        pose.qb = keep_q(move_b, turn(qb, axis.ib_rb_x.scale(lambda)), qb);
    }
}

/// Whether lane `lane` holds a contact (padding lanes have no points).
#[inline]
pub(crate) fn lane_used(p: &ContactPrestep, lane: usize) -> bool {
    p.count[lane] > 0.0
}

#[cfg(test)]
mod tests {
    use crate::math::{Quat, Vec3};
    use crate::solver::poses::turn;
    use archipelago_simd::{Q4, V3};

    /// The first-order turn of a unit quaternion is a rotation by about
    /// |θ| about θ (to second order), and stays unit.
    #[test]
    fn turn_is_a_small_rotation() {
        let q = Quat::from_rotation_y(0.7) * Quat::from_rotation_x(-0.3);
        let theta = Vec3::new(0.01, -0.02, 0.005);
        let t = turn(
            Q4 {
                x: q.x,
                y: q.y,
                z: q.z,
                w: q.w,
            },
            V3::new(theta.x, theta.y, theta.z),
        );
        let t = Quat::from_xyzw(t.x, t.y, t.z, t.w);
        assert!((t.length() - 1.0).abs() < 1e-6);
        let exact = Quat::from_scaled_axis(theta) * q;
        assert!(t.angle_between(exact) < 1e-4, "{t} vs {exact}");
    }
}
