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

use super::bodies::{Record, RecordLanes};
use crate::disjoint::Disjoint;
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

/// Transposes two 8×8 blocks at once: the low 256-bit halves of `r` are
/// one block's rows, the high halves the other's. Row `k` of the result
/// holds column `k` of each block in the same half. Its own inverse.
#[inline(always)]
fn transpose_halves(r: [__m512; 8]) -> [__m512; 8] {
    unsafe {
        let t0 = _mm512_unpacklo_ps(r[0], r[1]);
        let t1 = _mm512_unpackhi_ps(r[0], r[1]);
        let t2 = _mm512_unpacklo_ps(r[2], r[3]);
        let t3 = _mm512_unpackhi_ps(r[2], r[3]);
        let t4 = _mm512_unpacklo_ps(r[4], r[5]);
        let t5 = _mm512_unpackhi_ps(r[4], r[5]);
        let t6 = _mm512_unpacklo_ps(r[6], r[7]);
        let t7 = _mm512_unpackhi_ps(r[6], r[7]);
        let s0 = _mm512_shuffle_ps::<0x44>(t0, t2);
        let s1 = _mm512_shuffle_ps::<0xEE>(t0, t2);
        let s2 = _mm512_shuffle_ps::<0x44>(t1, t3);
        let s3 = _mm512_shuffle_ps::<0xEE>(t1, t3);
        let s4 = _mm512_shuffle_ps::<0x44>(t4, t6);
        let s5 = _mm512_shuffle_ps::<0xEE>(t4, t6);
        let s6 = _mm512_shuffle_ps::<0x44>(t5, t7);
        let s7 = _mm512_shuffle_ps::<0xEE>(t5, t7);
        // 128-bit lanes: (lo 0, hi 0 | lo 2, hi 2) and (1, 1 | 3, 3).
        let even = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
        let odd = _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
        [
            _mm512_permutex2var_ps(s0, even, s4),
            _mm512_permutex2var_ps(s1, even, s5),
            _mm512_permutex2var_ps(s2, even, s6),
            _mm512_permutex2var_ps(s3, even, s7),
            _mm512_permutex2var_ps(s0, odd, s4),
            _mm512_permutex2var_ps(s1, odd, s5),
            _mm512_permutex2var_ps(s2, odd, s6),
            _mm512_permutex2var_ps(s3, odd, s7),
        ]
    }
}

/// One 256-bit load or store per lane and a register transpose: against
/// one `vgatherdps`/`vscatterdps` per component this measured faster on
/// the velocity solve (5.64 -> 5.49 ms a pyramid step) and the position
/// solve (0.264 -> 0.209 ms).
impl RecordLanes for WideZmm {
    #[inline(always)]
    unsafe fn load_records<T: Record>(
        self,
        records: &Disjoint<T>,
        idx: &[u32; LANES],
    ) -> [Zmm16; 8] {
        debug_assert!(idx.iter().all(|&i| (i as usize) < records.len()));
        let base = records.as_mut_ptr() as *const f32;
        // SAFETY: every read is one whole 32-byte record of the array
        // (caller, `Record`).
        unsafe {
            let record = |i: u32| _mm256_loadu_ps(base.add(8 * i as usize));
            let rows: [__m512; 8] = core::array::from_fn(|j| {
                let lo = _mm512_castps256_ps512(record(idx[j]));
                let hi = _mm256_castps_pd(record(idx[j + 8]));
                _mm512_castpd_ps(_mm512_insertf64x4::<1>(_mm512_castps_pd(lo), hi))
            });
            transpose_halves(rows).map(Zmm16)
        }
    }

    #[inline(always)]
    unsafe fn store_records<T: Record>(
        self,
        records: &Disjoint<T>,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        c: [Zmm16; 8],
    ) {
        // SAFETY: every write is one whole 32-byte record of the array
        // (caller, `Record`).
        unsafe {
            let mask = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(
                _mm512_loadu_ps(inv_mass.as_ptr()),
                _mm512_setzero_ps(),
            );
            if mask == 0 {
                return;
            }
            debug_assert!((0..LANES)
                .filter(|l| mask & (1 << l) != 0)
                .all(|l| (idx[l] as usize) < records.len()));
            let base = records.as_mut_ptr() as *mut f32;
            let rows = transpose_halves(c.map(|v| v.0));
            for (j, row) in rows.into_iter().enumerate() {
                if mask & (1 << j) != 0 {
                    _mm256_storeu_ps(base.add(8 * idx[j] as usize), _mm512_castps512_ps256(row));
                }
                if mask & (1 << (j + 8)) != 0 {
                    let hi = _mm512_extractf64x4_pd::<1>(_mm512_castps_pd(row));
                    _mm256_storeu_ps(base.add(8 * idx[j + 8] as usize), _mm256_castpd_ps(hi));
                }
            }
        }
    }
}
