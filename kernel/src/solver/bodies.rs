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

/// Loading and storing a constraint's bodies, per lane kind.
pub(crate) trait BodyLanes: Lane {
    /// # Safety
    /// No other thread writes these bodies during the call.
    unsafe fn gather(
        self,
        vel: &Velocities,
        a: &[u32; LANES],
        b: &[u32; LANES],
    ) -> PairVelocity<Self::R>;

    /// Writes back the sides whose inverse mass is positive.
    ///
    /// # Safety
    /// No other thread reads or writes these lanes' dynamic bodies during
    /// the call, and the lanes' dynamic bodies are distinct.
    unsafe fn scatter(
        self,
        vel: &Velocities,
        a: &[u32; LANES],
        b: &[u32; LANES],
        inv_mass_a: &[f32; LANES],
        inv_mass_b: &[f32; LANES],
        v: PairVelocity<Self::R>,
    );
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
    unsafe fn gather(
        self,
        vel: &Velocities,
        a: &[u32; LANES],
        b: &[u32; LANES],
    ) -> PairVelocity<f32> {
        // SAFETY: forwarded to the caller.
        let (va, vb) = unsafe { (vel.get(a[self.0] as usize), vel.get(b[self.0] as usize)) };
        PairVelocity {
            va: v3(va.lin),
            wa: v3(va.ang),
            vb: v3(vb.lin),
            wb: v3(vb.ang),
        }
    }

    #[inline(always)]
    unsafe fn scatter(
        self,
        vel: &Velocities,
        a: &[u32; LANES],
        b: &[u32; LANES],
        inv_mass_a: &[f32; LANES],
        inv_mass_b: &[f32; LANES],
        v: PairVelocity<f32>,
    ) {
        let l = self.0;
        // SAFETY: forwarded to the caller.
        unsafe {
            if inv_mass_a[l] > 0.0 {
                let r = BodyVelocity {
                    lin: vec3(v.va),
                    ang: vec3(v.wa),
                };
                vel.set(a[l] as usize, r);
            }
            if inv_mass_b[l] > 0.0 {
                let r = BodyVelocity {
                    lin: vec3(v.vb),
                    ang: vec3(v.wb),
                };
                vel.set(b[l] as usize, r);
            }
        }
    }
}

/// Six lane arrays from 16 records (the transpose happens in these stores).
#[inline(always)]
unsafe fn gather_side(vel: &Velocities, idx: &[u32; LANES]) -> (V3<F32x16>, V3<F32x16>) {
    let mut c = [[0f32; LANES]; 6];
    for (l, &i) in idx.iter().enumerate() {
        // SAFETY: forwarded to the caller.
        let r = unsafe { vel.get(i as usize) };
        c[0][l] = r.lin.x;
        c[1][l] = r.lin.y;
        c[2][l] = r.lin.z;
        c[3][l] = r.ang.x;
        c[4][l] = r.ang.y;
        c[5][l] = r.ang.z;
    }
    let f = |k: usize| F32x16::new(c[k]);
    (V3::new(f(0), f(1), f(2)), V3::new(f(3), f(4), f(5)))
}

#[inline(always)]
unsafe fn scatter_side(
    vel: &Velocities,
    idx: &[u32; LANES],
    inv_mass: &[f32; LANES],
    lin: V3<F32x16>,
    ang: V3<F32x16>,
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

impl BodyLanes for Wide {
    #[inline(always)]
    unsafe fn gather(
        self,
        vel: &Velocities,
        a: &[u32; LANES],
        b: &[u32; LANES],
    ) -> PairVelocity<F32x16> {
        // SAFETY: forwarded to the caller.
        let ((va, wa), (vb, wb)) = unsafe { (gather_side(vel, a), gather_side(vel, b)) };
        PairVelocity { va, wa, vb, wb }
    }

    #[inline(always)]
    unsafe fn scatter(
        self,
        vel: &Velocities,
        a: &[u32; LANES],
        b: &[u32; LANES],
        inv_mass_a: &[f32; LANES],
        inv_mass_b: &[f32; LANES],
        v: PairVelocity<F32x16>,
    ) {
        // SAFETY: forwarded to the caller.
        unsafe {
            scatter_side(vel, a, inv_mass_a, v.va, v.wa);
            scatter_side(vel, b, inv_mass_b, v.vb, v.wb);
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
    use super::{BodyLanes, PairVelocity, Velocities};
    use crate::solver::zmm::{load_records, store_records, WideZmm, Zmm16};
    use archipelago_simd::{LANES, V3};
    use core::arch::x86_64::*;

    #[inline(always)]
    unsafe fn gather_side(vel: &Velocities, idx: &[u32; LANES]) -> (V3<Zmm16>, V3<Zmm16>) {
        debug_assert!(idx.iter().all(|&i| (i as usize) < vel.len()));
        // SAFETY: AVX-512F is present wherever a `WideZmm` is used
        // (`zmm.rs`); the indices are body slots below the array's length,
        // and records are 32 bytes (lin, ang, padding); no
        // concurrent writer (caller).
        let c = unsafe { load_records(vel.as_mut_ptr() as *const f32, idx) };
        (
            V3::new(Zmm16(c[0]), Zmm16(c[1]), Zmm16(c[2])),
            V3::new(Zmm16(c[3]), Zmm16(c[4]), Zmm16(c[5])),
        )
    }

    /// Writes back the lanes whose inverse mass is positive (lanes at the
    /// zero slot or a kinematic body are skipped).
    #[inline(always)]
    unsafe fn scatter_side(
        vel: &Velocities,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        lin: V3<Zmm16>,
        ang: V3<Zmm16>,
    ) {
        debug_assert!(idx.iter().all(|&i| (i as usize) < vel.len()));
        // SAFETY: AVX-512F (`zmm.rs`); every written index is a body slot
        // below the array's length (its padding gets a zero); the written
        // lanes' bodies are distinct and this call's alone (caller).
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

    impl BodyLanes for WideZmm {
        #[inline(always)]
        unsafe fn gather(
            self,
            vel: &Velocities,
            a: &[u32; LANES],
            b: &[u32; LANES],
        ) -> PairVelocity<Zmm16> {
            // SAFETY: forwarded to the caller.
            let ((va, wa), (vb, wb)) = unsafe { (gather_side(vel, a), gather_side(vel, b)) };
            PairVelocity { va, wa, vb, wb }
        }

        #[inline(always)]
        unsafe fn scatter(
            self,
            vel: &Velocities,
            a: &[u32; LANES],
            b: &[u32; LANES],
            inv_mass_a: &[f32; LANES],
            inv_mass_b: &[f32; LANES],
            v: PairVelocity<Zmm16>,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe {
                scatter_side(vel, a, inv_mass_a, v.va, v.wa);
                scatter_side(vel, b, inv_mass_b, v.vb, v.wb);
            }
        }
    }
}
