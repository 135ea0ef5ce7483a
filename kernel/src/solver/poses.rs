//! The solver's poses during the position solve, shared by every
//! constraint type: one 32-byte record per body (the zero slot for static
//! sides and padding), a bundle's two sides gathered and scattered through
//! the lane kinds' record loads (`bodies.rs`), static sides' poses from the
//! bundle's own rows (their slots hold no pose), and the first-order turn
//! every push applies to a rotation.
//!
//! A push turns a body by a small rotation vector `θ`, applied to first
//! order, `q ← normalize(q + ½ (θ, 0) ⊗ q)` (as bepu and Box2D do for small
//! angles; the corrections are a fraction of an error over a lever arm), so
//! that it needs no trigonometry and lanes compute what one lane computes.

use crate::disjoint::Disjoint;
use crate::math::{Quat, Vec3};
use crate::solver::bodies::{Record, RecordLanes};
use archipelago_simd::{Lane, Real, LANES, Q4, V3};

/// One value per lane.
type Row = [f32; LANES];
/// A vector per lane, by component.
type Row3 = [Row; 3];

/// The poses of a bundle's static sides (which never move), with a mask of
/// which sides are static.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub(crate) struct StaticPoses {
    /// 1 where the side is a static body (or the world), whose pose follows.
    pub static_a: Row,
    pub static_b: Row,
    pub xa: Row3,
    pub qa: [Row; 4],
    pub xb: Row3,
    pub qb: [Row; 4],
}

/// A body's pose during the position solve: one 32-byte record (position,
/// padding, rotation), so a bundle loads and stores whole records.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
pub(crate) struct BodyPose {
    pub pos: Vec3,
    pub pad: f32,
    pub rot: Quat,
}

// SAFETY: pos (3 floats), pad (1), rot (4): 32 bytes, no padding
// (asserted).
unsafe impl Record for BodyPose {}
const _: () = assert!(core::mem::size_of::<BodyPose>() == 32);
const _: () = assert!(core::mem::offset_of!(BodyPose, pad) == 12);
const _: () = assert!(core::mem::offset_of!(BodyPose, rot) == 16);

impl BodyPose {
    pub const IDENTITY: BodyPose = BodyPose {
        pos: Vec3::ZERO,
        pad: 0.0,
        rot: Quat::IDENTITY,
    };
}

/// Solver poses per body slot (and the zero slot), written by several
/// workers at disjoint bodies.
pub(crate) type Poses<'a> = Disjoint<'a, BodyPose>;

/// The two bodies' poses while one contact (or a bundle) is pushed.
#[derive(Clone, Copy)]
pub(crate) struct PairPose<R> {
    pub xa: V3<R>,
    pub qa: Q4<R>,
    pub xb: V3<R>,
    pub qb: Q4<R>,
}

/// Loading and storing a contact's two bodies' poses, written once for
/// every lane kind: dynamic and kinematic sides from the solver's pose
/// records (`refs` as in the velocity solve: static sides point at the
/// zero slot), static sides from the position prestep (their pose never
/// changes).
pub(crate) trait PoseLanes: RecordLanes {
    /// # Safety
    /// No other thread writes these bodies' poses during the call.
    #[inline(always)]
    unsafe fn gather_poses(
        self,
        poses: &Poses,
        a: &[u32; LANES],
        b: &[u32; LANES],
        statics: &StaticPoses,
    ) -> PairPose<Self::R> {
        let side = |c: [Self::R; 8]| {
            let q = Q4 {
                x: c[4],
                y: c[5],
                z: c[6],
                w: c[7],
            };
            (V3::new(c[0], c[1], c[2]), q)
        };
        // SAFETY: forwarded to the caller (body slots are in bounds).
        let (ca, cb) = unsafe { (self.load_records(poses, a), self.load_records(poses, b)) };
        with_statics(self, statics, side(ca), side(cb))
    }

    /// Writes back the sides whose inverse mass is positive.
    ///
    /// # Safety
    /// No other thread reads or writes these lanes' dynamic bodies during
    /// the call, and the lanes' dynamic bodies are distinct.
    #[inline(always)]
    unsafe fn scatter_poses(
        self,
        poses: &Poses,
        a: &[u32; LANES],
        b: &[u32; LANES],
        inv_mass_a: &[f32; LANES],
        inv_mass_b: &[f32; LANES],
        pose: PairPose<Self::R>,
    ) {
        let z = Self::R::zero();
        let (xa, qa, xb, qb) = (pose.xa, pose.qa, pose.xb, pose.qb);
        // SAFETY: forwarded to the caller.
        unsafe {
            let ca = [xa.x, xa.y, xa.z, z, qa.x, qa.y, qa.z, qa.w];
            self.store_records(poses, a, inv_mass_a, ca);
            let cb = [xb.x, xb.y, xb.z, z, qb.x, qb.y, qb.z, qb.w];
            self.store_records(poses, b, inv_mass_b, cb);
        }
    }
}

impl<L: RecordLanes> PoseLanes for L {}

/// A quaternion column's lanes.
#[inline(always)]
pub(crate) fn load_q<L: Lane>(l: L, q: &[Row; 4]) -> Q4<L::R> {
    Q4 {
        x: l.load(&q[0]),
        y: l.load(&q[1]),
        z: l.load(&q[2]),
        w: l.load(&q[3]),
    }
}

#[inline(always)]
fn static_pose<L: Lane>(l: L, x: &Row3, q: &[Row; 4]) -> (V3<L::R>, Q4<L::R>) {
    (l.load3(x), load_q(l, q))
}

#[inline(always)]
fn pick<R: Real>(m: R::Mask, (x, q): (V3<R>, Q4<R>), (sx, sq): (V3<R>, Q4<R>)) -> (V3<R>, Q4<R>) {
    (
        V3::select(m, sx, x),
        Q4 {
            x: R::select(m, sq.x, q.x),
            y: R::select(m, sq.y, q.y),
            z: R::select(m, sq.z, q.z),
            w: R::select(m, sq.w, q.w),
        },
    )
}
/// A bundle's poses from both sides' gathered poses, static lanes from the
/// prestep (their slots hold no pose).
#[inline(always)]
fn with_statics<L: Lane>(
    l: L,
    pp: &StaticPoses,
    ga: (V3<L::R>, Q4<L::R>),
    gb: (V3<L::R>, Q4<L::R>),
) -> PairPose<L::R> {
    let zero = L::R::zero();
    let (xa, qa) = pick(
        l.load(&pp.static_a).gt(zero),
        ga,
        static_pose(l, &pp.xa, &pp.qa),
    );
    let (xb, qb) = pick(
        l.load(&pp.static_b).gt(zero),
        gb,
        static_pose(l, &pp.xb, &pp.qb),
    );
    PairPose { xa, qa, xb, qb }
}
/// `q` turned by the small rotation vector `θ`:
/// `normalize(q + ½ (θ, 0) ⊗ q)`.
#[inline(always)]
pub(crate) fn turn<R: Real>(q: Q4<R>, theta: V3<R>) -> Q4<R> {
    let half = R::splat(0.5);
    let qv = V3::new(q.x, q.y, q.z);
    let dv = (theta.scale(q.w) + theta.cross(qv)).scale(half);
    let dw = -theta.dot(qv) * half;
    let (x, y, z, w) = (q.x + dv.x, q.y + dv.y, q.z + dv.z, q.w + dw);
    let inv = R::splat(1.0) / (x * x + y * y + z * z + w * w).sqrt();
    Q4 {
        x: x * inv,
        y: y * inv,
        z: z * inv,
        w: w * inv,
    }
}

#[inline(always)]
pub(crate) fn keep_q<R: Real>(m: R::Mask, new: Q4<R>, old: Q4<R>) -> Q4<R> {
    Q4 {
        x: R::select(m, new.x, old.x),
        y: R::select(m, new.y, old.y),
        z: R::select(m, new.z, old.z),
        w: R::select(m, new.w, old.w),
    }
}
