use crate::F32s;
use crate::{fmadd, LANES};

/// [`LANES`] 3-vectors, one per lane, stored as x, y and z registers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec3Lanes {
    pub x: F32s,
    pub y: F32s,
    pub z: F32s,
}

/// [`LANES`] quaternions (x, y, z, w), one per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QuatLanes {
    pub x: F32s,
    pub y: F32s,
    pub z: F32s,
    pub w: F32s,
}

impl Vec3Lanes {
    pub fn new(x: [f32; LANES], y: [f32; LANES], z: [f32; LANES]) -> Self {
        Self {
            x: F32s::new(x),
            y: F32s::new(y),
            z: F32s::new(z),
        }
    }

    pub fn splat(v: [f32; 3]) -> Self {
        Self {
            x: F32s::splat(v[0]),
            y: F32s::splat(v[1]),
            z: F32s::splat(v[2]),
        }
    }

    /// Lane `i` as an array.
    pub fn lane(&self, i: usize) -> [f32; 3] {
        [
            self.x.to_array()[i],
            self.y.to_array()[i],
            self.z.to_array()[i],
        ]
    }

    #[inline]
    pub fn scale(self, s: F32s) -> Self {
        Self {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }

    /// `self * s + acc`, fused where the target has FMA.
    #[inline]
    pub fn mul_add(self, s: F32s, acc: Self) -> Self {
        Self {
            x: self.x.mul_add(s, acc.x),
            y: self.y.mul_add(s, acc.y),
            z: self.z.mul_add(s, acc.z),
        }
    }

    /// Dot product: `x·x' + (y·y' + z·z')` with two fused steps.
    #[inline]
    pub fn dot(self, o: Self) -> F32s {
        self.x.mul_add(o.x, self.y.mul_add(o.y, self.z * o.z))
    }

    #[inline]
    pub fn cross(self, o: Self) -> Self {
        Self {
            x: self.y * o.z - self.z * o.y,
            y: self.z * o.x - self.x * o.z,
            z: self.x * o.y - self.y * o.x,
        }
    }

    // ---- scalar twins (one lane) ----

    pub fn dot_scalar(a: [f32; 3], b: [f32; 3]) -> f32 {
        fmadd(a[0], b[0], fmadd(a[1], b[1], a[2] * b[2]))
    }

    pub fn cross_scalar(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }

    pub fn mul_add_scalar(a: [f32; 3], s: f32, acc: [f32; 3]) -> [f32; 3] {
        [
            fmadd(a[0], s, acc[0]),
            fmadd(a[1], s, acc[1]),
            fmadd(a[2], s, acc[2]),
        ]
    }
}

impl core::ops::Add for Vec3Lanes {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        Self {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}

impl core::ops::Sub for Vec3Lanes {
    type Output = Self;
    #[inline]
    fn sub(self, o: Self) -> Self {
        Self {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}

impl QuatLanes {
    pub fn new(x: [f32; LANES], y: [f32; LANES], z: [f32; LANES], w: [f32; LANES]) -> Self {
        Self {
            x: F32s::new(x),
            y: F32s::new(y),
            z: F32s::new(z),
            w: F32s::new(w),
        }
    }

    fn xyz(self) -> Vec3Lanes {
        Vec3Lanes {
            x: self.x,
            y: self.y,
            z: self.z,
        }
    }

    /// Rotates `v` by the (unit) quaternion: `t = 2 (q × v)`,
    /// `v' = v + w t + q × t`.
    #[inline]
    pub fn rotate(self, v: Vec3Lanes) -> Vec3Lanes {
        let q = self.xyz();
        let t = q.cross(v).scale(F32s::splat(2.0));
        t.mul_add(self.w, v) + q.cross(t)
    }

    /// Scalar twin of [`QuatLanes::rotate`]; `q` is `[x, y, z, w]`.
    pub fn rotate_scalar(q: [f32; 4], v: [f32; 3]) -> [f32; 3] {
        let qv = [q[0], q[1], q[2]];
        let c = Vec3Lanes::cross_scalar(qv, v);
        let t = [c[0] * 2.0, c[1] * 2.0, c[2] * 2.0];
        let a = Vec3Lanes::mul_add_scalar(t, q[3], v);
        let b = Vec3Lanes::cross_scalar(qv, t);
        [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testrng::Rng;

    const CASES: usize = 10_000;

    fn bits3(v: [f32; 3]) -> [u32; 3] {
        v.map(f32::to_bits)
    }

    fn random_lanes(rng: &mut Rng) -> ([[f32; 3]; LANES], Vec3Lanes) {
        let x = rng.lanes(-100.0, 100.0);
        let y = rng.lanes(-100.0, 100.0);
        let z = rng.lanes(-100.0, 100.0);
        (
            core::array::from_fn(|i| [x[i], y[i], z[i]]),
            Vec3Lanes::new(x, y, z),
        )
    }

    #[test]
    fn dot_cross_mul_add_match_scalar_bit_for_bit() {
        let mut rng = Rng(1);
        for _ in 0..CASES / LANES + 1 {
            let (a, la) = random_lanes(&mut rng);
            let (b, lb) = random_lanes(&mut rng);
            let s = rng.lanes(-3.0, 3.0);
            let dot = la.dot(lb).to_array();
            let cross = la.cross(lb);
            let fma = la.mul_add(F32s::new(s), lb);
            for i in 0..LANES {
                assert_eq!(
                    dot[i].to_bits(),
                    Vec3Lanes::dot_scalar(a[i], b[i]).to_bits()
                );
                assert_eq!(
                    bits3(cross.lane(i)),
                    bits3(Vec3Lanes::cross_scalar(a[i], b[i]))
                );
                assert_eq!(
                    bits3(fma.lane(i)),
                    bits3(Vec3Lanes::mul_add_scalar(a[i], s[i], b[i]))
                );
            }
        }
    }

    #[test]
    fn quaternion_rotate_matches_scalar_and_preserves_length() {
        let mut rng = Rng(2);
        for _ in 0..CASES / LANES + 1 {
            let mut q = [[0.0f32; 4]; LANES];
            for qi in q.iter_mut() {
                let raw = [
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                ];
                let n = raw.iter().map(|c| c * c).sum::<f32>().sqrt().max(1e-3);
                *qi = raw.map(|c| c / n);
            }
            let lq = QuatLanes::new(
                q.map(|c| c[0]),
                q.map(|c| c[1]),
                q.map(|c| c[2]),
                q.map(|c| c[3]),
            );
            let (v, lv) = random_lanes(&mut rng);
            let r = lq.rotate(lv);
            for i in 0..LANES {
                let s = QuatLanes::rotate_scalar(q[i], v[i]);
                assert_eq!(bits3(r.lane(i)), bits3(s));
                let len = |a: [f32; 3]| (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
                let (l0, l1) = (len(v[i]), len(s));
                assert!((l0 - l1).abs() <= 1e-4 * l0.max(1.0), "{l0} vs {l1}");
            }
        }
    }

    #[test]
    fn rotate_quarter_turn_about_y() {
        let h = core::f32::consts::FRAC_1_SQRT_2;
        let r = QuatLanes::rotate_scalar([0.0, h, 0.0, h], [1.0, 0.0, 0.0]);
        assert!((r[0]).abs() < 1e-6 && (r[2] + 1.0).abs() < 1e-6, "{r:?}");
    }
}
