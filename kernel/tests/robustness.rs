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

/// The fuzzer (seed 0x5EED, case 27, shrunk to these calls): a fixed joint
/// whose anchor on one body is 1e6 m from its centre (accepted: inside
/// `MAX_COORDINATE`), among other joints between the same three bodies.
/// Each position push closed a fraction of a million-metre gap at once;
/// within a few steps every body was thrown at the speed limit and then
/// went non-finite (3 faulted). Joint pushes are capped at 0.2 m now.
#[test]
fn a_joint_anchored_a_million_metres_away_stays_finite() {
    use archipelago::*;
    #[allow(unused)]
    fn pick(ids: &[BodyId], k: u32) -> BodyId {
        if ids.is_empty() {
            BodyId::from_raw([k % 64, 0, 0])
        } else {
            ids[k as usize % ids.len()]
        }
    }
    #[allow(unused)]
    fn latest(ids: &[BodyId]) -> BodyId {
        ids.last().copied().unwrap_or(BodyId::from_raw([0, 0, 0]))
    }
    let pools: Vec<ThreadPool> = [1, 2, 4]
        .iter()
        .map(|&n| build_pinned_pool(Some(n)).unwrap().pool)
        .collect();
    let mut other = PhysicsSystem::new(
        Capacities {
            max_bodies: 8,
            max_body_pairs: 8,
            max_contact_constraints: 8,
            max_joints: 8,
        },
        PhysicsSettings::default(),
    )
    .unwrap();
    let foreign: Vec<BodyId> = (0..8)
        .map(|k| {
            other
                .create_body(&scenes::cube(0.5, Vec3::new(3.0 * k as f32, 0.5, 0.0)))
                .unwrap()
        })
        .collect();
    let mut w = PhysicsSystem::new(
        Capacities {
            max_bodies: 3,
            max_body_pairs: 1,
            max_contact_constraints: 64,
            max_joints: 8,
        },
        PhysicsSettings {
            gravity: Vec3::new(-14.899796, 13.922787, 6.36965),
            velocity_iterations: 10,
            position_iterations: 2,
            baumgarte: 0.2,
            speculative_contact_distance: 0.02,
            penetration_slop: 0.02,
            max_penetration_distance: 0.2,
            linear_damping: 0.05,
            angular_damping: 0.05,
            max_linear_velocity: 500.0,
            max_angular_velocity: 47.12389,
            min_velocity_for_restitution: 1.0,
            contact_point_preserve_distance: 0.01,
            contact_normal_preserve_cos: 0.9961947,
            broad_phase: BroadPhaseKind::MbpFitted { subdivisions: 8 },
            layer_filter: LayerFilter::from_rows([
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295,
            ])
            .unwrap(),
            allow_sleeping: true,
            use_large_island_splitter: true,
            time_before_sleep: 0.5,
            point_velocity_sleep_threshold: 0.03,
            use_body_pair_cache: true,
            body_pair_cache_max_delta_position: 0.001,
            body_pair_cache_max_delta_rotation: 0.034906585,
            ..PhysicsSettings::default()
        },
    )
    .unwrap();
    let mut ids: Vec<BodyId> = Vec::new();
    let mut faulted = 0;
    let mut joints: Vec<JointId> = Vec::new();
    let _ = w
        .create_and_add_body(&BodyCreationSettings {
            shape: Shape::Box {
                half_extents: Vec3::new(50.0, 1.0, 50.0),
            },
            position: Vec3::new(0.0, -1.0, 0.0),
            rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 1.0),
            linear_velocity: Vec3::new(0.0, 0.0, 0.0),
            angular_velocity: Vec3::new(0.0, 0.0, 0.0),
            motion_type: MotionType::Static,
            mass: MassSpec::Density(1000.0),
            friction: 0.2,
            restitution: 0.0,
            linear_damping: None,
            angular_damping: None,
            gravity_factor: 1.0,
            allow_sleeping: true,
            motion_quality: MotionQuality::Discrete,
            is_sensor: false,
            contact_events: false,
            object_layer: 0,
            user_data: 0,
        })
        .inspect(|&id| ids.push(id));
    let _ = w.destroy_body(pick(&ids, 14274));
    let _ = w
        .create_and_add_body(&BodyCreationSettings {
            shape: Shape::Box {
                half_extents: Vec3::new(0.11024281, 1.1529711, 0.31181926),
            },
            position: Vec3::new(-3.3812656, 10.933138, -11.637765),
            rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 1.0),
            linear_velocity: Vec3::new(9.708277, 5.478874, 9.393614),
            angular_velocity: Vec3::new(-3.9836402, 0.14061975, -1.230442),
            motion_type: MotionType::Dynamic,
            mass: MassSpec::Mass(7.7180357),
            friction: 0.2,
            restitution: 0.0,
            linear_damping: None,
            angular_damping: None,
            gravity_factor: 1.0,
            allow_sleeping: true,
            motion_quality: MotionQuality::Discrete,
            is_sensor: false,
            contact_events: true,
            object_layer: 0,
            user_data: 1788798246752888750,
        })
        .inspect(|&id| ids.push(id));
    let _ = w.destroy_body(pick(&ids, 5373));
    let _ = w
        .create_and_add_body(&BodyCreationSettings {
            shape: Shape::Sphere { radius: 1.3197006 },
            position: Vec3::new(-0.5875292, 2.1876678, -1.2935362),
            rotation: Quat::from_xyzw(0.53348666, 0.59887755, 0.14013425, 0.5806032),
            linear_velocity: Vec3::new(0.0, 0.0, 0.0),
            angular_velocity: Vec3::new(0.0, 0.0, 0.0),
            motion_type: MotionType::Dynamic,
            mass: MassSpec::Density(1000.0),
            friction: 0.2,
            restitution: 0.0,
            linear_damping: None,
            angular_damping: None,
            gravity_factor: 1.0,
            allow_sleeping: true,
            motion_quality: MotionQuality::Discrete,
            is_sensor: false,
            contact_events: false,
            object_layer: 0,
            user_data: 6273093116109423394,
        })
        .inspect(|&id| ids.push(id));
    let _ = w
        .create_and_add_body(&BodyCreationSettings {
            shape: Shape::Sphere { radius: 0.44653305 },
            position: Vec3::new(1.6012707, -2.7253122, -8.172579),
            rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 1.0),
            linear_velocity: Vec3::new(-9.690001, -2.157371, -9.654874),
            angular_velocity: Vec3::new(-0.8784585, -1.4335089, 2.6444302),
            motion_type: MotionType::Dynamic,
            mass: MassSpec::Mass(149.3398),
            friction: 0.2,
            restitution: 0.0,
            linear_damping: None,
            angular_damping: None,
            gravity_factor: 1.0572104,
            allow_sleeping: true,
            motion_quality: MotionQuality::Discrete,
            is_sensor: false,
            contact_events: false,
            object_layer: 3,
            user_data: 1239000893836374737,
        })
        .inspect(|&id| ids.push(id));
    let _ = w
        .create_body(&BodyCreationSettings {
            shape: Shape::Sphere { radius: 0.36638695 },
            position: Vec3::new(8.3014145, 12.592682, 2.3329163),
            rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 1.0),
            linear_velocity: Vec3::new(0.0, 0.0, 0.0),
            angular_velocity: Vec3::new(0.0, 0.0, 0.0),
            motion_type: MotionType::Static,
            mass: MassSpec::Density(1000.0),
            friction: 0.2,
            restitution: 0.0,
            linear_damping: Some(0.8542757),
            angular_damping: Some(0.04120648),
            gravity_factor: 1.0,
            allow_sleeping: false,
            motion_quality: MotionQuality::Discrete,
            is_sensor: false,
            contact_events: false,
            object_layer: 0,
            user_data: 4450408547143696460,
        })
        .inspect(|&id| ids.push(id));
    let _ = w.set_settings(PhysicsSettings {
        broad_phase: w.settings().broad_phase,
        ..PhysicsSettings {
            gravity: Vec3::new(-13.647666, -16.74432, -5.297964),
            velocity_iterations: 8,
            position_iterations: 2,
            baumgarte: 0.2,
            speculative_contact_distance: 0.02,
            penetration_slop: 0.02,
            max_penetration_distance: 0.2,
            linear_damping: 0.05,
            angular_damping: 0.05,
            max_linear_velocity: 657.2475,
            max_angular_velocity: 4.819107,
            min_velocity_for_restitution: 1.2938434,
            contact_point_preserve_distance: 0.001152271,
            contact_normal_preserve_cos: -0.3687675,
            broad_phase: BroadPhaseKind::Sap,
            layer_filter: LayerFilter::from_rows([
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295,
            ])
            .unwrap(),
            allow_sleeping: false,
            use_large_island_splitter: true,
            time_before_sleep: 0.5,
            point_velocity_sleep_threshold: 0.03,
            use_body_pair_cache: true,
            body_pair_cache_max_delta_position: 0.001,
            body_pair_cache_max_delta_rotation: 0.034906585,
            ..PhysicsSettings::default()
        }
    });
    let _ = w.destroy_body(pick(&ids, 2552));
    let _ = w
        .create_and_add_body(&BodyCreationSettings {
            shape: Shape::Box {
                half_extents: Vec3::new(0.7314694, 1.1173114, 0.27611956),
            },
            position: Vec3::new(4.597622, -8.664436, -13.222849),
            rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 1.0),
            linear_velocity: Vec3::new(0.0, 0.0, 0.0),
            angular_velocity: Vec3::new(0.0, 0.0, 0.0),
            motion_type: MotionType::Dynamic,
            mass: MassSpec::Density(1000.0),
            friction: 0.2,
            restitution: 0.0,
            linear_damping: None,
            angular_damping: None,
            gravity_factor: -0.8071084,
            allow_sleeping: true,
            motion_quality: MotionQuality::Discrete,
            is_sensor: false,
            contact_events: false,
            object_layer: 0,
            user_data: 14263587720213409638,
        })
        .inspect(|&id| ids.push(id));
    faulted += w.update(0.016666668, 4, &pools[1]).unwrap().bodies_faulted;
    faulted += w.update(0.004, 1, &pools[0]).unwrap().bodies_faulted;
    let _ = w.destroy_body(pick(&ids, 54747));
    faulted += w.update(0.008333334, 1, &pools[0]).unwrap().bodies_faulted;
    faulted += w.update(0.016666668, 2, &pools[1]).unwrap().bodies_faulted;
    let _ = w
        .create_and_add_body(&BodyCreationSettings {
            shape: Shape::Capsule {
                half_height: 1.1840775,
                radius: 0.81867975,
            },
            position: Vec3::new(14.052843, -11.8247795, 4.6900444),
            rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 1.0),
            linear_velocity: Vec3::new(0.0, 0.0, 0.0),
            angular_velocity: Vec3::new(0.0, 0.0, 0.0),
            motion_type: MotionType::Dynamic,
            mass: MassSpec::Density(1000.0),
            friction: 0.2,
            restitution: 0.0,
            linear_damping: Some(0.50111103),
            angular_damping: Some(0.89395994),
            gravity_factor: 1.7349772,
            allow_sleeping: false,
            motion_quality: MotionQuality::Discrete,
            is_sensor: false,
            contact_events: false,
            object_layer: 0,
            user_data: 6785716079929449773,
        })
        .inspect(|&id| ids.push(id));
    faulted += w.update(0.008333334, 1, &pools[1]).unwrap().bodies_faulted;
    let _ = w.set_linear_velocity(pick(&ids, 10155), Vec3::new(-2.8069296, -8.7826, -8.582951));
    faulted += w.update(0.016666668, 2, &pools[2]).unwrap().bodies_faulted;
    faulted += w.update(0.016666668, 1, &pools[1]).unwrap().bodies_faulted;
    let _ = w
        .create_joint(
            &JointSettings::new(
                Some(pick(&ids, 40004)),
                Some(pick(&ids, 23091)),
                JointFrame::new(
                    Vec3::new(0.80188084, 0.5222521, 0.32709002),
                    Vec3::new(0.015133798, -0.31854782, 0.94778585),
                    Vec3::new(0.78322005, -0.5854643, -0.20927882),
                ),
                JointFrame::new(
                    Vec3::new(-0.84611654, 0.8329315, -0.4475664),
                    Vec3::new(0.2841084, -0.853114, -0.4375831),
                    Vec3::new(-0.8353331, 0.0037837625, -0.54973125),
                ),
                JointKind::Point,
            )
            .with_collide_connected(false),
        )
        .inspect(|&j| joints.push(j));
    faulted += w.update(0.016666668, 4, &pools[2]).unwrap().bodies_faulted;
    let _ = if joints.is_empty() {
        Ok(())
    } else {
        w.remove_joint(joints[12854_usize % joints.len().max(1)])
    };
    let _ = w.destroy_body(pick(&ids, 49291));
    faulted += w.update(0.016666668, 4, &pools[1]).unwrap().bodies_faulted;
    let _ = w
        .create_and_add_body(&BodyCreationSettings {
            shape: Shape::Capsule {
                half_height: 1.3384501,
                radius: 0.17594124,
            },
            position: Vec3::new(-6.8320923, -8.073837, 6.327053),
            rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 1.0),
            linear_velocity: Vec3::new(4.595667, -7.38964, -9.468407),
            angular_velocity: Vec3::new(-3.8786654, 2.350113, 4.093849),
            motion_type: MotionType::Dynamic,
            mass: MassSpec::Density(2117.5474),
            friction: 0.2,
            restitution: 0.0,
            linear_damping: None,
            angular_damping: None,
            gravity_factor: 1.0,
            allow_sleeping: true,
            motion_quality: MotionQuality::Discrete,
            is_sensor: false,
            contact_events: true,
            object_layer: 0,
            user_data: 1147750733555767518,
        })
        .inspect(|&id| ids.push(id));
    faulted += w.update(0.016666668, 4, &pools[1]).unwrap().bodies_faulted;
    faulted += w.update(0.033333335, 2, &pools[2]).unwrap().bodies_faulted;
    faulted += w.update(0.016666668, 2, &pools[0]).unwrap().bodies_faulted;
    faulted += w.update(0.004, 2, &pools[1]).unwrap().bodies_faulted;
    let _ = w.add_angular_impulse(
        pick(&ids, 16759),
        Vec3::new(12.240944, -18.240318, -6.5498066),
    );
    faulted += w.update(0.016666668, 4, &pools[1]).unwrap().bodies_faulted;
    let _ = w.destroy_body(pick(&ids, 52109));
    let _ = w
        .create_joint(
            &JointSettings::new(
                Some(latest(&ids)),
                Some(pick(&ids, 48758)),
                JointFrame::new(
                    Vec3::new(0.015922904, 0.7321117, 0.30347085),
                    Vec3::new(1.0, 0.0, 0.0),
                    Vec3::new(0.0, 1.0, 0.0),
                ),
                JointFrame::new(
                    Vec3::new(-0.4638182, -0.17487788, 0.6446843),
                    Vec3::new(1.0, 0.0, 0.0),
                    Vec3::new(0.0, 1.0, 0.0),
                ),
                JointKind::Hinge(HingeJoint {
                    limits: None,
                    motor: JointMotor {
                        mode: MotorMode::Velocity(4.556694),
                        max_force: 386.60004,
                    },
                    max_friction: 1.9204376,
                }),
            )
            .with_collide_connected(false),
        )
        .inspect(|&j| joints.push(j));
    faulted += w.update(0.016666668, 1, &pools[2]).unwrap().bodies_faulted;
    let _ = if joints.is_empty() {
        Ok(())
    } else {
        w.set_joint_limits(
            joints[7351_usize % joints.len().max(1)],
            Some([-1.6192253, 1.7097297]),
        )
    };
    let _ = w
        .create_body(&BodyCreationSettings {
            shape: Shape::Capsule {
                half_height: 1.3613186,
                radius: 0.47978196,
            },
            position: Vec3::new(13.979227, 13.020271, -3.772622),
            rotation: Quat::from_xyzw(0.036817808, -0.28065947, -0.031051816, -0.9585982),
            linear_velocity: Vec3::new(0.0, 0.0, 0.0),
            angular_velocity: Vec3::new(0.0, 0.0, 0.0),
            motion_type: MotionType::Dynamic,
            mass: MassSpec::Density(1000.0),
            friction: 0.2,
            restitution: 0.0,
            linear_damping: Some(0.09703457),
            angular_damping: Some(0.08283669),
            gravity_factor: 1.0,
            allow_sleeping: true,
            motion_quality: MotionQuality::Discrete,
            is_sensor: false,
            contact_events: false,
            object_layer: 0,
            user_data: 12008648817165485415,
        })
        .inspect(|&id| ids.push(id));
    faulted += w.update(0.016666668, 4, &pools[0]).unwrap().bodies_faulted;
    faulted += w.update(0.016666668, 1, &pools[1]).unwrap().bodies_faulted;
    faulted += w.update(0.016666668, 1, &pools[2]).unwrap().bodies_faulted;
    let _ = w.set_settings(PhysicsSettings {
        broad_phase: w.settings().broad_phase,
        ..PhysicsSettings {
            gravity: Vec3::new(-7.284376, 9.423595, -9.62393),
            velocity_iterations: 10,
            position_iterations: 2,
            baumgarte: 0.2,
            speculative_contact_distance: 0.02,
            penetration_slop: 0.02,
            max_penetration_distance: 0.2,
            linear_damping: 0.05,
            angular_damping: 0.05,
            max_linear_velocity: 500.0,
            max_angular_velocity: 47.12389,
            min_velocity_for_restitution: 1.0,
            contact_point_preserve_distance: 0.01,
            contact_normal_preserve_cos: 0.9961947,
            broad_phase: BroadPhaseKind::BruteForce,
            layer_filter: LayerFilter::from_rows([
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295, 4294967295,
                4294967295, 4294967295, 4294967295, 4294967295,
            ])
            .unwrap(),
            allow_sleeping: true,
            use_large_island_splitter: true,
            time_before_sleep: 0.4851665,
            point_velocity_sleep_threshold: 0.0975663,
            use_body_pair_cache: false,
            body_pair_cache_max_delta_position: 0.001,
            body_pair_cache_max_delta_rotation: 0.034906585,
            ..PhysicsSettings::default()
        }
    });
    faulted += w.update(0.008333334, 1, &pools[0]).unwrap().bodies_faulted;
    let _ = w.set_position(
        pick(&ids, 49543),
        Vec3::new(-13.790803, -8.674202, 13.0753765),
    );
    let _ = w
        .create_joint(
            &JointSettings::new(
                Some(pick(&ids, 50902)),
                Some(pick(&ids, 7379)),
                JointFrame::new(
                    Vec3::new(0.4686272, 0.51822054, -0.5917678),
                    Vec3::new(1.0, 0.0, 0.0),
                    Vec3::new(0.0, 1.0, 0.0),
                ),
                JointFrame::new(
                    Vec3::new(0.34412062, -0.22662878, 0.6289774),
                    Vec3::new(-0.3100904, -0.33272853, -0.8905817),
                    Vec3::new(0.93015766, 0.08753368, -0.35657358),
                ),
                JointKind::Fixed,
            )
            .with_collide_connected(false),
        )
        .inspect(|&j| joints.push(j));
    let _ = w.set_linear_velocity(
        pick(&ids, 55051),
        Vec3::new(-5.2797318, 2.2319527, -5.5811834),
    );
    let _ = w.add_body(pick(&ids, 32498));
    faulted += w.update(0.016666668, 1, &pools[2]).unwrap().bodies_faulted;
    faulted += w.update(0.004, 1, &pools[2]).unwrap().bodies_faulted;
    let _ = w
        .create_joint(
            &JointSettings::new(
                Some(latest(&ids)),
                Some(pick(&ids, 4326)),
                JointFrame::new(
                    Vec3::new(-0.52914655, 0.19390106, 0.7101524),
                    Vec3::new(-0.46635517, -0.028091282, -0.8841513),
                    Vec3::new(-0.6076853, 0.7364999, 0.29713014),
                ),
                JointFrame::new(
                    Vec3::new(0.64622295, 0.56532276, -0.30748415),
                    Vec3::new(-0.085056886, 0.50627226, 0.8581688),
                    Vec3::new(-0.6495722, 0.62491906, -0.43304977),
                ),
                JointKind::Hinge(HingeJoint {
                    limits: None,
                    motor: JointMotor {
                        mode: MotorMode::Off,
                        max_force: 0.0,
                    },
                    max_friction: 3.161446,
                }),
            )
            .with_collide_connected(false),
        )
        .inspect(|&j| joints.push(j));
    faulted += w.update(0.016666668, 4, &pools[1]).unwrap().bodies_faulted;
    faulted += w.update(0.008333334, 1, &pools[0]).unwrap().bodies_faulted;
    faulted += w.update(0.008333334, 1, &pools[1]).unwrap().bodies_faulted;
    faulted += w.update(0.033333335, 4, &pools[0]).unwrap().bodies_faulted;
    faulted += w.update(0.004, 1, &pools[0]).unwrap().bodies_faulted;
    faulted += w.update(0.033333335, 2, &pools[1]).unwrap().bodies_faulted;
    faulted += w.update(0.016666668, 1, &pools[1]).unwrap().bodies_faulted;
    faulted += w.update(0.004, 1, &pools[1]).unwrap().bodies_faulted;
    faulted += w.update(0.008333334, 2, &pools[0]).unwrap().bodies_faulted;
    let _ = w.set_position(
        pick(&ids, 9106),
        Vec3::new(-11.300404, -9.8391075, 12.761602),
    );
    faulted += w.update(0.004, 1, &pools[1]).unwrap().bodies_faulted;
    let _ = w.add_impulse(latest(&ids), Vec3::new(33.641113, 48.9404, -4.544121));
    let _ = w
        .create_joint(
            &JointSettings::new(
                Some(pick(&ids, 6018)),
                Some(pick(&ids, 28178)),
                JointFrame::new(
                    Vec3::new(0.038926363, 1000000.0, 0.74705446),
                    Vec3::new(0.6337974, 0.1679003, 0.7550565),
                    Vec3::new(-0.7027197, -0.282946, 0.6527837),
                ),
                JointFrame::new(
                    Vec3::new(0.54839206, -0.5519674, 0.5511892),
                    Vec3::new(0.7661733, 0.12977967, -0.6293931),
                    Vec3::new(0.6426064, -0.16379678, 0.74848354),
                ),
                JointKind::Fixed,
            )
            .with_collide_connected(false),
        )
        .inspect(|&j| joints.push(j));
    let _ = w.set_position(latest(&ids), Vec3::new(11.08856, -0.411685, -8.957432));
    faulted += w.update(0.008333334, 4, &pools[2]).unwrap().bodies_faulted;
    faulted += w.update(0.004, 2, &pools[1]).unwrap().bodies_faulted;
    faulted += w.update(0.004, 4, &pools[2]).unwrap().bodies_faulted;
    faulted += w.update(0.008333334, 1, &pools[2]).unwrap().bodies_faulted;
    faulted += w.update(0.033333335, 1, &pools[0]).unwrap().bodies_faulted;
    faulted += w.update(0.033333335, 4, &pools[0]).unwrap().bodies_faulted;
    faulted += w.update(0.033333335, 1, &pools[1]).unwrap().bodies_faulted;
    let _ = (&mut ids, &mut joints, &foreign);
    assert_eq!(faulted, 0, "bodies faulted");
    assert_all_finite(&w);
}
