//! Exact ray and point tests against one placed shape, in the shape's own
//! frame (the ray is turned into it, the normal turned back). Solid shapes
//! are solid: a ray that starts inside hits at distance 0 with the normal
//! against its direction. Meshes and height fields are surfaces: a ray
//! hits a front face (through the mesh's tree, or the field's blocks and
//! cells), never a back face, and no point is inside one.

use crate::hull_shape::HullShape;
use crate::math::{rotate, Mat3, Quat, Vec3};
use crate::shape::Shape;
use crate::shape_store::ShapeStore;

/// Below this a direction component is parallel to a box face: the slab
/// is then a containment test of the origin (no division).
const PARALLEL: f32 = 1e-12;

/// [`cast_ray_in`] for shapes without hulls.
#[cfg(test)]
pub(crate) fn cast_ray(
    shape: &Shape,
    pos: Vec3,
    rot: Quat,
    origin: Vec3,
    dir: Vec3,
    max: f32,
) -> Option<(f32, Vec3)> {
    cast_ray_in(
        shape,
        &crate::shape_store::NO_SHAPES,
        pos,
        rot,
        origin,
        dir,
        max,
    )
    .map(|(t, n, _)| (t, n))
}

/// The first point where the ray `origin + t·dir` (`dir` unit, `0 <= t <=
/// max`) meets the shape at `pos, rot`: `(t, world normal, sub-shape)`,
/// the sub-shape being the triangle of a mesh or height field, the child
/// of a compound (0 for other shapes); stored shapes' ids name shapes of
/// `store`.
///
/// Inlined into the ray walk for the primitives (a call's prologue and
/// epilogue cost a fifth of a box test, `perf-reports/queries.md`); the
/// stored shapes go through [`cast_ray_stored`].
#[inline(always)]
pub(crate) fn cast_ray_in(
    shape: &Shape,
    store: &ShapeStore,
    pos: Vec3,
    rot: Quat,
    origin: Vec3,
    dir: Vec3,
    max: f32,
) -> Option<(f32, Vec3, u32)> {
    let rel = origin - pos;
    // The shape's axes in world space (the rotation matrix's columns) turn
    // the ray into a box's or capsule's frame and its normal back: cheaper
    // than three quaternion turns, and exact for a face normal (a column).
    let local = |m: &Mat3, v: Vec3| Vec3::new(m.x_axis.dot(v), m.y_axis.dot(v), m.z_axis.dot(v));
    let (t, n) = match *shape {
        // turning a sphere changes nothing: tested in world space
        Shape::Sphere { radius } => ray_sphere(rel, dir, radius)?,
        Shape::Box { half_extents } => {
            let m = Mat3::from_quat(rot);
            let (t, n) = ray_box(local(&m, rel), local(&m, dir), half_extents)?;
            (t, m * n)
        }
        Shape::Capsule {
            half_height,
            radius,
        } => {
            let m = Mat3::from_quat(rot);
            let (t, n) = ray_capsule(local(&m, rel), local(&m, dir), half_height, radius)?;
            (t, m * n)
        }
        _ => return cast_ray_stored(shape, store, pos, rot, origin, dir, max),
    };
    world_hit(t, n, dir, max)
}

/// A hit `t` with the world normal `n` as [`cast_ray_in`] gives it: none
/// past `max`; a ray that starts inside gets the normal against its
/// direction `dir`.
#[inline(always)]
fn world_hit(t: f32, n: Vec3, dir: Vec3, max: f32) -> Option<(f32, Vec3, u32)> {
    if t > max {
        return None;
    }
    Some((t, if t == 0.0 { -dir } else { n }, 0))
}

/// [`cast_ray_in`] for the shapes `store` keeps.
#[inline(never)]
fn cast_ray_stored(
    shape: &Shape,
    store: &ShapeStore,
    pos: Vec3,
    rot: Quat,
    origin: Vec3,
    dir: Vec3,
    max: f32,
) -> Option<(f32, Vec3, u32)> {
    let inv = rot.conjugate();
    let o = rotate(inv, origin - pos);
    let d = rotate(inv, dir);
    let surface = |(t, n, k): (f32, Vec3, u32)| Some((t, rotate(rot, n), k));
    match *shape {
        Shape::Hull(id) => {
            let (t, n) = ray_hull(o, d, store.hulls.get(id)?)?;
            world_hit(t, rotate(rot, n), dir, max)
        }
        Shape::Compound(id) => {
            // each child's own exact test, in the compound's frame; the
            // hit's sub-shape is the child
            let c = store.compound(id)?;
            let hit = crate::query::cast_ray_nodes(&c.nodes, o, d, max, |k, limit| {
                let ch = &c.children[k as usize];
                cast_ray_in(&ch.shape, store, ch.position, ch.rotation, o, d, limit)
                    .map(|(t, n, _)| (t, n))
            })?;
            surface(hit)
        }
        Shape::Mesh(id) => surface(store.mesh(id)?.cast_ray(o, d, max)?),
        Shape::HeightField(id) => surface(store.heightfield(id)?.cast_ray(o, d, max)?),
        Shape::Sphere { .. } | Shape::Box { .. } | Shape::Capsule { .. } => {
            unreachable!("cast_ray_in tests the primitives itself")
        }
    }
}

/// [`contains_point_in`] for shapes without hulls.
#[cfg(test)]
pub(crate) fn contains_point(shape: &Shape, pos: Vec3, rot: Quat, point: Vec3) -> bool {
    contains_point_in(shape, &crate::shape_store::NO_SHAPES, pos, rot, point)
}

/// Whether the shape at `pos, rot` holds `point` (its surface included;
/// a mesh or height field holds none).
pub(crate) fn contains_point_in(
    shape: &Shape,
    store: &ShapeStore,
    pos: Vec3,
    rot: Quat,
    point: Vec3,
) -> bool {
    let p = rotate(rot.conjugate(), point - pos);
    match *shape {
        Shape::Sphere { radius } => p.length_squared() <= radius * radius,
        Shape::Box { half_extents: h } => p.x.abs() <= h.x && p.y.abs() <= h.y && p.z.abs() <= h.z,
        Shape::Capsule {
            half_height,
            radius,
        } => {
            let y = p.y.clamp(-half_height, half_height);
            (p - Vec3::new(0.0, y, 0.0)).length_squared() <= radius * radius
        }
        Shape::Hull(id) => store.hulls.get(id).is_some_and(|h| {
            h.face_normal
                .iter()
                .zip(&h.face_offset)
                .all(|(n, &off)| n.dot(p) <= off)
        }),
        Shape::Compound(id) => store.compound(id).is_some_and(|c| {
            let mut inside = false;
            c.children_in(p, p, |k| {
                let ch = &c.children[k as usize];
                inside = inside || contains_point_in(&ch.shape, store, ch.position, ch.rotation, p);
            });
            inside
        }),
        Shape::Mesh(_) | Shape::HeightField(_) => false,
    }
}

/// A ray from `o` along unit `d` against a hull (its frame): the ray is
/// clipped by every face plane (Cyrus–Beck); it enters through the face
/// whose plane it crosses last going in. Inside: `t = 0`.
fn ray_hull(o: Vec3, d: Vec3, h: &HullShape) -> Option<(f32, Vec3)> {
    let (mut enter, mut exit) = (0.0f32, f32::INFINITY);
    let mut normal = Vec3::ZERO;
    for (&n, &off) in h.face_normal.iter().zip(&h.face_offset) {
        let dist = n.dot(o) - off; // > 0: outside this plane
        let along = n.dot(d);
        if along.abs() <= PARALLEL {
            if dist > 0.0 {
                return None;
            }
            continue;
        }
        let t = -dist / along;
        if along < 0.0 {
            if t > enter {
                (enter, normal) = (t, n);
            }
        } else {
            exit = exit.min(t);
        }
        if enter > exit {
            return None;
        }
    }
    Some((enter, normal))
}

/// A ray from `o` along unit `d` against the sphere of radius `r` at the
/// origin. Inside: `t = 0` (the normal is the caller's).
fn ray_sphere(o: Vec3, d: Vec3, r: f32) -> Option<(f32, Vec3)> {
    let c = o.dot(o) - r * r;
    if c <= 0.0 {
        return Some((0.0, Vec3::ZERO));
    }
    let b = o.dot(d);
    if b >= 0.0 {
        return None; // outside and pointing away
    }
    let disc = b * b - c;
    if disc < 0.0 {
        return None;
    }
    let t = (-b - disc.sqrt()).max(0.0);
    let p = o + d * t;
    Some((t, p / p.length()))
}

/// Slabs: the ray enters the box at the largest entry distance over the
/// three axes, through the face of that axis.
fn ray_box(o: Vec3, d: Vec3, h: Vec3) -> Option<(f32, Vec3)> {
    let (o, d, h) = (o.to_array(), d.to_array(), h.to_array());
    let (mut enter, mut exit) = (0.0f32, f32::INFINITY);
    let mut face = None;
    for a in 0..3 {
        if d[a].abs() < PARALLEL {
            if o[a] < -h[a] || o[a] > h[a] {
                return None;
            }
            continue;
        }
        let inv = 1.0 / d[a];
        let (t0, t1) = ((-h[a] - o[a]) * inv, (h[a] - o[a]) * inv);
        let (near, far) = if t0 <= t1 { (t0, t1) } else { (t1, t0) };
        if near > enter {
            enter = near;
            face = Some(a);
        }
        exit = exit.min(far);
        if enter > exit {
            return None;
        }
    }
    let Some(a) = face else {
        return Some((0.0, Vec3::ZERO)); // every slab holds the origin: inside
    };
    let mut n = [0.0; 3];
    n[a] = if d[a] > 0.0 { -1.0 } else { 1.0 };
    Some((enter, Vec3::from_array(n)))
}

/// The capsule is the union of a finite cylinder (its side) and two end
/// spheres; from outside all three, the first hit on the union is the
/// first hit on any of them (its flat cylinder ends lie inside the
/// spheres, so they never come first).
fn ray_capsule(o: Vec3, d: Vec3, hh: f32, r: f32) -> Option<(f32, Vec3)> {
    let y = o.y.clamp(-hh, hh);
    if (o - Vec3::new(0.0, y, 0.0)).length_squared() <= r * r {
        return Some((0.0, Vec3::ZERO));
    }
    let mut best: Option<(f32, Vec3)> = None;
    let mut take = |hit: Option<(f32, Vec3)>| {
        if let Some((t, n)) = hit {
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, n));
            }
        }
    };
    // side: |(o + t d)_xz| = r with the hit's y within the segment
    let a = d.x * d.x + d.z * d.z;
    if a > PARALLEL {
        let b = o.x * d.x + o.z * d.z;
        let c = o.x * o.x + o.z * o.z - r * r;
        let disc = b * b - a * c;
        if disc >= 0.0 {
            let t = (-b - disc.sqrt()) / a;
            let p = o + d * t;
            if t >= 0.0 && p.y.abs() <= hh {
                take(Some((t, Vec3::new(p.x, 0.0, p.z) / r)));
            }
        }
    }
    for cy in [-hh, hh] {
        let c = Vec3::new(0.0, cy, 0.0);
        take(ray_sphere(o - c, d, r));
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPS: f32 = 1e-5;

    fn close(a: Vec3, b: Vec3) -> bool {
        (a - b).length() < EPS
    }

    #[test]
    fn sphere_hits_at_the_closed_form_distance() {
        let s = Shape::Sphere { radius: 2.0 };
        let pos = Vec3::new(1.0, 2.0, 3.0);
        // straight on: from 10 m away the surface is 8 m away
        let (t, n) = cast_ray(
            &s,
            pos,
            Quat::IDENTITY,
            pos - Vec3::X * 10.0,
            Vec3::X,
            100.0,
        )
        .unwrap();
        assert!((t - 8.0).abs() < EPS && close(n, -Vec3::X), "{t} {n}");
        // offset by b: t = 10 - sqrt(r² - b²)
        let (t, _) = cast_ray(
            &s,
            pos,
            Quat::IDENTITY,
            pos + Vec3::new(-10.0, 1.0, 0.0),
            Vec3::X,
            100.0,
        )
        .unwrap();
        assert!((t - (10.0 - 3f32.sqrt())).abs() < EPS, "{t}");
        // grazing at exactly the radius touches; beyond it misses
        let (t, n) = cast_ray(
            &s,
            pos,
            Quat::IDENTITY,
            pos + Vec3::new(-10.0, 2.0, 0.0),
            Vec3::X,
            100.0,
        )
        .unwrap();
        assert!((t - 10.0).abs() < 1e-3 && close(n, Vec3::Y), "{t} {n}");
        assert!(cast_ray(
            &s,
            pos,
            Quat::IDENTITY,
            pos + Vec3::new(-10.0, 2.001, 0.0),
            Vec3::X,
            100.0
        )
        .is_none());
        // too short, pointing away, starting inside
        assert!(cast_ray(&s, pos, Quat::IDENTITY, pos - Vec3::X * 10.0, Vec3::X, 7.9).is_none());
        assert!(cast_ray(
            &s,
            pos,
            Quat::IDENTITY,
            pos - Vec3::X * 10.0,
            -Vec3::X,
            100.0
        )
        .is_none());
        let (t, n) = cast_ray(&s, pos, Quat::IDENTITY, pos, Vec3::Z, 100.0).unwrap();
        assert!(t == 0.0 && n == -Vec3::Z);
    }

    #[test]
    fn box_hits_faces_edges_and_parallel_rays() {
        let s = Shape::Box {
            half_extents: Vec3::new(1.0, 2.0, 3.0),
        };
        let rot = Quat::from_rotation_y(core::f32::consts::FRAC_PI_2); // local x is world -z
        let pos = Vec3::new(5.0, 0.0, 0.0);
        // along world -x onto the face whose half extent is now along x: 3
        let (t, n) = cast_ray(&s, pos, rot, Vec3::new(20.0, 0.5, 0.5), -Vec3::X, 100.0).unwrap();
        assert!((t - 12.0).abs() < EPS && close(n, Vec3::X), "{t} {n}");
        // from above onto the top face (half extent 2)
        let (t, n) = cast_ray(
            &s,
            pos,
            rot,
            pos + Vec3::new(0.3, 10.0, -0.2),
            -Vec3::Y,
            100.0,
        )
        .unwrap();
        assert!((t - 8.0).abs() < EPS && close(n, Vec3::Y), "{t} {n}");
        // along an edge's diagonal in the local frame: enters at the edge
        let s1 = Shape::Box {
            half_extents: Vec3::ONE,
        };
        let d = Vec3::new(-1.0, -1.0, 0.0).normalize();
        let (t, _) = cast_ray(
            &s1,
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::new(3.0, 3.0, 0.0),
            d,
            100.0,
        )
        .unwrap();
        assert!((t - 2.0 * 2f32.sqrt()).abs() < 1e-4, "{t}");
        // parallel to a face: inside its slab hits, outside misses
        assert!(cast_ray(
            &s1,
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::new(-5.0, 0.999, 0.0),
            Vec3::X,
            100.0
        )
        .is_some());
        assert!(cast_ray(
            &s1,
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::new(-5.0, 1.001, 0.0),
            Vec3::X,
            100.0
        )
        .is_none());
        // inside
        let (t, n) = cast_ray(
            &s1,
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::Y,
            1.0,
        )
        .unwrap();
        assert!(t == 0.0 && n == -Vec3::Y);
    }

    #[test]
    fn capsule_hits_side_and_caps() {
        let s = Shape::Capsule {
            half_height: 1.0,
            radius: 0.5,
        };
        let o = Vec3::ZERO;
        // side, from x = -10 at y = 0.7 (within the segment): 10 - 0.5
        let (t, n) = cast_ray(
            &s,
            o,
            Quat::IDENTITY,
            Vec3::new(-10.0, 0.7, 0.0),
            Vec3::X,
            100.0,
        )
        .unwrap();
        assert!((t - 9.5).abs() < EPS && close(n, -Vec3::X), "{t} {n}");
        // top cap, straight down the axis: 10 - (1 + 0.5)
        let (t, n) = cast_ray(
            &s,
            o,
            Quat::IDENTITY,
            Vec3::new(0.0, 10.0, 0.0),
            -Vec3::Y,
            100.0,
        )
        .unwrap();
        assert!((t - 8.5).abs() < EPS && close(n, Vec3::Y), "{t} {n}");
        // off the axis by 0.3 onto the cap sphere: 10 - 1 - sqrt(0.25 - 0.09)
        let (t, _) = cast_ray(
            &s,
            o,
            Quat::IDENTITY,
            Vec3::new(0.3, 10.0, 0.0),
            -Vec3::Y,
            100.0,
        )
        .unwrap();
        assert!((t - (9.0 - 0.16f32.sqrt())).abs() < EPS, "{t}");
        // sideways past the end, beyond the cap: miss; tilted capsule turns the ray
        assert!(cast_ray(
            &s,
            o,
            Quat::IDENTITY,
            Vec3::new(-10.0, 1.6, 0.0),
            Vec3::X,
            100.0
        )
        .is_none());
        let lying = Quat::from_rotation_z(core::f32::consts::FRAC_PI_2);
        let (t, _) = cast_ray(&s, o, lying, Vec3::new(-10.0, 0.0, 0.0), Vec3::X, 100.0).unwrap();
        assert!((t - 8.5).abs() < 1e-4, "{t}");
        // inside
        assert_eq!(
            cast_ray(
                &s,
                o,
                Quat::IDENTITY,
                Vec3::new(0.0, 1.2, 0.0),
                Vec3::X,
                1.0
            )
            .map(|h| h.0),
            Some(0.0)
        );
    }

    #[test]
    fn points_inside_and_out() {
        let b = Shape::Box {
            half_extents: Vec3::new(1.0, 2.0, 3.0),
        };
        assert!(contains_point(
            &b,
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::new(1.0, -2.0, 2.9)
        ));
        assert!(!contains_point(
            &b,
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::new(1.01, 0.0, 0.0)
        ));
        let c = Shape::Capsule {
            half_height: 1.0,
            radius: 0.5,
        };
        assert!(contains_point(
            &c,
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::new(0.0, 1.49, 0.0)
        ));
        assert!(!contains_point(
            &c,
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::new(0.4, 1.4, 0.0)
        ));
        let s = Shape::Sphere { radius: 1.0 };
        assert!(contains_point(
            &s,
            Vec3::X,
            Quat::IDENTITY,
            Vec3::new(1.5, 0.5, 0.5)
        ));
        assert!(!contains_point(
            &s,
            Vec3::X,
            Quat::IDENTITY,
            Vec3::new(1.6, 0.6, 0.6)
        ));
    }
}
