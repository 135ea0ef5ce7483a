//! A compound against any shape: each child of the compound that comes
//! near the other shape (its box against the compound's child tree) is
//! collided on its own, with a convex shape by the pair functions, with a
//! mesh or height field by `surface.rs`, with another compound child by
//! child; and the children's contacts are merged into manifolds by normal
//! as a surface's triangles are (`SurfaceManifolds`, Jolt's manifold
//! reduction across sub-shapes). A table's four legs on a floor so give
//! one manifold of four points (a leg each), not four of one or two; a
//! compound wedged in a corner gets one per wall.

use super::surface::SurfaceManifolds;
use super::triangle::TriContact;
use super::{collide_in, ContactPoints, Placed};
use crate::math::{quat_mul, rotate, Quat, Vec3};
use crate::shape_store::ShapeStore;

/// What one pair's walk carries: the settings, the output, and the
/// scratch a child against a surface gathers into.
struct Walk<'s, 'o> {
    store: &'s ShapeStore,
    max_separation: f32,
    motion: Vec3,
    /// A's centre (world): the lever arms of the manifolds' reduction.
    centre: Vec3,
    out: &'o mut SurfaceManifolds,
    /// The caller's (the narrow phase keeps one a job, so a step
    /// allocates nothing); used only when a child meets a surface.
    inner: &'o mut SurfaceManifolds,
}

/// `[lo, hi]` of `shape` seen in the frame at `pos, rot`, grown by `grow`.
fn box_in_frame(p: &Placed, pos: Vec3, rot: Quat, store: &ShapeStore, grow: f32) -> (Vec3, Vec3) {
    let inv = rot.conjugate();
    let (lo, hi) = p.shape.world_aabb(
        rotate(inv, p.pos - pos),
        quat_mul(inv, p.rot).normalize(),
        store,
    );
    (lo - Vec3::splat(grow), hi + Vec3::splat(grow))
}

impl Walk<'_, '_> {
    /// `a` (a child of A, or A) against B, or B's children near it.
    fn against_b(&mut self, a: &Placed, sub_a: u32, b: &Placed) {
        match b.shape.compound(self.store) {
            Some(c) => {
                let (lo, hi) = box_in_frame(a, b.pos, b.rot, self.store, self.max_separation);
                c.children_in(lo, hi, |k| {
                    let child = c.placed_child(k, b.pos, b.rot);
                    self.parts(a, &child, [sub_a, k]);
                });
            }
            None => self.parts(a, b, [sub_a, 0]),
        }
    }

    /// Two convex parts, or a convex part and a surface.
    fn parts(&mut self, a: &Placed, b: &Placed, sub: [u32; 2]) {
        if b.shape.is_surface() {
            let inner = &mut *self.inner;
            let m = self.max_separation;
            super::surface::collide_surface(a, b, m, self.store, self.motion, sub[0], inner);
            for (c, s) in inner.list[..inner.count].iter().zip(&inner.sub) {
                self.out.take(&part_contact(c, a, b), *s, self.centre);
            }
            return;
        }
        if let Some(c) = collide_in(a, b, self.max_separation, self.store) {
            if c.count > 0 {
                self.out.take(&part_contact(&c, a, b), sub, self.centre);
            }
        }
    }
}

/// A part pair's manifold as the merger takes it: normal from B to A,
/// points `(on A, on B)` in the world.
fn part_contact(c: &ContactPoints, a: &Placed, b: &Placed) -> TriContact {
    let (on_a, on_b) = c.world_points(a.pos, a.rot, b.pos, b.rot);
    let mut t = TriContact::new(-c.normal);
    for k in 0..c.count {
        t.push(on_a[k], on_b[k]);
    }
    t
}

/// Contacts of `a` and `b`, at least one a compound, neither `a` a
/// surface (order the pair by shape kind first), into `out` (cleared
/// first), normal from `a` to `b`, each manifold's parts (child indices;
/// a surface's triangle) in `out.sub`. `motion` is A's velocity relative
/// to B (world), for a surface's active-edge rule. `scratch` is where a
/// child against a mesh or height field gathers its contacts before they
/// are merged into `out` (its contents do not matter before or after).
pub(crate) fn collide_compound(
    a: &Placed,
    b: &Placed,
    max_separation: f32,
    store: &ShapeStore,
    motion: Vec3,
    out: &mut SurfaceManifolds,
    scratch: &mut SurfaceManifolds,
) {
    out.begin();
    let mut walk = Walk {
        store,
        max_separation,
        motion,
        centre: a.pos,
        out,
        inner: scratch,
    };
    match a.shape.compound(store) {
        Some(c) => {
            let (lo, hi) = box_in_frame(b, a.pos, a.rot, store, max_separation);
            c.children_in(lo, hi, |k| {
                let child = c.placed_child(k, a.pos, a.rot);
                walk.against_b(&child, k, b);
            });
        }
        None => walk.against_b(a, 0, b),
    }
    out.finish(a.pos, max_separation, Vec3::ZERO, Quat::IDENTITY);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compound::{CompoundChild, CompoundShape};
    use crate::shape::Shape;

    /// A table: a 1.2 × 0.1 × 0.8 top on four 0.1 × 0.7 × 0.1 legs.
    fn table(store: &mut ShapeStore) -> (Shape, Vec3) {
        let leg = Shape::cuboid(Vec3::new(0.05, 0.35, 0.05)).unwrap();
        let mut kids = vec![CompoundChild::new(
            Shape::cuboid(Vec3::new(0.6, 0.05, 0.4)).unwrap(),
            Vec3::new(0.0, 0.75, 0.0),
        )];
        for (x, z) in [(-0.55, -0.35), (0.55, -0.35), (-0.55, 0.35), (0.55, 0.35)] {
            kids.push(CompoundChild::new(leg, Vec3::new(x, 0.35, z)));
        }
        let c = CompoundShape::new(&kids, store).unwrap();
        let origin = c.frame().0;
        let id = store.push_compound(c).unwrap();
        (Shape::Compound(id), origin)
    }

    /// A table standing 1 cm into a floor box: one manifold, straight
    /// down, four points (a leg each: the reduction keeps the widest
    /// four), every one 1 cm deep.
    #[test]
    fn a_table_on_a_floor_gets_one_manifold_on_its_four_legs() {
        let mut store = ShapeStore::new();
        let (shape, origin) = table(&mut store);
        let c = store.compound(crate::CompoundId(0)).unwrap();
        assert!(c.frame().1.abs_diff_eq(Quat::IDENTITY, 1e-6));
        let tbl = Placed {
            shape,
            pos: origin - Vec3::new(0.0, 0.01, 0.0),
            rot: Quat::IDENTITY,
        };
        let floor = Placed {
            shape: Shape::cuboid(Vec3::new(5.0, 0.5, 5.0)).unwrap(),
            pos: Vec3::new(0.0, -0.5, 0.0),
            rot: Quat::IDENTITY,
        };
        let mut out = SurfaceManifolds::new();
        collide_compound(
            &tbl,
            &floor,
            0.02,
            &store,
            Vec3::ZERO,
            &mut out,
            &mut SurfaceManifolds::new(),
        );
        assert_eq!(out.count, 1);
        let m = &out.list[0];
        assert!((m.normal + Vec3::Y).length() < 1e-5, "{:?}", m.normal);
        assert_eq!(m.count, 4);
        let (on_a, _) = m.world_points(tbl.pos, tbl.rot, floor.pos, floor.rot);
        let mut legs = [false; 4];
        for (k, p) in on_a.iter().enumerate().take(4) {
            assert!((m.separation(k) + 0.01).abs() < 1e-5, "{}", m.separation(k));
            let leg = usize::from(p.x > 0.0) + 2 * usize::from(p.z > 0.0);
            legs[leg] = true;
        }
        assert_eq!(legs, [true; 4], "a point under every leg: {on_a:?}");
        assert!(out.sub[0][0] >= 1, "a leg's index: {:?}", out.sub[0]);
        // the other order: the same manifold seen from the floor
        let flipped = crate::collide::collide_in(&floor, &tbl, 0.02, &store).unwrap();
        assert!((flipped.normal - Vec3::Y).length() < 1e-5);
        assert_eq!(flipped.count, 4);
    }

    /// A table top resting on a box under its edge touches only there:
    /// the legs, far from the box, are never collided.
    #[test]
    fn only_children_near_the_other_shape_touch() {
        let mut store = ShapeStore::new();
        let (shape, origin) = table(&mut store);
        let tbl = Placed {
            shape,
            pos: origin,
            rot: Quat::IDENTITY,
        };
        // a small cube just under the top, between the legs
        let cube = Placed {
            shape: Shape::cuboid(Vec3::splat(0.1)).unwrap(),
            pos: Vec3::new(0.0, 0.605, 0.0),
            rot: Quat::IDENTITY,
        };
        let mut out = SurfaceManifolds::new();
        collide_compound(
            &tbl,
            &cube,
            0.02,
            &store,
            Vec3::ZERO,
            &mut out,
            &mut SurfaceManifolds::new(),
        );
        assert_eq!(out.count, 1);
        assert_eq!(out.sub[0], [0, 0], "the top");
        let m = &out.list[0];
        assert!((m.normal + Vec3::Y).length() < 1e-5, "{:?}", m.normal);
        assert_eq!(m.count, 4);
        for k in 0..4 {
            assert!((m.separation(k) + 0.005).abs() < 1e-5);
        }
    }

    /// Two compounds: a dumbbell (two spheres on a capsule) lying across a
    /// table's top touches it with both spheres: one manifold (one normal)
    /// with a point under each sphere.
    #[test]
    fn compound_against_compound() {
        let mut store = ShapeStore::new();
        let (shape, origin) = table(&mut store);
        let bell = CompoundShape::new(
            &[
                CompoundChild::new(Shape::sphere(0.1).unwrap(), Vec3::new(-0.3, 0.0, 0.0)),
                CompoundChild::new(Shape::sphere(0.1).unwrap(), Vec3::new(0.3, 0.0, 0.0)),
                CompoundChild::new(Shape::capsule(0.3, 0.03).unwrap(), Vec3::ZERO)
                    .rotated(Quat::from_rotation_z(core::f32::consts::FRAC_PI_2)),
            ],
            &store,
        )
        .unwrap();
        let id = store.push_compound(bell).unwrap();
        let tbl = Placed {
            shape,
            pos: origin,
            rot: Quat::IDENTITY,
        };
        let dumbbell = Placed {
            shape: Shape::Compound(id),
            pos: Vec3::new(0.0, 0.8 + 0.1 - 0.002, 0.0),
            rot: Quat::IDENTITY,
        };
        let mut out = SurfaceManifolds::new();
        collide_compound(
            &dumbbell,
            &tbl,
            0.02,
            &store,
            Vec3::ZERO,
            &mut out,
            &mut SurfaceManifolds::new(),
        );
        assert_eq!(out.count, 1);
        let m = &out.list[0];
        assert!((m.normal + Vec3::Y).length() < 1e-5, "{:?}", m.normal);
        assert_eq!(m.count, 2, "one point under each sphere");
        let (on_a, _) = m.world_points(dumbbell.pos, dumbbell.rot, tbl.pos, tbl.rot);
        assert!((on_a[0].x.abs() - 0.3).abs() < 1e-4 && (on_a[1].x.abs() - 0.3).abs() < 1e-4);
        assert!(on_a[0].x * on_a[1].x < 0.0);
        for k in 0..2 {
            assert!((m.separation(k) + 0.002).abs() < 1e-5);
        }
    }
}
