//! Regression tests made from what a random driver of the public API found
//! (issue 11): ordinary call sequences that panicked, accepted values that
//! made the world non-finite, sizes that aborted, and reports that named
//! dead bodies. Each test is the repro, with what must hold instead.

mod common;
use archipelago::*;
use common::*;

/// Every added body's pose and velocities are finite.
fn assert_all_finite(w: &PhysicsSystem) {
    for id in w.body_ids() {
        let p = w.position(id).unwrap();
        let q = w.rotation(id).unwrap();
        let v = w.linear_velocity(id).unwrap();
        let a = w.angular_velocity(id).unwrap();
        assert!(
            p.is_finite() && q.is_finite() && v.is_finite() && a.is_finite(),
            "body {id:?} is not finite: {p:?} {q:?} {v:?} {a:?}"
        );
    }
}

fn floor_and_box(broad_phase: BroadPhaseKind) -> (PhysicsSystem, BodyId) {
    let settings = PhysicsSettings {
        broad_phase,
        ..PhysicsSettings::default()
    };
    let mut w = world(settings);
    add_floor(&mut w);
    let b = w
        .create_and_add_body(&scenes::cube(0.5, Vec3::new(0.0, 0.5, 0.0)))
        .unwrap();
    (w, b)
}

fn all_broad_phases() -> [BroadPhaseKind; 3] {
    [
        BroadPhaseKind::Sap,
        BroadPhaseKind::Mbp(MbpSettings {
            world_min: Vec3::splat(-100.0),
            world_max: Vec3::splat(100.0),
            subdivisions: 4,
        }),
        BroadPhaseKind::BruteForce,
    ]
}

/// Remove, re-add and teleport before the next update: the SAP used to
/// queue the move for a slot whose removal was only queued, then sort
/// endpoints it had just removed (index 4294967295).
#[test]
fn remove_add_and_move_before_an_update() {
    for bp in all_broad_phases() {
        let (mut w, a) = floor_and_box(bp);
        step(&mut w, 1);
        w.remove_body(a).unwrap();
        w.add_body(a).unwrap();
        w.set_position(a, Vec3::new(0.0, 3.0, 0.0)).unwrap();
        step(&mut w, 1);
        // the box is where it was put, falling, and still collides
        let y = w.position(a).unwrap().y;
        assert!((2.9..3.0).contains(&y), "{bp:?}: y = {y}");
        step(&mut w, 120);
        let y = w.position(a).unwrap().y;
        assert!((y - 0.5).abs() < 0.03, "{bp:?}: came to rest at y = {y}");
    }
}

/// Destroy, create into the same slot and teleport the new body (a game
/// that respawns by destroy, create and move).
#[test]
fn destroy_create_and_move_before_an_update() {
    for bp in all_broad_phases() {
        let (mut w, a) = floor_and_box(bp);
        step(&mut w, 1);
        w.destroy_body(a).unwrap();
        let b = w
            .create_and_add_body(&scenes::cube(0.5, Vec3::new(5.0, 0.5, 0.0)))
            .unwrap();
        assert_eq!(b.index(), a.index(), "the slot is reused");
        w.set_position(b, Vec3::new(0.0, 2.0, 0.0)).unwrap();
        w.remove_body(b).unwrap();
        w.add_body(b).unwrap();
        w.set_position(b, Vec3::new(0.0, 1.0, 0.0)).unwrap();
        step(&mut w, 120);
        let y = w.position(b).unwrap().y;
        assert!((y - 0.5).abs() < 0.03, "{bp:?}: came to rest at y = {y}");
        assert_eq!(w.num_bodies(), 2);
    }
}

/// Velocities far above the world's maximum are clamped to it at the next
/// step, keeping their direction (they used to overflow the length and
/// come out as zero, or spread NaN through the solver and panic it).
#[test]
fn huge_velocities_are_clamped_not_lost() {
    let (mut w, a) = floor_and_box(BroadPhaseKind::Sap);
    step(&mut w, 30);
    let max = w.settings().max_linear_velocity;
    w.set_linear_velocity(a, Vec3::new(1e38, 0.0, 0.0)).unwrap();
    step(&mut w, 1);
    assert_all_finite(&w);
    let v = w.linear_velocity(a).unwrap();
    assert!(
        v.x > 0.99 * max && v.length() <= max * 1.0001,
        "clamped to the maximum in its direction: {v:?}"
    );
    // a lone body: nothing but the clamp acts on it
    let mut w = world(PhysicsSettings::default());
    let b = w
        .create_and_add_body(&scenes::cube(0.5, Vec3::ZERO).with_gravity_factor(0.0))
        .unwrap();
    w.set_linear_velocity(b, Vec3::new(3e38, -3e38, 0.0))
        .unwrap();
    w.set_angular_velocity(b, Vec3::new(0.0, 3e38, 0.0))
        .unwrap();
    step(&mut w, 1);
    assert_all_finite(&w);
    let v = w.linear_velocity(b).unwrap();
    let expected = Vec3::new(1.0, -1.0, 0.0).normalize() * max;
    assert!((v - expected).length() < 1e-3 * max, "{v:?}");
    let wmax = w.settings().max_angular_velocity;
    let av = w.angular_velocity(b).unwrap();
    assert!((av.y - wmax).abs() < 1e-4 * wmax && av.x == 0.0, "{av:?}");
}

/// A huge force on a very light body: the velocity change is capped (it
/// would be clamped to the maximum speed anyway), not infinite.
#[test]
fn huge_force_on_a_light_body_stays_finite() {
    let mut w = world(PhysicsSettings::default());
    add_floor(&mut w);
    let s = w
        .create_and_add_body(
            &BodyCreationSettings::new(
                Shape::sphere(0.01).unwrap(),
                Vec3::new(0.0, 1.0, 0.0),
                MotionType::Dynamic,
            )
            .with_density(1.0),
        )
        .unwrap();
    assert!(w.mass(s).unwrap() < 1e-5);
    w.add_force(s, Vec3::new(1e38, 0.0, 0.0)).unwrap();
    w.add_torque(s, Vec3::new(0.0, 0.0, 1e38)).unwrap();
    step(&mut w, 2);
    assert_all_finite(&w);
    let v = w.linear_velocity(s).unwrap();
    assert!(v.x > 0.0, "pushed along the force: {v:?}");
}

/// The pile with one body thrown at 1e38 m/s: used to panic in the solver
/// on one worker and deadlock on two.
#[test]
fn pile_with_a_body_thrown_at_1e38() {
    for threads in [1, 2, 4] {
        let pool = build_pinned_pool(Some(threads)).unwrap().pool;
        let (mut w, ids) = scenes::pile_split()
            .build(PhysicsSettings::default())
            .unwrap();
        for _ in 0..120 {
            w.update(DT, 1, &pool).unwrap();
        }
        w.set_linear_velocity(ids[70], Vec3::new(1e38, 0.0, 0.0))
            .unwrap();
        for _ in 0..30 {
            let stats = w.update(DT, 1, &pool).unwrap();
            assert_eq!(stats.bodies_faulted, 0);
        }
        assert_all_finite(&w);
        assert_eq!(w.num_bodies(), ids.len());
    }
}

/// Values outside the documented ranges are refused with their typed
/// error; refused calls change nothing.
#[test]
fn values_outside_the_documented_ranges_are_refused() {
    use PhysicsError::*;
    let (mut w, a) = floor_and_box(BroadPhaseKind::Sap);
    step(&mut w, 5);
    let hash = w.state_hash();
    assert_eq!(w.update(f32::MAX, 1, pool()).err(), Some(InvalidTimeStep));
    assert_eq!(w.update(1e30, 1, pool()).err(), Some(InvalidTimeStep));
    assert_eq!(
        w.update(MAX_TIME_STEP * 1.01, 1, pool()).err(),
        Some(InvalidTimeStep)
    );
    assert_eq!(
        w.update(DT, MAX_COLLISION_STEPS + 1, pool()).err(),
        Some(InvalidTimeStep)
    );
    assert_eq!(w.update(1e-9, 1, pool()).err(), Some(InvalidTimeStep));
    assert_eq!(w.update(DT, u32::MAX, pool()).err(), Some(InvalidTimeStep));
    for gravity in [Vec3::new(0.0, -3e38, 0.0), Vec3::splat(MAX_GRAVITY * 1.01)] {
        let s = PhysicsSettings {
            gravity,
            ..PhysicsSettings::default()
        };
        assert_eq!(w.set_settings(s), Err(InvalidSettings));
    }
    for (v, p) in [
        (u32::MAX, 2),
        (MAX_SOLVER_ITERATIONS + 1, 2),
        (10, u32::MAX),
    ] {
        let s = PhysicsSettings {
            velocity_iterations: v,
            position_iterations: p,
            ..PhysicsSettings::default()
        };
        assert_eq!(w.set_settings(s), Err(InvalidSettings));
    }
    let s = PhysicsSettings {
        max_linear_velocity: f32::MAX,
        ..PhysicsSettings::default()
    };
    assert_eq!(w.set_settings(s), Err(InvalidSettings));
    for shape in [
        Shape::Sphere { radius: 1e30 },
        Shape::Capsule {
            half_height: 1e30,
            radius: 1.0,
        },
        Shape::Box {
            half_extents: Vec3::new(1.0, MAX_SHAPE_SIZE * 1.01, 1.0),
        },
        // found by the fuzzer: inverse inertias of 1e34 overflowed against
        // a huge body's lever arm
        Shape::Box {
            half_extents: Vec3::new(0.7, 1.2, f32::MIN_POSITIVE),
        },
        Shape::Sphere {
            radius: MIN_SHAPE_SIZE * 0.99,
        },
    ] {
        assert_eq!(shape.validate(), Err(InvalidShape));
        let s = BodyCreationSettings::new(shape, Vec3::ZERO, MotionType::Dynamic);
        assert_eq!(w.create_body(&s).err(), Some(InvalidShape));
    }
    let far = Vec3::new(MAX_COORDINATE * 1.01, 0.0, 0.0);
    assert_eq!(w.set_position(a, far), Err(InvalidPosition));
    assert_eq!(
        w.create_body(&scenes::cube(0.5, far)).err(),
        Some(InvalidPosition)
    );
    for mass in [MIN_MASS * 0.99, MAX_MASS * 1.01] {
        assert_eq!(
            w.create_body(&scenes::cube(0.5, Vec3::ZERO).with_mass(mass))
                .err(),
            Some(InvalidMass)
        );
    }
    for factor in [-1e9, 1e30] {
        assert_eq!(
            w.create_body(&scenes::cube(0.5, Vec3::ZERO).with_gravity_factor(factor))
                .err(),
            Some(InvalidMaterial)
        );
    }
    assert_eq!(w.state_hash(), hash);
    assert_eq!(w.num_bodies(), 2);
    step(&mut w, 5);
}

/// The largest accepted values simulate and stay finite: a dynamic box of
/// the largest size on a floor of the largest size, far out, under the
/// strongest gravity, stepped with the longest time step.
#[test]
fn the_largest_accepted_values_stay_finite() {
    let settings = PhysicsSettings {
        gravity: Vec3::new(0.0, -MAX_GRAVITY, 0.0),
        max_linear_velocity: MAX_SPEED,
        max_angular_velocity: MAX_SPEED,
        ..PhysicsSettings::default()
    };
    let mut w = world(settings);
    let edge = MAX_COORDINATE - MAX_SHAPE_SIZE;
    let floor = Shape::cuboid(Vec3::splat(MAX_SHAPE_SIZE)).unwrap();
    w.create_and_add_body(&BodyCreationSettings::new(
        floor,
        Vec3::new(edge, -MAX_SHAPE_SIZE, 0.0),
        MotionType::Static,
    ))
    .unwrap();
    let big = w
        .create_and_add_body(
            &BodyCreationSettings::new(
                Shape::cuboid(Vec3::splat(MAX_SHAPE_SIZE)).unwrap(),
                Vec3::new(edge, MAX_SHAPE_SIZE, 0.0),
                MotionType::Dynamic,
            )
            .with_gravity_factor(MAX_GRAVITY_FACTOR),
        )
        .unwrap();
    let small = w
        .create_and_add_body(
            &BodyCreationSettings::new(
                Shape::sphere(0.01).unwrap(),
                Vec3::new(edge, 2.0 * MAX_SHAPE_SIZE + 0.01, 0.0),
                MotionType::Dynamic,
            )
            .with_density(1.0),
        )
        .unwrap();
    w.set_linear_velocity(small, Vec3::new(0.0, -3e38, 0.0))
        .unwrap();
    for dt in [MAX_TIME_STEP, DT, MIN_TIME_STEP] {
        for _ in 0..5 {
            let stats = w.update(dt, 1, pool()).unwrap();
            assert_eq!(stats.bodies_faulted, 0, "dt {dt}");
            assert_all_finite(&w);
        }
    }
    assert!(w.is_added(big).unwrap() && w.is_added(small).unwrap());
}

/// Capacities that cannot be allocated are refused, not aborted on.
#[test]
fn impossible_capacities_are_refused() {
    for caps in [
        Capacities {
            max_body_pairs: usize::MAX,
            ..Capacities::default()
        },
        Capacities {
            max_body_pairs: 1 << 40,
            ..Capacities::default()
        },
        Capacities {
            max_bodies: u32::MAX as usize / 2,
            ..Capacities::default()
        },
        Capacities {
            max_contact_constraints: usize::MAX / 2,
            ..Capacities::default()
        },
    ] {
        assert_eq!(
            PhysicsSystem::new(caps, PhysicsSettings::default()).err(),
            Some(PhysicsError::InvalidSettings),
            "{caps:?}"
        );
    }
    // (the estimate itself is held to the allocator by tests/memory.rs)
    assert!(Capacities::default().memory_bytes() < 112 << 20);
}

/// `contacts()` reports only bodies that are still in the simulation: after
/// `destroy_body` it named the dead id, and once the slot was reused it
/// pinned the old contact on the new, unrelated body.
#[test]
fn contacts_never_name_removed_or_destroyed_bodies() {
    let (mut w, a) = floor_and_box(BroadPhaseKind::Sap);
    step(&mut w, 5);
    assert_eq!(w.contacts().count(), 1);
    w.destroy_body(a).unwrap();
    assert_eq!(w.contacts().count(), 0, "a destroyed body has no contacts");
    let b = w
        .create_and_add_body(&scenes::cube(0.5, Vec3::new(20.0, 0.5, 0.0)))
        .unwrap();
    assert_eq!(b.index(), a.index());
    assert!(w.contacts().all(|c| c.body_a != b && c.body_b != b));
    step(&mut w, 5);
    assert_eq!(w.contacts().count(), 1, "the new body rests on the floor");

    let c = w
        .create_and_add_body(&scenes::cube(0.5, Vec3::new(-20.0, 0.5, 0.0)))
        .unwrap();
    step(&mut w, 5);
    assert_eq!(w.contacts().count(), 2);
    w.remove_body(c).unwrap();
    assert!(w.contacts().all(|k| k.body_a != c && k.body_b != c));
    assert_eq!(w.contacts().count(), 1);
}

/// Dropped pairs set the warning in every kind of update, also when
/// nothing is awake or `dt <= 0` (only the broad phase runs then).
#[test]
fn dropped_pairs_warn_when_nothing_is_simulated() {
    let caps = Capacities {
        max_body_pairs: 2,
        ..Capacities::default()
    };
    let mut w = PhysicsSystem::new(caps, PhysicsSettings::default()).unwrap();
    // ten static boxes in one spot overlap each other (never reported),
    // and a kinematic one overlapping all: 10 persistent pairs > 2 * 2
    for _ in 0..10 {
        w.create_and_add_body(&BodyCreationSettings::new(
            Shape::cuboid(Vec3::ONE).unwrap(),
            Vec3::ZERO,
            MotionType::Static,
        ))
        .unwrap();
    }
    let k = w
        .create_and_add_body(&BodyCreationSettings::new(
            Shape::cuboid(Vec3::ONE).unwrap(),
            Vec3::ZERO,
            MotionType::Kinematic,
        ))
        .unwrap();
    w.remove_body(k).unwrap();
    w.add_body(k).unwrap();
    let stats = w.update(0.0, 1, pool()).unwrap();
    assert!(stats.body_pairs_dropped > 0, "{stats:?}");
    assert!(stats.warnings.contains(UpdateWarnings::BODY_PAIRS_FULL));
}

/// A handle from another world is refused even where its slot and
/// generation exist in this one.
#[test]
fn ids_from_another_world_are_refused() {
    let (mut w1, a1) = floor_and_box(BroadPhaseKind::Sap);
    let (w2, a2) = floor_and_box(BroadPhaseKind::Sap);
    assert_eq!(a1.index(), a2.index());
    assert_ne!(a1, a2);
    assert_eq!(w2.position(a1).err(), Some(PhysicsError::InvalidBodyId));
    assert_eq!(
        w1.set_position(a2, Vec3::ONE).err(),
        Some(PhysicsError::InvalidBodyId)
    );
    assert!(w1.position(a1).is_ok());
}

/// A 2e6 m long plank spun at the maximum angular velocity until it lies
/// across the floor face-on: its inverse inertias are ~1e-22, the face
/// block's 3×3 determinant underflowed to a denormal and its inverse
/// overflowed to NaN (found by the fuzzer, case 659 of seed 1).
#[test]
fn a_huge_plank_spun_onto_the_floor_stays_finite() {
    let mut w = world(PhysicsSettings::default());
    add_floor(&mut w);
    let plank = w
        .create_and_add_body(
            &BodyCreationSettings::new(
                Shape::cuboid(Vec3::new(MAX_SHAPE_SIZE, 0.634, 1.422)).unwrap(),
                Vec3::new(0.0, 9.15, -6.99),
                MotionType::Dynamic,
            )
            .with_friction(0.92),
        )
        .unwrap();
    w.set_angular_velocity(plank, Vec3::new(8.6, 5.8, 1e7))
        .unwrap();
    for dt in [1.0 / 30.0, 1.0 / 120.0, DT, DT, DT] {
        let stats = w.update(dt, 1, pool()).unwrap();
        assert_eq!(stats.bodies_faulted, 0);
        assert_all_finite(&w);
    }
}

/// `deactivate_body` on a box in the middle of an awake stack: until the
/// next step the box sleeps while touching awake ones, which the sleep
/// invariants must allow (they reported a half-asleep island; found by the
/// fuzzer, case 12 of seed 1); the next step wakes it.
#[test]
fn deactivating_a_body_inside_an_awake_stack() {
    let mut w = world(PhysicsSettings::default());
    add_floor(&mut w);
    let stack: Vec<BodyId> = (0..4)
        .map(|k| {
            w.create_and_add_body(&scenes::cube(0.5, Vec3::new(0.0, 0.5 + k as f32, 0.0)))
                .unwrap()
        })
        .collect();
    step(&mut w, 2);
    w.deactivate_body(stack[2]).unwrap();
    assert!(w.is_sleeping(stack[2]).unwrap());
    assert_eq!(w.check_sleep_invariants(), Ok(()));
    step(&mut w, 1);
    assert!(!w.is_sleeping(stack[2]).unwrap(), "touched by awake boxes");
    assert_eq!(w.check_sleep_invariants(), Ok(()));
}
