//! Joints in a snapshot: the allocator's generations and free list, then per
//! live joint its settings (bodies as slots) and accumulated impulses. The
//! solver's form of each joint (`JointData`), the per-body counts and the
//! no-contact pairs are derived from the settings as `create_joint` does.

use super::bodies::View;
use super::codec::{snap_fields, Reader, SlotsRead, Snap, Writer};
use crate::error::{PhysicsError, Result};
use crate::joint::store::{JointData, Joints, JOINT_IMPULSES, WORLD};
use crate::joint::{
    DistanceJoint, HingeJoint, JointFrame, JointImpulse, JointKind, JointMotor, JointSettings,
    MotorMode, SliderJoint, Spring, SwingTwistJoint,
};

snap_fields!(JointFrame {
    anchor,
    axis,
    normal
});
snap_fields!(Spring { frequency, damping });
snap_fields!(JointMotor { mode, max_force });
snap_fields!(DistanceJoint { min, max, spring });
snap_fields!(HingeJoint {
    limits,
    motor,
    max_friction
});
snap_fields!(SliderJoint {
    limits,
    motor,
    max_friction
});
snap_fields!(SwingTwistJoint { swing, twist });
snap_fields!(JointImpulse { linear, angular });

impl Snap for MotorMode {
    fn put(&self, w: &mut Writer) {
        match *self {
            MotorMode::Off => w.u8(0),
            MotorMode::Velocity(v) => {
                w.u8(1);
                w.f32(v);
            }
            MotorMode::Position { target, spring } => {
                w.u8(2);
                w.f32(target);
                w.put(&spring);
            }
        }
    }
    fn get(r: &mut Reader) -> Result<Self> {
        Ok(match r.u8()? {
            0 => MotorMode::Off,
            1 => MotorMode::Velocity(r.f32()?),
            2 => MotorMode::Position {
                target: r.f32()?,
                spring: r.get()?,
            },
            _ => return Err(PhysicsError::InvalidSnapshot),
        })
    }
}

impl Snap for JointKind {
    fn put(&self, w: &mut Writer) {
        match self {
            JointKind::Fixed => w.u8(0),
            JointKind::Point => w.u8(1),
            JointKind::Distance(j) => {
                w.u8(2);
                w.put(j);
            }
            JointKind::Hinge(j) => {
                w.u8(3);
                w.put(j);
            }
            JointKind::Slider(j) => {
                w.u8(4);
                w.put(j);
            }
            JointKind::SwingTwist(j) => {
                w.u8(5);
                w.put(j);
            }
        }
    }
    fn get(r: &mut Reader) -> Result<Self> {
        Ok(match r.u8()? {
            0 => JointKind::Fixed,
            1 => JointKind::Point,
            2 => JointKind::Distance(r.get()?),
            3 => JointKind::Hinge(r.get()?),
            4 => JointKind::Slider(r.get()?),
            5 => JointKind::SwingTwist(r.get()?),
            _ => return Err(PhysicsError::InvalidSnapshot),
        })
    }
}

pub(crate) fn save(j: &Joints, w: &mut Writer) {
    w.slots(&j.slots);
    for i in j.live() {
        let s = j.settings[i].expect("a live joint has settings");
        let d = &j.data[i];
        for side in [d.body_a, d.body_b] {
            w.u32(side);
        }
        w.put(&s.frame_a);
        w.put(&s.frame_b);
        w.put(&s.kind);
        w.put(&s.collide_connected);
        w.put(&j.impulses[i]);
        w.put(&j.last_impulse[i]);
        w.put(&j.update_impulse[i]);
    }
}

/// Reads the joint table, into `dst` if given. A joint's bodies must be
/// live in the snapshot, distinct, one of them dynamic (what `create_joint`
/// requires), and its settings valid.
pub(crate) fn restore(
    r: &mut Reader,
    mut dst: Option<&mut Joints>,
    bodies: &View,
    world: u32,
    max_joints: usize,
) -> Result<()> {
    let bad = || PhysicsError::InvalidSnapshot;
    let SlotsRead {
        generation,
        free,
        live,
    } = r.slots(max_joints)?;
    let n = generation.len();
    if let Some(j) = dst.as_deref_mut() {
        j.slots.restore(&generation, &free).map_err(|_| bad())?;
        j.settings.fill(None);
        j.per_body.fill(0);
        j.active.clear();
        j.no_contact.clear();
        j.mark_no_contact_stale();
    }
    for i in (0..n).filter(|&i| live[i]) {
        let mut sides = [0u32; 2];
        for s in &mut sides {
            *s = r.u32()?;
            if *s != WORLD && !bodies.is_live(*s) {
                return Err(bad());
            }
        }
        let [a, b] = sides;
        let dynamic = |s: u32| s != WORLD && bodies.is_dynamic(s);
        if a == b || !(dynamic(a) || dynamic(b)) {
            return Err(bad());
        }
        let id = |s: u32| (s != WORLD).then(|| bodies.id(s, world));
        let settings = JointSettings {
            body_a: id(a),
            body_b: id(b),
            frame_a: r.get()?,
            frame_b: r.get()?,
            kind: r.get()?,
            collide_connected: r.get()?,
        };
        settings.validate().map_err(|_| bad())?;
        let impulses: [f32; JOINT_IMPULSES] = r.get()?;
        let last: JointImpulse = r.get()?;
        let update: JointImpulse = r.get()?;
        if let Some(j) = dst.as_deref_mut() {
            j.settings[i] = Some(settings);
            j.data[i] = JointData::of(&settings, a, b);
            j.impulses[i] = impulses;
            j.last_impulse[i] = last;
            j.update_impulse[i] = update;
            for s in sides {
                if s != WORLD {
                    j.per_body[s as usize] += 1;
                }
            }
        }
    }
    Ok(())
}
