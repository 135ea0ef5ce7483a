//! Runtime choice of the instruction set a bundle loop runs on.
//!
//! `wide` and LLVM both decide a vector width when the crate is compiled,
//! so a crate built without `-C target-cpu=native` would run the solver on
//! SSE2 even on an AVX-512 machine. Instead each bundle loop (setup, the
//! velocity and position iterations) is a [`BundleKernel`], monomorphized
//! into one `#[target_feature]` function per instruction set, and
//! [`dispatch`] calls the one [`SimdPath`] names (`Auto` resolves to the
//! widest the CPU has; `is_x86_feature_detected!` caches its answer). A
//! dispatch costs a branch and a call per batch of bundles.
//!
//! The kernels are written once over the lane type and every lane type
//! computes the same IEEE-754 operations, so all paths give the same bits
//! (tests: `every_simd_path_gives_the_same_bits` in `tests/determinism.rs`).

use super::bodies::BodyLanes;
use super::poses::PoseLanes;
use crate::settings::SimdPath;
use archipelago_simd::Wide;

/// What a bundle loop needs of its lane type.
pub(crate) trait BundleLane: BodyLanes + PoseLanes {
    /// A bundle's lanes are covered by `part(0)`, ..., `part(PARTS - 1)`
    /// in turn: all 16 at once, or two halves of 8 (`ymm.rs`).
    const PARTS: usize = 1;
    /// The lanes of part `p` (`p < PARTS`).
    #[inline(always)]
    fn part(self, _p: usize) -> Self {
        self
    }
}
impl BundleLane for Wide {}
#[cfg(target_arch = "x86_64")]
impl BundleLane for super::zmm::WideZmm {}

/// A bundle loop, generic over the lane type. `run` must be
/// `#[inline(always)]` (with everything it calls on lanes), so it is
/// compiled into the instruction set's function below rather than called
/// from it.
pub(crate) trait BundleKernel {
    fn run<L: BundleLane>(self, lane: L);
}

/// Runs `k` on `path` (a resolved path; `Auto` is resolved here too).
#[inline]
pub(crate) fn dispatch<K: BundleKernel>(path: SimdPath, k: K) {
    match path {
        #[cfg(target_arch = "x86_64")]
        SimdPath::Avx512 => {
            debug_assert!(path.is_available());
            // SAFETY: `PhysicsSettings::validate` refuses a path the CPU
            // lacks, and `Auto` resolves only to available ones.
            unsafe { avx512(k) }
        }
        #[cfg(target_arch = "x86_64")]
        SimdPath::Avx2 => {
            debug_assert!(path.is_available());
            // SAFETY: as above.
            unsafe { avx2(k) }
        }
        SimdPath::Auto => dispatch(path.resolve(), k),
        _ => k.run(Wide),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn avx512<K: BundleKernel>(k: K) {
    k.run(super::zmm::WideZmm)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn avx2<K: BundleKernel>(k: K) {
    // Half a bundle at a time: see `ymm.rs`.
    k.run(super::ymm::HalfYmm(0))
}
