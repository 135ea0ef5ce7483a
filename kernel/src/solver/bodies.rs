//! The solver's bodies: one velocity record per body slot, plus a last
//! slot that stays zero (static bodies and padding lanes point there, so
//! reading them touches nothing any step writes), and the gather and
//! scatter of a constraint's two bodies, written once over the lane kind.
//!
//! Velocity and pose records are 8 floats (32 bytes): a lane kind says
//! once how it reads and writes 16 lanes' records ([`RecordLanes`]: one
//! lane, lane by lane into arrays, or one 256-bit access per lane and a
//! register transpose on the AVX2 and AVX-512 paths), and the velocity
//! and pose gathers are written once on top of it.
//!
//! Only dynamic sides are written back: static and kinematic bodies are
//! read-only during a solve, so any number of constraints solved at once
//! may share them.

use crate::disjoint::Disjoint;
use crate::math::Vec3;
use archipelago_simd::{F32x16, Lane, One, Real, Wide, LANES, V3};

/// A body's velocities during the solve: one 32-byte record, so a body
/// never straddles two cache lines and two workers' bodies share a line
/// only in pairs.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
pub(crate) struct BodyVelocity {
    pub lin: Vec3,
    pub ang: Vec3,
    /// Zero; a field rather than padding, so the record is 8 initialized
    /// floats.
    pub pad: [f32; 2],
}

impl BodyVelocity {
    pub fn new(lin: Vec3, ang: Vec3) -> Self {
        BodyVelocity {
            lin,
            ang,
            pad: [0.0; 2],
        }
    }
}

/// A record of 8 `f32`s that the bundle paths read and write as floats.
///
/// # Safety
/// Implementors are `repr(C)`, 32 bytes, made of `f32`s only (no padding
/// bytes), aligned to 32.
pub(crate) unsafe trait Record: Copy {}

// SAFETY: lin (3 floats), ang (3), pad (2): 32 bytes, no padding (asserted).
unsafe impl Record for BodyVelocity {}
const _: () = assert!(core::mem::size_of::<BodyVelocity>() == 32);
const _: () = assert!(core::mem::offset_of!(BodyVelocity, ang) == 12);
const _: () = assert!(core::mem::offset_of!(BodyVelocity, pad) == 24);

/// Solver velocities, written by several workers at disjoint bodies.
pub(crate) type Velocities<'a> = Disjoint<'a, BodyVelocity>;

/// How a lane kind reads and writes the records of its lanes.
pub(crate) trait RecordLanes: Lane {
    /// Component `k` of the result is float `k` of each lane's record
    /// `records[idx[lane]]`.
    ///
    /// # Safety
    /// Every `idx[lane]` this lane kind reads is below `records.len()`,
    /// and no other thread writes those records during the call.
    unsafe fn load_records<T: Record>(
        self,
        records: &Disjoint<T>,
        idx: &[u32; LANES],
    ) -> [Self::R; 8];

    /// Writes `c` back as the records of the lanes with `inv_mass > 0`
    /// (all 8 floats).
    ///
    /// # Safety
    /// Every written `idx[lane]` is below `records.len()`, the written
    /// records are distinct, and no other thread reads or writes them
    /// during the call.
    unsafe fn store_records<T: Record>(
        self,
        records: &Disjoint<T>,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        c: [Self::R; 8],
    );
}

/// Record `i` as its 8 floats (bounds checked).
///
/// # Safety
/// No other thread writes record `i` during the call.
#[inline(always)]
unsafe fn read_record<T: Record>(records: &Disjoint<T>, i: usize) -> [f32; 8] {
    assert!(i < records.len());
    // SAFETY: record `i` is in bounds and 8 floats (`Record`); no
    // concurrent writer (caller).
    unsafe { *(records.as_mut_ptr().add(i) as *const [f32; 8]) }
}

/// Writes record `i` as 8 floats (bounds checked).
///
/// # Safety
/// No other thread reads or writes record `i` during the call.
#[inline(always)]
unsafe fn write_record<T: Record>(records: &Disjoint<T>, i: usize, r: [f32; 8]) {
    assert!(i < records.len());
    // SAFETY: record `i` is in bounds and 8 floats (`Record`); exclusive
    // access to it (caller).
    unsafe { *(records.as_mut_ptr().add(i) as *mut [f32; 8]) = r };
}

impl RecordLanes for One {
    #[inline(always)]
    unsafe fn load_records<T: Record>(self, records: &Disjoint<T>, idx: &[u32; LANES]) -> [f32; 8] {
        // SAFETY: no concurrent writer of the record (caller).
        unsafe { read_record(records, idx[self.0] as usize) }
    }

    #[inline(always)]
    unsafe fn store_records<T: Record>(
        self,
        records: &Disjoint<T>,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        c: [f32; 8],
    ) {
        if inv_mass[self.0] > 0.0 {
            // SAFETY: exclusive access to the record (caller).
            unsafe { write_record(records, idx[self.0] as usize, c) };
        }
    }
}

/// Lane by lane through arrays (the transpose happens in these loads and
/// stores; LLVM vectorizes what follows).
impl RecordLanes for Wide {
    #[inline(always)]
    unsafe fn load_records<T: Record>(
        self,
        records: &Disjoint<T>,
        idx: &[u32; LANES],
    ) -> [F32x16; 8] {
        let mut c = [[0f32; LANES]; 8];
        for (l, &i) in idx.iter().enumerate() {
            // SAFETY: no concurrent writer of the record (caller).
            let r = unsafe { read_record(records, i as usize) };
            for (k, v) in r.into_iter().enumerate() {
                c[k][l] = v;
            }
        }
        c.map(F32x16::new)
    }

    #[inline(always)]
    unsafe fn store_records<T: Record>(
        self,
        records: &Disjoint<T>,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        c: [F32x16; 8],
    ) {
        let c = c.map(|v| v.to_array());
        for (l, &i) in idx.iter().enumerate() {
            if inv_mass[l] > 0.0 {
                let r: [f32; 8] = core::array::from_fn(|k| c[k][l]);
                // SAFETY: exclusive access to the record (caller).
                unsafe { write_record(records, i as usize, r) };
            }
        }
    }
}

/// The two bodies' velocities while one constraint (or one bundle of them)
/// is solved.
#[derive(Clone, Copy)]
pub(crate) struct PairVelocity<R> {
    pub va: V3<R>,
    pub wa: V3<R>,
    pub vb: V3<R>,
    pub wb: V3<R>,
}

/// Loading and storing a constraint's two bodies' velocities, written
/// once for every lane kind.
pub(crate) trait BodyLanes: RecordLanes {
    /// # Safety
    /// No other thread writes these bodies during the call.
    #[inline(always)]
    unsafe fn gather(
        self,
        vel: &Velocities,
        a: &[u32; LANES],
        b: &[u32; LANES],
    ) -> PairVelocity<Self::R> {
        // SAFETY: forwarded to the caller (body slots are in bounds).
        let (ca, cb) = unsafe { (self.load_records(vel, a), self.load_records(vel, b)) };
        PairVelocity {
            va: V3::new(ca[0], ca[1], ca[2]),
            wa: V3::new(ca[3], ca[4], ca[5]),
            vb: V3::new(cb[0], cb[1], cb[2]),
            wb: V3::new(cb[3], cb[4], cb[5]),
        }
    }

    /// Writes back the sides whose inverse mass is positive.
    ///
    /// # Safety
    /// No other thread reads or writes these lanes' dynamic bodies during
    /// the call, and the lanes' dynamic bodies are distinct.
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
        let z = Self::R::zero();
        // SAFETY: forwarded to the caller.
        unsafe {
            let ca = [v.va.x, v.va.y, v.va.z, v.wa.x, v.wa.y, v.wa.z, z, z];
            self.store_records(vel, a, inv_mass_a, ca);
            let cb = [v.vb.x, v.vb.y, v.vb.z, v.wb.x, v.wb.y, v.wb.z, z, z];
            self.store_records(vel, b, inv_mass_b, cb);
        }
    }
}

impl<L: RecordLanes> BodyLanes for L {}
