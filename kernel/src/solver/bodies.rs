//! The solver's bodies: one velocity record per body slot, plus a last
//! slot that stays zero (static bodies and padding lanes point there, so
//! reading them touches nothing any step writes), and the gather and
//! scatter of a constraint's two bodies, written once for one lane and for
//! all lanes of a bundle.
//!
//! Only dynamic sides are written back: static and kinematic bodies are
//! read-only during a solve, so any number of constraints solved at once
//! may share them.

use crate::disjoint::Disjoint;
use crate::math::Vec3;
use archipelago_simd::{F32x16, Lane, One, Wide, LANES, V3};

/// A body's velocities during the solve: one 32-byte record, so a body
/// never straddles two cache lines and two workers' bodies share a line
/// only in pairs.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
pub(crate) struct BodyVelocity {
    // field order and the 32-byte size are what the gathers index
    pub lin: Vec3,
    pub ang: Vec3,
}

// The AVX-512 path reads and writes a record as 8 floats: lin, ang, padding.
const _: () = assert!(core::mem::size_of::<BodyVelocity>() == 32);
const _: () = assert!(core::mem::offset_of!(BodyVelocity, lin) == 0);
const _: () = assert!(core::mem::offset_of!(BodyVelocity, ang) == 12);

/// Solver velocities, written by several workers at disjoint bodies.
pub(crate) type Velocities<'a> = Disjoint<'a, BodyVelocity>;

/// The two bodies' velocities while one constraint (or one bundle of them)
/// is solved.
#[derive(Clone, Copy)]
pub(crate) struct PairVelocity<R> {
    pub va: V3<R>,
    pub wa: V3<R>,
    pub vb: V3<R>,
    pub wb: V3<R>,
}

/// Loading and storing a constraint's bodies, per lane kind: each lane
/// kind says how one side (the A bodies or the B bodies of its lanes) is
/// read and written; both sides go the same way.
pub(crate) trait BodyLanes: Lane {
    /// Linear and angular velocities of the bodies `idx` of the lanes.
    ///
    /// # Safety
    /// No other thread writes these bodies during the call.
    unsafe fn gather_side(self, vel: &Velocities, idx: &[u32; LANES]) -> [V3<Self::R>; 2];

    /// Writes back the lanes whose inverse mass is positive.
    ///
    /// # Safety
    /// No other thread reads or writes these lanes' dynamic bodies during
    /// the call, and the lanes' dynamic bodies are distinct.
    unsafe fn scatter_side(
        self,
        vel: &Velocities,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        v: [V3<Self::R>; 2],
    );

    /// # Safety
    /// As [`gather_side`](Self::gather_side), for both sides.
    #[inline(always)]
    unsafe fn gather(
        self,
        vel: &Velocities,
        a: &[u32; LANES],
        b: &[u32; LANES],
    ) -> PairVelocity<Self::R> {
        // SAFETY: forwarded to the caller.
        let ([va, wa], [vb, wb]) = unsafe { (self.gather_side(vel, a), self.gather_side(vel, b)) };
        PairVelocity { va, wa, vb, wb }
    }

    /// Writes back the sides whose inverse mass is positive.
    ///
    /// # Safety
    /// As [`scatter_side`](Self::scatter_side), for both sides.
    #[inline(always)]
    unsafe fn scatter(
        self,
        vel: &Velocities,
        a: &[u32; LANES],
        b: &[u32; LANES],
        inv_mass_a: &[f32; LANES],
        inv_mass_b: &[f32; LANES],
        v: PairVelocity<Self::R>,
    ) {
        // SAFETY: forwarded to the caller.
        unsafe {
            self.scatter_side(vel, a, inv_mass_a, [v.va, v.wa]);
            self.scatter_side(vel, b, inv_mass_b, [v.vb, v.wb]);
        }
    }
}

#[inline(always)]
fn v3(v: Vec3) -> V3<f32> {
    V3::new(v.x, v.y, v.z)
}

#[inline(always)]
fn vec3(v: V3<f32>) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

impl BodyLanes for One {
    #[inline(always)]
    unsafe fn gather_side(self, vel: &Velocities, idx: &[u32; LANES]) -> [V3<f32>; 2] {
        // SAFETY: forwarded to the caller.
        let r = unsafe { vel.get(idx[self.0] as usize) };
        [v3(r.lin), v3(r.ang)]
    }

    #[inline(always)]
    unsafe fn scatter_side(
        self,
        vel: &Velocities,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        [lin, ang]: [V3<f32>; 2],
    ) {
        let l = self.0;
        if inv_mass[l] > 0.0 {
            let r = BodyVelocity {
                lin: vec3(lin),
                ang: vec3(ang),
            };
            // SAFETY: forwarded to the caller.
            unsafe { vel.set(idx[l] as usize, r) };
        }
    }
}

/// Six lane arrays from 16 records (the transpose happens in these
/// stores; LLVM vectorizes what follows).
impl BodyLanes for Wide {
    #[inline(always)]
    unsafe fn gather_side(self, vel: &Velocities, idx: &[u32; LANES]) -> [V3<F32x16>; 2] {
        let mut c = [[0f32; LANES]; 6];
        for (l, &i) in idx.iter().enumerate() {
            // SAFETY: forwarded to the caller.
            let r = unsafe { vel.get(i as usize) };
            for (k, v) in [r.lin.x, r.lin.y, r.lin.z, r.ang.x, r.ang.y, r.ang.z]
                .into_iter()
                .enumerate()
            {
                c[k][l] = v;
            }
        }
        let f = |k: usize| F32x16::new(c[k]);
        [V3::new(f(0), f(1), f(2)), V3::new(f(3), f(4), f(5))]
    }

    #[inline(always)]
    unsafe fn scatter_side(
        self,
        vel: &Velocities,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        [lin, ang]: [V3<F32x16>; 2],
    ) {
        let c = [lin.x, lin.y, lin.z, ang.x, ang.y, ang.z].map(|v| v.to_array());
        for (l, &i) in idx.iter().enumerate() {
            if inv_mass[l] > 0.0 {
                let r = BodyVelocity {
                    lin: Vec3::new(c[0][l], c[1][l], c[2][l]),
                    ang: Vec3::new(c[3][l], c[4][l], c[5][l]),
                };
                // SAFETY: forwarded to the caller.
                unsafe { vel.set(i as usize, r) };
            }
        }
    }
}

/// The AVX-512 path's loads and stores of whole records: each lane's
/// 32-byte record is read (or written) with one 256-bit access and the 16
/// records are transposed into component vectors in registers. Measured
/// against `vgatherdps`/`vscatterdps` per component (six of each per side),
/// which issue one access per lane each and cost the most on the scatter.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{BodyLanes, Velocities};
    use crate::solver::zmm::{load_records, store_records, WideZmm, Zmm16};
    use archipelago_simd::{LANES, V3};
    use core::arch::x86_64::*;

    impl BodyLanes for WideZmm {
        #[inline(always)]
        unsafe fn gather_side(self, vel: &Velocities, idx: &[u32; LANES]) -> [V3<Zmm16>; 2] {
            debug_assert!(idx.iter().all(|&i| (i as usize) < vel.len()));
            // SAFETY: AVX-512F is present wherever a `WideZmm` is used
            // (`zmm.rs`); the indices are body slots below the array's
            // length, and records are 32 bytes (lin, ang, padding); no
            // concurrent writer (caller).
            let c = unsafe { load_records(vel.as_mut_ptr() as *const f32, idx) };
            [
                V3::new(Zmm16(c[0]), Zmm16(c[1]), Zmm16(c[2])),
                V3::new(Zmm16(c[3]), Zmm16(c[4]), Zmm16(c[5])),
            ]
        }

        /// Writes back the lanes whose inverse mass is positive (lanes at
        /// the zero slot or a kinematic body are skipped).
        #[inline(always)]
        unsafe fn scatter_side(
            self,
            vel: &Velocities,
            idx: &[u32; LANES],
            inv_mass: &[f32; LANES],
            [lin, ang]: [V3<Zmm16>; 2],
        ) {
            debug_assert!(idx.iter().all(|&i| (i as usize) < vel.len()));
            // SAFETY: AVX-512F (`zmm.rs`); every written index is a body
            // slot below the array's length (its padding gets a zero); the
            // written lanes' bodies are distinct and this call's alone
            // (caller).
            unsafe {
                let mask = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(
                    _mm512_loadu_ps(inv_mass.as_ptr()),
                    _mm512_setzero_ps(),
                );
                if mask == 0 {
                    return;
                }
                let zero = _mm512_setzero_ps();
                let c = [
                    lin.x.0, lin.y.0, lin.z.0, ang.x.0, ang.y.0, ang.z.0, zero, zero,
                ];
                store_records(vel.as_mut_ptr() as *mut f32, idx, mask, c);
            }
        }
    }
}
