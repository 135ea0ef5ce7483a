//! Contact generation for every pair of shapes. Each function returns the
//! contact normal (from shape A to shape B) and up to [`MAX_POINTS`] pairs of
//! points, one on each surface; the separation of a point is
//! `(on_b - on_a) · normal` (negative when penetrating). Points separated by
//! more than `max_separation` (the speculative contact distance) are omitted.

mod box_box;
pub(crate) mod box_box_sat;
mod capsule;
pub(crate) mod compound;
pub(crate) mod hull;
mod sphere;
pub(crate) mod surface;
pub(crate) mod triangle;

use crate::math::{rotate, Quat, Vec3};
use crate::shape::Shape;
use crate::shape_store::ShapeStore;

pub(crate) use box_box::{collide_box_box, contact_or_edge as box_contact_or_edge, Obb};

pub(crate) use capsule::{collide_capsule_box, collide_capsule_capsule};
pub(crate) use sphere::{collide_sphere_box, collide_sphere_capsule, collide_sphere_sphere};

/// Most points in one manifold: four well-spread points carry a face contact.
pub const MAX_POINTS: usize = 4;

/// A contact manifold as generated: the normal (world space, from A to B)
/// and up to [`MAX_POINTS`] pairs of points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ContactPoints {
    pub normal: Vec3,
    pub count: usize,
    pub points: Points,
}

/// Where a [`ContactPoints`]' points are given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Points {
    /// In world space, one on each surface.
    World {
        on_a: [Vec3; MAX_POINTS],
        on_b: [Vec3; MAX_POINTS],
    },
    /// In each shape's own frame, with their separations, where the pair
    /// function has them at hand (box faces): the narrow phase stores
    /// manifolds in the bodies' frames, so world points would only be
    /// turned back.
    Local(LocalPoints),
}

/// Points of a [`ContactPoints`] in the frames of shape A and shape B.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LocalPoints {
    pub on_a: [Vec3; MAX_POINTS],
    pub on_b: [Vec3; MAX_POINTS],
    pub separation: [f32; MAX_POINTS],
}

impl ContactPoints {
    /// No points yet; [`push`](Self::push) adds world points.
    pub fn new(normal: Vec3) -> Self {
        Self {
            normal,
            count: 0,
            points: Points::World {
                on_a: [Vec3::ZERO; MAX_POINTS],
                on_b: [Vec3::ZERO; MAX_POINTS],
            },
        }
    }

    /// `count` points given in the shapes' own frames.
    pub fn local(normal: Vec3, count: usize, points: LocalPoints) -> Self {
        Self {
            normal,
            count: count.min(MAX_POINTS),
            points: Points::Local(points),
        }
    }

    /// Adds a pair of world points (while there is room).
    pub fn push(&mut self, p_a: Vec3, p_b: Vec3) {
        if let Points::World { on_a, on_b } = &mut self.points {
            if self.count < MAX_POINTS {
                on_a[self.count] = p_a;
                on_b[self.count] = p_b;
                self.count += 1;
            }
        }
    }

    pub fn separation(&self, k: usize) -> f32 {
        match &self.points {
            Points::World { on_a, on_b } => (on_b[k] - on_a[k]).dot(self.normal),
            Points::Local(l) => l.separation[k],
        }
    }

    /// The points in world space, with A and B at these poses.
    pub fn world_points(
        &self,
        pos_a: Vec3,
        rot_a: Quat,
        pos_b: Vec3,
        rot_b: Quat,
    ) -> ([Vec3; MAX_POINTS], [Vec3; MAX_POINTS]) {
        match &self.points {
            Points::World { on_a, on_b } => (*on_a, *on_b),
            Points::Local(l) => (
                l.on_a.map(|p| pos_a + rotate(rot_a, p)),
                l.on_b.map(|p| pos_b + rotate(rot_b, p)),
            ),
        }
    }

    /// The same contact seen with A and B exchanged.
    pub fn flipped(mut self) -> Self {
        self.normal = -self.normal;
        match &mut self.points {
            Points::World { on_a, on_b } => core::mem::swap(on_a, on_b),
            Points::Local(l) => core::mem::swap(&mut l.on_a, &mut l.on_b),
        }
        self
    }
}

/// A shape placed in the world.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placed {
    pub shape: Shape,
    pub pos: Vec3,
    pub rot: Quat,
}

/// Capsule core segment endpoints in world space.
pub(crate) fn capsule_segment(pos: Vec3, rot: Quat, half_height: f32) -> (Vec3, Vec3) {
    let axis = rotate(rot, Vec3::new(0.0, half_height, 0.0));
    (pos - axis, pos + axis)
}

/// Contacts between two placed shapes without hulls (see [`collide_in`]).
#[cfg(test)]
pub(crate) fn collide(a: &Placed, b: &Placed, max_separation: f32) -> Option<ContactPoints> {
    collide_in(a, b, max_separation, &crate::shape_store::NO_SHAPES)
}

/// Contacts between two placed shapes, normal from `a` to `b`; stored
/// shapes' ids name shapes of `store`. Dispatches on the ordered shape
/// pair; the lower shape kind is always the first argument of the pair
/// function and the result is flipped back when needed. A shape against a
/// mesh, a height field or a compound may touch it with several
/// manifolds (see `surface.rs` and `compound.rs`, which the narrow phase
/// calls for all of them); this gives the deepest.
pub(crate) fn collide_in(
    a: &Placed,
    b: &Placed,
    max_separation: f32,
    store: &ShapeStore,
) -> Option<ContactPoints> {
    if a.shape.kind() > b.shape.kind() {
        return collide_in(b, a, max_separation, store).map(ContactPoints::flipped);
    }
    let m = max_separation;
    if matches!(a.shape, Shape::Compound(_)) || matches!(b.shape, Shape::Compound(_)) {
        let mut out = surface::SurfaceManifolds::new();
        let mut scratch = surface::SurfaceManifolds::new();
        compound::collide_compound(a, b, m, store, Vec3::ZERO, &mut out, &mut scratch);
        return out.deepest();
    }
    if b.shape.is_surface() {
        let mut out = surface::SurfaceManifolds::new();
        surface::collide_surface(a, b, m, store, Vec3::ZERO, 0, &mut out);
        return out.deepest();
    }
    let hulls = store;
    if let Some(hb) = b.shape.hull(hulls) {
        let poly_b = hull::Poly::of_hull(hb);
        return match a.shape {
            Shape::Sphere { radius } => {
                hull::collide_sphere_hull(a.pos, radius, hb, b.pos, b.rot, m)
            }
            Shape::Capsule {
                half_height,
                radius,
            } => {
                let (p, q) = capsule_segment(a.pos, a.rot, half_height);
                hull::collide_capsule_hull(p, q, radius, hb, b.pos, b.rot, m)
            }
            Shape::Box { half_extents } => {
                let boxed = hull::BoxPoly::new(half_extents);
                hull::collide_poly_poly(&boxed.poly(), a.pos, a.rot, &poly_b, b.pos, b.rot, m)
            }
            // ordered: b is the surface or compound
            Shape::Compound(_) | Shape::Mesh(_) | Shape::HeightField(_) => None,
            Shape::Hull(_) => {
                let ha = a.shape.hull(hulls)?;
                hull::collide_poly_poly(
                    &hull::Poly::of_hull(ha),
                    a.pos,
                    a.rot,
                    &poly_b,
                    b.pos,
                    b.rot,
                    m,
                )
            }
        };
    }
    match (a.shape, b.shape) {
        (Shape::Sphere { radius: ra }, Shape::Sphere { radius: rb }) => {
            collide_sphere_sphere(a.pos, ra, b.pos, rb, m)
        }
        (
            Shape::Sphere { radius },
            Shape::Capsule {
                half_height,
                radius: rb,
            },
        ) => {
            let (p, q) = capsule_segment(b.pos, b.rot, half_height);
            collide_sphere_capsule(a.pos, radius, p, q, rb, m)
        }
        (Shape::Sphere { radius }, Shape::Box { half_extents }) => {
            collide_sphere_box(a.pos, radius, b.pos, b.rot, half_extents, m)
        }
        (
            Shape::Capsule {
                half_height: ha,
                radius: ra,
            },
            Shape::Capsule {
                half_height: hb,
                radius: rb,
            },
        ) => {
            let (pa, qa) = capsule_segment(a.pos, a.rot, ha);
            let (pb, qb) = capsule_segment(b.pos, b.rot, hb);
            collide_capsule_capsule(pa, qa, ra, pb, qb, rb, m)
        }
        (
            Shape::Capsule {
                half_height,
                radius,
            },
            Shape::Box { half_extents },
        ) => {
            let (p, q) = capsule_segment(a.pos, a.rot, half_height);
            collide_capsule_box(p, q, radius, b.pos, b.rot, half_extents, m)
        }
        (Shape::Box { half_extents: ha }, Shape::Box { half_extents: hb }) => {
            collide_box_box(a.pos, a.rot, ha, b.pos, b.rot, hb, m)
        }
        // unreachable: the kinds are ordered above (and a hull id not in
        // `hulls` names no shape: no contact)
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(shape: Shape, pos: Vec3) -> Placed {
        Placed {
            shape,
            pos,
            rot: Quat::IDENTITY,
        }
    }

    /// Every pair kind, both argument orders: normal flips, points swap.
    #[test]
    fn dispatch_is_symmetric_for_every_pair_kind() {
        let shapes = [
            Shape::sphere(0.5).unwrap(),
            Shape::capsule(0.5, 0.3).unwrap(),
            Shape::cuboid(Vec3::new(0.5, 0.4, 0.6)).unwrap(),
        ];
        for &sa in &shapes {
            for &sb in &shapes {
                let a = placed(sa, Vec3::ZERO);
                let b = Placed {
                    shape: sb,
                    pos: Vec3::new(0.1, 0.75, 0.05),
                    rot: Quat::from_rotation_z(0.2),
                };
                let ab = collide(&a, &b, 0.02).expect("overlapping shapes touch");
                let ba = collide(&b, &a, 0.02).expect("overlapping shapes touch");
                // normal points from A towards B
                assert!(
                    ab.normal.dot(b.pos - a.pos) > 0.0,
                    "{sa:?} {sb:?} {:?}",
                    ab.normal
                );
                assert!((ab.normal + ba.normal).length() < 1e-4, "{sa:?} {sb:?}");
                assert!(ab.count >= 1 && ab.count <= MAX_POINTS);
                for k in 0..ab.count {
                    assert!(ab.separation(k) < 0.0, "{sa:?} {sb:?} penetrating");
                }
            }
        }
    }
}
