//! Spheres, capsules, kinematic and sensor bodies in motion, checked
//! against numbers.

mod common;
use archipelago::*;
use common::*;

#[test]
fn sphere_comes_to_rest_on_the_floor() {
    let mut w = world(PhysicsSettings::default());
    let floor = add_floor(&mut w);
    let s = BodyCreationSettings::new(
        Shape::sphere(0.4).unwrap(),
        Vec3::new(0.0, 3.0, 0.0),
        MotionType::Dynamic,
    )
    .with_allow_sleeping(false); // the test reads the resting contact's impulse
    let id = w.create_and_add_body(&s).unwrap();
    step(&mut w, 180);
    let p = w.position(id).unwrap();
    // Dropped from 3 m it hits at 7 m/s, 0.12 m per step: it lands deep and
    // the position solver pushes it out to the tolerated penetration slop
    // (0.02 m), no further (as Jolt does).
    assert!(p.y <= 0.4 && p.y >= 0.4 - 0.021, "y = {}", p.y);
    assert!(w.linear_velocity(id).unwrap().length() < 1e-3);
    let impulse: f32 = w
        .contacts()
        .filter(|c| c.body_a == floor && c.body_b == id)
        .map(|c| c.total_normal_impulse())
        .sum();
    let expected = w.mass(id).unwrap() * 9.81 * DT;
    assert!(
        (impulse - expected).abs() / expected < 0.01,
        "{impulse} vs {expected}"
    );
}

#[test]
fn capsule_lying_on_the_floor_stays_level() {
    let mut w = world(PhysicsSettings::default());
    add_floor(&mut w);
    let lying = Quat::from_rotation_z(core::f32::consts::FRAC_PI_2);
    let s = BodyCreationSettings::new(
        Shape::capsule(0.6, 0.25).unwrap(),
        Vec3::new(0.0, 0.3, 0.0),
        MotionType::Dynamic,
    )
    .with_rotation(lying);
    let id = w.create_and_add_body(&s).unwrap();
    step(&mut w, 10);
    // lying along the floor: a two-point manifold, not one rocking point
    assert!(w.contacts().next().is_some_and(|c| c.points().len() == 2));
    step(&mut w, 290);
    let p = w.position(id).unwrap();
    let axis = w.rotation(id).unwrap() * Vec3::Y;
    assert!((p.y - 0.25).abs() < 0.02, "y = {}", p.y);
    assert!(axis.y.abs() < 1e-3, "capsule axis tilted: {axis}");
    assert!(p.x.abs() < 1e-3 && p.z.abs() < 1e-3, "drifted to {p}");
    // and, being still, it has gone to sleep
    assert!(w.is_sleeping(id).unwrap());
}

#[test]
fn capsule_rests_across_a_box_and_deflects_a_falling_ball() {
    // A capsule dropped across a box comes to rest on it, balanced; a sphere
    // dropped onto the capsule's overhanging end is deflected outwards and
    // rolls away on the floor; nothing tunnels through anything.
    let mut w = world(PhysicsSettings::default());
    add_floor(&mut w);
    let bx = w
        .create_and_add_body(&scenes::cube(0.5, Vec3::new(0.0, 0.5, 0.0)))
        .unwrap();
    let cap = w
        .create_and_add_body(
            &BodyCreationSettings::new(
                Shape::capsule(0.8, 0.2).unwrap(),
                Vec3::new(0.0, 1.5, 0.0),
                MotionType::Dynamic,
            )
            .with_rotation(Quat::from_rotation_x(core::f32::consts::FRAC_PI_2)),
        )
        .unwrap();
    let ball = w
        .create_and_add_body(&BodyCreationSettings::new(
            Shape::sphere(0.2).unwrap(),
            Vec3::new(0.0, 3.0, 0.9),
            MotionType::Dynamic,
        ))
        .unwrap();
    for _ in 0..600 {
        step(&mut w, 1);
        for id in [bx, cap, ball] {
            assert!(
                w.position(id).unwrap().y > 0.15,
                "a body fell through the floor"
            );
        }
    }
    // the box is still where it was; everything has settled
    assert!((w.position(bx).unwrap() - Vec3::new(0.0, 0.5, 0.0)).length() < 0.05);
    assert!(w.linear_velocity(bx).unwrap().length() < 1e-3);
    let c = w.position(cap).unwrap();
    assert!(c.y <= 1.2 && c.y > 1.2 - 0.021, "capsule at {c}");
    assert!(w.linear_velocity(cap).unwrap().length() < 1e-3);
    let b = w.position(ball).unwrap();
    assert!(b.y <= 0.2 && b.y > 0.2 - 0.021, "ball at {b}");
    // deflected outwards (+z), rolling: a sphere has no rolling resistance
    assert!(
        b.z > 2.0 && w.linear_velocity(ball).unwrap().z > 0.1,
        "ball at {b}"
    );
}

/// A box on a slope sticks while tan θ < μ and otherwise slides with
/// a = g (sin θ − μ cos θ).
#[test]
fn box_on_a_slope_sticks_or_slides_as_coulomb_says() {
    let mu = 0.5f32;
    for (deg, slides) in [(20.0f32, false), (35.0, true)] {
        let mut w = world(undamped());
        let q = Quat::from_rotation_z(deg.to_radians());
        w.create_and_add_body(
            &scenes::floor()
                .with_rotation(q)
                .with_position(q * Vec3::new(0.0, -1.0, 0.0))
                .with_friction(mu),
        )
        .unwrap();
        let up = q * Vec3::Y;
        let id = w
            .create_and_add_body(
                &scenes::cube(0.5, up * 0.5)
                    .with_rotation(q)
                    .with_friction(mu),
            )
            .unwrap();
        step(&mut w, 30);
        let v0 = w.linear_velocity(id).unwrap().length();
        step(&mut w, 60);
        let v1 = w.linear_velocity(id).unwrap().length();
        if slides {
            let theta = deg.to_radians();
            let expected = 9.81 * (theta.sin() - mu * theta.cos());
            let measured = (v1 - v0) / (60.0 * DT);
            println!("slope {deg}°: a = {measured:.4} m/s², expected {expected:.4}");
            assert!((measured - expected).abs() / expected < 0.02);
        } else {
            assert!(v1 < 1e-4, "slid at {v1} m/s on a {deg}° slope");
        }
    }
}

#[test]
fn sensors_report_overlaps_but_push_nothing() {
    let mut w = world(PhysicsSettings {
        gravity: Vec3::ZERO,
        ..undamped()
    });
    let sensor = w
        .create_and_add_body(
            &BodyCreationSettings::new(
                Shape::cuboid(Vec3::splat(1.0)).unwrap(),
                Vec3::ZERO,
                MotionType::Static,
            )
            .with_sensor(true),
        )
        .unwrap();
    let ball = w
        .create_and_add_body(
            &BodyCreationSettings::new(
                Shape::sphere(0.25).unwrap(),
                Vec3::new(-3.0, 0.0, 0.0),
                MotionType::Dynamic,
            )
            .with_linear_velocity(Vec3::new(3.0, 0.0, 0.0)),
        )
        .unwrap();
    let mut seen = 0;
    for _ in 0..120 {
        let stats = w.update(DT, 1, pool()).unwrap();
        let hits = w
            .contacts()
            .filter(|c| c.is_sensor && c.body_a == sensor && c.body_b == ball)
            .count();
        assert_eq!(stats.sensor_manifolds as usize, hits);
        seen += hits;
        assert_eq!(w.linear_velocity(ball).unwrap(), Vec3::new(3.0, 0.0, 0.0));
    }
    assert!(
        seen > 20,
        "the ball must be seen inside the sensor ({seen} steps)"
    );
}

#[test]
fn same_scene_gives_the_same_hash_run_after_run() {
    let run = || {
        let (mut w, _) = scenes::towers().build(PhysicsSettings::default()).unwrap();
        for _ in 0..60 {
            w.update(DT, 1, pool()).unwrap();
        }
        w.state_hash()
    };
    assert_eq!(run(), run());
}

/// 400 random spheres, capsules and boxes (some thin) dropped from up to 12 m
/// onto the floor, starting partly overlapping: nothing turns NaN, nothing
/// sinks through the 2 m floor, and after 10 s everything over the floor
/// rests on top of it (centres above 0, within the tolerated penetration).
#[test]
fn random_mixed_pile_stays_finite_and_above_the_floor() {
    let mut w = world(PhysicsSettings::default());
    add_floor(&mut w);
    let mut k = 0u64;
    let mut r = || {
        k += 1;
        scenes::unit_random(k)
    };
    let mut ids = Vec::new();
    for i in 0..400 {
        let p = Vec3::new(
            r() * 8.0 - 4.0,
            0.5 + (i / 40) as f32 * 1.2 + r() * 0.5,
            r() * 8.0 - 4.0,
        );
        let shape = match i % 3 {
            0 => Shape::sphere(0.2 + r() * 0.4).unwrap(),
            1 => Shape::capsule(0.1 + r() * 0.5, 0.1 + r() * 0.3).unwrap(),
            _ => Shape::cuboid(Vec3::new(
                0.1 + r() * 0.5,
                0.05 + r() * 0.5,
                0.1 + r() * 0.5,
            ))
            .unwrap(),
        };
        let q = Quat::from_rotation_x(r() * 6.0) * Quat::from_rotation_z(r() * 6.0);
        let s = BodyCreationSettings::new(shape, p, MotionType::Dynamic)
            .with_rotation(q)
            .with_restitution(r() * 0.5)
            .with_friction(r());
        ids.push(w.create_and_add_body(&s).unwrap());
    }
    for _ in 0..600 {
        w.update(DT, 1, pool()).unwrap();
        for &id in &ids {
            let p = w.position(id).unwrap();
            assert!(p.is_finite() && w.linear_velocity(id).unwrap().is_finite());
            if p.x.abs() < 49.0 && p.z.abs() < 49.0 {
                assert!(p.y > -1.0, "a body sank through the floor: {p}");
            }
        }
        w.check_sleep_invariants().unwrap();
    }
    for &id in &ids {
        let p = w.position(id).unwrap();
        if p.x.abs() < 49.0 && p.z.abs() < 49.0 {
            assert!(p.y > 0.0, "a body ended inside the floor: {p}");
        }
    }
}
