//! Runs a [`Case`] against a real world and checks, after every call, what
//! the kernel promises:
//!
//! - no call panics (`catch_unwind` around each);
//! - a refused call (an `Err`) changes nothing, and no getter changes
//!   anything: a fingerprint of the world (state hash, counts, settings,
//!   every issued id's added / active / sleeping state) is equal before and
//!   after;
//! - handle errors are the right ones: a destroyed, foreign or forged id is
//!   `InvalidBodyId` for every call; adding an added body is
//!   `BodyAlreadyAdded`, removing a removed one `BodyNotAdded`; a full world
//!   refuses creation;
//! - the body count and every body's added state match a model of the
//!   calls that succeeded;
//! - every added body is finite, `check_sleep_invariants` holds, the
//!   contact report names only added bodies and finite points;
//! - after an `update`: no body faulted (no accepted input may make a body
//!   non-finite), warnings agree with the drop counts, counts stay within
//!   the capacities, the contact report has the step's manifolds;
//! - with a shadow world (the same calls, updates on another pool size):
//!   every result and every state hash identical.

use crate::ops::{Case, Op, Query, Target, POOL_SIZES};
use archipelago::*;
use core::result::Result as StdResult;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// What went wrong, at which call (an index into the case's ops; `None`
/// for the world's creation).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The invariant that failed (shrinking keeps a failure of this kind).
    pub kind: &'static str,
    pub detail: String,
    pub op: Option<usize>,
}

/// Counts over a run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    /// Public calls made (each op, and each world creation).
    pub calls: u64,
    /// Calls that returned an error.
    pub refused: u64,
    pub updates: u64,
    /// Updates that simulated (returned Ok with `dt > 0`).
    pub simulated: u64,
    pub worlds: u64,
    /// Worlds whose creation was refused.
    pub worlds_refused: u64,
    /// Worlds replayed on a shadow world.
    pub shadowed: u64,
    /// Updates that dropped pairs or manifolds (full buffers, reported).
    pub updates_with_drops: u64,
    /// The longest call (seconds), and which.
    pub slowest: f64,
    pub slowest_call: Option<(u64, usize)>,
}

/// One pool per size in [`POOL_SIZES`].
pub struct Pools(Vec<ThreadPool>);

impl Pools {
    pub fn new() -> Self {
        Self(
            POOL_SIZES
                .iter()
                .map(|&n| build_pinned_pool(Some(n)).expect("a pool").pool)
                .collect(),
        )
    }
}

impl Default for Pools {
    fn default() -> Self {
        Self::new()
    }
}

/// The message of the last panic, kept by the hook [`quiet_panics`]
/// installs (worker threads panic too, so it is global).
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Replaces the panic hook with one that records the message instead of
/// printing it (a campaign catches every panic and reports it itself).
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let mut last = LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_none() {
            *last = Some(info.to_string());
        }
    }));
}

fn take_panic_message() -> String {
    let mut last = LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner());
    last.take()
        .unwrap_or_else(|| "(message not recorded)".into())
}

/// A call's result in a form two worlds can compare: ids by slot and
/// generation (their world tags differ), floats by bits, stats without
/// times.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Unit,
    Bool(bool),
    Id([u32; 2]),
    Bits([u32; 6]),
    U64(u64),
    Stats(Box<StepStats>),
}

fn id_value(id: BodyId) -> Value {
    Value::Id([id.index(), id.generation()])
}

fn bits(v: &[f32]) -> Value {
    let mut b = [0u32; 6];
    for (o, x) in b.iter_mut().zip(v) {
        *o = x.to_bits();
    }
    Value::Bits(b)
}

type Outcome = StdResult<Value, PhysicsError>;

thread_local! {
    /// Ids of another world, one per slot 0..8 at generation 0: the same
    /// slot and generation as this world's first bodies, another tag.
    static FOREIGN: RefCell<Vec<BodyId>> = RefCell::new({
        let mut w = PhysicsSystem::new(
            Capacities { max_bodies: 8, max_body_pairs: 8, max_contact_constraints: 8, max_joints: 8, },
            PhysicsSettings::default(),
        )
        .expect("a small world");
        (0..8)
            .map(|k| {
                w.create_body(&scenes::cube(0.5, Vec3::new(3.0 * k as f32, 0.5, 0.0)))
                    .expect("room for 8")
            })
            .collect()
    });
}

/// One world and the ids it issued, in issue order.
struct Side {
    w: PhysicsSystem,
    issued: Vec<BodyId>,
    /// Joint ids it issued, in issue order (removed ones too).
    joints: Vec<JointId>,
    /// Added to an update's pool index (the shadow runs on another size).
    pool_shift: usize,
}

/// What the calls that succeeded imply, per issued id.
#[derive(Default)]
struct Model {
    live: Vec<bool>,
    added: Vec<bool>,
    /// Per issued body: how many live joints use it.
    jointed: Vec<u32>,
    /// Per issued joint: alive, and its bodies (issued indices).
    joints: Vec<(bool, [Option<usize>; 2])>,
}

impl Model {
    fn live_count(&self) -> usize {
        self.live.iter().filter(|&&l| l).count()
    }

    fn live_joints(&self) -> usize {
        self.joints.iter().filter(|j| j.0).count()
    }
}

/// The issued joint a joint op names (`None` before any was issued), and
/// its place in the issue order.
fn joint_of(op: &Op, joints: &[JointId]) -> Option<(JointId, usize)> {
    let k = match *op {
        Op::RemoveJoint(k)
        | Op::SetJointMotor(k, _)
        | Op::SetJointLimits(k, _)
        | Op::GetJoint(k) => k,
        _ => return None,
    };
    if joints.is_empty() {
        return None;
    }
    let i = k as usize % joints.len();
    Some((joints[i], i))
}

/// The id a target names in this world, and its place among the issued
/// ids when it is one of them.
fn resolve(t: Target, issued: &[BodyId]) -> (BodyId, Option<usize>) {
    match t {
        Target::Issued(k) if !issued.is_empty() => {
            let i = k as usize % issued.len();
            (issued[i], Some(i))
        }
        Target::Latest if !issued.is_empty() => (issued[issued.len() - 1], Some(issued.len() - 1)),
        Target::Issued(k) => (BodyId::from_raw([k % 64, 0, 0]), None),
        Target::Latest => (BodyId::from_raw([0, 0, 0]), None),
        Target::Foreign(k) => (FOREIGN.with(|f| f.borrow()[k as usize % 8]), None),
        Target::Forged(raw) => (BodyId::from_raw(raw), None),
    }
}

/// The op's body target, if it takes one.
fn target_of(op: &Op) -> Option<Target> {
    Some(match *op {
        Op::Add(t)
        | Op::Remove(t)
        | Op::Destroy(t)
        | Op::SetPosition(t, _)
        | Op::SetRotation(t, _)
        | Op::SetLinearVelocity(t, _)
        | Op::SetAngularVelocity(t, _)
        | Op::AddForce(t, _)
        | Op::AddTorque(t, _)
        | Op::AddImpulse(t, _)
        | Op::AddImpulseAt(t, _, _)
        | Op::AddAngularImpulse(t, _)
        | Op::MoveKinematic(t, _, _, _)
        | Op::Activate(t)
        | Op::Deactivate(t)
        | Op::Get(t, _) => t,
        _ => return None,
    })
}

/// Makes one call. Panics propagate (the caller catches them).
fn apply(side: &mut Side, op: &Op, pools: &Pools) -> Outcome {
    let w = &mut side.w;
    let id = target_of(op).map(|t| resolve(t, &side.issued).0);
    let id = || id.expect("a targeted op");
    let unit = |r: Result<()>| r.map(|_| Value::Unit);
    match *op {
        Op::Create { settings, add } => {
            let r = if add {
                w.create_and_add_body(&settings)
            } else {
                w.create_body(&settings)
            };
            if let Ok(new) = r {
                side.issued.push(new);
            }
            r.map(id_value)
        }
        Op::CreateJoint { a, b, mut settings } => {
            settings.body_a = a.map(|t| resolve(t, &side.issued).0);
            settings.body_b = b.map(|t| resolve(t, &side.issued).0);
            let r = w.create_joint(&settings);
            if let Ok(new) = r {
                side.joints.push(new);
            }
            r.map(|j| Value::Id([j.to_raw()[0], j.to_raw()[1]]))
        }
        Op::RemoveJoint(_) | Op::SetJointMotor(..) | Op::SetJointLimits(..) | Op::GetJoint(_) => {
            let Some((j, _)) = joint_of(op, &side.joints) else {
                return Ok(Value::Unit);
            };
            match *op {
                Op::RemoveJoint(_) => unit(w.remove_joint(j)),
                Op::SetJointMotor(_, m) => unit(w.set_joint_motor(j, m)),
                Op::SetJointLimits(_, l) => unit(w.set_joint_limits(j, l)),
                _ => {
                    // ids compared by slot and generation: the two worlds'
                    // tags differ
                    let settings = w.joint(j)?;
                    let impulse = w.joint_impulse(j)?;
                    let coordinate = w.joint_coordinate(j).unwrap_or(f32::NAN);
                    let first = settings.body_a.or(settings.body_b).expect("a body");
                    let on_first = w.body_joints(first)?.len();
                    let mut h = 0xcbf2_9ce4_8422_2325u64;
                    for x in [
                        impulse.linear.to_bits() as u64,
                        impulse.angular.to_bits() as u64,
                        coordinate.to_bits() as u64,
                        w.num_joints() as u64,
                        w.joint_ids().len() as u64,
                        on_first as u64,
                        settings.collide_connected as u64,
                    ] {
                        h = (h ^ x).wrapping_mul(0x100_0000_01b3);
                    }
                    Ok(Value::U64(h))
                }
            }
        }
        Op::Add(_) => unit(w.add_body(id())),
        Op::Remove(_) => unit(w.remove_body(id())),
        Op::Destroy(_) => unit(w.destroy_body(id())),
        Op::SetPosition(_, p) => unit(w.set_position(id(), p)),
        Op::SetRotation(_, q) => unit(w.set_rotation(id(), q)),
        Op::SetLinearVelocity(_, v) => unit(w.set_linear_velocity(id(), v)),
        Op::SetAngularVelocity(_, v) => unit(w.set_angular_velocity(id(), v)),
        Op::AddForce(_, f) => unit(w.add_force(id(), f)),
        Op::AddTorque(_, f) => unit(w.add_torque(id(), f)),
        Op::AddImpulse(_, f) => unit(w.add_impulse(id(), f)),
        Op::AddImpulseAt(_, f, p) => unit(w.add_impulse_at(id(), f, p)),
        Op::AddAngularImpulse(_, f) => unit(w.add_angular_impulse(id(), f)),
        Op::MoveKinematic(_, p, q, dt) => unit(w.move_kinematic(id(), p, q, dt)),
        Op::Activate(_) => unit(w.activate_body(id())),
        Op::Deactivate(_) => unit(w.deactivate_body(id())),
        Op::ActivateInAabb(lo, hi, mask) => w
            .activate_bodies_in_aabb(lo, hi, mask)
            .map(|n| Value::U64(n as u64)),
        Op::Get(_, q) => {
            let id = id();
            match q {
                Query::Position => w.position(id).map(|v| bits(&v.to_array())),
                Query::Rotation => w.rotation(id).map(|v| bits(&v.to_array())),
                Query::LinearVelocity => w.linear_velocity(id).map(|v| bits(&v.to_array())),
                Query::AngularVelocity => w.angular_velocity(id).map(|v| bits(&v.to_array())),
                Query::MotionType => w.motion_type(id).map(|m| Value::U64(m as u64)),
                Query::Shape => w.shape(id).map(|s| match s {
                    Shape::Sphere { radius } => bits(&[0.0, radius]),
                    Shape::Box { half_extents: h } => bits(&[1.0, h.x, h.y, h.z]),
                    Shape::Capsule {
                        half_height,
                        radius,
                    } => bits(&[2.0, half_height, radius]),
                    Shape::Hull(h) => bits(&[3.0, h.index() as f32]),
                    Shape::Mesh(m) => bits(&[4.0, m.index() as f32]),
                    Shape::HeightField(h) => bits(&[5.0, h.index() as f32]),
                    Shape::Compound(c) => bits(&[6.0, c.index() as f32]),
                }),
                Query::UserData => w.user_data(id).map(Value::U64),
                Query::Mass => w.mass(id).map(|m| bits(&[m])),
                Query::WorldAabb => w
                    .world_aabb(id)
                    .map(|(lo, hi)| bits(&[lo.x, lo.y, lo.z, hi.x, hi.y, hi.z])),
                Query::IsAdded => w.is_added(id).map(Value::Bool),
                Query::IsActive => w.is_active(id).map(Value::Bool),
                Query::IsSleeping => w.is_sleeping(id).map(Value::Bool),
            }
        }
        Op::ReadAll => {
            // Every whole-world reader, folded into one value.
            let mut h = w.state_hash();
            let mut eat = |x: u64| h = h.rotate_left(5) ^ x.wrapping_mul(0x100_0000_01b3);
            for c in w.contacts() {
                eat(c.body_a.index() as u64);
                eat(c.body_b.index() as u64);
                eat(c.points().len() as u64);
                eat(c.total_normal_impulse().to_bits() as u64);
                for p in c.points() {
                    eat(p.normal_impulse.to_bits() as u64);
                }
            }
            for e in w.contact_events() {
                eat(e.kind as u64);
                eat(e.body_a.index() as u64);
                eat(e.body_b.index() as u64);
                eat(e.approach_speed.to_bits() as u64);
                eat(e.normal_impulse.to_bits() as u64);
            }
            for id in w.body_ids() {
                eat(id.index() as u64);
            }
            for id in w.out_of_bounds_bodies() {
                eat(id.index() as u64);
            }
            eat(w.faulted_bodies().len() as u64);
            eat(w.num_bodies() as u64);
            eat(w.num_active_bodies() as u64);
            eat(w.last_stats().manifolds as u64);
            eat(w.settings().velocity_iterations as u64);
            eat(w.capacities().max_bodies as u64);
            eat(w.check_sleep_invariants().is_ok() as u64);
            Ok(Value::U64(h))
        }
        Op::SetSettings {
            mut settings,
            keep_broad_phase,
        } => {
            if keep_broad_phase {
                settings.broad_phase = w.settings().broad_phase;
            }
            unit(w.set_settings(settings))
        }
        Op::AddRegion(lo, hi) => w
            .add_broad_phase_region(lo, hi)
            .map(|r| Value::U64(r as u64)),
        Op::RemoveRegion(r) => unit(w.remove_broad_phase_region(r)),
        Op::UpdateBroadPhase => Ok(Value::U64(w.update_broad_phase() as u64)),
        Op::SceneQuery {
            origin,
            direction,
            max,
            half,
            mask,
            pool,
        } => {
            let pool = &pools.0[(pool + side.pool_shift) % pools.0.len()];
            let f = QueryFilter::default().with_layer_mask(mask);
            let ray = Ray::new(origin, direction, max)?;
            let closest = w.cast_ray(&ray, &f);
            let mut all = Vec::new();
            w.cast_ray_all(&ray, &f, &mut all);
            assert_eq!(
                closest,
                all.first().copied(),
                "the closest hit is the first of all hits"
            );
            assert!(
                all.windows(2).all(|p| p[0].distance <= p[1].distance),
                "hits nearest first"
            );
            let mut batch = [None; 3];
            w.cast_rays(&[ray; 3], &mut batch, &f, pool)?;
            assert!(
                batch.iter().all(|h| *h == closest),
                "a batch gives single rays' answers"
            );
            let mut h = 0xcbf2_9ce4_8422_2325u64;
            let mut mix = |x: u64| h = (h ^ x).wrapping_mul(0x100_0000_01b3);
            for hit in &all {
                mix(hit.body.index() as u64);
                mix(hit.distance.to_bits() as u64);
            }
            let mut ids = Vec::new();
            w.overlap_aabb(origin - half, origin + half, &f, &mut ids)?;
            ids.iter().for_each(|id| mix(id.index() as u64));
            w.overlap_point(origin, &f, &mut ids)?;
            ids.iter().for_each(|id| mix(id.index() as u64 | 1 << 40));
            Ok(Value::U64(h))
        }
        Op::Update { dt, steps, pool } => {
            let pool = &pools.0[(pool + side.pool_shift) % pools.0.len()];
            w.update(dt, steps, pool).map(|s| {
                Value::Stats(Box::new(StepStats {
                    times: PhaseTimes::default(),
                    total: Default::default(),
                    threads: 0,
                    pinning: Pinning::default(),
                    ..s
                }))
            })
        }
        Op::RecordTrace => {
            w.record_trace();
            Ok(Value::Unit)
        }
        Op::TakeTrace => Ok(match w.take_trace() {
            // the trace's readers too (their output depends on timing)
            Some(t) => {
                let ws = t.work_span();
                let json = t.to_chrome_json();
                let median = StepTrace::median_work_span(core::slice::from_ref(&t));
                let replay = t.replay(4, &ReplayCosts::default());
                Value::Bool(
                    !json.is_empty()
                        && ws.parallelism().is_finite()
                        && median.is_some()
                        && replay.workers == 4
                        && replay.sections.len() <= t.sections.len(),
                )
            }
            None => Value::Bool(false),
        }),
        Op::InjectPanic { job, nth } => {
            w.inject_job_panic(job, nth);
            Ok(Value::Unit)
        }
    }
}

/// Everything a refused call or a getter must leave as it was.
#[derive(Debug, PartialEq)]
struct Fingerprint {
    hash: u64,
    bodies: usize,
    joints: usize,
    active: usize,
    settings: PhysicsSettings,
    states: u64,
}

fn fingerprint(side: &Side) -> Fingerprint {
    let w = &side.w;
    let mut states = 0xcbf2_9ce4_8422_2325u64;
    for &id in &side.issued {
        let code = |r: Result<bool>| match r {
            Ok(b) => b as u64,
            Err(_) => 2,
        };
        let s = code(w.is_added(id)) | code(w.is_active(id)) << 2 | code(w.is_sleeping(id)) << 4;
        states = (states ^ s).wrapping_mul(0x100_0000_01b3);
    }
    Fingerprint {
        hash: w.state_hash(),
        bodies: w.num_bodies(),
        joints: w.num_joints(),
        active: w.num_active_bodies(),
        settings: *w.settings(),
        states,
    }
}

fn fail(kind: &'static str, detail: String, op: usize) -> Failure {
    Failure {
        kind,
        detail,
        op: Some(op),
    }
}

/// The error a call must return given what the model knows, if it knows.
fn expected_error(
    op: &Op,
    model: &Model,
    slot: Option<usize>,
    joint: Option<usize>,
    issued: &[BodyId],
) -> Option<Option<PhysicsError>> {
    if let Op::CreateJoint { a, b, .. } = *op {
        // both sides are checked before anything else
        let dead = [a, b]
            .into_iter()
            .flatten()
            .any(|t| !resolve(t, issued).1.is_some_and(|i| model.live[i]));
        return dead.then_some(Some(PhysicsError::InvalidBodyId));
    }
    if matches!(
        op,
        Op::RemoveJoint(_) | Op::SetJointMotor(..) | Op::SetJointLimits(..) | Op::GetJoint(_)
    ) {
        let j = joint?;
        return (!model.joints[j].0).then_some(Some(PhysicsError::InvalidJointId));
    }
    target_of(op)?;
    let live = slot.is_some_and(|i| model.live[i]);
    if !live {
        return Some(Some(PhysicsError::InvalidBodyId));
    }
    let i = slot.expect("live");
    let added = model.added[i];
    match op {
        Op::Add(_) => Some(added.then_some(PhysicsError::BodyAlreadyAdded)),
        Op::Remove(_) => Some((!added).then_some(PhysicsError::BodyNotAdded)),
        Op::Destroy(_) => Some((model.jointed[i] > 0).then_some(PhysicsError::BodyHasJoints)),
        _ => None,
    }
}

/// The checks every world must pass after every call.
fn check_world(
    side: &Side,
    model: &Model,
    capacities: &Capacities,
    k: usize,
) -> StdResult<(), Failure> {
    let w = &side.w;
    if w.num_joints() != model.live_joints() {
        return Err(fail(
            "joint count",
            format!(
                "num_joints {} but the model has {}",
                w.num_joints(),
                model.live_joints()
            ),
            k,
        ));
    }
    for (j, (live, sides)) in side.joints.iter().zip(&model.joints) {
        if !*live {
            if w.joint(*j) != Err(PhysicsError::InvalidJointId) {
                return Err(fail("removed joint answers", format!("{j:?}"), k));
            }
            continue;
        }
        if let Some(i) = sides.iter().flatten().find(|&&i| !model.live[i]) {
            return Err(fail(
                "a live joint's body is gone",
                format!("{j:?}: body {:?}", side.issued[*i]),
                k,
            ));
        }
    }
    if w.num_bodies() != model.live_count() {
        return Err(fail(
            "body count",
            format!(
                "num_bodies {} but the model has {}",
                w.num_bodies(),
                model.live_count()
            ),
            k,
        ));
    }
    for (i, &id) in side.issued.iter().enumerate() {
        if model.live[i] {
            if w.is_added(id) != Ok(model.added[i]) {
                return Err(fail(
                    "added state",
                    format!(
                        "{id:?}: is_added {:?}, model {}",
                        w.is_added(id),
                        model.added[i]
                    ),
                    k,
                ));
            }
        } else if w.position(id) != Err(PhysicsError::InvalidBodyId) {
            return Err(fail("dead id answers", format!("{id:?}"), k));
        }
    }
    let ids = w.body_ids();
    let added = model
        .added
        .iter()
        .zip(&model.live)
        .filter(|(a, l)| **a && **l)
        .count();
    if ids.len() != added {
        return Err(fail(
            "body count",
            format!("{} added ids, model {added}", ids.len()),
            k,
        ));
    }
    for &id in &ids {
        let finite = w.position(id).is_ok_and(|p| p.is_finite())
            && w.rotation(id).is_ok_and(|q| q.is_finite())
            && w.linear_velocity(id).is_ok_and(|v| v.is_finite())
            && w.angular_velocity(id).is_ok_and(|v| v.is_finite());
        if !finite {
            return Err(fail(
                "non-finite body",
                format!(
                    "{id:?}: {:?} {:?} {:?} {:?}",
                    w.position(id),
                    w.rotation(id),
                    w.linear_velocity(id),
                    w.angular_velocity(id)
                ),
                k,
            ));
        }
    }
    if let Err(e) = w.check_sleep_invariants() {
        return Err(fail("sleep invariant", e, k));
    }
    for c in w.contacts() {
        for b in [c.body_a, c.body_b] {
            if w.is_added(b) != Ok(true) {
                return Err(fail(
                    "contact names a body not in the world",
                    format!("{b:?}"),
                    k,
                ));
            }
        }
        let finite = c.normal.is_finite()
            && c.points()
                .iter()
                .all(|p| p.position.is_finite() && p.separation.is_finite())
            && c.points().iter().all(|p| p.normal_impulse.is_finite());
        if !finite {
            return Err(fail("non-finite contact", format!("{c:?}"), k));
        }
    }
    if !w.faulted_bodies().is_empty() {
        return Err(fail(
            "bodies faulted",
            format!("{:?}", w.faulted_bodies()),
            k,
        ));
    }
    let _ = capacities;
    Ok(())
}

/// The checks on what an update reported.
fn check_stats(
    side: &Side,
    s: &StepStats,
    capacities: &Capacities,
    k: usize,
) -> StdResult<(), Failure> {
    let w = &side.w;
    let bad = |what: &str| Err(fail("stats", format!("{what}: {s:?}"), k));
    if s.bodies_faulted > 0 {
        return Err(fail(
            "non-finite body from accepted input",
            format!("{} faulted: {:?}", s.bodies_faulted, w.faulted_bodies()),
            k,
        ));
    }
    let warns = s.warnings;
    if warns.contains(UpdateWarnings::BODY_PAIRS_FULL) != (s.body_pairs_dropped > 0) {
        return bad("pair warning disagrees with the drop count");
    }
    if warns.contains(UpdateWarnings::CONTACT_CONSTRAINTS_FULL) != (s.manifolds_dropped > 0) {
        return bad("manifold warning disagrees with the drop count");
    }
    if warns.contains(UpdateWarnings::BODIES_FAULTED) {
        return bad("faulted warning without faults");
    }
    if s.active_bodies as usize != w.num_active_bodies() {
        return bad("active body count");
    }
    if s.manifolds as usize > capacities.max_contact_constraints
        || s.body_pairs as usize > capacities.max_body_pairs
    {
        return bad("more than the capacities");
    }
    if s.contact_points > 4 * s.manifolds || s.sensor_manifolds > s.manifolds {
        return bad("point or sensor counts");
    }
    if w.contacts().count() != s.manifolds as usize {
        return bad("contact report differs from the step's manifolds");
    }
    Ok(())
}

/// Runs a case; `Ok` if every check held. `tally` counts the calls.
pub fn run_case(
    case: &Case,
    pools: &Pools,
    tally: &mut Tally,
    progress: &dyn Fn(usize),
) -> StdResult<(), Failure> {
    tally.worlds += 1;
    tally.calls += 1;
    let new = || catch_unwind(|| PhysicsSystem::new(case.capacities, case.settings));
    let world = match new() {
        Err(_) => {
            return Err(Failure {
                kind: "panic",
                detail: format!("PhysicsSystem::new: {}", take_panic_message()),
                op: None,
            })
        }
        Ok(Err(_)) => {
            tally.worlds_refused += 1;
            tally.refused += 1;
            return Ok(());
        }
        Ok(Ok(w)) => w,
    };
    let mut main = Side {
        w: world,
        issued: Vec::new(),
        joints: Vec::new(),
        pool_shift: 0,
    };
    let mut shadow = if case.shadow {
        tally.shadowed += 1;
        let w = new()
            .ok()
            .and_then(|r| r.ok())
            .expect("the same world again");
        Some(Side {
            w,
            issued: Vec::new(),
            joints: Vec::new(),
            pool_shift: 1,
        })
    } else {
        None
    };
    let mut model = Model::default();
    for (k, op) in case.ops.iter().enumerate() {
        progress(k);
        tally.calls += 1;
        let slot = target_of(op).and_then(|t| resolve(t, &main.issued).1);
        let joint = joint_of(op, &main.joints).map(|(_, j)| j);
        let live_before = model.live_count();
        let before = fingerprint(&main);
        let t0 = std::time::Instant::now();
        let got = match catch_unwind(AssertUnwindSafe(|| apply(&mut main, op, pools))) {
            Ok(r) => r,
            Err(_) => return Err(fail("panic", take_panic_message(), k)),
        };
        let took = t0.elapsed().as_secs_f64();
        if took > tally.slowest {
            tally.slowest = took;
            tally.slowest_call = Some((tally.worlds, k));
        }
        let reader = matches!(
            op,
            Op::Get(..) | Op::ReadAll | Op::TakeTrace | Op::GetJoint(_)
        );
        if got.is_err() || reader {
            let after = fingerprint(&main);
            if after != before {
                let what = if reader { "a getter" } else { "a refused call" };
                return Err(fail(
                    "refused call changed the world",
                    format!("{what} ({got:?}) changed {before:?} into {after:?}"),
                    k,
                ));
            }
        }
        if got.is_err() {
            tally.refused += 1;
        }
        if let Some(expected) = expected_error(op, &model, slot, joint, &main.issued) {
            if got.as_ref().err().copied() != expected {
                return Err(fail(
                    "wrong error",
                    format!("{op:?}: got {got:?}, expected {expected:?}"),
                    k,
                ));
            }
        }
        match (op, &got) {
            (Op::Create { add, .. }, Ok(_)) => {
                if live_before >= case.capacities.max_bodies {
                    return Err(fail(
                        "capacity",
                        format!(
                            "created body {live_before} of {}",
                            case.capacities.max_bodies
                        ),
                        k,
                    ));
                }
                model.live.push(true);
                model.added.push(*add);
                model.jointed.push(0);
            }
            (Op::CreateJoint { a, b, .. }, Ok(_)) => {
                let sides = [*a, *b].map(|t| t.and_then(|t| resolve(t, &main.issued).1));
                for i in sides.iter().flatten() {
                    model.jointed[*i] += 1;
                }
                model.joints.push((true, sides));
            }
            (Op::RemoveJoint(_), Ok(Value::Unit)) if joint.is_some() => {
                let j = joint.expect("checked");
                model.joints[j].0 = false;
                for i in model.joints[j].1.into_iter().flatten() {
                    model.jointed[i] -= 1;
                }
            }
            (Op::Create { .. }, Err(PhysicsError::BodyCapacityReached))
                if live_before < case.capacities.max_bodies =>
            {
                return Err(fail(
                    "capacity",
                    format!("refused at {live_before} of {}", case.capacities.max_bodies),
                    k,
                ));
            }
            (Op::Add(_), Ok(_)) => model.added[slot.expect("live")] = true,
            (Op::Remove(_), Ok(_)) => model.added[slot.expect("live")] = false,
            (Op::Destroy(_), Ok(_)) => {
                let i = slot.expect("live");
                model.live[i] = false;
                model.added[i] = false;
            }
            (Op::Update { dt, .. }, r) => {
                tally.updates += 1;
                if let Ok(Value::Stats(s)) = r {
                    if *dt > 0.0 {
                        tally.simulated += 1;
                    }
                    if s.body_pairs_dropped + s.manifolds_dropped > 0 {
                        tally.updates_with_drops += 1;
                    }
                    check_stats(&main, s, &case.capacities, k)?;
                }
            }
            _ => {}
        }
        if !reader {
            check_world(&main, &model, &case.capacities, k)?;
        }
        if let Some(sh) = shadow.as_mut() {
            let theirs = match catch_unwind(AssertUnwindSafe(|| apply(sh, op, pools))) {
                Ok(r) => r,
                Err(_) => {
                    return Err(fail(
                        "panic",
                        format!("shadow: {}", take_panic_message()),
                        k,
                    ))
                }
            };
            if theirs != got || sh.w.state_hash() != main.w.state_hash() {
                return Err(fail(
                    "shadow diverged",
                    format!(
                        "{op:?}: main {got:?} hash {:#x}, shadow {theirs:?} hash {:#x}",
                        main.w.state_hash(),
                        sh.w.state_hash()
                    ),
                    k,
                ));
            }
        }
    }
    Ok(())
}
