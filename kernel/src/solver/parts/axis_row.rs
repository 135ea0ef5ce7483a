//! One general row: a linear axis and an angular part on each side, an
//! accumulated impulse kept within bounds, a target velocity, and an
//! optional spring (Jolt's `AxisConstraintPart` and `AngleConstraintPart`
//! with their `SpringPart`). Every limit, motor and friction row of a
//! joint is one of these; what differs is only how [`limit`] and [`motor`]
//! set its target and bounds.
//!
//! Limits are speculative (as contacts are, and Box2D v3's joint limits):
//! a hard limit row is in use whenever the joint has limits, on the side
//! nearest the coordinate, and lets the joint approach that side at up to
//! the velocity that reaches it at the end of the step, never past it. So
//! a door swung at 10 rad/s into its stop halts on it instead of passing it
//! by a step's worth of travel and being pushed back. A violated limit
//! (after integration's rounding, or a pose set by hand) is held at zero
//! velocity and corrected by the position iterations.
//!
//! Soft rows (`softness > 0`) follow Catto's soft constraints in Jolt's
//! form: for a spring of angular frequency `ω` and damping ratio `ζ` on an
//! error `C`, with `K` the row's inverse effective mass,
//! `γ = K / (dt ω (2ζ + dt ω))`, target `−ω C / (2ζ + dt ω)` and effective
//! mass `1 / (K + γ)`; each pass solves `J v + γ λ = target`.

use super::block2::Jacobian;
use super::{
    apply_row, clamp, push, row_inverse_mass, select_mask, Masses, Row, Row3,
    MAX_POSITION_CORRECTION,
};
use crate::solver::bodies::PairVelocity;
use crate::solver::poses::PairPose;
use archipelago_simd::{Lane, Real, V3};
use bytemuck::{Pod, Zeroable};
use core::f32::consts::{PI, TAU};

/// An unbounded side of a row's impulse.
const UNBOUNDED: f32 = f32::MAX;

/// The row's prestep.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct AxisRows {
    pub n: Row3,
    pub ja: Row3,
    pub jb: Row3,
    /// `I_a⁻¹ j_a`, `I_b⁻¹ j_b`.
    pub ia_ja: Row3,
    pub ib_jb: Row3,
    /// `1 / (K + γ)`; 0 where the row is off.
    pub mass: Row,
    pub softness: Row,
    pub target: Row,
    /// Bounds of the accumulated impulse.
    pub lo: Row,
    pub hi: Row,
}

/// How a row acts this step (see [`limit`] and [`motor`]).
#[derive(Clone, Copy)]
pub(crate) struct RowSetup<R: Real> {
    pub on: R::Mask,
    pub target: R,
    pub softness: R,
    pub lo: R,
    pub hi: R,
}

/// A spring's softness and target for error `c` (see the module docs);
/// `frequency` in Hz.
#[inline(always)]
fn spring<R: Real>(k: R, c: R, frequency: R, damping: R, dt: R) -> (R, R) {
    let omega = R::splat(TAU) * frequency;
    let d = R::splat(2.0) * damping + dt * omega;
    let gamma = k / (dt * omega * d);
    (gamma, -(omega * c) / d)
}

/// `a` in `(-π, π]`, for `a` in `[-3π, 3π]`.
#[inline(always)]
fn centred<R: Real>(a: R) -> R {
    let a = R::select(a.gt(R::splat(PI)), a - R::splat(TAU), a);
    R::select(a.lt(R::splat(-PI)), a + R::splat(TAU), a)
}

/// A limit keeping the coordinate `x` within `[lo, hi]` (`wrap`: an angle,
/// whose distances to the limits go the short way round); `lo == hi`
/// locks it. Hard unless `soft`, then a spring of `spring = (Hz, ζ)`
/// acting only outside the limits. `k` is the row's inverse effective
/// mass. Returns the row's setup and its position error (`x` minus the
/// limit it violates, 0 inside).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn limit<R: Real>(
    x: R,
    lo: R,
    hi: R,
    wrap: R::Mask,
    soft: R::Mask,
    spring_of: (R, R),
    k: R,
    dt: R,
    on: R::Mask,
) -> (RowSetup<R>, R) {
    let zero = R::zero();
    let big = R::splat(UNBOUNDED);
    let LimitSide {
        dlo,
        dhi,
        locked,
        lower,
    } = LimitSide::of(x, lo, hi, wrap);
    // hard: approach the limit no faster than reaching it this step
    let t_lower = R::select(dlo.gt(zero), -dlo / dt, zero);
    let t_upper = R::select(dhi.gt(zero), dhi / dt, zero);
    let hard_target = R::select(locked, zero, R::select(lower, t_lower, t_upper));
    // soft: a spring on the violation
    let c = R::select(lower, dlo, -dhi);
    let outside = R::or(locked, select_mask::<R>(lower, dlo.lt(zero), dhi.lt(zero)));
    let (gamma, soft_target) = spring(k, c, spring_of.0, spring_of.1, dt);
    let on = R::and(on, R::or(R::not(soft), outside));
    let setup = RowSetup {
        on,
        target: R::select(soft, soft_target, hard_target),
        softness: R::select(soft, gamma, zero),
        lo: R::select(R::and(lower, R::not(locked)), zero, -big),
        hi: R::select(R::and(R::not(lower), R::not(locked)), zero, big),
    };
    (setup, LimitSide::of(x, lo, hi, wrap).error())
}

/// Where a coordinate stands against its limits.
#[derive(Clone, Copy)]
pub(crate) struct LimitSide<R: Real> {
    /// `x − lo` and `hi − x` (the short way round for angles).
    dlo: R,
    dhi: R,
    /// `lo == hi`.
    locked: R::Mask,
    /// The lower limit is the nearer one (or the limits are locked).
    lower: R::Mask,
}

impl<R: Real> LimitSide<R> {
    #[inline(always)]
    pub fn of(x: R, lo: R, hi: R, wrap: R::Mask) -> Self {
        let (dlo, dhi) = (x - lo, hi - x);
        let dlo = R::select(wrap, centred(dlo), dlo);
        let dhi = R::select(wrap, centred(dhi), dhi);
        let locked = R::not(hi.gt(lo));
        let lower = R::or(locked, R::not(dlo.abs().gt(dhi.abs())));
        LimitSide {
            dlo,
            dhi,
            locked,
            lower,
        }
    }

    /// The coordinate minus the limit it violates (0 inside the limits).
    #[inline(always)]
    pub fn error(&self) -> R {
        let zero = R::zero();
        let (dlo, dhi) = (self.dlo, self.dhi);
        R::select(
            self.locked,
            dlo,
            R::select(self.lower, dlo.min(zero), -(dhi.min(zero))),
        )
    }
}

/// A motor on coordinate `x` (`wrap`: an angle): a velocity target, a
/// spring towards a position, or, when off, friction; at most `max` (or
/// `friction`) times `dt` of impulse.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn motor<R: Real>(
    x: R,
    wrap: R::Mask,
    velocity: R::Mask,
    position: R::Mask,
    target: R,
    spring_of: (R, R),
    max: R,
    friction: R,
    k: R,
    dt: R,
    on: R::Mask,
) -> RowSetup<R> {
    let zero = R::zero();
    let c = x - target;
    let c = R::select(wrap, centred(c), c);
    let (gamma, spring_target) = spring(k, c, spring_of.0, spring_of.1, dt);
    let driven = R::or(velocity, position);
    let bound = R::select(driven, max, friction) * dt;
    RowSetup {
        on: R::and(on, R::or(driven, friction.gt(zero))),
        target: R::select(velocity, target, R::select(position, spring_target, zero)),
        softness: R::select(position, gamma, zero),
        lo: -bound,
        hi: bound,
    }
}

/// Writes the row (Jacobian `j`, inverse mass `k`) as `setup` says; the
/// accumulated impulse `lambda` is clamped to the new bounds (a row that
/// turned from one limit to the other, or a motor given less force, does
/// not warm-start with an impulse it may no longer apply) and zeroed where
/// the row is off.
#[inline(always)]
pub(crate) fn prepare<L: Lane>(
    l: L,
    m: &Masses<L::R>,
    j: &Jacobian<L::R>,
    k: L::R,
    setup: &RowSetup<L::R>,
    p: &mut AxisRows,
    lambda: &mut L::R,
) {
    let zero = L::R::zero();
    let on = L::R::and(setup.on, k.gt(zero));
    let z3 = V3::zero();
    l.store3(&mut p.n, V3::select(on, j.n, z3));
    l.store3(&mut p.ja, V3::select(on, j.ja, z3));
    l.store3(&mut p.jb, V3::select(on, j.jb, z3));
    l.store3(&mut p.ia_ja, V3::select(on, m.ia.mul_vec(j.ja), z3));
    l.store3(&mut p.ib_jb, V3::select(on, m.ib.mul_vec(j.jb), z3));
    let mass = L::R::select(on, L::R::splat(1.0) / (k + setup.softness), zero);
    l.store(&mut p.mass, mass);
    l.store(&mut p.softness, L::R::select(on, setup.softness, zero));
    l.store(&mut p.target, L::R::select(on, setup.target, zero));
    l.store(&mut p.lo, L::R::select(on, setup.lo, zero));
    l.store(&mut p.hi, L::R::select(on, setup.hi, zero));
    *lambda = L::R::select(on, clamp(*lambda, setup.lo, setup.hi), zero);
}

/// `K` of a row.
#[inline(always)]
pub(crate) fn inverse_mass<R: Real>(m: &Masses<R>, j: &Jacobian<R>) -> R {
    row_inverse_mass(m, j.n, j.ja, j.jb)
}

/// Applies the accumulated impulse (the warm start).
#[inline(always)]
pub(crate) fn warm_start<L: Lane>(
    l: L,
    p: &AxisRows,
    m: &Masses<L::R>,
    lambda: L::R,
    v: &mut PairVelocity<L::R>,
) {
    let on = l.load(&p.mass).gt(L::R::zero());
    if L::R::any(on) {
        let (ia, ib) = (l.load3(&p.ia_ja), l.load3(&p.ib_jb));
        apply_row(v, m, l.load3(&p.n), ia, ib, lambda, on);
    }
}

/// One pass of the row.
#[inline(always)]
pub(crate) fn solve<L: Lane>(
    l: L,
    p: &AxisRows,
    m: &Masses<L::R>,
    lambda: &mut L::R,
    v: &mut PairVelocity<L::R>,
) {
    let mass = l.load(&p.mass);
    let on = mass.gt(L::R::zero());
    if !L::R::any(on) {
        return;
    }
    let n = l.load3(&p.n);
    let jv = n.dot(v.vb - v.va) + l.load3(&p.jb).dot(v.wb) - l.load3(&p.ja).dot(v.wa);
    let rhs = l.load(&p.target) - jv - l.load(&p.softness) * *lambda;
    let total = clamp(*lambda + mass * rhs, l.load(&p.lo), l.load(&p.hi));
    let total = L::R::select(on, total, *lambda);
    let (ia, ib) = (l.load3(&p.ia_ja), l.load3(&p.ib_jb));
    apply_row(v, m, n, ia, ib, total - *lambda, on);
    *lambda = total;
}

/// One position push of a fraction `beta` of the row's `error` (its
/// coordinate minus the limit it violates), with Jacobian `j` at the
/// current poses.
#[inline(always)]
pub(crate) fn solve_position<R: Real>(
    pose: &mut PairPose<R>,
    m: &Masses<R>,
    j: &Jacobian<R>,
    error: R,
    beta: R,
    on: R::Mask,
) {
    let k = inverse_mass(m, j);
    let on = R::and(R::and(on, k.gt(R::zero())), error.abs().gt(R::zero()));
    let cap = R::splat(MAX_POSITION_CORRECTION);
    let want = clamp(beta * error, -cap, cap);
    let d = R::select(on, -want / k, R::zero());
    push(
        pose,
        m,
        j.n.scale(d),
        m.ia.mul_vec(j.ja.scale(d)),
        m.ib.mul_vec(j.jb.scale(d)),
        on,
    );
}
