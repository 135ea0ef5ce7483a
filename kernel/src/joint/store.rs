//! The joint table: generational slots, each joint's validated data in the
//! form the solver gathers (`JointData`), its accumulated impulses (the
//! warm start), and what the step derives from the table: the joints it
//! solves this step and the body pairs whose contacts joints turn off.

use super::{JointImpulse, JointKind, JointSettings, MotorMode};
use crate::body::{Bodies, MotionType};
use crate::broadphase::BodyPair;
use crate::error::{PhysicsError, Result};
use crate::math::{Quat, Vec3};
use archipelago_layout::SlotAllocator;
use bytemuck::{Pod, Zeroable};

/// Handle to a joint: slot index, generation and the world that issued it
/// (as [`BodyId`](crate::BodyId): a stale or foreign id names no joint).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JointId {
    index: u32,
    generation: u32,
    world: u32,
}

impl JointId {
    /// Rebuilds an id from [`to_raw`](Self::to_raw)'s parts; a forged id
    /// names no joint.
    pub const fn from_raw(raw: [u32; 3]) -> Self {
        Self {
            index: raw[0],
            generation: raw[1],
            world: raw[2],
        }
    }

    /// `[index, generation, world]`.
    pub const fn to_raw(self) -> [u32; 3] {
        [self.index, self.generation, self.world]
    }

    /// Slot index (stable for the joint's life; reused after it is removed).
    pub const fn index(self) -> u32 {
        self.index
    }
}

/// The world side of a joint.
pub(crate) const WORLD: u32 = u32::MAX;

/// Kind codes, as the solver's rows carry them.
pub(crate) mod kind {
    pub const FIXED: u32 = 0;
    pub const POINT: u32 = 1;
    pub const DISTANCE: u32 = 2;
    pub const HINGE: u32 = 3;
    pub const SLIDER: u32 = 4;
    pub const SWING_TWIST: u32 = 5;
}

/// `JointData::flags` bits.
pub(crate) mod flag {
    /// The limit row is in use (always for distance and swing-twist).
    pub const LIMITS: u32 = 1;
    /// The distance limits are a spring (`limit_spring`).
    pub const SOFT_LIMITS: u32 = 2;
    pub const MOTOR_VELOCITY: u32 = 4;
    pub const MOTOR_POSITION: u32 = 8;
    pub const COLLIDE_CONNECTED: u32 = 16;
}

/// Accumulated impulses per joint, in the order of the solver's
/// `JointImpulses`: the point block (3), the 2×2 block (the slider's
/// perpendicular rows or the hinge's rotation rows), the rotation block
/// (3), the limit row, the motor (or twist) row.
pub(crate) const JOINT_IMPULSES: usize = 10;

/// A joint as the solver reads it: body slots, frames as quaternions,
/// limits and motor in solver units. Written once per change, gathered
/// into the type batch's rows every step.
#[derive(Debug, Clone, Copy, Pod, Zeroable, Default)]
#[repr(C)]
pub(crate) struct JointData {
    /// Body slots, or [`WORLD`] (one side at most).
    pub body_a: u32,
    pub body_b: u32,
    pub kind: u32,
    pub flags: u32,
    pub anchor_a: [f32; 3],
    pub anchor_b: [f32; 3],
    /// Joint frame → body A's (B's) local frame: its x axis is the joint's
    /// axis, its y axis the normal.
    pub frame_a: [f32; 4],
    pub frame_b: [f32; 4],
    /// Distance min/max, hinge angles, slider positions or twist angles.
    pub limits: [f32; 2],
    /// Swing-twist: cosine of the cone's half angle.
    pub swing_cos: f32,
    /// Distance spring: frequency (Hz), damping ratio.
    pub limit_spring: [f32; 2],
    pub motor_target: f32,
    /// N·m or N.
    pub motor_max: f32,
    pub motor_spring: [f32; 2],
    /// N·m or N, while the motor is off.
    pub friction: f32,
}

/// The rotation whose x, y and z axes are `x`, `y` and `x × y` (a right
/// handed orthonormal basis after Gram–Schmidt), by Shepperd's method in
/// plain `f32` operations (glam's conversion may fuse).
pub(crate) fn frame_rotation(x: Vec3, y: Vec3) -> Quat {
    let x = x / x.length();
    let y = y - x * x.dot(y);
    let y = y / y.length();
    let z = x.cross(y);
    let (m00, m11, m22) = (x.x, y.y, z.z);
    let trace = m00 + m11 + m22;
    let q = if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        Quat::from_xyzw((y.z - z.y) / s, (z.x - x.z) / s, (x.y - y.x) / s, 0.25 * s)
    } else if m00 > m11 && m00 > m22 {
        let s = (1.0 + m00 - m11 - m22).sqrt() * 2.0;
        Quat::from_xyzw(0.25 * s, (y.x + x.y) / s, (z.x + x.z) / s, (y.z - z.y) / s)
    } else if m11 > m22 {
        let s = (1.0 + m11 - m00 - m22).sqrt() * 2.0;
        Quat::from_xyzw((y.x + x.y) / s, 0.25 * s, (z.y + y.z) / s, (z.x - x.z) / s)
    } else {
        let s = (1.0 + m22 - m00 - m11).sqrt() * 2.0;
        Quat::from_xyzw((z.x + x.z) / s, (z.y + y.z) / s, 0.25 * s, (x.y - y.x) / s)
    };
    let q = q / q.length();
    if q.w < 0.0 {
        -q
    } else {
        q
    }
}

impl JointData {
    /// The solver's form of validated settings between slots `a` and `b`.
    pub fn of(s: &JointSettings, a: u32, b: u32) -> Self {
        let mut d = JointData {
            body_a: a,
            body_b: b,
            anchor_a: s.frame_a.anchor.to_array(),
            anchor_b: s.frame_b.anchor.to_array(),
            frame_a: frame_rotation(s.frame_a.axis, s.frame_a.normal).to_array(),
            frame_b: frame_rotation(s.frame_b.axis, s.frame_b.normal).to_array(),
            swing_cos: 1.0,
            ..JointData::default()
        };
        if s.collide_connected {
            d.flags |= flag::COLLIDE_CONNECTED;
        }
        let motor = |d: &mut JointData, m: super::JointMotor, friction: f32| {
            d.motor_max = m.max_force;
            d.friction = friction;
            match m.mode {
                MotorMode::Off => {}
                MotorMode::Velocity(v) => {
                    d.flags |= flag::MOTOR_VELOCITY;
                    d.motor_target = v;
                }
                MotorMode::Position { target, spring } => {
                    d.flags |= flag::MOTOR_POSITION;
                    d.motor_target = target;
                    d.motor_spring = [spring.frequency, spring.damping];
                }
            }
        };
        match s.kind {
            JointKind::Fixed => d.kind = kind::FIXED,
            JointKind::Point => d.kind = kind::POINT,
            JointKind::Distance(j) => {
                d.kind = kind::DISTANCE;
                d.flags |= flag::LIMITS;
                d.limits = [j.min, j.max];
                if let Some(sp) = j.spring {
                    d.flags |= flag::SOFT_LIMITS;
                    d.limit_spring = [sp.frequency, sp.damping];
                }
            }
            JointKind::Hinge(h) => {
                d.kind = kind::HINGE;
                if let Some(l) = h.limits {
                    d.flags |= flag::LIMITS;
                    d.limits = l;
                }
                motor(&mut d, h.motor, h.max_friction);
            }
            JointKind::Slider(sl) => {
                d.kind = kind::SLIDER;
                if let Some(l) = sl.limits {
                    d.flags |= flag::LIMITS;
                    d.limits = l;
                }
                motor(&mut d, sl.motor, sl.max_friction);
            }
            JointKind::SwingTwist(st) => {
                d.kind = kind::SWING_TWIST;
                d.flags |= flag::LIMITS;
                d.limits = st.twist;
                d.swing_cos = st.swing.cos();
            }
        }
        d
    }

    /// Whether the joint has rows besides its equality parts: a limit, a
    /// motor or friction.
    pub fn has_rows(&self) -> bool {
        match self.kind {
            kind::FIXED | kind::POINT => false,
            kind::HINGE | kind::SLIDER => {
                self.flags & (flag::LIMITS | flag::MOTOR_VELOCITY | flag::MOTOR_POSITION) != 0
                    || self.friction > 0.0
            }
            _ => true,
        }
    }

    /// The two bodies as a broad-phase pair (lower slot first), if both
    /// are bodies.
    pub fn pair(&self) -> Option<BodyPair> {
        (self.body_a != WORLD && self.body_b != WORLD).then(|| BodyPair {
            a: self.body_a.min(self.body_b),
            b: self.body_a.max(self.body_b),
        })
    }
}

/// Preallocated joint table.
pub(crate) struct Joints {
    pub slots: SlotAllocator,
    /// Per slot: the settings as the user gave them (for the getters).
    pub settings: Vec<Option<JointSettings>>,
    pub data: Vec<JointData>,
    /// Per slot: accumulated impulses, carried from step to step.
    pub impulses: Vec<[f32; JOINT_IMPULSES]>,
    /// Per slot: what the joint applied in the last collision step that
    /// solved it.
    pub last_impulse: Vec<JointImpulse>,
    /// Per slot: `last_impulse` summed over the collision steps of the last
    /// update that solved it (what `joint_impulse` reports).
    pub update_impulse: Vec<JointImpulse>,
    /// Per body slot: how many joints use it.
    pub per_body: Vec<u32>,
    /// Joints solved this step (both bodies in the simulation, one awake
    /// dynamic), ascending by slot.
    pub active: Vec<u32>,
    /// Body pairs (sorted, distinct) whose contacts a joint turns off.
    pub no_contact: Vec<BodyPair>,
    no_contact_stale: bool,
}

impl Joints {
    pub fn new(max_joints: usize, max_bodies: usize) -> Self {
        Self {
            slots: SlotAllocator::new(max_joints),
            settings: vec![None; max_joints],
            data: vec![JointData::default(); max_joints],
            impulses: vec![[0.0; JOINT_IMPULSES]; max_joints],
            last_impulse: vec![JointImpulse::default(); max_joints],
            update_impulse: vec![JointImpulse::default(); max_joints],
            per_body: vec![0; max_bodies],
            active: Vec::with_capacity(max_joints),
            no_contact: Vec::with_capacity(max_joints),
            no_contact_stale: false,
        }
    }

    /// Adds the collision step's impulses of the active joints to their
    /// update totals (replacing them on an update's first collision step).
    /// Magnitudes add: a joint loaded the same way through the update
    /// reports its impulse over the whole `dt`.
    pub fn sum_impulses(&mut self, first_step: bool) {
        for &j in &self.active {
            let (step, total) = (
                self.last_impulse[j as usize],
                &mut self.update_impulse[j as usize],
            );
            *total = if first_step {
                step
            } else {
                JointImpulse {
                    linear: total.linear + step.linear,
                    angular: total.angular + step.angular,
                }
            };
        }
    }

    /// The slot of a live joint of this world.
    pub fn check(&self, id: JointId, world: u32) -> Result<usize> {
        if id.world != world {
            return Err(PhysicsError::InvalidJointId);
        }
        self.slots
            .validate(id.index, id.generation)
            .map(|_| id.index as usize)
            .map_err(|_| PhysicsError::InvalidJointId)
    }

    /// Stores a validated joint; `JointCapacityReached` when full.
    pub fn insert(&mut self, s: JointSettings, d: JointData, world: u32) -> Result<JointId> {
        let (index, generation) = self
            .slots
            .alloc()
            .map_err(|_| PhysicsError::JointCapacityReached)?;
        let i = index as usize;
        self.settings[i] = Some(s);
        self.data[i] = d;
        self.impulses[i] = [0.0; JOINT_IMPULSES];
        self.last_impulse[i] = JointImpulse::default();
        self.update_impulse[i] = JointImpulse::default();
        for i in [d.body_a, d.body_b] {
            if i != WORLD {
                self.per_body[i as usize] += 1;
            }
        }
        self.no_contact_stale = true;
        Ok(JointId {
            index,
            generation,
            world,
        })
    }

    /// Frees a live joint's slot.
    pub fn remove(&mut self, id: JointId) {
        let i = id.index as usize;
        let d = self.data[i];
        for i in [d.body_a, d.body_b] {
            if i != WORLD {
                self.per_body[i as usize] -= 1;
            }
        }
        self.settings[i] = None;
        let _ = self.slots.free(id.index, id.generation);
        self.no_contact_stale = true;
    }

    /// Replaces a live joint's settings (same bodies); keeps its impulses,
    /// which the next setup clamps to the new limits and motor bounds.
    pub fn replace(&mut self, i: usize, s: JointSettings) {
        let d = self.data[i];
        self.data[i] = JointData::of(&s, d.body_a, d.body_b);
        self.settings[i] = Some(s);
        self.no_contact_stale = true;
    }

    /// The no-contact pairs must be rebuilt before the next step.
    pub fn mark_no_contact_stale(&mut self) {
        self.no_contact_stale = true;
    }

    pub fn id_of(&self, i: usize, world: u32) -> JointId {
        JointId {
            index: i as u32,
            generation: self.slots.generation(i),
            world,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.slots.live_count() == 0
    }

    /// Live joint slots, ascending.
    pub fn live(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.slots.high_water()).filter(|&i| self.slots.is_live(i))
    }

    /// Rebuilds the pairs whose contacts joints turn off, if a joint was
    /// created, changed or removed since (no allocation: at most one pair
    /// per joint).
    pub fn refresh_no_contact(&mut self) {
        if !self.no_contact_stale {
            return;
        }
        self.no_contact_stale = false;
        self.no_contact.clear();
        for i in 0..self.slots.high_water() {
            if !self.slots.is_live(i) || self.data[i].flags & flag::COLLIDE_CONNECTED != 0 {
                continue;
            }
            if let Some(p) = self.data[i].pair() {
                self.no_contact.push(p);
            }
        }
        self.no_contact.sort_unstable();
        self.no_contact.dedup();
    }

    /// Wakes the sleeping side of every joint whose other side is awake
    /// (or a moving kinematic body), as a contact would; returns how many
    /// bodies woke. Whole islands wake, so one pass may wake bodies that
    /// another joint links to a further sleeping island: the caller repeats
    /// until nothing wakes.
    pub fn wake_sleeping_sides(&self, bodies: &mut Bodies) -> u32 {
        let mut woken = 0;
        for i in 0..self.slots.high_water() {
            if !self.slots.is_live(i) {
                continue;
            }
            let Some(p) = self.data[i].pair() else {
                continue;
            };
            let (a, b) = (p.a as usize, p.b as usize);
            if !bodies.is_added(a) || !bodies.is_added(b) {
                continue;
            }
            let (sleeper, other) = match (bodies.is_sleeping(a), bodies.is_sleeping(b)) {
                (true, false) => (a, b),
                (false, true) => (b, a),
                _ => continue,
            };
            if crate::sleep::can_wake_others(bodies, other) {
                woken += crate::sleep::wake_island(bodies, sleeper);
            }
        }
        woken
    }

    /// Lists the joints this step solves: both sides in the simulation (or
    /// the world) and at least one an awake dynamic body.
    pub fn collect_active(&mut self, bodies: &Bodies) {
        self.active.clear();
        let awake_dynamic =
            |i: usize| bodies.is_active(i) && bodies.motion(i) == MotionType::Dynamic;
        for i in 0..self.slots.high_water() {
            if !self.slots.is_live(i) {
                continue;
            }
            let d = &self.data[i];
            let sides = [d.body_a, d.body_b];
            if !sides
                .iter()
                .all(|&x| x == WORLD || bodies.is_added(x as usize))
            {
                continue;
            }
            if sides
                .iter()
                .any(|&x| x != WORLD && awake_dynamic(x as usize))
            {
                self.active.push(i as u32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_rotation_maps_the_axes() {
        let cases = [
            (Vec3::X, Vec3::Y),
            (Vec3::Y, Vec3::Z),
            (Vec3::Z, Vec3::X),
            (-Vec3::X, Vec3::Z),
            (-Vec3::Y, Vec3::X),
            (
                Vec3::new(1.0, 2.0, -0.5).normalize(),
                Vec3::new(2.0, -1.0, 0.0).normalize(),
            ),
        ];
        for (x, y) in cases {
            let q = frame_rotation(x, y);
            assert!((q.length() - 1.0).abs() < 1e-6);
            assert!(
                (crate::math::rotate(q, Vec3::X) - x).length() < 1e-6,
                "{x} {y}"
            );
            assert!(
                (crate::math::rotate(q, Vec3::Y) - y).length() < 1e-6,
                "{x} {y}"
            );
        }
    }
}
