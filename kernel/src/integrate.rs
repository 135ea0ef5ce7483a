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
/// `v *= max(0, 1 - c dt)`. Clears the force accumulators.
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
    ctx.par_chunks_mut("forces", scratch, BODIES_PER_JOB, |first, chunk| {
        for (s, &i) in chunk.iter_mut().zip(&b.active[first..]) {
            let i = i as usize;
            if b.motion(i) != MotionType::Dynamic {
                continue;
            }
            let force = Vec3::from_array(b.force[i]);
            let torque = Vec3::from_array(b.torque[i]);
            let mut v = b.lin_vel(i);
            let mut w = b.ang_vel(i);
            if force != Vec3::ZERO || torque != Vec3::ZERO {
                v += force * (b.inv_mass[i] * dt);
                w += b.inv_inertia(i) * (torque * dt);
            }
            s.v = v * (1.0 - b.linear_damping[i] * dt).max(0.0);
            s.w = w * (1.0 - b.angular_damping[i] * dt).max(0.0);
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
            if motion[i] != DYNAMIC {
                continue;
            }
            let s = &scratch[idx];
            // SAFETY: active slots are distinct, so slot `i` is this
            // iteration's alone.
            unsafe {
                force.set(i, [0.0; 3]);
                torque.set(i, [0.0; 3]);
                lin.set(i, s.v.to_array());
                ang.set(i, s.w.to_array());
            }
        }
    });
}

/// Clamps velocities, then `p += v dt` (SIMD, all slots) and
/// `q = exp(ω dt) q` (active bodies).
pub(crate) fn integrate_positions(
    ctx: &StepCtx,
    bodies: &mut Bodies,
    scratch: &mut Vec<BodyScratch>,
    settings: &PhysicsSettings,
    dt: f32,
) {
    scratch.resize(bodies.active.len(), BodyScratch::default());
    let b: &Bodies = bodies;
    ctx.par_chunks_mut("rotate", scratch, BODIES_PER_JOB, |first, chunk| {
        for (s, &i) in chunk.iter_mut().zip(&b.active[first..]) {
            let i = i as usize;
            s.v = clamp_length(b.lin_vel(i), settings.max_linear_velocity);
            s.w = clamp_length(b.ang_vel(i), settings.max_angular_velocity);
            s.q = if s.w != Vec3::ZERO {
                (Quat::from_scaled_axis(s.w * dt) * b.rot(i)).normalize()
            } else {
                b.rot(i)
            };
        }
        0
    });
    {
        let active = &bodies.active;
        let lin = Vec3Disjoint::new(&mut bodies.linear_velocity);
        let ang = Vec3Disjoint::new(&mut bodies.angular_velocity);
        let rot = Disjoint::new(bodies.rotation.as_mut_slice());
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
}

fn clamp_length(v: Vec3, max: f32) -> Vec3 {
    let len2 = v.length_squared();
    if len2 > max * max {
        v * (max / len2.sqrt())
    } else {
        v
    }
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
