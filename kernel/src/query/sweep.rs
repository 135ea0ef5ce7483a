//! Shape casts: the distance between two placed convex shapes by GJK, and
//! the first time of impact of one moving along a line by conservative
//! advancement on that distance.
//!
//! Every shape is a *core* swept by a radius: a sphere is a point, a
//! capsule a segment, a box itself (radius 0). GJK runs on the cores
//! (their support functions, below) and the radii are taken off after,
//! so round shapes converge in a few iterations instead of creeping along
//! a curved surface.
//!
//! Conservative advancement: at the current position, GJK gives the
//! distance `d` and the direction `n` from the cast shape to the other.
//! Moving by `s` along the unit direction `u` closes the distance by at
//! most `s · (u·n)` (the shapes are convex, so the distance is a convex
//! function of `s` whose slope here is `-(u·n)`); so advancing by
//! `d / (u·n)` never passes the first contact, and `u·n <= 0` means the
//! distance can never shrink again: no hit. The walk stops when the gap is
//! below [`HIT_TOLERANCE`]. Each GJK run starts from the last one's
//! simplex, moved with the shape (`Warm`), so a step near the contact
//! costs an iteration or two. A sphere against a sphere or a capsule
//! skips all this: its first contact is a ray against a capsule, solved
//! in closed form (`cast_point_segment`).
//!
//! The arithmetic is `f64`: near contact the closest points of a large
//! face (a floor) are found to ~1e-6 m in `f32`, which at a 0.05 mm gap
//! turns the normal by degrees; in `f64` the same error is ~1e-14 m.
//! Inputs and results are `f32`. (Scalar `f64` costs what `f32` does.)

use crate::hull_shape::HullShape;
use crate::math::{Quat, Vec3};
use crate::shape::Shape;
use crate::shape_store::ShapeStore;
use glam::{DQuat, DVec3};

/// The gap (m) at which a cast counts as touching: the reported hit
/// distance is at most this short of the exact first contact, never past
/// it (0.1 mm: far below the narrow phase's 2 cm contact distance).
pub(crate) const HIT_TOLERANCE: f32 = 1e-4;

/// GJK iterations: each one moves the simplex to a new support vertex, so
/// boxes (8 vertices) settle in a few and hulls (up to 256) in tens; this
/// bounds degenerate cases.
const GJK_ITERATIONS: usize = 32;

/// Advancement steps before a cast gives up and reports a hit at the
/// distance reached (a grazing approach closes the gap geometrically;
/// 64 steps take it below the tolerance in every case the tests try).
const CAST_ITERATIONS: usize = 64;

/// A shape at a pose, as GJK sees it.
#[derive(Clone, Copy)]
pub(crate) struct Core<'a> {
    shape: Shape,
    /// The hull behind a [`Shape::Hull`].
    hull: Option<&'a HullShape>,
    /// A triangle's corners (world), for casts against meshes and height
    /// fields (the shape is then ignored).
    tri: Option<[DVec3; 3]>,
    pos: DVec3,
    rot: DQuat,
    /// The core's axes in world space (`rot`'s matrix by columns): a
    /// support point takes three dot products into the core's frame and
    /// three scaled axes back, instead of two quaternion turns.
    axes: [DVec3; 3],
}

/// `q · v · q⁻¹`, written out (no fused operations).
fn rotate(q: DQuat, v: DVec3) -> DVec3 {
    let u = DVec3::new(q.x, q.y, q.z);
    let t = u.cross(v) * 2.0;
    v + t * q.w + u.cross(t)
}

/// The columns of `q`'s rotation matrix: the turned unit axes.
fn axes_of(q: DQuat) -> [DVec3; 3] {
    [DVec3::X, DVec3::Y, DVec3::Z].map(|e| rotate(q, e))
}

impl<'a> Core<'a> {
    /// `shape` at a pose; a hull's id names a hull of `store`. (A mesh or
    /// height field is no convex core: casts against one go triangle by
    /// triangle, see [`Core::triangle`].)
    pub fn new(shape: Shape, pos: Vec3, rot: Quat, store: &'a ShapeStore) -> Self {
        Self {
            shape,
            hull: shape.hull(store),
            tri: None,
            pos: pos.as_dvec3(),
            rot: DQuat::from_xyzw(rot.x as f64, rot.y as f64, rot.z as f64, rot.w as f64),
            axes: [DVec3::X, DVec3::Y, DVec3::Z],
        }
        .turned()
    }

    /// Sets [`axes`](Self::axes) from `rot`.
    fn turned(mut self) -> Self {
        self.axes = axes_of(self.rot);
        self
    }

    /// A hull at a pose.
    pub fn hull(hull: &'a HullShape, pos: Vec3, rot: Quat) -> Self {
        let mut c = Self::new(
            Shape::Sphere { radius: 0.0 },
            pos,
            rot,
            &crate::shape_store::NO_SHAPES,
        );
        c.hull = Some(hull);
        c
    }

    /// A triangle (world corners), radius 0.
    pub fn triangle(v: [Vec3; 3]) -> Self {
        let mut c = Self::point(v[0]);
        c.tri = Some(v.map(|p| p.as_dvec3()));
        c
    }

    /// A point (radius 0).
    pub fn point(p: Vec3) -> Self {
        Self::new(
            Shape::Sphere { radius: 0.0 },
            p,
            Quat::IDENTITY,
            &crate::shape_store::NO_SHAPES,
        )
    }

    /// The segment `p`–`q` (radius 0).
    pub fn segment(p: Vec3, q: Vec3) -> Self {
        let (p, q) = (p.as_dvec3(), q.as_dvec3());
        let axis = q - p;
        let len = axis.length();
        let rot = if len > 0.0 {
            DQuat::from_rotation_arc(DVec3::Y, axis / len)
        } else {
            DQuat::IDENTITY
        };
        Self {
            shape: Shape::Capsule {
                half_height: (0.5 * len) as f32,
                radius: 0.0,
            },
            hull: None,
            tri: None,
            pos: 0.5 * (p + q),
            rot,
            axes: [DVec3::X, DVec3::Y, DVec3::Z],
        }
        .turned()
    }

    fn radius(&self) -> f64 {
        match self.shape {
            _ if self.hull.is_some() || self.tri.is_some() => 0.0,
            Shape::Sphere { radius } | Shape::Capsule { radius, .. } => radius as f64,
            Shape::Box { .. }
            | Shape::Hull(_)
            | Shape::Compound(_)
            | Shape::Mesh(_)
            | Shape::HeightField(_) => 0.0,
        }
    }

    /// The core's farthest point along `d` (world space).
    fn support(&self, d: DVec3) -> DVec3 {
        if let Some(t) = self.tri {
            let k = (1..3).fold(0, |b, k| if t[k].dot(d) > t[b].dot(d) { k } else { b });
            return t[k];
        }
        let [ax, ay, az] = self.axes;
        // `h` along the axis, on the side `d` points to
        let reach = |axis: DVec3, h: f32| {
            if axis.dot(d) >= 0.0 {
                axis * h as f64
            } else {
                axis * -(h as f64)
            }
        };
        if let Some(h) = self.hull {
            let local = DVec3::new(ax.dot(d), ay.dot(d), az.dot(d));
            let mut best = DVec3::ZERO;
            let mut best_dot = f64::NEG_INFINITY;
            for v in &h.vertices {
                let v = v.as_dvec3();
                let t = v.dot(local);
                if t > best_dot {
                    (best, best_dot) = (v, t);
                }
            }
            return self.pos + (ax * best.x + ay * best.y + az * best.z);
        }
        match self.shape {
            Shape::Sphere { .. }
            | Shape::Hull(_)
            | Shape::Compound(_)
            | Shape::Mesh(_)
            | Shape::HeightField(_) => self.pos,
            Shape::Capsule { half_height, .. } => self.pos + reach(ay, half_height),
            Shape::Box { half_extents: h } => {
                self.pos + (reach(ax, h.x) + reach(ay, h.y) + reach(az, h.z))
            }
        }
    }

    /// Some point of the core (GJK's start).
    fn centre(&self) -> DVec3 {
        match self.tri {
            Some(t) => (t[0] + t[1] + t[2]) / 3.0,
            None => self.pos,
        }
    }
}

/// A point of the Minkowski difference `A - B` and the support points it
/// came from.
#[derive(Clone, Copy, Default)]
struct Vertex {
    w: DVec3,
    a: DVec3,
    b: DVec3,
}

/// The distance between two shapes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Separation {
    /// Surface to surface (m); 0 when they touch or overlap.
    pub distance: f64,
    /// Unit, from A towards B (meaningless when the cores overlap).
    pub normal: DVec3,
    /// The closest point of B's surface.
    pub point_b: DVec3,
    /// The cores themselves overlap (deep penetration).
    pub cores_overlap: bool,
}

/// The distance between the surfaces of `a` and `b`.
pub(crate) fn separation(a: &Core, b: &Core) -> Separation {
    let mut cold = Warm::COLD;
    separation_from(a, b, &mut cold)
}

/// GJK's last simplex, kept between the distance queries of one cast.
///
/// A shape's support points move with it: after the cast shape `A` moves
/// by `delta`, every vertex `a - b` of the last simplex, shifted by
/// `delta`, is a point of the new Minkowski difference, so GJK can go on
/// from that simplex (a warm start) instead of from the centres. Near the
/// contact the old simplex already holds the closest features, and GJK
/// ends in an iteration or two instead of walking across the shapes again.
/// It stops on the same test either way, so the distance is as accurate.
#[derive(Clone, Copy)]
pub(crate) struct Warm {
    simplex: Simplex,
}

impl Warm {
    /// No simplex yet: GJK starts from the centres.
    pub const COLD: Warm = Warm {
        simplex: Simplex {
            v: [Vertex {
                w: DVec3::ZERO,
                a: DVec3::ZERO,
                b: DVec3::ZERO,
            }; 4],
            n: 0,
        },
    };

    /// Follows `A` moved by `delta`.
    fn shift(&mut self, delta: DVec3) {
        let n = self.simplex.n;
        for v in &mut self.simplex.v[..n] {
            v.a += delta;
            v.w += delta;
        }
    }
}

/// [`separation`], GJK starting from `warm` (and leaving its last simplex
/// there).
fn separation_from(a: &Core, b: &Core, warm: &mut Warm) -> Separation {
    let (pa, pb, cores_overlap) = closest_core_points(a, b, warm);
    let gap = pb - pa;
    let core_distance = gap.length();
    let normal = if core_distance > 0.0 {
        gap / core_distance
    } else {
        DVec3::X
    };
    let cores_overlap = cores_overlap || core_distance == 0.0;
    let distance = if cores_overlap {
        0.0
    } else {
        (core_distance - a.radius() - b.radius()).max(0.0)
    };
    Separation {
        distance,
        normal,
        point_b: pb - normal * b.radius(),
        cores_overlap,
    }
}

/// GJK: the closest points of the two cores, and whether they overlap;
/// from `warm`'s simplex when it has one, which is left holding the last.
fn closest_core_points(a: &Core, b: &Core, warm: &mut Warm) -> (DVec3, DVec3, bool) {
    let vertex = |d: DVec3| {
        let (pa, pb) = (a.support(-d), b.support(d));
        Vertex {
            w: pa - pb,
            a: pa,
            b: pb,
        }
    };
    let simplex = &mut warm.simplex;
    // (a kept simplex has at most 3 vertices: the closest point of one
    // never needs a fourth, so it never reads as inside)
    let warm_start = match simplex.n {
        0 => None,
        n => match simplex.closest_to_origin(n) {
            Closest::Point(p, ids, r) => Some((p, ids, r)),
            Closest::Inside | Closest::Degenerate => None,
        },
    };
    let (mut v, mut weights) = if let Some((p, ids, r)) = warm_start {
        (p, simplex.keep(ids, r))
    } else {
        let (pa, pb) = (a.centre(), b.centre());
        simplex.v[0] = Vertex {
            w: pa - pb,
            a: pa,
            b: pb,
        };
        simplex.n = 1;
        (simplex.v[0].w, [1.0f64, 0.0, 0.0, 0.0])
    };
    for _ in 0..GJK_ITERATIONS {
        let vv = v.length_squared();
        if vv <= 1e-24 {
            break;
        }
        let w = vertex(v);
        // no support point gets closer to the origin than v by more than
        // a relative 1e-10: v is the closest point
        if vv - v.dot(w.w) <= 1e-10 * vv {
            break;
        }
        let n = simplex.n;
        if simplex.v[..n]
            .iter()
            .any(|s| (s.w - w.w).length_squared() <= 1e-24)
        {
            break; // repeated vertex: no progress possible
        }
        // The new vertex waits past the kept ones; it joins them only if
        // it brings the simplex closer.
        simplex.v[n] = w;
        match simplex.closest_to_origin(n + 1) {
            Closest::Inside => {
                let (pa, pb) = simplex.points(&weights);
                return (pa, pb, true);
            }
            Closest::Degenerate => break,
            Closest::Point(p, ids, r) => {
                if p.length_squared() >= vv {
                    break; // rounding: keep the no worse answer
                }
                v = p;
                weights = simplex.keep(ids, r);
            }
        }
    }
    let (pa, pb) = simplex.points(&weights);
    (pa, pb, v.length_squared() <= 1e-24)
}

#[derive(Clone, Copy)]
struct Simplex {
    v: [Vertex; 4],
    n: usize,
}

/// What the closest point of a simplex to the origin is.
enum Closest {
    /// The closest point, carried by the vertices `ids[r.idx[..]]` with
    /// the weights `r.lambda` (see [`Simplex::keep`]).
    Point(DVec3, [usize; 3], Reduced),
    /// The origin is inside the tetrahedron.
    Inside,
    /// The tetrahedron is flat.
    Degenerate,
}

/// The vertices (of a segment's 2 or a triangle's 3) that carry the
/// closest point to the origin, and their weights.
#[derive(Clone, Copy)]
struct Reduced {
    idx: [usize; 3],
    lambda: [f64; 3],
    n: usize,
}

impl Reduced {
    fn one(i: usize) -> Self {
        Self {
            idx: [i, 0, 0],
            lambda: [1.0, 0.0, 0.0],
            n: 1,
        }
    }
    fn two(i: usize, j: usize, t: f64) -> Self {
        Self {
            idx: [i, j, 0],
            lambda: [1.0 - t, t, 0.0],
            n: 2,
        }
    }
}

impl Simplex {
    fn points(&self, lambda: &[f64; 4]) -> (DVec3, DVec3) {
        let mut pa = DVec3::ZERO;
        let mut pb = DVec3::ZERO;
        for (v, &l) in self.v[..self.n].iter().zip(lambda) {
            pa += v.a * l;
            pb += v.b * l;
        }
        (pa, pb)
    }

    /// Keeps the vertices `ids[r.idx[..]]` (in that order) and gives
    /// their weights.
    fn keep(&mut self, ids: [usize; 3], r: Reduced) -> [f64; 4] {
        let mut lambda = [0.0; 4];
        for k in 0..r.n {
            // the sources ascend and none precedes its target (faces and
            // their reductions list vertices in order), so moving them
            // down in place never overwrites one still to be read
            self.v[k] = self.v[ids[r.idx[k]]];
            lambda[k] = r.lambda[k];
        }
        self.n = r.n;
        lambda
    }

    /// The point of the simplex of the first `n` vertices closest to the
    /// origin, and the vertices that carry it (the simplex is not
    /// changed: [`keep`](Self::keep) reduces it).
    fn closest_to_origin(&self, n: usize) -> Closest {
        let w = |k: usize| self.v[k].w;
        let point = |ids: [usize; 3], r: Reduced| {
            let mut p = DVec3::ZERO;
            for k in 0..r.n {
                p += w(ids[r.idx[k]]) * r.lambda[k];
            }
            Closest::Point(p, ids, r)
        };
        match n {
            1 => point([0, 1, 2], Reduced::one(0)),
            2 => point([0, 1, 2], segment(w(0), w(1))),
            3 => point([0, 1, 2], triangle(w(0), w(1), w(2))),
            _ => {
                let (e1, e2, e3) = (w(1) - w(0), w(2) - w(0), w(3) - w(0));
                let volume = e1.dot(e2.cross(e3));
                let scale = e1.length() * e2.length() * e3.length();
                if volume.abs() <= 1e-9 * scale {
                    return Closest::Degenerate; // flat: the new vertex adds nothing
                }
                // each face whose plane has the origin on the side away
                // from the fourth vertex may hold the closest point
                let faces = [
                    ([0, 1, 2], 3),
                    ([0, 1, 3], 2),
                    ([0, 2, 3], 1),
                    ([1, 2, 3], 0),
                ];
                let mut best: Option<(f64, DVec3, [usize; 3], Reduced)> = None;
                for (f, opposite) in faces {
                    let (a, b, c) = (w(f[0]), w(f[1]), w(f[2]));
                    let normal = (b - a).cross(c - a);
                    if normal.dot(-a) * normal.dot(w(opposite) - a) >= 0.0 {
                        continue;
                    }
                    let r = triangle(a, b, c);
                    let mut p = DVec3::ZERO;
                    for k in 0..r.n {
                        p += w(f[r.idx[k]]) * r.lambda[k];
                    }
                    let d = p.length_squared();
                    if best.is_none_or(|(bd, ..)| d < bd) {
                        best = Some((d, p, f, r));
                    }
                }
                match best {
                    None => Closest::Inside,
                    Some((_, p, f, r)) => Closest::Point(p, f, r),
                }
            }
        }
    }
}

/// The closest point of segment `ab` to the origin.
fn segment(a: DVec3, b: DVec3) -> Reduced {
    let ab = b - a;
    let t = -a.dot(ab);
    if t <= 0.0 {
        return Reduced::one(0);
    }
    let len2 = ab.length_squared();
    if t >= len2 {
        return Reduced::one(1);
    }
    Reduced::two(0, 1, t / len2)
}

/// The closest point of triangle `abc` to the origin (Ericson,
/// *Real-Time Collision Detection* 5.1.5, with the origin as the point).
fn triangle(a: DVec3, b: DVec3, c: DVec3) -> Reduced {
    let (ab, ac, ap) = (b - a, c - a, -a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return Reduced::one(0);
    }
    let bp = -b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return Reduced::one(1);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return Reduced::two(0, 1, d1 / (d1 - d3));
    }
    let cp = -c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return Reduced::one(2);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return Reduced::two(0, 2, d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return Reduced::two(1, 2, (d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = va + vb + vc;
    if denom.abs() <= f64::MIN_POSITIVE {
        // degenerate (collinear) triangle: its first edge
        return segment(a, b);
    }
    let (v, w) = (vb / denom, vc / denom);
    Reduced {
        idx: [0, 1, 2],
        lambda: [1.0 - v - w, v, w],
        n: 3,
    }
}

/// Where a cast first touches.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Impact {
    /// Along the cast's unit direction (m).
    pub distance: f32,
    /// The other shape's outward normal at the contact (unit).
    pub normal: Vec3,
    /// The contact point on the other shape's surface.
    pub point: Vec3,
}

/// The first contact of `shape` at `pos, rot` moving along unit `dir` by
/// up to `max` m with `other` (at rest), or `None`. Already touching or
/// overlapping: distance 0 (normal: away from `other` along the gap, or
/// against `dir` when the cores overlap).
pub(crate) fn cast(shape: &Core, dir: Vec3, max: f32, other: &Core) -> Option<Impact> {
    match cast_point_segment(shape, dir.as_dvec3(), max as f64, other) {
        Some(closed_form) => closed_form,
        None => cast_advancing(shape, dir, max, other),
    }
}

/// Where a round core (a sphere's point, a capsule's segment) is, as a
/// centre, a half axis (zero for a point) and a radius; `None` for others.
fn round_core(c: &Core) -> Option<(DVec3, DVec3, f64)> {
    if c.hull.is_some() || c.tri.is_some() {
        return None;
    }
    match c.shape {
        Shape::Sphere { radius } => Some((c.pos, DVec3::ZERO, radius as f64)),
        Shape::Capsule {
            half_height,
            radius,
        } => Some((c.pos, c.axes[1] * half_height as f64, radius as f64)),
        _ => None,
    }
}

/// [`cast`] in closed form when one core is a point and the other a point
/// or a segment (a sphere against a sphere or a capsule, either moving):
/// the point, moving relative to the segment, is a ray against the
/// capsule of the summed radii. `None` for other pairs (conservative
/// advancement takes them); `Some(None)` for a miss.
///
/// The hit is the exact first contact less half of [`HIT_TOLERANCE`]
/// (the gap closes at most one metre per metre moved, so it is then at
/// most that), as conservative advancement stops: never past the contact.
fn cast_point_segment(shape: &Core, dir: DVec3, max: f64, other: &Core) -> Option<Option<Impact>> {
    let (pa, ha, ra) = round_core(shape)?;
    let (pb, hb, rb) = round_core(other)?;
    // the point, the segment, and the point's motion relative to it
    let (point, centre, half, u, moving_point) = match (ha == DVec3::ZERO, hb == DVec3::ZERO) {
        (true, _) => (pa, pb, hb, dir, true),
        (false, true) => (pb, pa, ha, -dir, false),
        (false, false) => return None,
    };
    let reach = ra + rb;
    let o = point - centre;
    let Some(t) = ray_round_segment(o, u, half, reach).filter(|&t| t <= max) else {
        return Some(None);
    };
    // the point's offset from the nearest point of the segment, at contact
    let at = o + u * t;
    let hh = half.length_squared();
    let s = if hh > 0.0 {
        half * (at.dot(half) / hh).clamp(-1.0, 1.0)
    } else {
        DVec3::ZERO
    };
    let gap = at - s;
    let len = gap.length();
    let distance = (t - 0.5 * HIT_TOLERANCE as f64).max(0.0);
    let (normal, point_b) = if len == 0.0 {
        // the cores meet (overlapping at the start, or two radius-0
        // cores crossing): as conservative advancement
        (-dir, shape.pos + dir * t)
    } else {
        let n = gap / len; // from the segment towards the point
        if moving_point {
            // B is the segment: its outward normal is n
            (n, centre + s + n * rb)
        } else {
            // B is the point: its outward normal faces the segment
            (-n, point - n * rb)
        }
    };
    Some(Some(Impact {
        distance: distance as f32,
        normal: normal.as_vec3(),
        point: point_b.as_vec3(),
    }))
}

/// The first `t >= 0` at which `o + t·u` is within `r` of the
/// segment from `-half` to `half`: `Some(0)` when `o` already is, `None`
/// when the line never comes within `r` ahead of `o`. The capsule is its
/// side (the cylinder between the ends) and the two end spheres.
fn ray_round_segment(o: DVec3, u: DVec3, half: DVec3, r: f64) -> Option<f64> {
    let hh = half.length_squared();
    let nearest = |p: DVec3| {
        if hh > 0.0 {
            half * (p.dot(half) / hh).clamp(-1.0, 1.0)
        } else {
            DVec3::ZERO
        }
    };
    let start = o - nearest(o);
    if start.length_squared() <= r * r {
        return Some(0.0);
    }
    // a sphere at `c`: |o - c + t·u|² = r², nearer root ahead of `o`
    // (`u·u` kept: an f32 unit vector is off by ~1e-7, which a grazing
    // hit's root would magnify)
    let uu = u.length_squared();
    let sphere = |c: DVec3| {
        let m = o - c;
        let b = m.dot(u);
        let k = m.length_squared() - r * r;
        let disc = b * b - uu * k;
        // (the nearer root as k / (-b + √disc): no cancellation)
        (b < 0.0 && disc >= 0.0).then(|| k / (disc.sqrt() - b))
    };
    let mut best: Option<f64> = None;
    let mut take = |t: Option<f64>| {
        if let Some(t) = t.filter(|&t| t >= 0.0) {
            best = Some(best.map_or(t, |b: f64| b.min(t)));
        }
    };
    take(sphere(half));
    take(sphere(-half));
    if hh > 0.0 {
        // the side: the part of o + t·u across the axis is a ray in the
        // plane normal to the axis against a circle of radius r
        let axis = half / hh.sqrt();
        let (m, v) = (o - axis * o.dot(axis), u - axis * u.dot(axis));
        let vv = v.length_squared();
        if vv > 0.0 {
            let b = m.dot(v);
            let k = m.length_squared() - r * r;
            let disc = b * b - vv * k;
            if b < 0.0 && disc >= 0.0 {
                let t = k / (disc.sqrt() - b);
                // on the side only between the ends
                if (o + u * t).dot(half).abs() <= hh {
                    take(Some(t));
                }
            }
        }
    }
    best
}

/// [`cast`] by conservative advancement on GJK's distance.
fn cast_advancing(shape: &Core, dir: Vec3, max: f32, other: &Core) -> Option<Impact> {
    let dir = dir.as_dvec3();
    let tolerance = HIT_TOLERANCE as f64;
    let mut t = 0.0f64;
    let mut moving = *shape;
    let mut warm = Warm::COLD;
    let impact = |t: f64, s: &Separation, at: DVec3| {
        let (normal, point) = if s.cores_overlap {
            (-dir, at)
        } else {
            (-s.normal, s.point_b)
        };
        Impact {
            distance: t as f32,
            normal: normal.as_vec3(),
            point: point.as_vec3(),
        }
    };
    for _ in 0..CAST_ITERATIONS {
        let at = shape.pos + dir * t;
        warm.shift(at - moving.pos);
        moving.pos = at;
        let s = separation_from(&moving, other, &mut warm);
        if s.distance <= tolerance {
            return Some(impact(t, &s, moving.pos));
        }
        let closing = dir.dot(s.normal);
        if closing <= 0.0 {
            return None;
        }
        // stop half the tolerance short, so the next gap is inside it
        t += (s.distance - 0.5 * tolerance) / closing;
        if t > max as f64 {
            return None;
        }
    }
    // still creeping along a grazing approach: report where it got
    let at = shape.pos + dir * t;
    warm.shift(at - moving.pos);
    moving.pos = at;
    let s = separation_from(&moving, other, &mut warm);
    Some(impact(t, &s, moving.pos))
}

/// A moving shape for [`cast_surface`]: its core and its pose.
pub(crate) struct Mover<'a> {
    pub core: Core<'a>,
    pub shape: Shape,
    pub pos: Vec3,
    pub rot: Quat,
}

/// The first contact of a convex shape moving along unit `dir` by up to
/// `max` m with the front faces of the mesh or height field `surface` at
/// `pos, rot` (at rest): `(impact, triangle)`, the nearest triangle's,
/// ties to the lower triangle id. The triangles under the swept box are
/// cast against one by one (each a convex core); a hit on a triangle's
/// back (its normal against the triangle's) is no hit, as the narrow
/// phase ignores back faces.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cast_surface(
    me: &Mover,
    dir: Vec3,
    max: f32,
    surface: Shape,
    pos: Vec3,
    rot: Quat,
    store: &ShapeStore,
) -> Option<(Impact, u32)> {
    let inv = rot.conjugate();
    let local = |p: Vec3| crate::math::rotate(inv, p - pos);
    let lrot = crate::math::quat_mul(inv, me.rot);
    let (a0, a1) = me.shape.world_aabb(local(me.pos), lrot, store);
    let (b0, b1) = me.shape.world_aabb(local(me.pos + dir * max), lrot, store);
    let grow = Vec3::splat(HIT_TOLERANCE);
    let (lo, hi) = (a0.min(b0) - grow, a1.max(b1) + grow);
    let mut best: Option<(Impact, u32)> = None;
    let mut test = |id: u32, tri: crate::mesh::Triangle| {
        let limit = best.map_or(max, |b| b.0.distance);
        let corners = tri.v.map(|v| pos + crate::math::rotate(rot, v));
        let n = crate::math::rotate(rot, tri.normal);
        if let Some(hit) = cast(&me.core, dir, limit, &Core::triangle(corners)) {
            let closer = best.is_none_or(|(b, bid)| {
                hit.distance < b.distance || (hit.distance == b.distance && id < bid)
            });
            if closer && hit.normal.dot(n) >= 0.0 {
                best = Some((hit, id));
            }
        }
    };
    match surface {
        Shape::Mesh(id) => {
            let mesh = store.mesh(id)?;
            mesh.triangles_in(lo, hi, |k| test(k, mesh.tri(k)));
        }
        Shape::HeightField(id) => {
            let field = store.heightfield(id)?;
            field.triangles_in(lo, hi, |k| test(k, field.tri(k)));
        }
        _ => return None,
    }
    best
}

/// The first contact of `me` moving along unit `dir` by up to `max` m
/// with `other` (at rest), for any pair but a moving surface:
/// `(impact, sub-shape)`, the sub-shape being `other`'s triangle or child
/// (0 for a convex shape). A moving compound casts child by child; a cast
/// against a compound goes to each child under the swept box; against a
/// surface to each triangle ([`cast_surface`]). Ties go to the lower
/// sub-shape of `other` (the first child of `me` found).
pub(crate) fn cast_placed(
    me: &crate::collide::Placed,
    dir: Vec3,
    max: f32,
    other: &crate::collide::Placed,
    store: &ShapeStore,
) -> Option<(Impact, u32)> {
    let mut best: Option<(Impact, u32)> = None;
    if let Some(c) = me.shape.compound(store) {
        for k in 0..c.children.len() as u32 {
            let child = c.placed_child(k, me.pos, me.rot);
            let limit = best.map_or(max, |b| b.0.distance);
            if let Some(hit) = cast_placed(&child, dir, limit, other, store) {
                if best.is_none_or(|b| hit.0.distance < b.0.distance) {
                    best = Some(hit);
                }
            }
        }
        return best;
    }
    let core = Core::new(me.shape, me.pos, me.rot, store);
    if let Some(c) = other.shape.compound(store) {
        let inv = other.rot.conjugate();
        let local = |p: Vec3| crate::math::rotate(inv, p - other.pos);
        let lrot = crate::math::quat_mul(inv, me.rot);
        let (a0, a1) = me.shape.world_aabb(local(me.pos), lrot, store);
        let (b0, b1) = me.shape.world_aabb(local(me.pos + dir * max), lrot, store);
        let grow = Vec3::splat(HIT_TOLERANCE);
        c.children_in(a0.min(b0) - grow, a1.max(b1) + grow, |k| {
            let limit = best.map_or(max, |b| b.0.distance);
            let ch = c.placed_child(k, other.pos, other.rot);
            let target = Core::new(ch.shape, ch.pos, ch.rot, store);
            if let Some(hit) = cast(&core, dir, limit, &target) {
                let closer = best.is_none_or(|(b, bk)| {
                    hit.distance < b.distance || (hit.distance == b.distance && k < bk)
                });
                if closer {
                    best = Some((hit, k));
                }
            }
        });
        return best;
    }
    if other.shape.is_surface() {
        let mover = Mover {
            core,
            shape: me.shape,
            pos: me.pos,
            rot: me.rot,
        };
        return cast_surface(&mover, dir, max, other.shape, other.pos, other.rot, store);
    }
    let target = Core::new(other.shape, other.pos, other.rot, store);
    cast(&core, dir, max, &target).map(|h| (h, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape_store::NO_SHAPES;
    use crate::test_rng::TestRng;

    fn at(shape: Shape, pos: Vec3) -> Core<'static> {
        Core::new(shape, pos, Quat::IDENTITY, &NO_SHAPES)
    }
    fn sphere(r: f32) -> Shape {
        Shape::Sphere { radius: r }
    }
    fn cuboid(x: f32, y: f32, z: f32) -> Shape {
        Shape::Box {
            half_extents: Vec3::new(x, y, z),
        }
    }
    fn capsule(h: f32, r: f32) -> Shape {
        Shape::Capsule {
            half_height: h,
            radius: r,
        }
    }

    /// A hit at `expect` (to the tolerance, never past it) with `normal`.
    fn hits(i: Option<Impact>, expect: f32, normal: Vec3) -> Impact {
        let i = i.expect("a hit");
        assert!(
            i.distance <= expect + 1e-5 && i.distance >= expect - HIT_TOLERANCE - 1e-5,
            "{i:?}, expected {expect}"
        );
        assert!((i.normal - normal).length() < 1e-3, "{i:?}");
        i
    }

    #[test]
    fn distances_of_shape_pairs_are_their_closed_forms() {
        let cases = [
            // sphere–sphere: centres 5 apart, radii 1 and 0.5
            (
                at(sphere(1.0), Vec3::ZERO),
                at(sphere(0.5), Vec3::new(5.0, 0.0, 0.0)),
                3.5,
            ),
            // box face to sphere
            (
                at(cuboid(1.0, 2.0, 3.0), Vec3::ZERO),
                at(sphere(0.5), Vec3::new(0.0, 4.0, 0.0)),
                1.5,
            ),
            // box corner to point: (1,1,1) corner, sphere centred at (3,3,3)
            (
                at(cuboid(1.0, 1.0, 1.0), Vec3::ZERO),
                at(sphere(0.25), Vec3::splat(3.0)),
                12f32.sqrt() - 0.25,
            ),
            // capsule side to box face
            (
                at(capsule(1.0, 0.5), Vec3::ZERO),
                at(cuboid(1.0, 1.0, 1.0), Vec3::new(4.0, 0.0, 0.0)),
                2.5,
            ),
            // box–box edge to edge: B turned 45° about z, its edge 1.5 from A's face
            (
                at(cuboid(1.0, 1.0, 1.0), Vec3::ZERO),
                Core::new(
                    cuboid(1.0, 1.0, 1.0),
                    Vec3::new(2.5 + 2f32.sqrt(), 0.0, 0.0),
                    Quat::from_rotation_z(core::f32::consts::FRAC_PI_4),
                    &NO_SHAPES,
                ),
                1.5,
            ),
        ];
        for (k, (a, b, d)) in cases.iter().enumerate() {
            let s = separation(a, b);
            assert!(
                (s.distance - *d as f64).abs() < 1e-4,
                "case {k}: {s:?} expected {d}"
            );
            let back = separation(b, a);
            assert!(
                (back.distance - *d as f64).abs() < 1e-4,
                "case {k} reversed: {back:?}"
            );
            assert!(!s.cores_overlap);
        }
        // overlapping: distance 0
        let s = separation(
            &at(cuboid(1.0, 1.0, 1.0), Vec3::ZERO),
            &at(sphere(1.0), Vec3::new(1.5, 0.0, 0.0)),
        );
        assert_eq!(s.distance, 0.0);
    }

    /// A warm start changes where GJK begins, not what it finds: for
    /// random pairs of boxes, spheres and capsules, a distance from the
    /// simplex of another pose (A moved by 1 mm to 3 m, as a cast moves
    /// it) equals the distance from the centres, to GJK's own stopping
    /// test (a relative 1e-10, so 1e-8 m at these sizes), with the same
    /// normal and the same overlap verdict.
    #[test]
    fn warm_started_gjk_gives_the_cold_distance() {
        let mut rng = TestRng(41);
        let shape = |rng: &mut TestRng| match rng.below(3) {
            0 => sphere(rng.f(0.05, 1.0)),
            1 => capsule(rng.f(0.05, 1.0), rng.f(0.05, 0.5)),
            _ => cuboid(rng.f(0.05, 1.5), rng.f(0.05, 1.5), rng.f(0.05, 1.5)),
        };
        let point = |rng: &mut TestRng, r: f32| Vec3::new(rng.f(-r, r), rng.f(-r, r), rng.f(-r, r));
        let (mut apart, mut overlapping) = (0, 0);
        for k in 0..5_000 {
            let (sa, sb) = (shape(&mut rng), shape(&mut rng));
            let (qa, qb) = (rng.quat(), rng.quat());
            let start = point(&mut rng, 4.0);
            let b = Core::new(sb, start + point(&mut rng, 2.0), qb, &NO_SHAPES);
            let scale = [1e-3, 0.05, 0.5, 3.0][rng.below(4)];
            let moved = start + point(&mut rng, scale);
            let mut warm = Warm::COLD;
            let first = Core::new(sa, start, qa, &NO_SHAPES);
            separation_from(&first, &b, &mut warm);
            let a = Core::new(sa, moved, qa, &NO_SHAPES);
            warm.shift(a.pos - first.pos);
            let hot = separation_from(&a, &b, &mut warm);
            let cold = separation(&a, &b);
            assert_eq!(hot.cores_overlap, cold.cores_overlap, "pair {k}");
            let err = (hot.distance - cold.distance).abs();
            assert!(err <= 1e-8, "pair {k}: {hot:?} / {cold:?}");
            if cold.cores_overlap {
                overlapping += 1;
            } else if cold.distance > 1e-3 {
                apart += 1;
                let turn = (hot.normal - cold.normal).length();
                assert!(turn <= 1e-6, "pair {k}: {hot:?} / {cold:?}");
            }
        }
        // both verdicts were tried, many times
        assert!(apart > 1_000 && overlapping > 200, "{apart} {overlapping}");
    }

    /// The closed form for a sphere against a sphere or a capsule (either
    /// moving) agrees with conservative advancement, which it replaces
    /// for those pairs: on random pairs, poses and directions, the same
    /// hit or miss (except grazing paths, whose closest approach is within
    /// the hit tolerance of touching: there conservative advancement may
    /// call a pass within 0.1 mm a hit), distances within the tolerance,
    /// the same normal and contact point to 1e-3.
    #[test]
    fn sphere_casts_in_closed_form_agree_with_advancement() {
        let mut rng = TestRng(43);
        let round = |rng: &mut TestRng| match rng.below(2) {
            0 => sphere(rng.f(0.05, 1.0)),
            _ => capsule(rng.f(0.05, 1.5), rng.f(0.05, 0.6)),
        };
        let point = |rng: &mut TestRng, r: f32| Vec3::new(rng.f(-r, r), rng.f(-r, r), rng.f(-r, r));
        let (mut hit, mut missed, mut touching) = (0, 0, 0);
        for k in 0..20_000 {
            let (sa, sb) = (round(&mut rng), round(&mut rng));
            if !matches!(sa, Shape::Sphere { .. }) && !matches!(sb, Shape::Sphere { .. }) {
                continue; // capsule–capsule stays with advancement
            }
            let a = Core::new(sa, point(&mut rng, 1.0), rng.quat(), &NO_SHAPES);
            let b = Core::new(sb, point(&mut rng, 4.0), rng.quat(), &NO_SHAPES);
            // aimed near B, so that hits, misses and grazes all occur
            let aim = (b.pos.as_vec3() + point(&mut rng, 1.5)) - a.pos.as_vec3();
            let dir = aim.normalize_or(Vec3::X);
            let max = rng.f(1.0, 8.0);
            let exact = cast_point_segment(&a, dir.as_dvec3(), max as f64, &b)
                .expect("a sphere pair has a closed form");
            let advanced = cast_advancing(&a, dir, max, &b);
            let tol = HIT_TOLERANCE as f64;
            match (exact, advanced) {
                (Some(e), Some(v)) => {
                    // advancement never passes the contact; the closed
                    // form stops half the tolerance short of it
                    assert!(
                        e.distance as f64 >= v.distance as f64 - 0.5 * tol - 1e-6,
                        "pair {k}: {e:?} / {v:?}"
                    );
                    // there: touching to half the tolerance, not
                    // overlapping, with B's normal and closest point
                    let mut at = a;
                    at.pos = a.pos + dir.as_dvec3() * e.distance as f64;
                    let gap = separation(&at, &b);
                    assert!(gap.distance <= 0.5 * tol + 1e-6, "pair {k}: {e:?} {gap:?}");
                    if e.distance > 0.0 {
                        assert!(gap.distance > 0.0 && !gap.cores_overlap, "pair {k}: {e:?}");
                        let normal = (-gap.normal).as_vec3();
                        assert!(
                            (e.normal - normal).length() < 1e-3,
                            "pair {k}: {e:?} {gap:?}"
                        );
                        let point = gap.point_b.as_vec3();
                        assert!((e.point - point).length() < 1e-3, "pair {k}: {e:?} {gap:?}");
                        hit += 1;
                    } else {
                        touching += 1;
                    }
                }
                (None, None) => missed += 1,
                (None, Some(v)) => {
                    // a graze: the path passes within the tolerance of
                    // touching, which advancement counts as a hit; B
                    // grown by the tolerance is hit in closed form
                    let grown = match sb {
                        Shape::Sphere { radius } => sphere(radius + HIT_TOLERANCE),
                        Shape::Capsule {
                            half_height,
                            radius,
                        } => capsule(half_height, radius + HIT_TOLERANCE),
                        _ => unreachable!(),
                    };
                    let b2 = Core::new(grown, b.pos.as_vec3(), rng.quat(), &NO_SHAPES);
                    let b2 = Core { rot: b.rot, ..b2 }.turned();
                    let wider = cast_point_segment(&a, dir.as_dvec3(), max as f64, &b2);
                    assert!(
                        matches!(wider, Some(Some(_))),
                        "pair {k}: closed form misses, advancement hits {v:?}"
                    );
                }
                (e, None) => panic!("pair {k}: closed form {e:?}, advancement misses"),
            }
        }
        assert!(
            hit > 2_000 && missed > 2_000 && touching > 50,
            "{hit} {missed} {touching}"
        );
    }

    #[test]
    fn casts_stop_at_first_contact() {
        let x = Vec3::X;
        // a ball rolled at a ball: contact when the centres are 1.5 apart
        hits(
            cast(
                &at(sphere(0.5), Vec3::ZERO),
                x,
                10.0,
                &at(sphere(1.0), Vec3::new(5.0, 0.0, 0.0)),
            ),
            3.5,
            -x,
        );
        // a ball at a box face
        hits(
            cast(
                &at(sphere(0.5), Vec3::ZERO),
                x,
                10.0,
                &at(cuboid(1.0, 1.0, 1.0), Vec3::new(5.0, 0.0, 0.0)),
            ),
            3.5,
            -x,
        );
        // a box dropped on a floor (top at y = 0) from y = 3
        let floor = at(cuboid(10.0, 1.0, 10.0), Vec3::new(0.0, -1.0, 0.0));
        let i = hits(
            cast(
                &at(cuboid(0.5, 0.5, 0.5), Vec3::new(0.0, 3.0, 0.0)),
                -Vec3::Y,
                10.0,
                &floor,
            ),
            2.5,
            Vec3::Y,
        );
        assert!(i.point.y.abs() < 1e-3, "{i:?}");
        // a tilted box lands on its lowest corner (half diagonal of the
        // unit cube turned 45° about x and z: its lowest point is at
        // -sqrt(3)/2 · ... computed from the support)
        let tilt = Quat::from_rotation_x(0.6) * Quat::from_rotation_z(0.4);
        let cube = Core::new(
            cuboid(0.5, 0.5, 0.5),
            Vec3::new(0.0, 3.0, 0.0),
            tilt,
            &NO_SHAPES,
        );
        let low = cube.support(-DVec3::Y).y as f32;
        hits(cast(&cube, -Vec3::Y, 10.0, &floor), low, Vec3::Y);
        // a standing capsule slid sideways into a sphere at its top cap's
        // height: the segment's end meets it
        let cap = at(capsule(1.0, 0.25), Vec3::new(0.0, 0.0, 0.0));
        hits(
            cast(&cap, x, 10.0, &at(sphere(0.5), Vec3::new(4.0, 1.0, 0.0))),
            3.25,
            -x,
        );
        // missing: passing beside, moving away, too short
        let ball = at(sphere(1.0), Vec3::new(5.0, 0.0, 0.0));
        assert!(cast(&at(sphere(0.5), Vec3::new(0.0, 1.6, 0.0)), x, 10.0, &ball).is_none());
        assert!(cast(&at(sphere(0.5), Vec3::ZERO), -x, 10.0, &ball).is_none());
        assert!(cast(&at(sphere(0.5), Vec3::ZERO), x, 3.0, &ball).is_none());
        // already touching or inside: distance 0
        let i = cast(&at(sphere(0.5), Vec3::new(4.0, 0.0, 0.0)), x, 10.0, &ball).unwrap();
        assert_eq!(i.distance, 0.0);
        let i = cast(&at(sphere(0.5), Vec3::new(5.0, 0.0, 0.0)), x, 10.0, &ball).unwrap();
        assert_eq!((i.distance, i.normal), (0.0, -x));
    }

    /// Against the narrow phase as an independent oracle: where a random
    /// cast stops, the shapes do not overlap yet (nor a hair before), and
    /// a little further they do; where it misses, they never touch at
    /// sampled distances along the way.
    #[test]
    fn casts_agree_with_the_narrow_phase() {
        let mut r = TestRng(5);
        let shape = |r: &mut TestRng| match r.below(3) {
            0 => sphere(r.f(0.1, 1.0)),
            1 => cuboid(r.f(0.1, 1.0), r.f(0.1, 1.0), r.f(0.1, 1.0)),
            _ => capsule(r.f(0.1, 1.0), r.f(0.1, 0.6)),
        };
        let placed = |c: &Core, t: f32, dir: Vec3| crate::collide::Placed {
            shape: c.shape,
            pos: c.pos.as_vec3() + dir * t,
            rot: Quat::from_xyzw(
                c.rot.x as f32,
                c.rot.y as f32,
                c.rot.z as f32,
                c.rot.w as f32,
            ),
        };
        // Box pairs by the separating-axis test alone: its contact step can
        // come back empty for boxes overlapping edge to edge by less than
        // the edge bias (see the closing note of this change).
        let touching = |a: &crate::collide::Placed, b: &crate::collide::Placed| {
            use crate::collide::box_box_sat::{sat_of_boxes, Verdict};
            use crate::collide::Obb;
            match (a.shape, b.shape) {
                (Shape::Box { half_extents: ha }, Shape::Box { half_extents: hb }) => {
                    let (oa, ob) = (Obb::new(a.pos, a.rot, ha), Obb::new(b.pos, b.rot, hb));
                    !matches!(sat_of_boxes(&oa, &ob, 0.0).verdict(), Verdict::Separated)
                }
                _ => crate::collide::collide(a, b, 0.0).is_some_and(|c| c.count > 0),
            }
        };
        let (mut hit, mut missed, mut deep) = (0, 0, 0);
        for k in 0..3000 {
            let other = Core::new(shape(&mut r), Vec3::ZERO, r.quat(), &NO_SHAPES);
            let start = Vec3::new(r.f(-6.0, 6.0), r.f(-6.0, 6.0), r.f(-6.0, 6.0));
            let me = Core::new(shape(&mut r), start, r.quat(), &NO_SHAPES);
            // aimed near the other's centre, so most casts hit
            let aim = Vec3::new(r.f(-1.5, 1.5), r.f(-1.5, 1.5), r.f(-1.5, 1.5));
            let dir = (aim - start).normalize();
            if separation(&me, &other).distance <= HIT_TOLERANCE as f64 {
                continue;
            }
            let other_p = placed(&other, 0.0, Vec3::ZERO);
            match cast(&me, dir, 20.0, &other) {
                Some(i) => {
                    hit += 1;
                    assert!(
                        !touching(&placed(&me, i.distance - 2e-3, dir), &other_p),
                        "cast {k}: touching before {i:?}"
                    );
                    // half a millimetre deep, for hits that are not grazing
                    // (a grazing cast may slide past a corner it touched)
                    let closing = -dir.dot(i.normal);
                    if closing >= 0.3 {
                        let after = placed(&me, i.distance + 5e-4 / closing, dir);
                        assert!(
                            touching(&after, &other_p),
                            "cast {k}: not touching after {i:?}"
                        );
                        deep += 1;
                    }
                }
                None => {
                    missed += 1;
                    for s in 0..=200 {
                        let t = 20.0 * s as f32 / 200.0;
                        let at = placed(&me, t, dir);
                        assert!(!touching(&at, &other_p), "cast {k}: missed, but touching at {t}: {:?} {:?} {:?} / {:?} {:?}; gjk {:?}; collide {:?}", at.shape, at.pos, at.rot, other_p.shape, other_p.rot, separation(&Core::new(at.shape, at.pos, at.rot, &NO_SHAPES), &other), crate::collide::collide(&at, &other_p, 0.0).map(|c| (c.count, c.normal, c.separation(0))));
                    }
                }
            }
        }
        assert!(
            hit > 1500 && missed > 100 && deep > 1000,
            "{hit} hits ({deep} checked deeper), {missed} misses"
        );
    }
}
