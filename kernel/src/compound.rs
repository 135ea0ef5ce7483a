//! `CompoundShape`: one rigid body made of several convex shapes (a chair
//! of boxes, a car body of hulls, a dumbbell of two spheres and a
//! capsule), each child at its own pose in the body's frame: Jolt's
//! `StaticCompoundShape`, Rapier's `Compound`.
//!
//! Built once from the children as the user places them; the body's frame
//! is then the compound's principal frame (centre of mass at the origin,
//! principal axes on the local axes, as every solid shape of the kernel):
//! the children are moved into it, and [`frame`](CompoundShape::frame)
//! says where it lies in the user's frame. Mass properties are the sum of
//! the children's at one density (the parallel-axis theorem for each
//! child's offset, its inertia turned by its rotation): children that
//! overlap count their common volume twice, as Jolt's and Rapier's do.
//!
//! The children's boxes sit in the same 8-wide tree as a mesh's triangles
//! (`QueryTree::build_boxes`), so a contact or a query visits only the
//! children near it. Collision against a compound is collision against
//! each child it reaches; the narrow phase merges the children's contacts
//! into manifolds by normal, as it does a mesh's triangles
//! (`collide/compound.rs`).

use glam::{DMat3, DVec3};

use crate::hull_shape::{principal_rotation, rot_inertia};
use crate::math::{quat_mul, rotate, Quat, Vec3};
use crate::query::tree::{Bounds, Node, QueryTree, SAH_DEPTH};
use crate::shape::Shape;
use crate::shape_store::ShapeStore;

/// Most children one compound holds (bounds what a snapshot may ask to
/// allocate; a child index fits a contact's and a hit's `sub_shape`).
pub const MAX_COMPOUND_CHILDREN: usize = 1 << 16;

/// Up to this many children a compound's world box is the union of its
/// children's (tight for a turned chair); past it the compound's local box
/// turned (Jolt's `CompoundShape` switches at 10 the same way).
const EXACT_BOUNDS_CHILDREN: usize = 16;

/// One child of a compound: a convex shape (sphere, box, capsule or hull)
/// at a pose in the compound's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompoundChild {
    pub shape: Shape,
    /// Where the child's centre lies in the compound's frame (m).
    pub position: Vec3,
    /// The child's rotation in the compound's frame (unit).
    pub rotation: Quat,
}

impl CompoundChild {
    /// `shape` at `position`, not turned.
    pub fn new(shape: Shape, position: Vec3) -> Self {
        Self {
            shape,
            position,
            rotation: Quat::IDENTITY,
        }
    }

    /// The same child, turned by `rotation` about its centre.
    pub fn rotated(self, rotation: Quat) -> Self {
        Self { rotation, ..self }
    }
}

/// Why a compound cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompoundError {
    /// No children.
    NoChildren,
    /// More than [`MAX_COMPOUND_CHILDREN`].
    TooManyChildren,
    /// Child `index` is not a convex solid (a mesh, a height field or a
    /// compound), has a size out of range, or names a hull the store does
    /// not hold.
    InvalidChild { index: usize },
    /// Child `index`'s position is NaN, infinite or beyond
    /// [`MAX_SHAPE_SIZE`](crate::MAX_SHAPE_SIZE), or its rotation is not
    /// a unit quaternion.
    InvalidPose { index: usize },
}

impl core::fmt::Display for CompoundError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoChildren => f.write_str("a compound needs at least one child"),
            Self::TooManyChildren => f.write_str("the compound has too many children"),
            Self::InvalidChild { index } => {
                write!(f, "compound child {index} is not a valid convex shape")
            }
            Self::InvalidPose { index } => {
                write!(f, "compound child {index} has a bad position or rotation")
            }
        }
    }
}

impl std::error::Error for CompoundError {}

/// A compound in its principal frame; see the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct CompoundShape {
    /// The children in the principal frame.
    pub(crate) children: Vec<CompoundChild>,
    /// The children as given (what a snapshot stores: rebuilding from them
    /// gives this compound bit for bit).
    pub(crate) source: Vec<CompoundChild>,
    /// Tree over the children's local boxes (leaves are `LEAF | child`).
    pub(crate) nodes: Vec<Node>,
    /// Each child's box in the principal frame.
    pub(crate) child_bounds: Vec<(Vec3, Vec3)>,
    pub(crate) volume: f32,
    /// Principal moments for density 1 kg/m³ (m⁵).
    pub(crate) unit_inertia: Vec3,
    pub(crate) local_min: Vec3,
    pub(crate) local_max: Vec3,
    pub(crate) bounding_radius: f32,
    /// The least of the children's inner radii (m): how far the body may
    /// move in a step before a discrete step could miss a wall.
    pub(crate) inner_radius: f32,
    frame_origin: Vec3,
    frame_rotation: Quat,
}

impl CompoundShape {
    /// A compound of `children`, whose hulls are shapes of `store` (the
    /// world's [`shapes`](crate::PhysicsSystem::shapes)).
    pub fn new(children: &[CompoundChild], store: &ShapeStore) -> Result<Self, CompoundError> {
        if children.is_empty() {
            return Err(CompoundError::NoChildren);
        }
        if children.len() > MAX_COMPOUND_CHILDREN {
            return Err(CompoundError::TooManyChildren);
        }
        let mut given = Vec::with_capacity(children.len());
        for (index, c) in children.iter().enumerate() {
            let convex = matches!(
                c.shape,
                Shape::Sphere { .. } | Shape::Box { .. } | Shape::Capsule { .. } | Shape::Hull(_)
            );
            if !convex || c.shape.validate_in(store).is_err() {
                return Err(CompoundError::InvalidChild { index });
            }
            let size = crate::limits::MAX_SHAPE_SIZE;
            let placed = c.position.is_finite() && c.position.abs().max_element() <= size;
            let rotation = crate::body::checked_rotation(c.rotation)
                .map_err(|_| CompoundError::InvalidPose { index })?;
            if !placed {
                return Err(CompoundError::InvalidPose { index });
            }
            given.push(CompoundChild { rotation, ..*c });
        }
        // Mass properties in f64: the sum of the children's about the
        // common centre of mass.
        let mut volume = 0.0f64;
        let mut moment = DVec3::ZERO;
        for c in &given {
            let v = f64::from(c.shape.volume(store));
            volume += v;
            moment += c.position.as_dvec3() * v;
        }
        let com = moment / volume;
        let mut inertia = DMat3::ZERO;
        for c in &given {
            let v = f64::from(c.shape.volume(store));
            let (_, own) = c.shape.mass_properties(1.0, store);
            let r = DMat3::from_quat(c.rotation.as_dquat());
            let turned = r * DMat3::from_diagonal(own.as_dvec3()) * r.transpose();
            let d = c.position.as_dvec3() - com;
            let shift = DMat3::from_diagonal(DVec3::splat(d.length_squared()))
                - DMat3::from_cols(d * d.x, d * d.y, d * d.z);
            inertia += turned + shift * v;
        }
        let rot = principal_rotation(inertia);
        let unit_inertia = rot_inertia(inertia, rot).as_vec3();
        let inv = rot.conjugate();
        let inv_f = inv.as_quat();
        let moved: Vec<CompoundChild> = given
            .iter()
            .map(|c| CompoundChild {
                shape: c.shape,
                position: (inv * (c.position.as_dvec3() - com)).as_vec3(),
                rotation: quat_mul(inv_f, c.rotation).normalize(),
            })
            .collect();
        let child_bounds: Vec<(Vec3, Vec3)> = moved
            .iter()
            .map(|c| c.shape.world_aabb(c.position, c.rotation, store))
            .collect();
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for &(a, b) in &child_bounds {
            lo = lo.min(a);
            hi = hi.max(b);
        }
        let bounding_radius = moved
            .iter()
            .map(|c| c.position.length() + c.shape.bounding_radius(store))
            .fold(0.0, f32::max);
        let inner_radius = moved
            .iter()
            .map(|c| c.shape.inner_radius(store))
            .fold(f32::INFINITY, f32::min);
        let mut tree = QueryTree::new(moved.len());
        let mut leaf_of = vec![0u32; moved.len()];
        let boxes = child_bounds.iter().enumerate().map(|(k, &(a, b))| {
            let b: Bounds = (a.to_array(), b.to_array());
            (k as u32, b)
        });
        tree.build_boxes(boxes, &mut leaf_of, SAH_DEPTH);
        let mut nodes = tree.into_nodes();
        nodes.shrink_to_fit();
        Ok(Self {
            children: moved,
            source: given,
            nodes,
            child_bounds,
            volume: volume as f32,
            unit_inertia,
            local_min: lo,
            local_max: hi,
            bounding_radius,
            inner_radius,
            frame_origin: com.as_vec3(),
            frame_rotation: rot.as_quat(),
        })
    }

    pub fn num_children(&self) -> usize {
        self.children.len()
    }

    /// Child `k` in the principal frame (the body's frame).
    pub fn child(&self, k: usize) -> CompoundChild {
        self.children[k]
    }

    /// The children in the principal frame, in the order given.
    pub fn children(&self) -> &[CompoundChild] {
        &self.children
    }

    /// Volume (m³): the children's summed.
    pub fn volume(&self) -> f32 {
        self.volume
    }

    /// Where the principal frame sits in the frame the children were
    /// given in: `(centre of mass, rotation of the principal axes)`. A
    /// body meant to stand at `(p, q)` in the user's frame goes at
    /// `p + q·origin`, rotated `q·rotation`.
    pub fn frame(&self) -> (Vec3, Quat) {
        (self.frame_origin, self.frame_rotation)
    }

    /// `(min, max)` of the children's boxes (m, principal frame).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        (self.local_min, self.local_max)
    }

    /// Bytes held: the children twice (as moved and as given), their
    /// boxes and the tree.
    pub fn memory_bytes(&self) -> usize {
        self.children.len() * (2 * core::mem::size_of::<CompoundChild>() + 24)
            + self.nodes.len() * core::mem::size_of::<Node>()
    }

    /// Every child whose box overlaps `[lo, hi]` (principal frame), in
    /// tree order (deterministic).
    pub(crate) fn children_in(&self, lo: Vec3, hi: Vec3, f: impl FnMut(u32)) {
        let (lo, hi) = (lo.to_array(), hi.to_array());
        let nodes = &self.nodes;
        crate::query::walk_nodes(nodes, |n| nodes[n].overlap_mask(lo, hi), f);
    }

    /// Child `k` placed in the world with the compound at `pos, rot`.
    pub(crate) fn placed_child(&self, k: u32, pos: Vec3, rot: Quat) -> crate::collide::Placed {
        let c = &self.children[k as usize];
        crate::collide::Placed {
            shape: c.shape,
            pos: pos + rotate(rot, c.position),
            rot: quat_mul(rot, c.rotation).normalize(),
        }
    }

    /// The compound's world box at `pos, rot`: the union of its
    /// children's boxes when it has few, else its local box turned.
    pub(crate) fn world_aabb(&self, pos: Vec3, rot: Quat, store: &ShapeStore) -> (Vec3, Vec3) {
        if self.children.len() <= EXACT_BOUNDS_CHILDREN {
            let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
            for k in 0..self.children.len() as u32 {
                let c = self.placed_child(k, pos, rot);
                let (a, b) = c.shape.world_aabb(c.pos, c.rot, store);
                lo = lo.min(a);
                hi = hi.max(b);
            }
            return (lo, hi);
        }
        let r = crate::math::Mat3::from_quat(rot);
        let turned = crate::math::Mat3::from_cols(r.x_axis.abs(), r.y_axis.abs(), r.z_axis.abs());
        let c = pos + rotate(rot, (self.local_max + self.local_min) * 0.5);
        let e = turned * ((self.local_max - self.local_min) * 0.5);
        (c - e, c + e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape_store::NO_SHAPES;

    fn cuboid(x: f32, y: f32, z: f32) -> Shape {
        Shape::cuboid(Vec3::new(x, y, z)).unwrap()
    }

    /// Two unit cubes side by side are one 2 × 1 × 1 box: the same volume,
    /// centre and inertia (to f32 round-off).
    #[test]
    fn two_cubes_are_one_box() {
        let c = CompoundShape::new(
            &[
                CompoundChild::new(cuboid(0.5, 0.5, 0.5), Vec3::new(3.0, 1.0, 0.0)),
                CompoundChild::new(cuboid(0.5, 0.5, 0.5), Vec3::new(4.0, 1.0, 0.0)),
            ],
            &NO_SHAPES,
        )
        .unwrap();
        let (_, want) = cuboid(1.0, 0.5, 0.5).mass_properties(1.0, &NO_SHAPES);
        assert!((c.volume - 2.0).abs() < 1e-6);
        let (origin, turn) = c.frame();
        assert!((origin - Vec3::new(3.5, 1.0, 0.0)).length() < 1e-6);
        // the principal axes are the box's: the moments match in some order
        let mut got = c.unit_inertia.to_array();
        let mut want = want.to_array();
        got.sort_by(f32::total_cmp);
        want.sort_by(f32::total_cmp);
        for k in 0..3 {
            assert!(
                (got[k] - want[k]).abs() < 1e-5 * want[k],
                "{got:?} {want:?}"
            );
        }
        // the children sit ±0.5 along the long axis of the principal frame
        let along = rotate(turn.conjugate(), Vec3::X);
        for ch in c.children() {
            assert!((ch.position.length() - 0.5).abs() < 1e-6);
            assert!(ch.position.normalize().dot(along).abs() > 1.0 - 1e-6);
        }
        assert!((c.inner_radius - 0.5).abs() < 1e-6);
    }

    /// An L of two boxes: the centre of mass and the off-diagonal product
    /// of inertia worked by hand; the principal moments are the
    /// eigenvalues of that tensor.
    #[test]
    fn an_l_shape_has_the_hand_worked_tensor() {
        // a 2×1×1 box at (0, 0) and a 1×2×1 box at (1.5, 0.5)
        let c = CompoundShape::new(
            &[
                CompoundChild::new(cuboid(1.0, 0.5, 0.5), Vec3::ZERO),
                CompoundChild::new(cuboid(0.5, 1.0, 0.5), Vec3::new(1.5, 0.5, 0.0)),
            ],
            &NO_SHAPES,
        )
        .unwrap();
        let com = Vec3::new(0.75, 0.25, 0.0);
        assert!((c.frame().0 - com).length() < 1e-6);
        // about the centre of mass, each box of volume 2 is 0.75 off in x
        // and 0.25 in y: Ixx = Σ (own + 2·dy²), Iyy = Σ (own + 2·dx²),
        // Ixy = -Σ 2·dx·dy, Izz = Σ (own + 2·(dx² + dy²))
        let own_a = [2.0 / 12.0 * 2.0, 2.0 / 12.0 * 5.0, 2.0 / 12.0 * 5.0];
        let own_b = [2.0 / 12.0 * 5.0, 2.0 / 12.0 * 2.0, 2.0 / 12.0 * 5.0];
        let (dx, dy) = (0.75f64, 0.25f64);
        let ixx = own_a[0] + own_b[0] + 2.0 * 2.0 * dy * dy;
        let iyy = own_a[1] + own_b[1] + 2.0 * 2.0 * dx * dx;
        let izz = own_a[2] + own_b[2] + 2.0 * 2.0 * (dx * dx + dy * dy);
        let ixy = -(2.0 * -dx * -dy + 2.0 * dx * dy);
        // eigenvalues of [[ixx, ixy], [ixy, iyy]]
        let mean = 0.5 * (ixx + iyy);
        let r = (0.25 * (ixx - iyy) * (ixx - iyy) + ixy * ixy).sqrt();
        let mut want = [mean - r, mean + r, izz];
        want.sort_by(f64::total_cmp);
        let mut got = c.unit_inertia.to_array().map(f64::from);
        got.sort_by(f64::total_cmp);
        for k in 0..3 {
            assert!(
                (got[k] - want[k]).abs() < 1e-5 * want[k],
                "{got:?} {want:?}"
            );
        }
        // turned back, each child is where it was given
        let (origin, turn) = c.frame();
        for (moved, given) in c.children().iter().zip(&c.source) {
            let back = origin + rotate(turn, moved.position);
            assert!((back - given.position).length() < 1e-5);
        }
    }

    #[test]
    fn bad_children_are_refused() {
        let ok = CompoundChild::new(cuboid(0.5, 0.5, 0.5), Vec3::ZERO);
        assert_eq!(
            CompoundShape::new(&[], &NO_SHAPES),
            Err(CompoundError::NoChildren)
        );
        let bad_size = CompoundChild::new(Shape::Sphere { radius: -1.0 }, Vec3::ZERO);
        assert_eq!(
            CompoundShape::new(&[ok, bad_size], &NO_SHAPES),
            Err(CompoundError::InvalidChild { index: 1 })
        );
        let unknown_hull = CompoundChild::new(Shape::Hull(crate::HullId(7)), Vec3::ZERO);
        assert_eq!(
            CompoundShape::new(&[unknown_hull], &NO_SHAPES),
            Err(CompoundError::InvalidChild { index: 0 })
        );
        let surface = CompoundChild::new(Shape::Mesh(crate::MeshId(0)), Vec3::ZERO);
        assert_eq!(
            CompoundShape::new(&[ok, surface], &NO_SHAPES),
            Err(CompoundError::InvalidChild { index: 1 })
        );
        let nan = CompoundChild::new(cuboid(0.5, 0.5, 0.5), Vec3::new(f32::NAN, 0.0, 0.0));
        assert_eq!(
            CompoundShape::new(&[ok, nan], &NO_SHAPES),
            Err(CompoundError::InvalidPose { index: 1 })
        );
        let far = CompoundChild::new(cuboid(0.5, 0.5, 0.5), Vec3::splat(1e7));
        assert_eq!(
            CompoundShape::new(&[far], &NO_SHAPES),
            Err(CompoundError::InvalidPose { index: 0 })
        );
        let squashed = ok.rotated(Quat::from_xyzw(0.0, 0.0, 0.0, 2.0));
        assert_eq!(
            CompoundShape::new(&[squashed], &NO_SHAPES),
            Err(CompoundError::InvalidPose { index: 0 })
        );
    }

    /// Children near a box are found through the tree, and only they.
    #[test]
    fn the_tree_finds_the_children_under_a_box() {
        let kids: Vec<CompoundChild> = (0..40)
            .map(|k| CompoundChild::new(Shape::sphere(0.4).unwrap(), Vec3::new(k as f32, 0.0, 0.0)))
            .collect();
        let c = CompoundShape::new(&kids, &NO_SHAPES).unwrap();
        let centre = c.frame().0;
        let mut found = Vec::new();
        // around given x = 10..=12
        let lo = Vec3::new(9.7, -1.0, -1.0) - centre;
        let hi = Vec3::new(12.3, 1.0, 1.0) - centre;
        // the principal frame of a row along x may turn the row; test in it
        let turn = c.frame().1.conjugate();
        let (lo, hi) = (rotate(turn, lo), rotate(turn, hi));
        c.children_in(lo.min(hi), lo.max(hi), |k| found.push(k));
        found.sort_unstable();
        assert_eq!(found, vec![10, 11, 12]);
    }
}
