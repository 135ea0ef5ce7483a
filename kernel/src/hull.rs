//! Convex hulls from point clouds (quickhull), with exact mass properties.
//!
//! [`ConvexHull::from_points`] welds points closer than [`WELD_DISTANCE`]
//! of the cloud's size, builds the hull by quickhull (Barber, Dobkin &
//! Huhdanpaa 1996; the structure of Jolt's `ConvexHullBuilder`: a start
//! tetrahedron, each face's outside set, the farthest point added next,
//! its horizon found by a walk over the faces it sees), stops at
//! [`MAX_HULL_VERTICES`] (the farthest points come first, so the hull left
//! is the best of its size), and merges coplanar triangles into polygons
//! (a cube's hull has 6 quads, not 12 triangles). Everything is computed
//! in `f64`; the result is `f32` vertices, faces as vertex loops and
//! planes, and the volume, centre of mass and inertia by integration over
//! the hull's tetrahedra (exact for the polyhedron).
//!
//! Not yet a [`Shape`](crate::Shape): collision, queries and sharing by
//! handle come with the hull shape (issue 16).

use glam::{DMat3, DVec3};

use crate::limits::{MAX_SHAPE_SIZE, MIN_SHAPE_SIZE};
use crate::math::{Mat3, Vec3};

/// Most vertices a hull keeps. Past it quickhull stops: the points not yet
/// added are the ones nearest the hull built so far.
pub const MAX_HULL_VERTICES: usize = 256;

/// Points closer than this share of the cloud's largest extent are one
/// point, and a point this close to a face's plane is on it (not outside):
/// 1e-5 of a 1 m prop is 10 µm, far below anything a contact resolves, and
/// far above `f64` round-off at the coordinates accepted.
pub const WELD_DISTANCE: f64 = 1.0e-5;

/// Adjacent triangles whose normals differ by less than this angle (rad)
/// and whose vertices lie within the weld distance of each other's plane
/// merge into one polygon.
const COPLANAR_ANGLE: f64 = 1.0e-3;

/// Why a hull cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HullError {
    /// A coordinate is NaN, infinite or beyond
    /// [`MAX_SHAPE_SIZE`](crate::MAX_SHAPE_SIZE).
    InvalidPoint,
    /// Fewer than 4 distinct points (after welding).
    TooFewPoints,
    /// The points lie on one line.
    Collinear,
    /// The points lie in one plane (the hull would have no volume).
    Coplanar,
}

impl core::fmt::Display for HullError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::InvalidPoint => "a hull point is NaN, infinite or too large",
            Self::TooFewPoints => "a hull needs at least 4 distinct points",
            Self::Collinear => "the hull's points lie on one line",
            Self::Coplanar => "the hull's points lie in one plane",
        })
    }
}

impl std::error::Error for HullError {}

/// One face: a convex polygon, counter-clockwise seen from outside.
#[derive(Debug, Clone, PartialEq)]
pub struct HullFace {
    /// Indices into [`ConvexHull::vertices`].
    pub vertices: Vec<u32>,
    /// Outward unit normal.
    pub normal: Vec3,
    /// `normal · p` for every point `p` of the face's plane (m).
    pub offset: f32,
}

/// Volume (m³), centre of mass and inertia about it (for density 1 kg/m³:
/// multiply by the density for kg·m²).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HullMassProperties {
    pub volume: f32,
    pub center_of_mass: Vec3,
    pub inertia: Mat3,
}

/// A convex hull: vertices, faces, mass properties.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvexHull {
    vertices: Vec<Vec3>,
    faces: Vec<HullFace>,
    mass: HullMassProperties,
}

impl ConvexHull {
    /// The hull of `points` (at most [`MAX_HULL_VERTICES`] of them kept).
    pub fn from_points(points: &[Vec3]) -> Result<Self, HullError> {
        Self::with_vertex_limit(points, MAX_HULL_VERTICES)
    }

    /// The hull with at most `max_vertices` vertices (at least 4).
    pub(crate) fn with_vertex_limit(
        points: &[Vec3],
        max_vertices: usize,
    ) -> Result<Self, HullError> {
        let ok = |p: &Vec3| p.is_finite() && p.abs().max_element() <= MAX_SHAPE_SIZE;
        if !points.iter().all(ok) {
            return Err(HullError::InvalidPoint);
        }
        let pts: Vec<DVec3> = points.iter().map(|p| p.as_dvec3()).collect();
        let (lo, hi) = pts.iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        );
        if pts.len() < 4 {
            return Err(HullError::TooFewPoints);
        }
        let extent = (hi - lo).max_element();
        if extent < MIN_SHAPE_SIZE as f64 {
            return Err(HullError::TooFewPoints);
        }
        let tol = WELD_DISTANCE * extent;
        let pts = weld(&pts, tol);
        if pts.len() < 4 {
            return Err(HullError::TooFewPoints);
        }
        let mut b = Builder::new(&pts, tol)?;
        b.run(max_vertices.max(4));
        Ok(b.finish())
    }

    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    pub fn faces(&self) -> &[HullFace] {
        &self.faces
    }

    pub fn mass_properties(&self) -> HullMassProperties {
        self.mass
    }
}

/// The points with near duplicates removed: sorted on x, a point within
/// `tol` of a point kept before it is dropped (the result is in input
/// order, and the same for any order of equal points).
fn weld(pts: &[DVec3], tol: f64) -> Vec<DVec3> {
    let mut order: Vec<usize> = (0..pts.len()).collect();
    order.sort_by(|&a, &b| pts[a].x.total_cmp(&pts[b].x).then(a.cmp(&b)));
    let mut keep = vec![false; pts.len()];
    for (k, &i) in order.iter().enumerate() {
        let near = order[..k]
            .iter()
            .rev()
            .take_while(|&&j| pts[i].x - pts[j].x <= tol)
            .any(|&j| keep[j] && pts[i].distance_squared(pts[j]) <= tol * tol);
        keep[i] = !near;
    }
    pts.iter()
        .zip(&keep)
        .filter(|(_, &k)| k)
        .map(|(&p, _)| p)
        .collect()
}

struct Face {
    v: [u32; 3],
    normal: DVec3,
    offset: f64,
    /// Points outside this face (above its plane by more than `tol`).
    outside: Vec<u32>,
    alive: bool,
}

struct Builder<'a> {
    pts: &'a [DVec3],
    tol: f64,
    faces: Vec<Face>,
    used: Vec<bool>,
    vertex_count: usize,
}

impl<'a> Builder<'a> {
    /// The start tetrahedron: the two farthest apart of the points extreme
    /// on an axis, the point farthest from their line, and the point
    /// farthest from the plane of the three.
    fn new(pts: &'a [DVec3], tol: f64) -> Result<Self, HullError> {
        let mut extremes = Vec::with_capacity(6);
        for a in 0..3 {
            let by = |i: &usize, j: &usize| pts[*i][a].total_cmp(&pts[*j][a]);
            extremes.push((0..pts.len()).min_by(by).unwrap_or(0));
            extremes.push((0..pts.len()).max_by(by).unwrap_or(0));
        }
        let (mut i0, mut i1, mut best) = (0, 0, -1.0);
        for &a in &extremes {
            for &b in &extremes {
                let d = pts[a].distance_squared(pts[b]);
                if d > best {
                    (i0, i1, best) = (a, b, d);
                }
            }
        }
        let farthest = |f: &dyn Fn(DVec3) -> f64| {
            (0..pts.len())
                .map(|i| (f(pts[i]), i))
                .fold((-1.0, 0), |acc, x| if x.0 > acc.0 { x } else { acc })
        };
        let dir = (pts[i1] - pts[i0]).normalize();
        let (d2, i2) = farthest(&|p| (p - pts[i0]).cross(dir).length());
        if d2 <= tol {
            return Err(HullError::Collinear);
        }
        let n = (pts[i1] - pts[i0]).cross(pts[i2] - pts[i0]).normalize();
        let (d3, i3) = farthest(&|p| (p - pts[i0]).dot(n).abs());
        if d3 <= tol {
            return Err(HullError::Coplanar);
        }
        let mut b = Self {
            pts,
            tol,
            faces: Vec::new(),
            used: vec![false; pts.len()],
            vertex_count: 0,
        };
        let (a, bb, c, d) = (i0 as u32, i1 as u32, i2 as u32, i3 as u32);
        // each face wound so that its normal points away from the centre
        let centre = (pts[i0] + pts[i1] + pts[i2] + pts[i3]) * 0.25;
        for [p, q, r] in [[a, bb, c], [a, bb, d], [a, c, d], [bb, c, d]] {
            let f = b.add_face([p, q, r]);
            if b.faces[f].normal.dot(centre) - b.faces[f].offset > 0.0 {
                b.faces.pop();
                b.add_face([p, r, q]);
            }
        }
        for i in [i0, i1, i2, i3] {
            b.used[i] = true;
        }
        b.vertex_count = 4;
        let all: Vec<u32> = (0..pts.len() as u32)
            .filter(|&i| !b.used[i as usize])
            .collect();
        b.assign(&all, 0);
        Ok(b)
    }

    fn add_face(&mut self, v: [u32; 3]) -> usize {
        let [a, b, c] = v.map(|i| self.pts[i as usize]);
        let normal = (b - a).cross(c - a).normalize_or_zero();
        self.faces.push(Face {
            v,
            normal,
            offset: normal.dot(a),
            outside: Vec::new(),
            alive: true,
        });
        self.faces.len() - 1
    }

    fn distance(&self, f: usize, p: u32) -> f64 {
        let f = &self.faces[f];
        f.normal.dot(self.pts[p as usize]) - f.offset
    }

    /// Gives each point to the first live face from `first` on that it is
    /// outside of; points outside none are inside the hull and dropped.
    fn assign(&mut self, points: &[u32], first: usize) {
        for &p in points {
            let face = (first..self.faces.len())
                .find(|&f| self.faces[f].alive && self.distance(f, p) > self.tol);
            if let Some(f) = face {
                self.faces[f].outside.push(p);
            }
        }
    }

    /// Adds the farthest outside point until none is left or the hull has
    /// `max_vertices`.
    fn run(&mut self, max_vertices: usize) {
        while self.vertex_count < max_vertices {
            // the farthest outside point of any face (ties: lower index)
            let mut best: Option<(f64, u32, usize)> = None;
            for f in 0..self.faces.len() {
                if !self.faces[f].alive {
                    continue;
                }
                for &p in &self.faces[f].outside {
                    let d = self.distance(f, p);
                    let better = match best {
                        None => true,
                        Some((bd, bp, _)) => d > bd || (d == bd && p < bp),
                    };
                    if better {
                        best = Some((d, p, f));
                    }
                }
            }
            let Some((_, eye, seed)) = best else {
                return;
            };
            self.add_point(eye, seed);
        }
    }

    /// The live face across edge `a → b` of a face (the one holding `b → a`).
    fn across(&self, a: u32, b: u32) -> Option<usize> {
        (0..self.faces.len()).find(|&f| {
            let v = self.faces[f].v;
            self.faces[f].alive && (0..3).any(|k| v[k] == b && v[(k + 1) % 3] == a)
        })
    }

    fn add_point(&mut self, eye: u32, seed: usize) {
        // the faces the eye sees, by a walk from the seed over edges
        let mut visible = vec![seed];
        let mut k = 0;
        while k < visible.len() {
            let v = self.faces[visible[k]].v;
            for e in 0..3 {
                if let Some(g) = self.across(v[e], v[(e + 1) % 3]) {
                    if !visible.contains(&g) && self.distance(g, eye) > self.tol {
                        visible.push(g);
                    }
                }
            }
            k += 1;
        }
        // the horizon: edges of visible faces whose neighbour is not visible
        let mut horizon = Vec::new();
        for &f in &visible {
            let v = self.faces[f].v;
            for e in 0..3 {
                let (a, b) = (v[e], v[(e + 1) % 3]);
                if self.across(a, b).is_none_or(|g| !visible.contains(&g)) {
                    horizon.push((a, b));
                }
            }
        }
        let mut orphans = Vec::new();
        for &f in &visible {
            self.faces[f].alive = false;
            orphans.append(&mut self.faces[f].outside);
        }
        let first = self.faces.len();
        for (a, b) in horizon {
            self.add_face([a, b, eye]);
        }
        self.used[eye as usize] = true;
        self.vertex_count += 1;
        orphans.retain(|&p| p != eye);
        orphans.sort_unstable();
        self.assign(&orphans, first);
    }

    /// Merges coplanar neighbours into polygons, renumbers the vertices the
    /// faces use (in input order) and integrates the mass properties.
    fn finish(self) -> ConvexHull {
        let live: Vec<usize> = (0..self.faces.len())
            .filter(|&f| self.faces[f].alive)
            .collect();
        // union-find over live triangles
        let mut group: Vec<usize> = (0..self.faces.len()).collect();
        fn root(g: &mut [usize], mut i: usize) -> usize {
            while g[i] != i {
                g[i] = g[g[i]];
                i = g[i];
            }
            i
        }
        let cos = COPLANAR_ANGLE.cos();
        for &f in &live {
            let v = self.faces[f].v;
            for e in 0..3 {
                let Some(g) = self.across(v[e], v[(e + 1) % 3]) else {
                    continue;
                };
                let (nf, ng) = (self.faces[f].normal, self.faces[g].normal);
                let flat = nf.dot(ng) >= cos
                    && self.faces[g]
                        .v
                        .iter()
                        .all(|&p| self.distance(f, p).abs() <= self.tol);
                if flat {
                    let (rf, rg) = (root(&mut group, f), root(&mut group, g));
                    group[rf.max(rg)] = rf.min(rg);
                }
            }
        }
        let mut faces_of: Vec<(usize, Vec<usize>)> = Vec::new();
        for &f in &live {
            let r = root(&mut group, f);
            match faces_of.iter_mut().find(|(g, _)| *g == r) {
                Some((_, list)) => list.push(f),
                None => faces_of.push((r, vec![f])),
            }
        }
        // vertices in input order
        let mut index = vec![u32::MAX; self.pts.len()];
        for &f in &live {
            for p in self.faces[f].v {
                index[p as usize] = 0;
            }
        }
        let mut vertices = Vec::new();
        for (slot, &p) in index.iter_mut().zip(self.pts) {
            if *slot == 0 {
                *slot = vertices.len() as u32;
                vertices.push(p);
            }
        }
        let mut faces = Vec::with_capacity(faces_of.len());
        for (_, tris) in &faces_of {
            let loop_ = self.boundary(tris);
            // Newell's normal of the polygon
            let mut n = DVec3::ZERO;
            for k in 0..loop_.len() {
                let (a, b) = (
                    self.pts[loop_[k] as usize],
                    self.pts[loop_[(k + 1) % loop_.len()] as usize],
                );
                n += DVec3::new(
                    (a.y - b.y) * (a.z + b.z),
                    (a.z - b.z) * (a.x + b.x),
                    (a.x - b.x) * (a.y + b.y),
                );
            }
            let n = n.normalize();
            let offset = loop_
                .iter()
                .map(|&p| n.dot(self.pts[p as usize]))
                .sum::<f64>()
                / loop_.len() as f64;
            faces.push(HullFace {
                vertices: loop_.iter().map(|&p| index[p as usize]).collect(),
                normal: n.as_vec3(),
                offset: offset as f32,
            });
        }
        let tris: Vec<[DVec3; 3]> = live
            .iter()
            .map(|&f| self.faces[f].v.map(|i| self.pts[i as usize]))
            .collect();
        ConvexHull {
            vertices: vertices.iter().map(|p| p.as_vec3()).collect(),
            faces,
            mass: integrate(&tris),
        }
    }

    /// The outer loop of a group of coplanar triangles: their edges whose
    /// reverse is not in the group, chained head to tail.
    fn boundary(&self, tris: &[usize]) -> Vec<u32> {
        let mut edges = Vec::new();
        for &f in tris {
            let v = self.faces[f].v;
            for e in 0..3 {
                edges.push((v[e], v[(e + 1) % 3]));
            }
        }
        let outer: Vec<(u32, u32)> = edges
            .iter()
            .copied()
            .filter(|&(a, b)| !edges.contains(&(b, a)))
            .collect();
        let mut loop_ = vec![outer[0].0];
        let mut at = outer[0].1;
        while at != outer[0].0 && loop_.len() <= outer.len() {
            loop_.push(at);
            match outer.iter().find(|e| e.0 == at) {
                Some(e) => at = e.1,
                None => break,
            }
        }
        loop_
    }
}

/// Volume, centre of mass and inertia (density 1) of the closed surface of
/// outward triangles `tris`: the sum over tetrahedra from a reference
/// point inside the hull to each triangle of their covariance (Blow &
/// Binstock, "How to find the inertia tensor (or other mass properties)
/// of a 3D solid body represented by a triangle mesh", 2004), moved to the
/// centre of mass.
fn integrate(tris: &[[DVec3; 3]]) -> HullMassProperties {
    // a reference point inside keeps the tetrahedra small (round-off)
    let o = tris.iter().map(|t| t[0]).sum::<DVec3>() / tris.len().max(1) as f64;
    // covariance of the unit tetrahedron (0, e_x, e_y, e_z)
    let canonical =
        DMat3::from_cols_array(&[2.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 2.0]) * (1.0 / 120.0);
    let (mut volume, mut moment, mut cov) = (0.0, DVec3::ZERO, DMat3::ZERO);
    for t in tris {
        let a = DMat3::from_cols(t[0] - o, t[1] - o, t[2] - o);
        let det = a.determinant();
        volume += det / 6.0;
        moment += det / 24.0 * (a.x_axis + a.y_axis + a.z_axis);
        cov += a * canonical * a.transpose() * det;
    }
    let com = if volume > 0.0 {
        moment / volume
    } else {
        DVec3::ZERO
    };
    // covariance about the centre of mass (parallel axis theorem)
    let outer = |u: DVec3, v: DVec3| DMat3::from_cols(u * v.x, u * v.y, u * v.z);
    let cov = cov - outer(com, com) * volume;
    let trace = cov.x_axis.x + cov.y_axis.y + cov.z_axis.z;
    let inertia = DMat3::from_diagonal(DVec3::splat(trace)) - cov;
    HullMassProperties {
        volume: volume as f32,
        center_of_mass: (com + o).as_vec3(),
        inertia: inertia.as_mat3(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::TestRng as Rng;

    fn cube(h: f32) -> Vec<Vec3> {
        let mut v = Vec::new();
        for &x in &[-h, h] {
            for &y in &[-h, h] {
                for &z in &[-h, h] {
                    v.push(Vec3::new(x, y, z));
                }
            }
        }
        v
    }

    fn rel(a: f32, b: f32) -> f32 {
        (a - b).abs() / b.abs()
    }

    #[test]
    fn a_cube_has_the_box_mass_properties_and_six_quads() {
        // a box 2 × 4 × 6 m, off the origin: volume 48 m³, inertia
        // m/12 (b² + c²) about each axis through the centre
        let (he, at) = (Vec3::new(1.0, 2.0, 3.0), Vec3::new(5.0, -2.0, 1.5));
        let pts: Vec<Vec3> = cube(1.0).iter().map(|p| *p * he + at).collect();
        let hull = ConvexHull::from_points(&pts).unwrap();
        let m = hull.mass_properties();
        let (x, y, z) = (2.0 * he.x, 2.0 * he.y, 2.0 * he.z);
        let v = x * y * z;
        let want = [
            v / 12.0 * (y * y + z * z),
            v / 12.0 * (x * x + z * z),
            v / 12.0 * (x * x + y * y),
        ];
        let got = [m.inertia.x_axis.x, m.inertia.y_axis.y, m.inertia.z_axis.z];
        println!(
            "cube hull: volume {} (want {v}), inertia {got:?} (want {want:?}), com {:?}",
            m.volume, m.center_of_mass
        );
        assert!(rel(m.volume, v) < 1e-5);
        for k in 0..3 {
            assert!(
                rel(got[k], want[k]) < 1e-5,
                "axis {k}: {} vs {}",
                got[k],
                want[k]
            );
        }
        let off = [m.inertia.x_axis.y, m.inertia.x_axis.z, m.inertia.y_axis.z];
        assert!(off.iter().all(|o| o.abs() < 1e-5 * want[0]), "{off:?}");
        assert!((m.center_of_mass - at).length() < 1e-5);
        assert_eq!(hull.vertices().len(), 8);
        assert_eq!(hull.faces().len(), 6);
        for f in hull.faces() {
            assert_eq!(f.vertices.len(), 4, "{f:?}");
            // every vertex on the face's plane, every other one below it
            for (i, p) in hull.vertices().iter().enumerate() {
                let d = f.normal.dot(*p) - f.offset;
                if f.vertices.contains(&(i as u32)) {
                    assert!(d.abs() < 1e-5, "{d}");
                } else {
                    assert!(d < -0.5, "{d}");
                }
            }
        }
    }

    #[test]
    fn points_inside_and_duplicates_do_not_change_the_hull() {
        let mut rng = Rng(3);
        let mut pts = cube(0.5);
        for _ in 0..200 {
            pts.push(Vec3::new(
                rng.f(-0.49, 0.49),
                rng.f(-0.49, 0.49),
                rng.f(-0.49, 0.49),
            ));
        }
        // near duplicates of corners, and points in the middle of faces
        pts.push(Vec3::splat(0.5) + Vec3::splat(1e-7));
        pts.push(Vec3::new(0.5, 0.1, -0.2));
        pts.push(Vec3::new(0.1, -0.5, 0.3));
        let hull = ConvexHull::from_points(&pts).unwrap();
        assert_eq!(hull.vertices().len(), 8);
        assert_eq!(hull.faces().len(), 6);
        assert!(rel(hull.mass_properties().volume, 1.0) < 1e-5);
    }

    #[test]
    fn a_sphere_cloud_comes_close_to_the_sphere() {
        let mut rng = Rng(11);
        let mut pts = Vec::new();
        while pts.len() < 1000 {
            let p = Vec3::new(rng.f(-1.0, 1.0), rng.f(-1.0, 1.0), rng.f(-1.0, 1.0));
            if p.length() > 0.1 && p.length() <= 1.0 {
                pts.push(p.normalize());
            }
        }
        let hull = ConvexHull::from_points(&pts).unwrap();
        let m = hull.mass_properties();
        let sphere = 4.0 / 3.0 * core::f32::consts::PI;
        println!(
            "hull of 1000 points on the unit sphere: {} vertices, {} faces, volume {} ({:.2}% below the sphere's)",
            hull.vertices().len(),
            hull.faces().len(),
            m.volume,
            100.0 * (1.0 - m.volume / sphere)
        );
        assert_eq!(hull.vertices().len(), MAX_HULL_VERTICES);
        // 256 vertices (Jolt's cap) cannot come within 1% of the sphere,
        // and neither can the hull of 1000 random points itself (its
        // expected shortfall is ~1.2%): every point is a vertex of it
        assert!(m.volume < sphere && rel(m.volume, sphere) < 0.03);
        let all = ConvexHull::with_vertex_limit(&pts, usize::MAX).unwrap();
        let v = all.mass_properties().volume;
        println!(
            "  without the cap: {} vertices, volume {v} ({:.2}% below)",
            all.vertices().len(),
            100.0 * (1.0 - v / sphere)
        );
        assert_eq!(all.vertices().len(), 1000);
        assert!(v < sphere && rel(v, sphere) < 0.015);
        // 1000 evenly spread points (a Fibonacci lattice) come within 1%
        let golden = core::f32::consts::PI * (3.0 - 5f32.sqrt());
        let even: Vec<Vec3> = (0..1000)
            .map(|k| {
                let y = 1.0 - 2.0 * (k as f32 + 0.5) / 1000.0;
                let r = (1.0 - y * y).sqrt();
                let a = golden * k as f32;
                Vec3::new(r * a.cos(), y, r * a.sin())
            })
            .collect();
        let v = ConvexHull::with_vertex_limit(&even, usize::MAX)
            .unwrap()
            .mass_properties()
            .volume;
        println!(
            "  1000 even points: volume {v} ({:.2}% below)",
            100.0 * (1.0 - v / sphere)
        );
        assert!(v < sphere && rel(v, sphere) < 0.01);
        assert!(m.center_of_mass.length() < 0.01);
        // convex: every vertex on or below every face's plane
        for f in hull.faces() {
            assert!(f.vertices.len() >= 3);
            for p in hull.vertices() {
                assert!(f.normal.dot(*p) - f.offset < 1e-4);
            }
        }
        // Euler: V − E + F = 2 for the polygon faces
        let e: usize = hull.faces().iter().map(|f| f.vertices.len()).sum::<usize>() / 2;
        assert_eq!(hull.vertices().len() + hull.faces().len(), e + 2);
    }

    #[test]
    fn an_icosahedron_keeps_its_twenty_triangles() {
        // vertices (0, ±1, ±φ) and their cyclic shifts: edge 2, volume
        // 5/12 (3 + √5) 2³
        let phi = (1.0 + 5f32.sqrt()) / 2.0;
        let mut pts = Vec::new();
        for (a, b) in [(1.0, phi), (-1.0, phi), (1.0, -phi), (-1.0, -phi)] {
            pts.extend([
                Vec3::new(0.0, a, b),
                Vec3::new(a, b, 0.0),
                Vec3::new(b, 0.0, a),
            ]);
        }
        let hull = ConvexHull::from_points(&pts).unwrap();
        assert_eq!((hull.vertices().len(), hull.faces().len()), (12, 20));
        assert!(hull.faces().iter().all(|f| f.vertices.len() == 3));
        let want = 5.0 / 12.0 * (3.0 + 5f32.sqrt()) * 8.0;
        let m = hull.mass_properties();
        assert!(rel(m.volume, want) < 1e-5, "{} vs {want}", m.volume);
        // symmetric: the same moment about every axis
        let d = [m.inertia.x_axis.x, m.inertia.y_axis.y, m.inertia.z_axis.z];
        assert!(rel(d[0], d[1]) < 1e-5 && rel(d[0], d[2]) < 1e-5, "{d:?}");
    }

    #[test]
    fn degenerate_clouds_are_refused() {
        let e = |pts: &[Vec3]| ConvexHull::from_points(pts).err();
        assert_eq!(
            e(&[Vec3::ZERO, Vec3::X, Vec3::Y]),
            Some(HullError::TooFewPoints)
        );
        assert_eq!(e(&[Vec3::ONE; 10]), Some(HullError::TooFewPoints));
        let line: Vec<Vec3> = (0..10).map(|k| Vec3::X * k as f32).collect();
        assert_eq!(e(&line), Some(HullError::Collinear));
        let plane: Vec<Vec3> = (0..10)
            .map(|k| Vec3::new(k as f32, (k * k) as f32, 0.0))
            .collect();
        assert_eq!(e(&plane), Some(HullError::Coplanar));
        let mut bad = cube(1.0);
        bad[3].y = f32::NAN;
        assert_eq!(e(&bad), Some(HullError::InvalidPoint));
        bad[3].y = f32::INFINITY;
        assert_eq!(e(&bad), Some(HullError::InvalidPoint));
        bad[3].y = 2.0 * MAX_SHAPE_SIZE;
        assert_eq!(e(&bad), Some(HullError::InvalidPoint));
        // a tetrahedron is the smallest hull there is
        let tet = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z];
        let hull = ConvexHull::from_points(&tet).unwrap();
        assert_eq!((hull.vertices().len(), hull.faces().len()), (4, 4));
        assert!(rel(hull.mass_properties().volume, 1.0 / 6.0) < 1e-6);
    }
}
