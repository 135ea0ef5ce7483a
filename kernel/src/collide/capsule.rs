use super::ContactPoints;
use crate::math::{closest_point_on_segment, closest_segment_params, rotate, Quat, Vec3};

/// Segments whose directions agree to better than this (|cos|) are treated as
/// parallel and get a two-point manifold, so a capsule lying on another does
/// not rock on a single point.
const PARALLEL_COS: f32 = 0.98;

/// A capsule lying on a box face gets two points when its axis is within this
/// (|sin| of the tilt, i.e. |axis · normal|) of the face plane.
const FACE_PARALLEL_SIN: f32 = 0.1;

/// Capsule A (segment `pa–qa`, radius `ra`) against capsule B.
pub(crate) fn collide_capsule_capsule(
    pa: Vec3,
    qa: Vec3,
    ra: f32,
    pb: Vec3,
    qb: Vec3,
    rb: f32,
    max_separation: f32,
) -> Option<ContactPoints> {
    let (s, t) = closest_segment_params(pa, qa, pb, qb);
    let ca = pa + (qa - pa) * s;
    let cb = pb + (qb - pb) * t;
    let d = cb - ca;
    let dist = d.length();
    if dist - ra - rb > max_separation {
        return None;
    }
    let da = qa - pa;
    let db = qb - pb;
    let n = if dist > 1e-6 {
        d / dist
    } else {
        // Axes intersect: the normal is perpendicular to both (or to A alone).
        let c = da.cross(db);
        if c.length_squared() > 1e-12 {
            c.normalize()
        } else {
            crate::math::perpendicular(da.normalize_or(Vec3::Y))
        }
    };
    let mut out = ContactPoints::new(n);
    let la = da.length();
    let lb = db.length();
    if la > 1e-6 && lb > 1e-6 && (da.dot(db) / (la * lb)).abs() > PARALLEL_COS {
        // Overlap of B's projection onto A's segment: two points at its ends.
        let t0 = (pb - pa).dot(da) / (la * la);
        let t1 = (qb - pa).dot(da) / (la * la);
        let lo = t0.min(t1).max(0.0);
        let hi = t0.max(t1).min(1.0);
        if hi - lo > 1e-4 {
            for u in [lo, hi] {
                let on_axis_a = pa + da * u;
                let on_axis_b = closest_point_on_segment(pb, qb, on_axis_a);
                let a = on_axis_a + n * ra;
                let b = on_axis_b - n * rb;
                if (b - a).dot(n) <= max_separation {
                    out.push(a, b);
                }
            }
            if out.count > 0 {
                return Some(out);
            }
        }
    }
    out.push(ca + n * ra, cb - n * rb);
    Some(out)
}

/// Signed distance from `p` to a box of half extents `h` at the origin
/// (negative inside). Convex in `p`.
fn box_signed_distance(p: Vec3, h: Vec3) -> f32 {
    let q = p.abs() - h;
    q.max(Vec3::ZERO).length() + q.max_element().min(0.0)
}

/// Capsule A (segment `p–q`, radius `r`) against box B.
///
/// The signed distance from a point to a box is convex, so along the capsule's
/// segment it has a single minimum: a golden-section search finds the
/// deepest (or closest) point of the segment exactly, for any overlap, without
/// special cases for the 26 box features. The box feature there gives the
/// normal; if that feature is a face and the capsule lies along it, the
/// segment is clipped to the face for a two-point manifold.
pub(crate) fn collide_capsule_box(
    p: Vec3,
    q: Vec3,
    r: f32,
    pb: Vec3,
    qb: Quat,
    h: Vec3,
    max_separation: f32,
) -> Option<ContactPoints> {
    const GOLDEN_ITERATIONS: usize = 48; // 0.618^48 ≈ 1e-10 of the segment
    let inv = qb.inverse();
    let a = rotate(inv, p - pb);
    let b = rotate(inv, q - pb);
    let d = b - a;
    let f = |t: f32| box_signed_distance(a + d * t, h);
    let g = 0.618_034_f32;
    let (mut lo, mut hi) = (0.0f32, 1.0f32);
    let mut x1 = hi - g * (hi - lo);
    let mut x2 = lo + g * (hi - lo);
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..GOLDEN_ITERATIONS {
        if f1 <= f2 {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = f(x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = f(x2);
        }
    }
    // The minimum may sit at an end of the segment: compare with the ends.
    let mut t = 0.5 * (lo + hi);
    for end in [0.0, 1.0] {
        if f(end) < f(t) {
            t = end;
        }
    }
    let c = a + d * t;
    let clamped = c.clamp(-h, h);
    let delta = c - clamped;
    let dist2 = delta.length_squared();
    // Outward box normal at the closest feature (local), signed distance.
    let (n_local, dist, face_axis) = if dist2 > 1e-12 {
        let dist = dist2.sqrt();
        let n = delta / dist;
        let axis = (0..3).find(|&k| n[k].abs() > 1.0 - 1e-5);
        (n, dist, axis)
    } else {
        let depth = h - c.abs();
        let k = if depth.x <= depth.y && depth.x <= depth.z {
            0
        } else if depth.y <= depth.z {
            1
        } else {
            2
        };
        let mut n = Vec3::ZERO;
        n[k] = if c[k] < 0.0 { -1.0 } else { 1.0 };
        (n, -depth[k], Some(k))
    };
    if dist - r > max_separation {
        return None;
    }
    let normal = -rotate(qb, n_local); // from capsule (A) to box (B)
    let mut out = ContactPoints::new(normal);
    let seg_len = d.length();
    if let Some(k) = face_axis {
        if seg_len > 1e-6 && (d.dot(n_local) / seg_len).abs() < FACE_PARALLEL_SIN {
            // Clip the segment's parameter range to the face rectangle.
            let (mut t0, mut t1) = (0.0f32, 1.0f32);
            for j in (0..3).filter(|&j| j != k) {
                if d[j].abs() < 1e-9 {
                    if a[j].abs() > h[j] {
                        t1 = -1.0; // entirely outside this slab
                    }
                    continue;
                }
                let u0 = (-h[j] - a[j]) / d[j];
                let u1 = (h[j] - a[j]) / d[j];
                t0 = t0.max(u0.min(u1));
                t1 = t1.min(u0.max(u1));
            }
            if t1 - t0 > 1e-4 {
                let sign = n_local[k];
                for u in [t0, t1] {
                    let s = a + d * u;
                    let mut on_face = s;
                    on_face[k] = sign * h[k];
                    let sep = (s[k] - on_face[k]) * sign - r;
                    if sep <= max_separation {
                        out.push(pb + rotate(qb, s - n_local * r), pb + rotate(qb, on_face));
                    }
                }
                if out.count > 0 {
                    return Some(out);
                }
            }
        }
    }
    out.push(
        pb + rotate(qb, c - n_local * r),
        pb + rotate(qb, clamped_or_face(c, clamped, n_local, dist, h)),
    );
    Some(out)
}

/// The box point paired with segment point `c`: the clamped point when `c` is
/// outside, the projection onto the exit face when inside.
fn clamped_or_face(c: Vec3, clamped: Vec3, n_local: Vec3, dist: f32, h: Vec3) -> Vec3 {
    if dist > 0.0 {
        clamped
    } else {
        let mut on_face = c;
        for k in 0..3 {
            if n_local[k] != 0.0 {
                on_face[k] = n_local[k] * h[k];
            }
        }
        on_face
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_capsules_get_two_points() {
        let c = collide_capsule_capsule(
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            0.5,
            Vec3::new(-0.5, 0.95, 0.0),
            Vec3::new(1.5, 0.95, 0.0),
            0.5,
            0.02,
        )
        .unwrap();
        assert_eq!(c.count, 2);
        assert!((c.normal - Vec3::Y).length() < 1e-5);
        for k in 0..2 {
            assert!((c.separation(k) + 0.05).abs() < 1e-5);
        }
    }

    #[test]
    fn crossed_capsules_one_point() {
        let c = collide_capsule_capsule(
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            0.5,
            Vec3::new(0.0, 0.9, -1.0),
            Vec3::new(0.0, 0.9, 1.0),
            0.5,
            0.02,
        )
        .unwrap();
        assert_eq!(c.count, 1);
        assert!((c.separation(0) + 0.1).abs() < 1e-5);
    }

    #[test]
    fn capsule_lying_on_box_gets_two_points_at_exact_depth() {
        // capsule axis along x, 0.03 into a box top face at y = 0
        let h = Vec3::new(2.0, 0.5, 2.0);
        let c = collide_capsule_box(
            Vec3::new(-0.7, 0.97, 0.1),
            Vec3::new(0.7, 0.97, 0.1),
            0.5,
            Vec3::new(0.0, 0.0, 0.0),
            Quat::IDENTITY,
            h,
            0.02,
        )
        .unwrap();
        assert_eq!(c.count, 2);
        assert!((c.normal + Vec3::Y).length() < 1e-5);
        for k in 0..2 {
            assert!((c.separation(k) + 0.03).abs() < 1e-4, "{}", c.separation(k));
        }
    }

    #[test]
    fn standing_capsule_on_box_and_tilted_box_edge() {
        let h = Vec3::splat(1.0);
        // upright capsule resting on its lower cap, 0.01 deep
        let c = collide_capsule_box(
            Vec3::new(0.0, 1.49, 0.0),
            Vec3::new(0.0, 2.49, 0.0),
            0.5,
            Vec3::ZERO,
            Quat::IDENTITY,
            h,
            0.02,
        )
        .unwrap();
        assert_eq!(c.count, 1);
        assert!((c.separation(0) + 0.01).abs() < 1e-4);
        // capsule near a rotated box's edge: separation equals the true distance
        let qb = Quat::from_rotation_z(core::f32::consts::FRAC_PI_4);
        let edge_y = 2f32.sqrt();
        let c = collide_capsule_box(
            Vec3::new(0.0, edge_y + 0.51, -1.0),
            Vec3::new(0.0, edge_y + 0.51, 1.0),
            0.5,
            Vec3::ZERO,
            qb,
            h,
            0.02,
        )
        .unwrap();
        assert!((c.separation(0) - 0.01).abs() < 1e-4, "{}", c.separation(0));
        assert!(collide_capsule_box(
            Vec3::new(0.0, edge_y + 0.6, -1.0),
            Vec3::new(0.0, edge_y + 0.6, 1.0),
            0.5,
            Vec3::ZERO,
            qb,
            h,
            0.02
        )
        .is_none());
    }
}
