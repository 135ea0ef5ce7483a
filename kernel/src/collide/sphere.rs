use super::ContactPoints;
use crate::math::{closest_point_on_segment, rotate, Quat, Vec3};

/// Sphere A against sphere B.
pub(crate) fn collide_sphere_sphere(
    ca: Vec3,
    ra: f32,
    cb: Vec3,
    rb: f32,
    max_separation: f32,
) -> Option<ContactPoints> {
    let d = cb - ca;
    let dist = d.length();
    if dist - ra - rb > max_separation {
        return None;
    }
    // Coincident centres: any direction is as good; pick +Y (deterministic).
    let n = if dist > 1e-6 { d / dist } else { Vec3::Y };
    let mut c = ContactPoints::new(n);
    c.push(ca + n * ra, cb - n * rb);
    Some(c)
}

/// Sphere A against capsule B (segment `p–q`, radius `rb`).
pub(crate) fn collide_sphere_capsule(
    ca: Vec3,
    ra: f32,
    p: Vec3,
    q: Vec3,
    rb: f32,
    max_separation: f32,
) -> Option<ContactPoints> {
    let closest = closest_point_on_segment(p, q, ca);
    collide_sphere_sphere(ca, ra, closest, rb, max_separation)
}

/// Sphere A against box B (centre `pb`, rotation `qb`, half extents `h`).
pub(crate) fn collide_sphere_box(
    ca: Vec3,
    ra: f32,
    pb: Vec3,
    qb: Quat,
    h: Vec3,
    max_separation: f32,
) -> Option<ContactPoints> {
    let local = rotate(qb.inverse(), ca - pb);
    let clamped = local.clamp(-h, h);
    let delta = local - clamped;
    let dist2 = delta.length_squared();
    let (box_point, out_normal_local, dist) = if dist2 > 1e-12 {
        // Centre outside: closest point on the surface is the clamped point.
        let dist = dist2.sqrt();
        (clamped, delta / dist, dist)
    } else {
        // Centre inside: push out through the nearest face.
        let depth = h - local.abs();
        let axis = if depth.x <= depth.y && depth.x <= depth.z {
            0
        } else if depth.y <= depth.z {
            1
        } else {
            2
        };
        let sign = if local[axis] < 0.0 { -1.0 } else { 1.0 };
        let mut n = Vec3::ZERO;
        n[axis] = sign;
        let mut on_face = local;
        on_face[axis] = sign * h[axis];
        (on_face, n, -depth[axis])
    };
    if dist - ra > max_separation {
        return None;
    }
    // Normal from sphere (A) to box (B) is against the box's outward normal.
    let n = -rotate(qb, out_normal_local);
    let mut c = ContactPoints::new(n);
    c.push(ca + n * ra, pb + rotate(qb, box_point));
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spheres_touching_report_exact_separation() {
        let c =
            collide_sphere_sphere(Vec3::ZERO, 1.0, Vec3::new(1.9, 0.0, 0.0), 1.0, 0.02).unwrap();
        assert!((c.normal - Vec3::X).length() < 1e-6);
        assert!((c.separation(0) + 0.1).abs() < 1e-5);
        assert!(
            collide_sphere_sphere(Vec3::ZERO, 1.0, Vec3::new(2.03, 0.0, 0.0), 1.0, 0.02).is_none()
        );
        // within the speculative distance: a contact with positive separation
        let s =
            collide_sphere_sphere(Vec3::ZERO, 1.0, Vec3::new(2.01, 0.0, 0.0), 1.0, 0.02).unwrap();
        assert!((s.separation(0) - 0.01).abs() < 1e-5);
    }

    #[test]
    fn sphere_on_box_face_edge_and_inside() {
        let h = Vec3::new(1.0, 1.0, 1.0);
        // resting on top face, 0.05 deep
        let c = collide_sphere_box(
            Vec3::new(0.3, 1.45, 0.0),
            0.5,
            Vec3::ZERO,
            Quat::IDENTITY,
            h,
            0.02,
        )
        .unwrap();
        assert!((c.normal + Vec3::Y).length() < 1e-6);
        assert!((c.separation(0) + 0.05).abs() < 1e-5);
        // near an edge: normal along the diagonal
        let c = collide_sphere_box(
            Vec3::new(1.3, 1.3, 0.0),
            0.5,
            Vec3::ZERO,
            Quat::IDENTITY,
            h,
            0.02,
        )
        .unwrap();
        let diag = -Vec3::new(1.0, 1.0, 0.0).normalize();
        assert!((c.normal - diag).length() < 1e-5);
        // centre inside, nearest face is +x
        let c = collide_sphere_box(
            Vec3::new(0.8, 0.0, 0.1),
            0.5,
            Vec3::ZERO,
            Quat::IDENTITY,
            h,
            0.02,
        )
        .unwrap();
        assert!((c.normal + Vec3::X).length() < 1e-6);
        assert!((c.separation(0) + 0.7).abs() < 1e-5);
    }
}
