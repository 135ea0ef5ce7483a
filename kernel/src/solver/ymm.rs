//! [`WideYmm`]: the AVX2 path's lane. Its values are the portable bundle
//! (`archipelago_simd::F32x16`, which LLVM vectorizes as two 256-bit
//! halves on AVX2), so it computes exactly what `Wide` computes; what it
//! adds is how a bundle's bodies are read and written: each lane's 32-byte
//! record (velocities, or a pose) with one 256-bit load or store and two
//! 8×8 register transposes, instead of 16 scalar loads per component.
//!
//! Only named in the `#[target_feature(enable = "avx2")]` function of
//! `dispatch.rs`, which runs after `is_x86_feature_detected!("avx2")`; the
//! helpers are `#[inline(always)]`, so they are compiled into it.

use super::bodies::{BodyLanes, Velocities};
use super::contact::position::{PoseLanes, Poses};
use archipelago_simd::{F32x16, Lane, Wide, LANES, Q4, V3};
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
// wherever a `WideYmm` is used (module doc: the AVX2 path); loads and
// stores are whole 32-byte records of the arrays the callers name.

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

/// The records `base[idx[l]]` (8 floats each) of the 16 lanes, by
/// component: `result[k]` lane `l` is float `k` of lane `l`'s record.
///
/// # Safety
/// `base` points at an array of 32-byte records, every `idx[l]` is below
/// its length, and no other thread writes those records during the call.
#[inline(always)]
unsafe fn load_records(base: *const f32, idx: &[u32; LANES]) -> [F32x16; 8] {
    // SAFETY: every read is one whole record of the array (caller).
    let half = |h: usize| {
        transpose8(core::array::from_fn(|j| unsafe {
            _mm256_loadu_ps(base.add(8 * idx[8 * h + j] as usize))
        }))
    };
    let (lo, hi) = (half(0), half(1));
    // By value (no pointer into the bundle), so the bundles stay in
    // registers for the solve that follows.
    core::array::from_fn(|k| {
        // SAFETY: two __m256 are 16 f32 with the same layout.
        F32x16::new(unsafe { core::mem::transmute::<[__m256; 2], [f32; LANES]>([lo[k], hi[k]]) })
    })
}

/// Stores `components` back as the records `base[idx[l]]` of the lanes
/// with `inv_mass[l] > 0` (whole records: all 8 floats).
///
/// # Safety
/// `base` points at an array of 32-byte records, every `idx[l]` written is
/// below its length, those records are distinct and no other thread reads
/// or writes them during the call.
#[inline(always)]
unsafe fn store_records(
    base: *mut f32,
    idx: &[u32; LANES],
    inv_mass: &[f32; LANES],
    components: [F32x16; 8],
) {
    // SAFETY: 16 f32 and two __m256 have the same layout.
    let halves = components
        .map(|c| unsafe { core::mem::transmute::<[f32; LANES], [__m256; 2]>(c.to_array()) });
    for (half, lanes) in idx.chunks_exact(8).enumerate() {
        let rows = transpose8(halves.map(|h| h[half]));
        for (j, (row, &i)) in rows.into_iter().zip(lanes).enumerate() {
            if inv_mass[8 * half + j] > 0.0 {
                // SAFETY: one whole record of the array (caller).
                unsafe { _mm256_storeu_ps(base.add(8 * i as usize), row) };
            }
        }
    }
}

impl BodyLanes for WideYmm {
    #[inline(always)]
    unsafe fn gather_side(self, vel: &Velocities, idx: &[u32; LANES]) -> [V3<F32x16>; 2] {
        debug_assert!(idx.iter().all(|&i| (i as usize) < vel.len()));
        // SAFETY: the indices are body slots below the array's length, and
        // records are 32 bytes (lin, ang, padding); no concurrent writer
        // (caller).
        let c = unsafe { load_records(vel.as_mut_ptr() as *const f32, idx) };
        [V3::new(c[0], c[1], c[2]), V3::new(c[3], c[4], c[5])]
    }

    #[inline(always)]
    unsafe fn scatter_side(
        self,
        vel: &Velocities,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        [lin, ang]: [V3<F32x16>; 2],
    ) {
        debug_assert!(idx.iter().all(|&i| (i as usize) < vel.len()));
        let zero = F32x16::splat(0.0);
        let c = [lin.x, lin.y, lin.z, ang.x, ang.y, ang.z, zero, zero];
        // SAFETY: written lanes' slots are below the array's length, their
        // bodies distinct and this call's alone (caller); padding gets 0.
        unsafe { store_records(vel.as_mut_ptr() as *mut f32, idx, inv_mass, c) };
    }
}

impl PoseLanes for WideYmm {
    #[inline(always)]
    unsafe fn gather_side(self, poses: &Poses, idx: &[u32; LANES]) -> (V3<F32x16>, Q4<F32x16>) {
        debug_assert!(idx.iter().all(|&i| (i as usize) < poses.len()));
        // SAFETY: the indices are slots below the array's length, and
        // records are 32 bytes (position, padding, rotation); no concurrent
        // writer (caller).
        let c = unsafe { load_records(poses.as_mut_ptr() as *const f32, idx) };
        let q = Q4 {
            x: c[4],
            y: c[5],
            z: c[6],
            w: c[7],
        };
        (V3::new(c[0], c[1], c[2]), q)
    }

    #[inline(always)]
    unsafe fn scatter_side(
        self,
        poses: &Poses,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        x: V3<F32x16>,
        q: Q4<F32x16>,
    ) {
        debug_assert!(idx.iter().all(|&i| (i as usize) < poses.len()));
        let zero = F32x16::splat(0.0);
        let c = [x.x, x.y, x.z, zero, q.x, q.y, q.z, q.w];
        // SAFETY: as in the velocity scatter.
        unsafe { store_records(poses.as_mut_ptr() as *mut f32, idx, inv_mass, c) };
    }
}
