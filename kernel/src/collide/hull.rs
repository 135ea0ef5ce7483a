//! Contacts with convex hulls, and between boxes and hulls (a box is a
//! hull of 8 corners here).
//!
//! Polytope pairs: the separating-axis test of Gregorius ("The Separating
//! Axis Test between Convex Polyhedra", GDC 2013; "Robust Contact
//! Creation for Physics Simulations", GDC 2015), as Jolt, Box2D v3's
//! polygons and Valve's Rubikon do it. Candidate axes are the face
//! normals of both and the cross products of edge pairs; an edge pair is
//! tried only if its two arcs cross on the Gauss map (the pair spans a
//! face of the Minkowski difference), which prunes all but a few of the
//! `E_a × E_b` pairs. The axis of least penetration picks the feature:
//! a face contact clips the other hull's most anti-parallel (incident)
//! face against the side planes of the reference face and keeps up to
//! four points; an edge contact is the one pair of closest points of
//! the two edges. Faces are preferred within a tolerance, so a resting
//! stack does not flicker between face and edge manifolds.
//!
//! Round shapes against a hull work on their cores (a sphere's centre, a
//! capsule's segment): separated cores take the closest points by GJK
//! (`query::sweep`); overlapping cores the least-penetrating face (or,
//! for a segment, face or segment × edge) axis. A capsule lying along a
//! face gets its segment clipped to the face: two points, as against a
//! box.

use super::ContactPoints;
use crate::hull_shape::HullShape;
use crate::math::{quat_mul, rotate, Quat, Vec3};

/// Linear slop (m) for the feature choice: an axis must beat the preferred
/// one by more than half of it to be taken (Gregorius' absolute tolerance).
const ABS_TOLERANCE: f32 = 0.5 * 0.005;
/// An edge axis must be this much shallower (relative) than the best face
/// axis to be taken: edges only where faces clearly do not fit.
const REL_EDGE_TOLERANCE: f32 = 0.90;
/// Face of B over face of A only when this much shallower (relative).
const REL_FACE_TOLERANCE: f32 = 0.95;
/// Edge pairs closer to parallel than this (|e_a × e_b| over |e_a||e_b|:
/// ~0.06°) give no axis: their face normals already cover it.
const PARALLEL_EDGES: f32 = 1e-3;
/// Most points a clipped polygon keeps while clipping; a face with more
/// vertices than this clips its first ones only (hull faces of real props
/// have far fewer; a cylinder cap of 64 sides fits).
const MAX_CLIP: usize = 72;
/// A capsule segment within this sine of parallel to a hull face lies on
/// it (two contact points, as against a box face): ~5.7°.
const SEGMENT_ON_FACE: f32 = 0.1;

/// A convex polytope in its own frame (centre of mass, or a box's centre,
/// at the origin).
#[derive(Clone, Copy)]
pub(crate) struct Poly<'a> {
    pub vertices: &'a [Vec3],
    pub normals: &'a [Vec3],
    pub offsets: &'a [f32],
    pub face_first: &'a [u32],
    pub face_vertex: &'a [u32],
    pub edge_vertex: &'a [[u32; 2]],
    pub edge_face: &'a [[u32; 2]],
}

impl<'a> Poly<'a> {
    pub fn of_hull(h: &'a HullShape) -> Self {
        Self {
            vertices: &h.vertices,
            normals: &h.face_normal,
            offsets: &h.face_offset,
            face_first: &h.face_first,
            face_vertex: &h.face_vertex,
            edge_vertex: &h.edge_vertex,
            edge_face: &h.edge_face,
        }
    }

    pub(crate) fn face(&self, f: usize) -> &'a [u32] {
        &self.face_vertex[self.face_first[f] as usize..self.face_first[f + 1] as usize]
    }

    /// The farthest vertex along `d`.
    pub(crate) fn support(&self, d: Vec3) -> Vec3 {
        let mut best = self.vertices[0];
        let mut best_dot = best.dot(d);
        for &v in &self.vertices[1..] {
            let t = v.dot(d);
            if t > best_dot {
                (best, best_dot) = (v, t);
            }
        }
        best
    }
}

/// The unit cube's topology: corner `k` has `+` on axis `a` where bit `a`
/// of `k` is set; faces `+x, -x, +y, -y, +z, -z`, loops counter-clockwise
/// from outside.
const BOX_NORMALS: [Vec3; 6] = [
    Vec3::X,
    Vec3::NEG_X,
    Vec3::Y,
    Vec3::NEG_Y,
    Vec3::Z,
    Vec3::NEG_Z,
];
const BOX_FACE_FIRST: [u32; 7] = [0, 4, 8, 12, 16, 20, 24];
const BOX_FACE_VERTEX: [u32; 24] = [
    1, 3, 7, 5, // +x
    0, 4, 6, 2, // -x
    2, 6, 7, 3, // +y
    0, 1, 5, 4, // -y
    4, 5, 7, 6, // +z
    0, 2, 3, 1, // -z
];
const BOX_EDGE_VERTEX: [[u32; 2]; 12] = [
    [0, 1],
    [2, 3],
    [4, 5],
    [6, 7],
    [0, 2],
    [1, 3],
    [4, 6],
    [5, 7],
    [0, 4],
    [1, 5],
    [2, 6],
    [3, 7],
];
const BOX_EDGE_FACE: [[u32; 2]; 12] = [
    [3, 5],
    [2, 5],
    [3, 4],
    [2, 4],
    [1, 5],
    [0, 5],
    [1, 4],
    [0, 4],
    [1, 3],
    [0, 3],
    [1, 2],
    [0, 2],
];

/// A box's corners and face offsets, for a [`Poly`] view.
pub(crate) struct BoxPoly {
    vertices: [Vec3; 8],
    offsets: [f32; 6],
}

impl BoxPoly {
    pub fn new(h: Vec3) -> Self {
        let vertices = core::array::from_fn(|k| {
            let s = |bit: usize| if k & (1 << bit) != 0 { 1.0 } else { -1.0 };
            Vec3::new(s(0) * h.x, s(1) * h.y, s(2) * h.z)
        });
        Self {
            vertices,
            offsets: [h.x, h.x, h.y, h.y, h.z, h.z],
        }
    }

    pub fn poly(&self) -> Poly<'_> {
        Poly {
            vertices: &self.vertices,
            normals: &BOX_NORMALS,
            offsets: &self.offsets,
            face_first: &BOX_FACE_FIRST,
            face_vertex: &BOX_FACE_VERTEX,
            edge_vertex: &BOX_EDGE_VERTEX,
            edge_face: &BOX_EDGE_FACE,
        }
    }
}

/// A rigid transform `p -> t + q·p`.
#[derive(Clone, Copy)]
struct Frame {
    q: Quat,
    t: Vec3,
}

impl Frame {
    fn apply(&self, p: Vec3) -> Vec3 {
        self.t + rotate(self.q, p)
    }
    fn inverse(&self) -> Self {
        let q = self.q.conjugate();
        Self {
            q,
            t: -rotate(q, self.t),
        }
    }
}

/// The deepest face axis of `a` against `b` (`b_in_a`: B's frame to A's):
/// `(separation, face)`.
fn face_query(a: &Poly, b: &Poly, b_in_a: &Frame) -> (f32, usize) {
    let inv = b_in_a.q.conjugate();
    let mut best = (f32::NEG_INFINITY, 0);
    for (f, (&n, &off)) in a.normals.iter().zip(a.offsets).enumerate() {
        let s = b_in_a.apply(b.support(rotate(inv, -n)));
        let sep = n.dot(s) - off;
        if sep > best.0 {
            best = (sep, f);
        }
    }
    best
}

/// Gauss-map test: do the arcs `a→b` (normals beside an edge of A) and
/// `-c→-d` (beside an edge of B, negated) cross, i.e. does the edge pair
/// make a face of the Minkowski difference?
fn is_minkowski_face(a: Vec3, b: Vec3, c: Vec3, d: Vec3) -> bool {
    let (c, d) = (-c, -d);
    let bxa = b.cross(a);
    let dxc = d.cross(c);
    let cba = c.dot(bxa);
    let dba = d.dot(bxa);
    let adc = a.dot(dxc);
    let bdc = b.dot(dxc);
    cba * dba < 0.0 && adc * bdc < 0.0 && cba * bdc > 0.0
}

/// The deepest edge-pair axis (A's frame): `(separation, axis, edge of A,
/// edge of B)`; `-inf` when no pair spans a Minkowski face.
fn edge_query(a: &Poly, b: &Poly, b_in_a: &Frame) -> (f32, Vec3, usize, usize) {
    let mut best = (f32::NEG_INFINITY, Vec3::Z, 0, 0);
    for (j, (ev, ef)) in b.edge_vertex.iter().zip(b.edge_face).enumerate() {
        let pb = b_in_a.apply(b.vertices[ev[0] as usize]);
        let eb = rotate(
            b_in_a.q,
            b.vertices[ev[1] as usize] - b.vertices[ev[0] as usize],
        );
        let c = rotate(b_in_a.q, b.normals[ef[0] as usize]);
        let d = rotate(b_in_a.q, b.normals[ef[1] as usize]);
        for (i, (av, af)) in a.edge_vertex.iter().zip(a.edge_face).enumerate() {
            let (na, nb) = (a.normals[af[0] as usize], a.normals[af[1] as usize]);
            if !is_minkowski_face(na, nb, c, d) {
                continue;
            }
            let pa = a.vertices[av[0] as usize];
            let ea = a.vertices[av[1] as usize] - pa;
            let axis = ea.cross(eb);
            let len = axis.length();
            if len <= PARALLEL_EDGES * (ea.length() * eb.length()) {
                continue;
            }
            // outward from A (its centre is the origin)
            let n = if axis.dot(pa) < 0.0 {
                -axis / len
            } else {
                axis / len
            };
            let sep = n.dot(pb - pa);
            if sep > best.0 {
                best = (sep, n, i, j);
            }
        }
    }
    best
}

/// Contacts between polytopes `a` at `(pos_a, rot_a)` and `b`, normal
/// from A to B.
pub(crate) fn collide_poly_poly(
    a: &Poly,
    pos_a: Vec3,
    rot_a: Quat,
    b: &Poly,
    pos_b: Vec3,
    rot_b: Quat,
    max_separation: f32,
) -> Option<ContactPoints> {
    let inv_a = rot_a.conjugate();
    let b_in_a = Frame {
        q: quat_mul(inv_a, rot_b).normalize(),
        t: rotate(inv_a, pos_b - pos_a),
    };
    let a_in_b = b_in_a.inverse();
    let fa = face_query(a, b, &b_in_a);
    if fa.0 > max_separation {
        return None;
    }
    let fb = face_query(b, a, &a_in_b);
    if fb.0 > max_separation {
        return None;
    }
    let e = edge_query(a, b, &b_in_a);
    if e.0 > max_separation {
        return None;
    }
    let world_a = Frame { q: rot_a, t: pos_a };
    if e.0 > REL_EDGE_TOLERANCE * fa.0.max(fb.0) + ABS_TOLERANCE {
        return Some(edge_contact(a, b, &b_in_a, e.1, e.2, e.3, &world_a));
    }
    if fb.0 > REL_FACE_TOLERANCE * fa.0 + ABS_TOLERANCE {
        let world_b = Frame { q: rot_b, t: pos_b };
        face_contact(b, fb.1, a, &a_in_b, &world_b, max_separation).map(ContactPoints::flipped)
    } else {
        face_contact(a, fa.1, b, &b_in_a, &world_a, max_separation)
    }
}

/// The closest points of segments `p + s·d1` and `q + t·d2`, `s, t ∈ [0, 1]`.
pub(crate) fn closest_on_segments(p: Vec3, d1: Vec3, q: Vec3, d2: Vec3) -> (Vec3, Vec3) {
    let r = p - q;
    let (a, e, f) = (d1.dot(d1), d2.dot(d2), d2.dot(r));
    let (c, b) = (d1.dot(r), d1.dot(d2));
    let denom = a * e - b * b;
    let mut s = if denom > 1e-12 * a * e {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = if e > 0.0 { (b * s + f) / e } else { 0.0 };
    if t < 0.0 {
        t = 0.0;
        s = if a > 0.0 {
            (-c / a).clamp(0.0, 1.0)
        } else {
            0.0
        };
    } else if t > 1.0 {
        t = 1.0;
        s = if a > 0.0 {
            ((b - c) / a).clamp(0.0, 1.0)
        } else {
            0.0
        };
    }
    (p + d1 * s, q + d2 * t)
}

fn edge_contact(
    a: &Poly,
    b: &Poly,
    b_in_a: &Frame,
    n: Vec3,
    ea: usize,
    eb: usize,
    world_a: &Frame,
) -> ContactPoints {
    let [a0, a1] = a.edge_vertex[ea].map(|v| a.vertices[v as usize]);
    let [b0, b1] = b.edge_vertex[eb].map(|v| b_in_a.apply(b.vertices[v as usize]));
    let (pa, pb) = closest_on_segments(a0, a1 - a0, b0, b1 - b0);
    let mut c = ContactPoints::new(rotate(world_a.q, n));
    c.push(world_a.apply(pa), world_a.apply(pb));
    c
}

/// A polygon being clipped: at most [`MAX_CLIP`] points.
struct Polygon {
    p: [Vec3; MAX_CLIP],
    n: usize,
}

impl Polygon {
    fn push(&mut self, v: Vec3) {
        if self.n < MAX_CLIP {
            self.p[self.n] = v;
            self.n += 1;
        }
    }

    /// Keeps the part with `plane_n · p <= off` (Sutherland–Hodgman).
    fn clip(&self, plane_n: Vec3, off: f32, out: &mut Polygon) {
        out.n = 0;
        if self.n == 0 {
            return;
        }
        let mut prev = self.p[self.n - 1];
        let mut dp = plane_n.dot(prev) - off;
        for &cur in &self.p[..self.n] {
            let dc = plane_n.dot(cur) - off;
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

/// A face contact: face `rf` of `r` (the reference, in its own frame)
/// against the most anti-parallel face of `inc` (`inc_in_r`: its frame to
/// R's); normal from R to the incident polytope, world points by
/// `world_r`.
fn face_contact(
    r: &Poly,
    rf: usize,
    inc: &Poly,
    inc_in_r: &Frame,
    world_r: &Frame,
    max_separation: f32,
) -> Option<ContactPoints> {
    let n = r.normals[rf];
    let off = r.offsets[rf];
    // the incident face: least n_inc · n (in the incident frame)
    let n_in_inc = rotate(inc_in_r.q.conjugate(), n);
    let mut inc_face = 0;
    let mut least = f32::INFINITY;
    for (f, m) in inc.normals.iter().enumerate() {
        let d = m.dot(n_in_inc);
        if d < least {
            (least, inc_face) = (d, f);
        }
    }
    let mut poly = Polygon {
        p: [Vec3::ZERO; MAX_CLIP],
        n: 0,
    };
    for &v in inc.face(inc_face) {
        poly.push(inc_in_r.apply(inc.vertices[v as usize]));
    }
    let mut spare = Polygon {
        p: [Vec3::ZERO; MAX_CLIP],
        n: 0,
    };
    let ring = r.face(rf);
    for k in 0..ring.len() {
        let v0 = r.vertices[ring[k] as usize];
        let v1 = r.vertices[ring[(k + 1) % ring.len()] as usize];
        let side = (v1 - v0).cross(n);
        let len = side.length();
        if len <= 0.0 {
            continue;
        }
        let side = side / len;
        poly.clip(side, side.dot(v0), &mut spare);
        core::mem::swap(&mut poly, &mut spare);
    }
    // (on the reference face, on the incident face, separation)
    let mut kept: [(Vec3, Vec3, f32); MAX_CLIP] = [(Vec3::ZERO, Vec3::ZERO, 0.0); MAX_CLIP];
    let mut count = 0;
    for &p in &poly.p[..poly.n] {
        let s = n.dot(p) - off;
        if s <= max_separation {
            kept[count] = (p - n * s, p, s);
            count += 1;
        }
    }
    if count == 0 {
        // the incident face misses the reference face's prism (a grazing
        // corner the tolerance gave to a face): its deepest vertex
        let p = inc_in_r.apply(inc.support(-n_in_inc));
        let s = n.dot(p) - off;
        if s > max_separation {
            return None;
        }
        kept[0] = (p - n * s, p, s);
        count = 1;
    }
    let mut c = ContactPoints::new(rotate(world_r.q, n));
    for k in reduce(&kept[..count], n) {
        let (on_r, on_i, _) = kept[k];
        c.push(world_r.apply(on_r), world_r.apply(on_i));
    }
    Some(c)
}

/// Up to four of `pts` spanning the most area: the deepest, the farthest
/// from it, the one making the largest triangle with them, and the one
/// farthest outside that triangle (Gregorius 2015).
pub(crate) fn reduce(pts: &[(Vec3, Vec3, f32)], n: Vec3) -> impl Iterator<Item = usize> {
    let mut pick = [usize::MAX; 4];
    if pts.len() <= 4 {
        for (k, p) in pick.iter_mut().enumerate().take(pts.len()) {
            *p = k;
        }
    } else {
        let argmax = |f: &dyn Fn(usize) -> f32| {
            (0..pts.len()).fold((0, f32::NEG_INFINITY), |best, k| {
                let v = f(k);
                if v > best.1 {
                    (k, v)
                } else {
                    best
                }
            })
        };
        let p = |k: usize| pts[k].0;
        let i0 = argmax(&|k| -pts[k].2).0;
        let i1 = argmax(&|k| (p(k) - p(i0)).length_squared()).0;
        let area = |a: usize, b: usize, k: usize| (p(b) - p(a)).cross(p(k) - p(a)).dot(n);
        let (i2, a2) = argmax(&|k| area(i0, i1, k).abs());
        let sign = if area(i0, i1, i2) < 0.0 { -1.0 } else { 1.0 };
        // the point most outside one of the triangle's edges
        let (i3, a3) = argmax(&|k| {
            -(sign * area(i0, i1, k))
                .min(sign * area(i1, i2, k))
                .min(sign * area(i2, i0, k))
        });
        pick[0] = i0;
        pick[1] = i1;
        if a2 > 0.0 {
            pick[2] = i2;
            if a3 > 0.0 {
                pick[3] = i3;
            }
        }
    }
    pick.into_iter().filter(|&k| k != usize::MAX)
}

/// A sphere (centre `c`, radius `r`) against a hull, normal from the
/// sphere to the hull.
pub(crate) fn collide_sphere_hull(
    c: Vec3,
    r: f32,
    hull: &HullShape,
    pos: Vec3,
    rot: Quat,
    max_separation: f32,
) -> Option<ContactPoints> {
    let local = rotate(rot.conjugate(), c - pos);
    let (sep, f) = deepest_face_of_point(hull, local);
    if sep - r > max_separation {
        return None;
    }
    let (normal, on_hull) = if sep <= 0.0 {
        // the centre is inside: out through the nearest face
        let n = hull.face_normal[f];
        (-rotate(rot, n), c - rotate(rot, n) * sep)
    } else {
        let s = core_separation(CoreShape::Point(c), hull, pos, rot);
        if s.0 - r > max_separation {
            return None;
        }
        (s.1, s.2)
    };
    let mut out = ContactPoints::new(normal);
    out.push(c + normal * r, on_hull);
    Some(out)
}

/// `max_f (n_f · p - d_f)`: the face plane `p` is farthest above (or
/// least below), and the face.
fn deepest_face_of_point(hull: &HullShape, p: Vec3) -> (f32, usize) {
    let mut best = (f32::NEG_INFINITY, 0);
    for (f, (&n, &off)) in hull.face_normal.iter().zip(&hull.face_offset).enumerate() {
        let s = n.dot(p) - off;
        if s > best.0 {
            best = (s, f);
        }
    }
    best
}

enum CoreShape {
    Point(Vec3),
    Segment(Vec3, Vec3),
}

/// GJK between a core (world space) and the hull: `(distance, unit normal
/// from the core to the hull, closest point on the hull)`; distance 0 when
/// they touch.
fn core_separation(core: CoreShape, hull: &HullShape, pos: Vec3, rot: Quat) -> (f32, Vec3, Vec3) {
    use crate::query::sweep::{separation, Core};
    let a = match core {
        CoreShape::Point(c) => Core::point(c),
        CoreShape::Segment(p, q) => Core::segment(p, q),
    };
    let b = Core::hull(hull, pos, rot);
    let s = separation(&a, &b);
    (s.distance as f32, s.normal.as_vec3(), s.point_b.as_vec3())
}

/// A capsule (segment `p`–`q`, radius `r`) against a hull, normal from the
/// capsule to the hull.
pub(crate) fn collide_capsule_hull(
    p: Vec3,
    q: Vec3,
    r: f32,
    hull: &HullShape,
    pos: Vec3,
    rot: Quat,
    max_separation: f32,
) -> Option<ContactPoints> {
    let inv = rot.conjugate();
    let (lp, lq) = (rotate(inv, p - pos), rotate(inv, q - pos));
    // face axes: the segment's lower end against each face plane
    let mut face = (f32::NEG_INFINITY, 0);
    for (f, (&n, &off)) in hull.face_normal.iter().zip(&hull.face_offset).enumerate() {
        let s = n.dot(lp).min(n.dot(lq)) - off;
        if s > face.0 {
            face = (s, f);
        }
    }
    if face.0 - r > max_separation {
        return None;
    }
    let (d0, d1) = (lp, lq);
    let core = core_separation(CoreShape::Segment(p, q), hull, pos, rot);
    let apart = core.0 > 0.0;
    if apart && core.0 - r > max_separation {
        return None;
    }
    // the face the contact is on: the separated normal's, or the SAT's
    let (mut best_face, mut normal_local) = (face.1, -hull.face_normal[face.1]);
    if apart {
        let n_local = rotate(inv, core.1);
        let f = (0..hull.face_normal.len())
            .max_by(|&i, &j| {
                (-hull.face_normal[i].dot(n_local)).total_cmp(&-hull.face_normal[j].dot(n_local))
            })
            .unwrap_or(0);
        best_face = f;
        normal_local = n_local;
    } else {
        // overlapping cores: segment × edge axes against the best face
        let e = d1 - d0;
        let mut edge = (f32::NEG_INFINITY, Vec3::ZERO, 0usize);
        for (k, (ev, ef)) in hull.edge_vertex.iter().zip(&hull.edge_face).enumerate() {
            let v0 = hull.vertices[ev[0] as usize];
            let he = hull.vertices[ev[1] as usize] - v0;
            let axis = e.cross(he);
            let len = axis.length();
            if len <= PARALLEL_EDGES * e.length() * he.length() {
                continue;
            }
            // the orientation on the edge's Gauss arc (between its two
            // face normals): there the edge is the hull's support feature
            let (f0, f1) = (
                hull.face_normal[ef[0] as usize],
                hull.face_normal[ef[1] as usize],
            );
            let on_arc = |n: Vec3| {
                let c = f0.dot(f1) - 1e-6;
                n.dot(f0) >= c && n.dot(f1) >= c
            };
            let n = axis / len;
            let n = if on_arc(n) {
                n
            } else if on_arc(-n) {
                -n
            } else {
                continue;
            };
            let s = n.dot(d0).min(n.dot(d1)) - n.dot(v0);
            if s > edge.0 {
                edge = (s, n, k);
            }
        }
        if edge.0 > REL_EDGE_TOLERANCE * face.0 + ABS_TOLERANCE {
            let ev = hull.edge_vertex[edge.2];
            let (v0, v1) = (hull.vertices[ev[0] as usize], hull.vertices[ev[1] as usize]);
            let (_, on_edge) = closest_on_segments(d0, e, v0, v1 - v0);
            let out_n = edge.1;
            // the capsule's point: off the edge by the axis' separation
            let on_cap = on_edge + out_n * (edge.0 - r);
            let mut out = ContactPoints::new(rotate(rot, -out_n));
            out.push(pos + rotate(rot, on_cap), pos + rotate(rot, on_edge));
            return Some(out);
        }
    }
    let fnorm = hull.face_normal[best_face];
    let seg = d1 - d0;
    let seg_len = seg.length();
    let lies_on_face = -fnorm.dot(normal_local) > 1.0 - SEGMENT_ON_FACE * SEGMENT_ON_FACE
        && seg_len > 0.0
        && (fnorm.dot(seg) / seg_len).abs() < SEGMENT_ON_FACE;
    if lies_on_face || !apart {
        // clip the segment to the face's prism: both ends on the face
        if let Some(c) = segment_on_face(hull, best_face, d0, d1, r, pos, rot, max_separation) {
            return Some(c);
        }
    }
    if apart {
        let n = core.1;
        let mut out = ContactPoints::new(n);
        let on_hull = core.2;
        // the capsule's surface point: back from the hull's by the gap
        out.push(on_hull - n * (core.0 - r), on_hull);
        return Some(out);
    }
    // deep and the segment leaves the face's prism: its lower end
    let n = -fnorm;
    let low = if fnorm.dot(d0) <= fnorm.dot(d1) {
        d0
    } else {
        d1
    };
    let s = fnorm.dot(low) - hull.face_offset[best_face];
    let mut out = ContactPoints::new(rotate(rot, n));
    out.push(
        pos + rotate(rot, low + n * r),
        pos + rotate(rot, low - fnorm * s),
    );
    Some(out)
}

/// The segment `d0`–`d1` (hull frame) clipped to face `f`'s side planes;
/// the clipped ends within the contact distance of the face, each with
/// its point on the face. `None` if the clip leaves nothing.
#[allow(clippy::too_many_arguments)]
fn segment_on_face(
    hull: &HullShape,
    f: usize,
    d0: Vec3,
    d1: Vec3,
    r: f32,
    pos: Vec3,
    rot: Quat,
    max_separation: f32,
) -> Option<ContactPoints> {
    let n = hull.face_normal[f];
    let ring = hull.face_loop(f);
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    let e = d1 - d0;
    for k in 0..ring.len() {
        let v0 = hull.vertices[ring[k] as usize];
        let v1 = hull.vertices[ring[(k + 1) % ring.len()] as usize];
        let side = (v1 - v0).cross(n);
        // keep side · (d0 + t e - v0) <= 0
        let a = side.dot(d0 - v0);
        let b = side.dot(e);
        if b.abs() <= 1e-12 {
            if a > 0.0 {
                return None;
            }
            continue;
        }
        let t = -a / b;
        if b > 0.0 {
            t1 = t1.min(t);
        } else {
            t0 = t0.max(t);
        }
        if t0 > t1 {
            return None;
        }
    }
    let mut out = ContactPoints::new(rotate(rot, -n));
    for t in [t0, t1] {
        let x = d0 + e * t;
        let s = n.dot(x) - hull.face_offset[f];
        if s - r <= max_separation {
            out.push(pos + rotate(rot, x - n * r), pos + rotate(rot, x - n * s));
        }
        if t1 - t0 <= 1e-6 {
            break;
        }
    }
    (out.count > 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hull::ConvexHull;

    fn cube_hull(h: f32) -> HullShape {
        let pts: Vec<Vec3> = (0..8)
            .map(|k| {
                let s = |bit: usize| if k & (1 << bit) != 0 { h } else { -h };
                Vec3::new(s(0), s(1), s(2))
            })
            .collect();
        HullShape::new(&ConvexHull::from_points(&pts).unwrap())
    }

    /// The box topology tables are a closed, outward polytope: each loop's
    /// winding gives its normal, each edge's two faces hold it.
    #[test]
    fn box_topology_is_consistent() {
        let b = BoxPoly::new(Vec3::new(1.0, 2.0, 3.0));
        let p = b.poly();
        for f in 0..6 {
            let l = p.face(f);
            let (v0, v1, v2) = (
                p.vertices[l[0] as usize],
                p.vertices[l[1] as usize],
                p.vertices[l[2] as usize],
            );
            let n = (v1 - v0).cross(v2 - v1).normalize();
            assert!((n - p.normals[f]).length() < 1e-6, "face {f}: {n:?}");
            for &v in l {
                assert!((p.normals[f].dot(p.vertices[v as usize]) - p.offsets[f]).abs() < 1e-6);
            }
        }
        for (ev, ef) in p.edge_vertex.iter().zip(p.edge_face) {
            for &f in ef {
                assert!(p.face(f as usize).contains(&ev[0]) && p.face(f as usize).contains(&ev[1]));
            }
        }
    }

    /// A hull cube on a box: four points at the corners of the contact
    /// square, the measured penetration on each.
    #[test]
    fn a_hull_cube_resting_on_a_box_has_four_corner_points() {
        let hull = cube_hull(0.5);
        let floor = BoxPoly::new(Vec3::new(5.0, 0.5, 5.0));
        let depth = 0.01;
        let c = collide_poly_poly(
            &floor.poly(),
            Vec3::new(0.0, -0.5, 0.0),
            Quat::IDENTITY,
            &Poly::of_hull(&hull),
            Vec3::new(0.3, 0.5 - depth, -0.2),
            Quat::from_rotation_y(0.3),
            0.02,
        )
        .unwrap();
        println!("{} points, normal {:?}", c.count, c.normal);
        assert_eq!(c.count, 4);
        assert!((c.normal - Vec3::Y).length() < 1e-5);
        for k in 0..4 {
            assert!(
                (c.separation(k) + depth).abs() < 1e-5,
                "{}",
                c.separation(k)
            );
        }
    }

    /// Two cubes crossed edge to edge (each turned 45° about a different
    /// axis): one point, on the axis between their centres, the normal
    /// along it.
    #[test]
    fn crossed_edges_give_one_edge_point() {
        let hull = cube_hull(0.5);
        let h = 0.5 * 2f32.sqrt();
        let depth = 0.01;
        let c = collide_poly_poly(
            &Poly::of_hull(&hull),
            Vec3::ZERO,
            Quat::from_rotation_z(core::f32::consts::FRAC_PI_4),
            &Poly::of_hull(&hull),
            Vec3::new(0.0, 2.0 * h - depth, 0.0),
            Quat::from_rotation_x(core::f32::consts::FRAC_PI_4),
            0.02,
        )
        .unwrap();
        println!(
            "{} points, normal {:?}, sep {}",
            c.count,
            c.normal,
            c.separation(0)
        );
        assert_eq!(c.count, 1);
        assert!((c.normal - Vec3::Y).length() < 1e-4);
        assert!((c.separation(0) + depth).abs() < 1e-4);
    }

    #[test]
    fn apart_polytopes_have_no_contact() {
        let hull = cube_hull(0.5);
        let c = collide_poly_poly(
            &Poly::of_hull(&hull),
            Vec3::ZERO,
            Quat::IDENTITY,
            &Poly::of_hull(&hull),
            Vec3::new(1.1, 0.3, 0.0),
            Quat::from_rotation_y(0.1),
            0.02,
        );
        assert!(c.is_none());
    }

    /// Sphere and capsule against a hull cube agree with the same against
    /// a box (the box paths are the tested references).
    #[test]
    fn round_shapes_on_a_hull_match_the_box_paths() {
        let hull = cube_hull(0.5);
        let h = Vec3::splat(0.5);
        let rot = Quat::from_rotation_y(0.4);
        let mut rng = crate::test_rng::TestRng(5);
        let mut deep_capsules = 0;
        let mut worst = 0.0f32;
        for k in 0..400 {
            let c = Vec3::new(rng.f(-1.2, 1.2), rng.f(-1.2, 1.2), rng.f(-1.2, 1.2));
            let r = rng.f(0.05, 0.4);
            let a = collide_sphere_hull(c, r, &hull, Vec3::ZERO, rot, 0.02);
            let b = super::super::collide_sphere_box(c, r, Vec3::ZERO, rot, h, 0.02);
            match (a, b) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    assert!((a.normal - b.normal).length() < 1e-3, "{k}: {a:?} {b:?}");
                    assert!((a.separation(0) - b.separation(0)).abs() < 1e-3, "{k}");
                }
                (a, b) => {
                    // only at the contact distance's edge may they differ
                    let s = a.or(b).unwrap().separation(0);
                    assert!((s - 0.02).abs() < 1e-3, "{k}: {a:?} vs {b:?}");
                }
            }
            let q = c + Vec3::new(rng.f(-0.5, 0.5), rng.f(-0.5, 0.5), rng.f(-0.5, 0.5));
            let a = collide_capsule_hull(c, q, r, &hull, Vec3::ZERO, rot, 0.02);
            let deepest = |x: &ContactPoints| {
                (0..x.count)
                    .map(|i| x.separation(i))
                    .fold(f32::INFINITY, f32::min)
            };
            let core_apart =
                core_separation(CoreShape::Segment(c, q), &hull, Vec3::ZERO, rot).0 > 0.0;
            if core_apart {
                // shallow: the box path is the reference
                let b = super::super::collide_capsule_box(c, q, r, Vec3::ZERO, rot, h, 0.02);
                match (a, b) {
                    (None, None) => {}
                    (Some(a), Some(b)) => {
                        assert!(
                            (deepest(&a) - deepest(&b)).abs() < 2e-3,
                            "{k}: capsule {c:?} {q:?} r {r}: {} vs {}",
                            deepest(&a),
                            deepest(&b)
                        );
                    }
                    (a, b) => {
                        let x = a.or(b).unwrap();
                        assert!((deepest(&x) - 0.02).abs() < 2e-3, "{k}: {a:?} vs {b:?}");
                    }
                }
            } else {
                // deep: pushing the capsule out along the normal by the
                // deepest penetration leaves it (at most) touching
                let a = a.expect("overlapping cores touch");
                let d = deepest(&a);
                assert!(
                    d < 0.0,
                    "{k}: overlap reported as {d}: {c:?} {q:?} r {r}: {a:?}"
                );
                let shift = a.normal * (d - 1e-3);
                let after =
                    collide_capsule_hull(c + shift, q + shift, r, &hull, Vec3::ZERO, rot, 0.02)
                        .map_or(f32::INFINITY, |x| deepest(&x));
                // (a segment clipped to the face's prism can report less
                // than the axis' full depth: a tenth of it may remain)
                assert!(
                    after > 0.1 * d,
                    "{k}: pushed out by {d}, still {after} deep"
                );
                worst = worst.max(-after / -d);
                deep_capsules += 1;
            }
        }
        println!(
            "{deep_capsules} of 400 capsules deep (push-out leaves at most {:.1}% of the depth), the rest match the box path",
            100.0 * worst
        );
        assert!(deep_capsules > 20);
    }
}
