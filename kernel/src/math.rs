//! Scalar math types (re-exported from `glam`) and the few helpers the
//! narrow phase and solver share.

use archipelago_simd::{Q4, V3};
pub use glam::{Mat3, Quat, Vec3};

/// `q v q*` for a unit `q`. The kernel rotates with this, never glam's
/// `Quat * Vec3`: glam fuses two multiply-adds of that product where it is
/// compiled with FMA (`-C target-cpu=native` on most machines), so the
/// same scene would give different bits from different builds. This is the
/// wide solver's [`Q4::rotate`] on one lane: one source, no FMA anywhere.
#[inline(always)]
pub fn rotate(q: Quat, v: Vec3) -> Vec3 {
    let q = Q4 {
        x: q.x,
        y: q.y,
        z: q.z,
        w: q.w,
    };
    let r = q.rotate(V3::new(v.x, v.y, v.z));
    Vec3::new(r.x, r.y, r.z)
}

/// The rotation `a` after `b` (`a * b`), by the Hamilton product term for
/// term as glam's scalar path computes it, never fused (see [`rotate`]).
#[inline(always)]
pub fn quat_mul(a: Quat, b: Quat) -> Quat {
    let (x0, y0, z0, w0) = (a.x, a.y, a.z, a.w);
    let (x1, y1, z1, w1) = (b.x, b.y, b.z, b.w);
    Quat::from_xyzw(
        w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1,
        w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1,
        w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1,
        w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1,
    )
}

/// A unit vector perpendicular to `n` (unit), chosen deterministically from
/// `n` alone (Jolt's `GetNormalizedPerpendicular`).
#[inline]
pub fn perpendicular(n: Vec3) -> Vec3 {
    if n.x.abs() > n.y.abs() {
        Vec3::new(n.z, 0.0, -n.x) / (n.x * n.x + n.z * n.z).sqrt()
    } else {
        Vec3::new(0.0, n.z, -n.y) / (n.y * n.y + n.z * n.z).sqrt()
    }
}

/// World inverse inertia `R · diag(inv_local) · Rᵀ`.
#[inline]
pub fn world_inverse_inertia(rot: Quat, inv_local: Vec3) -> Mat3 {
    let r = Mat3::from_quat(rot);
    r * Mat3::from_diagonal(inv_local) * r.transpose()
}

/// Closest points between segments `p1–q1` and `p2–q2` (Ericson, Real-Time
/// Collision Detection 5.1.9). Returns the parameters `(s, t)` in [0, 1].
pub fn closest_segment_params(p1: Vec3, q1: Vec3, p2: Vec3, q2: Vec3) -> (f32, f32) {
    const EPS: f32 = 1e-12;
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let a = d1.dot(d1);
    let e = d2.dot(d2);
    let f = d2.dot(r);
    if a <= EPS && e <= EPS {
        return (0.0, 0.0);
    }
    if a <= EPS {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e <= EPS {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    let mut s = if denom > EPS * a * e {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, t)
}

/// Closest point on segment `a–b` to `p`.
#[inline]
pub fn closest_point_on_segment(a: Vec3, b: Vec3, p: Vec3) -> Vec3 {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 <= 1e-12 {
        return a;
    }
    a + ab * ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perpendicular_is_unit_and_orthogonal() {
        for n in [
            Vec3::X,
            Vec3::Y,
            Vec3::Z,
            Vec3::new(1.0, 2.0, -3.0).normalize(),
        ] {
            let t = perpendicular(n);
            assert!((t.length() - 1.0).abs() < 1e-6);
            assert!(t.dot(n).abs() < 1e-6);
        }
    }

    #[test]
    fn crossing_segments_meet_at_their_midpoints() {
        let (s, t) = closest_segment_params(
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, -1.0),
            Vec3::new(0.0, 1.0, 1.0),
        );
        assert!((s - 0.5).abs() < 1e-6 && (t - 0.5).abs() < 1e-6);
    }
}
