//! Integration (semi-implicit Euler): forces change velocities at the start of
//! a step, solved velocities move bodies at the end of it.
//!
//! The uniform parts (gravity, `p += v dt`) are SIMD sweeps over the columns
//! up to the slot high-water mark, in parallel pieces, where a per-slot scale
//! column zeroes out slots that must not move (static, removed, padding); the
//! per-body parts (user forces, damping, clamping, rotation) loop over the
//! active list, computing in one parallel pass and writing the body columns
//! in a second.

use crate::body::{Bodies, MotionType};
use crate::disjoint::{Disjoint, Vec3Disjoint};
use crate::jobs::StepCtx;
use crate::math::{Quat, Vec3};
use crate::quarantine::{at_length, capped_product, clamp_length};
use crate::settings::PhysicsSettings;
use archipelago_layout::{padded_len, Vec3Column};
use archipelago_simd::{add_scaled_columns, add_scaled_uniform};

/// `Bodies::motion_type` of a dynamic body.
const DYNAMIC: u8 = MotionType::Dynamic as u8;

/// Active bodies per job of the per-body loops.
const BODIES_PER_JOB: usize = 256;
/// Slots per job of the whole-column SIMD sweeps (a multiple of the lane
/// padding, so every piece but the last is whole lanes, and the last ends
/// at a padded length).
const SLOTS_PER_JOB: usize = 4096;

/// What a per-body loop computed for one active body; a second parallel
/// pass writes it into the body columns (each active slot is written by one
/// job, through [`Disjoint`] views: the body columns are not laid out by
/// active index, so the borrow checker cannot split them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyScratch {
    v: Vec3,
    w: Vec3,
    q: Quat,
    inertia: [f32; 9],
    lo: Vec3,
    hi: Vec3,
    /// The integration found the body non-finite (see `quarantine.rs`).
    faulted: bool,
}

impl Default for BodyScratch {
    fn default() -> Self {
        Self {
            v: Vec3::ZERO,
            w: Vec3::ZERO,
            q: Quat::IDENTITY,
            inertia: [0.0; 9],
            lo: Vec3::ZERO,
            hi: Vec3::ZERO,
            faulted: false,
        }
    }
}

/// Slots the column sweeps cover: every slot ever used, in whole lanes.
fn swept_slots(bodies: &Bodies) -> usize {
    padded_len(bodies.slots.high_water()).min(bodies.position.padded_len())
}

/// `dst += k·scale` (or `dst += src·scale·k` with `src`) over the swept
/// slots of three columns, in parallel pieces.
fn sweep(
    ctx: &StepCtx,
    name: &'static str,
    n: usize,
    dst: &mut Vec3Column,
    src: Option<&Vec3Column>,
    scale: &[f32],
    k: Vec3,
) {
    let dst = Vec3Disjoint::new(dst);
    ctx.par_for(name, n, SLOTS_PER_JOB, |range| {
        // SAFETY: the pieces of `0..n` are disjoint.
        let d = unsafe { dst.slices_mut(range.start, range.end) };
        let scale = &scale[range.clone()];
        let k = k.to_array();
        match src {
            None => {
                for (d, k) in d.into_iter().zip(k) {
                    add_scaled_uniform(d, scale, k);
                }
            }
            Some(src) => {
                let (sx, sy, sz) = src.slices();
                for ((d, s), k) in d.into_iter().zip([sx, sy, sz]).zip(k) {
                    add_scaled_columns(d, &s[range.clone()], scale, k);
                }
            }
        }
    });
}

/// `v += (g·gravity_factor + F/m)·dt`, `ω += I⁻¹ τ dt`, then damping
/// `v *= max(0, 1 - c dt)`, then the clamp to the maximum speeds (also for
/// kinematic bodies), so the solver never reads a velocity above them.
/// Clears the force accumulators.
///
/// A force's velocity change is capped at twice the maximum speed (it
/// could not take the body further than the clamp allows), which keeps
/// `F/m·dt` finite for any finite force on any accepted mass.
pub(crate) fn apply_forces(
    ctx: &StepCtx,
    bodies: &mut Bodies,
    scratch: &mut Vec<BodyScratch>,
    settings: &PhysicsSettings,
    dt: f32,
) {
    let n = swept_slots(bodies);
    let gravity = settings.gravity * dt;
    let scale = bodies.gravity_scale.as_slice();
    sweep(
        ctx,
        "gravity",
        n,
        &mut bodies.linear_velocity,
        None,
        scale,
        gravity,
    );
    scratch.resize(bodies.active.len(), BodyScratch::default());
    let b: &Bodies = bodies;
    let (max_v, max_w) = (settings.max_linear_velocity, settings.max_angular_velocity);
    ctx.par_chunks_mut("forces", scratch, BODIES_PER_JOB, |first, chunk| {
        for (s, &i) in chunk.iter_mut().zip(&b.active[first..]) {
            let i = i as usize;
            let mut v = b.lin_vel(i);
            let mut w = b.ang_vel(i);
            if b.motion(i) == MotionType::Dynamic {
                let force = Vec3::from_array(b.force[i]);
                let torque = Vec3::from_array(b.torque[i]);
                if force != Vec3::ZERO || torque != Vec3::ZERO {
                    v += capped_product(force, b.inv_mass[i] * dt, 2.0 * max_v);
                    let dw = b.inv_inertia(i) * (torque * dt);
                    w += if dw.is_finite() && dw.length_squared() <= 4.0 * max_w * max_w {
                        dw
                    } else {
                        // Overflowed: the direction from a scaled torque.
                        let m = torque.abs().max_element();
                        at_length(b.inv_inertia(i) * (torque / m), 2.0 * max_w)
                    };
                }
                v *= (1.0 - b.linear_damping[i] * dt).max(0.0);
                w *= (1.0 - b.angular_damping[i] * dt).max(0.0);
            }
            s.v = clamp_length(v, max_v);
            s.w = clamp_length(w, max_w);
        }
        0
    });
    let (active, motion) = (&bodies.active, &bodies.motion_type);
    let force = Disjoint::new(bodies.force.as_mut_slice());
    let torque = Disjoint::new(bodies.torque.as_mut_slice());
    let lin = Vec3Disjoint::new(&mut bodies.linear_velocity);
    let ang = Vec3Disjoint::new(&mut bodies.angular_velocity);
    let scratch = &scratch[..];
    ctx.par_for("write forces", active.len(), BODIES_PER_JOB, |range| {
        for idx in range {
            let i = active[idx] as usize;
            let s = &scratch[idx];
            // SAFETY: active slots are distinct, so slot `i` is this
            // iteration's alone.
            unsafe {
                if motion[i] == DYNAMIC {
                    force.set(i, [0.0; 3]);
                    torque.set(i, [0.0; 3]);
                }
                lin.set(i, s.v.to_array());
                ang.set(i, s.w.to_array());
            }
        }
    });
}

/// Clamps velocities, then `p += v dt` (SIMD, all slots) and
/// `q = exp(ω dt) q` (active bodies). A body whose solved velocity or new
/// pose is non-finite keeps its pose, gets zero velocity and is flagged
/// faulted (`quarantine.rs`); returns how many were.
pub(crate) fn integrate_positions(
    ctx: &StepCtx,
    bodies: &mut Bodies,
    scratch: &mut Vec<BodyScratch>,
    settings: &PhysicsSettings,
    dt: f32,
) -> u32 {
    scratch.resize(bodies.active.len(), BodyScratch::default());
    let b: &Bodies = bodies;
    let faults = ctx.par_chunks_mut("rotate", scratch, BODIES_PER_JOB, |first, chunk| {
        let mut faults = 0;
        for (s, &i) in chunk.iter_mut().zip(&b.active[first..]) {
            let i = i as usize;
            let (v, w) = (b.lin_vel(i), b.ang_vel(i));
            s.faulted = !(v.is_finite() && w.is_finite());
            if !s.faulted {
                s.v = clamp_length(v, settings.max_linear_velocity);
                s.w = clamp_length(w, settings.max_angular_velocity);
                s.q = if s.w != Vec3::ZERO {
                    crate::math::quat_mul(Quat::from_scaled_axis(s.w * dt), b.rot(i)).normalize()
                } else {
                    b.rot(i)
                };
                s.faulted = !(s.q.is_finite() && (b.pos(i) + s.v * dt).is_finite());
            }
            if s.faulted {
                (s.v, s.w, s.q) = (Vec3::ZERO, Vec3::ZERO, b.rot(i));
                faults += 1;
            }
        }
        faults
    });
    {
        let active = &bodies.active;
        let lin = Vec3Disjoint::new(&mut bodies.linear_velocity);
        let ang = Vec3Disjoint::new(&mut bodies.angular_velocity);
        let rot = Disjoint::new(bodies.rotation.as_mut_slice());
        let faulted = Disjoint::new(&mut bodies.faulted);
        let scratch = &scratch[..];
        ctx.par_for("write rotations", active.len(), BODIES_PER_JOB, |range| {
            for idx in range {
                let i = active[idx] as usize;
                let s = &scratch[idx];
                // SAFETY: active slots are distinct.
                unsafe {
                    lin.set(i, s.v.to_array());
                    ang.set(i, s.w.to_array());
                    rot.set(i, s.q.to_array());
                    if s.faulted {
                        faulted.set(i, true);
                    }
                }
            }
        });
    }
    let n = swept_slots(bodies);
    sweep(
        ctx,
        "move",
        n,
        &mut bodies.position,
        Some(&bodies.linear_velocity),
        bodies.move_scale.as_slice(),
        Vec3::splat(dt),
    );
    faults
}

/// Refreshes world inverse inertia and inflated AABBs of the active bodies
/// after they moved.
pub(crate) fn update_bounds(
    ctx: &StepCtx,
    bodies: &mut Bodies,
    scratch: &mut Vec<BodyScratch>,
    margin: f32,
) {
    scratch.resize(bodies.active.len(), BodyScratch::default());
    let b: &Bodies = bodies;
    ctx.par_chunks_mut("bounds", scratch, BODIES_PER_JOB, |first, chunk| {
        for (s, &i) in chunk.iter_mut().zip(&b.active[first..]) {
            let i = i as usize;
            s.inertia = b.world_inertia_of(i);
            (s.lo, s.hi) = b.aabb_of(i, margin);
        }
        0
    });
    let active = &bodies.active;
    let inertia = Disjoint::new(bodies.inv_inertia_world.as_mut_slice());
    let lo = Vec3Disjoint::new(&mut bodies.aabb_min);
    let hi = Vec3Disjoint::new(&mut bodies.aabb_max);
    let scratch = &scratch[..];
    ctx.par_for("write bounds", active.len(), BODIES_PER_JOB, |range| {
        for idx in range {
            let i = active[idx] as usize;
            let s = &scratch[idx];
            // SAFETY: active slots are distinct.
            unsafe {
                inertia.set(i, s.inertia);
                lo.set(i, s.lo.to_array());
                hi.set(i, s.hi.to_array());
            }
        }
    });
}
