//! Sleeping (Jolt's three-point test, whole islands at once).
//!
//! Each body tracks three points: its centre of mass and the ends of its two
//! largest local bounding-box axes, rotated to world space. Each point keeps
//! a bounding sphere of the positions it has visited; if any sphere grows past
//! `point_velocity_sleep_threshold × time_before_sleep`, all three restart at
//! the current points and the body's timer restarts; otherwise the timer
//! accumulates. A body can sleep once its timer reaches `time_before_sleep`,
//! and an island sleeps only when every body in it can (tested in the last
//! collision step only). A sleeping island's bodies leave the active list,
//! get exactly zero velocity, and are linked in a ring so that waking any of
//! them wakes all of them in the same step: no island is ever half asleep.

use crate::body::{flags, Bodies, MotionType, NOT_LISTED};
use crate::math::Vec3;

/// The three sleep test points of body `i` in world space (Jolt's
/// `GetSleepTestPoints`: COM, COM + largest axis, COM + second largest axis;
/// ties resolved as Jolt's `GetLowestComponentIndex`).
pub(crate) fn sleep_test_points(bodies: &Bodies, i: usize) -> [Vec3; 3] {
    let e = bodies.shape[i].local_half_extents();
    let lowest = if e.x < e.y {
        if e.x < e.z {
            0
        } else {
            2
        }
    } else if e.y < e.z {
        1
    } else {
        2
    };
    let (a1, a2) = match lowest {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    };
    let (p, q) = (bodies.pos(i), bodies.rot(i));
    let axis = |k: usize| {
        let mut v = Vec3::ZERO;
        v[k] = e[k];
        q * v
    };
    [p, p + axis(a1), p + axis(a2)]
}

/// Restarts the sleep test of body `i`: spheres of radius 0 at the current
/// points, timer 0.
pub(crate) fn reset_sleep_test(bodies: &mut Bodies, i: usize) {
    bodies.sleep_spheres[i] = restarted(sleep_test_points(bodies, i));
    bodies.sleep_timer[i] = 0.0;
}

/// Spheres of radius 0 at the given points.
fn restarted(pts: [Vec3; 3]) -> [[f32; 4]; 3] {
    pts.map(|p| [p.x, p.y, p.z, 0.0])
}

/// A body's sleep test after one more step: grown spheres and advanced
/// timer, or (when a sphere grew too far) spheres restarted at the current
/// points and timer 0. Pure, so bodies are tested in parallel.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SleepState {
    pub spheres: [[f32; 4]; 3],
    pub timer: f32,
    /// The timer reached `time_before_sleep`.
    pub can_sleep: bool,
}

/// Body `i`'s sleep test advanced by `dt` (see [`SleepState`]).
pub(crate) fn next_sleep_state(
    bodies: &Bodies,
    i: usize,
    dt: f32,
    max_movement: f32,
    time_before_sleep: f32,
) -> SleepState {
    let pts = sleep_test_points(bodies, i);
    let mut spheres = bodies.sleep_spheres[i];
    for (s, p) in spheres.iter_mut().zip(pts) {
        encapsulate(s, p);
        if s[3] > max_movement {
            return SleepState {
                spheres: restarted(pts),
                timer: 0.0,
                can_sleep: false,
            };
        }
    }
    let timer = bodies.sleep_timer[i] + dt;
    SleepState {
        spheres,
        timer,
        can_sleep: timer >= time_before_sleep,
    }
}

/// Grows sphere `s` (centre xyz, radius) minimally to contain `p` (Jolt's
/// `Sphere::EncapsulatePoint`).
fn encapsulate(s: &mut [f32; 4], p: Vec3) {
    let c = Vec3::new(s[0], s[1], s[2]);
    let d = p - c;
    let dist2 = d.length_squared();
    if dist2 > s[3] * s[3] {
        let dist = dist2.sqrt();
        let new_radius = 0.5 * (s[3] + dist);
        let c = c + d * (0.5 * (dist - s[3]) / dist);
        *s = [c.x, c.y, c.z, new_radius];
    }
}

/// Puts the given bodies (one whole island, by slot) to sleep as one ring.
pub(crate) fn put_island_to_sleep(bodies: &mut Bodies, island: &[u32]) {
    let Some(&first) = island.first() else {
        return;
    };
    for (k, &slot) in island.iter().enumerate() {
        let i = slot as usize;
        bodies.linear_velocity.set(i, [0.0; 3]);
        bodies.angular_velocity.set(i, [0.0; 3]);
        bodies.force[i] = [0.0; 3];
        bodies.torque[i] = [0.0; 3];
        bodies.flags[i] |= flags::SLEEPING;
        bodies.make_inactive(i);
        bodies.sleep_next[i] = island.get(k + 1).copied().unwrap_or(first);
    }
    bodies.sleeping_islands += 1;
}

/// Wakes the whole sleeping island of body `i` (which must be asleep).
/// Returns how many bodies woke.
pub(crate) fn wake_island(bodies: &mut Bodies, i: usize) -> u32 {
    debug_assert!(bodies.is_sleeping(i));
    let mut woken = 0;
    let mut k = i;
    loop {
        let next = bodies.sleep_next[k] as usize;
        bodies.sleep_next[k] = NOT_LISTED;
        bodies.flags[k] &= !flags::SLEEPING;
        bodies.make_active(k);
        reset_sleep_test(bodies, k);
        woken += 1;
        if next == i || next == NOT_LISTED as usize {
            break;
        }
        k = next;
    }
    bodies.sleeping_islands -= 1;
    woken
}

/// Takes sleeping body `i` out of its ring (it is being removed from the
/// world), leaving the rest of its island asleep.
pub(crate) fn leave_sleeping_island(bodies: &mut Bodies, i: usize) {
    let next = bodies.sleep_next[i];
    if next as usize == i {
        bodies.sleeping_islands -= 1;
    } else {
        let mut prev = next as usize;
        while bodies.sleep_next[prev] as usize != i {
            prev = bodies.sleep_next[prev] as usize;
        }
        bodies.sleep_next[prev] = next;
    }
    bodies.sleep_next[i] = NOT_LISTED;
    bodies.flags[i] &= !flags::SLEEPING;
}

/// Whether body `i` may make a sleeping body it touches wake up: awake
/// dynamic bodies always, kinematic bodies only while they move.
pub(crate) fn can_wake_others(bodies: &Bodies, i: usize) -> bool {
    match bodies.motion(i) {
        MotionType::Dynamic => bodies.is_active(i),
        MotionType::Kinematic => bodies.lin_vel(i) != Vec3::ZERO || bodies.ang_vel(i) != Vec3::ZERO,
        MotionType::Static => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encapsulate_grows_minimally() {
        let mut s = [0.0, 0.0, 0.0, 0.0];
        encapsulate(&mut s, Vec3::new(2.0, 0.0, 0.0));
        assert_eq!(s, [1.0, 0.0, 0.0, 1.0]);
        // a point inside leaves it alone
        encapsulate(&mut s, Vec3::new(1.5, 0.0, 0.0));
        assert_eq!(s, [1.0, 0.0, 0.0, 1.0]);
        encapsulate(&mut s, Vec3::new(-1.0, 0.0, 0.0));
        assert!((s[3] - 1.5).abs() < 1e-6 && (s[0] - 0.5).abs() < 1e-6);
    }
}
