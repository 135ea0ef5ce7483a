//! The position solve of contacts (after integration), written once over
//! [`Lane`]: Baumgarte pushes on every point along the constraint's
//! normal, re-evaluated from the manifold's body-local points at the
//! current poses; poses move, velocities do not.
//!
//! A push turns a body by `θ = I⁻¹ (r × n) λ`, applied to its rotation to
//! first order, `q ← normalize(q + ½ (θ, 0) ⊗ q)` (as bepu and Box2D do for
//! small angles; the corrections are a fraction of a penetration over a
//! lever arm), so that it needs no trigonometry and lanes compute what one
//! lane computes.

use super::batch::{ContactPrestep, PositionPrestep, Row, Row3, POINTS};
use super::prepare::axis_row;
use crate::disjoint::Disjoint;
use crate::math::{Quat, Vec3};
use crate::settings::PhysicsSettings;
use archipelago_simd::{F32x16, Lane, One, Real, Wide, LANES, M3, Q4, V3};

/// A body's pose during the position solve: one 32-byte record (position,
/// padding, rotation), so a bundle loads and stores whole records.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
pub(crate) struct BodyPose {
    pub pos: Vec3,
    pub pad: f32,
    pub rot: Quat,
}

// The AVX-512 path reads and writes a record as 8 floats.
const _: () = assert!(core::mem::size_of::<BodyPose>() == 32);
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
/// Loading and storing a contact's poses, per lane kind: each lane kind
/// says how one side (the A or the B bodies of its lanes) is read and
/// written from the solver's pose records (`refs` as in the velocity
/// solve: static sides point at the zero slot); static sides' poses then
/// come from the position prestep (their pose never changes).
pub(crate) trait PoseLanes: Lane {
    /// Position and rotation of the bodies `idx` of the lanes.
    ///
    /// # Safety
    /// No other thread writes these bodies' poses during the call.
    unsafe fn gather_side(self, poses: &Poses, idx: &[u32; LANES]) -> (V3<Self::R>, Q4<Self::R>);

    /// Writes back the lanes whose inverse mass is positive.
    ///
    /// # Safety
    /// No other thread reads or writes these lanes' dynamic bodies during
    /// the call, and the lanes' dynamic bodies are distinct.
    unsafe fn scatter_side(
        self,
        poses: &Poses,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        x: V3<Self::R>,
        q: Q4<Self::R>,
    );

    /// # Safety
    /// As [`gather_side`](Self::gather_side), for both sides.
    #[inline(always)]
    unsafe fn gather_poses(
        self,
        poses: &Poses,
        a: &[u32; LANES],
        b: &[u32; LANES],
        pp: &PositionPrestep,
    ) -> PairPose<Self::R> {
        // SAFETY: forwarded to the caller.
        let (ga, gb) = unsafe { (self.gather_side(poses, a), self.gather_side(poses, b)) };
        with_statics(self, pp, ga, gb)
    }

    /// Writes back the sides whose inverse mass is positive.
    ///
    /// # Safety
    /// As [`scatter_side`](Self::scatter_side), for both sides.
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
        // SAFETY: forwarded to the caller.
        unsafe {
            self.scatter_side(poses, a, inv_mass_a, pose.xa, pose.qa);
            self.scatter_side(poses, b, inv_mass_b, pose.xb, pose.qb);
        }
    }
}

#[inline(always)]
fn static_pose<L: Lane>(l: L, x: &Row3, q: &[Row; 4]) -> (V3<L::R>, Q4<L::R>) {
    (
        l.load3(x),
        Q4 {
            x: l.load(&q[0]),
            y: l.load(&q[1]),
            z: l.load(&q[2]),
            w: l.load(&q[3]),
        },
    )
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
impl PoseLanes for One {
    #[inline(always)]
    unsafe fn gather_side(self, poses: &Poses, idx: &[u32; LANES]) -> (V3<f32>, Q4<f32>) {
        // SAFETY: forwarded to the caller.
        let BodyPose { pos: p, rot: r, .. } = unsafe { poses.get(idx[self.0] as usize) };
        let q = Q4 {
            x: r.x,
            y: r.y,
            z: r.z,
            w: r.w,
        };
        (V3::new(p.x, p.y, p.z), q)
    }

    #[inline(always)]
    unsafe fn scatter_side(
        self,
        poses: &Poses,
        idx: &[u32; LANES],
        inv_mass: &[f32; LANES],
        x: V3<f32>,
        q: Q4<f32>,
    ) {
        let l = self.0;
        if inv_mass[l] > 0.0 {
            let pose = BodyPose {
                pos: Vec3::new(x.x, x.y, x.z),
                pad: 0.0,
                rot: Quat::from_xyzw(q.x, q.y, q.z, q.w),
            };
            // SAFETY: forwarded to the caller.
            unsafe { poses.set(idx[l] as usize, pose) };
        }
    }
}

/// A bundle's poses from both sides' gathered poses, static lanes from the
/// prestep (their slots hold no pose).
#[inline(always)]
fn with_statics<L: Lane>(
    l: L,
    pp: &PositionPrestep,
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
/// One side's poses, lane by lane through the records.
impl PoseLanes for Wide {
    #[inline(always)]
    unsafe fn gather_side(self, poses: &Poses, idx: &[u32; LANES]) -> (V3<F32x16>, Q4<F32x16>) {
        let mut c = [[0f32; LANES]; 7];
        for (l, &i) in idx.iter().enumerate() {
            // SAFETY: forwarded to the caller.
            let BodyPose { pos: p, rot: q, .. } = unsafe { poses.get(i as usize) };
            for (k, v) in [p.x, p.y, p.z, q.x, q.y, q.z, q.w].into_iter().enumerate() {
                c[k][l] = v;
            }
        }
        let f = |k: usize| F32x16::new(c[k]);
        (
            V3::new(f(0), f(1), f(2)),
            Q4 {
                x: f(3),
                y: f(4),
                z: f(5),
                w: f(6),
            },
        )
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
        let c = [x.x, x.y, x.z, q.x, q.y, q.z, q.w].map(|v| v.to_array());
        for (l, &i) in idx.iter().enumerate() {
            if inv_mass[l] > 0.0 {
                let pose = BodyPose {
                    pos: Vec3::new(c[0][l], c[1][l], c[2][l]),
                    pad: 0.0,
                    rot: Quat::from_xyzw(c[3][l], c[4][l], c[5][l], c[6][l]),
                };
                // SAFETY: forwarded to the caller.
                unsafe { poses.set(i as usize, pose) };
            }
        }
    }
}

/// The AVX-512 path's loads and stores of whole pose records (`zmm.rs`).
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{PoseLanes, Poses};
    use crate::solver::zmm::{load_records, store_records, WideZmm, Zmm16};
    use archipelago_simd::{LANES, Q4, V3};
    use core::arch::x86_64::*;

    impl PoseLanes for WideZmm {
        #[inline(always)]
        unsafe fn gather_side(self, poses: &Poses, idx: &[u32; LANES]) -> (V3<Zmm16>, Q4<Zmm16>) {
            debug_assert!(idx.iter().all(|&i| (i as usize) < poses.len()));
            // SAFETY: AVX-512F is present wherever a `WideZmm` is used
            // (`zmm.rs`); every index is a slot below the array's length, and
            // records are 32 bytes (position, padding, rotation); no concurrent
            // writer (caller).
            let c = unsafe { load_records(poses.as_mut_ptr() as *const f32, idx) };
            (
                V3::new(Zmm16(c[0]), Zmm16(c[1]), Zmm16(c[2])),
                Q4 {
                    x: Zmm16(c[4]),
                    y: Zmm16(c[5]),
                    z: Zmm16(c[6]),
                    w: Zmm16(c[7]),
                },
            )
        }

        #[inline(always)]
        unsafe fn scatter_side(
            self,
            poses: &Poses,
            idx: &[u32; LANES],
            inv_mass: &[f32; LANES],
            x: V3<Zmm16>,
            q: Q4<Zmm16>,
        ) {
            debug_assert!(idx.iter().all(|&i| (i as usize) < poses.len()));
            // SAFETY: AVX-512F (`zmm.rs`); every written index is a slot below
            // the array's length (its padding gets a zero); the written lanes'
            // bodies are distinct and this call's alone (caller).
            unsafe {
                let mask = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(
                    _mm512_loadu_ps(inv_mass.as_ptr()),
                    _mm512_setzero_ps(),
                );
                if mask == 0 {
                    return;
                }
                let c = [
                    x.x.0,
                    x.y.0,
                    x.z.0,
                    _mm512_setzero_ps(),
                    q.x.0,
                    q.y.0,
                    q.z.0,
                    q.w.0,
                ];
                store_records(poses.as_mut_ptr() as *mut f32, idx, mask, c);
            }
        }
    }
}

/// `q` turned by the small rotation vector `θ`:
/// `normalize(q + ½ (θ, 0) ⊗ q)`.
#[inline(always)]
fn turn<R: Real>(q: Q4<R>, theta: V3<R>) -> Q4<R> {
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
fn keep_q<R: Real>(m: R::Mask, new: Q4<R>, old: Q4<R>) -> Q4<R> {
    Q4 {
        x: R::select(m, new.x, old.x),
        y: R::select(m, new.y, old.y),
        z: R::select(m, new.z, old.z),
        w: R::select(m, new.w, old.w),
    }
}

/// Baumgarte pushes on every point of a bundle's (or one lane's) contacts.
#[inline(always)]
pub(crate) fn solve_position<L: Lane>(
    l: L,
    p: &ContactPrestep,
    pp: &PositionPrestep,
    pose: &mut PairPose<L::R>,
    s: &PhysicsSettings,
) {
    let zero = L::R::zero();
    let n = l.load3(&p.normal);
    let (ima, imb) = (l.load(&p.inv_mass_a), l.load(&p.inv_mass_b));
    let (dyn_a, dyn_b) = (ima.gt(zero), imb.gt(zero));
    let m3 = |c: &[Row3; 3]| M3 {
        x_axis: l.load3(&c[0]),
        y_axis: l.load3(&c[1]),
        z_axis: l.load3(&c[2]),
    };
    let (ia, ib) = (m3(&pp.ia), m3(&pp.ib));
    let count = l.load(&p.count);
    let slop = L::R::splat(s.penetration_slop);
    let deepest = L::R::splat(-s.max_penetration_distance);
    let push = L::R::splat(-s.baumgarte);
    let half = L::R::splat(0.5);
    for k in 0..POINTS {
        let PairPose { xa, qa, xb, qb } = *pose;
        let pa = xa + qa.rotate(l.load3(&pp.local_a[k]));
        let pb = xb + qb.rotate(l.load3(&pp.local_b[k]));
        let separation = (pb - pa).dot(n) + slop;
        let active = L::R::and(count.gt(L::R::splat(k as f32)), separation.lt(zero));
        if !L::R::any(active) {
            continue;
        }
        let error = separation.max(deepest);
        let mid = (pa + pb).scale(half);
        let axis = axis_row(mid - xa, mid - xb, n, ima, imb, &ia, &ib);
        let lambda = push * error * axis.mass;
        let move_a = L::R::and(active, dyn_a);
        let move_b = L::R::and(active, dyn_b);
        pose.xa = V3::select(move_a, xa - n.scale(lambda * ima), xa);
        pose.qa = keep_q(move_a, turn(qa, -axis.ia_ra_x.scale(lambda)), qa);
        pose.xb = V3::select(move_b, xb + n.scale(lambda * imb), xb);
        pose.qb = keep_q(move_b, turn(qb, axis.ib_rb_x.scale(lambda)), qb);
    }
}

/// Whether lane `lane` holds a contact (padding lanes have no points).
#[inline]
pub(crate) fn lane_used(p: &ContactPrestep, lane: usize) -> bool {
    p.count[lane] > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first-order turn of a unit quaternion is a rotation by about
    /// |θ| about θ (to second order), and stays unit.
    #[test]
    fn turn_is_a_small_rotation() {
        let q = Quat::from_rotation_y(0.7) * Quat::from_rotation_x(-0.3);
        let theta = Vec3::new(0.01, -0.02, 0.005);
        let t = turn(
            Q4 {
                x: q.x,
                y: q.y,
                z: q.z,
                w: q.w,
            },
            V3::new(theta.x, theta.y, theta.z),
        );
        let t = Quat::from_xyzw(t.x, t.y, t.z, t.w);
        assert!((t.length() - 1.0).abs() < 1e-6);
        let exact = Quat::from_scaled_axis(theta) * q;
        assert!(t.angle_between(exact) < 1e-4, "{t} vs {exact}");
    }
}
