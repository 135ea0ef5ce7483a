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
use crate::broadphase::BodyPair;
use crate::collide::{collide_in, Placed};
use crate::disjoint::Disjoint;
use crate::islands::IslandBuilder;
use crate::jobs::StepCtx;
use crate::math::{rotate, Vec3};
use crate::settings::PhysicsSettings;

/// The three sleep test points of body `i` in world space (Jolt's
/// `GetSleepTestPoints`: COM, COM + largest axis, COM + second largest axis;
/// ties resolved as Jolt's `GetLowestComponentIndex`).
pub(crate) fn sleep_test_points(bodies: &Bodies, i: usize) -> [Vec3; 3] {
    let e = bodies.shape[i].local_half_extents(&bodies.shapes);
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
        rotate(q, v)
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

/// Whether body `i` may make a sleeping body it touches wake up: awake
/// dynamic bodies always, kinematic bodies only while they move.
pub(crate) fn can_wake_others(bodies: &Bodies, i: usize) -> bool {
    match bodies.motion(i) {
        MotionType::Dynamic => bodies.is_active(i),
        MotionType::Kinematic => bodies.lin_vel(i) != Vec3::ZERO || bodies.ang_vel(i) != Vec3::ZERO,
        MotionType::Static => false,
    }
}

/// Wakes the sleeping island of every sleeping body that an awake body (or
/// a moving kinematic one) touches within the speculative distance, then
/// drops the pairs that still involve a sleeping body (they have nothing to
/// solve). Returns how many bodies woke; the caller searches pairs again if
/// any did, since the woken bodies' pairs with each other were skipped as
/// sleeping–sleeping.
pub(crate) fn wake_touched(
    bodies: &mut Bodies,
    pairs: &mut Vec<BodyPair>,
    max_separation: f32,
) -> u32 {
    let mut woken = 0;
    for p in pairs.iter() {
        let (a, b) = (p.a as usize, p.b as usize);
        let (sleeper, other) = match (bodies.is_sleeping(a), bodies.is_sleeping(b)) {
            (true, false) => (a, b),
            (false, true) => (b, a),
            _ => continue,
        };
        if !can_wake_others(bodies, other) {
            continue;
        }
        let placed = |i: usize| Placed {
            shape: bodies.shape[i],
            pos: bodies.pos(i),
            rot: bodies.rot(i),
        };
        if collide_in(&placed(a), &placed(b), max_separation, &bodies.shapes).is_some() {
            woken += wake_island(bodies, sleeper);
        }
    }
    if woken == 0 {
        pairs.retain(|p| !bodies.is_sleeping(p.a as usize) && !bodies.is_sleeping(p.b as usize));
    }
    woken
}

/// Pairs checked per job of the search for sleeping bodies.
pub(crate) const SLEEPER_CHECKS_PER_JOB: usize = 2048;

/// The sleep test: every body of every island updates its test (in
/// parallel: each body's test reads only that body), then islands whose
/// bodies can all sleep go to sleep together. Returns how many bodies went
/// to sleep.
pub(crate) fn sleep_islands(
    ctx: &StepCtx,
    bodies: &mut Bodies,
    islands: &IslandBuilder,
    scratch: &mut SleepScratch,
    s: &PhysicsSettings,
    dt: f32,
) -> u32 {
    let max_movement = s.point_velocity_sleep_threshold * s.time_before_sleep;
    // Every body updates its test, even once its island is known to stay
    // awake (Jolt's bitwise AND), so timers are never stale.
    let members = islands.all_bodies();
    scratch.states.resize(members.len(), SleepState::default());
    {
        let b: &Bodies = bodies;
        ctx.par_chunks_mut(
            "sleep test",
            &mut scratch.states,
            SLEEP_TESTS_PER_JOB,
            |first, chunk| {
                for (st, &ai) in chunk.iter_mut().zip(&members[first..]) {
                    let i = b.active[ai as usize] as usize;
                    *st = next_sleep_state(b, i, dt, max_movement, s.time_before_sleep);
                    let allowed = b.flags[i] & flags::ALLOW_SLEEPING != 0 && !b.is_sensor(i);
                    st.can_sleep &= allowed;
                }
                0
            },
        );
        let (active, states) = (&bodies.active, &scratch.states);
        let spheres = Disjoint::new(bodies.sleep_spheres.as_mut_slice());
        let timer = Disjoint::new(bodies.sleep_timer.as_mut_slice());
        ctx.par_for(
            "write sleep tests",
            members.len(),
            SLEEP_TESTS_PER_JOB,
            |range| {
                for k in range {
                    let i = active[members[k] as usize] as usize;
                    // SAFETY: a body is in at most one island, once.
                    unsafe {
                        spheres.set(i, states[k].spheres);
                        timer.set(i, states[k].timer);
                    }
                }
            },
        );
    }
    ctx.serial("sleep islands", || {
        scratch.slots.clear();
        scratch.ends.clear();
        for island in 0..islands.num_islands() {
            let range = islands.body_range(island);
            let all =
                s.allow_sleeping && scratch.states[range.clone()].iter().all(|st| st.can_sleep);
            if all {
                scratch
                    .slots
                    .extend(members[range].iter().map(|&ai| bodies.active[ai as usize]));
                scratch.ends.push(scratch.slots.len() as u32);
            }
        }
        // Active indices shift as bodies leave the active list, so the
        // islands were copied out as slots above before any body is
        // deactivated.
        let mut start = 0;
        for &end in &scratch.ends {
            put_island_to_sleep(bodies, &scratch.slots[start..end as usize]);
            start = end as usize;
        }
        scratch.slots.len() as u32
    })
}

/// Bodies per sleep-test job.
const SLEEP_TESTS_PER_JOB: usize = 256;

/// Preallocated buffers of the sleep test.
pub(crate) struct SleepScratch {
    slots: Vec<u32>,
    ends: Vec<u32>,
    /// Per island body (in island order): its advanced sleep test.
    states: Vec<SleepState>,
}

impl SleepScratch {
    pub fn new(max_bodies: usize) -> Self {
        Self {
            slots: Vec::with_capacity(max_bodies),
            ends: Vec::with_capacity(max_bodies),
            states: Vec::with_capacity(max_bodies),
        }
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
