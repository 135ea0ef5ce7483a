//! Contact and sensor events: which pairs began and stopped touching.
//!
//! Bodies opt in ([`BodyCreationSettings::with_contact_events`]); a pair
//! reports when either body does, so a world of 100k contacts nobody
//! listens to pays one flag test per manifold, and nothing at all while no
//! body has the flag. After each collision step's narrow phase, the
//! touching reporting pairs (manifolds with points, sorted by body pair)
//! are merged with the last step's in one walk: a pair new this step is
//! *added* (or a sensor *entered*), a pair of the last step's list that
//! is gone is *removed* (*exited*) unless it is asleep (both bodies
//! asleep or static: its contact is still there, as the contact cache
//! keeps it). A body taken out of the world (`remove_body`,
//! `destroy_body`, the quarantine) removes its pairs at once, with
//! [`RemovalReason::BodyRemoved`], reported by the next `update`.
//!
//! The walk is serial and in body-pair order, so the events and their
//! order are the same on any number of workers. Buffers are sized from
//! [`Capacities::max_contact_constraints`](crate::Capacities): an update
//! can report at most that many additions and removals per collision step
//! (more cannot exist), so nothing is dropped in practice; a drop would be
//! counted in [`StepStats::contact_events_dropped`](crate::StepStats).
//!
//! [`BodyCreationSettings::with_contact_events`]: crate::BodyCreationSettings::with_contact_events

use crate::body::{Bodies, BodyId};
use crate::math::{rotate, Vec3};
use crate::narrowphase::Manifold;

/// What happened to a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContactEventKind {
    /// Two solid bodies began touching (their first manifold with
    /// points: a speculative contact, still up to
    /// `speculative_contact_distance` apart, counts).
    Added,
    /// They stopped touching, or one of them was taken out.
    Removed,
    /// A body began overlapping a sensor.
    SensorEntered,
    /// It stopped overlapping it, or one of them was taken out.
    SensorExited,
}

/// Why a pair stopped touching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemovalReason {
    /// The narrow phase found no contact any more.
    Separated,
    /// One body was removed, destroyed or quarantined.
    BodyRemoved,
}

/// One event. `body_a < body_b` by index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactEvent {
    pub kind: ContactEventKind,
    pub body_a: BodyId,
    pub body_b: BodyId,
    /// Added and entered: the deepest point (world, midway between the
    /// surfaces) when found; zero otherwise.
    pub point: Vec3,
    /// Added and entered: the contact normal, from A to B.
    pub normal: Vec3,
    /// Added and entered: depth at the deepest point (m; negative while
    /// the surfaces are still apart: a speculative contact).
    pub penetration: f32,
    /// Added and entered: how fast the bodies closed along the normal at
    /// the deepest point before the solve (m/s, positive when closing):
    /// the speed to scale a sound or damage by.
    pub approach_speed: f32,
    /// Added: the pair's total normal impulse in that collision step
    /// (N·s); 0 for sensors and the other kinds.
    pub normal_impulse: f32,
    /// Removed and exited: why.
    pub reason: Option<RemovalReason>,
    /// Added and entered: the parts of A and of B the pair's first
    /// manifold came from (a compound's child, a mesh's or height field's
    /// triangle, as [`Contact::sub_shapes`](crate::Contact)); 0 otherwise.
    pub sub_shapes: [u32; 2],
}

/// A touching reporting pair of the last collision step.
#[derive(Debug, Clone, Copy)]
struct Touching {
    key: u64,
    sensor: bool,
}

impl crate::snapshot::codec::Snap for Touching {
    fn put(&self, w: &mut crate::snapshot::codec::Writer) {
        w.u64(self.key);
        w.put(&self.sensor);
    }
    fn get(r: &mut crate::snapshot::codec::Reader) -> crate::error::Result<Self> {
        let key = r.u64()?;
        let (a, b) = (key >> 32, key & u64::from(u32::MAX));
        if a >= b || b >= u64::from(r.max_bodies) {
            return Err(crate::error::PhysicsError::InvalidSnapshot);
        }
        Ok(Self {
            key,
            sensor: r.get()?,
        })
    }
}

/// An event as saved: bodies as slot and generation (the world tag is the
/// restoring world's).
fn put_event(e: &ContactEvent, w: &mut crate::snapshot::codec::Writer) {
    let kind = match e.kind {
        ContactEventKind::Added => 0,
        ContactEventKind::Removed => 1,
        ContactEventKind::SensorEntered => 2,
        ContactEventKind::SensorExited => 3,
    };
    w.u8(kind);
    for id in [e.body_a, e.body_b] {
        w.u32(id.index());
        w.u32(id.generation());
    }
    w.put(&e.point);
    w.put(&e.normal);
    for v in [e.penetration, e.approach_speed, e.normal_impulse] {
        w.f32(v);
    }
    w.u8(match e.reason {
        None => 0,
        Some(RemovalReason::Separated) => 1,
        Some(RemovalReason::BodyRemoved) => 2,
    });
    w.put(&e.sub_shapes);
}

fn get_event(
    r: &mut crate::snapshot::codec::Reader,
    world: u32,
) -> crate::error::Result<ContactEvent> {
    let bad = crate::error::PhysicsError::InvalidSnapshot;
    let kind = match r.u8()? {
        0 => ContactEventKind::Added,
        1 => ContactEventKind::Removed,
        2 => ContactEventKind::SensorEntered,
        3 => ContactEventKind::SensorExited,
        _ => return Err(bad),
    };
    let mut id = || -> crate::error::Result<BodyId> {
        let slot = r.slot()?;
        Ok(BodyId::new(slot, r.u32()?, world))
    };
    let (body_a, body_b) = (id()?, id()?);
    Ok(ContactEvent {
        kind,
        body_a,
        body_b,
        point: r.get()?,
        normal: r.get()?,
        penetration: r.f32()?,
        approach_speed: r.f32()?,
        normal_impulse: r.f32()?,
        reason: match r.u8()? {
            0 => None,
            1 => Some(RemovalReason::Separated),
            2 => Some(RemovalReason::BodyRemoved),
            _ => return Err(bad),
        },
        sub_shapes: r.get()?,
    })
}

pub(crate) struct ContactEvents {
    touching: Vec<Touching>,
    next: Vec<Touching>,
    /// This update's events.
    events: Vec<ContactEvent>,
    /// Removals by user calls since the last update, reported by the next.
    pending: Vec<ContactEvent>,
    /// Per added event of this collision step: its manifold (the solve
    /// fills in the impulse).
    added_from: Vec<(u32, u32)>,
    /// Bodies with the flag (the phase runs only while there are some).
    pub reporting: usize,
    /// Events that did not fit, this update.
    pub dropped: u32,
}

impl ContactEvents {
    pub fn new(max_contact_constraints: usize) -> Self {
        let n = max_contact_constraints;
        Self {
            touching: Vec::with_capacity(n),
            next: Vec::with_capacity(n),
            events: Vec::with_capacity(2 * n),
            pending: Vec::with_capacity(n),
            added_from: Vec::with_capacity(n),
            reporting: 0,
            dropped: 0,
        }
    }

    /// Bytes per contact constraint of capacity.
    pub const fn bytes_per_contact() -> usize {
        2 * std::mem::size_of::<Touching>()
            + 3 * std::mem::size_of::<ContactEvent>()
            + std::mem::size_of::<(u32, u32)>()
    }

    /// Snapshot section: the touching pairs, the removals waiting for the
    /// next update, and the last update's events and drop count.
    pub fn save_state(&self, w: &mut crate::snapshot::codec::Writer) {
        w.items(&self.touching);
        for list in [&self.pending, &self.events] {
            w.u32(list.len() as u32);
            for e in list.iter() {
                put_event(e, w);
            }
        }
        w.u32(self.dropped);
    }

    /// Reads [`save_state`](Self::save_state)'s section, into `dst` if
    /// given (`reporting` is derived from the bodies afterwards).
    pub fn restore_state(
        r: &mut crate::snapshot::codec::Reader,
        mut dst: Option<&mut Self>,
        world: u32,
        max_contact_constraints: usize,
    ) -> crate::error::Result<()> {
        // the capacities `new` gives the lists
        let n = max_contact_constraints;
        r.items_into(n, dst.as_deref_mut().map(|e| &mut e.touching))?;
        for (k, limit) in [n, 2 * n].into_iter().enumerate() {
            let n = r.len(limit)?;
            if let Some(e) = dst.as_deref_mut() {
                [&mut e.pending, &mut e.events][k].clear();
            }
            for _ in 0..n {
                let ev = get_event(r, world)?;
                if let Some(e) = dst.as_deref_mut() {
                    [&mut e.pending, &mut e.events][k].push(ev);
                }
            }
        }
        let dropped = r.u32()?;
        if let Some(e) = dst {
            e.dropped = dropped;
            e.next.clear();
            e.added_from.clear();
        }
        Ok(())
    }

    pub fn has_touching(&self) -> bool {
        !self.touching.is_empty()
    }

    pub fn has_added(&self) -> bool {
        !self.added_from.is_empty()
    }

    pub fn events(&self) -> &[ContactEvent] {
        &self.events
    }

    fn push(list: &mut Vec<ContactEvent>, dropped: &mut u32, e: ContactEvent) {
        if list.len() < list.capacity() {
            list.push(e);
        } else {
            *dropped += 1;
        }
    }

    /// An update begins: the last one's events go, the removals made by
    /// calls since then come first in this one's.
    pub fn begin_update(&mut self) {
        self.events.clear();
        self.dropped = 0;
        self.events.append(&mut self.pending);
    }

    /// Body `slot` leaves the world: its touching pairs are removed now.
    pub fn body_removed(&mut self, slot: u32, bodies: &Bodies) {
        if self.touching.is_empty() {
            return;
        }
        let (pending, dropped) = (&mut self.pending, &mut self.dropped);
        self.touching.retain(|t| {
            let (a, b) = ((t.key >> 32) as u32, t.key as u32);
            if a != slot && b != slot {
                return true;
            }
            let e = gone(bodies, t, RemovalReason::BodyRemoved);
            Self::push(pending, dropped, e);
            false
        });
    }

    /// After a collision step's narrow phase: the merge walk.
    pub fn after_narrow_phase(&mut self, manifolds: &[Manifold], bodies: &Bodies) {
        self.next.clear();
        self.added_from.clear();
        let reports = |a: u32, b: u32| {
            bodies.reports_contacts(a as usize) || bodies.reports_contacts(b as usize)
        };
        let mut j = 0;
        let old = std::mem::take(&mut self.touching);
        let settle = |this: &mut Self, t: &Touching| {
            let (a, b) = ((t.key >> 32) as usize, t.key as u32 as usize);
            let asleep = (bodies.is_sleeping(a) || bodies.is_sleeping(b))
                && !bodies.is_active(a)
                && !bodies.is_active(b);
            if asleep {
                this.track(*t);
            } else {
                let e = gone(bodies, t, RemovalReason::Separated);
                Self::push(&mut this.events, &mut this.dropped, e);
            }
        };
        let mut last_key = None;
        for (i, m) in manifolds.iter().enumerate() {
            if m.count == 0 || !reports(m.pair.a, m.pair.b) {
                continue;
            }
            let key = m.pair.key();
            // a pair's further manifolds (a body on a mesh touching two
            // faces): the pair is one contact, reported by its first
            if last_key.replace(key) == Some(key) {
                continue;
            }
            while j < old.len() && old[j].key < key {
                settle(self, &old[j]);
                j += 1;
            }
            if j < old.len() && old[j].key == key {
                j += 1; // persisted
            } else {
                let e = added(bodies, m);
                if self.events.len() < self.events.capacity() {
                    self.added_from.push((self.events.len() as u32, i as u32));
                }
                Self::push(&mut self.events, &mut self.dropped, e);
            }
            self.track(Touching {
                key,
                sensor: m.sensor,
            });
        }
        for t in &old[j..] {
            settle(self, t);
        }
        self.touching = old;
        std::mem::swap(&mut self.touching, &mut self.next);
    }

    /// Keeps `t` for the next step's walk. A pair that does not fit is
    /// counted as dropped (it would be reported as added again).
    fn track(&mut self, t: Touching) {
        if self.next.len() < self.next.capacity() {
            self.next.push(t);
        } else {
            self.dropped += 1;
        }
    }

    /// After the solve: the added pairs' impulses.
    pub fn after_solve(&mut self, manifolds: &[Manifold]) {
        for &(e, m) in &self.added_from {
            let e = &mut self.events[e as usize];
            if e.kind == ContactEventKind::Added {
                // every manifold of the pair (they follow each other)
                let pair = manifolds[m as usize].pair;
                e.normal_impulse = manifolds[m as usize..]
                    .iter()
                    .take_while(|x| x.pair == pair)
                    .map(|x| x.normal_impulse[..x.count as usize].iter().sum::<f32>())
                    .sum();
            }
        }
        self.added_from.clear();
    }
}

fn added(bodies: &Bodies, m: &Manifold) -> ContactEvent {
    let (a, b) = (m.pair.a as usize, m.pair.b as usize);
    let n = m.count as usize;
    let k = (0..n)
        .min_by(|&x, &y| m.separation[x].total_cmp(&m.separation[y]))
        .unwrap_or(0);
    let (xa, qa, xb) = (bodies.pos(a), bodies.rot(a), bodies.pos(b));
    let on_a = xa + rotate(qa, m.local_a[k]);
    let point = on_a + m.normal * (0.5 * m.separation[k]);
    let (ra, rb) = (point - xa, point - xb);
    let va = bodies.lin_vel(a) + bodies.ang_vel(a).cross(ra);
    let vb = bodies.lin_vel(b) + bodies.ang_vel(b).cross(rb);
    ContactEvent {
        kind: if m.sensor {
            ContactEventKind::SensorEntered
        } else {
            ContactEventKind::Added
        },
        body_a: bodies.id_of(a),
        body_b: bodies.id_of(b),
        point,
        normal: m.normal,
        penetration: -m.separation[k],
        approach_speed: -(vb - va).dot(m.normal),
        normal_impulse: 0.0,
        reason: None,
        sub_shapes: m.sub,
    }
}

fn gone(bodies: &Bodies, t: &Touching, reason: RemovalReason) -> ContactEvent {
    let (a, b) = ((t.key >> 32) as usize, t.key as u32 as usize);
    ContactEvent {
        kind: if t.sensor {
            ContactEventKind::SensorExited
        } else {
            ContactEventKind::Removed
        },
        body_a: bodies.id_of(a),
        body_b: bodies.id_of(b),
        point: Vec3::ZERO,
        normal: Vec3::ZERO,
        penetration: 0.0,
        approach_speed: 0.0,
        normal_impulse: 0.0,
        reason: Some(reason),
        sub_shapes: [0; 2],
    }
}
