//! SIMD lanes for archipelago, built on `wide`.
//!
//! Every lane function here has a scalar twin (`*_scalar`) computing the same
//! expression in the same order, so the SIMD path can be checked bit for bit
//! against plain Rust. Nothing is fused: a multiply-add is a multiply and an
//! add, each rounded, on every target, so a build with FMA (or AVX-512, or
//! only SSE2) computes the same bits as any other build.
//!
//! The lane type [`F32s`] is `f32x16`, chosen by measurement (the
//! `simd_width` bench binary, perf-reports/simd-width.md): the broad phase's
//! AABB overlap mask ran 9–25% faster per box 16-wide than 8-wide, both in an
//! AVX-512 build and in an AVX2 build (where `wide` runs it as two 8-wide
//! halves, i.e. unrolled), while the integrator's column sweep was 0–13%
//! slower, on a loop that is 0.2% of a step. Columns are padded to 16 lanes,
//! so the width needs no tail code either way.

mod aabb;
mod bundle;
mod columns;
mod real;

pub use aabb::{overlap_mask, overlap_mask_scalar, AabbLanes, AabbRef};
pub use bundle::{F32x16, F32x8, M32x16, M32x8, BUNDLE, HALF_BUNDLE};
pub use columns::{
    add_scaled_columns, add_scaled_columns_scalar, add_scaled_uniform, add_scaled_uniform_scalar,
    all_finite, all_finite_scalar,
};
pub use real::{atan2, Half, Lane, One, Real, Wide, M3, Q4, V3};

/// The f32 lane vector used throughout (see the crate docs for the choice).
pub type F32s = wide::f32x16;

/// Number of f32 lanes in [`F32s`] and in a solver bundle ([`F32x16`]).
pub const LANES: usize = core::mem::size_of::<F32s>() / 4;
const _: () = assert!(LANES == BUNDLE);

/// Loads [`LANES`] consecutive values from `s` starting at `i`.
#[inline(always)]
pub fn load(s: &[f32], i: usize) -> F32s {
    let chunk: [f32; LANES] = s[i..i + LANES].try_into().expect("a full lane");
    F32s::new(chunk)
}

/// Stores [`LANES`] values into `s` starting at `i`.
#[inline(always)]
pub fn store(s: &mut [f32], i: usize, v: F32s) {
    s[i..i + LANES].copy_from_slice(&v.to_array());
}

#[cfg(test)]
pub(crate) mod testrng {
    /// splitmix64: a tiny, well-known generator, enough for random test inputs.
    pub struct Rng(pub u64);
    impl Rng {
        pub fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        /// Uniform in [lo, hi).
        pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
            let u = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
            lo + (hi - lo) * u
        }
        pub fn lanes(&mut self, lo: f32, hi: f32) -> [f32; crate::LANES] {
            core::array::from_fn(|_| self.range(lo, hi))
        }
    }
}
