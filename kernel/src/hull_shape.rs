//! A convex hull as a collision shape, stored once per world and shared by
//! handle.
//!
//! [`PhysicsSystem::add_hull`](crate::PhysicsSystem::add_hull) takes a [`ConvexHull`]
//! (any frame, any centre), moves it into its *principal frame* (centre
//! of mass at the origin, principal axes of inertia on the local axes, as
//! every [`Shape`](crate::Shape) is) and keeps it in the world's
//! [`HullStore`]; a body refers to it by [`HullId`] through
//! [`Shape::Hull`](crate::Shape::Hull), so a shape stays a small `Copy`
//! value however many vertices the hull has (bepu's `Shapes` collection
//! and `TypedIndex`). [`HullShape::frame`] tells where the input points
//! went: a body placed at `(position, rotation)` puts input point `p` at
//! `position + rotation · frame_rotation⁻¹ · (p - centre_of_mass)`.
//!
//! Besides the faces, the store keeps each undirected edge once with the
//! two faces beside it: the separating-axis test of hull pairs walks edge
//! pairs and prunes them on the Gauss map with those two normals
//! (`collide::hull`).

use std::collections::BTreeMap;

use glam::{DMat3, DQuat, DVec3};

use crate::hull::ConvexHull;
use crate::math::{Quat, Vec3};

/// A hull in a world's [`HullStore`]: the index of the hull there. A
/// `HullId` means something only in the world that issued it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HullId(pub(crate) u32);

impl HullId {
    /// The index in the world's hull store (stable for the world's life:
    /// hulls are never removed, so ids are never reused).
    pub fn index(self) -> u32 {
        self.0
    }
}

/// Below this share of the largest principal moment an off-diagonal
/// inertia term is round-off: the axes are kept (a cube's hull then stays
/// axis-aligned instead of turning by whatever angle round-off picks).
const PRINCIPAL_TOLERANCE: f64 = 1e-9;

/// Jacobi sweeps to diagonalise the inertia (each sweep squares the
/// off-diagonal error; 3×3 converges in 4–6).
const JACOBI_SWEEPS: usize = 32;

/// A convex hull in its principal frame, ready for collision.
#[derive(Debug, Clone, PartialEq)]
pub struct HullShape {
    pub(crate) vertices: Vec<Vec3>,
    pub(crate) face_normal: Vec<Vec3>,
    /// `normal · p` for the points `p` of each face's plane (m).
    pub(crate) face_offset: Vec<f32>,
    /// Face `f`'s vertex loop (counter-clockwise seen from outside) is
    /// `face_vertex[face_first[f]..face_first[f + 1]]`.
    pub(crate) face_first: Vec<u32>,
    pub(crate) face_vertex: Vec<u32>,
    /// Each undirected edge once: its two vertices...
    pub(crate) edge_vertex: Vec<[u32; 2]>,
    /// ...and the faces on its two sides.
    pub(crate) edge_face: Vec<[u32; 2]>,
    /// m³.
    pub(crate) volume: f32,
    /// Principal moments for density 1 kg/m³ (m⁵).
    pub(crate) unit_inertia: Vec3,
    pub(crate) local_min: Vec3,
    pub(crate) local_max: Vec3,
    /// Farthest vertex from the centre of mass (m).
    pub(crate) bounding_radius: f32,
    pub(crate) frame_origin: Vec3,
    pub(crate) frame_rotation: Quat,
}

impl HullShape {
    /// The hull moved into its principal frame.
    pub fn new(hull: &ConvexHull) -> Self {
        let mass = hull.mass_properties();
        let com = mass.center_of_mass.as_dvec3();
        let rot = principal_rotation(mass.inertia.as_dmat3());
        let inv = rot.conjugate();
        let to_local = |p: Vec3| (inv * (p.as_dvec3() - com)).as_vec3();
        let vertices: Vec<Vec3> = hull.vertices().iter().map(|&p| to_local(p)).collect();
        let (mut face_normal, mut face_offset) = (Vec::new(), Vec::new());
        let (mut face_first, mut face_vertex) = (vec![0u32], Vec::new());
        // edge (low, high) -> [face where it runs low->high, face where high->low]
        let mut edges: BTreeMap<(u32, u32), [u32; 2]> = BTreeMap::new();
        for (f, face) in hull.faces().iter().enumerate() {
            let n = (inv * face.normal.as_dvec3()).normalize();
            let loop_ = &face.vertices;
            // the plane through the face's own (moved) vertices: the mean
            // offset keeps the face centred on them after round-off
            let off = loop_
                .iter()
                .map(|&v| n.dot(vertices[v as usize].as_dvec3()))
                .sum::<f64>()
                / loop_.len() as f64;
            face_normal.push(n.as_vec3());
            face_offset.push(off as f32);
            face_vertex.extend_from_slice(loop_);
            face_first.push(face_vertex.len() as u32);
            for k in 0..loop_.len() {
                let (a, b) = (loop_[k], loop_[(k + 1) % loop_.len()]);
                let e = edges.entry((a.min(b), a.max(b))).or_insert([u32::MAX; 2]);
                e[usize::from(a > b)] = f as u32;
            }
        }
        let (edge_vertex, edge_face): (Vec<[u32; 2]>, Vec<[u32; 2]>) =
            edges.into_iter().map(|((a, b), f)| ([a, b], f)).unzip();
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for &v in &vertices {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let bounding_radius = vertices.iter().map(|v| v.length()).fold(0.0, f32::max);
        let i = rot_inertia(mass.inertia.as_dmat3(), rot);
        Self {
            vertices,
            face_normal,
            face_offset,
            face_first,
            face_vertex,
            edge_vertex,
            edge_face,
            volume: mass.volume,
            unit_inertia: i.as_vec3(),
            local_min: lo,
            local_max: hi,
            bounding_radius,
            frame_origin: com.as_vec3(),
            frame_rotation: rot.as_quat(),
        }
    }

    /// Vertices in the principal frame (m).
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    pub fn num_faces(&self) -> usize {
        self.face_normal.len()
    }

    /// Face `f`: its vertex loop (indices into [`vertices`](Self::vertices),
    /// counter-clockwise from outside) and outward unit normal.
    pub fn face(&self, f: usize) -> (&[u32], Vec3) {
        (self.face_loop(f), self.face_normal[f])
    }

    pub(crate) fn face_loop(&self, f: usize) -> &[u32] {
        &self.face_vertex[self.face_first[f] as usize..self.face_first[f + 1] as usize]
    }

    /// Volume (m³).
    pub fn volume(&self) -> f32 {
        self.volume
    }

    /// Where the principal frame sits in the frame of the points the hull
    /// was built from: `(centre of mass, rotation of the principal axes)`.
    pub fn frame(&self) -> (Vec3, Quat) {
        (self.frame_origin, self.frame_rotation)
    }
}

/// The rotation whose columns are the principal axes of `inertia`
/// (cyclic Jacobi), right-handed; identity when already diagonal.
pub(crate) fn principal_rotation(inertia: DMat3) -> DQuat {
    let mut a = inertia.to_cols_array_2d();
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let scale = (0..3).map(|k| a[k][k].abs()).fold(0.0, f64::max);
    for _ in 0..JACOBI_SWEEPS {
        let off = a[0][1].abs() + a[0][2].abs() + a[1][2].abs();
        if off <= PRINCIPAL_TOLERANCE * scale {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q].abs() <= PRINCIPAL_TOLERANCE * scale * 1e-3 {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            // A' = Jᵀ A J with J the rotation in the (p, q) plane
            for col in a.iter_mut() {
                let (akp, akq) = (col[p], col[q]);
                col[p] = c * akp - s * akq;
                col[q] = s * akp + c * akq;
            }
            let (ap, aq) = (a[p], a[q]);
            a[p] = core::array::from_fn(|k| c * ap[k] - s * aq[k]);
            a[q] = core::array::from_fn(|k| s * ap[k] + c * aq[k]);
            for row in v.iter_mut() {
                let (vp, vq) = (row[p], row[q]);
                row[p] = c * vp - s * vq;
                row[q] = s * vp + c * vq;
            }
        }
    }
    // v holds the eigenvectors as columns (row-major rows here)
    let col = |k: usize| DVec3::new(v[0][k], v[1][k], v[2][k]);
    let (x, y) = (col(0), col(1));
    let z = x.cross(y); // right-handed whatever Jacobi's signs
    DQuat::from_mat3(&DMat3::from_cols(x, y, z)).normalize()
}

/// The diagonal of `inertia` seen in the frame turned by `rot`.
pub(crate) fn rot_inertia(inertia: DMat3, rot: DQuat) -> DVec3 {
    let r = DMat3::from_quat(rot);
    let d = r.transpose() * inertia * r;
    DVec3::new(d.x_axis.x, d.y_axis.y, d.z_axis.z)
}

/// Every hull of a world, by [`HullId`]. Append-only: a hull stays as long
/// as the world (bodies hold its id), so an id is never stale.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HullStore {
    hulls: Vec<HullShape>,
}

/// Most hulls one world holds (ids are `u32`; far beyond any level's
/// prop set, it bounds what a snapshot may ask to allocate).
pub const MAX_HULLS: usize = 1 << 20;

impl HullStore {
    pub const fn new() -> Self {
        Self { hulls: Vec::new() }
    }

    /// The hull `id`, if this store issued it.
    pub fn get(&self, id: HullId) -> Option<&HullShape> {
        self.hulls.get(id.0 as usize)
    }

    pub fn len(&self) -> usize {
        self.hulls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hulls.is_empty()
    }

    /// Adds a hull; `None` when the store holds [`MAX_HULLS`].
    pub(crate) fn push(&mut self, h: HullShape) -> Option<HullId> {
        if self.hulls.len() >= MAX_HULLS {
            return None;
        }
        self.hulls.push(h);
        Some(HullId(self.hulls.len() as u32 - 1))
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &HullShape> {
        self.hulls.iter()
    }

    pub(crate) fn from_hulls(hulls: Vec<HullShape>) -> Self {
        Self { hulls }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube(h: Vec3, at: Vec3) -> ConvexHull {
        let mut v = Vec::new();
        for k in 0..8 {
            let s = Vec3::new(
                if k & 1 == 0 { -1.0 } else { 1.0 },
                if k & 2 == 0 { -1.0 } else { 1.0 },
                if k & 4 == 0 { -1.0 } else { 1.0 },
            );
            v.push(s * h + at);
        }
        ConvexHull::from_points(&v).unwrap()
    }

    #[test]
    fn a_box_hull_keeps_its_axes_and_is_centred() {
        let h = HullShape::new(&cube(Vec3::new(1.0, 2.0, 3.0), Vec3::new(5.0, 1.0, -2.0)));
        let (o, r) = h.frame();
        println!(
            "frame {o:?} {r:?}, min {:?} max {:?}",
            h.local_min, h.local_max
        );
        assert!((o - Vec3::new(5.0, 1.0, -2.0)).length() < 1e-5);
        assert!(r.angle_between(Quat::IDENTITY) < 1e-6);
        assert!((h.local_max - Vec3::new(1.0, 2.0, 3.0)).length() < 1e-5);
        assert!((h.local_min + Vec3::new(1.0, 2.0, 3.0)).length() < 1e-5);
        assert_eq!(h.num_faces(), 6);
        assert_eq!(h.edge_vertex.len(), 12);
        // every edge has a face on each side
        assert!(h
            .edge_face
            .iter()
            .all(|f| f[0] < 6 && f[1] < 6 && f[0] != f[1]));
    }

    #[test]
    fn a_turned_box_hull_finds_its_principal_axes() {
        // a 1 × 2 × 4 box turned 30° about z: the principal frame turns back
        let q = Quat::from_rotation_z(core::f32::consts::FRAC_PI_6);
        let he = Vec3::new(0.5, 1.0, 2.0);
        let mut v = Vec::new();
        for k in 0..8 {
            let s = Vec3::new(
                if k & 1 == 0 { -1.0 } else { 1.0 },
                if k & 2 == 0 { -1.0 } else { 1.0 },
                if k & 4 == 0 { -1.0 } else { 1.0 },
            );
            v.push(q * (s * he));
        }
        let h = HullShape::new(&ConvexHull::from_points(&v).unwrap());
        let m = 8.0 * he.x * he.y * he.z;
        let want = Vec3::new(
            m / 3.0 * (he.y * he.y + he.z * he.z),
            m / 3.0 * (he.x * he.x + he.z * he.z),
            m / 3.0 * (he.x * he.x + he.y * he.y),
        );
        let mut got = h.unit_inertia.to_array();
        let mut w = want.to_array();
        got.sort_by(f32::total_cmp);
        w.sort_by(f32::total_cmp);
        println!("principal moments {got:?}, want {w:?}");
        for k in 0..3 {
            assert!((got[k] - w[k]).abs() / w[k] < 1e-5);
        }
        // the local box is axis-aligned: extents are the half extents in
        // some order
        let mut ext = h.local_max.to_array();
        ext.sort_by(f32::total_cmp);
        assert!(
            (ext[0] - 0.5).abs() < 1e-4 && (ext[2] - 2.0).abs() < 1e-4,
            "{ext:?}"
        );
    }
}
