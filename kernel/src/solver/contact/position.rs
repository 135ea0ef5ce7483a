//! The position solve of one contact (after integration): Baumgarte
//! pushes on every point, along the constraint's normal, re-evaluated from
//! the manifold's body-local points at the current poses; poses move,
//! velocities do not.

use super::batch::ContactPrestep;
use super::prepare::axis_row;
use crate::body::Bodies;
use crate::disjoint::Disjoint;
use crate::math::{Quat, Vec3};
use crate::narrowphase::Manifold;
use crate::settings::PhysicsSettings;
use archipelago_simd::{M3, V3};

/// Poses during the position solve: dynamic bodies' in the solver's
/// arrays (written by several workers at disjoint bodies), the others read
/// from the bodies.
pub(crate) struct Poses<'a> {
    pub pos: Disjoint<'a, Vec3>,
    pub rot: Disjoint<'a, Quat>,
    pub bodies: &'a Bodies,
}

/// Baumgarte pushes on every point of the contact in lane `lane`.
///
/// # Safety
/// No other thread touches the constraint's dynamic bodies during the call.
pub(crate) unsafe fn solve_position(
    p: &ContactPrestep,
    lane: usize,
    m: &Manifold,
    poses: &Poses,
    s: &PhysicsSettings,
) {
    let (a, b) = (m.pair.a as usize, m.pair.b as usize);
    let (ima, imb) = (p.inv_mass_a[lane], p.inv_mass_b[lane]);
    let (dyn_a, dyn_b) = (ima > 0.0, imb > 0.0);
    // SAFETY: dynamic bodies are this call's alone (caller).
    let pose = |i: usize, dynamic: bool| unsafe {
        if dynamic {
            (poses.pos.get(i), poses.rot.get(i))
        } else {
            (poses.bodies.pos(i), poses.bodies.rot(i))
        }
    };
    let (ia, ib) = (poses.bodies.inv_inertia(a), poses.bodies.inv_inertia(b));
    let n = Vec3::new(p.normal[0][lane], p.normal[1][lane], p.normal[2][lane]);
    for k in 0..p.count[lane] as usize {
        let (xa, qa) = pose(a, dyn_a);
        let (xb, qb) = pose(b, dyn_b);
        let pa = xa + qa * m.local_a[k];
        let pb = xb + qb * m.local_b[k];
        let separation = (pb - pa).dot(n) + s.penetration_slop;
        if separation >= 0.0 {
            continue;
        }
        let error = separation.max(-s.max_penetration_distance);
        let mid = 0.5 * (pa + pb);
        let axis = axis_row(
            v3(mid - xa),
            v3(mid - xb),
            v3(n),
            ima,
            imb,
            &m3(ia),
            &m3(ib),
        );
        let lambda = -s.baumgarte * error * axis.mass;
        // SAFETY: dynamic bodies are this call's alone (caller).
        unsafe {
            if dyn_a {
                poses.pos.set(a, xa - n * (lambda * ima));
                let q = Quat::from_scaled_axis(-vec3(axis.ia_ra_x) * lambda) * qa;
                poses.rot.set(a, q.normalize());
            }
            if dyn_b {
                poses.pos.set(b, xb + n * (lambda * imb));
                let q = Quat::from_scaled_axis(vec3(axis.ib_rb_x) * lambda) * qb;
                poses.rot.set(b, q.normalize());
            }
        }
    }
}

fn v3(v: Vec3) -> V3<f32> {
    V3::new(v.x, v.y, v.z)
}

fn vec3(v: V3<f32>) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

fn m3(m: crate::math::Mat3) -> M3<f32> {
    M3 {
        x_axis: v3(m.x_axis),
        y_axis: v3(m.y_axis),
        z_axis: v3(m.z_axis),
    }
}

/// Whether lane `lane` holds a contact (padding lanes have no points).
#[inline]
pub(crate) fn lane_used(p: &ContactPrestep, lane: usize) -> bool {
    p.count[lane] > 0.0
}
