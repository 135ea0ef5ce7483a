//! Box against box: separating-axis test over the 15 candidate axes, then
//! either face clipping (reference face vs incident face, Sutherland–Hodgman)
//! or the closest points of two edges.

use super::box_box_sat::{sat_of_boxes, Verdict};
use super::{ContactPoints, LocalPoints, MAX_POINTS};
use crate::math::{closest_segment_params, Mat3, Quat, Vec3};

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

/// The overlap of two convex quadrilaterals has at most 8 corners; the
/// clipper's candidates are bounded by 4 edges × 2 crossings + 4 corners
/// even where rounding adds one.
const MAX_CLIP: usize = 12;
/// A clip buffer: [`MAX_CLIP`] vertices and the slot past them that a
/// candidate not kept is written to.
const CLIP_BUFFER: usize = MAX_CLIP + 1;
/// An edge whose run across a slab is below this (m per edge) runs along it.
const PARALLEL_TO_SLAB: f32 = 1e-9;
/// `|e1 × e2|` (m²) below which the incident face has no area seen along
/// the reference normal.
const MIN_PROJECTED_AREA: f32 = 1e-12;

/// A box placed in the world: centre, axes (the rotation's columns, glam's
/// `Mat3::from_quat`), half extents.
pub(crate) struct Obb {
    pub c: Vec3,
    pub u: [Vec3; 3],
    pub h: [f32; 3],
}

impl Obb {
    pub fn new(c: Vec3, rot: Quat, h: Vec3) -> Self {
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

/// Box A (centre, rotation, half extents) against box B: the
/// separating-axis test (the `f32` instantiation of the wide one in
/// `box_box_sat.rs`: one source, so a pair gets the same verdict on either
/// path; every axis, no early exit), then the contact of the feature it
/// chose.
#[allow(clippy::too_many_arguments)]
pub(crate) fn collide_box_box(
    pa: Vec3,
    qa: Quat,
    ha: Vec3,
    pb: Vec3,
    qb: Quat,
    hb: Vec3,
    max_separation: f32,
) -> Option<ContactPoints> {
    let (a, b) = (Obb::new(pa, qa, ha), Obb::new(pb, qb, hb));
    let sat = sat_of_boxes(&a, &b, max_separation);
    match sat.verdict() {
        Verdict::Separated => None,
        Verdict::Touching(f) => contact_or_edge(&a, &b, &sat, f, max_separation),
    }
}

/// [`contact`] of the chosen feature, or of the best edge pair when a
/// face was chosen and its clipping kept no point. The face bias
/// ([`EDGE_TOLERANCE`]) picks a face even where the boxes overlap edge to
/// edge by less than the bias; there the incident face can lie wholly
/// outside the reference face's side planes, and without this the pair
/// would get no contact at all while the boxes interpenetrate (found by
/// the shape-cast tests: two boxes 2 mm deep edge to edge, no contact
/// even at 5 cm of speculative distance).
pub(crate) fn contact_or_edge(
    a: &Obb,
    b: &Obb,
    sat: &super::box_box_sat::Sat<f32>,
    feature: Feature,
    max_separation: f32,
) -> Option<ContactPoints> {
    let c = contact(a, b, feature, max_separation);
    if c.is_some() || matches!(feature, Feature::Edge(..)) {
        return c;
    }
    contact(a, b, sat.edge_feature()?, max_separation)
}

/// The contact of box A and box B from the `feature` the separating-axis
/// test chose (the narrow phase comes here after its wide test).
pub(crate) fn contact(
    a: &Obb,
    b: &Obb,
    feature: Feature,
    max_separation: f32,
) -> Option<ContactPoints> {
    let d = b.c - a.c;
    match feature {
        Feature::FaceA(k) => face_contact(a, b, k, d, max_separation),
        Feature::FaceB(k) => face_contact(b, a, k, -d, max_separation).map(ContactPoints::flipped),
        Feature::Edge(i, j) => {
            let l = a.u[i].cross(b.u[j]);
            edge_contact(a, b, i, j, l / l.length(), d, max_separation)
        }
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
    // Everything below is in the reference face's frame: x and y along its
    // two edges, z along the normal n, origin at `r`'s centre; clipping
    // against its side planes is then a compare on one coordinate. The
    // cosines between the two boxes' axes give every direction of `inc` in
    // that frame, so no vector is carried through world space.
    let (k1, k2) = ((k + 1) % 3, (k + 2) % 3);
    let cos: [[f32; 3]; 3] =
        core::array::from_fn(|i| core::array::from_fn(|j| r.u[i].dot(inc.u[j])));
    let toward = d.dot(r.u[k]);
    let s = if toward >= 0.0 { 1.0 } else { -1.0 };
    let n = r.u[k] * s;
    // `inc`'s axis j in the frame.
    let axis = |j: usize| Vec3::new(cos[k1][j], cos[k2][j], s * cos[k][j]);

    // Incident face: the face of `inc` most anti-parallel to n.
    let mut m = 0;
    let mut best = -1.0;
    for (j, c) in cos[k].iter().enumerate() {
        if c.abs() > best {
            best = c.abs();
            m = j;
        }
    }
    let out_of_inc = if s * cos[k][m] > 0.0 { -1.0 } else { 1.0 };
    let centre = Vec3::new(d.dot(r.u[k1]), d.dot(r.u[k2]), s * toward);
    let face_c = centre + axis(m) * (out_of_inc * inc.h[m]);
    let (m1, m2) = ((m + 1) % 3, (m + 2) % 3);
    let e1 = axis(m1) * inc.h[m1];
    let e2 = axis(m2) * inc.h[m2];
    let (hx, hy) = (r.h[k1], r.h[k2]);
    let mut poly = [Vec3::ZERO; CLIP_BUFFER];
    let count = clip_to_face(face_c, e1, e2, hx, hy, &mut poly);
    if count == 0 {
        return None;
    }

    // Keep the clipped points below the reference face (within the
    // speculative distance), paired with their projection onto it.
    let mut pts = [(Vec3::ZERO, 0.0f32); MAX_CLIP];
    let poly = &poly;
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
    // A point of the frame in `inc`'s own frame: its offset from `inc`'s
    // centre along each of `inc`'s axes.
    let r_in_inc = inc.u.map(|u| -d.dot(u));
    let on_inc = |v: Vec3| {
        let rel = |j: usize| r_in_inc[j] + cos[k1][j] * v.x + cos[k2][j] * v.y;
        Vec3::new(
            rel(0) + s * cos[k][0] * v.z,
            rel(1) + s * cos[k][1] * v.z,
            rel(2) + s * cos[k][2] * v.z,
        )
    };
    // In the reference box's own frame a point of the face frame is a
    // permutation of its coordinates (z along `n`, the sign of `n` on axis
    // `k`).
    let own = |x: f32, y: f32, z: f32| {
        let mut p = [0.0; 3];
        p[k1] = x;
        p[k2] = y;
        p[k] = s * z;
        Vec3::from_array(p)
    };
    let mut local = LocalPoints {
        on_a: [Vec3::ZERO; MAX_POINTS],
        on_b: [Vec3::ZERO; MAX_POINTS],
        separation: [0.0; MAX_POINTS],
    };
    let mut count = 0;
    for &idx in chosen.iter().flatten() {
        let (v, sep) = pts[idx];
        local.on_a[count] = own(v.x, v.y, r.h[k]);
        local.on_b[count] = on_inc(v);
        local.separation[count] = sep;
        count += 1;
    }
    Some(ContactPoints::local(n, count, local))
}

/// The corners of the overlap of the incident face and the reference face,
/// in the reference face's frame (x, y in its plane, z along its normal):
/// the incident face is the parallelogram `c ± e1 ± e2`, the reference
/// face the rectangle `|x| ≤ hx, |y| ≤ hy`. Writes them to `out` (in no
/// particular order; the reduction to four points needs none) and returns
/// how many.
///
/// The overlap of two convex quadrilaterals has as corners the incident
/// face's corners inside the rectangle, where its edges cross the
/// rectangle's sides, and the rectangle's corners inside the incident face.
/// Each incident edge is clipped to the rectangle at once (Liang–Barsky:
/// where it enters and leaves both slabs) instead of the whole polygon
/// plane after plane (Sutherland–Hodgman); a rectangle corner is inside
/// when its coordinates along `e1` and `e2` are within ±1, and its depth is
/// the incident face's there. Each candidate is stored at the output cursor
/// and the cursor advances past the ones kept: no branch on which side of
/// a side plane a corner falls.
fn clip_to_face(
    c: Vec3,
    e1: Vec3,
    e2: Vec3,
    hx: f32,
    hy: f32,
    out: &mut [Vec3; CLIP_BUFFER],
) -> usize {
    let corners = [c + e1 + e2, c - e1 + e2, c - e1 - e2, c + e1 - e2];
    let within = |v: &Vec3| v.x.abs() <= hx && v.y.abs() <= hy;
    // An incident face within the reference face (a box resting on a
    // bigger one) is its own overlap.
    if corners.iter().all(within) {
        out[..4].copy_from_slice(&corners);
        return 4;
    }
    let mut n = 0;
    for i in 0..4 {
        let p = corners[i];
        let d = corners[(i + 1) % 4] - p;
        let (enter_x, leave_x) = slab(p.x, d.x, hx);
        let (enter_y, leave_y) = slab(p.y, d.y, hy);
        let t0 = enter_x.max(enter_y).max(0.0);
        let t1 = leave_x.min(leave_y).min(1.0);
        // Where the edge enters (its start when inside), and where it
        // leaves before its end (its end is the next edge's start).
        out[n] = p + d * t0;
        n += usize::from(t0 <= t1);
        out[n] = p + d * t1;
        n += usize::from(t0 < t1 && t1 < 1.0);
    }
    let det = e1.x * e2.y - e1.y * e2.x;
    // The incident face leans at most ~55° from the reference face (it is
    // the face most anti-parallel to its normal), so its projection is
    // never this thin; the guard keeps a degenerate input from dividing by
    // zero.
    if det.abs() > MIN_PROJECTED_AREA {
        let inv = 1.0 / det;
        for (x, y) in [(hx, hy), (-hx, hy), (-hx, -hy), (hx, -hy)] {
            let (rx, ry) = (x - c.x, y - c.y);
            let a = (rx * e2.y - ry * e2.x) * inv;
            let b = (e1.x * ry - e1.y * rx) * inv;
            out[n] = Vec3::new(x, y, c.z + a * e1.z + b * e2.z);
            // Strictly inside: a corner on the incident face's edge is
            // already where that edge leaves or enters.
            n += usize::from(a.abs() < 1.0 && b.abs() < 1.0);
        }
    }
    n
}

/// Where a segment `p + t·d` enters and leaves the slab `|x| ≤ h` (as
/// `t`); a segment along the slab is in it everywhere or nowhere.
#[inline(always)]
fn slab(p: f32, d: f32, h: f32) -> (f32, f32) {
    if d.abs() <= PARALLEL_TO_SLAB {
        return if p.abs() <= h {
            (f32::NEG_INFINITY, f32::INFINITY)
        } else {
            (f32::INFINITY, f32::NEG_INFINITY)
        };
    }
    let inv = 1.0 / d;
    let (ta, tb) = ((-h - p) * inv, (h - p) * inv);
    (ta.min(tb), ta.max(tb))
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

/// Edge `i` of A against edge `j` of B along axis `l` (unit, any sign);
/// `None` when the edges' closest points are separated by more than
/// `max_separation` along it (the separating-axis test bounds the gap
/// along `l`, not between the clamped segments).
fn edge_contact(
    a: &Obb,
    b: &Obb,
    i: usize,
    j: usize,
    l: Vec3,
    d: Vec3,
    max_separation: f32,
) -> Option<ContactPoints> {
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
    (out.separation(0) <= max_separation).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_overlapping_edge_to_edge_get_a_contact_under_the_face_bias() {
        // 1.95 mm deep along A's y edge × B's x edge; B's y face overlaps
        // by 4.6 mm, within the bias, so the face is chosen, and clipping
        // its incident face keeps nothing (poses from a shape-cast test)
        let (pa, qa, ha) = (
            Vec3::new(0.43149376, 0.6974056, -1.125886),
            Quat::from_xyzw(-0.40974882, -0.63722813, -0.23637562, 0.60841835),
            Vec3::new(0.4219929, 0.5019006, 0.21963468),
        );
        let (pb, qb, hb) = (
            Vec3::ZERO,
            Quat::from_xyzw(-0.49638194, -0.20804249, -0.6278093, -0.56229776),
            Vec3::new(0.37979043, 0.673187, 0.1891784),
        );
        let (a, b) = (Obb::new(pa, qa, ha), Obb::new(pb, qb, hb));
        let sat = sat_of_boxes(&a, &b, 0.0);
        let Verdict::Touching(f) = sat.verdict() else {
            panic!("the boxes overlap");
        };
        assert!(matches!(f, Feature::FaceB(_)), "{f:?}");
        assert!(
            contact(&a, &b, f, 0.05).is_none(),
            "the face alone finds nothing"
        );
        let c = collide_box_box(pa, qa, ha, pb, qb, hb, 0.0).expect("a contact");
        assert_eq!(c.count, 1);
        assert!(
            (c.separation(0) + 1.95e-3).abs() < 1e-4,
            "{}",
            c.separation(0)
        );
        let axis = a.u[1].cross(b.u[0]).normalize();
        assert!(
            c.normal.dot(axis).abs() > 0.9999,
            "{:?} vs {axis:?}",
            c.normal
        );
        assert!(c.normal.dot(pb - pa) > 0.0, "from A to B");
    }

    #[test]
    fn cube_resting_on_floor_gets_four_points() {
        let (pa, qa) = (Vec3::new(0.0, -1.0, 0.0), Quat::IDENTITY);
        let (pb, qb) = (Vec3::new(3.0, 0.49, -2.0), Quat::from_rotation_y(0.3));
        let c = collide_box_box(
            pa,
            qa,
            Vec3::new(50.0, 1.0, 50.0),
            pb,
            qb,
            Vec3::splat(0.5),
            0.02,
        )
        .unwrap();
        let (on_a, on_b) = c.world_points(pa, qa, pb, qb);
        assert_eq!(c.count, 4);
        assert!((c.normal - Vec3::Y).length() < 1e-6);
        for k in 0..4 {
            assert!((c.separation(k) + 0.01).abs() < 1e-5);
            assert!((on_a[k].y).abs() < 1e-5, "point on the floor's top face");
            let depth = (on_b[k] - on_a[k]).dot(c.normal);
            assert!(
                (depth - c.separation(k)).abs() < 1e-5,
                "points agree with separation"
            );
        }
    }

    #[test]
    fn offset_stacked_cubes_clip_to_the_overlap() {
        // pyramid layout: upper cube offset by half a cube in x and z
        let c = collide_box_box(
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
        let q = Quat::IDENTITY;
        let (_, on_b) = c.world_points(Vec3::new(0.0, 1.0, 0.0), q, Vec3::new(1.0, 3.0, 1.0), q);
        let mut xs: Vec<f32> = (0..4).map(|k| on_b[k].x).collect();
        xs.sort_by(f32::total_cmp);
        assert!((xs[0] - 0.0).abs() < 1e-5 && (xs[3] - 1.0).abs() < 1e-5);
        for k in 0..4 {
            assert!(c.separation(k).abs() < 1e-5);
        }
    }

    #[test]
    fn separated_beyond_speculative_distance_is_none() {
        assert!(collide_box_box(
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
        let (on_a, _) = c.world_points(Vec3::ZERO, qa, Vec3::ZERO, qb);
        assert!((on_a[0] - Vec3::new(0.0, s2, 0.0)).length() < 1e-3);
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
