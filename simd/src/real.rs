//! One source for scalar and wide math: [`Real`] is implemented by `f32`
//! (one lane) and [`F32x16`] (every lane), and code written once over
//! `R: Real` (with [`V3`] and [`M3`]) computes, lane by lane, exactly what
//! the `f32` instantiation computes: every operation here is a single
//! IEEE-754 operation (add, sub, mul, div, sqrt, compare) or a select, in
//! the same order on both sides, and nothing is fused. Rapier's parts
//! generic over `SimdRealCopy`, or Box2D's one definition behind its scalar
//! and wide paths, are the model.
//!
//! [`Lane`] says where the values of one item come from: [`Wide`] loads all
//! lanes of a `[f32; LANES]` field, [`One`] one lane of it.

use crate::bundle::{F32x16, F32x8, M32x16, M32x8, HALF_BUNDLE};
use crate::LANES;
use core::ops::{Add, AddAssign, Div, Mul, Neg, Sub, SubAssign};

/// A float, or [`LANES`] of them, with lane-wise selects for branches.
pub trait Real:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
{
    /// A condition per lane.
    type Mask: Copy;
    fn splat(v: f32) -> Self;
    fn sqrt(self) -> Self;
    fn gt(self, o: Self) -> Self::Mask;
    fn lt(self, o: Self) -> Self::Mask;
    fn ge(self, o: Self) -> Self::Mask;
    fn le(self, o: Self) -> Self::Mask;
    fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    fn or(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    fn not(a: Self::Mask) -> Self::Mask;
    /// `t` where `m` holds, else `f`.
    fn select(m: Self::Mask, t: Self, f: Self) -> Self;
    /// Whether `m` holds in any lane.
    fn any(m: Self::Mask) -> bool;
    /// Whether `m` holds in every lane.
    fn all(m: Self::Mask) -> bool;
    /// Lanes that are neither infinite nor NaN.
    fn finite(self) -> Self::Mask;
    fn abs(self) -> Self;

    #[inline(always)]
    fn zero() -> Self {
        Self::splat(0.0)
    }
    /// `self > o ? self : o` (so `max(NaN, o)` is `o`).
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        Self::select(self.gt(o), self, o)
    }
    /// `self < o ? self : o`.
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        Self::select(self.lt(o), self, o)
    }
}

impl Real for f32 {
    type Mask = bool;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        v
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn gt(self, o: Self) -> bool {
        self > o
    }
    #[inline(always)]
    fn lt(self, o: Self) -> bool {
        self < o
    }
    #[inline(always)]
    fn ge(self, o: Self) -> bool {
        self >= o
    }
    #[inline(always)]
    fn le(self, o: Self) -> bool {
        self <= o
    }
    #[inline(always)]
    fn and(a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    fn or(a: bool, b: bool) -> bool {
        a | b
    }
    #[inline(always)]
    fn not(a: bool) -> bool {
        !a
    }
    #[inline(always)]
    fn select(m: bool, t: Self, f: Self) -> Self {
        if m {
            t
        } else {
            f
        }
    }
    #[inline(always)]
    fn any(m: bool) -> bool {
        m
    }
    #[inline(always)]
    fn all(m: bool) -> bool {
        m
    }
    #[inline(always)]
    fn finite(self) -> bool {
        self.is_finite()
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32::abs(self)
    }
}

/// `Real` for a lane vector type and its mask (both widths, one source).
macro_rules! real_lanes {
    ($f:ident, $m:ident) => {
        impl Real for $f {
            type Mask = $m;
            #[inline(always)]
            fn splat(v: f32) -> Self {
                $f::splat(v)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $f::sqrt(self)
            }
            #[inline(always)]
            fn gt(self, o: Self) -> $m {
                $f::gt(self, o)
            }
            #[inline(always)]
            fn lt(self, o: Self) -> $m {
                $f::lt(self, o)
            }
            #[inline(always)]
            fn ge(self, o: Self) -> $m {
                $f::ge(self, o)
            }
            #[inline(always)]
            fn le(self, o: Self) -> $m {
                $f::le(self, o)
            }
            #[inline(always)]
            fn and(a: $m, b: $m) -> $m {
                a.and(b)
            }
            #[inline(always)]
            fn or(a: $m, b: $m) -> $m {
                a.or(b)
            }
            #[inline(always)]
            fn not(a: $m) -> $m {
                !a
            }
            #[inline(always)]
            fn select(m: $m, t: Self, f: Self) -> Self {
                $f::select(m, t, f)
            }
            #[inline(always)]
            fn any(m: $m) -> bool {
                m.any()
            }
            #[inline(always)]
            fn all(m: $m) -> bool {
                m.all()
            }
            #[inline(always)]
            fn finite(self) -> $m {
                $f::finite(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $f::abs(self)
            }
        }
    };
}
real_lanes!(F32x16, M32x16);
real_lanes!(F32x8, M32x8);

/// A 3-vector of [`Real`]s, with glam's operation order (so the `f32`
/// instantiation gives glam's `Vec3` results bit for bit).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct V3<R> {
    pub x: R,
    pub y: R,
    pub z: R,
}

impl<R: Real> V3<R> {
    #[inline(always)]
    pub fn new(x: R, y: R, z: R) -> Self {
        Self { x, y, z }
    }
    #[inline(always)]
    pub fn zero() -> Self {
        Self::new(R::zero(), R::zero(), R::zero())
    }
    #[inline(always)]
    pub fn splat(v: [f32; 3]) -> Self {
        Self::new(R::splat(v[0]), R::splat(v[1]), R::splat(v[2]))
    }
    /// `(x x') + (y y') + (z z')`, left to right (glam's `dot`).
    #[inline(always)]
    pub fn dot(self, o: Self) -> R {
        (self.x * o.x) + (self.y * o.y) + (self.z * o.z)
    }
    /// glam's `cross`, term for term.
    #[inline(always)]
    pub fn cross(self, o: Self) -> Self {
        Self::new(
            self.y * o.z - o.y * self.z,
            self.z * o.x - o.z * self.x,
            self.x * o.y - o.x * self.y,
        )
    }
    /// Each component divided by `s` (glam's `Vec3 / f32`).
    #[inline(always)]
    pub fn div_by(self, s: R) -> Self {
        Self::new(self.x / s, self.y / s, self.z / s)
    }
    #[inline(always)]
    pub fn scale(self, s: R) -> Self {
        Self::new(self.x * s, self.y * s, self.z * s)
    }
    #[inline(always)]
    pub fn length_squared(self) -> R {
        self.dot(self)
    }
    /// Lane-wise `t` where `m` holds, else `f`.
    #[inline(always)]
    pub fn select(m: R::Mask, t: Self, f: Self) -> Self {
        Self::new(
            R::select(m, t.x, f.x),
            R::select(m, t.y, f.y),
            R::select(m, t.z, f.z),
        )
    }
}

impl<R: Real> Add for V3<R> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}

impl<R: Real> Sub for V3<R> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}

impl<R: Real> Neg for V3<R> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self::new(-self.x, -self.y, -self.z)
    }
}

impl<R: Real> AddAssign for V3<R> {
    #[inline(always)]
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}

impl<R: Real> SubAssign for V3<R> {
    #[inline(always)]
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}

/// A 3×3 matrix of [`Real`]s by columns, with glam's `Mat3 * Vec3` order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct M3<R> {
    pub x_axis: V3<R>,
    pub y_axis: V3<R>,
    pub z_axis: V3<R>,
}

/// A rotation quaternion `(x, y, z, w)` of [`Real`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Q4<R> {
    pub x: R,
    pub y: R,
    pub z: R,
    pub w: R,
}

/// The Hamilton product `self ⊗ o` (the rotation `o`, then `self`), term
/// for term as the kernel's scalar `math::quat_mul`.
impl<R: Real> core::ops::Mul for Q4<R> {
    type Output = Self;

    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        let (x0, y0, z0, w0) = (self.x, self.y, self.z, self.w);
        let (x1, y1, z1, w1) = (o.x, o.y, o.z, o.w);
        Q4 {
            x: w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1,
            y: w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1,
            z: w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1,
            w: w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1,
        }
    }
}

impl<R: Real> Q4<R> {
    /// `q v q*` as glam's `Quat::mul_vec3` computes it without FMA:
    /// `(v (w² − b·b) + b (2 v·b)) + (b × v)(2w)`, `b = (x, y, z)`. glam
    /// fuses two of these products where it is compiled with FMA, which
    /// would make results depend on the build, so the kernel rotates with
    /// this.
    #[inline(always)]
    pub fn rotate(self, v: V3<R>) -> V3<R> {
        let b = V3::new(self.x, self.y, self.z);
        let two = R::splat(2.0);
        let b2 = b.dot(b);
        v.scale(self.w * self.w - b2) + b.scale(v.dot(b) * two) + b.cross(v).scale(self.w * two)
    }

    /// The inverse of a unit quaternion.
    #[inline(always)]
    pub fn conj(self) -> Self {
        Q4 {
            x: -self.x,
            y: -self.y,
            z: -self.z,
            w: self.w,
        }
    }

    /// `q` where `m` holds, else `-q` (the same rotation).
    #[inline(always)]
    pub fn negate_unless(self, m: R::Mask) -> Self {
        Q4 {
            x: R::select(m, self.x, -self.x),
            y: R::select(m, self.y, -self.y),
            z: R::select(m, self.z, -self.z),
            w: R::select(m, self.w, -self.w),
        }
    }

    /// The rotated x axis: the first column of the rotation matrix.
    #[inline(always)]
    pub fn axis_x(self) -> V3<R> {
        let (one, two) = (R::splat(1.0), R::splat(2.0));
        let (x, y, z, w) = (self.x, self.y, self.z, self.w);
        V3::new(
            one - two * (y * y + z * z),
            two * (x * y + w * z),
            two * (x * z - w * y),
        )
    }

    /// The rotated y axis (second column).
    #[inline(always)]
    pub fn axis_y(self) -> V3<R> {
        let (one, two) = (R::splat(1.0), R::splat(2.0));
        let (x, y, z, w) = (self.x, self.y, self.z, self.w);
        V3::new(
            two * (x * y - w * z),
            one - two * (x * x + z * z),
            two * (y * z + w * x),
        )
    }

    /// The rotated z axis (third column).
    #[inline(always)]
    pub fn axis_z(self) -> V3<R> {
        let (one, two) = (R::splat(1.0), R::splat(2.0));
        let (x, y, z, w) = (self.x, self.y, self.z, self.w);
        V3::new(
            two * (x * z + w * y),
            two * (y * z - w * x),
            one - two * (x * x + y * y),
        )
    }
}

impl<R: Real> M3<R> {
    /// glam's `Mat3::determinant`: `x · (y × z)`.
    #[inline(always)]
    pub fn determinant(&self) -> R {
        self.x_axis.dot(self.y_axis.cross(self.z_axis))
    }
    /// glam's `Mat3::inverse`, term for term (no check: see
    /// [`is_finite`](Self::is_finite)).
    #[inline(always)]
    pub fn inverse(&self) -> Self {
        let tmp0 = self.y_axis.cross(self.z_axis);
        let tmp1 = self.z_axis.cross(self.x_axis);
        let tmp2 = self.x_axis.cross(self.y_axis);
        let inv_det = R::splat(1.0) / self.x_axis.dot(tmp0);
        let (a, b, c) = (
            tmp0.scale(inv_det),
            tmp1.scale(inv_det),
            tmp2.scale(inv_det),
        );
        // transpose
        M3 {
            x_axis: V3::new(a.x, b.x, c.x),
            y_axis: V3::new(a.y, b.y, c.y),
            z_axis: V3::new(a.z, b.z, c.z),
        }
    }
    /// Lanes whose nine entries are all finite.
    #[inline(always)]
    pub fn finite(&self) -> R::Mask {
        let f = |v: V3<R>| R::and(R::and(v.x.finite(), v.y.finite()), v.z.finite());
        R::and(R::and(f(self.x_axis), f(self.y_axis)), f(self.z_axis))
    }
    /// Column-wise sum (glam's `Mat3 + Mat3`).
    #[inline(always)]
    pub fn add(&self, o: &Self) -> Self {
        M3 {
            x_axis: self.x_axis + o.x_axis,
            y_axis: self.y_axis + o.y_axis,
            z_axis: self.z_axis + o.z_axis,
        }
    }
    /// `a bᵀ`: columns `a b.x`, `a b.y`, `a b.z`.
    #[inline(always)]
    pub fn outer(a: V3<R>, b: V3<R>) -> Self {
        M3 {
            x_axis: a.scale(b.x),
            y_axis: a.scale(b.y),
            z_axis: a.scale(b.z),
        }
    }

    /// `(x_axis v.x + y_axis v.y) + z_axis v.z` (glam's `mul_vec3`).
    #[inline(always)]
    pub fn mul_vec(&self, v: V3<R>) -> V3<R> {
        self.x_axis.scale(v.x) + self.y_axis.scale(v.y) + self.z_axis.scale(v.z)
    }
}

/// `atan2(y, x)` in radians, in `[-π, π]`, from the operations of
/// [`Real`] alone, so every lane of a bundle computes what one lane
/// computes (libm's `atan2` differs between platforms and is not a lane
/// operation). The ratio of the smaller to the larger magnitude is brought
/// into `[0, tan(π/8)]` (`atan a = π/4 + atan((a − 1)/(a + 1))` above it),
/// where the odd Taylor series to `u¹³` is within 2e-7 rad; the octant
/// then follows from selects. `atan2(0, 0)` is 0.
#[inline(always)]
pub fn atan2<R: Real>(y: R, x: R) -> R {
    const TAN_PI_8: f32 = 0.414_213_57;
    let zero = R::zero();
    let one = R::splat(1.0);
    let (ay, ax) = (y.abs(), x.abs());
    let steep = ay.gt(ax);
    let (num, den) = (R::select(steep, ax, ay), R::select(steep, ay, ax));
    // 0/0: a ratio of 0 (den is 0 only when both are)
    let a = R::select(den.gt(zero), num / den, zero);
    let far = a.gt(R::splat(TAN_PI_8));
    let u = R::select(far, (a - one) / (a + one), a);
    let u2 = u * u;
    let mut p = R::splat(1.0 / 13.0);
    for c in [
        -1.0 / 11.0,
        1.0 / 9.0,
        -1.0 / 7.0,
        1.0 / 5.0,
        -1.0 / 3.0,
        1.0,
    ] {
        p = p * u2 + R::splat(c);
    }
    let base = u * p;
    let r = R::select(far, R::splat(core::f32::consts::FRAC_PI_4) + base, base);
    let r = R::select(steep, R::splat(core::f32::consts::FRAC_PI_2) - r, r);
    let r = R::select(x.lt(zero), R::splat(core::f32::consts::PI) - r, r);
    R::select(y.lt(zero), -r, r)
}

/// Which lanes of `[f32; LANES]` fields an item's values live in.
pub trait Lane: Copy {
    type R: Real;
    fn load(self, field: &[f32; LANES]) -> Self::R;
    fn store(self, field: &mut [f32; LANES], v: Self::R);
    #[inline(always)]
    fn load3(self, f: &[[f32; LANES]; 3]) -> V3<Self::R> {
        V3::new(self.load(&f[0]), self.load(&f[1]), self.load(&f[2]))
    }
    #[inline(always)]
    fn store3(self, f: &mut [[f32; LANES]; 3], v: V3<Self::R>) {
        self.store(&mut f[0], v.x);
        self.store(&mut f[1], v.y);
        self.store(&mut f[2], v.z);
    }
}

/// Every lane at once.
#[derive(Clone, Copy, Debug)]
pub struct Wide;

/// One lane.
#[derive(Clone, Copy, Debug)]
pub struct One(pub usize);

/// Half a bundle: lanes `8h..8h + 8` of each field, for `Half(h)`, `h`
/// in `0..2`.
#[derive(Clone, Copy, Debug)]
pub struct Half(pub usize);

impl Lane for Wide {
    type R = F32x16;
    #[inline(always)]
    fn load(self, field: &[f32; LANES]) -> F32x16 {
        F32x16(*field)
    }
    #[inline(always)]
    fn store(self, field: &mut [f32; LANES], v: F32x16) {
        *field = v.0;
    }
}

impl Lane for Half {
    type R = F32x8;
    #[inline(always)]
    fn load(self, field: &[f32; LANES]) -> F32x8 {
        let h = &field[HALF_BUNDLE * self.0..][..HALF_BUNDLE];
        F32x8(h.try_into().expect("half a bundle"))
    }
    #[inline(always)]
    fn store(self, field: &mut [f32; LANES], v: F32x8) {
        field[HALF_BUNDLE * self.0..][..HALF_BUNDLE].copy_from_slice(&v.0);
    }
}

impl Lane for One {
    type R = f32;
    #[inline(always)]
    fn load(self, field: &[f32; LANES]) -> f32 {
        field[self.0]
    }
    #[inline(always)]
    fn store(self, field: &mut [f32; LANES], v: f32) {
        field[self.0] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testrng::Rng;

    /// A little of everything, written once: the wide result of each lane
    /// equals the scalar result on that lane's inputs, bit for bit.
    fn kernel<L: Lane>(
        l: L,
        a: &[[f32; LANES]; 3],
        b: &[[f32; LANES]; 3],
        s: &[f32; LANES],
    ) -> V3<L::R> {
        let (va, vb, k) = (l.load3(a), l.load3(b), l.load(s));
        let c = va.cross(vb).scale(k) - vb;
        let d = va.dot(c);
        let m = M3 {
            x_axis: va,
            y_axis: vb,
            z_axis: c,
        };
        let r = m.mul_vec(V3::new(d, k, d / (k * k + L::R::splat(1.0))));
        let big = d.gt(L::R::splat(0.0));
        let clamped = (r.x.max(-k)).min(k.sqrt().max(L::R::zero()));
        V3::select(big, V3::new(clamped, r.y, r.z), -r)
    }

    #[test]
    fn one_source_gives_bit_identical_lanes() {
        let mut rng = Rng(17);
        for _ in 0..2000 {
            let a = [
                rng.lanes(-9.0, 9.0),
                rng.lanes(-9.0, 9.0),
                rng.lanes(-9.0, 9.0),
            ];
            let b = [
                rng.lanes(-9.0, 9.0),
                rng.lanes(-9.0, 9.0),
                rng.lanes(-9.0, 9.0),
            ];
            let s = rng.lanes(-2.0, 4.0);
            let w = kernel(Wide, &a, &b, &s);
            let (x, y, z) = (w.x.to_array(), w.y.to_array(), w.z.to_array());
            for i in 0..LANES {
                let one = kernel(One(i), &a, &b, &s);
                assert_eq!(
                    [x[i].to_bits(), y[i].to_bits(), z[i].to_bits()],
                    [one.x.to_bits(), one.y.to_bits(), one.z.to_bits()],
                    "lane {i}"
                );
            }
        }
    }

    #[test]
    fn atan2_is_close_to_libm_everywhere() {
        let mut rng = Rng(11);
        let mut worst = 0f32;
        for k in 0..200_000 {
            let (y, x) = if k % 4 == 0 {
                // near the axes and the diagonals
                let a = rng.range(-4.0, 4.0);
                (a.sin(), a.cos())
            } else {
                (rng.range(-100.0, 100.0), rng.range(-100.0, 100.0))
            };
            let e = (atan2(y, x) - y.atan2(x)).abs();
            worst = worst.max(e);
        }
        assert!(worst < 5e-7, "worst error {worst} rad");
        assert_eq!(atan2(0.0f32, 0.0), 0.0);
        assert_eq!(atan2(0.0f32, -1.0), core::f32::consts::PI);
        assert!((atan2(1.0f32, 0.0) - core::f32::consts::FRAC_PI_2).abs() < 1e-7);
        // one source: every lane equals the scalar result on its inputs
        let ys = rng.lanes(-3.0, 3.0);
        let xs = rng.lanes(-3.0, 3.0);
        let w = atan2(F32x16(ys), F32x16(xs)).to_array();
        for i in 0..LANES {
            assert_eq!(w[i].to_bits(), atan2(ys[i], xs[i]).to_bits());
        }
    }

    #[test]
    fn quaternion_helpers_match_glam() {
        let mut rng = Rng(3);
        for _ in 0..2000 {
            let a = glam::Quat::from_xyzw(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            )
            .normalize();
            let b = glam::Quat::from_xyzw(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            )
            .normalize();
            let q = |g: glam::Quat| Q4 {
                x: g.x,
                y: g.y,
                z: g.z,
                w: g.w,
            };
            let m = q(a) * q(b);
            let g = a * b;
            assert!((glam::Quat::from_xyzw(m.x, m.y, m.z, m.w) - g).length() < 1e-6);
            let r = glam::Mat3::from_quat(a);
            let close =
                |v: V3<f32>, g: glam::Vec3| (glam::Vec3::new(v.x, v.y, v.z) - g).length() < 1e-6;
            assert!(close(q(a).axis_x(), r.x_axis));
            assert!(close(q(a).axis_y(), r.y_axis));
            assert!(close(q(a).axis_z(), r.z_axis));
            let c = q(a).conj() * q(a);
            assert!((c.w - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn v3_matches_glam_bit_for_bit() {
        let mut rng = Rng(5);
        for _ in 0..5000 {
            let a = glam::Vec3::new(
                rng.range(-9.0, 9.0),
                rng.range(-9.0, 9.0),
                rng.range(-9.0, 9.0),
            );
            let b = glam::Vec3::new(
                rng.range(-9.0, 9.0),
                rng.range(-9.0, 9.0),
                rng.range(-9.0, 9.0),
            );
            let c = glam::Vec3::new(
                rng.range(-9.0, 9.0),
                rng.range(-9.0, 9.0),
                rng.range(-9.0, 9.0),
            );
            let v = |g: glam::Vec3| V3::<f32>::new(g.x, g.y, g.z);
            assert_eq!(v(a).dot(v(b)).to_bits(), a.dot(b).to_bits());
            let cr = v(a).cross(v(b));
            let g = a.cross(b);
            assert_eq!(
                [cr.x, cr.y, cr.z].map(f32::to_bits),
                g.to_array().map(f32::to_bits)
            );
            let m = glam::Mat3::from_cols(a, b, c);
            let mm = M3 {
                x_axis: v(a),
                y_axis: v(b),
                z_axis: v(c),
            };
            let r = mm.mul_vec(v(b));
            let gr = m * b;
            assert_eq!(
                [r.x, r.y, r.z].map(f32::to_bits),
                gr.to_array().map(f32::to_bits)
            );
            let bits = |x: V3<f32>| [x.x, x.y, x.z].map(f32::to_bits);
            assert_eq!(mm.determinant().to_bits(), m.determinant().to_bits());
            let (i, gi) = (mm.inverse(), m.inverse());
            assert_eq!(bits(i.x_axis), gi.x_axis.to_array().map(f32::to_bits));
            assert_eq!(bits(i.y_axis), gi.y_axis.to_array().map(f32::to_bits));
            assert_eq!(bits(i.z_axis), gi.z_axis.to_array().map(f32::to_bits));
            let q = glam::Quat::from_xyzw(a.x, a.y, a.z, c.x).normalize();
            let qq = Q4 {
                x: q.x,
                y: q.y,
                z: q.z,
                w: q.w,
            };
            // glam fuses here where compiled with FMA; without FMA it
            // computes the same expression as `rotate`.
            if !cfg!(target_feature = "fma") {
                assert_eq!(bits(qq.rotate(v(b))), (q * b).to_array().map(f32::to_bits));
            }
            let (w, bv) = (q.w, glam::Vec3::new(q.x, q.y, q.z));
            let expect =
                b * (w * w - bv.dot(bv)) + bv * (b.dot(bv) * 2.0) + bv.cross(b) * (w * 2.0);
            assert_eq!(bits(qq.rotate(v(b))), expect.to_array().map(f32::to_bits));
        }
    }
}
