//! `HeightField`: terrain as a regular grid of height samples, a static
//! collision shape.
//!
//! Samples are `samples_x × samples_z` heights `cell_size` apart, centred
//! on the shape's origin in x and z: sample `(i, j)` sits at local
//! `(x0 + i·sx, heights[j·samples_x + i], z0 + j·sz)` with
//! `x0 = -(samples_x - 1)·sx / 2` (and `z0` alike). Each cell is two
//! triangles split along the diagonal from sample `(i, j)` to
//! `(i + 1, j + 1)`, facing +y: the surface is one-sided, as a mesh's
//! triangles are (a body whose centre falls below it is not pushed up).
//!
//! Nothing but the samples is stored per cell, plus one byte of active
//! edges per triangle (as in `mesh.rs`: a seam between two triangles that
//! continue the surface within 5° is no edge to catch on, so a box slides
//! across cells without bumps). Above the cells, the grid keeps the
//! lowest and highest sample of every [`BLOCK`] × [`BLOCK`] block of cells
//! (Jolt's height field keeps such ranges in its blocks too): a box query
//! skips whole blocks it is above or below, and a ray steps from block to
//! block (a 2D DDA), entering only the blocks whose height range its own
//! height range meets, then cell by cell inside them.

use crate::math::Vec3;
use crate::mesh::{is_edge_active, Triangle};

/// Cells per side of a block whose height range is kept.
pub const BLOCK: usize = 8;

/// Most samples one height field holds (2 triangles per cell and the
/// triangle id must fit 32 bits).
pub const MAX_HEIGHTFIELD_SAMPLES: usize = 1 << 28;

/// Why a height field cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeightFieldError {
    /// Fewer than 2 samples along an axis.
    TooFewSamples,
    /// More than [`MAX_HEIGHTFIELD_SAMPLES`].
    TooManySamples,
    /// `heights.len()` is not `samples_x · samples_z`.
    SizeMismatch,
    /// A cell size is NaN or outside
    /// [`MIN_SHAPE_SIZE`](crate::MIN_SHAPE_SIZE)`..=`[`MAX_SHAPE_SIZE`](crate::MAX_SHAPE_SIZE),
    /// or the grid is wider than twice `MAX_SHAPE_SIZE`.
    InvalidCellSize,
    /// Sample `index` is NaN, infinite or beyond `MAX_SHAPE_SIZE`.
    InvalidHeight { index: usize },
}

impl core::fmt::Display for HeightFieldError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TooFewSamples => f.write_str("a height field needs 2 samples along each axis"),
            Self::TooManySamples => f.write_str("the height field has too many samples"),
            Self::SizeMismatch => f.write_str("heights.len() is not samples_x * samples_z"),
            Self::InvalidCellSize => f.write_str("the cell size is invalid"),
            Self::InvalidHeight { index } => {
                write!(f, "height sample {index} is NaN, infinite or too large")
            }
        }
    }
}

impl std::error::Error for HeightFieldError {}

/// A height field in its own frame (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct HeightField {
    pub(crate) nx: usize,
    pub(crate) nz: usize,
    pub(crate) sx: f32,
    pub(crate) sz: f32,
    /// Local x and z of sample `(0, 0)`.
    pub(crate) x0: f32,
    pub(crate) z0: f32,
    pub(crate) heights: Vec<f32>,
    /// Active-edge bits per triangle (`2 · cell + half`).
    pub(crate) active: Vec<u8>,
    /// Blocks per row.
    pub(crate) bx: usize,
    pub(crate) bz: usize,
    pub(crate) block_min: Vec<f32>,
    pub(crate) block_max: Vec<f32>,
    pub(crate) local_min: Vec3,
    pub(crate) local_max: Vec3,
    pub(crate) bounding_radius: f32,
}

impl HeightField {
    /// A height field of `samples_x × samples_z` samples (`heights`, m,
    /// row by row: x fastest), `cell_size = (sx, sz)` m apart.
    pub fn new(
        samples_x: usize,
        samples_z: usize,
        cell_size: (f32, f32),
        heights: &[f32],
    ) -> Result<Self, HeightFieldError> {
        use crate::limits::{MAX_SHAPE_SIZE, MIN_SHAPE_SIZE};
        if samples_x < 2 || samples_z < 2 {
            return Err(HeightFieldError::TooFewSamples);
        }
        if samples_x.saturating_mul(samples_z) > MAX_HEIGHTFIELD_SAMPLES {
            return Err(HeightFieldError::TooManySamples);
        }
        if heights.len() != samples_x * samples_z {
            return Err(HeightFieldError::SizeMismatch);
        }
        let (sx, sz) = cell_size;
        let size_ok = |s: f32, n: usize| {
            (MIN_SHAPE_SIZE..=MAX_SHAPE_SIZE).contains(&s)
                && (n - 1) as f64 * s as f64 <= 2.0 * MAX_SHAPE_SIZE as f64
        };
        if !size_ok(sx, samples_x) || !size_ok(sz, samples_z) {
            return Err(HeightFieldError::InvalidCellSize);
        }
        if let Some(index) = heights
            .iter()
            .position(|h| h.is_nan() || h.abs() > MAX_SHAPE_SIZE)
        {
            return Err(HeightFieldError::InvalidHeight { index });
        }
        let (cx, cz) = (samples_x - 1, samples_z - 1);
        let (bx, bz) = (cx.div_ceil(BLOCK), cz.div_ceil(BLOCK));
        let mut hf = Self {
            nx: samples_x,
            nz: samples_z,
            sx,
            sz,
            x0: -0.5 * cx as f32 * sx,
            z0: -0.5 * cz as f32 * sz,
            heights: heights.to_vec(),
            active: vec![0; 2 * cx * cz],
            bx,
            bz,
            block_min: vec![f32::INFINITY; bx * bz],
            block_max: vec![f32::NEG_INFINITY; bx * bz],
            local_min: Vec3::ZERO,
            local_max: Vec3::ZERO,
            bounding_radius: 0.0,
        };
        for b in 0..bx * bz {
            let (i0, j0) = ((b % bx) * BLOCK, (b / bx) * BLOCK);
            for j in j0..=(j0 + BLOCK).min(cz) {
                for i in i0..=(i0 + BLOCK).min(cx) {
                    let h = hf.height(i, j);
                    hf.block_min[b] = hf.block_min[b].min(h);
                    hf.block_max[b] = hf.block_max[b].max(h);
                }
            }
        }
        let lo = heights.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = heights.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        hf.local_min = Vec3::new(hf.x0, lo, hf.z0);
        hf.local_max = Vec3::new(-hf.x0, hi, -hf.z0);
        hf.bounding_radius = Vec3::new(hf.x0, lo.abs().max(hi.abs()), hf.z0).length();
        for cell in 0..cx * cz {
            for half in 0..2 {
                hf.active[2 * cell + half] = hf.active_bits(cell % cx, cell / cx, half);
            }
        }
        Ok(hf)
    }

    /// Samples along x and z.
    pub fn samples(&self) -> (usize, usize) {
        (self.nx, self.nz)
    }

    /// `(sx, sz)` (m).
    pub fn cell_size(&self) -> (f32, f32) {
        (self.sx, self.sz)
    }

    /// The height of sample `(i, j)` (m).
    pub fn height(&self, i: usize, j: usize) -> f32 {
        self.heights[j * self.nx + i]
    }

    /// The surface's height at local `(x, z)` (on the triangle there), or
    /// `None` outside the grid.
    pub fn height_at(&self, x: f32, z: f32) -> Option<f32> {
        let (u, v) = ((x - self.x0) / self.sx, (z - self.z0) / self.sz);
        let (cx, cz) = (self.nx - 1, self.nz - 1);
        if !(u >= 0.0 && v >= 0.0 && u <= cx as f32 && v <= cz as f32) {
            return None;
        }
        let (i, j) = ((u as usize).min(cx - 1), (v as usize).min(cz - 1));
        let (fu, fv) = (u - i as f32, v - j as f32);
        let (h00, h10) = (self.height(i, j), self.height(i + 1, j));
        let (h01, h11) = (self.height(i, j + 1), self.height(i + 1, j + 1));
        // the diagonal runs (0,0)-(1,1): below it (fu >= fv) the triangle
        // (00, 11, 10), above it (00, 01, 11)
        Some(if fu >= fv {
            h00 + fu * (h10 - h00) + fv * (h11 - h10)
        } else {
            h00 + fv * (h01 - h00) + fu * (h11 - h01)
        })
    }

    /// `(min, max)` of the surface (m, local frame).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        (self.local_min, self.local_max)
    }

    /// Bytes held: samples, edge flags, block ranges.
    pub fn memory_bytes(&self) -> usize {
        4 * self.heights.len() + self.active.len() + 8 * self.block_min.len()
    }

    fn corner(&self, i: usize, j: usize) -> Vec3 {
        Vec3::new(
            self.x0 + i as f32 * self.sx,
            self.height(i, j),
            self.z0 + j as f32 * self.sz,
        )
    }

    /// The corners of half `half` of cell `(i, j)`, counter-clockwise
    /// from above: half 0 is `(00, 11, 10)`, half 1 `(00, 01, 11)`.
    fn corners(&self, i: usize, j: usize, half: usize) -> [Vec3; 3] {
        let p00 = self.corner(i, j);
        let p11 = self.corner(i + 1, j + 1);
        if half == 0 {
            [p00, p11, self.corner(i + 1, j)]
        } else {
            [p00, self.corner(i, j + 1), p11]
        }
    }

    fn normal_of(v: &[Vec3; 3]) -> Vec3 {
        (v[1] - v[0]).cross(v[2] - v[0]).normalize()
    }

    /// Active bits of half `half` of cell `(i, j)`: each edge against the
    /// triangle across it (none at the grid's border: active).
    fn active_bits(&self, i: usize, j: usize, half: usize) -> u8 {
        let v = self.corners(i, j, half);
        let n = Self::normal_of(&v);
        let (cx, cz) = (self.nx - 1, self.nz - 1);
        // the triangle across each edge: (cell i, cell j, half), or None
        let across: [Option<(usize, usize, usize)>; 3] = if half == 0 {
            [
                Some((i, j, 1)),                            // the diagonal
                (i + 1 < cx).then(|| (i + 1, j, 1)),        // x = i + 1
                (j > 0).then(|| (i, j.wrapping_sub(1), 1)), // z = j
            ]
        } else {
            [
                (i > 0).then(|| (i.wrapping_sub(1), j, 0)), // x = i
                (j + 1 < cz).then(|| (i, j + 1, 0)),        // z = j + 1
                Some((i, j, 0)),                            // the diagonal
            ]
        };
        let mut bits = 0;
        for (e, other) in across.iter().enumerate() {
            let on = match *other {
                None => true,
                Some((oi, oj, oh)) => {
                    let m = Self::normal_of(&self.corners(oi, oj, oh));
                    is_edge_active(n, m, v[(e + 1) % 3] - v[e])
                }
            };
            if on {
                bits |= 1 << e;
            }
        }
        bits
    }

    /// Triangle `id` (`2 · (j · (samples_x - 1) + i) + half`).
    pub(crate) fn tri(&self, id: u32) -> Triangle {
        let id = id as usize;
        let cx = self.nx - 1;
        let (cell, half) = (id / 2, id % 2);
        let v = self.corners(cell % cx, cell / cx, half);
        Triangle {
            normal: Self::normal_of(&v),
            v,
            active: self.active[id],
        }
    }

    /// The cells `[i0, i1] × [j0, j1]` whose footprint overlaps x–z of
    /// `[lo, hi]`, or `None` when the box misses the grid.
    fn cell_range(&self, lo: Vec3, hi: Vec3) -> Option<(usize, usize, usize, usize)> {
        let (cx, cz) = (self.nx - 1, self.nz - 1);
        let to_cell = |c: f32, o: f32, s: f32, n: usize| {
            // saturating: below 0 (and NaN) is 0, beyond the grid n - 1
            (((c - o) / s).floor().max(0.0) as usize).min(n - 1)
        };
        let (ux0, ux1) = ((lo.x - self.x0) / self.sx, (hi.x - self.x0) / self.sx);
        let (vz0, vz1) = ((lo.z - self.z0) / self.sz, (hi.z - self.z0) / self.sz);
        if !(ux1 >= 0.0 && vz1 >= 0.0 && ux0 <= cx as f32 && vz0 <= cz as f32) {
            return None;
        }
        Some((
            to_cell(lo.x, self.x0, self.sx, cx),
            to_cell(hi.x, self.x0, self.sx, cx),
            to_cell(lo.z, self.z0, self.sz, cz),
            to_cell(hi.z, self.z0, self.sz, cz),
        ))
    }

    /// Every triangle of a cell under or over `[lo, hi]` whose corners'
    /// height range meets the box's (blocks and cells outside it are
    /// skipped), block by block, cells in row order: deterministic.
    pub(crate) fn triangles_in(&self, lo: Vec3, hi: Vec3, mut f: impl FnMut(u32)) {
        let Some((i0, i1, j0, j1)) = self.cell_range(lo, hi) else {
            return;
        };
        let cx = self.nx - 1;
        for bj in j0 / BLOCK..=j1 / BLOCK {
            for bi in i0 / BLOCK..=i1 / BLOCK {
                let b = bj * self.bx + bi;
                if self.block_min[b] > hi.y || self.block_max[b] < lo.y {
                    continue;
                }
                for j in (bj * BLOCK).max(j0)..=((bj + 1) * BLOCK - 1).min(j1) {
                    for i in (bi * BLOCK).max(i0)..=((bi + 1) * BLOCK - 1).min(i1) {
                        let h = [
                            self.height(i, j),
                            self.height(i + 1, j),
                            self.height(i, j + 1),
                            self.height(i + 1, j + 1),
                        ];
                        let (cmin, cmax) = (
                            h.iter().copied().fold(f32::INFINITY, f32::min),
                            h.iter().copied().fold(f32::NEG_INFINITY, f32::max),
                        );
                        if cmin > hi.y || cmax < lo.y {
                            continue;
                        }
                        let cell = (j * cx + i) as u32;
                        f(2 * cell);
                        f(2 * cell + 1);
                    }
                }
            }
        }
    }

    /// The first front face the ray `o + t·d` (`d` unit, local frame,
    /// `t` in `[0, max]`) meets: `(t, normal, triangle)`. Blocks are
    /// stepped through in the ray's order and entered only where the ray's
    /// height range over the block meets the block's; inside, cells in
    /// order, so the walk stops at the first cell with a hit.
    pub(crate) fn cast_ray(&self, o: Vec3, d: Vec3, max: f32) -> Option<(f32, Vec3, u32)> {
        let (cx, cz) = (self.nx - 1, self.nz - 1);
        let mut best: Option<(f32, Vec3, u32)> = None;
        let block = Grid {
            x0: self.x0,
            z0: self.z0,
            sx: self.sx * BLOCK as f32,
            sz: self.sz * BLOCK as f32,
            nx: self.bx,
            nz: self.bz,
        };
        let cells = Grid {
            x0: self.x0,
            z0: self.z0,
            sx: self.sx,
            sz: self.sz,
            nx: cx,
            nz: cz,
        };
        block.walk(o, d, 0.0, max, |bi, bj, ta, tb| {
            if best.is_some_and(|b| b.0 < ta) {
                return true;
            }
            let b = bj * self.bx + bi;
            let (ya, yb) = (o.y + d.y * ta, o.y + d.y * tb);
            if ya.min(yb) > self.block_max[b] || ya.max(yb) < self.block_min[b] {
                return false;
            }
            cells.walk(o, d, ta, tb, |i, j, ca, _| {
                if best.is_some_and(|b| b.0 < ca) {
                    return true;
                }
                for half in 0..2 {
                    let id = (2 * (j * cx + i) + half) as u32;
                    let tri = self.tri(id);
                    if let Some(t) = crate::mesh::ray_triangle(o, d, &tri) {
                        let better =
                            t <= max && best.is_none_or(|b| t < b.0 || (t == b.0 && id < b.2));
                        if better {
                            best = Some((t, tri.normal, id));
                        }
                    }
                }
                false
            });
            false
        });
        best
    }
}

/// A grid of `nx × nz` cells of `sx × sz` from `(x0, z0)` in x–z, for the
/// ray walk.
struct Grid {
    x0: f32,
    z0: f32,
    sx: f32,
    sz: f32,
    nx: usize,
    nz: usize,
}

impl Grid {
    /// Visits the cells the ray `o + t·d` crosses for `t` in `[t0, t1]`
    /// (clipped to the grid), in order, with the `t` range inside each,
    /// until `visit` returns true (Amanatides–Woo). Each boundary is
    /// computed from the cell index, never accumulated, so a long walk
    /// does not drift; a cell touched only at a corner may be skipped,
    /// which the exact triangle tests on both sides of it cover.
    fn walk(
        &self,
        o: Vec3,
        d: Vec3,
        mut t0: f32,
        mut t1: f32,
        mut visit: impl FnMut(usize, usize, f32, f32) -> bool,
    ) {
        let (xe, ze) = (
            self.x0 + self.nx as f32 * self.sx,
            self.z0 + self.nz as f32 * self.sz,
        );
        for (oc, dc, lo, hi) in [(o.x, d.x, self.x0, xe), (o.z, d.z, self.z0, ze)] {
            if dc == 0.0 {
                if oc < lo || oc > hi {
                    return;
                }
                continue;
            }
            let (ta, tb) = ((lo - oc) / dc, (hi - oc) / dc);
            t0 = t0.max(ta.min(tb));
            t1 = t1.min(ta.max(tb));
        }
        if t0.is_nan() || t1.is_nan() || t0 > t1 {
            return;
        }
        let cell = |c: f32, o: f32, s: f32, n: usize| (((c - o) / s).max(0.0) as usize).min(n - 1);
        let p = o + d * t0;
        let (mut i, mut j) = (
            cell(p.x, self.x0, self.sx, self.nx),
            cell(p.z, self.z0, self.sz, self.nz),
        );
        let next = |k: usize, oc: f32, dc: f32, base: f32, s: f32| {
            if dc > 0.0 {
                (base + (k + 1) as f32 * s - oc) / dc
            } else if dc < 0.0 {
                (base + k as f32 * s - oc) / dc
            } else {
                f32::INFINITY
            }
        };
        let mut t = t0;
        loop {
            let tx = next(i, o.x, d.x, self.x0, self.sx);
            let tz = next(j, o.z, d.z, self.z0, self.sz);
            let exit = tx.min(tz).min(t1);
            if visit(i, j, t, exit.max(t)) || exit >= t1 {
                return;
            }
            if tx <= tz {
                match (d.x > 0.0, i) {
                    (true, k) if k + 1 < self.nx => i += 1,
                    (false, k) if k > 0 => i -= 1,
                    _ => return,
                }
            } else {
                match (d.z > 0.0, j) {
                    (true, k) if k + 1 < self.nz => j += 1,
                    (false, k) if k > 0 => j -= 1,
                    _ => return,
                }
            }
            t = exit;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wavy(n: usize) -> HeightField {
        let mut h = Vec::new();
        for j in 0..n {
            for i in 0..n {
                let (x, z) = (
                    i as f32 - (n - 1) as f32 / 2.0,
                    j as f32 - (n - 1) as f32 / 2.0,
                );
                h.push(2.0 * (x / 7.0).sin() * (z / 9.0).cos() + 0.5 * (x / 2.3).sin());
            }
        }
        HeightField::new(n, n, (1.0, 1.0), &h).unwrap()
    }

    #[test]
    fn bad_input_is_refused() {
        let h = vec![0.0; 9];
        assert_eq!(
            HeightField::new(1, 9, (1.0, 1.0), &h),
            Err(HeightFieldError::TooFewSamples)
        );
        assert_eq!(
            HeightField::new(3, 4, (1.0, 1.0), &h),
            Err(HeightFieldError::SizeMismatch)
        );
        assert_eq!(
            HeightField::new(3, 3, (0.0, 1.0), &h),
            Err(HeightFieldError::InvalidCellSize)
        );
        assert_eq!(
            HeightField::new(3, 3, (1.0, f32::NAN), &h),
            Err(HeightFieldError::InvalidCellSize)
        );
        let mut bad = h.clone();
        bad[4] = f32::INFINITY;
        assert_eq!(
            HeightField::new(3, 3, (1.0, 1.0), &bad),
            Err(HeightFieldError::InvalidHeight { index: 4 })
        );
        bad[4] = f32::NAN;
        assert_eq!(
            HeightField::new(3, 3, (1.0, 1.0), &bad),
            Err(HeightFieldError::InvalidHeight { index: 4 })
        );
    }

    #[test]
    fn triangles_face_up_and_agree_with_height_at() {
        let hf = wavy(33);
        let (cx, cz) = (32, 32);
        for id in 0..(2 * cx * cz) as u32 {
            let t = hf.tri(id);
            assert!(t.normal.y > 0.5, "{id} {:?}", t.normal);
            // the centroid lies on the surface height_at reports
            let c = (t.v[0] + t.v[1] + t.v[2]) / 3.0;
            let h = hf.height_at(c.x, c.z).unwrap();
            assert!((h - c.y).abs() < 1e-4, "{id}: {h} vs {}", c.y);
        }
        assert!(hf.height_at(100.0, 0.0).is_none());
    }

    #[test]
    fn a_flat_field_has_only_border_edges_active() {
        let hf = HeightField::new(5, 4, (0.5, 2.0), &[1.5; 20]).unwrap();
        let active: u32 = hf.active.iter().map(|b| b.count_ones()).sum();
        // the border: 2 · 4 + 2 · 3 cell edges
        assert_eq!(active, 14);
        assert_eq!(hf.bounds().0, Vec3::new(-1.0, 1.5, -3.0));
    }

    /// Rays straight down land on `height_at`; slanted rays from every
    /// direction equal a brute-force test of every triangle (same
    /// distance, ties to the lower id).
    #[test]
    fn rays_equal_brute_force() {
        let hf = wavy(41);
        let n_tri = 2 * 40 * 40;
        let mut rng = crate::test_rng::TestRng(7);
        let mut rnd = |lo: f32, hi: f32| rng.f(lo, hi);
        let mut hits = 0;
        for k in 0..2000 {
            let o = Vec3::new(rnd(-25.0, 25.0), rnd(-1.0, 6.0), rnd(-25.0, 25.0));
            let d = if k % 4 == 0 {
                -Vec3::Y
            } else {
                Vec3::new(rnd(-1.0, 1.0), rnd(-1.0, 0.3), rnd(-1.0, 1.0)).normalize()
            };
            let got = hf.cast_ray(o, d, 60.0);
            let mut want: Option<(f32, u32)> = None;
            for id in 0..n_tri as u32 {
                if let Some(t) = crate::mesh::ray_triangle(o, d, &hf.tri(id)) {
                    if t <= 60.0 && want.is_none_or(|w| t < w.0 || (t == w.0 && id < w.1)) {
                        want = Some((t, id));
                    }
                }
            }
            assert_eq!(got.map(|g| (g.0, g.2)), want, "ray {k}: {o:?} {d:?}");
            if let Some((t, _, _)) = got {
                hits += 1;
                if k % 4 == 0 {
                    let h = hf.height_at(o.x, o.z).unwrap();
                    assert!((o.y - t - h).abs() < 1e-4);
                }
            }
        }
        assert!(hits > 800, "{hits}");
    }

    #[test]
    fn box_queries_find_every_triangle_they_may_touch() {
        let hf = wavy(41);
        let mut rng = crate::test_rng::TestRng(3);
        let mut rnd = |lo: f32, hi: f32| rng.f(lo, hi);
        for _ in 0..300 {
            let c = Vec3::new(rnd(-24.0, 24.0), rnd(-3.0, 3.0), rnd(-24.0, 24.0));
            let e = Vec3::new(rnd(0.1, 3.0), rnd(0.1, 1.0), rnd(0.1, 3.0));
            let (lo, hi) = (c - e, c + e);
            let mut got = Vec::new();
            hf.triangles_in(lo, hi, |id| got.push(id));
            for id in 0..(2 * 40 * 40) as u32 {
                let (tlo, thi) = hf.tri(id).bounds();
                if tlo.cmple(hi).all() && thi.cmpge(lo).all() {
                    assert!(got.contains(&id), "{id} missed for {lo:?} {hi:?}");
                }
            }
        }
    }
}
