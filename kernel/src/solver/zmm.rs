//! [`Zmm16`]: a bundle's 16 lanes in one AVX-512 register, for the solver's
//! AVX-512 path (`dispatch.rs`).
//!
//! The portable bundle (`archipelago_simd::F32x16`, a plain array) is
//! vectorized by LLVM, but on AVX-512 CPUs LLVM's tuning prefers 256-bit
//! vectors for code it vectorizes itself, and the velocity solve then ran
//! 25% slower than with one explicit 512-bit instruction per operation;
//! hence this type. It computes exactly what `F32x16` and `f32` compute: one
//! IEEE-754 operation per lane (negation flips the sign bit, as `-x` does;
//! compares are ordered, so NaN compares false), nothing fused.
//!
//! Every method calls AVX-512F intrinsics. A `Zmm16` is only ever made
//! inside a function the dispatcher enters after
//! `is_x86_feature_detected!("avx512f")` returned true (the type is private
//! to the solver; [`WideZmm`] is only named in those functions), and each
//! method is `#[inline(always)]`, so it is compiled into that
//! `#[target_feature(enable = "avx512f")]` function.

use archipelago_simd::{Lane, Real, LANES};
use core::arch::x86_64::*;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// 16 lanes in a `zmm` register.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Zmm16(pub __m512);

/// Every lane of a bundle, in a [`Zmm16`] (the AVX-512 twin of
/// `archipelago_simd::Wide`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WideZmm;

// SAFETY (every `unsafe` block in this file): the intrinsics need AVX-512F,
// which the running CPU has whenever a `Zmm16` exists (module doc); loads
// and stores go through `&[f32; 16]` references, 64 valid bytes.

impl Lane for WideZmm {
    type R = Zmm16;
    #[inline(always)]
    fn load(self, field: &[f32; LANES]) -> Zmm16 {
        unsafe { Zmm16(_mm512_loadu_ps(field.as_ptr())) }
    }
    #[inline(always)]
    fn store(self, field: &mut [f32; LANES], v: Zmm16) {
        unsafe { _mm512_storeu_ps(field.as_mut_ptr(), v.0) }
    }
}

macro_rules! binary {
    ($tr:ident, $f:ident, $intr:ident, $tra:ident, $fa:ident) => {
        impl $tr for Zmm16 {
            type Output = Self;
            #[inline(always)]
            fn $f(self, o: Self) -> Self {
                unsafe { Zmm16($intr(self.0, o.0)) }
            }
        }
        impl $tra for Zmm16 {
            #[inline(always)]
            fn $fa(&mut self, o: Self) {
                *self = $tr::$f(*self, o);
            }
        }
    };
}
binary!(Add, add, _mm512_add_ps, AddAssign, add_assign);
binary!(Sub, sub, _mm512_sub_ps, SubAssign, sub_assign);
binary!(Mul, mul, _mm512_mul_ps, MulAssign, mul_assign);
binary!(Div, div, _mm512_div_ps, DivAssign, div_assign);

impl Neg for Zmm16 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        unsafe {
            Zmm16(_mm512_castsi512_ps(_mm512_xor_si512(
                _mm512_castps_si512(self.0),
                _mm512_set1_epi32(i32::MIN),
            )))
        }
    }
}

impl Real for Zmm16 {
    type Mask = __mmask16;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        unsafe { Zmm16(_mm512_set1_ps(v)) }
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        unsafe { Zmm16(_mm512_sqrt_ps(self.0)) }
    }
    #[inline(always)]
    fn gt(self, o: Self) -> __mmask16 {
        unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn lt(self, o: Self) -> __mmask16 {
        unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn ge(self, o: Self) -> __mmask16 {
        unsafe { _mm512_cmp_ps_mask::<_CMP_GE_OQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn le(self, o: Self) -> __mmask16 {
        unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn and(a: __mmask16, b: __mmask16) -> __mmask16 {
        a & b
    }
    #[inline(always)]
    fn or(a: __mmask16, b: __mmask16) -> __mmask16 {
        a | b
    }
    #[inline(always)]
    fn not(a: __mmask16) -> __mmask16 {
        !a
    }
    #[inline(always)]
    fn select(m: __mmask16, t: Self, f: Self) -> Self {
        unsafe { Zmm16(_mm512_mask_blend_ps(m, f.0, t.0)) }
    }
    #[inline(always)]
    fn any(m: __mmask16) -> bool {
        m != 0
    }
    #[inline(always)]
    fn all(m: __mmask16) -> bool {
        m == u16::MAX
    }
    #[inline(always)]
    fn finite(self) -> __mmask16 {
        // |x| < ∞ is false for ±∞ and (ordered compare) for NaN
        unsafe {
            _mm512_cmp_ps_mask::<_CMP_LT_OQ>(_mm512_abs_ps(self.0), _mm512_set1_ps(f32::INFINITY))
        }
    }
    #[inline(always)]
    fn abs(self) -> Self {
        unsafe { Zmm16(_mm512_abs_ps(self.0)) }
    }
}
