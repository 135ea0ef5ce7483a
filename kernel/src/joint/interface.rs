//! The joint interface of [`PhysicsSystem`]: create, remove, read and
//! change joints. Every call validates first and changes nothing when it
//! refuses; calls that change what a joint does wake both its bodies.

use super::store::{kind, JointData, WORLD};
use super::{JointFrame, JointId, JointImpulse, JointKind, JointMotor, JointSettings};
use crate::body::{BodyId, MotionType};
use crate::error::{PhysicsError, Result};
use crate::math::{rotate, Quat, Vec3};
use crate::solver::joint::prepare::{Geometry, Kinds};
use crate::solver::poses::PairPose;
use crate::system::PhysicsSystem;
use archipelago_simd::{Q4, V3};

impl PhysicsSystem {
    /// Creates a joint (see [`JointSettings`]). Both bodies wake. Refused:
    /// a stale or foreign body (`InvalidBodyId`), a joint to its own body
    /// (`JointToSelf`), no dynamic side (`JointWithoutDynamicBody`: two
    /// static or kinematic bodies, or the world on both sides), bad
    /// frames, limits, springs or motors (their errors), and a full table
    /// (`JointCapacityReached`).
    pub fn create_joint(&mut self, s: &JointSettings) -> Result<JointId> {
        let side = |body: Option<BodyId>| match body {
            Some(id) => self.bodies.check(id).map(|i| i as u32),
            None => Ok(WORLD),
        };
        let (a, b) = (side(s.body_a)?, side(s.body_b)?);
        if a == b && a != WORLD {
            return Err(PhysicsError::JointToSelf);
        }
        let dynamic = |i: u32| i != WORLD && self.bodies.motion(i as usize) == MotionType::Dynamic;
        if !dynamic(a) && !dynamic(b) {
            return Err(PhysicsError::JointWithoutDynamicBody);
        }
        s.validate()?;
        let id = self
            .joints
            .insert(*s, JointData::of(s, a, b), self.bodies.world)?;
        self.wake_joint_bodies(a, b);
        Ok(id)
    }

    /// Removes a joint; both its bodies wake (what held them may be gone).
    pub fn remove_joint(&mut self, id: JointId) -> Result<()> {
        let i = self.joints.check(id, self.bodies.world)?;
        let d = self.joints.data[i];
        self.joints.remove(id);
        self.wake_joint_bodies(d.body_a, d.body_b);
        Ok(())
    }

    /// The joint's settings as created (or last changed).
    pub fn joint(&self, id: JointId) -> Result<JointSettings> {
        let i = self.joints.check(id, self.bodies.world)?;
        Ok(self.joints.settings[i].expect("a live joint has settings"))
    }

    /// The impulses the joint applied in the last update that solved it,
    /// summed over that update's collision steps (zero before any): divide
    /// by the update's `dt` for the force and torque, to break a joint by
    /// force. A joint whose bodies sleep keeps its last value.
    pub fn joint_impulse(&self, id: JointId) -> Result<JointImpulse> {
        let i = self.joints.check(id, self.bodies.world)?;
        Ok(self.joints.update_impulse[i])
    }

    /// Joints created and not removed.
    pub fn num_joints(&self) -> usize {
        self.joints.slots.live_count()
    }

    /// Ids of all joints, in slot order.
    pub fn joint_ids(&self) -> Vec<JointId> {
        let world = self.bodies.world;
        self.joints
            .live()
            .map(|i| self.joints.id_of(i, world))
            .collect()
    }

    /// The joints that use a body, in slot order.
    pub fn body_joints(&self, body: BodyId) -> Result<Vec<JointId>> {
        let i = self.bodies.check(body)? as u32;
        let world = self.bodies.world;
        Ok(self
            .joints
            .live()
            .filter(|&j| {
                let d = &self.joints.data[j];
                d.body_a == i || d.body_b == i
            })
            .map(|j| self.joints.id_of(j, world))
            .collect())
    }

    /// A world-space frame expressed in `body`'s local space (for
    /// [`JointSettings`]' frames); `None` (the world) returns it as it is.
    pub fn joint_frame(&self, body: Option<BodyId>, world: JointFrame) -> Result<JointFrame> {
        let Some(id) = body else {
            return Ok(world);
        };
        let i = self.bodies.check(id)?;
        let (p, q) = (self.bodies.pos(i), self.bodies.rot(i).inverse());
        Ok(JointFrame {
            anchor: rotate(q, world.anchor - p),
            axis: rotate(q, world.axis),
            normal: rotate(q, world.normal),
        })
    }

    /// The joint's coordinate now: a hinge's angle or a swing-twist's twist
    /// (rad, frame B about frame A's axis), a slider's position (m, B's
    /// anchor minus A's along A's axis) or a distance joint's length (m).
    /// Fixed and point joints have none (`WrongJointKind`).
    pub fn joint_coordinate(&self, id: JointId) -> Result<f32> {
        let i = self.joints.check(id, self.bodies.world)?;
        let d = &self.joints.data[i];
        if matches!(d.kind, kind::FIXED | kind::POINT) {
            return Err(PhysicsError::WrongJointKind);
        }
        let side = |b: u32| {
            if b == WORLD {
                (Vec3::ZERO, Quat::IDENTITY)
            } else {
                (self.bodies.pos(b as usize), self.bodies.rot(b as usize))
            }
        };
        let (xa, qa) = side(d.body_a);
        let (xb, qb) = side(d.body_b);
        let v = |v: Vec3| V3::new(v.x, v.y, v.z);
        let q = |q: [f32; 4]| Q4 {
            x: q[0],
            y: q[1],
            z: q[2],
            w: q[3],
        };
        let pose = PairPose {
            xa: v(xa),
            qa: q(qa.to_array()),
            xb: v(xb),
            qb: q(qb.to_array()),
        };
        let [la, lb] = [d.anchor_a, d.anchor_b].map(|a| V3::new(a[0], a[1], a[2]));
        let g = Geometry::new(la, lb, q(d.frame_a), q(d.frame_b), &pose);
        let is = |k: u32| d.kind == k;
        let kinds = Kinds::<f32> {
            distance: is(kind::DISTANCE),
            hinge: is(kind::HINGE),
            slider: is(kind::SLIDER),
            swing_twist: is(kind::SWING_TWIST),
        };
        // row 1 is the hinge's and slider's coordinate too, and the twist
        let (_, x) = g.rows(&kinds);
        Ok(if is(kind::DISTANCE) { x[0] } else { x[1] })
    }

    /// Sets a hinge's or slider's motor (`WrongJointKind` for others).
    pub fn set_joint_motor(&mut self, id: JointId, motor: JointMotor) -> Result<()> {
        self.change_joint(id, |k| match k {
            JointKind::Hinge(h) => {
                h.motor = motor;
                Ok(())
            }
            JointKind::Slider(s) => {
                s.motor = motor;
                Ok(())
            }
            _ => Err(PhysicsError::WrongJointKind),
        })
    }

    /// Sets a joint's limits: a hinge's angles or a slider's positions
    /// (`None` frees them), a distance joint's `[min, max]` or a
    /// swing-twist's twist (both need `Some`). `WrongJointKind` for fixed
    /// and point joints.
    pub fn set_joint_limits(&mut self, id: JointId, limits: Option<[f32; 2]>) -> Result<()> {
        self.change_joint(id, |k| match k {
            JointKind::Hinge(h) => {
                h.limits = limits;
                Ok(())
            }
            JointKind::Slider(s) => {
                s.limits = limits;
                Ok(())
            }
            JointKind::Distance(d) => {
                let [min, max] = limits.ok_or(PhysicsError::InvalidJointLimits)?;
                (d.min, d.max) = (min, max);
                Ok(())
            }
            JointKind::SwingTwist(st) => {
                st.twist = limits.ok_or(PhysicsError::InvalidJointLimits)?;
                Ok(())
            }
            _ => Err(PhysicsError::WrongJointKind),
        })
    }

    /// Replaces what kind of joint it is (and that kind's settings), on the
    /// same bodies and frames.
    pub fn set_joint_kind(&mut self, id: JointId, kind: JointKind) -> Result<()> {
        self.change_joint(id, |k| {
            *k = kind;
            Ok(())
        })
    }

    /// Applies `change` to a copy of the joint's kind, validates the
    /// result, stores it and wakes both bodies; changes nothing on error.
    fn change_joint(
        &mut self,
        id: JointId,
        change: impl FnOnce(&mut JointKind) -> Result<()>,
    ) -> Result<()> {
        let i = self.joints.check(id, self.bodies.world)?;
        let mut s = self.joints.settings[i].expect("a live joint has settings");
        change(&mut s.kind)?;
        s.validate()?;
        self.joints.replace(i, s);
        let d = self.joints.data[i];
        self.wake_joint_bodies(d.body_a, d.body_b);
        Ok(())
    }

    /// Wakes (or restarts the sleep timer of) a joint's bodies that are in
    /// the simulation.
    fn wake_joint_bodies(&mut self, a: u32, b: u32) {
        for i in [a, b] {
            if i != WORLD && self.bodies.is_added(i as usize) {
                self.activate_slot(i as usize);
            }
        }
    }
}
