//! Snapshots: `save_state` / `restore_state`.
//!
//! Rollback: on every standard scene, step 100, save, step 50 (hash H and
//! a second snapshot S); restore, step 50: the same H and byte for byte
//! the same S (everything a snapshot holds, not only the poses the hash
//! covers), in the same world and in a fresh one. Also with bodies and
//! joints created, removed and destroyed before the save and again between
//! the save and the restore (the restore must undo those). Corrupted
//! snapshots (1,000 random bit flips and truncations, another version,
//! other capacities or broad phase) are refused with a typed error and
//! leave the world's bytes as they were. (Forged payloads whose checksum
//! holds are the unit tests' in `src/snapshot/mod.rs`.)

use archipelago::{
    scenes, BodyCreationSettings, BroadPhaseKind, JointSettings, MotionType, PhysicsError,
    PhysicsSettings, PhysicsSystem, Shape, ThreadPool, Vec3,
};

fn pool() -> &'static ThreadPool {
    static POOL: std::sync::OnceLock<ThreadPool> = std::sync::OnceLock::new();
    // rayon's own pool with room for the debug build's deep frames
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .stack_size(32 << 20)
            .build()
            .unwrap()
    })
}

fn save(world: &PhysicsSystem) -> Vec<u8> {
    let mut out = Vec::new();
    let n = world.save_state(&mut out).unwrap();
    assert_eq!(n, out.len());
    out
}

/// Asserts two snapshots are the same bytes (reporting where they part,
/// not the megabytes).
fn same(a: &[u8], b: &[u8], what: &str) {
    // past the 32-byte header (whose checksum differs whenever the rest does)
    let first = a
        .iter()
        .zip(b)
        .skip(32)
        .position(|(x, y)| x != y)
        .map(|k| k + 32);
    assert!(
        a.len() == b.len() && first.is_none() && a[..32] == b[..32],
        "{what}: snapshots differ: {} vs {} bytes, first difference at {first:?}",
        a.len(),
        b.len()
    );
}

/// Steps `world` through scene steps `from..from + n`.
fn run(
    world: &mut PhysicsSystem,
    scene: &scenes::Scene,
    ids: &[archipelago::BodyId],
    from: u32,
    n: u32,
) {
    for s in from..from + n {
        scene.before_update(world, ids, s).unwrap();
        world.update(scenes::DT, 1, pool()).unwrap();
    }
}

#[test]
fn rollback_continues_bit_identically_on_every_scene() {
    for name in scenes::NAMES {
        let scene = scenes::by_name(name).unwrap();
        let (mut world, ids) = scene.build(PhysicsSettings::default()).unwrap();
        run(&mut world, &scene, &ids, 0, 100);
        let snapshot = save(&world);
        run(&mut world, &scene, &ids, 100, 50);
        let (hash, after) = (world.state_hash(), save(&world));

        world.restore_state(&snapshot).unwrap();
        same(
            &save(&world),
            &snapshot,
            &format!("{name}: restore then save"),
        );
        run(&mut world, &scene, &ids, 100, 50);
        assert_eq!(world.state_hash(), hash, "{name}: same world");
        same(&save(&world), &after, &format!("{name}: same world"));

        // a fresh world of the same scene, restored before any step
        let (mut other, other_ids) = scene.build(PhysicsSettings::default()).unwrap();
        other.restore_state(&snapshot).unwrap();
        run(&mut other, &scene, &other_ids, 100, 50);
        assert_eq!(other.state_hash(), hash, "{name}: fresh world");
        same(&save(&other), &after, &format!("{name}: fresh world"));
    }
}

fn crate_box(world: &mut PhysicsSystem, x: f32, y: f32) -> archipelago::BodyId {
    let s = BodyCreationSettings::new(
        Shape::cuboid(Vec3::new(0.4, 0.3, 0.5)).unwrap(),
        Vec3::new(x, y, 0.5),
        MotionType::Dynamic,
    )
    .with_contact_events(true);
    world.create_and_add_body(&s).unwrap()
}

#[test]
fn rollback_undoes_bodies_and_joints_changed_after_the_save() {
    let scene = scenes::pyramid();
    let (mut world, ids) = scene.build(PhysicsSettings::default()).unwrap();
    run(&mut world, &scene, &ids, 0, 30);
    // before the save: removals, a destroy (its slot is reused), new bodies
    // with events, a joint, a removed joint
    world.remove_body(ids[40]).unwrap();
    world.destroy_body(ids[41]).unwrap();
    let a = crate_box(&mut world, 2.0, 30.0);
    let b = crate_box(&mut world, 3.5, 30.0);
    let joint = world
        .create_joint(&JointSettings::point(
            Some(a),
            Some(b),
            Vec3::new(0.75, 0.0, 0.0),
            Vec3::new(-0.75, 0.0, 0.0),
        ))
        .unwrap();
    let gone = world
        .create_joint(&JointSettings::point(
            Some(ids[60]),
            None,
            Vec3::ZERO,
            Vec3::new(0.0, 9.0, 0.0),
        ))
        .unwrap();
    world.remove_joint(gone).unwrap();
    run(&mut world, &scene, &ids, 30, 70);
    world.remove_body(ids[80]).unwrap(); // a removal waiting for the next update
    let snapshot = save(&world);
    run(&mut world, &scene, &ids, 100, 50);
    let (hash, after) = (world.state_hash(), save(&world));

    // after the save: more of everything, then roll back
    let c = crate_box(&mut world, -3.0, 25.0);
    world.destroy_body(ids[90]).unwrap();
    world.remove_joint(joint).unwrap();
    world.add_body(ids[40]).unwrap();
    run(&mut world, &scene, &ids, 150, 5);
    world.restore_state(&snapshot).unwrap();
    assert!(world.is_added(a).unwrap() && world.is_added(ids[90]).unwrap());
    assert!(!world.is_added(ids[40]).unwrap());
    assert_eq!(world.joint(joint).unwrap().body_b, Some(b));
    assert_eq!(world.position(c), Err(PhysicsError::InvalidBodyId));
    assert_eq!(world.position(ids[41]), Err(PhysicsError::InvalidBodyId));
    run(&mut world, &scene, &ids, 100, 50);
    assert_eq!(world.state_hash(), hash);
    same(&save(&world), &after, "rollback");
}

/// The world refuses `bytes` with `expected` (any refusal when `None`),
/// and its snapshot is the same bytes afterwards.
fn refused(world: &mut PhysicsSystem, bytes: &[u8], expected: Option<PhysicsError>, before: &[u8]) {
    let e = world
        .restore_state(bytes)
        .expect_err("a bad snapshot was restored");
    if let Some(x) = expected {
        assert_eq!(e, x);
    }
    assert!(matches!(
        e,
        PhysicsError::InvalidSnapshot
            | PhysicsError::SnapshotVersion
            | PhysicsError::SnapshotMismatch
    ));
    same(&save(world), before, "a refused restore");
}

/// A deterministic generator (splitmix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        scenes::splitmix64(self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn corrupted_snapshots_are_refused_and_change_nothing() {
    let scene = scenes::chains();
    let (mut world, ids) = scene.build(PhysicsSettings::default()).unwrap();
    run(&mut world, &scene, &ids, 0, 40);
    let good = save(&world);
    // the world to restore into is elsewhere in time
    run(&mut world, &scene, &ids, 40, 3);
    let before = save(&world);
    assert_ne!(good, before);
    let mut rng = Rng(17);
    for k in 0..1000 {
        let mut bad = good.clone();
        if k % 4 == 3 {
            bad.truncate(rng.below(good.len()));
        } else {
            for _ in 0..1 + rng.below(8) {
                let bit = rng.below(good.len() * 8);
                bad[bit / 8] ^= 1 << (bit % 8);
            }
        }
        refused(&mut world, &bad, None, &before);
    }
    refused(
        &mut world,
        &[],
        Some(PhysicsError::InvalidSnapshot),
        &before,
    );
    let mut longer = good.clone();
    longer.push(0);
    refused(
        &mut world,
        &longer,
        Some(PhysicsError::InvalidSnapshot),
        &before,
    );
    let mut version = good.clone();
    version[8..12].copy_from_slice(&(archipelago::SNAPSHOT_VERSION + 1).to_le_bytes());
    refused(
        &mut world,
        &version,
        Some(PhysicsError::SnapshotVersion),
        &before,
    );
    let mut order = good.clone();
    order[12..16].reverse();
    refused(
        &mut world,
        &order,
        Some(PhysicsError::SnapshotMismatch),
        &before,
    );

    // other capacities, another broad phase
    let mut caps = scene.capacities;
    caps.max_body_pairs += 1;
    let mut other = PhysicsSystem::new(caps, PhysicsSettings::default()).unwrap();
    let empty = save(&other);
    refused(
        &mut other,
        &good,
        Some(PhysicsError::SnapshotMismatch),
        &empty,
    );
    let brute = PhysicsSettings {
        broad_phase: BroadPhaseKind::BruteForce,
        ..PhysicsSettings::default()
    };
    let mut other = PhysicsSystem::new(scene.capacities, brute).unwrap();
    let empty = save(&other);
    refused(
        &mut other,
        &good,
        Some(PhysicsError::SnapshotMismatch),
        &empty,
    );

    // the good one still restores, and continues as the original did
    world.restore_state(&good).unwrap();
    same(&save(&world), &good, "the good one");
}

/// The broad phases that place their own grid (or choose their own
/// structure) are rebuilt on restore like SAP: the same continuation.
#[test]
fn rollback_with_the_fitted_and_automatic_broad_phases() {
    for kind in [
        BroadPhaseKind::MbpFitted { subdivisions: 8 },
        BroadPhaseKind::Auto,
    ] {
        let scene = scenes::rain();
        let settings = PhysicsSettings {
            broad_phase: kind,
            ..PhysicsSettings::default()
        };
        let (mut world, ids) = scene.build(settings).unwrap();
        run(&mut world, &scene, &ids, 0, 60);
        let snapshot = save(&world);
        run(&mut world, &scene, &ids, 60, 30);
        let (hash, after) = (world.state_hash(), save(&world));
        world.restore_state(&snapshot).unwrap();
        run(&mut world, &scene, &ids, 60, 30);
        assert_eq!(world.state_hash(), hash, "{kind:?}");
        same(&save(&world), &after, &format!("{kind:?}"));
    }
}

/// The terrains restored into an empty world of the same capacities: the
/// snapshot carries the height field, the mesh and the hull, the restore
/// builds them anew (equal to the saving world's), and the run goes on
/// bit for bit.
#[test]
fn surfaces_are_rebuilt_from_a_snapshot() {
    for scene in [scenes::terrain(), scenes::terrain_mesh()] {
        let (mut world, ids) = scene.build(PhysicsSettings::default()).unwrap();
        run(&mut world, &scene, &ids, 0, 40);
        let snapshot = save(&world);
        run(&mut world, &scene, &ids, 40, 30);
        let (hash, after) = (world.state_hash(), save(&world));
        let mut empty = PhysicsSystem::new(scene.capacities, PhysicsSettings::default()).unwrap();
        assert_eq!(
            empty.shapes().num_heightfields() + empty.shapes().num_meshes(),
            0
        );
        empty.restore_state(&snapshot).unwrap();
        assert_eq!(
            empty.shapes().num_heightfields() + empty.shapes().num_meshes(),
            1,
            "{}",
            scene.name
        );
        assert_eq!(
            empty.shapes(),
            world.shapes(),
            "{}: rebuilt equal",
            scene.name
        );
        run(&mut empty, &scene, &ids, 40, 30);
        assert_eq!(empty.state_hash(), hash, "{}: rebuilt world", scene.name);
        same(
            &save(&empty),
            &after,
            &format!("{}: rebuilt world", scene.name),
        );
    }
}
