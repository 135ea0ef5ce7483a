//! The box–box separating-axis test written once over the lane type: the
//! `f32` instantiation tests one pair, the [`F32x16`] one sixteen pairs at
//! once, and both compute every axis's separation with the same IEEE-754
//! operations in the same order as [`collide_box_box`]'s scalar test (glam's
//! `Mat3::from_quat`, `dot` and `cross` term for term, nothing fused), so a
//! pair's verdict does not depend on which path tested it.
//!
//! The wide path tests all 15 axes of every lane (no early exit) and keeps,
//! per lane, whether any axis separates and the best face of A, of B and
//! the best edge pair; [`Sat::lane`] hands one lane to the scalar test's
//! feature choice ([`Sat::verdict`]). The narrow phase batches each job's box–box
//! pairs into [`BoxPairs`] and clips only the pairs that touch.
//!
//! [`collide_box_box`]: super::collide_box_box

use super::box_box::{Feature, Obb, EDGE_TOLERANCE, FACE_B_TOLERANCE, MIN_EDGE_AXIS};
use crate::math::{Quat, Vec3};
use archipelago_simd::{F32x16, Real, BUNDLE, Q4, V3};

/// The axes of a rotation (columns of glam's `Mat3::from_quat`, term for
/// term).
#[inline(always)]
pub(crate) fn axes<R: Real>(q: Q4<R>) -> [V3<R>; 3] {
    let one = R::splat(1.0);
    let (x2, y2, z2) = (q.x + q.x, q.y + q.y, q.z + q.z);
    let (xx, xy, xz) = (q.x * x2, q.x * y2, q.x * z2);
    let (yy, yz, zz) = (q.y * y2, q.y * z2, q.z * z2);
    let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
    [
        V3::new(one - (yy + zz), xy + wz, xz - wy),
        V3::new(xy - wz, one - (xx + zz), yz + wx),
        V3::new(xz + wy, yz - wx, one - (xx + yy)),
    ]
}

/// What the 15 axes said, per lane.
#[derive(Clone, Copy)]
pub(crate) struct Sat<R: Real> {
    /// Some axis separates the boxes by more than `max_separation`.
    pub separated: R::Mask,
    /// Largest face separation of A's axes and B's, and of the edge
    /// pairs, with the index that gave it (the first of equals; for edges
    /// `3 i + j`, A's edge `i` and B's edge `j`). `-inf` where no edge pair
    /// qualified (parallel edges).
    pub best_a: (R, R),
    pub best_b: (R, R),
    pub best_edge: (R, R),
}

/// The separating-axis test of box A (centre, axes from [`axes`], half
/// extents) against box B.
#[inline(always)]
pub(crate) fn sat<R: Real>(
    pa: V3<R>,
    ua: [V3<R>; 3],
    ha: [R; 3],
    pb: V3<R>,
    ub: [V3<R>; 3],
    hb: [R; 3],
    max_separation: R,
) -> Sat<R> {
    let d = pb - pa;
    let mut r = [[R::zero(); 3]; 3];
    let mut abs_r = [[R::zero(); 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = ua[i].dot(ub[j]);
            abs_r[i][j] = r[i][j].abs();
        }
    }
    let ta = [d.dot(ua[0]), d.dot(ua[1]), d.dot(ua[2])];
    let neg_inf = R::splat(f32::NEG_INFINITY);
    let mut separated = R::lt(R::zero(), R::zero());
    let m = max_separation;
    let mut best_a = (neg_inf, R::zero());
    for i in 0..3 {
        let rb = hb[0] * abs_r[i][0] + hb[1] * abs_r[i][1] + hb[2] * abs_r[i][2];
        let s = ta[i].abs() - ha[i] - rb;
        keep(&mut separated, &mut best_a, s, None, i, m);
    }
    let mut best_b = (neg_inf, R::zero());
    for j in 0..3 {
        let ra = ha[0] * abs_r[0][j] + ha[1] * abs_r[1][j] + ha[2] * abs_r[2][j];
        let s = d.dot(ub[j]).abs() - ra - hb[j];
        keep(&mut separated, &mut best_b, s, None, j, m);
    }
    let mut best_edge = (neg_inf, R::zero());
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for j in 0..3 {
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            let len = ua[i].cross(ub[j]).length_squared().sqrt();
            let dl = ta[i2] * r[i1][j] - ta[i1] * r[i2][j];
            let ra = ha[i1] * abs_r[i2][j] + ha[i2] * abs_r[i1][j];
            let rb = hb[j1] * abs_r[i][j2] + hb[j2] * abs_r[i][j1];
            let s = (dl.abs() - ra - rb) / len;
            let valid = R::not(len.lt(R::splat(MIN_EDGE_AXIS)));
            keep(&mut separated, &mut best_edge, s, Some(valid), 3 * i + j, m);
        }
    }
    Sat {
        separated,
        best_a,
        best_b,
        best_edge,
    }
}

/// One axis's separation `s` into the running verdict: whether it
/// separates by more than `max_separation`, and whether it beats `best`
/// (where `valid`).
#[inline(always)]
fn keep<R: Real>(
    separated: &mut R::Mask,
    best: &mut (R, R),
    s: R,
    valid: Option<R::Mask>,
    index: usize,
    max_separation: R,
) {
    let over = s.gt(max_separation);
    let better = s.gt(best.0);
    let (over, better) = match valid {
        Some(v) => (R::and(v, over), R::and(v, better)),
        None => (over, better),
    };
    *separated = R::or(*separated, over);
    best.0 = R::select(better, s, best.0);
    best.1 = R::select(better, R::splat(index as f32), best.1);
}

/// A pair's verdict: apart, or the feature to build the contact from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Verdict {
    Separated,
    Touching(Feature),
}

impl Sat<F32x16> {
    /// Lane `k`, as the `f32` instantiation would have given it.
    #[inline]
    pub fn lane(&self, k: usize) -> Sat<f32> {
        let pick = |(s, i): (F32x16, F32x16)| (s.0[k], i.0[k]);
        Sat {
            separated: self.separated.0[k] != 0,
            best_a: pick(self.best_a),
            best_b: pick(self.best_b),
            best_edge: pick(self.best_edge),
        }
    }
}

impl Sat<f32> {
    /// The verdict: apart, or the feature to build the contact from. B's
    /// face must beat A's by `FACE_B_TOLERANCE`, an edge pair the chosen
    /// face by `EDGE_TOLERANCE`.
    #[inline]
    pub fn verdict(&self) -> Verdict {
        if self.separated {
            return Verdict::Separated;
        }
        let (best_a, best_b, best_edge) = (self.best_a, self.best_b, self.best_edge);
        let (face_sep, mut feature) = if best_b.0 > best_a.0 + FACE_B_TOLERANCE {
            (best_b.0, Feature::FaceB(best_b.1 as usize))
        } else {
            (best_a.0, Feature::FaceA(best_a.1 as usize))
        };
        if best_edge.0 > face_sep + EDGE_TOLERANCE {
            let ij = best_edge.1 as usize;
            feature = Feature::Edge(ij / 3, ij % 3);
        }
        Verdict::Touching(feature)
    }

    /// The best edge pair as a feature, if any pair qualified: what a face
    /// the bias chose falls back to when its clipping keeps no point.
    #[inline]
    pub fn edge_feature(&self) -> Option<Feature> {
        let ij = self.best_edge.1 as usize;
        (self.best_edge.0 > f32::NEG_INFINITY).then_some(Feature::Edge(ij / 3, ij % 3))
    }

    /// The separations along the best face axis of A and of B (m).
    pub fn face_separations(&self) -> (f32, f32) {
        (self.best_a.0, self.best_b.0)
    }
}

/// One pair through the `f32` instantiation (the scalar twin of a lane);
/// the boxes' axes are glam's `from_quat`, the same bits as [`axes`].
#[inline]
pub(crate) fn sat_of_boxes(a: &Obb, b: &Obb, max_separation: f32) -> Sat<f32> {
    let v = |p: Vec3| V3::new(p.x, p.y, p.z);
    sat(
        v(a.c),
        a.u.map(v),
        a.h,
        v(b.c),
        b.u.map(v),
        b.h,
        max_separation,
    )
}

/// Up to [`BUNDLE`] box–box pairs in lanes: centre, rotation and half
/// extents of both boxes, one array per component.
pub(crate) struct BoxPairs {
    pub len: usize,
    pa: [[f32; BUNDLE]; 3],
    qa: [[f32; BUNDLE]; 4],
    ha: [[f32; BUNDLE]; 3],
    pb: [[f32; BUNDLE]; 3],
    qb: [[f32; BUNDLE]; 4],
    hb: [[f32; BUNDLE]; 3],
}

impl BoxPairs {
    pub fn new() -> Self {
        Self {
            len: 0,
            pa: [[0.0; BUNDLE]; 3],
            qa: [[0.0; BUNDLE]; 4],
            ha: [[0.0; BUNDLE]; 3],
            pb: [[0.0; BUNDLE]; 3],
            qb: [[0.0; BUNDLE]; 4],
            hb: [[0.0; BUNDLE]; 3],
        }
    }

    pub fn is_full(&self) -> bool {
        self.len == BUNDLE
    }

    /// Adds a pair in the next lane.
    #[inline]
    pub fn push(&mut self, pa: Vec3, qa: Quat, ha: Vec3, pb: Vec3, qb: Quat, hb: Vec3) {
        let k = self.len;
        for (c, v) in [pa, pb].iter().enumerate() {
            let dst = if c == 0 { &mut self.pa } else { &mut self.pb };
            dst[0][k] = v.x;
            dst[1][k] = v.y;
            dst[2][k] = v.z;
        }
        for (c, q) in [qa, qb].iter().enumerate() {
            let dst = if c == 0 { &mut self.qa } else { &mut self.qb };
            dst[0][k] = q.x;
            dst[1][k] = q.y;
            dst[2][k] = q.z;
            dst[3][k] = q.w;
        }
        for c in 0..3 {
            self.ha[c][k] = ha[c];
            self.hb[c][k] = hb[c];
        }
        self.len += 1;
    }

    /// Half extents of lane `k`'s boxes.
    #[inline]
    pub fn half_extents(&self, k: usize) -> (Vec3, Vec3) {
        let h = |f: &[[f32; BUNDLE]; 3]| Vec3::new(f[0][k], f[1][k], f[2][k]);
        (h(&self.ha), h(&self.hb))
    }

    /// Tests every pair pushed. Unused lanes repeat lane 0 (finite values,
    /// ignored).
    pub fn test(&mut self, max_separation: f32) -> Sat<F32x16> {
        let n = self.len.max(1);
        // Only a part-filled bundle needs the padding.
        for field in self
            .pa
            .iter_mut()
            .chain(&mut self.qa)
            .chain(&mut self.ha)
            .chain(&mut self.pb)
            .chain(&mut self.qb)
            .chain(&mut self.hb)
        {
            let first = field[0];
            field[n..].fill(first);
        }
        let v = |f: &[[f32; BUNDLE]; 3]| V3::new(F32x16(f[0]), F32x16(f[1]), F32x16(f[2]));
        let q = |f: &[[f32; BUNDLE]; 4]| Q4 {
            x: F32x16(f[0]),
            y: F32x16(f[1]),
            z: F32x16(f[2]),
            w: F32x16(f[3]),
        };
        let h = |f: &[[f32; BUNDLE]; 3]| [F32x16(f[0]), F32x16(f[1]), F32x16(f[2])];
        let (ua, ub) = (axes(q(&self.qa)), axes(q(&self.qb)));
        sat(
            v(&self.pa),
            ua,
            h(&self.ha),
            v(&self.pb),
            ub,
            h(&self.hb),
            F32x16::splat(max_separation),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::TestRng;

    #[test]
    fn axes_are_glams_from_quat_bit_for_bit() {
        let mut rng = TestRng(3);
        for _ in 0..10_000 {
            let q = rng.quat();
            let m = crate::math::Mat3::from_quat(q);
            let a = axes(Q4 {
                x: q.x,
                y: q.y,
                z: q.z,
                w: q.w,
            });
            for (col, ax) in [m.x_axis, m.y_axis, m.z_axis].iter().zip(&a) {
                assert_eq!(col.to_array(), [ax.x, ax.y, ax.z]);
            }
        }
    }

    /// Random pairs, from deep overlap to apart, many with aligned axes
    /// (resting stacks: parallel edges, equal face separations): every lane
    /// of the wide test gives the verdict of the `f32` instantiation (the
    /// test `collide_box_box` runs).
    #[test]
    fn every_path_gives_the_scalar_verdict() {
        let mut rng = TestRng(17);
        let mut seen = [0usize; 4];
        for round in 0..4000 {
            let mut batch = BoxPairs::new();
            let mut pairs = Vec::new();
            for _ in 0..1 + rng.below(BUNDLE) {
                let aligned = rng.below(3) == 0;
                let qa = if aligned { Quat::IDENTITY } else { rng.quat() };
                let qb = if aligned {
                    Quat::from_rotation_y([0.0, 0.5 * core::f32::consts::PI, 0.01][rng.below(3)])
                } else {
                    rng.quat()
                };
                let h = |rng: &mut TestRng| {
                    Vec3::new(
                        0.05 + rng.f(0.0, 1.0),
                        0.05 + rng.f(0.0, 1.0),
                        0.05 + rng.f(0.0, 1.0),
                    )
                };
                let (ha, hb) = (h(&mut rng), h(&mut rng));
                let pa = Vec3::new(rng.f(0.0, 1.0), rng.f(0.0, 1.0), rng.f(0.0, 1.0)) * 4.0;
                let spread = if aligned {
                    Vec3::new(0.1, 3.0, 0.1)
                } else {
                    Vec3::splat(3.0)
                };
                let pb = pa
                    + Vec3::new(
                        rng.f(0.0, 1.0) - 0.5,
                        rng.f(0.0, 1.0) - 0.5,
                        rng.f(0.0, 1.0) - 0.5,
                    ) * spread;
                batch.push(pa, qa, ha, pb, qb, hb);
                pairs.push((pa, qa, ha, pb, qb, hb));
            }
            let m = 0.02;
            let wide = batch.test(m);
            for (k, &(pa, qa, ha, pb, qb, hb)) in pairs.iter().enumerate() {
                let (a, b) = (Obb::new(pa, qa, ha), Obb::new(pb, qb, hb));
                let expected = sat_of_boxes(&a, &b, m).verdict();
                seen[match expected {
                    Verdict::Separated => 0,
                    Verdict::Touching(Feature::FaceA(_)) => 1,
                    Verdict::Touching(Feature::FaceB(_)) => 2,
                    Verdict::Touching(Feature::Edge(..)) => 3,
                }] += 1;
                let lane = wide.lane(k);
                assert_eq!(lane.verdict(), expected, "round {round} lane {k}");
                // The gaps the body-pair cache keeps, bit for bit.
                let one = sat_of_boxes(&a, &b, m);
                assert_eq!(
                    lane.face_separations().0.to_bits(),
                    one.face_separations().0.to_bits()
                );
                assert_eq!(
                    lane.face_separations().1.to_bits(),
                    one.face_separations().1.to_bits()
                );
            }
        }
        assert!(
            seen.iter().all(|&n| n > 100),
            "every verdict exercised: {seen:?}"
        );
    }
}
