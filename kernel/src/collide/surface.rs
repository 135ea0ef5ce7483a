//! A convex shape against a triangle mesh or a height field: every
//! triangle under the shape's box (the mesh's tree, the field's blocks
//! and cells) is collided on its own (`triangle.rs`), and the triangle
//! contacts are merged into manifolds as Jolt's manifold reduction does
//! (`PhysicsSystem::ProcessBodyPair`): a contact whose normal is within
//! [`MERGE_NORMAL_COS`] (5°) of a manifold's first normal joins it (its
//! normal is summed into the manifold's, its points added), any other
//! starts a manifold of its own. A box resting across two triangles of a
//! flat floor so gets one manifold, not two half ones; a box in a
//! V-shaped trench gets one per wall. At the end each manifold's normal
//! is the normalised sum, every point's separation is measured along it,
//! and its points are reduced to the four that span the most area
//! (`hull::reduce`).
//!
//! At most [`MAX_SURFACE_MANIFOLDS`] manifolds per pair: a further
//! normal replaces the shallowest manifold if it is deeper, as Jolt's
//! collector does (it keeps 32; a convex body resting on a real level
//! touches a handful of distinct planes).

use super::hull::{BoxPoly, Poly};
use super::triangle::{collide_triangle, Convex, TriContact};
use super::{capsule_segment, ContactPoints, Placed};
use crate::math::{quat_mul, rotate, Quat, Vec3};
use crate::shape::Shape;
use crate::shape_store::ShapeStore;

/// Most manifolds one shape–surface pair gets.
pub(crate) const MAX_SURFACE_MANIFOLDS: usize = 8;

/// Triangle contacts within this cosine of a manifold's first normal join
/// it (5°, Jolt's `mContactNormalCosMaxDeltaRotation`).
pub(crate) const MERGE_NORMAL_COS: f32 = 0.996_194_7;

/// Points a manifold gathers before it is pruned to four (Jolt prunes
/// past 32 as well).
const GATHER: usize = 32;

/// One manifold being gathered (surface frame).
#[derive(Clone, Copy)]
struct Gathered {
    first: Vec3,
    sum: Vec3,
    /// The least separation of its points (most negative: deepest).
    deepest: f32,
    n: usize,
    on_shape: [Vec3; GATHER],
    on_tri: [Vec3; GATHER],
}

impl Gathered {
    const EMPTY: Self = Self {
        first: Vec3::ZERO,
        sum: Vec3::ZERO,
        deepest: f32::INFINITY,
        n: 0,
        on_shape: [Vec3::ZERO; GATHER],
        on_tri: [Vec3::ZERO; GATHER],
    };

    /// Starts gathering at `c` (the point arrays are left as they are:
    /// only the first `n` are ever read, and this runs once per manifold
    /// per pair, so no 1.5 KB copy of empty arrays each time).
    fn restart(&mut self, c: &TriContact, deepest: f32) {
        self.first = c.normal;
        self.sum = Vec3::ZERO;
        self.deepest = deepest;
        self.n = 0;
    }

    fn add(&mut self, c: &TriContact, deepest: f32, centre: Vec3) {
        if self.n + c.count > GATHER {
            self.prune(self.sum + c.normal, centre);
        }
        for k in 0..c.count {
            self.on_shape[self.n] = c.on_shape[k];
            self.on_tri[self.n] = c.on_tri[k];
            self.n += 1;
        }
        self.sum += c.normal;
        self.deepest = self.deepest.min(deepest);
    }

    /// The points reduced to four along `normal`: `(on_tri, on_shape,
    /// separation)`, the separation measured along `normal` and the
    /// surface's point put on the normal through the shape's. (A
    /// triangle contact whose normal the active-edge rule turned, or one
    /// merged under a summed normal, has its two points off that line:
    /// the solver's lever arms go to their midpoint, and a sphere rolling
    /// over a seam would feel a sideways arm, a torque against rolling.)
    fn reduced(&self, normal: Vec3, centre: Vec3, max_sep: f32) -> ([(Vec3, Vec3, f32); 4], usize) {
        let mut pts = [(Vec3::ZERO, Vec3::ZERO, 0.0f32); GATHER];
        let mut m = 0;
        for k in 0..self.n {
            let s = (self.on_shape[k] - self.on_tri[k]).dot(normal);
            if s <= max_sep {
                pts[m] = (self.on_shape[k] - normal * s, self.on_shape[k], s);
                m += 1;
            }
        }
        let mut out = [(Vec3::ZERO, Vec3::ZERO, 0.0f32); 4];
        let mut count = 0;
        for k in reduce_about(&pts[..m], normal, centre) {
            out[count] = pts[k];
            count += 1;
        }
        (out, count)
    }

    fn prune(&mut self, dir: Vec3, centre: Vec3) {
        let normal = dir.normalize_or_zero();
        let (pts, count) = self.reduced(normal, centre, f32::INFINITY);
        for (k, p) in pts[..count].iter().enumerate() {
            self.on_tri[k] = p.0;
            self.on_shape[k] = p.1;
        }
        self.n = count;
    }
}

/// Depth (m) every point counts with in [`reduce_about`]'s first pick,
/// so points at equal depth (a box flat on a floor) are told apart by
/// their lever arms alone.
const DEPTH_FLOOR: f32 = 1e-3;

/// Up to four of `pts` (`(point, other point, separation)`) that hold a
/// body best, Gregorius' reduction with Jolt's first pick
/// (`PruneContactPoints`): first the point that weighs most as depth ×
/// squared lever arm about `centre` across `n` (a corner of a box flat on
/// a floor, not whichever clip point rounding made deepest), then the
/// farthest from it, the one making the largest triangle with both, and
/// the one farthest outside that triangle.
pub(crate) fn reduce_about(
    pts: &[(Vec3, Vec3, f32)],
    n: Vec3,
    centre: Vec3,
) -> impl Iterator<Item = usize> {
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
        let across = |v: Vec3| v - n * v.dot(n);
        let i0 = argmax(&|k| {
            let arm = across(p(k) - centre).length_squared().max(1e-6);
            arm * ((-pts[k].2).max(0.0) + DEPTH_FLOOR)
        })
        .0;
        let i1 = argmax(&|k| across(p(k) - p(i0)).length_squared()).0;
        let area = |a: usize, b: usize, k: usize| (p(b) - p(a)).cross(p(k) - p(a)).dot(n);
        let (i2, a2) = argmax(&|k| area(i0, i1, k).abs());
        let sign = if area(i0, i1, i2) < 0.0 { -1.0 } else { 1.0 };
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

/// The manifolds of one pair that meets in several parts (a shape and a
/// surface's triangles, a compound's children), normal from A to B, world
/// points; and the scratch they are gathered in (one per narrow-phase
/// job, reused pair after pair). A pair is gathered by [`begin`],
/// [`take`] per part contact and [`finish`].
///
/// [`begin`]: Self::begin
/// [`take`]: Self::take
/// [`finish`]: Self::finish
pub(crate) struct SurfaceManifolds {
    pub list: [ContactPoints; MAX_SURFACE_MANIFOLDS],
    /// Per manifold, the parts of A and of B its first contact came from
    /// (a compound's child, a surface's triangle; 0 for a whole shape).
    pub sub: [[u32; 2]; MAX_SURFACE_MANIFOLDS],
    pub count: usize,
    gathered: [Gathered; MAX_SURFACE_MANIFOLDS],
    gathering: usize,
}

impl SurfaceManifolds {
    pub fn new() -> Self {
        Self {
            list: [ContactPoints::new(Vec3::ZERO); MAX_SURFACE_MANIFOLDS],
            sub: [[0; 2]; MAX_SURFACE_MANIFOLDS],
            count: 0,
            gathered: [Gathered::EMPTY; MAX_SURFACE_MANIFOLDS],
            gathering: 0,
        }
    }

    /// The manifold with the deepest point (the one a single-manifold
    /// caller gets).
    pub fn deepest(&self) -> Option<ContactPoints> {
        let depth = |c: &ContactPoints| {
            (0..c.count)
                .map(|k| c.separation(k))
                .fold(f32::INFINITY, f32::min)
        };
        self.list[..self.count]
            .iter()
            .min_by(|a, b| depth(a).total_cmp(&depth(b)))
            .copied()
    }

    /// Starts a pair: no manifolds, nothing gathered.
    pub fn begin(&mut self) {
        self.count = 0;
        self.gathering = 0;
    }

    /// Merges one part contact (normal from B's part to A's, points `(on
    /// A, on B)`, in the gathering frame) from parts `sub` into the
    /// manifold within [`MERGE_NORMAL_COS`] of it, or starts one; `centre`
    /// is A's centre in the same frame (the lever arms of the reduction).
    pub fn take(&mut self, c: &TriContact, sub: [u32; 2], centre: Vec3) {
        let deepest = (0..c.count)
            .map(|k| c.separation(k))
            .fold(f32::INFINITY, f32::min);
        let count = self.gathering;
        if let Some(g) = self.gathered[..count]
            .iter_mut()
            .find(|g| g.first.dot(c.normal) >= MERGE_NORMAL_COS)
        {
            g.add(c, deepest, centre);
            return;
        }
        let slot = if count < MAX_SURFACE_MANIFOLDS {
            self.gathering += 1;
            count
        } else {
            // full: replace the shallowest if this one is deeper
            let (k, g) = self
                .gathered
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.deepest.total_cmp(&b.1.deepest))
                .expect("full");
            if deepest >= g.deepest {
                return;
            }
            k
        };
        self.gathered[slot].restart(c, deepest);
        self.gathered[slot].add(c, deepest, centre);
        self.sub[slot] = sub;
    }

    /// Ends the pair: each gathered manifold's normal is the normalised
    /// sum of its contacts', its points are reduced to four along it, and
    /// it is turned from the gathering frame (at `pos, rot` in the world)
    /// into a world manifold, normal from A to B.
    pub fn finish(&mut self, centre: Vec3, max_separation: f32, pos: Vec3, rot: Quat) {
        let world = |p: Vec3| pos + rotate(rot, p);
        self.count = 0;
        for k in 0..self.gathering {
            let g = &self.gathered[k];
            let normal = g.sum.normalize_or_zero();
            if normal == Vec3::ZERO {
                continue;
            }
            let (pts, m) = g.reduced(normal, centre, max_separation);
            if m == 0 {
                continue;
            }
            // normal from A to B
            let mut c = ContactPoints::new(-rotate(rot, normal));
            for &(on_b, on_a, _) in &pts[..m] {
                c.push(world(on_a), world(on_b));
            }
            self.list[self.count] = c;
            self.sub[self.count] = self.sub[k];
            self.count += 1;
        }
        self.gathering = 0;
    }
}

/// Contacts of `shape` (a convex solid) with `surface` (a mesh or a height
/// field), into `out` (cleared first), each manifold's parts `[sub,
/// triangle]`. `motion` is the shape's velocity relative to the surface
/// (world), for the active-edge rule.
#[allow(clippy::too_many_arguments)]
pub(crate) fn collide_surface(
    shape: &Placed,
    surface: &Placed,
    max_separation: f32,
    store: &ShapeStore,
    motion: Vec3,
    sub: u32,
    out: &mut SurfaceManifolds,
) {
    out.count = 0;
    let inv = surface.rot.conjugate();
    let pos = rotate(inv, shape.pos - surface.pos);
    let rot = quat_mul(inv, shape.rot).normalize();
    let motion = rotate(inv, motion);
    let boxed;
    let convex = match shape.shape {
        Shape::Sphere { radius } => Convex::Sphere {
            centre: pos,
            radius,
        },
        Shape::Capsule {
            half_height,
            radius,
        } => {
            let (p, q) = capsule_segment(pos, rot, half_height);
            Convex::Capsule { p, q, radius }
        }
        Shape::Box { half_extents } => {
            boxed = BoxPoly::new(half_extents);
            Convex::Poly {
                poly: boxed.poly(),
                pos,
                rot,
            }
        }
        Shape::Hull(_) => match shape.shape.hull(store) {
            Some(h) => Convex::Poly {
                poly: Poly::of_hull(h),
                pos,
                rot,
            },
            None => return,
        },
        // surfaces never meet; a compound's children come one by one
        Shape::Compound(_) | Shape::Mesh(_) | Shape::HeightField(_) => return,
    };
    let (lo, hi) = shape.shape.world_aabb(pos, rot, store);
    let grow = Vec3::splat(max_separation);
    let (lo, hi) = (lo - grow, hi + grow);
    out.begin();
    match surface.shape {
        Shape::Mesh(id) => {
            let Some(mesh) = store.mesh(id) else { return };
            mesh.triangles_in(lo, hi, |k| {
                if let Some(c) = collide_triangle(&convex, &mesh.tri(k), max_separation, motion) {
                    out.take(&c, [sub, k], pos);
                }
            });
        }
        Shape::HeightField(id) => {
            let Some(field) = store.heightfield(id) else {
                return;
            };
            field.triangles_in(lo, hi, |k| {
                if let Some(c) = collide_triangle(&convex, &field.tri(k), max_separation, motion) {
                    out.take(&c, [sub, k], pos);
                }
            });
        }
        _ => return,
    }
    out.finish(pos, max_separation, surface.pos, surface.rot);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Quat;
    use crate::mesh::TriangleMesh;

    fn store_with(mesh: TriangleMesh) -> (ShapeStore, Shape) {
        let mut s = ShapeStore::new();
        let id = s.push_mesh(mesh).unwrap();
        (s, Shape::Mesh(id))
    }

    /// A 10 × 10 grid of 1 m cells (200 triangles) at y = 0.
    fn floor() -> TriangleMesh {
        let (v, t) = crate::mesh::tests::grid(10, 1.0);
        TriangleMesh::new(&v, &t).unwrap()
    }

    fn at(shape: Shape, pos: Vec3, rot: Quat) -> Placed {
        Placed { shape, pos, rot }
    }

    /// A box resting across many triangles of a flat grid: one manifold,
    /// normal straight down (from the box to the floor), four points at
    /// the box's depth.
    #[test]
    fn a_box_on_a_flat_grid_gets_one_four_point_manifold() {
        let (store, mesh) = store_with(floor());
        let ground = at(mesh, Vec3::new(-5.0, 0.0, -5.0), Quat::IDENTITY);
        let mut out = SurfaceManifolds::new();
        for (x, z, turn) in [(0.0, 0.0, 0.0), (0.5, 0.3, 0.4), (-1.7, 2.2, 1.1)] {
            let b = at(
                Shape::cuboid(Vec3::new(0.6, 0.3, 0.4)).unwrap(),
                Vec3::new(x, 0.29, z),
                Quat::from_rotation_y(turn),
            );
            collide_surface(&b, &ground, 0.02, &store, Vec3::ZERO, 0, &mut out);
            assert_eq!(out.count, 1, "{x} {z}");
            let c = &out.list[0];
            assert!((c.normal + Vec3::Y).length() < 1e-5, "{:?}", c.normal);
            assert_eq!(c.count, 4);
            for k in 0..4 {
                assert!((c.separation(k) + 0.01).abs() < 1e-5);
            }
        }
    }

    /// A box in a right-angled trench (two walls at ±45°) touches both: two
    /// manifolds, each along its wall's normal.
    #[test]
    fn a_box_in_a_trench_gets_a_manifold_per_wall() {
        // walls: y = |x| for z in [-2, 2], as two quads
        let v = vec![
            Vec3::new(-2.0, 2.0, -2.0),
            Vec3::new(-2.0, 2.0, 2.0),
            Vec3::new(0.0, 0.0, -2.0),
            Vec3::new(0.0, 0.0, 2.0),
            Vec3::new(2.0, 2.0, -2.0),
            Vec3::new(2.0, 2.0, 2.0),
        ];
        let t = vec![[0, 1, 3], [0, 3, 2], [2, 3, 5], [2, 5, 4]];
        let (store, mesh) = store_with(TriangleMesh::new(&v, &t).unwrap());
        let trench = at(mesh, Vec3::ZERO, Quat::IDENTITY);
        // a cube turned 45° so its faces lie on the walls, 1 cm into each
        let h = 0.5;
        let b = at(
            Shape::cuboid(Vec3::splat(h)).unwrap(),
            Vec3::new(0.0, h * 2f32.sqrt() - 0.01 * 2f32.sqrt(), 0.0),
            Quat::from_rotation_z(core::f32::consts::FRAC_PI_4),
        );
        let mut out = SurfaceManifolds::new();
        collide_surface(&b, &trench, 0.02, &store, Vec3::ZERO, 0, &mut out);
        assert_eq!(out.count, 2);
        let mut normals: Vec<Vec3> = out.list[..2].iter().map(|c| c.normal).collect();
        normals.sort_by(|a, b| a.x.total_cmp(&b.x));
        let s = 0.5f32.sqrt();
        assert!(
            (normals[0] - Vec3::new(-s, -s, 0.0)).length() < 1e-4,
            "{normals:?}"
        );
        assert!(
            (normals[1] - Vec3::new(s, -s, 0.0)).length() < 1e-4,
            "{normals:?}"
        );
        for c in &out.list[..2] {
            for k in 0..c.count {
                assert!((c.separation(k) + 0.01).abs() < 2e-4, "{}", c.separation(k));
            }
        }
    }

    /// A sphere over a seam between two coplanar triangles: one manifold,
    /// straight up, whichever side (to 1e-3: beside a corner shared by
    /// six triangles, the corner's own normal leans by the 0.1 mm offset
    /// over the 0.24 m height, and moving along +x it hinders the motion
    /// no more than the face's, so the active-edge rule keeps it, as
    /// Jolt's does).
    #[test]
    fn a_sphere_on_a_seam_feels_a_flat_floor() {
        let (store, mesh) = store_with(floor());
        let ground = at(mesh, Vec3::ZERO, Quat::IDENTITY);
        let mut out = SurfaceManifolds::new();
        for x in [2.0, 2.0001, 1.9999, 3.0] {
            let s = at(
                Shape::sphere(0.25).unwrap(),
                Vec3::new(x, 0.24, x),
                Quat::IDENTITY,
            );
            collide_surface(&s, &ground, 0.02, &store, Vec3::X, 0, &mut out);
            assert_eq!(out.count, 1);
            let c = &out.list[0];
            assert!((c.normal + Vec3::Y).length() < 1e-3, "{x}: {:?}", c.normal);
            assert!((c.separation(0) + 0.01).abs() < 1e-5);
        }
    }
}
