//! Box against box: separating-axis test over the 15 candidate axes, then
//! either face clipping (reference face vs incident face, Sutherland–Hodgman)
//! or the closest points of two edges.

use super::box_box_sat::{sat, Verdict};
use super::{ContactPoints, LocalPoints, MAX_POINTS};
use crate::math::{closest_segment_params, Mat3, Quat, Vec3};
use archipelago_simd::V3;

/// A face axis of B must beat A's best face by this much (m) to become the
/// reference, and an edge axis must beat the best face by [`EDGE_TOLERANCE`];
/// the bias keeps the chosen feature from flickering between steps when two
/// axes separate almost equally (resting stacks), which would break warm
/// starting.
pub(crate) const FACE_B_TOLERANCE: f32 = 0.005;
pub(crate) const EDGE_TOLERANCE: f32 = 0.01;

/// Cross products shorter than this come from (nearly) parallel edges and are
/// not separating-axis candidates: the face axes already cover that case.
pub(crate) const MIN_EDGE_AXIS: f32 = 1e-5;

/// Clipping a quadrilateral against four planes yields at most 8 vertices.
const MAX_CLIP: usize = 8;

struct Obb {
    c: Vec3,
    u: [Vec3; 3],
    h: [f32; 3],
}

impl Obb {
    fn new(c: Vec3, rot: Quat, h: Vec3) -> Self {
        let m = Mat3::from_quat(rot);
        Self {
            c,
            u: [m.x_axis, m.y_axis, m.z_axis],
            h: h.to_array(),
        }
    }
}

/// What the contact is built from: a face of A or of B (the reference
/// face), or edge `i` of A against edge `j` of B.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Feature {
    FaceA(usize),
    FaceB(usize),
    Edge(usize, usize),
}

/// Box A (centre, rotation, half extents) against box B. `feature` is
/// what the separating-axis test found touching where it already ran
/// elsewhere (the narrow phase's wide test); `None` runs it here.
#[allow(clippy::too_many_arguments)]
pub(crate) fn collide_box_box(
    feature: Option<Feature>,
    pa: Vec3,
    qa: Quat,
    ha: Vec3,
    pb: Vec3,
    qb: Quat,
    hb: Vec3,
    max_separation: f32,
) -> Option<ContactPoints> {
    let (a, b) = (Obb::new(pa, qa, ha), Obb::new(pb, qb, hb));
    let feature = match feature {
        Some(f) => f,
        None => separating_axes(&a, &b, max_separation)?,
    };
    contact(&a, &b, feature, b.c - a.c, max_separation)
}

fn contact(
    a: &Obb,
    b: &Obb,
    feature: Feature,
    d: Vec3,
    max_separation: f32,
) -> Option<ContactPoints> {
    match feature {
        Feature::FaceA(k) => face_contact(a, b, k, d, max_separation),
        Feature::FaceB(k) => face_contact(b, a, k, -d, max_separation).map(ContactPoints::flipped),
        Feature::Edge(i, j) => {
            let l = a.u[i].cross(b.u[j]);
            Some(edge_contact(a, b, i, j, l / l.length(), d))
        }
    }
}

/// Gottschalk's 15 axes; `None` when one separates the boxes by more than
/// `max_separation`, else the feature the contact is built from. This is
/// the `f32` instantiation of the wide test (`box_box_sat.rs`): one source,
/// so a pair gets the same verdict on either path. It tests every axis
/// (no early exit); the narrow phase sends its box pairs through the wide
/// test and comes here only for a job's last few.
fn separating_axes(a: &Obb, b: &Obb, max_separation: f32) -> Option<Feature> {
    let v = |p: Vec3| V3::new(p.x, p.y, p.z);
    let s = sat(
        v(a.c),
        a.u.map(v),
        a.h,
        v(b.c),
        b.u.map(v),
        b.h,
        max_separation,
    );
    match Verdict::choose(s.separated, s.best_a, s.best_b, s.best_edge) {
        Verdict::Separated => None,
        Verdict::Touching(f) => Some(f),
    }
}

/// Reference face `k` of box `r`, incident face on box `inc`; `d` is the
/// vector from `r`'s centre to `inc`'s. Normal points from `r` to `inc`.
fn face_contact(
    r: &Obb,
    inc: &Obb,
    k: usize,
    d: Vec3,
    max_separation: f32,
) -> Option<ContactPoints> {
    let n = if d.dot(r.u[k]) >= 0.0 {
        r.u[k]
    } else {
        -r.u[k]
    };

    // Incident face: the face of `inc` most anti-parallel to n.
    let mut m = 0;
    let mut best = -1.0;
    for j in 0..3 {
        let c = inc.u[j].dot(n).abs();
        if c > best {
            best = c;
            m = j;
        }
    }
    let inc_normal = if inc.u[m].dot(n) > 0.0 {
        -inc.u[m]
    } else {
        inc.u[m]
    };
    // The incident face's corners in the reference face's frame: x and y
    // along its two edges, z along n, origin at `r`'s centre. Clipping
    // against the side planes is then a compare on one coordinate.
    let (k1, k2) = ((k + 1) % 3, (k + 2) % 3);
    let frame = |v: Vec3| Vec3::new(v.dot(r.u[k1]), v.dot(r.u[k2]), v.dot(n));
    let face_c = frame(inc.c + inc_normal * inc.h[m] - r.c);
    let (m1, m2) = ((m + 1) % 3, (m + 2) % 3);
    let e1 = frame(inc.u[m1] * inc.h[m1]);
    let e2 = frame(inc.u[m2] * inc.h[m2]);
    let mut poly = [Vec3::ZERO; MAX_CLIP];
    poly[0] = face_c + e1 + e2;
    poly[1] = face_c - e1 + e2;
    poly[2] = face_c - e1 - e2;
    poly[3] = face_c + e1 - e2;
    let mut count = 4;

    // Clip against the four side planes of the reference face, from one
    // buffer into the other and back (copying the polygon back after each
    // plane stalled on store forwarding). An incident face that lies
    // within the reference face (a box resting on a bigger one) passes
    // every plane unchanged, so it skips them.
    let inside = poly[..4]
        .iter()
        .all(|v| v.x.abs() <= r.h[k1] && v.y.abs() <= r.h[k2]);
    let mut spare = [Vec3::ZERO; MAX_CLIP];
    if !inside {
        let (hx, hy) = (r.h[k1], r.h[k2]);
        count = clip_polygon(&poly[..count], &mut spare, |v| v.x - hx);
        count = clip_polygon(&spare[..count], &mut poly, |v| -v.x - hx);
        count = clip_polygon(&poly[..count], &mut spare, |v| v.y - hy);
        count = clip_polygon(&spare[..count], &mut poly, |v| -v.y - hy);
        if count == 0 {
            return None;
        }
    }

    // Keep the clipped points below the reference face (within the
    // speculative distance), paired with their projection onto it.
    let mut pts = [(Vec3::ZERO, 0.0f32); MAX_CLIP];
    let mut kept = 0;
    for &v in &poly[..count] {
        let sep = v.z - r.h[k];
        if sep <= max_separation {
            pts[kept] = (v, sep);
            kept += 1;
        }
    }
    if kept == 0 {
        return None;
    }
    let chosen = reduce_to_four(&pts[..kept], Vec3::Z);
    let world = |x: f32, y: f32, z: f32| r.c + r.u[k1] * x + r.u[k2] * y + n * z;
    // In the reference box's own frame a point of the face frame is a
    // permutation of its coordinates (z along `n`, the sign of `n` on axis
    // `k`); the incident box's frame is three dot products away.
    let z_sign = if n == r.u[k] { 1.0 } else { -1.0 };
    let own = |x: f32, y: f32, z: f32| {
        let mut p = [0.0; 3];
        p[k1] = x;
        p[k2] = y;
        p[k] = z_sign * z;
        Vec3::from_array(p)
    };
    let mut local = LocalPoints {
        on_a: [Vec3::ZERO; MAX_POINTS],
        on_b: [Vec3::ZERO; MAX_POINTS],
        separation: [0.0; MAX_POINTS],
    };
    let mut out = ContactPoints::new(n);
    for &idx in chosen.iter().flatten() {
        let (v, sep) = pts[idx];
        let on_inc = world(v.x, v.y, v.z);
        let rel = on_inc - inc.c;
        let i = out.count;
        local.on_a[i] = own(v.x, v.y, r.h[k]);
        local.on_b[i] = Vec3::new(rel.dot(inc.u[0]), rel.dot(inc.u[1]), rel.dot(inc.u[2]));
        local.separation[i] = sep;
        out.push(world(v.x, v.y, r.h[k]), on_inc);
    }
    out.local = Some(local);
    Some(out)
}

/// Sutherland–Hodgman in the reference face's frame: writes to `out` the
/// part of `poly` where `dist(p) <= 0` (a side plane's signed distance),
/// returns its vertex count.
#[inline(always)]
fn clip_polygon(poly: &[Vec3], out: &mut [Vec3; MAX_CLIP], dist: impl Fn(Vec3) -> f32) -> usize {
    let n = poly.len();
    if n == 0 {
        return 0;
    }
    let mut n_out = 0;
    // Edges (p, q) in order, the last one closing the polygon.
    let d0 = dist(poly[0]);
    let (mut p, mut dp) = (poly[0], d0);
    for i in 0..n {
        let (q, dq) = if i + 1 < n {
            (poly[i + 1], dist(poly[i + 1]))
        } else {
            (poly[0], d0)
        };
        if dp <= 0.0 && n_out < MAX_CLIP {
            out[n_out] = p;
            n_out += 1;
        }
        let crosses = (dp < 0.0 && dq > 0.0) || (dp > 0.0 && dq < 0.0);
        if crosses && n_out < MAX_CLIP {
            out[n_out] = p + (q - p) * (dp / (dp - dq));
            n_out += 1;
        }
        (p, dp) = (q, dq);
    }
    n_out
}

/// Picks at most four of the candidate points that keep the contact area:
/// the deepest, the farthest from it, then the two that span the largest
/// triangles on either side of that diagonal.
fn reduce_to_four(pts: &[(Vec3, f32)], n: Vec3) -> [Option<usize>; MAX_POINTS] {
    let mut chosen = [None; MAX_POINTS];
    if pts.len() <= MAX_POINTS {
        for (i, c) in chosen.iter_mut().enumerate().take(pts.len()) {
            *c = Some(i);
        }
        return chosen;
    }
    // First index of the largest score.
    fn argmax(n: usize, score: impl Fn(usize) -> f32) -> (f32, usize) {
        let mut best = (f32::NEG_INFINITY, 0);
        for i in 0..n {
            let s = score(i);
            if s > best.0 {
                best = (s, i);
            }
        }
        best
    }
    let n_pts = pts.len();
    let i0 = argmax(n_pts, |i| -pts[i].1).1;
    let p0 = pts[i0].0;
    let i1 = argmax(n_pts, |i| (pts[i].0 - p0).length_squared()).1;
    let p1 = pts[i1].0;
    let mut areas = [0.0f32; MAX_CLIP];
    for (a, p) in areas.iter_mut().zip(pts) {
        *a = (p1 - p0).cross(p.0 - p0).dot(n);
    }
    let (a2, i2) = argmax(n_pts, |i| areas[i]);
    let (a3, i3) = argmax(n_pts, |i| -areas[i]);
    chosen[0] = Some(i0);
    chosen[1] = (i1 != i0).then_some(i1);
    chosen[2] = (a2 > 0.0).then_some(i2);
    chosen[3] = (a3 > 0.0).then_some(i3);
    chosen
}

/// Edge `i` of A against edge `j` of B along axis `l` (unit, any sign).
fn edge_contact(a: &Obb, b: &Obb, i: usize, j: usize, l: Vec3, d: Vec3) -> ContactPoints {
    let l = if d.dot(l) < 0.0 { -l } else { l };
    // Support edge of A along +l and of B along -l.
    let mut ca = a.c;
    for k in (0..3).filter(|&k| k != i) {
        ca += a.u[k] * (a.h[k] * a.u[k].dot(l).signum());
    }
    let mut cb = b.c;
    for k in (0..3).filter(|&k| k != j) {
        cb -= b.u[k] * (b.h[k] * b.u[k].dot(l).signum());
    }
    let (ea, eb) = (a.u[i] * a.h[i], b.u[j] * b.h[j]);
    let (s, t) = closest_segment_params(ca - ea, ca + ea, cb - eb, cb + eb);
    let pa = ca - ea + ea * (2.0 * s);
    let pb = cb - eb + eb * (2.0 * t);
    let mut out = ContactPoints::new(l);
    out.push(pa, pb);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_resting_on_floor_gets_four_points() {
        let c = collide_box_box(
            None,
            Vec3::new(0.0, -1.0, 0.0),
            Quat::IDENTITY,
            Vec3::new(50.0, 1.0, 50.0),
            Vec3::new(3.0, 0.49, -2.0),
            Quat::from_rotation_y(0.3),
            Vec3::splat(0.5),
            0.02,
        )
        .unwrap();
        assert_eq!(c.count, 4);
        assert!((c.normal - Vec3::Y).length() < 1e-6);
        for k in 0..4 {
            assert!((c.separation(k) + 0.01).abs() < 1e-5);
            assert!((c.on_a[k].y).abs() < 1e-5, "point on the floor's top face");
        }
    }

    #[test]
    fn offset_stacked_cubes_clip_to_the_overlap() {
        // pyramid layout: upper cube offset by half a cube in x and z
        let c = collide_box_box(
            None,
            Vec3::new(0.0, 1.0, 0.0),
            Quat::IDENTITY,
            Vec3::ONE,
            Vec3::new(1.0, 3.0, 1.0),
            Quat::IDENTITY,
            Vec3::ONE,
            0.02,
        )
        .unwrap();
        assert_eq!(c.count, 4);
        let mut xs: Vec<f32> = (0..4).map(|k| c.on_b[k].x).collect();
        xs.sort_by(f32::total_cmp);
        assert!((xs[0] - 0.0).abs() < 1e-5 && (xs[3] - 1.0).abs() < 1e-5);
        for k in 0..4 {
            assert!(c.separation(k).abs() < 1e-5);
        }
    }

    #[test]
    fn separated_beyond_speculative_distance_is_none() {
        assert!(collide_box_box(
            None,
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::ONE,
            Vec3::new(2.05, 0.0, 0.0),
            Quat::IDENTITY,
            Vec3::ONE,
            0.02
        )
        .is_none());
        let c = collide_box_box(
            None,
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::ONE,
            Vec3::new(2.01, 0.0, 0.0),
            Quat::IDENTITY,
            Vec3::ONE,
            0.02,
        )
        .unwrap();
        assert!((c.separation(0) - 0.01).abs() < 1e-5);
    }

    #[test]
    fn crossed_edges_touch_at_one_point() {
        // B rotated 45° about x and about y resting its edge across A's edge
        let qb = Quat::from_rotation_x(core::f32::consts::FRAC_PI_4);
        let qa = Quat::from_rotation_z(core::f32::consts::FRAC_PI_4);
        let s2 = 2f32.sqrt();
        let c = collide_box_box(
            None,
            Vec3::ZERO,
            qa,
            Vec3::ONE,
            Vec3::new(0.0, 2.0 * s2 - 0.05, 0.0),
            qb,
            Vec3::ONE,
            0.02,
        )
        .unwrap();
        assert_eq!(c.count, 1);
        assert!((c.normal - Vec3::Y).length() < 1e-4, "{:?}", c.normal);
        assert!((c.separation(0) + 0.05).abs() < 1e-4, "{}", c.separation(0));
        assert!((c.on_a[0] - Vec3::new(0.0, s2, 0.0)).length() < 1e-3);
    }

    #[test]
    fn reduction_keeps_deepest_and_spread() {
        // Octagon of candidate points: four survive, the deepest among them.
        let n = Vec3::Y;
        let pts: Vec<(Vec3, f32)> = (0..8)
            .map(|i| {
                let a = i as f32 * core::f32::consts::TAU / 8.0;
                (
                    Vec3::new(a.cos(), 0.0, a.sin()),
                    if i == 5 { -0.2 } else { -0.1 },
                )
            })
            .collect();
        let chosen = reduce_to_four(&pts, n);
        let idx: Vec<usize> = chosen.iter().flatten().copied().collect();
        assert_eq!(idx.len(), 4);
        assert!(idx.contains(&5));
        assert!(idx.contains(&1), "opposite of the deepest");
    }
}
