//! Integration (semi-implicit Euler): forces change velocities at the start of
//! a step, solved velocities move bodies at the end of it.
//!
//! The uniform parts (gravity, `p += v dt`) are SIMD sweeps over whole
//! columns, where a per-slot scale column zeroes out slots that must not move
//! (static, removed, padding); the per-body parts (user forces, damping,
//! clamping, rotation) loop over the active list.

use crate::body::{Bodies, MotionType};
use crate::jobs::StepCtx;
use crate::math::{Quat, Vec3};
use crate::settings::PhysicsSettings;
use archipelago_simd::{add_scaled_columns, add_scaled_uniform};

/// Active bodies per job of the per-body loops.
const BODIES_PER_JOB: usize = 256;

/// What a per-body loop computed for one active body; a serial pass then
/// writes it into the body columns (a few microseconds for thousands of
/// bodies, while the computing runs on all workers).
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

/// `v += (g·gravity_factor + F/m)·dt`, `ω += I⁻¹ τ dt`, then damping
/// `v *= max(0, 1 - c dt)`. Clears the force accumulators.
pub(crate) fn apply_forces(
    ctx: &StepCtx,
    bodies: &mut Bodies,
    scratch: &mut Vec<BodyScratch>,
    settings: &PhysicsSettings,
    dt: f32,
) {
    ctx.serial("gravity", || {
        let g = settings.gravity * dt;
        let scale = bodies.gravity_scale.as_slice();
        let (vx, vy, vz) = bodies.linear_velocity.slices_mut();
        add_scaled_uniform(vx, scale, g.x);
        add_scaled_uniform(vy, scale, g.y);
        add_scaled_uniform(vz, scale, g.z);
    });
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
    ctx.serial("write forces", || {
        for (idx, s) in scratch.iter().enumerate() {
            let i = bodies.active[idx] as usize;
            if bodies.motion(i) != MotionType::Dynamic {
                continue;
            }
            bodies.force[i] = [0.0; 3];
            bodies.torque[i] = [0.0; 3];
            bodies.linear_velocity.set(i, s.v.to_array());
            bodies.angular_velocity.set(i, s.w.to_array());
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
    ctx.serial("move", || {
        for (idx, s) in scratch.iter().enumerate() {
            let i = bodies.active[idx] as usize;
            bodies.linear_velocity.set(i, s.v.to_array());
            bodies.angular_velocity.set(i, s.w.to_array());
            bodies.rotation[i] = s.q.to_array();
        }
        let scale = bodies.move_scale.as_slice();
        let (px, py, pz) = bodies.position.slices_mut();
        let (vx, vy, vz) = bodies.linear_velocity.slices();
        add_scaled_columns(px, vx, scale, dt);
        add_scaled_columns(py, vy, scale, dt);
        add_scaled_columns(pz, vz, scale, dt);
    });
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
    ctx.serial("write bounds", || {
        for (idx, s) in scratch.iter().enumerate() {
            let i = bodies.active[idx] as usize;
            bodies.inv_inertia_world[i] = s.inertia;
            bodies.aabb_min.set(i, s.lo.to_array());
            bodies.aabb_max.set(i, s.hi.to_array());
        }
    });
}
