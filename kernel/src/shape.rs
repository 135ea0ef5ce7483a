//! Collision shapes and their mass properties. Every shape has its centre
//! of mass at its origin and its principal axes on the local axes, so an
//! inertia tensor is a diagonal (a `Vec3`); a hull is moved into that
//! frame when it is added to a world (`hull_shape`).

use crate::error::{PhysicsError, Result};
use crate::hull_shape::{HullId, HullShape, HullStore};
use crate::math::{rotate, Mat3, Quat, Vec3};
use core::f32::consts::PI;

/// A convex collision shape in its local frame (centre of mass at the origin).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    Sphere {
        radius: f32,
    },
    /// A box given by its half extents.
    Box {
        half_extents: Vec3,
    },
    /// A capsule along the local Y axis: a segment from `-half_height` to
    /// `+half_height` swept by `radius`.
    Capsule {
        half_height: f32,
        radius: f32,
    },
    /// A convex hull of the world's [`HullStore`], added with
    /// [`PhysicsSystem::add_hull`](crate::PhysicsSystem::add_hull).
    Hull(HullId),
}

/// Discriminant used to order narrow-phase dispatch (lower type is shape A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ShapeKind {
    Sphere = 0,
    Capsule = 1,
    Box = 2,
    Hull = 3,
}

/// A size in `[MIN_SHAPE_SIZE, MAX_SHAPE_SIZE]` (NaN fails both compares).
fn positive(v: f32) -> bool {
    (crate::limits::MIN_SHAPE_SIZE..=crate::limits::MAX_SHAPE_SIZE).contains(&v)
}

impl Shape {
    pub fn sphere(radius: f32) -> Result<Self> {
        let s = Shape::Sphere { radius };
        s.validate().map(|_| s)
    }

    pub fn cuboid(half_extents: Vec3) -> Result<Self> {
        let s = Shape::Box { half_extents };
        s.validate().map(|_| s)
    }

    pub fn capsule(half_height: f32, radius: f32) -> Result<Self> {
        let s = Shape::Capsule {
            half_height,
            radius,
        };
        s.validate().map(|_| s)
    }

    /// Every size (m) must be in
    /// [`MIN_SHAPE_SIZE`](crate::MIN_SHAPE_SIZE)`..=`[`MAX_SHAPE_SIZE`](crate::MAX_SHAPE_SIZE)
    /// (a hull's were checked when it was built; that its id is the
    /// world's is checked where the world is at hand).
    pub fn validate(&self) -> Result<()> {
        let ok = match *self {
            Shape::Sphere { radius } => positive(radius),
            Shape::Box { half_extents: h } => positive(h.x) && positive(h.y) && positive(h.z),
            Shape::Capsule {
                half_height,
                radius,
            } => positive(half_height) && positive(radius),
            Shape::Hull(_) => true,
        };
        ok.then_some(()).ok_or(PhysicsError::InvalidShape)
    }

    /// [`validate`](Self::validate), and a hull's id names a hull of `hulls`.
    pub(crate) fn validate_in(&self, hulls: &HullStore) -> Result<()> {
        self.validate()?;
        match *self {
            Shape::Hull(id) if hulls.get(id).is_none() => Err(PhysicsError::InvalidShape),
            _ => Ok(()),
        }
    }

    /// The hull behind a [`Shape::Hull`] (none for other shapes, or an id
    /// `hulls` did not issue).
    pub(crate) fn hull<'a>(&self, hulls: &'a HullStore) -> Option<&'a HullShape> {
        match *self {
            Shape::Hull(id) => hulls.get(id),
            _ => None,
        }
    }

    pub(crate) fn kind(&self) -> ShapeKind {
        match self {
            Shape::Sphere { .. } => ShapeKind::Sphere,
            Shape::Capsule { .. } => ShapeKind::Capsule,
            Shape::Box { .. } => ShapeKind::Box,
            Shape::Hull(_) => ShapeKind::Hull,
        }
    }

    /// Volume (m³); a hull's is looked up in `hulls` (0 if it is not there).
    pub fn volume(&self, hulls: &HullStore) -> f32 {
        match *self {
            Shape::Sphere { radius: r } => 4.0 / 3.0 * PI * r * r * r,
            Shape::Box { half_extents: h } => 8.0 * h.x * h.y * h.z,
            Shape::Capsule {
                half_height,
                radius: r,
            } => PI * r * r * (2.0 * half_height) + 4.0 / 3.0 * PI * r * r * r,
            Shape::Hull(id) => hulls.get(id).map_or(0.0, |h| h.volume),
        }
    }

    /// Principal moments of inertia for unit density, about the centre of mass.
    fn unit_density_inertia(&self, hulls: &HullStore) -> Vec3 {
        match *self {
            Shape::Sphere { radius: r } => Vec3::splat(0.4 * self.volume(hulls) * r * r),
            Shape::Box { half_extents: h } => {
                let m = self.volume(hulls);
                Vec3::new(
                    m / 3.0 * (h.y * h.y + h.z * h.z),
                    m / 3.0 * (h.x * h.x + h.z * h.z),
                    m / 3.0 * (h.x * h.x + h.y * h.y),
                )
            }
            Shape::Capsule {
                half_height,
                radius: r,
            } => {
                // Cylinder of height h plus two hemispheres whose centres of
                // mass sit 3r/8 beyond the cylinder's ends (parallel axis).
                let h = 2.0 * half_height;
                let mc = PI * r * r * h;
                let ms = 4.0 / 3.0 * PI * r * r * r;
                let axial = mc * r * r / 2.0 + ms * 0.4 * r * r;
                let transverse = mc * (h * h / 12.0 + r * r / 4.0)
                    + ms * (0.4 * r * r + h * h / 4.0 + 3.0 * h * r / 8.0);
                Vec3::new(transverse, axial, transverse)
            }
            Shape::Hull(id) => hulls.get(id).map_or(Vec3::ZERO, |h| h.unit_inertia),
        }
    }

    /// `(mass, principal inertia)` for a uniform density (kg/m³).
    pub fn mass_properties(&self, density: f32, hulls: &HullStore) -> (f32, Vec3) {
        (
            self.volume(hulls) * density,
            self.unit_density_inertia(hulls) * density,
        )
    }

    /// Principal inertia scaled so the shape has the given mass.
    pub fn inertia_for_mass(&self, mass: f32, hulls: &HullStore) -> Vec3 {
        self.unit_density_inertia(hulls) * (mass / self.volume(hulls))
    }

    /// Half extents of the smallest local box about the origin that holds
    /// the shape.
    pub fn local_half_extents(&self, hulls: &HullStore) -> Vec3 {
        match *self {
            Shape::Sphere { radius } => Vec3::splat(radius),
            Shape::Box { half_extents } => half_extents,
            Shape::Capsule {
                half_height,
                radius,
            } => Vec3::new(radius, half_height + radius, radius),
            Shape::Hull(id) => hulls
                .get(id)
                .map_or(Vec3::ZERO, |h| h.local_max.max(-h.local_min)),
        }
    }

    /// Distance (m) from the centre to the farthest point of the shape: the
    /// radius of the smallest sphere about the centre that holds it.
    pub(crate) fn bounding_radius(&self, hulls: &HullStore) -> f32 {
        match *self {
            Shape::Sphere { radius } => radius,
            Shape::Box { half_extents } => half_extents.length(),
            Shape::Capsule {
                half_height,
                radius,
            } => half_height + radius,
            Shape::Hull(id) => hulls.get(id).map_or(0.0, |h| h.bounding_radius),
        }
    }

    /// The radius of the largest sphere about the centre of mass that the
    /// shape contains (Jolt's `GetInnerRadius`): how far the body may move
    /// in a step before a discrete step could miss a wall (m). A hull's is
    /// its nearest face's distance from the centre of mass.
    pub(crate) fn inner_radius(&self, hulls: &HullStore) -> f32 {
        match *self {
            Shape::Sphere { radius } | Shape::Capsule { radius, .. } => radius,
            Shape::Box { half_extents } => half_extents.min_element(),
            Shape::Hull(id) => hulls.get(id).map_or(0.0, |h| {
                h.face_offset.iter().copied().fold(f32::INFINITY, f32::min)
            }),
        }
    }

    /// World-space bounding box `(min, max)` at a position and rotation. A
    /// hull's is its local box turned (as Jolt's hull bounds are): exact
    /// for boxes, a little loose for a turned rounded hull.
    pub fn world_aabb(&self, pos: Vec3, rot: Quat, hulls: &HullStore) -> (Vec3, Vec3) {
        let turned = |h: Vec3| {
            let r = Mat3::from_quat(rot);
            Mat3::from_cols(r.x_axis.abs(), r.y_axis.abs(), r.z_axis.abs()) * h
        };
        let ext = match *self {
            Shape::Sphere { radius } => Vec3::splat(radius),
            Shape::Box { half_extents } => turned(half_extents),
            Shape::Capsule {
                half_height,
                radius,
            } => rotate(rot, Vec3::new(0.0, half_height, 0.0)).abs() + Vec3::splat(radius),
            Shape::Hull(id) => {
                let Some(h) = hulls.get(id) else {
                    return (pos, pos);
                };
                let c = pos + rotate(rot, (h.local_max + h.local_min) * 0.5);
                let e = turned((h.local_max - h.local_min) * 0.5);
                return (c - e, c + e);
            }
        };
        (pos - ext, pos + ext)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hull_shape::NO_HULLS;

    #[test]
    fn bad_sizes_are_refused() {
        assert_eq!(Shape::sphere(0.0), Err(PhysicsError::InvalidShape));
        assert_eq!(Shape::sphere(-1.0), Err(PhysicsError::InvalidShape));
        assert_eq!(Shape::sphere(f32::NAN), Err(PhysicsError::InvalidShape));
        assert_eq!(
            Shape::cuboid(Vec3::new(1.0, f32::INFINITY, 1.0)),
            Err(PhysicsError::InvalidShape)
        );
        assert_eq!(
            Shape::cuboid(Vec3::new(1.0, 0.0, 1.0)),
            Err(PhysicsError::InvalidShape)
        );
        assert_eq!(Shape::capsule(0.0, 1.0), Err(PhysicsError::InvalidShape));
        assert_eq!(Shape::capsule(1.0, -0.1), Err(PhysicsError::InvalidShape));
        assert!(Shape::capsule(1.0, 0.5).is_ok());
    }

    #[test]
    fn cube_mass_and_inertia() {
        let (m, i) = Shape::cuboid(Vec3::splat(0.5))
            .unwrap()
            .mass_properties(1000.0, &NO_HULLS);
        assert!((m - 1000.0).abs() < 1e-3);
        // m s² / 6 for a cube of side s = 1
        assert!((i - Vec3::splat(1000.0 / 6.0)).abs().max_element() < 1e-2);
    }

    #[test]
    fn capsule_tends_to_sphere_and_rod() {
        // very short capsule ≈ sphere
        let c = Shape::capsule(1e-4, 1.0)
            .unwrap()
            .unit_density_inertia(&NO_HULLS);
        let s = Shape::sphere(1.0).unwrap().unit_density_inertia(&NO_HULLS);
        assert!((c - s).abs().max_element() / s.x < 1e-3);
        // very thin capsule ≈ rod: I = m L² / 12
        let cap = Shape::capsule(1.0, 1e-3).unwrap();
        let i = cap.unit_density_inertia(&NO_HULLS);
        let rod = cap.volume(&NO_HULLS) * 4.0 / 12.0;
        assert!((i.x - rod).abs() / rod < 1e-2);
    }

    #[test]
    fn rotated_box_aabb() {
        let s = Shape::cuboid(Vec3::new(1.0, 0.5, 0.5)).unwrap();
        let (lo, hi) = s.world_aabb(
            Vec3::ZERO,
            Quat::from_rotation_z(core::f32::consts::FRAC_PI_2),
            &NO_HULLS,
        );
        assert!((hi - Vec3::new(0.5, 1.0, 0.5)).abs().max_element() < 1e-5);
        assert!((lo + hi).abs().max_element() < 1e-6);
    }
}
