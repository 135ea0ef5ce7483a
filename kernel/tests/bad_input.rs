//! Every bad input gets its typed error and leaves the world exactly as it
//! was (same state hash, same body count), and the world keeps stepping.

mod common;
use archipelago::*;
use common::*;

/// A small world with a floor, a resting box, a falling sphere and a
/// kinematic platform, stepped a little so velocities are non-zero.
fn sample_world() -> (PhysicsSystem, BodyId, BodyId, BodyId, BodyId) {
    sample_world_in(Capacities {
        max_bodies: 8,
        ..Capacities::default()
    })
}

fn sample_world_in(capacities: Capacities) -> (PhysicsSystem, BodyId, BodyId, BodyId, BodyId) {
    let mut w = PhysicsSystem::new(capacities, PhysicsSettings::default()).unwrap();
    let floor = add_floor(&mut w);
    let cube = w
        .create_and_add_body(&scenes::cube(0.5, Vec3::new(0.0, 0.5, 0.0)))
        .unwrap();
    let ball = w
        .create_and_add_body(&BodyCreationSettings::new(
            Shape::sphere(0.3).unwrap(),
            Vec3::new(3.0, 2.0, 0.0),
            MotionType::Dynamic,
        ))
        .unwrap();
    let platform = w
        .create_and_add_body(&BodyCreationSettings::new(
            Shape::cuboid(Vec3::new(1.0, 0.1, 1.0)).unwrap(),
            Vec3::new(-4.0, 1.0, 0.0),
            MotionType::Kinematic,
        ))
        .unwrap();
    step(&mut w, 10);
    (w, floor, cube, ball, platform)
}

/// Runs `f`, which must fail with `expected`, and checks nothing changed.
fn refused<T: std::fmt::Debug>(
    w: &mut PhysicsSystem,
    expected: PhysicsError,
    f: impl FnOnce(&mut PhysicsSystem) -> Result<T>,
) {
    let (hash, bodies, active) = (w.state_hash(), w.num_bodies(), w.num_active_bodies());
    let got = f(w);
    assert_eq!(got.unwrap_err(), expected);
    assert_eq!(w.state_hash(), hash, "a refused call changed the world");
    assert_eq!(w.num_bodies(), bodies);
    assert_eq!(w.num_active_bodies(), active);
}

fn cube_at(p: Vec3) -> BodyCreationSettings {
    scenes::cube(0.5, p)
}

#[test]
fn bad_creation_settings_are_refused() {
    let (mut w, ..) = sample_world();
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    use PhysicsError::*;
    refused(&mut w, InvalidPosition, |w| {
        w.create_body(&cube_at(Vec3::new(nan, 0.0, 0.0)))
    });
    refused(&mut w, InvalidPosition, |w| {
        w.create_body(&cube_at(Vec3::new(0.0, inf, 0.0)))
    });
    refused(&mut w, InvalidRotation, |w| {
        w.create_body(&cube_at(Vec3::ZERO).with_rotation(Quat::from_xyzw(nan, 0.0, 0.0, 1.0)))
    });
    refused(&mut w, InvalidRotation, |w| {
        w.create_body(&cube_at(Vec3::ZERO).with_rotation(Quat::from_xyzw(0.0, 0.0, 0.0, 2.0)))
    });
    refused(&mut w, InvalidRotation, |w| {
        w.create_body(&cube_at(Vec3::ZERO).with_rotation(Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)))
    });
    refused(&mut w, InvalidVelocity, |w| {
        w.create_body(&cube_at(Vec3::ZERO).with_linear_velocity(Vec3::new(0.0, nan, 0.0)))
    });
    refused(&mut w, InvalidVelocity, |w| {
        w.create_body(&cube_at(Vec3::ZERO).with_angular_velocity(Vec3::splat(inf)))
    });
    for shape in [
        Shape::Sphere { radius: 0.0 },
        Shape::Sphere { radius: -1.0 },
        Shape::Sphere { radius: nan },
        Shape::Box {
            half_extents: Vec3::new(1.0, 0.0, 1.0),
        },
        Shape::Box {
            half_extents: Vec3::new(1.0, -1.0, 1.0),
        },
        Shape::Box {
            half_extents: Vec3::new(inf, 1.0, 1.0),
        },
        Shape::Capsule {
            half_height: 0.0,
            radius: 1.0,
        },
        Shape::Capsule {
            half_height: 1.0,
            radius: nan,
        },
    ] {
        refused(&mut w, InvalidShape, |w| {
            w.create_body(&BodyCreationSettings::new(
                shape,
                Vec3::ZERO,
                MotionType::Dynamic,
            ))
        });
    }
    for mass in [
        MassSpec::Density(0.0),
        MassSpec::Density(-1000.0),
        MassSpec::Density(nan),
        MassSpec::Mass(0.0),
        MassSpec::Mass(inf),
        // so small that the inverse mass overflows
        MassSpec::Density(1e-40),
    ] {
        let mut s = cube_at(Vec3::ZERO);
        s.mass = mass;
        refused(&mut w, InvalidMass, |w| w.create_body(&s));
    }
    refused(&mut w, InvalidMaterial, |w| {
        w.create_body(&cube_at(Vec3::ZERO).with_friction(-0.1))
    });
    refused(&mut w, InvalidMaterial, |w| {
        w.create_body(&cube_at(Vec3::ZERO).with_restitution(1.5))
    });
    refused(&mut w, InvalidMaterial, |w| {
        w.create_body(&cube_at(Vec3::ZERO).with_damping(-1.0, 0.0))
    });
    refused(&mut w, InvalidMaterial, |w| {
        w.create_body(&cube_at(Vec3::ZERO).with_gravity_factor(nan))
    });
    // A rotation within the tolerance is normalised, not refused.
    let id = w
        .create_body(
            &cube_at(Vec3::new(10.0, 0.5, 0.0))
                .with_rotation(Quat::from_xyzw(0.0, 0.0, 0.0, 1.0005)),
        )
        .unwrap();
    assert!((w.rotation(id).unwrap().length() - 1.0).abs() < 1e-6);
}

#[test]
fn stale_and_foreign_ids_are_refused() {
    let (mut w, floor, cube, ..) = sample_world();
    let temp = w
        .create_and_add_body(&cube_at(Vec3::new(10.0, 0.5, 0.0)))
        .unwrap();
    w.destroy_body(temp).unwrap();
    // the slot is reused by the next body; the old id must stay dead
    let reuse = w
        .create_and_add_body(&cube_at(Vec3::new(12.0, 0.5, 0.0)))
        .unwrap();
    assert_eq!(reuse.index(), temp.index());
    let foreign = BodyId::from_raw([1_000_000, 0, 0]);
    use PhysicsError::InvalidBodyId;
    for id in [temp, foreign] {
        refused(&mut w, InvalidBodyId, |w| w.position(id));
        refused(&mut w, InvalidBodyId, |w| w.linear_velocity(id));
        refused(&mut w, InvalidBodyId, |w| w.set_position(id, Vec3::ZERO));
        refused(&mut w, InvalidBodyId, |w| {
            w.set_linear_velocity(id, Vec3::ONE)
        });
        refused(&mut w, InvalidBodyId, |w| w.add_impulse(id, Vec3::ONE));
        refused(&mut w, InvalidBodyId, |w| w.remove_body(id));
        refused(&mut w, InvalidBodyId, |w| w.destroy_body(id));
        refused(&mut w, InvalidBodyId, |w| w.add_body(id));
    }
    assert!(w.position(reuse).is_ok());
    refused(&mut w, PhysicsError::BodyAlreadyAdded, |w| w.add_body(cube));
    w.remove_body(cube).unwrap();
    refused(&mut w, PhysicsError::BodyNotAdded, |w| w.remove_body(cube));
    w.add_body(cube).unwrap();
    assert!(w.is_added(floor).unwrap());
}

#[test]
fn full_body_buffer_is_refused_and_loses_nothing() {
    let (mut w, ..) = sample_world();
    let mut made = 0;
    loop {
        match w.create_and_add_body(&cube_at(Vec3::new(20.0 + 2.0 * made as f32, 0.5, 0.0))) {
            Ok(_) => made += 1,
            Err(e) => {
                assert_eq!(e, PhysicsError::BodyCapacityReached);
                break;
            }
        }
        assert!(made < 100, "capacity must be enforced");
    }
    assert_eq!(w.num_bodies(), 8);
    refused(&mut w, PhysicsError::BodyCapacityReached, |w| {
        w.create_body(&cube_at(Vec3::new(0.0, 10.0, 0.0)))
    });
    step(&mut w, 5);
    assert_eq!(w.num_bodies(), 8);
}

#[test]
fn bad_setters_and_forces_are_refused() {
    let (mut w, floor, cube, _ball, platform) = sample_world();
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    use PhysicsError::*;
    refused(&mut w, InvalidPosition, |w| {
        w.set_position(cube, Vec3::new(nan, 0.0, 0.0))
    });
    refused(&mut w, InvalidRotation, |w| {
        w.set_rotation(cube, Quat::from_xyzw(1.0, 1.0, 0.0, 0.0))
    });
    refused(&mut w, InvalidVelocity, |w| {
        w.set_linear_velocity(cube, Vec3::splat(inf))
    });
    refused(&mut w, InvalidVelocity, |w| {
        w.set_angular_velocity(cube, Vec3::new(0.0, nan, 0.0))
    });
    refused(&mut w, InvalidForce, |w| {
        w.add_force(cube, Vec3::new(nan, 0.0, 0.0))
    });
    refused(&mut w, InvalidForce, |w| {
        w.add_torque(cube, Vec3::splat(inf))
    });
    refused(&mut w, InvalidForce, |w| {
        w.add_impulse(cube, Vec3::new(0.0, -inf, 0.0))
    });
    refused(&mut w, InvalidForce, |w| {
        w.add_impulse_at(cube, Vec3::Y, Some(Vec3::splat(nan)))
    });
    refused(&mut w, InvalidForce, |w| {
        w.add_angular_impulse(cube, Vec3::splat(nan))
    });
    // accumulating finite forces into an infinite total is refused too
    w.add_force(cube, Vec3::new(f32::MAX, 0.0, 0.0)).unwrap();
    let hash = w.state_hash();
    assert_eq!(
        w.add_force(cube, Vec3::new(f32::MAX, 0.0, 0.0)),
        Err(InvalidForce)
    );
    assert_eq!(w.state_hash(), hash);
    // a finite impulse that would overflow a very light body's velocity
    let feather = w
        .create_and_add_body(&cube_at(Vec3::new(8.0, 0.5, 0.0)).with_mass(MIN_MASS))
        .unwrap();
    refused(&mut w, InvalidForce, |w| {
        w.add_impulse(feather, Vec3::new(1e30, 0.0, 0.0))
    });
    // motion-type rules
    refused(&mut w, WrongMotionType, |w| {
        w.set_linear_velocity(floor, Vec3::ONE)
    });
    refused(&mut w, WrongMotionType, |w| w.add_force(floor, Vec3::ONE));
    refused(&mut w, WrongMotionType, |w| {
        w.add_impulse(platform, Vec3::ONE)
    });
    refused(&mut w, WrongMotionType, |w| {
        w.move_kinematic(cube, Vec3::ZERO, Quat::IDENTITY, DT)
    });
    refused(&mut w, InvalidPosition, |w| {
        w.move_kinematic(platform, Vec3::splat(nan), Quat::IDENTITY, DT)
    });
    refused(&mut w, InvalidTimeStep, |w| {
        w.move_kinematic(platform, Vec3::ZERO, Quat::IDENTITY, 0.0)
    });
}

#[test]
fn bad_time_steps_and_settings_are_refused() {
    let (mut w, ..) = sample_world();
    use PhysicsError::*;
    refused(&mut w, InvalidTimeStep, |w| w.update(f32::NAN, 1, pool()));
    refused(&mut w, InvalidTimeStep, |w| {
        w.update(f32::INFINITY, 1, pool())
    });
    refused(&mut w, InvalidTimeStep, |w| w.update(DT, 0, pool()));
    // dt <= 0 is a no-op step, not an error
    let hash = w.state_hash();
    w.update(0.0, 1, pool()).unwrap();
    w.update(-DT, 1, pool()).unwrap();
    assert_eq!(w.state_hash(), hash);
    let bad = PhysicsSettings {
        gravity: Vec3::new(0.0, f32::NAN, 0.0),
        ..PhysicsSettings::default()
    };
    refused(&mut w, InvalidSettings, |w| w.set_settings(bad));
    let bad = PhysicsSettings {
        velocity_iterations: 0,
        ..PhysicsSettings::default()
    };
    assert_eq!(
        PhysicsSystem::new(Capacities::default(), bad).err(),
        Some(InvalidSettings)
    );
    let zero = Capacities {
        max_contact_constraints: 0,
        ..Capacities::default()
    };
    assert_eq!(
        PhysicsSystem::new(zero, PhysicsSettings::default()).err(),
        Some(InvalidSettings)
    );
    // after all that, the world still simulates
    step(&mut w, 10);
}

/// Runs a joint call that must fail with `expected`; the joint table and
/// the world (its hash covers joints: definitions and impulses) are
/// unchanged.
fn joint_refused<T: std::fmt::Debug>(
    w: &mut PhysicsSystem,
    expected: PhysicsError,
    f: impl FnOnce(&mut PhysicsSystem) -> Result<T>,
) {
    let (joints, ids) = (w.num_joints(), w.joint_ids());
    let settings: Vec<_> = ids.iter().map(|&j| w.joint(j).unwrap()).collect();
    refused(w, expected, f);
    assert_eq!(w.num_joints(), joints);
    assert_eq!(w.joint_ids(), ids);
    let now: Vec<_> = ids.iter().map(|&j| w.joint(j).unwrap()).collect();
    assert_eq!(now, settings, "a refused call changed a joint");
}

/// Every bad joint input of the joints issue: a joint to its own body, no
/// dynamic side (two static bodies, kinematic and static, the world on
/// both sides), a stale or foreign body, NaN, infinite or non-unit axes,
/// `min > max`, negative or NaN spring frequency, a bad motor, a stale
/// joint id, the wrong kind for a setter, destroying a body that still has
/// joints, and a full joint table: each its typed error, nothing changed,
/// and the world steps on.
#[test]
fn bad_joints_are_refused() {
    let (mut w, floor, cube, ball, platform) = sample_world_in(Capacities {
        max_bodies: 8,
        max_joints: 3,
        ..Capacities::default()
    });
    let wall = w
        .create_and_add_body(&BodyCreationSettings::new(
            Shape::cuboid(Vec3::ONE).unwrap(),
            Vec3::new(5.0, 1.0, 0.0),
            MotionType::Static,
        ))
        .unwrap();
    let hinge = |a, b| {
        JointSettings::new(
            Some(a),
            Some(b),
            // the cube's top (0, 1, 0) and the ball's centre (3, 2, 0)
            // meet at (0, 2, 0)
            JointFrame::at(Vec3::new(0.0, 1.5, 0.0)),
            JointFrame::at(Vec3::new(-3.0, 0.0, 0.0)),
            JointKind::Hinge(HingeJoint {
                limits: Some([-1.0, 1.0]),
                ..HingeJoint::default()
            }),
        )
    };
    let good = w.create_joint(&hinge(cube, ball)).unwrap();
    step(&mut w, 10);
    use PhysicsError::*;
    let create = |s: JointSettings| move |w: &mut PhysicsSystem| w.create_joint(&s);

    joint_refused(&mut w, JointToSelf, create(hinge(ball, ball)));
    joint_refused(&mut w, JointWithoutDynamicBody, create(hinge(floor, wall)));
    joint_refused(
        &mut w,
        JointWithoutDynamicBody,
        create(hinge(platform, wall)),
    );
    let world_to_world = JointSettings::point(None, None, Vec3::ZERO, Vec3::ONE);
    joint_refused(&mut w, JointWithoutDynamicBody, create(world_to_world));
    let temp = w
        .create_and_add_body(&scenes::cube(0.5, Vec3::new(9.0, 0.5, 0.0)))
        .unwrap();
    w.destroy_body(temp).unwrap();
    let foreign = BodyId::from_raw([1_000_000, 0, 0]);
    for stale in [temp, foreign] {
        joint_refused(&mut w, InvalidBodyId, create(hinge(ball, stale)));
        joint_refused(&mut w, InvalidBodyId, create(hinge(stale, ball)));
    }

    let (nan, inf) = (f32::NAN, f32::INFINITY);
    for axis in [
        Vec3::new(nan, 0.0, 0.0),
        Vec3::new(inf, 0.0, 0.0),
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::ZERO,
        Vec3::new(0.0, 1.0, 0.0), // parallel to the normal
    ] {
        let mut s = hinge(cube, ball);
        s.frame_b.axis = axis;
        joint_refused(&mut w, InvalidJointFrame, create(s));
    }
    let mut s = hinge(cube, ball);
    s.frame_a.anchor = Vec3::new(nan, 0.0, 0.0);
    joint_refused(&mut w, InvalidJointFrame, create(s));

    let distance = |min: f32, max: f32, spring: Option<Spring>| {
        JointSettings::new(
            Some(cube),
            Some(ball),
            JointFrame::at(Vec3::ZERO),
            JointFrame::at(Vec3::ZERO),
            JointKind::Distance(DistanceJoint { min, max, spring }),
        )
    };
    joint_refused(&mut w, InvalidJointLimits, create(distance(2.0, 1.0, None)));
    joint_refused(
        &mut w,
        InvalidJointLimits,
        create(distance(-1.0, 1.0, None)),
    );
    joint_refused(&mut w, InvalidJointLimits, create(distance(nan, 1.0, None)));
    for (frequency, damping) in [(-2.0, 0.0), (0.0, 0.5), (nan, 0.0), (2.0, -1.0), (inf, 0.0)] {
        let spring = Some(Spring::new(frequency, damping));
        joint_refused(&mut w, InvalidSpring, create(distance(1.0, 2.0, spring)));
    }
    let mut s = hinge(cube, ball);
    s.kind = JointKind::Hinge(HingeJoint {
        limits: Some([1.0, -1.0]),
        ..HingeJoint::default()
    });
    joint_refused(&mut w, InvalidJointLimits, create(s));
    s.kind = JointKind::SwingTwist(SwingTwistJoint {
        swing: -0.5,
        twist: [-0.1, 0.1],
    });
    joint_refused(&mut w, InvalidJointLimits, create(s));
    s.kind = JointKind::Slider(SliderJoint {
        motor: JointMotor::velocity(1.0, -5.0),
        ..SliderJoint::default()
    });
    joint_refused(&mut w, InvalidMotor, create(s));

    // setters on a live joint
    joint_refused(&mut w, InvalidJointLimits, |w| {
        w.set_joint_limits(good, Some([0.5, -0.5]))
    });
    joint_refused(&mut w, InvalidMotor, |w| {
        w.set_joint_motor(good, JointMotor::velocity(nan, 1.0))
    });
    joint_refused(&mut w, InvalidSpring, |w| {
        w.set_joint_motor(good, JointMotor::position(0.5, Spring::new(-1.0, 0.0), 1.0))
    });
    let point = w
        .create_joint(&JointSettings::point(
            None,
            Some(ball),
            Vec3::new(3.0, 3.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ))
        .unwrap();
    joint_refused(&mut w, WrongJointKind, |w| {
        w.set_joint_motor(point, JointMotor::velocity(1.0, 1.0))
    });
    joint_refused(&mut w, WrongJointKind, |w| {
        w.set_joint_limits(point, Some([0.0, 1.0]))
    });
    joint_refused(&mut w, BodyHasJoints, |w| w.destroy_body(ball));

    // a stale joint id: removed, and its slot reused by the next joint
    let gone = w
        .create_joint(&JointSettings::point(
            Some(cube),
            Some(ball),
            Vec3::new(0.0, 1.5, 0.0),
            Vec3::new(-3.0, 0.0, 0.0),
        ))
        .unwrap();
    w.remove_joint(gone).unwrap();
    let reused = w
        .create_joint(&JointSettings::point(
            Some(cube),
            Some(ball),
            Vec3::new(0.0, 1.5, 0.0),
            Vec3::new(-3.0, 0.0, 0.0),
        ))
        .unwrap();
    joint_refused(&mut w, InvalidJointId, |w| w.remove_joint(gone));
    joint_refused(&mut w, InvalidJointId, |w| w.joint_impulse(gone));
    joint_refused(&mut w, InvalidJointId, |w| {
        w.set_joint_limits(gone, Some([0.0, 1.0]))
    });

    // the table (3 joints) is full
    joint_refused(&mut w, JointCapacityReached, create(hinge(cube, ball)));
    assert_eq!(w.num_joints(), 3);
    step(&mut w, 10);
    for j in [good, point, reused] {
        assert!(w.joint(j).is_ok());
    }
    w.remove_joint(reused).unwrap();
    assert!(
        w.create_joint(&hinge(cube, ball)).is_ok(),
        "a freed slot is usable"
    );
}
