//! Collision shapes and their mass properties. Every solid shape has its
//! centre of mass at its origin and its principal axes on the local axes,
//! so an inertia tensor is a diagonal (a `Vec3`); a hull is moved into
//! that frame when it is added to a world (`hull_shape`). Triangle meshes
//! and height fields are surfaces for static bodies: no mass, any frame.

use crate::error::{PhysicsError, Result};
use crate::hull_shape::{HullId, HullShape};
use crate::math::{rotate, Mat3, Quat, Vec3};
use crate::shape_store::{CompoundId, HeightFieldId, MeshId, ShapeStore};
use core::f32::consts::PI;

/// A collision shape in its local frame: a convex solid (centre of mass
/// at the origin), or a surface of a static body.
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
    /// Several convex shapes at poses in one body's frame, a compound of
    /// the world's [`ShapeStore`], added with
    /// [`PhysicsSystem::add_compound`](crate::PhysicsSystem::add_compound).
    Compound(CompoundId),
    /// A static triangle mesh of the world's [`ShapeStore`], added with
    /// [`PhysicsSystem::add_mesh`](crate::PhysicsSystem::add_mesh). Static
    /// bodies only.
    Mesh(MeshId),
    /// A static height field of the world's [`ShapeStore`], added with
    /// [`PhysicsSystem::add_heightfield`](crate::PhysicsSystem::add_heightfield).
    /// Static bodies only.
    HeightField(HeightFieldId),
}

/// Discriminant used to order narrow-phase dispatch (lower type is shape A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ShapeKind {
    Sphere = 0,
    Capsule = 1,
    Box = 2,
    Hull = 3,
    Compound = 4,
    Mesh = 5,
    HeightField = 6,
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
            Shape::Hull(_) | Shape::Compound(_) | Shape::Mesh(_) | Shape::HeightField(_) => true,
        };
        ok.then_some(()).ok_or(PhysicsError::InvalidShape)
    }

    /// [`validate`](Self::validate), and a stored shape's id names a
    /// shape of `store`.
    pub(crate) fn validate_in(&self, store: &ShapeStore) -> Result<()> {
        self.validate()?;
        let known = match *self {
            Shape::Hull(id) => store.hulls.get(id).is_some(),
            Shape::Compound(id) => store.compound(id).is_some(),
            Shape::Mesh(id) => store.mesh(id).is_some(),
            Shape::HeightField(id) => store.heightfield(id).is_some(),
            _ => true,
        };
        known.then_some(()).ok_or(PhysicsError::InvalidShape)
    }

    /// A triangle mesh or a height field: static bodies only, no volume.
    pub fn is_surface(&self) -> bool {
        matches!(self, Shape::Mesh(_) | Shape::HeightField(_))
    }

    /// A shape the narrow phase meets as several parts, each pair of
    /// parts giving its own contacts (a compound's children, a surface's
    /// triangles), merged into up to eight manifolds per body pair.
    pub(crate) fn is_multi(&self) -> bool {
        matches!(
            self,
            Shape::Compound(_) | Shape::Mesh(_) | Shape::HeightField(_)
        )
    }

    /// The compound behind a [`Shape::Compound`] (none for other shapes,
    /// or an id `store` did not issue).
    pub(crate) fn compound<'a>(
        &self,
        store: &'a ShapeStore,
    ) -> Option<&'a crate::compound::CompoundShape> {
        match *self {
            Shape::Compound(id) => store.compound(id),
            _ => None,
        }
    }

    /// The hull behind a [`Shape::Hull`] (none for other shapes, or an id
    /// `store` did not issue).
    pub(crate) fn hull<'a>(&self, store: &'a ShapeStore) -> Option<&'a HullShape> {
        match *self {
            Shape::Hull(id) => store.hulls.get(id),
            _ => None,
        }
    }

    /// A surface's or a compound's local box `(min, max)` (none for
    /// convex solids).
    fn surface_bounds(&self, store: &ShapeStore) -> Option<(Vec3, Vec3)> {
        match *self {
            Shape::Compound(id) => store.compound(id).map(|c| c.bounds()),
            Shape::Mesh(id) => store.mesh(id).map(|m| m.bounds()),
            Shape::HeightField(id) => store.heightfield(id).map(|h| h.bounds()),
            _ => None,
        }
    }

    pub(crate) fn kind(&self) -> ShapeKind {
        match self {
            Shape::Sphere { .. } => ShapeKind::Sphere,
            Shape::Capsule { .. } => ShapeKind::Capsule,
            Shape::Box { .. } => ShapeKind::Box,
            Shape::Hull(_) => ShapeKind::Hull,
            Shape::Compound(_) => ShapeKind::Compound,
            Shape::Mesh(_) => ShapeKind::Mesh,
            Shape::HeightField(_) => ShapeKind::HeightField,
        }
    }

    /// Volume (m³); a hull's is looked up in `store` (0 if it is not
    /// there); a surface has none.
    pub fn volume(&self, store: &ShapeStore) -> f32 {
        match *self {
            Shape::Sphere { radius: r } => 4.0 / 3.0 * PI * r * r * r,
            Shape::Box { half_extents: h } => 8.0 * h.x * h.y * h.z,
            Shape::Capsule {
                half_height,
                radius: r,
            } => PI * r * r * (2.0 * half_height) + 4.0 / 3.0 * PI * r * r * r,
            Shape::Hull(id) => store.hulls.get(id).map_or(0.0, |h| h.volume),
            Shape::Compound(id) => store.compound(id).map_or(0.0, |c| c.volume),
            Shape::Mesh(_) | Shape::HeightField(_) => 0.0,
        }
    }

    /// Principal moments of inertia for unit density, about the centre of mass.
    fn unit_density_inertia(&self, store: &ShapeStore) -> Vec3 {
        match *self {
            Shape::Sphere { radius: r } => Vec3::splat(0.4 * self.volume(store) * r * r),
            Shape::Box { half_extents: h } => {
                let m = self.volume(store);
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
            Shape::Hull(id) => store.hulls.get(id).map_or(Vec3::ZERO, |h| h.unit_inertia),
            Shape::Compound(id) => store.compound(id).map_or(Vec3::ZERO, |c| c.unit_inertia),
            Shape::Mesh(_) | Shape::HeightField(_) => Vec3::ZERO,
        }
    }

    /// `(mass, principal inertia)` for a uniform density (kg/m³).
    pub fn mass_properties(&self, density: f32, store: &ShapeStore) -> (f32, Vec3) {
        (
            self.volume(store) * density,
            self.unit_density_inertia(store) * density,
        )
    }

    /// Principal inertia scaled so the shape has the given mass.
    pub fn inertia_for_mass(&self, mass: f32, store: &ShapeStore) -> Vec3 {
        self.unit_density_inertia(store) * (mass / self.volume(store))
    }

    /// Half extents of the smallest local box about the origin that holds
    /// the shape.
    pub fn local_half_extents(&self, store: &ShapeStore) -> Vec3 {
        match *self {
            Shape::Sphere { radius } => Vec3::splat(radius),
            Shape::Box { half_extents } => half_extents,
            Shape::Capsule {
                half_height,
                radius,
            } => Vec3::new(radius, half_height + radius, radius),
            Shape::Hull(id) => store
                .hulls
                .get(id)
                .map_or(Vec3::ZERO, |h| h.local_max.max(-h.local_min)),
            Shape::Compound(_) | Shape::Mesh(_) | Shape::HeightField(_) => self
                .surface_bounds(store)
                .map_or(Vec3::ZERO, |(lo, hi)| hi.max(-lo)),
        }
    }

    /// Distance (m) from the centre to the farthest point of the shape: the
    /// radius of the smallest sphere about the centre that holds it.
    pub(crate) fn bounding_radius(&self, store: &ShapeStore) -> f32 {
        match *self {
            Shape::Sphere { radius } => radius,
            Shape::Box { half_extents } => half_extents.length(),
            Shape::Capsule {
                half_height,
                radius,
            } => half_height + radius,
            Shape::Hull(id) => store.hulls.get(id).map_or(0.0, |h| h.bounding_radius),
            Shape::Compound(id) => store.compound(id).map_or(0.0, |c| c.bounding_radius),
            Shape::Mesh(id) => store.mesh(id).map_or(0.0, |m| m.bounding_radius),
            Shape::HeightField(id) => store.heightfield(id).map_or(0.0, |h| h.bounding_radius),
        }
    }

    /// The radius of the largest sphere about the centre of mass that the
    /// shape contains (Jolt's `GetInnerRadius`): how far the body may move
    /// in a step before a discrete step could miss a wall (m). A hull's is
    /// its nearest face's distance from the centre of mass.
    pub(crate) fn inner_radius(&self, store: &ShapeStore) -> f32 {
        match *self {
            Shape::Sphere { radius } | Shape::Capsule { radius, .. } => radius,
            Shape::Box { half_extents } => half_extents.min_element(),
            Shape::Hull(id) => store.hulls.get(id).map_or(0.0, |h| {
                h.face_offset.iter().copied().fold(f32::INFINITY, f32::min)
            }),
            Shape::Compound(id) => store.compound(id).map_or(0.0, |c| c.inner_radius),
            Shape::Mesh(_) | Shape::HeightField(_) => 0.0,
        }
    }

    /// World-space bounding box `(min, max)` at a position and rotation. A
    /// hull's (or a surface's) is its local box turned (as Jolt's hull
    /// bounds are): exact for boxes, a little loose for a turned rounded
    /// hull.
    pub fn world_aabb(&self, pos: Vec3, rot: Quat, store: &ShapeStore) -> (Vec3, Vec3) {
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
            Shape::Compound(id) => {
                return store
                    .compound(id)
                    .map_or((pos, pos), |c| c.world_aabb(pos, rot, store));
            }
            Shape::Hull(_) | Shape::Mesh(_) | Shape::HeightField(_) => {
                let local = match *self {
                    Shape::Hull(id) => store.hulls.get(id).map(|h| (h.local_min, h.local_max)),
                    _ => self.surface_bounds(store),
                };
                let Some((lo, hi)) = local else {
                    return (pos, pos);
                };
                let c = pos + rotate(rot, (hi + lo) * 0.5);
                let e = turned((hi - lo) * 0.5);
                return (c - e, c + e);
            }
        };
        (pos - ext, pos + ext)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape_store::NO_SHAPES;

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
            .mass_properties(1000.0, &NO_SHAPES);
        assert!((m - 1000.0).abs() < 1e-3);
        // m s² / 6 for a cube of side s = 1
        assert!((i - Vec3::splat(1000.0 / 6.0)).abs().max_element() < 1e-2);
    }

    #[test]
    fn capsule_tends_to_sphere_and_rod() {
        // very short capsule ≈ sphere
        let c = Shape::capsule(1e-4, 1.0)
            .unwrap()
            .unit_density_inertia(&NO_SHAPES);
        let s = Shape::sphere(1.0).unwrap().unit_density_inertia(&NO_SHAPES);
        assert!((c - s).abs().max_element() / s.x < 1e-3);
        // very thin capsule ≈ rod: I = m L² / 12
        let cap = Shape::capsule(1.0, 1e-3).unwrap();
        let i = cap.unit_density_inertia(&NO_SHAPES);
        let rod = cap.volume(&NO_SHAPES) * 4.0 / 12.0;
        assert!((i.x - rod).abs() / rod < 1e-2);
    }

    #[test]
    fn rotated_box_aabb() {
        let s = Shape::cuboid(Vec3::new(1.0, 0.5, 0.5)).unwrap();
        let (lo, hi) = s.world_aabb(
            Vec3::ZERO,
            Quat::from_rotation_z(core::f32::consts::FRAC_PI_2),
            &NO_SHAPES,
        );
        assert!((hi - Vec3::new(0.5, 1.0, 0.5)).abs().max_element() < 1e-5);
        assert!((lo + hi).abs().max_element() < 1e-6);
    }
}
