//! Contact generation for every pair of shapes. Each function returns the
//! contact normal (from shape A to shape B) and up to [`MAX_POINTS`] pairs of
//! points, one on each surface; the separation of a point is
//! `(on_b - on_a) · normal` (negative when penetrating). Points separated by
//! more than `max_separation` (the speculative contact distance) are omitted.

mod box_box;
pub(crate) mod box_box_sat;
mod capsule;
mod sphere;

use crate::math::{rotate, Quat, Vec3};
use crate::shape::Shape;

pub(crate) use box_box::collide_box_box;

pub(crate) use capsule::{collide_capsule_box, collide_capsule_capsule};
pub(crate) use sphere::{collide_sphere_box, collide_sphere_capsule, collide_sphere_sphere};

/// Most points in one manifold: four well-spread points carry a face contact.
pub const MAX_POINTS: usize = 4;

/// A contact manifold as generated, in world space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ContactPoints {
    pub normal: Vec3,
    pub count: usize,
    pub on_a: [Vec3; MAX_POINTS],
    pub on_b: [Vec3; MAX_POINTS],
    /// The same points in each shape's own frame, with their separations,
    /// where the pair function had them at hand (box faces): the narrow
    /// phase then skips turning world points back into local ones.
    pub local: Option<LocalPoints>,
}

/// Points of a [`ContactPoints`] in the frames of shape A and shape B.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LocalPoints {
    pub on_a: [Vec3; MAX_POINTS],
    pub on_b: [Vec3; MAX_POINTS],
    pub separation: [f32; MAX_POINTS],
}

impl ContactPoints {
    pub fn new(normal: Vec3) -> Self {
        Self {
            normal,
            count: 0,
            on_a: [Vec3::ZERO; MAX_POINTS],
            on_b: [Vec3::ZERO; MAX_POINTS],
            local: None,
        }
    }

    pub fn push(&mut self, on_a: Vec3, on_b: Vec3) {
        if self.count < MAX_POINTS {
            self.on_a[self.count] = on_a;
            self.on_b[self.count] = on_b;
            self.count += 1;
        }
    }

    pub fn separation(&self, k: usize) -> f32 {
        (self.on_b[k] - self.on_a[k]).dot(self.normal)
    }

    /// The same contact seen with A and B exchanged.
    pub fn flipped(mut self) -> Self {
        self.normal = -self.normal;
        core::mem::swap(&mut self.on_a, &mut self.on_b);
        if let Some(l) = &mut self.local {
            core::mem::swap(&mut l.on_a, &mut l.on_b);
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

/// Contacts between two placed shapes, normal from `a` to `b`. Dispatches on
/// the ordered shape pair; the lower shape kind is always the first argument
/// of the pair function and the result is flipped back when needed.
pub(crate) fn collide(a: &Placed, b: &Placed, max_separation: f32) -> Option<ContactPoints> {
    if a.shape.kind() > b.shape.kind() {
        return collide(b, a, max_separation).map(ContactPoints::flipped);
    }
    let m = max_separation;
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
            collide_box_box(None, a.pos, a.rot, ha, b.pos, b.rot, hb, m)
        }
        // unreachable: the kinds are ordered above
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
