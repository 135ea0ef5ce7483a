//! [`WideYmm`]: the AVX2 path's lane. Its values are the portable bundle
//! (`archipelago_simd::F32x16`, which LLVM vectorizes as two 256-bit
//! halves on AVX2), so it computes exactly what `Wide` computes; what it
//! adds is how a bundle's records (velocities, or poses) are read and
//! written: each lane's 32 bytes with one 256-bit load or store and two
//! 8×8 register transposes, instead of 16 scalar loads per component.
//!
//! Only named in the `#[target_feature(enable = "avx2")]` function of
//! `dispatch.rs`, which runs after `is_x86_feature_detected!("avx2")`; the
//! helpers are `#[inline(always)]`, so they are compiled into it.

use super::bodies::{Record, RecordLanes};
use crate::disjoint::Disjoint;
use archipelago_simd::{F32x16, Lane, Wide, LANES};
use core::arch::x86_64::*;

/// Every lane of a bundle, read and written by record (see the module doc).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WideYmm;

impl Lane for WideYmm {
    type R = F32x16;
    #[inline(always)]
    fn load(self, field: &[f32; LANES]) -> F32x16 {
        Wide.load(field)
    }
    #[inline(always)]
    fn store(self, field: &mut [f32; LANES], v: F32x16) {
        Wide.store(field, v)
    }
}

// SAFETY (every `unsafe` block below that calls intrinsics): AVX is present
// wherever a `WideYmm` is used (module doc: the AVX2 path).

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

impl RecordLanes for WideYmm {
    #[inline(always)]
    unsafe fn load_records<T: Record>(
        self,
        records: &Disjoint<T>,
        idx: &[u32; LANES],
    ) -> [F32x16; 8] {
        debug_assert!(idx.iter().all(|&i| (i as usize) < records.len()));
        let base = records.as_mut_ptr() as *const f32;
        // SAFETY: every read is one whole 32-byte record of the array
        // (caller, `Record`).
        let half = |h: usize| {
            transpose8(core::array::from_fn(|j| unsafe {
                _mm256_loadu_ps(base.add(8 * idx[8 * h + j] as usize))
            }))
        };
        let (lo, hi) = (half(0), half(1));
        // By value (no pointer into the bundle), so the bundles stay in
        // registers for the solve that follows (through a pointer, LLVM
        // kept them in memory and the path ran 35% slower).
        core::array::from_fn(|k| {
            // SAFETY: two __m256 are 16 f32 with the same layout.
            F32x16::new(unsafe {
                core::mem::transmute::<[__m256; 2], [f32; LANES]>([lo[k], hi[k]])
            })
        })
    }

    #[inline(always)]
    unsafe fn store_records<T: Record>(
        self,
        records: &Disjoint<T>,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        c: [F32x16; 8],
    ) {
        let base = records.as_mut_ptr() as *mut f32;
        // SAFETY: 16 f32 and two __m256 have the same layout.
        let halves =
            c.map(|c| unsafe { core::mem::transmute::<[f32; LANES], [__m256; 2]>(c.to_array()) });
        for (half, lanes) in idx.chunks_exact(8).enumerate() {
            let rows = transpose8(halves.map(|h| h[half]));
            for (j, (row, &i)) in rows.into_iter().zip(lanes).enumerate() {
                if inv_mass[8 * half + j] > 0.0 {
                    debug_assert!((i as usize) < records.len());
                    // SAFETY: one whole record of the array (caller).
                    unsafe { _mm256_storeu_ps(base.add(8 * i as usize), row) };
                }
            }
        }
    }
}
