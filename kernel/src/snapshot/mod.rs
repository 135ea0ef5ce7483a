//! Snapshots: [`PhysicsSystem::save_state`] writes everything that decides
//! the next step into a byte buffer, [`PhysicsSystem::restore_state`] puts
//! it back, and the restored world then steps bit-identically to the one
//! that was saved (rollback networking, replays, "undo").
//!
//! # What is saved
//!
//! The body table (every column up to the slot high-water mark, the slot
//! allocator's generations and free list, the added and active lists in
//! their order, the sleep rings and timers), the marks user calls left
//! since the last step, the narrow phase's body-pair cache and last
//! manifolds, the contact cache (warm-start impulses, also of sleeping
//! pairs), the joints (settings and accumulated impulses), the contact
//! event state (touching pairs, removals waiting for the next update, the
//! last update's events) and the last update's quarantined bodies.
//!
//! What is rebuilt instead: the broad phase (every body is re-inserted; the
//! broad phases report exactly the pair set of the brute-force oracle,
//! sorted, so the next step sees the same pairs) and the scene-query trees
//! (queries are exact and their results sorted). Per-step scratch (islands,
//! solver batches, splits) is rebuilt by every step anyway.
//!
//! What is not saved: [`PhysicsSettings`](crate::PhysicsSettings) and
//! MBP regions (configuration: the restoring world's own apply; set them
//! alike for an identical continuation), the last update's
//! [`StepStats`](crate::StepStats) (reset) and trace.
//!
//! # Format (version 1)
//!
//! A 32-byte header: magic `ARCHSNAP`, format version (u32), a byte-order
//! marker (u32, native), payload length (u64) and a checksum of the payload
//! (u64, see `codec::checksum`), then the payload: the capacities and the
//! broad-phase kind (which must match the restoring world's), then the
//! sections above. Columns are copied as their native bytes, everything
//! else field by field, little-endian.
//!
//! # Refusals
//!
//! Restoring checks the header and the checksum, then reads the whole
//! payload once without changing anything (every length against its
//! capacity, every slot against `max_bodies`, every enum tag, shape and
//! joint setting, the lists and sleep rings for consistency), and only then
//! writes the world. Bad bytes are refused with a typed error and the world
//! is untouched: [`InvalidSnapshot`](PhysicsError::InvalidSnapshot)
//! (truncated, corrupted, malformed), [`SnapshotVersion`](PhysicsError::SnapshotVersion),
//! [`SnapshotMismatch`](PhysicsError::SnapshotMismatch) (other capacities,
//! broad-phase kind or byte order).
//!
//! # Handles
//!
//! A world keeps its own tag on restore: the ids it handed out before the
//! save name the same bodies and joints after the restore; ids handed out
//! after the save are stale or name what the restored world puts in their
//! slots. Restored into another world (same capacities), a snapshot's
//! bodies carry that world's tag: read their ids with
//! [`body_ids`](PhysicsSystem::body_ids).

pub(crate) mod bodies;
pub(crate) mod codec;
mod joints;

use crate::broadphase::BroadPhaseKind;
use crate::error::{PhysicsError, Result};
use crate::system::PhysicsSystem;
use codec::{Reader, Writer};

/// First bytes of every snapshot.
pub const SNAPSHOT_MAGIC: [u8; 8] = *b"ARCHSNAP";
/// The format [`PhysicsSystem::save_state`] writes; restoring another is
/// refused with [`SnapshotVersion`](PhysicsError::SnapshotVersion).
pub const SNAPSHOT_VERSION: u32 = 4;
/// Written in native byte order: read back as another value, the snapshot
/// came from a machine of the other byte order.
const BYTE_ORDER: u32 = 0x0102_0304;
const HEADER_BYTES: usize = 32;

fn broad_phase_tag(kind: &BroadPhaseKind) -> u8 {
    match kind {
        BroadPhaseKind::Sap => 0,
        BroadPhaseKind::Mbp(_) => 1,
        BroadPhaseKind::BruteForce => 2,
        BroadPhaseKind::MbpFitted { .. } => 3,
        BroadPhaseKind::Auto => 4,
    }
}

impl PhysicsSystem {
    /// Writes the world's state into `out` (cleared first; its capacity is
    /// reused, so saving every frame into the same buffer allocates only
    /// when the state outgrows it) and returns the snapshot's length in
    /// bytes. Refused: a [`Poisoned`](PhysicsError::Poisoned) world (its
    /// state may be half-stepped).
    ///
    /// Saved: everything that decides the next step: the bodies (every
    /// column, the slot allocator, the added and active lists in their
    /// order, sleep rings and timers), the marks user calls left since the
    /// last step, the body-pair cache and last manifolds, the contact
    /// cache's warm-start impulses, the joints and their impulses, the
    /// contact-event state and the last update's events. Rebuilt on
    /// restore instead: the broad phase (the same pairs come out) and the
    /// query trees. Not saved: [`PhysicsSettings`](crate::PhysicsSettings)
    /// and MBP regions (the restoring world's own apply), the last
    /// [`StepStats`](crate::StepStats) (reset) and trace. The header holds
    /// a format version, the byte order, the length and a 64-bit checksum.
    ///
    /// Size, measured: ~276 bytes per body slot up to the high-water mark,
    /// ~360 per touching pair (its body-pair cache record and its
    /// manifold), ~57 per candidate pair that did not touch, ~99 per
    /// warm-start entry; a joint is its settings and ten impulses (~170 by
    /// the format). The pyramid after 100 steps
    /// (1,241 bodies, 8,555 pairs, 7,393 manifolds) is 3.8 MB, saved in
    /// ~1.1 ms and restored in ~3.1 ms on the 2-core build machine
    /// (`examples/snapshot_cost.rs`).
    pub fn save_state(&self, out: &mut Vec<u8>) -> Result<usize> {
        if self.poisoned {
            return Err(PhysicsError::Poisoned);
        }
        out.clear();
        out.extend_from_slice(&[0; HEADER_BYTES]);
        let mut w = Writer { out };
        let c = &self.capacities;
        for n in [
            c.max_bodies,
            c.max_body_pairs,
            c.max_contact_constraints,
            c.max_joints,
        ] {
            w.u32(n as u32);
        }
        w.u8(broad_phase_tag(&self.settings.broad_phase));
        bodies::save(&self.bodies, &mut w);
        self.save_since_step(&mut w);
        self.narrow.save_state(&mut w);
        self.cache.save_state(&mut w);
        joints::save(&self.joints, &mut w);
        self.events.save_state(&mut w);
        w.u32(self.faulted.len() as u32);
        for id in &self.faulted {
            w.u32(id.index());
        }
        let payload_len = (out.len() - HEADER_BYTES) as u64;
        let sum = codec::checksum(&out[HEADER_BYTES..]);
        out[0..8].copy_from_slice(&SNAPSHOT_MAGIC);
        out[8..12].copy_from_slice(&SNAPSHOT_VERSION.to_le_bytes());
        out[12..16].copy_from_slice(&BYTE_ORDER.to_ne_bytes());
        out[16..24].copy_from_slice(&payload_len.to_le_bytes());
        out[24..32].copy_from_slice(&sum.to_le_bytes());
        Ok(out.len())
    }

    /// Puts back the state [`save_state`](Self::save_state) wrote, of this
    /// world or of another with the same capacities and broad-phase kind.
    /// The restored world steps bit-identically to the saved one (with the
    /// same settings). A poisoned world is healed: the snapshot's state is
    /// whole.
    ///
    /// Refused with the world unchanged: truncated, corrupted or malformed
    /// bytes ([`InvalidSnapshot`](PhysicsError::InvalidSnapshot)), another
    /// format version ([`SnapshotVersion`](PhysicsError::SnapshotVersion)),
    /// other capacities, broad-phase kind or byte order
    /// ([`SnapshotMismatch`](PhysicsError::SnapshotMismatch)).
    ///
    /// Cost: one checked read of the payload and one copy into the world;
    /// the broad phase re-inserts every body in the next update (a batch
    /// insertion, as for a scene loaded at once) and the query trees are
    /// rebuilt here.
    pub fn restore_state(&mut self, snapshot: &[u8]) -> Result<()> {
        let payload = check_header(snapshot)?;
        let mut r = Reader::new(payload, self.capacities.max_bodies as u32);
        let c = &self.capacities;
        for n in [
            c.max_bodies,
            c.max_body_pairs,
            c.max_contact_constraints,
            c.max_joints,
        ] {
            if r.u32()? as usize != n {
                return Err(PhysicsError::SnapshotMismatch);
            }
        }
        if r.u8()? != broad_phase_tag(&self.settings.broad_phase) {
            return Err(PhysicsError::SnapshotMismatch);
        }
        let body_start = r.clone();
        // Pass 1: read everything, change nothing.
        self.read_sections(&mut r, false)?;
        if !r.at_end() {
            return Err(PhysicsError::InvalidSnapshot);
        }
        // Pass 2: the same reads, into the world.
        let mut r = body_start;
        if self.read_sections(&mut r, true).is_err() {
            // Cannot happen (pass 1 read the same bytes), but a half
            // written world must not step.
            self.poisoned = true;
            return Err(PhysicsError::InvalidSnapshot);
        }
        self.poisoned = false;
        Ok(())
    }

    fn read_sections(&mut self, r: &mut Reader, apply: bool) -> Result<()> {
        // What the broad phase and query trees must forget: the bodies of
        // the world as it was.
        if apply {
            for k in 0..self.bodies.added.len() {
                self.broad.remove(self.bodies.added[k]);
            }
        }
        let view = bodies::restore(r, apply.then_some(&mut self.bodies))?;
        if apply {
            self.bodies.recount_linear_casts();
        }
        self.restore_since_step(r, &view, apply)?;
        crate::narrowphase::NarrowPhase::restore_state(
            r,
            apply.then_some(&mut self.narrow),
            &self.capacities,
        )?;
        crate::contact_cache::ContactCache::restore_state(
            r,
            apply.then_some(&mut self.cache),
            self.capacities.max_contact_constraints,
        )?;
        joints::restore(
            r,
            apply.then_some(&mut self.joints),
            &view,
            self.bodies.world,
            self.capacities.max_joints,
        )?;
        crate::events::ContactEvents::restore_state(
            r,
            apply.then_some(&mut self.events),
            self.bodies.world,
            self.capacities.max_contact_constraints,
        )?;
        let faulted_cap = self.faulted.capacity();
        let n = r.len(faulted_cap)?;
        if apply {
            self.faulted.clear();
        }
        for _ in 0..n {
            let slot = r.slot()?;
            if apply {
                self.faulted.push(view.id(slot, self.bodies.world));
            }
        }
        if apply {
            self.after_restore();
        }
        Ok(())
    }

    /// Rebuilds what is derived from the restored state.
    fn after_restore(&mut self) {
        let b = &self.bodies;
        for &s in &b.added {
            self.broad.add(s);
        }
        self.events.reporting = b
            .added
            .iter()
            .filter(|&&s| b.reports_contacts(s as usize))
            .count();
        self.queries.reset(b);
        self.pairs.clear();
        self.solver.forget_placement();
        self.last_stats = Default::default();
        self.last_trace = None;
    }

    fn save_since_step(&self, w: &mut Writer) {
        w.u32(self.since_step_slots.len() as u32);
        for &s in &self.since_step_slots {
            w.u32(s);
            w.u8(self.since_step[s as usize]);
        }
    }

    fn restore_since_step(
        &mut self,
        r: &mut Reader,
        view: &bodies::View,
        apply: bool,
    ) -> Result<()> {
        let n = r.len(view.high_water())?;
        if apply {
            self.clear_since_step();
        }
        for _ in 0..n {
            let s = r.slot()?;
            let marks = r.u8()?;
            let known =
                crate::system::since_step::TAKEN_OUT | crate::system::since_step::PUT_TO_SLEEP;
            if marks == 0 || marks & !known != 0 {
                return Err(PhysicsError::InvalidSnapshot);
            }
            if s as usize >= view.high_water() {
                return Err(PhysicsError::InvalidSnapshot);
            }
            if apply {
                self.since_step[s as usize] = marks;
                self.since_step_slots.push(s);
            }
        }
        Ok(())
    }
}

/// The payload of a snapshot whose header and checksum hold.
fn check_header(s: &[u8]) -> Result<&[u8]> {
    if s.len() < HEADER_BYTES || s[0..8] != SNAPSHOT_MAGIC {
        return Err(PhysicsError::InvalidSnapshot);
    }
    let word = |at: usize| u32::from_le_bytes(s[at..at + 4].try_into().expect("4 bytes"));
    let long = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
    if word(8) != SNAPSHOT_VERSION {
        return Err(PhysicsError::SnapshotVersion);
    }
    if u32::from_ne_bytes(s[12..16].try_into().expect("4 bytes")) != BYTE_ORDER {
        return Err(PhysicsError::SnapshotMismatch);
    }
    let payload = &s[HEADER_BYTES..];
    if long(16) != payload.len() as u64 || long(24) != codec::checksum(payload) {
        return Err(PhysicsError::InvalidSnapshot);
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    //! Forged snapshots: the checksum holds (they are saved from a world
    //! whose internals a test broke), so only the checked read stands
    //! between them and a panic in a later step.
    use crate::body::BodyCreationSettings;
    use crate::joint::JointSettings;
    use crate::math::Vec3;
    use crate::{Capacities, MotionType, PhysicsError, PhysicsSettings, PhysicsSystem, Shape};

    fn world() -> PhysicsSystem {
        let caps = Capacities {
            max_bodies: 64,
            max_body_pairs: 256,
            max_contact_constraints: 128,
            max_joints: 8,
        };
        let mut w = PhysicsSystem::new(caps, PhysicsSettings::default()).unwrap();
        let floor = Shape::cuboid(Vec3::new(10.0, 1.0, 10.0)).unwrap();
        w.create_and_add_body(&BodyCreationSettings::new(
            floor,
            Vec3::new(0.0, -1.0, 0.0),
            MotionType::Static,
        ))
        .unwrap();
        let mut ids = Vec::new();
        for k in 0..6 {
            let b = BodyCreationSettings::new(
                Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                Vec3::new(0.0, 0.5 + k as f32, 0.0),
                MotionType::Dynamic,
            )
            .with_contact_events(true);
            ids.push(w.create_and_add_body(&b).unwrap());
        }
        let spare = w
            .create_body(&BodyCreationSettings::new(
                Shape::sphere(0.2).unwrap(),
                Vec3::new(5.0, 1.0, 0.0),
                MotionType::Dynamic,
            ))
            .unwrap();
        w.destroy_body(spare).unwrap();
        w.create_joint(&JointSettings::point(
            Some(ids[4]),
            Some(ids[5]),
            Vec3::new(0.0, 0.5, 0.0),
            Vec3::new(0.0, -0.5, 0.0),
        ))
        .unwrap();
        let pool = crate::SerialExecutor;
        for _ in 0..20 {
            w.update(1.0 / 60.0, 1, &pool).unwrap();
        }
        w
    }

    fn save(w: &PhysicsSystem) -> Vec<u8> {
        let mut out = Vec::new();
        w.save_state(&mut out).unwrap();
        out
    }

    #[test]
    fn forged_payloads_are_refused() {
        type Breaker = (&'static str, fn(&mut PhysicsSystem));
        let breakers: Vec<Breaker> = vec![
            ("active slot past the bodies", |w| w.bodies.active[0] = 60),
            ("added slot twice", |w| {
                w.bodies.added[1] = w.bodies.added[0]
            }),
            ("added slot free", |w| {
                let freed = w.bodies.slots.free_list()[0];
                w.bodies.added[1] = freed;
            }),
            ("broken sleep ring", |w| w.bodies.sleep_next[2] = 3),
            ("sleep ring out of range", |w| w.bodies.sleep_next[2] = 1000),
            ("negative radius", |w| {
                w.bodies.shape[3] = Shape::Sphere { radius: -1.0 }
            }),
            ("motion type 7", |w| w.bodies.motion_type[3] = 7),
            ("object layer 40", |w| w.bodies.object_layer[3] = 40),
            ("manifold of 9 points", |w| w.narrow.manifolds[0].count = 9),
            ("manifold pair reversed", |w| {
                let m = &mut w.narrow.manifolds[0];
                core::mem::swap(&mut m.pair.a, &mut m.pair.b);
            }),
            ("joint to a free slot", |w| {
                let freed = w.bodies.slots.free_list()[0];
                w.joints.data[0].body_a = freed;
            }),
            ("joint to itself", |w| {
                w.joints.data[0].body_a = w.joints.data[0].body_b
            }),
            ("unknown since-step mark", |w| {
                w.since_step[1] = 0x80;
                w.since_step_slots.push(1);
            }),
        ];
        let mut target = world();
        let before = save(&target);
        for (what, brk) in breakers {
            let mut w = world();
            brk(&mut w);
            let forged = save(&w);
            assert_eq!(
                target.restore_state(&forged),
                Err(PhysicsError::InvalidSnapshot),
                "{what}"
            );
            assert_eq!(save(&target), before, "{what}: the world changed");
        }
        // the unbroken one is accepted
        target.restore_state(&save(&world())).unwrap();
    }
}
