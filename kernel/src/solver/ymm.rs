//! [`HalfYmm`]: the AVX2 path's lane. It solves a bundle as two halves of
//! 8 lanes, one after the other (`archipelago_simd::F32x8`, one 256-bit
//! register per value), and reads and writes a half's records
//! (velocities, or poses) with one 256-bit load or store per lane and one
//! 8×8 register transpose. Whole 16-lane bundles take two registers per
//! value on AVX2, and the contact solve's working set then overflows the
//! 16 ymm registers into stack spills: the halves ran the solver's bundle
//! kernels in 16.8% fewer instructions on the pyramid (callgrind, 30
//! steps: 484.2 M → 402.8 M) and the velocity solve ~5% faster. The lanes
//! of a bundle share no dynamic body, so halves solved in turn give every
//! lane the bits the whole bundle gives (`Half` in the property tests).
//!
//! Only named in the `#[target_feature(enable = "avx2")]` function of
//! `dispatch.rs`, which runs after `is_x86_feature_detected!("avx2")`; the
//! helpers are `#[inline(always)]`, so they are compiled into it.

use super::bodies::{Record, RecordLanes};
use crate::disjoint::Disjoint;
use archipelago_simd::{F32x8, Half, Lane, HALF_BUNDLE, LANES};
use core::arch::x86_64::*;

/// Half `h` of a bundle (lanes `8h..8h + 8`), read and written by record
/// (see the module doc).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HalfYmm(pub usize);

impl Lane for HalfYmm {
    type R = F32x8;
    #[inline(always)]
    fn load(self, field: &[f32; LANES]) -> F32x8 {
        Half(self.0).load(field)
    }
    #[inline(always)]
    fn store(self, field: &mut [f32; LANES], v: F32x8) {
        Half(self.0).store(field, v)
    }
}

impl super::dispatch::BundleLane for HalfYmm {
    const PARTS: usize = LANES / HALF_BUNDLE;
    #[inline(always)]
    fn part(self, p: usize) -> Self {
        HalfYmm(p)
    }
}

// SAFETY (every `unsafe` block below that calls intrinsics): AVX is present
// wherever a `HalfYmm` is used (module doc: the AVX2 path).

/// An 8×8 transpose: row `k` of the result is column `k` of `r`. Its own
/// inverse.
#[inline(always)]
fn transpose8(r: [__m256; 8]) -> [__m256; 8] {
    unsafe {
        let t0 = _mm256_unpacklo_ps(r[0], r[1]);
        let t1 = _mm256_unpackhi_ps(r[0], r[1]);
        let t2 = _mm256_unpacklo_ps(r[2], r[3]);
        let t3 = _mm256_unpackhi_ps(r[2], r[3]);
        let t4 = _mm256_unpacklo_ps(r[4], r[5]);
        let t5 = _mm256_unpackhi_ps(r[4], r[5]);
        let t6 = _mm256_unpacklo_ps(r[6], r[7]);
        let t7 = _mm256_unpackhi_ps(r[6], r[7]);
        let s0 = _mm256_shuffle_ps::<0x44>(t0, t2);
        let s1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
        let s2 = _mm256_shuffle_ps::<0x44>(t1, t3);
        let s3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
        let s4 = _mm256_shuffle_ps::<0x44>(t4, t6);
        let s5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
        let s6 = _mm256_shuffle_ps::<0x44>(t5, t7);
        let s7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
        [
            _mm256_permute2f128_ps::<0x20>(s0, s4),
            _mm256_permute2f128_ps::<0x20>(s1, s5),
            _mm256_permute2f128_ps::<0x20>(s2, s6),
            _mm256_permute2f128_ps::<0x20>(s3, s7),
            _mm256_permute2f128_ps::<0x31>(s0, s4),
            _mm256_permute2f128_ps::<0x31>(s1, s5),
            _mm256_permute2f128_ps::<0x31>(s2, s6),
            _mm256_permute2f128_ps::<0x31>(s3, s7),
        ]
    }
}

impl RecordLanes for HalfYmm {
    #[inline(always)]
    unsafe fn load_records<T: Record>(
        self,
        records: &Disjoint<T>,
        idx: &[u32; LANES],
    ) -> [F32x8; 8] {
        let idx = &idx[HALF_BUNDLE * self.0..][..HALF_BUNDLE];
        debug_assert!(idx.iter().all(|&i| (i as usize) < records.len()));
        let base = records.as_mut_ptr() as *const f32;
        // SAFETY: every read is one whole 32-byte record of the array
        // (caller, `Record`).
        let rows = transpose8(core::array::from_fn(|j| unsafe {
            _mm256_loadu_ps(base.add(8 * idx[j] as usize))
        }));
        // SAFETY: a __m256 is 8 f32 with the same layout.
        rows.map(|r| F32x8::new(unsafe { core::mem::transmute::<__m256, [f32; 8]>(r) }))
    }

    #[inline(always)]
    unsafe fn store_records<T: Record>(
        self,
        records: &Disjoint<T>,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        c: [F32x8; 8],
    ) {
        let base = records.as_mut_ptr() as *mut f32;
        let lanes = HALF_BUNDLE * self.0..HALF_BUNDLE * (self.0 + 1);
        // SAFETY: 8 f32 and a __m256 have the same layout.
        let rows = transpose8(
            c.map(|c| unsafe { core::mem::transmute::<[f32; 8], __m256>(c.to_array()) }),
        );
        for (row, l) in rows.into_iter().zip(lanes) {
            if inv_mass[l] > 0.0 {
                let i = idx[l];
                debug_assert!((i as usize) < records.len());
                // SAFETY: one whole record of the array (caller).
                unsafe { _mm256_storeu_ps(base.add(8 * i as usize), row) };
            }
        }
    }
}
