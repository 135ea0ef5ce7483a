//! Integration (semi-implicit Euler): forces change velocities at the start of
//! a step, solved velocities move bodies at the end of it.
//!
//! The uniform parts (gravity, `p += v dt`) are SIMD sweeps over whole
//! columns, where a per-slot scale column zeroes out slots that must not move
//! (static, removed, padding); the per-body parts (user forces, damping,
//! clamping, rotation) loop over the active list.

use crate::body::{Bodies, MotionType};
use crate::math::{Quat, Vec3};
use crate::settings::PhysicsSettings;
use archipelago_simd::{add_scaled_columns, add_scaled_uniform};

/// `v += (g·gravity_factor + F/m)·dt`, `ω += I⁻¹ τ dt`, then damping
/// `v *= max(0, 1 - c dt)`. Clears the force accumulators.
pub(crate) fn apply_forces(bodies: &mut Bodies, settings: &PhysicsSettings, dt: f32) {
    let g = settings.gravity * dt;
    let scale = bodies.gravity_scale.as_slice();
    let (vx, vy, vz) = bodies.linear_velocity.slices_mut();
    add_scaled_uniform(vx, scale, g.x);
    add_scaled_uniform(vy, scale, g.y);
    add_scaled_uniform(vz, scale, g.z);

    for idx in 0..bodies.active.len() {
        let i = bodies.active[idx] as usize;
        if bodies.motion(i) != MotionType::Dynamic {
            continue;
        }
        let force = Vec3::from_array(bodies.force[i]);
        let torque = Vec3::from_array(bodies.torque[i]);
        let mut v = bodies.lin_vel(i);
        let mut w = bodies.ang_vel(i);
        if force != Vec3::ZERO || torque != Vec3::ZERO {
            v += force * (bodies.inv_mass[i] * dt);
            w += bodies.inv_inertia(i) * (torque * dt);
            bodies.force[i] = [0.0; 3];
            bodies.torque[i] = [0.0; 3];
        }
        v *= (1.0 - bodies.linear_damping[i] * dt).max(0.0);
        w *= (1.0 - bodies.angular_damping[i] * dt).max(0.0);
        bodies.linear_velocity.set(i, v.to_array());
        bodies.angular_velocity.set(i, w.to_array());
    }
}

/// Clamps velocities, then `p += v dt` (SIMD, all slots) and
/// `q = exp(ω dt) q` (active bodies).
pub(crate) fn integrate_positions(bodies: &mut Bodies, settings: &PhysicsSettings, dt: f32) {
    for idx in 0..bodies.active.len() {
        let i = bodies.active[idx] as usize;
        let v = bodies.lin_vel(i);
        let w = bodies.ang_vel(i);
        let v = clamp_length(v, settings.max_linear_velocity);
        let w = clamp_length(w, settings.max_angular_velocity);
        bodies.linear_velocity.set(i, v.to_array());
        bodies.angular_velocity.set(i, w.to_array());
        if w != Vec3::ZERO {
            let q = Quat::from_scaled_axis(w * dt) * bodies.rot(i);
            bodies.rotation[i] = q.normalize().to_array();
        }
    }
    let scale = bodies.move_scale.as_slice();
    let (px, py, pz) = bodies.position.slices_mut();
    let (vx, vy, vz) = bodies.linear_velocity.slices();
    add_scaled_columns(px, vx, scale, dt);
    add_scaled_columns(py, vy, scale, dt);
    add_scaled_columns(pz, vz, scale, dt);
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
pub(crate) fn update_bounds(bodies: &mut Bodies, margin: f32) {
    for idx in 0..bodies.active.len() {
        let i = bodies.active[idx] as usize;
        bodies.update_world_inertia(i);
        bodies.update_aabb(i, margin);
    }
}
