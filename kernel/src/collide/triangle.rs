//! A convex shape against one triangle of a mesh or a height field, in
//! the surface's frame.
//!
//! Triangles are one-sided: a shape whose centre is behind the
//! triangle's plane does not touch it (Jolt's back-face rule). The
//! result's normal points from the triangle to the convex shape.
//!
//! - A sphere: the closest point of the triangle to its centre.
//! - A capsule: the closest points of its segment and the triangle; a
//!   segment lying along the face is clipped to the triangle's prism for
//!   two points, as a capsule on a box face gets.
//! - A box or hull (a [`Poly`]): the separating-axis test over the
//!   triangle's normal, the polytope's face normals and the cross products
//!   of edge pairs that make a face of the Minkowski difference (the
//!   triangle's edge seen as the half circle from its normal through the
//!   edge's outward side to the back), then face clipping as for hull
//!   pairs (`hull.rs`): the polytope's incident face clipped by the
//!   triangle's side planes, or the triangle clipped by a polytope
//!   face's, or the closest points of an edge pair.
//!
//! Active edges (Jolt's `ActiveEdges::FixNormal`): a contact found on an
//! edge or corner of the triangle that is inactive (its neighbour
//! continues the surface within 5°, or folds it concave) takes the
//! triangle's own normal instead, unless the body's motion says the
//! found normal hinders it less; so a box sliding over a seam feels a
//! flat floor. A polytope's contact so turned is generated again as a
//! face contact on the triangle.

use super::hull::{closest_on_segments, Poly};
use super::surface::reduce_about;
use crate::math::{rotate, Quat, Vec3};
use crate::mesh::Triangle;

/// Most points one triangle contact carries: a box face clipped by a
/// triangle keeps up to 7, all of them (reduced per triangle, a piece of
/// a box face resting across several triangles could lose the box's
/// corner to the piece's inner points, and the merged manifold would
/// miss it); a larger hull face is reduced to four first.
pub(crate) const TRI_POINTS: usize = 8;

/// Linear slop (m) and relative tolerances of the feature choice, as for
/// hull pairs (`hull.rs`): the triangle's face is preferred.
const ABS_TOLERANCE: f32 = 0.5 * 0.005;
const REL_EDGE_TOLERANCE: f32 = 0.90;
const REL_FACE_TOLERANCE: f32 = 0.95;
/// Edge pairs closer to parallel than this give no axis.
const PARALLEL_EDGES: f32 = 1e-3;
/// A capsule segment within this sine of parallel to the triangle lies on
/// it (two points): ~5.7°, as against a hull face.
const SEGMENT_ON_FACE: f32 = 0.1;
/// A found normal within this cosine of the triangle's (1°) is kept as
/// it is (Jolt's `FixNormal`).
const NORMAL_PARALLEL_COS: f32 = 0.999_848;
/// Barycentric slack of "on an edge / at a corner" (Jolt's 1e-4).
const FEATURE_EPSILON: f32 = 1e-4;
/// Most points a clipped polygon keeps.
const MAX_CLIP: usize = 16;

/// A contact with one triangle: normal from the triangle to the shape,
/// and pairs of points `(on the shape, on the triangle)`; a point's
/// separation is `(on_shape - on_tri) · normal`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TriContact {
    pub normal: Vec3,
    pub count: usize,
    pub on_shape: [Vec3; TRI_POINTS],
    pub on_tri: [Vec3; TRI_POINTS],
}

impl TriContact {
    pub fn new(normal: Vec3) -> Self {
        Self {
            normal,
            count: 0,
            on_shape: [Vec3::ZERO; TRI_POINTS],
            on_tri: [Vec3::ZERO; TRI_POINTS],
        }
    }

    pub fn push(&mut self, on_shape: Vec3, on_tri: Vec3) {
        if self.count < TRI_POINTS {
            self.on_shape[self.count] = on_shape;
            self.on_tri[self.count] = on_tri;
            self.count += 1;
        }
    }

    pub fn separation(&self, k: usize) -> f32 {
        (self.on_shape[k] - self.on_tri[k]).dot(self.normal)
    }
}

/// A convex shape placed in the surface's frame.
#[derive(Clone, Copy)]
pub(crate) enum Convex<'a> {
    Sphere {
        centre: Vec3,
        radius: f32,
    },
    Capsule {
        p: Vec3,
        q: Vec3,
        radius: f32,
    },
    Poly {
        poly: Poly<'a>,
        pos: Vec3,
        rot: Quat,
    },
}

impl Convex<'_> {
    /// The point whose side of a triangle's plane decides front or back.
    fn centre(&self) -> Vec3 {
        match *self {
            Convex::Sphere { centre, .. } => centre,
            Convex::Capsule { p, q, .. } => 0.5 * (p + q),
            Convex::Poly { pos, .. } => pos,
        }
    }
}

/// The contact of `shape` with `tri`, or `None` (apart by more than
/// `max_separation`, or behind). `motion` is the shape's velocity in the
/// surface's frame (which way it moves, for the active-edge rule).
pub(crate) fn collide_triangle(
    shape: &Convex,
    tri: &Triangle,
    max_separation: f32,
    motion: Vec3,
) -> Option<TriContact> {
    if tri.normal.dot(shape.centre() - tri.v[0]) < 0.0 {
        return None;
    }
    match *shape {
        Convex::Sphere { centre, radius } => sphere(centre, radius, tri, max_separation, motion),
        Convex::Capsule { p, q, radius } => capsule(p, q, radius, tri, max_separation, motion),
        Convex::Poly { poly, pos, rot } => polytope(&poly, pos, rot, tri, max_separation, motion),
    }
}

/// Which edges a point of the triangle lies on, as the active-edge bits
/// that would make it an edge: a corner needs either of its two edges,
/// an edge itself, the interior none (0).
fn feature(tri: &Triangle, p: Vec3) -> u8 {
    let [a, b, c] = tri.v;
    let (v0, v1, v2) = (b - a, c - a, p - a);
    let (d00, d01, d11) = (v0.dot(v0), v0.dot(v1), v1.dot(v1));
    let (d20, d21) = (v2.dot(v0), v2.dot(v1));
    let denom = d00 * d11 - d01 * d01;
    if denom <= 0.0 {
        return 0b111;
    }
    let v = (d11 * d20 - d01 * d21) / denom; // weight of b
    let w = (d00 * d21 - d01 * d20) / denom; // weight of c
    let u = 1.0 - v - w; // weight of a
    let one = 1.0 - FEATURE_EPSILON;
    if u > one {
        0b101
    } else if v > one {
        0b011
    } else if w > one {
        0b110
    } else if u < FEATURE_EPSILON {
        0b010
    } else if v < FEATURE_EPSILON {
        0b100
    } else if w < FEATURE_EPSILON {
        0b001
    } else {
        0
    }
}

/// Jolt's `ActiveEdges::FixNormal` in this module's terms (normals from
/// the triangle to the shape): the normal to use for a contact found with
/// `normal` at point `p` of the triangle.
fn fix_normal(tri: &Triangle, p: Vec3, normal: Vec3, motion: Vec3) -> Vec3 {
    if tri.active == 0b111 {
        return normal;
    }
    // the found normal hinders the motion less: keep it (sliding past a
    // vertical triangle's inactive edge must not bounce back)
    if motion.dot(normal) > motion.dot(tri.normal) {
        return normal;
    }
    if tri.active == 0 {
        return tri.normal;
    }
    if normal.dot(tri.normal) > NORMAL_PARALLEL_COS {
        return normal;
    }
    let f = feature(tri, p);
    if f != 0 && tri.active & f != 0 {
        normal
    } else {
        tri.normal
    }
}

/// The closest point of the triangle to `p` (Ericson 5.1.5).
pub(crate) fn closest_on_triangle(p: Vec3, tri: &Triangle) -> Vec3 {
    let [a, b, c] = tri.v;
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}

fn sphere(c: Vec3, r: f32, tri: &Triangle, max_sep: f32, motion: Vec3) -> Option<TriContact> {
    if tri.normal.dot(c - tri.v[0]) - r > max_sep {
        return None;
    }
    let q = closest_on_triangle(c, tri);
    let gap = c - q;
    let d = gap.length();
    if d - r > max_sep {
        return None;
    }
    let found = if d > 1e-6 { gap / d } else { tri.normal };
    let n = fix_normal(tri, q, found, motion);
    let mut out = TriContact::new(n);
    out.push(c - n * r, q);
    Some(out)
}

/// The closest points `(on the segment, on the triangle)` of segment
/// `p`–`q` and the triangle; where the segment pierces the triangle, the
/// piercing point twice.
fn closest_segment_triangle(p: Vec3, q: Vec3, tri: &Triangle) -> (Vec3, Vec3) {
    let n = tri.normal;
    let (dp, dq) = (n.dot(p - tri.v[0]), n.dot(q - tri.v[0]));
    if (dp <= 0.0) != (dq <= 0.0) {
        let x = p + (q - p) * (dp / (dp - dq));
        if closest_on_triangle(x, tri).distance_squared(x) <= 1e-12 {
            return (x, x);
        }
    }
    let mut best = {
        let cp = closest_on_triangle(p, tri);
        (p.distance_squared(cp), p, cp)
    };
    let cq = closest_on_triangle(q, tri);
    if q.distance_squared(cq) < best.0 {
        best = (q.distance_squared(cq), q, cq);
    }
    for k in 0..3 {
        let (a, b) = (tri.v[k], tri.v[(k + 1) % 3]);
        let (s, t) = closest_on_segments(p, q - p, a, b - a);
        if s.distance_squared(t) < best.0 {
            best = (s.distance_squared(t), s, t);
        }
    }
    (best.1, best.2)
}

fn capsule(
    p: Vec3,
    q: Vec3,
    r: f32,
    tri: &Triangle,
    max_sep: f32,
    motion: Vec3,
) -> Option<TriContact> {
    let n = tri.normal;
    let (dp, dq) = (n.dot(p - tri.v[0]), n.dot(q - tri.v[0]));
    if dp.min(dq) - r > max_sep {
        return None;
    }
    let (on_seg, on_tri) = closest_segment_triangle(p, q, tri);
    let gap = on_seg - on_tri;
    let d = gap.length();
    if d - r > max_sep {
        return None;
    }
    let found = if d > 1e-6 && gap.dot(n) > 0.0 {
        gap / d
    } else {
        n
    };
    let normal = fix_normal(tri, on_tri, found, motion);
    let seg = q - p;
    let len = seg.length();
    let along_face = normal.dot(n) > NORMAL_PARALLEL_COS
        && len > 0.0
        && (n.dot(seg) / len).abs() < SEGMENT_ON_FACE;
    if along_face || d <= 1e-6 {
        if let Some(c) = segment_in_prism(p, q, r, tri, max_sep) {
            return Some(c);
        }
    }
    let mut out = TriContact::new(normal);
    out.push(on_seg - normal * r, on_tri);
    Some(out)
}

/// The segment clipped to the triangle's prism (its side planes), each
/// clipped end within the contact distance with its point on the plane.
fn segment_in_prism(p: Vec3, q: Vec3, r: f32, tri: &Triangle, max_sep: f32) -> Option<TriContact> {
    let n = tri.normal;
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    let e = q - p;
    for k in 0..3 {
        let (a, b) = (tri.v[k], tri.v[(k + 1) % 3]);
        let side = (b - a).cross(n);
        let (s, dir) = (side.dot(p - a), side.dot(e));
        if dir.abs() <= 1e-12 {
            if s > 0.0 {
                return None;
            }
            continue;
        }
        let t = -s / dir;
        if dir > 0.0 {
            t1 = t1.min(t);
        } else {
            t0 = t0.max(t);
        }
        if t0 > t1 {
            return None;
        }
    }
    let mut out = TriContact::new(n);
    for t in [t0, t1] {
        let x = p + e * t;
        let s = n.dot(x - tri.v[0]);
        if s - r <= max_sep {
            out.push(x - n * r, x - n * s);
        }
        if t1 - t0 <= 1e-6 {
            break;
        }
    }
    (out.count > 0).then_some(out)
}

/// A polygon being clipped.
struct Polygon {
    p: [Vec3; MAX_CLIP],
    n: usize,
}

impl Polygon {
    const EMPTY: Self = Self {
        p: [Vec3::ZERO; MAX_CLIP],
        n: 0,
    };

    fn push(&mut self, v: Vec3) {
        if self.n < MAX_CLIP {
            self.p[self.n] = v;
            self.n += 1;
        }
    }

    /// Keeps the part with `plane · p <= off` (Sutherland–Hodgman).
    fn clip(&self, plane: Vec3, off: f32, out: &mut Polygon) {
        out.n = 0;
        if self.n == 0 {
            return;
        }
        let mut prev = self.p[self.n - 1];
        let mut dp = plane.dot(prev) - off;
        for &cur in &self.p[..self.n] {
            let dc = plane.dot(cur) - off;
            if (dp <= 0.0) != (dc <= 0.0) {
                out.push(prev + (cur - prev) * (dp / (dp - dc)));
            }
            if dc <= 0.0 {
                out.push(cur);
            }
            (prev, dp) = (cur, dc);
        }
    }
}

/// Every clipped point while they fit a [`TriContact`], else the four
/// that hold best about the polytope's centre (the origin here).
fn keep_all_or_reduce(pts: &[(Vec3, Vec3, f32)], n: Vec3) -> impl Iterator<Item = usize> {
    let all = pts.len() <= TRI_POINTS;
    let (mut reduced, mut r) = ([0usize; 4], 0);
    if !all {
        for k in reduce_about(pts, n, Vec3::ZERO) {
            reduced[r] = k;
            r += 1;
        }
    }
    (0..if all { pts.len() } else { r }).map(move |k| if all { k } else { reduced[k] })
}

/// The Gauss-map test of a triangle edge against a polytope edge: does
/// the polytope edge's arc (from `-c` to `-d`, its faces' normals
/// negated) cross the triangle edge's, the half circle of directions
/// perpendicular to the edge `e` on its outer side `out` (from the
/// triangle's normal through `out` to the back)? Then the edge pair spans
/// a face of the Minkowski difference. The arc meets the half circle's
/// plane where `e · x = 0`, between ends on opposite sides of it; there
/// the crossing is on the outer half when `x · out > 0`.
#[inline]
fn crosses_edge_arc(e: Vec3, out: Vec3, c: Vec3, d: Vec3) -> bool {
    let (a, b) = (-c, -d);
    let (ea, eb) = (e.dot(a), e.dot(b));
    if ea * eb >= 0.0 {
        return false;
    }
    // the crossing a + t (b - a), t = ea / (ea - eb), times (ea - eb)
    // (whose sign is ea's, the ends being on opposite sides)
    let x = b * ea - a * eb;
    x.dot(out) * ea > 0.0
}

/// The best axis of a polytope–triangle pair.
enum Axis {
    /// The triangle's normal.
    Triangle,
    /// Face `f` of the polytope.
    PolyFace(usize),
    /// Triangle edge `k` × polytope edge `j`, unit `axis` from the
    /// triangle out.
    Edges(usize, usize, Vec3),
}

/// The polytope (its own frame, at `pos, rot` in the surface's) against
/// the triangle: the work is done in the polytope's frame (three
/// triangle corners move, not its vertices), results turned back.
fn polytope(
    poly: &Poly,
    pos: Vec3,
    rot: Quat,
    tri_s: &Triangle,
    max_sep: f32,
    motion: Vec3,
) -> Option<TriContact> {
    let inv = rot.conjugate();
    let to_local = |p: Vec3| rotate(inv, p - pos);
    let tri = Triangle {
        v: tri_s.v.map(to_local),
        normal: rotate(inv, tri_s.normal),
        active: tri_s.active,
    };
    let motion_l = rotate(inv, motion);
    let n = tri.normal;
    // the triangle's face
    let sep_t = n.dot(poly.support(-n)) - n.dot(tri.v[0]);
    if sep_t > max_sep {
        return None;
    }
    // the polytope's faces
    let mut face = (f32::NEG_INFINITY, 0);
    for (f, (&m, &off)) in poly.normals.iter().zip(poly.offsets).enumerate() {
        let s = tri
            .v
            .iter()
            .map(|v| m.dot(*v))
            .fold(f32::INFINITY, f32::min)
            - off;
        if s > face.0 {
            face = (s, f);
        }
    }
    if face.0 > max_sep {
        return None;
    }
    // edge pairs
    let mut edge = (f32::NEG_INFINITY, 0, 0, Vec3::ZERO);
    for k in 0..3 {
        let (a, b) = (tri.v[k], tri.v[(k + 1) % 3]);
        let e = b - a;
        let out = e.cross(n).normalize_or_zero();
        for (j, (ev, ef)) in poly.edge_vertex.iter().zip(poly.edge_face).enumerate() {
            let (c, d) = (poly.normals[ef[0] as usize], poly.normals[ef[1] as usize]);
            if !crosses_edge_arc(e, out, c, d) {
                continue;
            }
            let p0 = poly.vertices[ev[0] as usize];
            let pe = poly.vertices[ev[1] as usize] - p0;
            let axis = e.cross(pe);
            let len = axis.length();
            if len <= PARALLEL_EDGES * e.length() * pe.length() {
                continue;
            }
            let mut u = axis / len;
            if u.dot(out) < 0.0 {
                u = -u;
            }
            let s = u.dot(poly.support(-u)) - u.dot(a);
            if s > edge.0 {
                edge = (s, k, j, u);
            }
        }
    }
    if edge.0 > max_sep {
        return None;
    }
    let best = if edge.0 > REL_EDGE_TOLERANCE * sep_t.max(face.0) + ABS_TOLERANCE {
        Axis::Edges(edge.1, edge.2, edge.3)
    } else if face.0 > REL_FACE_TOLERANCE * sep_t + ABS_TOLERANCE {
        Axis::PolyFace(face.1)
    } else {
        Axis::Triangle
    };
    let contact = match best {
        Axis::Triangle => triangle_face(poly, &tri, max_sep),
        Axis::PolyFace(f) => poly_face(poly, f, &tri, max_sep),
        Axis::Edges(k, j, u) => {
            let (a, b) = (tri.v[k], tri.v[(k + 1) % 3]);
            let ev = poly.edge_vertex[j];
            let (p0, p1) = (poly.vertices[ev[0] as usize], poly.vertices[ev[1] as usize]);
            let (on_tri, on_poly) = closest_on_segments(a, b - a, p0, p1 - p0);
            let mut c = TriContact::new(u);
            c.push(on_poly, on_tri);
            Some(c)
        }
    }?;
    // the active-edge rule on the deepest point
    let contact = if contact.normal.dot(n) > NORMAL_PARALLEL_COS {
        contact
    } else {
        let deepest = (0..contact.count)
            .min_by(|&x, &y| contact.separation(x).total_cmp(&contact.separation(y)))
            .unwrap_or(0);
        let fixed = fix_normal(&tri, contact.on_tri[deepest], contact.normal, motion_l);
        if fixed == contact.normal {
            contact
        } else {
            match triangle_face(poly, &tri, max_sep) {
                Some(c) => c,
                None => {
                    // nothing of the incident face over the triangle: the
                    // same points, measured along the triangle's normal
                    let mut c = contact;
                    c.normal = n;
                    c
                }
            }
        }
    };
    let mut out = TriContact::new(rotate(rot, contact.normal));
    for k in 0..contact.count {
        out.push(
            pos + rotate(rot, contact.on_shape[k]),
            pos + rotate(rot, contact.on_tri[k]),
        );
    }
    Some(out)
}

/// The triangle's face as reference: the polytope's most anti-parallel
/// face clipped by the triangle's side planes (all in the polytope's
/// frame).
fn triangle_face(poly: &Poly, tri: &Triangle, max_sep: f32) -> Option<TriContact> {
    let n = tri.normal;
    let mut inc = 0;
    let mut least = f32::INFINITY;
    for (f, m) in poly.normals.iter().enumerate() {
        let d = m.dot(n);
        if d < least {
            (least, inc) = (d, f);
        }
    }
    let mut poly_pts = Polygon::EMPTY;
    for &v in poly.face(inc) {
        poly_pts.push(poly.vertices[v as usize]);
    }
    let mut spare = Polygon::EMPTY;
    for k in 0..3 {
        let (a, b) = (tri.v[k], tri.v[(k + 1) % 3]);
        let side = (b - a).cross(n).normalize_or_zero();
        poly_pts.clip(side, side.dot(a), &mut spare);
        core::mem::swap(&mut poly_pts, &mut spare);
    }
    let off = n.dot(tri.v[0]);
    let mut kept = [(Vec3::ZERO, Vec3::ZERO, 0.0f32); MAX_CLIP];
    let mut count = 0;
    for &p in &poly_pts.p[..poly_pts.n] {
        let s = n.dot(p) - off;
        if s <= max_sep {
            kept[count] = (p - n * s, p, s);
            count += 1;
        }
    }
    if count == 0 {
        return None;
    }
    let mut c = TriContact::new(n);
    for k in keep_all_or_reduce(&kept[..count], n) {
        c.push(kept[k].1, kept[k].0);
    }
    Some(c)
}

/// Face `f` of the polytope as reference: the triangle clipped by the
/// face's side planes; normal from the triangle to the polytope.
fn poly_face(poly: &Poly, f: usize, tri: &Triangle, max_sep: f32) -> Option<TriContact> {
    let m = poly.normals[f];
    let off = poly.offsets[f];
    let mut pts = Polygon::EMPTY;
    for &v in &tri.v {
        pts.push(v);
    }
    let mut spare = Polygon::EMPTY;
    let ring = poly.face(f);
    for k in 0..ring.len() {
        let v0 = poly.vertices[ring[k] as usize];
        let v1 = poly.vertices[ring[(k + 1) % ring.len()] as usize];
        let side = (v1 - v0).cross(m);
        let len = side.length();
        if len <= 0.0 {
            continue;
        }
        let side = side / len;
        pts.clip(side, side.dot(v0), &mut spare);
        core::mem::swap(&mut pts, &mut spare);
    }
    let mut kept = [(Vec3::ZERO, Vec3::ZERO, 0.0f32); MAX_CLIP];
    let mut count = 0;
    for &p in &pts.p[..pts.n] {
        let s = m.dot(p) - off;
        if s <= max_sep {
            kept[count] = (p - m * s, p, s);
            count += 1;
        }
    }
    if count == 0 {
        return None;
    }
    let mut c = TriContact::new(-m);
    for k in keep_all_or_reduce(&kept[..count], m) {
        c.push(kept[k].0, kept[k].1);
    }
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::super::hull::BoxPoly;
    use super::*;

    /// The triangle (0,0,0), (0,0,1), (1,0,0) facing +y, edges as given.
    fn floor_tri(active: u8) -> Triangle {
        Triangle {
            v: [
                Vec3::ZERO,
                Vec3::new(0.0, 0.0, 2.0),
                Vec3::new(2.0, 0.0, 0.0),
            ],
            normal: Vec3::Y,
            active,
        }
    }

    #[test]
    fn a_sphere_over_the_face_edge_and_corner() {
        let t = floor_tri(0b111);
        // over the face, 1 cm deep
        let c = collide_triangle(
            &Convex::Sphere {
                centre: Vec3::new(0.5, 0.49, 0.5),
                radius: 0.5,
            },
            &t,
            0.02,
            Vec3::ZERO,
        )
        .unwrap();
        assert_eq!(c.count, 1);
        assert!((c.normal - Vec3::Y).length() < 1e-6);
        assert!((c.separation(0) + 0.01).abs() < 1e-6);
        // beside the hypotenuse (x + z = 2), level with the plane: the
        // normal points from the edge to the centre
        let centre = Vec3::new(1.2, 0.0, 1.2);
        let c = collide_triangle(
            &Convex::Sphere {
                centre,
                radius: 0.3,
            },
            &t,
            0.02,
            Vec3::ZERO,
        )
        .unwrap();
        let want = Vec3::new(1.0, 0.0, 1.0).normalize();
        assert!((c.normal - want).length() < 1e-5, "{:?}", c.normal);
        // the same edge inactive: the triangle's normal
        let c = collide_triangle(
            &Convex::Sphere {
                centre: centre + Vec3::Y * 0.05,
                radius: 0.3,
            },
            &floor_tri(0b101),
            0.02,
            Vec3::ZERO,
        )
        .unwrap();
        assert!((c.normal - Vec3::Y).length() < 1e-6, "{:?}", c.normal);
        // behind the plane: nothing
        assert!(collide_triangle(
            &Convex::Sphere {
                centre: Vec3::new(0.5, -0.1, 0.5),
                radius: 0.5
            },
            &t,
            0.02,
            Vec3::ZERO
        )
        .is_none());
    }

    #[test]
    fn a_capsule_lying_on_the_face_gets_two_points() {
        let t = floor_tri(0);
        let c = collide_triangle(
            &Convex::Capsule {
                p: Vec3::new(0.2, 0.29, 0.3),
                q: Vec3::new(0.9, 0.29, 0.3),
                radius: 0.3,
            },
            &t,
            0.02,
            Vec3::ZERO,
        )
        .unwrap();
        assert_eq!(c.count, 2);
        for k in 0..2 {
            assert!((c.separation(k) + 0.01).abs() < 1e-5);
        }
    }

    /// A box resting on a triangle: the box's face is clipped to the
    /// triangle; every point at the box's depth.
    #[test]
    fn a_box_on_the_triangle_is_clipped_to_it() {
        let b = BoxPoly::new(Vec3::splat(0.5));
        let c = collide_triangle(
            &Convex::Poly {
                poly: b.poly(),
                pos: Vec3::new(1.0, 0.49, 0.4),
                rot: Quat::from_rotation_y(0.3),
            },
            &floor_tri(0),
            0.02,
            Vec3::ZERO,
        )
        .unwrap();
        assert!((c.normal - Vec3::Y).length() < 1e-6);
        assert!(c.count >= 3, "{c:?}");
        for k in 0..c.count {
            assert!((c.separation(k) + 0.01).abs() < 1e-5);
            // inside the triangle (x, z >= 0, x + z <= 2)
            let p = c.on_tri[k];
            assert!(
                p.x >= -1e-5 && p.z >= -1e-5 && p.x + p.z <= 2.0 + 1e-5,
                "{p:?}"
            );
        }
    }

    /// A box turned 45° about z with its lowest edge 1 cm outside the
    /// triangle's edge `x = 0` and 2 cm below its plane: its lower face
    /// dips 7 mm into the edge. An active edge gives that face's normal;
    /// an inactive one (the surface goes on flat) the triangle's.
    #[test]
    fn an_edge_contact_on_an_inactive_edge_turns_to_the_face() {
        let b = BoxPoly::new(Vec3::splat(0.3));
        let h = 0.3 * 2f32.sqrt();
        let shape = Convex::Poly {
            poly: b.poly(),
            pos: Vec3::new(-0.01, h - 0.02, 1.0),
            rot: Quat::from_rotation_z(core::f32::consts::FRAC_PI_4),
        };
        let active = collide_triangle(&shape, &floor_tri(0b111), 0.02, Vec3::ZERO).unwrap();
        let slope = Vec3::new(-1.0, 1.0, 0.0).normalize();
        assert!((active.normal - slope).length() < 1e-4, "{active:?}");
        let deepest = (0..active.count)
            .map(|k| active.separation(k))
            .fold(f32::INFINITY, f32::min);
        assert!((deepest + 0.01 / 2f32.sqrt()).abs() < 1e-4, "{deepest}");
        // edge 0 (v0-v1, on x = 0) inactive
        let inactive = collide_triangle(&shape, &floor_tri(0b110), 0.02, Vec3::ZERO).unwrap();
        assert!((inactive.normal - Vec3::Y).length() < 1e-6, "{inactive:?}");
        // moving away along the slope's normal: the found normal hinders
        // the motion less and is kept
        let leaving = collide_triangle(&shape, &floor_tri(0b110), 0.02, slope).unwrap();
        assert!((leaving.normal - slope).length() < 1e-4, "{leaving:?}");
    }
}
