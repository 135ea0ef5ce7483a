//! `TriangleMesh`: a static triangle mesh (a level, a building, a ramp)
//! as a collision shape.
//!
//! Built once from vertices and indexed triangles
//! ([`TriangleMesh::new`]), then handed to a world
//! ([`PhysicsSystem::add_mesh`](crate::PhysicsSystem::add_mesh)), which
//! keeps it in its [`ShapeStore`](crate::ShapeStore); bodies refer to it
//! by [`MeshId`] through [`Shape::Mesh`](crate::Shape::Mesh). Meshes are
//! surfaces, not solids, and are static only.
//!
//! What the build does:
//! - validates: a vertex that is NaN, infinite or beyond
//!   [`MAX_SHAPE_SIZE`](crate::MAX_SHAPE_SIZE), or an index past the
//!   vertices, is a typed [`MeshError`]; a degenerate triangle (two equal
//!   indices, or a sliver whose height is under a millionth of its
//!   longest edge) is dropped and counted
//!   ([`dropped_triangles`](TriangleMesh::dropped_triangles));
//! - finds each triangle's *active edges* (Jolt's `ActiveEdges`): an edge
//!   shared with a neighbour that continues the surface within
//!   [`ACTIVE_EDGE_COS`] (5°), or that folds it concave, is inactive: a
//!   body sliding over it feels the triangle's face, not the edge
//!   (otherwise a box crossing the seam of two coplanar triangles
//!   catches on it). Neighbours are found by vertex position, so a mesh
//!   whose triangles each carry their own copies of the vertices (an
//!   unindexed export) is joined as well as an indexed one;
//! - builds an 8-wide bounding volume hierarchy over the triangles, the
//!   query trees' node layout and surface-area build (`query/tree.rs`):
//!   one `f32x8` compare tests a box or a ray against eight children.
//!
//! Triangles are one-sided: the front is where `(v1 - v0) × (v2 - v0)`
//! points (counter-clockwise seen from the front). A body whose centre is
//! behind a triangle's plane does not collide with that triangle (Jolt's
//! back-face rule), and rays hit front faces only.

use crate::math::Vec3;
use crate::query::tree::{Bounds, Node, QueryTree, SAH_DEPTH};

/// Most triangles one mesh holds (the tree's leaf ids are 31 bits and its
/// depth bound is proved up to this many items).
pub const MAX_MESH_TRIANGLES: usize = 1 << 23;

/// Two triangles meeting at an edge within this cosine of each other's
/// plane (5°, Jolt's `mActiveEdgeCosThresholdAngle`) make it inactive.
pub const ACTIVE_EDGE_COS: f32 = 0.996_194_7;

/// A triangle whose height is at most this share of its longest edge is
/// degenerate (its normal would be noise): ~0.00006°.
const SLIVER: f64 = 1e-6;
/// ...or at most this height (m), whatever its size.
const MIN_HEIGHT: f64 = 1e-7;

/// Why a mesh cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeshError {
    /// Vertex `index` is NaN, infinite or beyond
    /// [`MAX_SHAPE_SIZE`](crate::MAX_SHAPE_SIZE).
    InvalidVertex { index: usize },
    /// Triangle `index` names a vertex past the end.
    IndexOutOfRange { index: usize },
    /// No triangle is left once the degenerate ones are dropped.
    NoTriangles,
    /// More than [`MAX_MESH_TRIANGLES`].
    TooManyTriangles,
}

impl core::fmt::Display for MeshError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::InvalidVertex { index } => {
                write!(f, "mesh vertex {index} is NaN, infinite or too large")
            }
            Self::IndexOutOfRange { index } => {
                write!(f, "mesh triangle {index} names a vertex past the end")
            }
            Self::NoTriangles => f.write_str("the mesh has no non-degenerate triangle"),
            Self::TooManyTriangles => f.write_str("the mesh has too many triangles"),
        }
    }
}

impl std::error::Error for MeshError {}

/// One triangle as the colliders see it: corners (counter-clockwise from
/// the front), unit normal, and which edges are active (bit 0: `v0–v1`,
/// bit 1: `v1–v2`, bit 2: `v2–v0`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Triangle {
    pub v: [Vec3; 3],
    pub normal: Vec3,
    pub active: u8,
}

#[cfg(test)]
impl Triangle {
    /// The box around the corners.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        let [a, b, c] = self.v;
        (a.min(b).min(c), a.max(b).max(c))
    }
}

/// A static triangle mesh in its own frame (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct TriangleMesh {
    pub(crate) vertices: Vec<Vec3>,
    pub(crate) triangles: Vec<[u32; 3]>,
    pub(crate) normals: Vec<Vec3>,
    /// Active-edge bits per triangle (see [`Triangle::active`]).
    pub(crate) active: Vec<u8>,
    /// The index each kept triangle had in the input.
    pub(crate) source: Vec<u32>,
    /// The triangle tree (leaves are `LEAF | triangle`).
    pub(crate) nodes: Vec<Node>,
    pub(crate) local_min: Vec3,
    pub(crate) local_max: Vec3,
    /// Farthest vertex from the origin (m).
    pub(crate) bounding_radius: f32,
    pub(crate) dropped: u32,
}

/// Whether the edge between two triangles is active (Jolt's
/// `ActiveEdges::IsEdgeActive`): `n1` is the normal of the triangle whose
/// winding runs along `edge`, `n2` its neighbour's. Back to back
/// (folded 180°): active. Concave: inactive (a body in the fold touches
/// both faces). Convex: active when the fold is sharper than
/// [`ACTIVE_EDGE_COS`].
pub(crate) fn is_edge_active(n1: Vec3, n2: Vec3, edge: Vec3) -> bool {
    let cos = n1.dot(n2);
    if cos < -0.999_848 {
        return true; // cos 179°
    }
    if n1.cross(n2).dot(edge) < 0.0 {
        return false;
    }
    cos < ACTIVE_EDGE_COS
}

/// `(unit normal, kept)` of a triangle, in `f64` (a thin triangle's cross
/// product loses most of its digits in `f32`).
fn normal_of(a: Vec3, b: Vec3, c: Vec3) -> Option<Vec3> {
    let (a, b, c) = (a.as_dvec3(), b.as_dvec3(), c.as_dvec3());
    let cross = (b - a).cross(c - a);
    let longest = (b - a).length().max((c - b).length()).max((a - c).length());
    let height = cross.length() / longest.max(f64::MIN_POSITIVE);
    if !(height > MIN_HEIGHT && height > SLIVER * longest) {
        return None;
    }
    Some((cross / cross.length()).as_vec3())
}

impl TriangleMesh {
    /// A mesh of `triangles` (vertex indices, counter-clockwise seen from
    /// the front) over `vertices` (m, in the mesh's frame). See the module
    /// docs for what is checked and dropped.
    pub fn new(vertices: &[Vec3], triangles: &[[u32; 3]]) -> Result<Self, MeshError> {
        let limit = crate::limits::MAX_SHAPE_SIZE;
        if let Some(index) = vertices
            .iter()
            .position(|v| !(v.is_finite() && v.abs().max_element() <= limit))
        {
            return Err(MeshError::InvalidVertex { index });
        }
        if let Some(index) = triangles
            .iter()
            .position(|t| t.iter().any(|&i| i as usize >= vertices.len()))
        {
            return Err(MeshError::IndexOutOfRange { index });
        }
        if triangles.len() > MAX_MESH_TRIANGLES {
            return Err(MeshError::TooManyTriangles);
        }
        let mut kept = Vec::with_capacity(triangles.len());
        let mut normals = Vec::with_capacity(triangles.len());
        let mut source = Vec::with_capacity(triangles.len());
        for (k, t) in triangles.iter().enumerate() {
            let [a, b, c] = t.map(|i| vertices[i as usize]);
            let distinct = t[0] != t[1] && t[1] != t[2] && t[2] != t[0];
            if let Some(n) = normal_of(a, b, c).filter(|_| distinct) {
                kept.push(*t);
                normals.push(n);
                source.push(k as u32);
            }
        }
        if kept.is_empty() {
            return Err(MeshError::NoTriangles);
        }
        let active = active_edges(vertices, &kept, &normals);
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        let mut radius = 0.0f32;
        for t in &kept {
            for &i in t {
                let v = vertices[i as usize];
                lo = lo.min(v);
                hi = hi.max(v);
                radius = radius.max(v.length());
            }
        }
        let mut tree = QueryTree::new(kept.len());
        let mut leaf_of = vec![0u32; kept.len()];
        let boxes = kept.iter().enumerate().map(|(k, t)| {
            let [a, b, c] = t.map(|i| vertices[i as usize]);
            let b: Bounds = (a.min(b).min(c).to_array(), a.max(b).max(c).to_array());
            (k as u32, b)
        });
        tree.build_boxes(boxes, &mut leaf_of, SAH_DEPTH);
        let mut nodes = tree.into_nodes();
        nodes.shrink_to_fit();
        Ok(Self {
            vertices: vertices.to_vec(),
            dropped: (triangles.len() - kept.len()) as u32,
            triangles: kept,
            normals,
            active,
            source,
            nodes,
            local_min: lo,
            local_max: hi,
            bounding_radius: radius,
        })
    }

    /// Triangles kept (the degenerate ones dropped).
    pub fn num_triangles(&self) -> usize {
        self.triangles.len()
    }

    /// Triangles of the input dropped as degenerate.
    pub fn dropped_triangles(&self) -> usize {
        self.dropped as usize
    }

    /// Kept triangle `k`: its corners (m, mesh frame) and unit normal.
    pub fn triangle(&self, k: usize) -> ([Vec3; 3], Vec3) {
        let t = self.tri(k as u32);
        (t.v, t.normal)
    }

    /// The index kept triangle `k` had in the input to [`new`](Self::new)
    /// (what a ray hit's `sub_shape` names is the kept index).
    pub fn source_index(&self, k: usize) -> usize {
        self.source[k] as usize
    }

    /// Whether each edge of kept triangle `k` is active (bits as
    /// `v0–v1`, `v1–v2`, `v2–v0`).
    pub fn active_edges(&self, k: usize) -> u8 {
        self.active[k]
    }

    /// `(min, max)` of the triangles' corners (m, mesh frame).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        (self.local_min, self.local_max)
    }

    /// Bytes held: vertices, triangles, normals, edge flags and tree.
    pub fn memory_bytes(&self) -> usize {
        self.vertices.len() * 12
            + self.triangles.len() * (12 + 12 + 1 + 4)
            + self.nodes.len() * std::mem::size_of::<Node>()
    }

    pub(crate) fn tri(&self, k: u32) -> Triangle {
        let k = k as usize;
        Triangle {
            v: self.triangles[k].map(|i| self.vertices[i as usize]),
            normal: self.normals[k],
            active: self.active[k],
        }
    }

    /// Every triangle whose box overlaps `[lo, hi]` (mesh frame), in tree
    /// order (deterministic).
    pub(crate) fn triangles_in(&self, lo: Vec3, hi: Vec3, f: impl FnMut(u32)) {
        let (lo, hi) = (lo.to_array(), hi.to_array());
        let nodes = &self.nodes;
        crate::query::walk_nodes(nodes, |n| nodes[n].overlap_mask(lo, hi), f);
    }

    /// The first front face the ray `o + t·d` (`d` unit, mesh frame, `t`
    /// in `[0, max]`) meets: `(t, normal, triangle)`; ties to the lower
    /// triangle.
    pub(crate) fn cast_ray(&self, o: Vec3, d: Vec3, max: f32) -> Option<(f32, Vec3, u32)> {
        crate::query::cast_ray_nodes(&self.nodes, o, d, max, |k, _| {
            ray_triangle(o, d, &self.tri(k)).map(|t| (t, self.normals[k as usize]))
        })
    }
}

/// Where the ray `o + t·d` (`t >= 0`) enters the front of `tri`
/// (Möller–Trumbore); back faces and parallel rays miss.
pub(crate) fn ray_triangle(o: Vec3, d: Vec3, tri: &Triangle) -> Option<f32> {
    let [a, b, c] = tri.v;
    if d.dot(tri.normal) >= 0.0 {
        return None; // from behind, or along the plane
    }
    let (e1, e2) = (b - a, c - a);
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det == 0.0 {
        return None;
    }
    let inv = 1.0 / det;
    let s = o - a;
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = d.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv;
    (t >= 0.0).then_some(t)
}

/// Active-edge bits of every triangle: edges are matched by the
/// positions of their ends (bit-equal), so welded and unwelded meshes
/// give the same flags. An edge with one triangle, or more than two, is
/// active.
fn active_edges(vertices: &[Vec3], tris: &[[u32; 3]], normals: &[Vec3]) -> Vec<u8> {
    // canonical vertex id: the lowest index with the same position
    let mut order: Vec<u32> = (0..vertices.len() as u32).collect();
    let key = |i: u32| {
        let v = vertices[i as usize];
        (v.x.to_bits(), v.y.to_bits(), v.z.to_bits())
    };
    order.sort_unstable_by_key(|&i| (key(i), i));
    let mut canon = vec![0u32; vertices.len()];
    let mut k = 0;
    while k < order.len() {
        let first = order[k];
        let mut j = k;
        while j < order.len() && key(order[j]) == key(first) {
            canon[order[j] as usize] = first;
            j += 1;
        }
        k = j;
    }
    // (low end, high end, triangle, edge) for every edge, grouped by ends
    let mut edges: Vec<(u32, u32, u32, u8)> = Vec::with_capacity(3 * tris.len());
    for (t, tri) in tris.iter().enumerate() {
        for e in 0..3u8 {
            let (i, j) = (
                canon[tri[e as usize] as usize],
                canon[tri[(e as usize + 1) % 3] as usize],
            );
            edges.push((i.min(j), i.max(j), t as u32, e));
        }
    }
    edges.sort_unstable();
    let mut active = vec![0u8; tris.len()];
    let mut k = 0;
    while k < edges.len() {
        let mut j = k + 1;
        while j < edges.len() && edges[j].0 == edges[k].0 && edges[j].1 == edges[k].1 {
            j += 1;
        }
        let group = &edges[k..j];
        let on = if group.len() == 2 {
            let (t1, e1) = (group[0].2 as usize, group[0].3 as usize);
            let t2 = group[1].2 as usize;
            let tri = tris[t1];
            let dir = vertices[tri[(e1 + 1) % 3] as usize] - vertices[tri[e1] as usize];
            is_edge_active(normals[t1], normals[t2], dir)
        } else {
            true
        };
        if on {
            for &(_, _, t, e) in group {
                active[t as usize] |= 1 << e;
            }
        }
        k = j;
    }
    active
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An `n × n` grid of unit cells in the x–z plane (y = 0), two
    /// triangles a cell, facing +y.
    pub(crate) fn grid(n: u32, size: f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let mut v = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                v.push(Vec3::new(i as f32 * size, 0.0, j as f32 * size));
            }
        }
        let at = |i: u32, j: u32| j * (n + 1) + i;
        let mut t = Vec::new();
        for j in 0..n {
            for i in 0..n {
                let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1));
                t.push([a, d, b]);
                t.push([a, c, d]);
            }
        }
        (v, t)
    }

    #[test]
    fn a_flat_grid_faces_up_with_only_its_border_active() {
        let (v, t) = grid(10, 1.0);
        let m = TriangleMesh::new(&v, &t).unwrap();
        assert_eq!(m.num_triangles(), 200);
        assert_eq!(m.dropped_triangles(), 0);
        for k in 0..200 {
            let (c, n) = m.triangle(k);
            assert!((n - Vec3::Y).length() < 1e-6, "{k}: {n:?}");
            // an active edge lies on the grid's border
            for e in 0..3 {
                let (a, b) = (c[e], c[(e + 1) % 3]);
                let border = |p: Vec3| p.x == 0.0 || p.x == 10.0 || p.z == 0.0 || p.z == 10.0;
                let on_border = border(a) && border(b) && (a.x == b.x || a.z == b.z);
                assert_eq!(m.active_edges(k) & (1 << e) != 0, on_border, "{k} edge {e}");
            }
        }
        // the same grid without shared vertices: the same flags
        let loose: Vec<Vec3> = t
            .iter()
            .flat_map(|tri| tri.map(|i| v[i as usize]))
            .collect();
        let idx: Vec<[u32; 3]> = (0..t.len() as u32)
            .map(|k| [3 * k, 3 * k + 1, 3 * k + 2])
            .collect();
        let m2 = TriangleMesh::new(&loose, &idx).unwrap();
        assert_eq!(m.active, m2.active);
    }

    #[test]
    fn ridges_are_active_valleys_and_gentle_folds_are_not() {
        // two triangles sharing the edge x = 0 along z; the second turned
        // down (ridge) or up (valley) about that edge by `deg`
        let fold = |deg: f32| {
            let (s, c) = deg.to_radians().sin_cos();
            let v = [
                Vec3::new(0.0, 0.0, 0.0),
                Vec3::new(0.0, 0.0, 1.0),
                Vec3::new(-1.0, 0.0, 0.5),
                Vec3::new(c, -s, 0.5),
            ];
            let t = [[0, 2, 1], [0, 1, 3]];
            TriangleMesh::new(&v, &t).unwrap()
        };
        // whether triangle 0's edge on x = 0 (the shared one) is active
        let shared = |m: &TriangleMesh| {
            let (c, _) = m.triangle(0);
            (0..3)
                .find(|&e| c[e].x == 0.0 && c[(e + 1) % 3].x == 0.0)
                .map(|e| m.active_edges(0) & (1 << e) != 0)
                .unwrap()
        };
        assert!(!shared(&fold(3.0)), "a 3° ridge is smooth");
        assert!(shared(&fold(10.0)), "a 10° ridge is an edge");
        assert!(!shared(&fold(-30.0)), "a valley is never active");
        assert!(shared(&fold(179.9)), "back to back");
        // the outer edges have no neighbour: active
        assert_eq!(fold(3.0).active_edges(0).count_ones(), 2);
    }

    #[test]
    fn bad_input_is_refused_and_degenerate_triangles_dropped() {
        let v = vec![Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::new(2.0, 0.0, 0.0)];
        assert_eq!(
            TriangleMesh::new(&v, &[[0, 1, 7]]),
            Err(MeshError::IndexOutOfRange { index: 0 })
        );
        let mut bad = v.clone();
        bad[2] = Vec3::new(f32::NAN, 0.0, 0.0);
        assert_eq!(
            TriangleMesh::new(&bad, &[[0, 1, 2]]),
            Err(MeshError::InvalidVertex { index: 2 })
        );
        bad[2] = Vec3::new(2e6, 0.0, 0.0);
        assert_eq!(
            TriangleMesh::new(&bad, &[[0, 1, 2]]),
            Err(MeshError::InvalidVertex { index: 2 })
        );
        // repeated index, collinear corners: dropped; nothing left: refused
        assert_eq!(
            TriangleMesh::new(&v, &[[0, 0, 1], [0, 1, 3]]),
            Err(MeshError::NoTriangles)
        );
        let m = TriangleMesh::new(&v, &[[0, 0, 1], [0, 1, 3], [0, 2, 1]]).unwrap();
        assert_eq!((m.num_triangles(), m.dropped_triangles()), (1, 2));
        assert_eq!(m.source_index(0), 2);
    }

    #[test]
    fn rays_hit_front_faces_and_box_queries_find_the_triangles() {
        let (v, t) = grid(20, 0.5);
        let m = TriangleMesh::new(&v, &t).unwrap();
        let (hit_t, n, k) = m
            .cast_ray(Vec3::new(3.3, 5.0, 7.1), -Vec3::Y, 100.0)
            .unwrap();
        assert!((hit_t - 5.0).abs() < 1e-5 && n == m.normals[k as usize]);
        let (c, _) = m.triangle(k as usize);
        let (lo, hi) = (c[0].min(c[1]).min(c[2]), c[0].max(c[1]).max(c[2]));
        assert!(lo.x <= 3.3 && hi.x >= 3.3 && lo.z <= 7.1 && hi.z >= 7.1);
        // from below: a back face
        assert!(m
            .cast_ray(Vec3::new(3.3, -5.0, 7.1), Vec3::Y, 100.0)
            .is_none());
        // too short
        assert!(m
            .cast_ray(Vec3::new(3.3, 5.0, 7.1), -Vec3::Y, 4.9)
            .is_none());
        // every triangle whose box meets a query box, and no other
        let (qlo, qhi) = (Vec3::new(2.2, -1.0, 4.9), Vec3::new(3.1, 1.0, 5.6));
        let mut found = Vec::new();
        m.triangles_in(qlo, qhi, |k| found.push(k));
        found.sort_unstable();
        let want: Vec<u32> = (0..m.num_triangles() as u32)
            .filter(|&k| {
                let (lo, hi) = m.tri(k).bounds();
                lo.cmple(qhi).all() && hi.cmpge(qlo).all()
            })
            .collect();
        assert_eq!(found, want);
        assert!(!want.is_empty());
    }
}
