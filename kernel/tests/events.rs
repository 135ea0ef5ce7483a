//! Contact and sensor events: one added event when a dropped box lands
//! (at the closed-form impact speed), none while it rests and sleeps, one
//! removed when it is lifted off; one enter and one exit for a ball
//! falling through a sensor; a removed body's contacts removed with that
//! reason; bodies without the flag report nothing; and the same events,
//! bit for bit, on 1, 2, 4, 8 and 16 workers.

use archipelago::{
    build_pinned_pool, scenes, BodyCreationSettings, BodyId, ContactEvent, ContactEventKind,
    MotionType, PhysicsSettings, PhysicsSystem, RemovalReason, Shape, Vec3,
};

const DT: f32 = 1.0 / 60.0;

fn world() -> (PhysicsSystem, BodyId) {
    let mut w = PhysicsSystem::new(Default::default(), PhysicsSettings::default()).unwrap();
    let floor = w.create_and_add_body(&scenes::floor()).unwrap();
    (w, floor)
}

fn kinds(w: &PhysicsSystem) -> Vec<ContactEventKind> {
    w.contact_events().iter().map(|e| e.kind).collect()
}

#[test]
fn a_dropped_box_is_added_once_and_removed_when_lifted() {
    let pool = build_pinned_pool(Some(1)).unwrap().pool;
    let (mut w, floor) = world();
    // bottom face 2 m above the floor's top (y = 0)
    let h = 2.0;
    let cube = w
        .create_and_add_body(
            &scenes::cube(0.5, Vec3::new(0.0, 0.5 + h, 0.0)).with_contact_events(true),
        )
        .unwrap();
    let mut added = Vec::new();
    for step in 0..240 {
        w.update(DT, 1, &pool).unwrap();
        for e in w.contact_events() {
            assert_eq!(e.kind, ContactEventKind::Added, "step {step}: {e:?}");
            added.push((step, *e, w.position(cube).unwrap().y));
        }
    }
    assert_eq!(added.len(), 1, "{added:?}");
    let (_, e, y) = added[0];
    assert_eq!((e.body_a, e.body_b), (floor, cube));
    assert_eq!(e.normal, Vec3::Y);
    // found within the speculative distance (0.02 m) of touching, and the
    // box ends that step on the floor
    assert!(e.penetration >= -0.021 && e.penetration < 0.2, "{e:?}");
    assert!((y - 0.5).abs() < 0.05, "{y}");
    // v = sqrt(2 g h) less up to ~3% of linear damping (0.05/s for 0.64 s)
    // and one step of speculative distance
    let v = (2.0 * 9.81 * h).sqrt();
    assert!(
        e.approach_speed > 0.93 * v && e.approach_speed < 1.02 * v,
        "{} vs {v}",
        e.approach_speed
    );
    // it stopped a 1000 kg box falling at ~6 m/s: the impulse is of m·v
    assert!(e.normal_impulse > 0.5 * 1000.0 * v, "{e:?}");
    assert!(
        w.is_sleeping(cube).unwrap(),
        "rests and sleeps without events"
    );
    // lifted off: one removal, the next update
    w.set_position(cube, Vec3::new(0.0, 5.0, 0.0)).unwrap();
    w.activate_body(cube).unwrap();
    w.update(DT, 1, &pool).unwrap();
    let e = w.contact_events();
    assert_eq!(kinds(&w), [ContactEventKind::Removed], "{e:?}");
    assert_eq!(e[0].reason, Some(RemovalReason::Separated));
    assert_eq!((e[0].body_a, e[0].body_b), (floor, cube));
}

#[test]
fn a_ball_through_a_sensor_enters_and_exits_once() {
    let pool = build_pinned_pool(Some(1)).unwrap().pool;
    let mut w = PhysicsSystem::new(Default::default(), PhysicsSettings::default()).unwrap();
    let gate = BodyCreationSettings::new(
        Shape::cuboid(Vec3::new(2.0, 1.0, 2.0)).unwrap(),
        Vec3::ZERO,
        MotionType::Static,
    )
    .with_sensor(true);
    let gate = w.create_and_add_body(&gate).unwrap();
    let ball = BodyCreationSettings::new(
        Shape::sphere(0.3).unwrap(),
        Vec3::new(0.0, 5.0, 0.0),
        MotionType::Dynamic,
    )
    .with_contact_events(true);
    let ball = w.create_and_add_body(&ball).unwrap();
    let mut seen = Vec::new();
    for step in 0..120 {
        w.update(DT, 1, &pool).unwrap();
        seen.extend(
            w.contact_events()
                .iter()
                .map(|e| (step, e.kind, e.body_a, e.body_b)),
        );
    }
    let kinds: Vec<_> = seen.iter().map(|s| s.1).collect();
    assert_eq!(
        kinds,
        [
            ContactEventKind::SensorEntered,
            ContactEventKind::SensorExited
        ],
        "{seen:?}"
    );
    assert!(seen.iter().all(|s| (s.2, s.3) == (gate, ball)));
    // it took the ball ~0.3 s to cross 2.6 m at ~8-10 m/s: several steps
    assert!(seen[1].0 - seen[0].0 >= 10, "{seen:?}");
    assert!(
        w.position(ball).unwrap().y < -1.5,
        "the sensor did not stop it"
    );
}

#[test]
fn removing_a_body_removes_its_contacts() {
    let pool = build_pinned_pool(Some(1)).unwrap().pool;
    for destroy in [false, true] {
        let (mut w, floor) = world();
        let quiet = w
            .create_and_add_body(&scenes::cube(0.5, Vec3::new(3.0, 0.5, 0.0)))
            .unwrap();
        let loud = w
            .create_and_add_body(
                &scenes::cube(0.5, Vec3::new(0.0, 0.5, 0.0)).with_contact_events(true),
            )
            .unwrap();
        w.update(DT, 1, &pool).unwrap();
        // only the reporting body's pair
        assert_eq!(kinds(&w), [ContactEventKind::Added]);
        assert_eq!(w.contact_events()[0].body_b, loud);
        w.update(DT, 1, &pool).unwrap();
        assert!(w.contact_events().is_empty());
        if destroy {
            w.destroy_body(loud).unwrap();
        } else {
            w.remove_body(loud).unwrap();
        }
        w.update(DT, 1, &pool).unwrap();
        let e: Vec<ContactEvent> = w.contact_events().to_vec();
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(
            (e[0].kind, e[0].reason),
            (ContactEventKind::Removed, Some(RemovalReason::BodyRemoved))
        );
        assert_eq!((e[0].body_a, e[0].body_b), (floor, loud));
        w.update(DT, 1, &pool).unwrap();
        assert!(w.contact_events().is_empty(), "reported once");
        assert!(w.is_added(quiet).unwrap());
    }
}

/// Every event of `steps` updates of the rain with events on for every
/// body, as bits.
fn rain_events(threads: usize, steps: usize) -> Vec<[u64; 6]> {
    let pool = build_pinned_pool(Some(threads)).unwrap().pool;
    let mut scene = scenes::rain();
    for b in &mut scene.bodies {
        b.contact_events = true;
    }
    let (mut w, _) = scene.build(PhysicsSettings::default()).unwrap();
    let mut out = Vec::new();
    for step in 0..steps {
        w.update(DT, 1, &pool).unwrap();
        assert_eq!(w.last_stats().contact_events_dropped, 0);
        for e in w.contact_events() {
            out.push([
                step as u64,
                e.kind as u64,
                ((e.body_a.index() as u64) << 32) | e.body_b.index() as u64,
                e.approach_speed.to_bits() as u64,
                e.normal_impulse.to_bits() as u64,
                (e.point.x.to_bits() as u64) << 32 | e.penetration.to_bits() as u64,
            ]);
        }
    }
    out
}

#[test]
fn events_are_the_same_on_any_number_of_workers() {
    let one = rain_events(1, 150);
    let added = one
        .iter()
        .filter(|e| e[1] == ContactEventKind::Added as u64)
        .count();
    let removed = one
        .iter()
        .filter(|e| e[1] == ContactEventKind::Removed as u64)
        .count();
    println!("rain, 150 steps: {added} added, {removed} removed");
    assert!(
        added > 4096 && removed > 100,
        "{added} added, {removed} removed"
    );
    for threads in [2, 4, 8, 16] {
        assert!(rain_events(threads, 150) == one, "{threads} workers");
    }
}
