//! Keeping the world finite: the velocity clamps that hold for any finite
//! input, and the quarantine of a body whose state still became
//! non-finite.
//!
//! Every public input has a documented range (`limits.rs`) inside which no
//! step can overflow, so a non-finite body means a bug (in the kernel, or
//! memory written behind its back). Whatever the cause, it must not spread:
//! one NaN velocity in the solver turns every body of its island to NaN
//! within an iteration. So the step checks at the places where state is
//! written:
//!
//! - at the start of every collision step, every body (a SIMD sweep over
//!   the pose and velocity columns; only memory corruption can fail it,
//!   since the API validates every value it stores);
//! - where velocities become positions (`integrate.rs`): a non-finite
//!   velocity or pose from the solver is dropped, and the body stays at its
//!   last finite pose with zero velocity;
//! - where the position solver writes poses back (`solver.rs`): a
//!   non-finite correction is dropped the same way.
//!
//! A body caught by any check is *faulted*: at the end of the collision step
//! (or at once, for the start check, before any pair is found) it is taken
//! out of the simulation as by `remove_body`, with finite state (last finite
//! pose, zero velocity) and its contacts forgotten. It stays created: the
//! user finds it in [`PhysicsSystem::faulted_bodies`], can inspect it, and
//! can add it again. `StepStats::bodies_faulted` counts it and
//! `UpdateWarnings::BODIES_FAULTED` is raised.

use crate::body::Bodies;
use crate::jobs::StepCtx;
use crate::math::{Quat, Vec3};
use crate::stats::{StepStats, UpdateWarnings};
use crate::system::PhysicsSystem;
use archipelago_layout::{padded_len, Vec3Column};
use archipelago_simd::all_finite;

/// `v` scaled down to length `max` if it is longer, keeping its direction.
/// Exact (`v` itself) when within `max`; correct for any finite `v`, also
/// where its squared length overflows (components up to `f32::MAX`).
#[inline]
pub(crate) fn clamp_length(v: Vec3, max: f32) -> Vec3 {
    let len2 = v.length_squared();
    if len2 <= max * max {
        v
    } else if len2.is_finite() {
        v * (max / len2.sqrt())
    } else {
        // Scaled into range first: the largest component becomes ±1.
        at_length(v, max)
    }
}

/// `v · k` (`k >= 0`), with its length capped at `cap`: exact when the
/// product is finite and within the cap, else `v`'s direction at length
/// `cap`. For velocity changes from forces, which the clamp after them
/// would cut to the maximum speed anyway.
#[inline]
pub(crate) fn capped_product(v: Vec3, k: f32, cap: f32) -> Vec3 {
    let r = v * k;
    if r.is_finite() && r.length_squared() <= cap * cap {
        r
    } else if k == 0.0 {
        Vec3::ZERO
    } else {
        at_length(v, cap)
    }
}

/// `v`'s direction at length `len` (zero for a zero `v`), for any finite
/// `v`.
#[inline]
pub(crate) fn at_length(v: Vec3, len: f32) -> Vec3 {
    let m = v.abs().max_element();
    if m == 0.0 {
        return Vec3::ZERO;
    }
    let u = v / m;
    u * (len / u.length())
}

/// Whether body `i`'s pose and velocities are all finite.
#[inline]
pub(crate) fn body_is_finite(bodies: &Bodies, i: usize) -> bool {
    bodies.pos(i).is_finite()
        && bodies.rot(i).is_finite()
        && bodies.lin_vel(i).is_finite()
        && bodies.ang_vel(i).is_finite()
}

impl PhysicsSystem {
    /// The start-of-step check: whether any body is non-finite. One SIMD
    /// sweep over the pose and velocity columns up to the slot high-water
    /// mark (unused and padding slots hold finite neutral values), ~10
    /// instructions per 16 values: the per-body test it replaced cost ~100
    /// per body, 0.7% of a rain step.
    pub(crate) fn any_non_finite(&self, ctx: &StepCtx) -> bool {
        ctx.serial("check finite", || {
            let b = &self.bodies;
            let n = padded_len(b.slots.high_water()).min(b.position.padded_len());
            let rotations: &[f32] = bytemuck::cast_slice(&b.rotation.as_slice()[..n]);
            let vec3_finite = |c: &Vec3Column| {
                let (x, y, z) = c.slices();
                all_finite(&x[..n]) && all_finite(&y[..n]) && all_finite(&z[..n])
            };
            !(vec3_finite(&b.position)
                && vec3_finite(&b.linear_velocity)
                && vec3_finite(&b.angular_velocity)
                && all_finite(rotations))
        })
    }

    /// Takes every body that is flagged faulted or is non-finite out of the
    /// simulation (see the module doc), and reports it. Scans every added
    /// body (this runs only when something faulted): a body stopped by the
    /// integration may have fallen asleep with its island since.
    pub(crate) fn quarantine(&mut self, stats: &mut StepStats) {
        let mut found = core::mem::take(&mut self.quarantine_scratch);
        found.clear();
        let b = &self.bodies;
        found.extend(
            b.added
                .iter()
                .copied()
                .filter(|&i| b.faulted[i as usize] || !body_is_finite(b, i as usize)),
        );
        // Slot order, so the report does not depend on the order of the
        // added list.
        found.sort_unstable();
        for &i in &found {
            let i = i as usize;
            let b = &mut self.bodies;
            b.faulted[i] = false;
            if !b.pos(i).is_finite() {
                // Only corruption gets here: the last bounds hold the last
                // finite position (the centre of a shape's box).
                let lo = Vec3::from_array(b.aabb_min.get(i));
                let hi = Vec3::from_array(b.aabb_max.get(i));
                let centre = (lo + hi) * 0.5;
                let p = if crate::limits::position_ok(centre) {
                    centre
                } else {
                    Vec3::ZERO
                };
                b.position.set(i, p.to_array());
            }
            let q = b.rot(i);
            if !q.is_finite() || q.length_squared() == 0.0 {
                b.rotation[i] = Quat::IDENTITY.to_array();
            }
            b.linear_velocity.set(i, [0.0; 3]);
            b.angular_velocity.set(i, [0.0; 3]);
            b.force[i] = [0.0; 3];
            b.torque[i] = [0.0; 3];
            b.update_world_inertia(i);
            let id = b.id_of(i);
            self.take_out(i);
            self.faulted.push(id);
        }
        stats.bodies_faulted += found.len() as u32;
        if !found.is_empty() {
            stats.warnings.insert(UpdateWarnings::BODIES_FAULTED);
        }
        self.quarantine_scratch = found;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamp_keeps_direction_for_any_finite_vector() {
        let max = 500.0;
        // within the limit: untouched, bit for bit
        let v = Vec3::new(1.0, -2.0, 3.0);
        assert_eq!(clamp_length(v, max), v);
        // the squared length overflows
        for v in [
            Vec3::new(3e38, 0.0, 0.0),
            Vec3::new(-3e38, 3e38, 1.0),
            Vec3::splat(f32::MAX),
            Vec3::new(0.0, 0.0, -1e20),
        ] {
            let c = clamp_length(v, max);
            assert!(c.is_finite());
            assert!((c.length() - max).abs() < 1e-3, "{v:?} -> {c:?}");
            // (`normalize` itself overflows on these)
            let dir = v / v.abs().max_element();
            assert!(
                c.normalize().dot(dir.normalize()) > 0.9999,
                "{v:?} -> {c:?}"
            );
        }
    }

    #[test]
    fn capped_product_is_exact_below_the_cap() {
        let v = Vec3::new(3.0, 4.0, 0.0);
        assert_eq!(capped_product(v, 2.0, 100.0), v * 2.0);
        let c = capped_product(Vec3::new(1e38, 1e38, 0.0), 1e10, 1000.0);
        assert!((c - Vec3::new(1.0, 1.0, 0.0).normalize() * 1000.0).length() < 1e-2);
        assert_eq!(capped_product(Vec3::ZERO, 1e30, 10.0), Vec3::ZERO);
        assert_eq!(capped_product(Vec3::X, 0.0, 10.0), Vec3::ZERO);
    }
}
