//! Continuous collision (`MotionQuality::LinearCast`): fast bodies against
//! a thin static wall, in 1,000 random trials each, with `Discrete` as the
//! control that shows the test can fail; grazing the floor costs nothing;
//! the same bits at any thread count and after a snapshot. Each test
//! prints its figure.

mod common;
use archipelago::*;
use common::*;

#[test]
fn fast_linear_cast_bodies_never_pass_a_thin_wall() {
    let sphere = Shape::sphere(0.1).unwrap();
    let plate = Shape::cuboid(Vec3::new(0.025, 0.2, 0.15)).unwrap();
    let n = 1000;
    for (name, shape, speed) in [
        ("sphere r 0.1", sphere, 50.0),
        ("0.05 m plate", plate, 30.0),
    ] {
        let (discrete, _) =
            shots_through(&mut wall_world(), shape, speed, MotionQuality::Discrete, n);
        let (cast, hits) = shots_through(
            &mut wall_world(),
            shape,
            speed,
            MotionQuality::LinearCast,
            n,
        );
        println!(
            "{name} at {speed} m/s into a 0.2 m wall: passed {discrete}/{n} discrete, \
             {cast}/{n} with LinearCast ({hits} steps stopped by a sweep)"
        );
        assert!(
            discrete > 0,
            "the discrete control never passed: the test could not fail"
        );
        assert_eq!(cast, 0);
        // the rest reached the wall at the end of a step, where the
        // discrete contact caught them
        assert!(hits as usize >= n / 2, "the sweep stopped most shots");
    }
}

/// A linear-cast sphere shot head-on at the wall at 50 m/s stops at it:
/// after the sweep stopped it, its centre sits no deeper than the allowed
/// sink (0.25 × 0.1 m) past touching, and one step later the contact has
/// taken its speed (restitution 0).
#[test]
fn a_head_on_shot_stops_at_the_wall_within_the_allowed_sink() {
    let mut w = wall_world();
    let r = 0.1;
    let id = w
        .create_and_add_body(
            &BodyCreationSettings::new(
                Shape::sphere(r).unwrap(),
                Vec3::new(-1.37, 0.0, 0.0),
                MotionType::Dynamic,
            )
            .with_linear_velocity(Vec3::new(50.0, 0.0, 0.0))
            .with_motion_quality(MotionQuality::LinearCast)
            .with_gravity_factor(0.0),
        )
        .unwrap();
    let touching = -WALL_HALF.x - r;
    let mut stopped_at = None;
    for k in 0..10 {
        let stats = w.update(DT, 1, pool()).unwrap();
        let x = w.position(id).unwrap().x;
        if stats.linear_cast_hits > 0 && stopped_at.is_none() {
            stopped_at = Some((k, x));
        }
        assert!(
            x <= touching + 0.25 * r + 1e-4,
            "step {k}: x {x} past the allowed sink"
        );
    }
    let (k, x) = stopped_at.expect("the sweep stopped the shot");
    let v = w.linear_velocity(id).unwrap();
    println!(
        "head-on at 50 m/s: stopped in step {k} at x {x:.4} (touching: {touching}, \
         sink {:.4} m of 0.025 allowed); velocity after: {v:?}",
        x - touching
    );
    assert!(x > touching, "it moved up to the wall, not short of it");
    assert!(v.x.abs() < 0.5, "the contact took its speed: {v:?}");
}

/// A linear-cast sphere rolling at 50 m/s on the floor is not held back by
/// the floor it touches: its path is the discrete one's to 1 mm.
#[test]
fn grazing_the_floor_is_left_to_the_discrete_contacts() {
    let run = |quality| {
        let mut w = world(PhysicsSettings::default());
        add_floor(&mut w);
        let id = w
            .create_and_add_body(
                &BodyCreationSettings::new(
                    Shape::sphere(0.1).unwrap(),
                    Vec3::new(0.0, 0.1, 0.0),
                    MotionType::Dynamic,
                )
                .with_linear_velocity(Vec3::new(50.0, 0.0, 0.0))
                .with_motion_quality(quality),
            )
            .unwrap();
        let (mut casts, mut hits) = (0, 0);
        for _ in 0..30 {
            let s = w.update(DT, 1, pool()).unwrap();
            (casts, hits) = (casts + s.linear_casts, hits + s.linear_cast_hits);
        }
        (w.position(id).unwrap(), casts, hits)
    };
    let (discrete, _, _) = run(MotionQuality::Discrete);
    let (cast, casts, hits) = run(MotionQuality::LinearCast);
    println!(
        "rolling at 50 m/s for 0.5 s: x {:.4} discrete, {:.4} linear cast ({casts} sweeps, {hits} stops)",
        discrete.x, cast.x
    );
    assert_eq!(casts, 30, "it was swept every step");
    assert_eq!(hits, 0);
    assert!((discrete - cast).length() < 1e-3);
}

/// Fast linear-cast bodies of every shape raining onto a floor and
/// against walls: the same hash at 1 and 2 threads, and a snapshot keeps
/// the motion quality (the restored world runs on to the same bits).
#[test]
fn linear_casts_are_deterministic_and_survive_a_snapshot() {
    let build = || {
        let mut w = world(PhysicsSettings::default());
        add_floor(&mut w);
        for (x, z) in [(-3.0, 0.0), (3.0, 0.0), (0.0, -3.0), (0.0, 3.0)] {
            let half = if x == 0.0 {
                Vec3::new(3.0, 10.0, 0.1)
            } else {
                Vec3::new(0.1, 10.0, 3.0)
            };
            w.create_and_add_body(&BodyCreationSettings::new(
                Shape::cuboid(half).unwrap(),
                Vec3::new(x, 10.0, z),
                MotionType::Static,
            ))
            .unwrap();
        }
        let hull = w
            .add_hull(
                &ConvexHull::from_points(&[
                    Vec3::new(0.2, 0.0, 0.0),
                    Vec3::new(-0.1, 0.17, 0.0),
                    Vec3::new(-0.1, -0.17, 0.0),
                    Vec3::new(0.0, 0.0, 0.25),
                    Vec3::new(0.0, 0.0, -0.05),
                ])
                .unwrap(),
            )
            .unwrap();
        let shapes = [
            Shape::sphere(0.1).unwrap(),
            Shape::cuboid(Vec3::new(0.03, 0.15, 0.1)).unwrap(),
            Shape::capsule(0.1, 0.05).unwrap(),
            hull,
        ];
        let mut seed = 5u64;
        for k in 0..40 {
            let v = Vec3::new(rng(&mut seed) - 0.5, -rng(&mut seed), rng(&mut seed) - 0.5) * 80.0;
            w.create_and_add_body(
                &BodyCreationSettings::new(
                    shapes[k % 4],
                    Vec3::new((k % 5) as f32 - 2.0, 1.0 + (k / 5) as f32 * 0.4, 0.0),
                    MotionType::Dynamic,
                )
                .with_linear_velocity(v)
                .with_restitution(0.2)
                .with_motion_quality(MotionQuality::LinearCast),
            )
            .unwrap();
        }
        w
    };
    let run = |threads: usize| {
        let pool = build_pinned_pool(Some(threads)).unwrap().pool;
        let mut w = build();
        let mut hits = 0;
        for _ in 0..120 {
            hits += w.update(DT, 1, &pool).unwrap().linear_cast_hits;
        }
        (w.state_hash(), hits)
    };
    let ((one, hits), (two, _)) = (run(1), run(2));
    println!(
        "40 fast bodies for 2 s: {hits} sweep stops, hash {one:016x} at 1 thread, {two:016x} at 2"
    );
    assert!(hits > 0);
    assert_eq!(one, two);

    let mut w = build();
    step(&mut w, 10);
    let mut snap = Vec::new();
    w.save_state(&mut snap).unwrap();
    step(&mut w, 110);
    let mut fresh = PhysicsSystem::new(Capacities::default(), PhysicsSettings::default()).unwrap();
    fresh.restore_state(&snap).unwrap();
    let casting = fresh
        .body_ids()
        .into_iter()
        .filter(|&id| fresh.motion_quality(id).unwrap() == MotionQuality::LinearCast)
        .count();
    step(&mut fresh, 110);
    println!(
        "restored: {casting} linear-cast bodies, hash {:016x}",
        fresh.state_hash()
    );
    assert_eq!(casting, 40);
    assert_eq!(fresh.state_hash(), w.state_hash());
    assert_eq!(w.state_hash(), one);
    // nothing left the box of walls and floor
    for id in w.body_ids() {
        if w.motion_type(id).unwrap() != MotionType::Dynamic {
            continue;
        }
        let p = w.position(id).unwrap();
        assert!(
            p.y > -0.01 && p.x.abs() < 3.0 && p.z.abs() < 3.0,
            "{id:?} escaped: {p:?}"
        );
    }
}

/// The case: a 5 cm thick 1 × 1 m box falling flat at 20 m/s onto
/// the floor from 0.87 m up, so that discrete, its third step ends 15 cm
/// deep (a step moves it 0.33 m) and it is pushed out over the following
/// steps; with LinearCast its lowest
/// corner never sinks past the allowed depth (a quarter of its 2.5 cm
/// inner radius) plus the penetration slop (2 cm) the resting contact
/// settles within. Tilted 3°, it lands on an edge and the rest of it
/// swings down by rotation, which the sweep does not cover: that depth is
/// printed, not held to the bound.
#[test]
fn a_thin_box_dropped_at_20_m_s_barely_dips_into_the_floor() {
    let deepest = |quality, tilt: f32| {
        let mut w = world(PhysicsSettings::default());
        add_floor(&mut w);
        let half = Vec3::new(0.5, 0.025, 0.5);
        let id = w
            .create_and_add_body(
                &BodyCreationSettings::new(
                    Shape::cuboid(half).unwrap(),
                    Vec3::new(0.0, 0.89, 0.0),
                    MotionType::Dynamic,
                )
                .with_rotation(Quat::from_rotation_x(tilt))
                .with_linear_velocity(Vec3::new(0.0, -20.0, 0.0))
                .with_motion_quality(quality),
            )
            .unwrap();
        let mut deepest = 0.0f32;
        for _ in 0..60 {
            w.update(DT, 1, pool()).unwrap();
            let (p, q) = (w.position(id).unwrap(), w.rotation(id).unwrap());
            for k in 0..8 {
                let s = |bit: usize| if k & (1 << bit) != 0 { 1.0 } else { -1.0 };
                let corner = p + q * (half * Vec3::new(s(0), s(1), s(2)));
                deepest = deepest.max(-corner.y);
            }
        }
        deepest
    };
    for tilt in [0.0f32, 3f32.to_radians()] {
        let discrete = deepest(MotionQuality::Discrete, tilt);
        let cast = deepest(MotionQuality::LinearCast, tilt);
        println!(
            "thin box at 20 m/s, tilted {:.0}°: deepest corner {discrete:.4} m below the floor \
             discrete, {cast:.4} m linear cast",
            tilt.to_degrees()
        );
        if tilt == 0.0 {
            assert!(discrete > 0.05, "the discrete control dips deep");
            assert!(cast <= 0.25 * 0.025 + 0.02, "linear cast dipped {cast}");
        }
    }
}

/// A linear-cast sphere jointed to a static post with `collide_connected`
/// off is not stopped by the post it overlaps and flies into: the sweep
/// skips the pair as the narrow phase does, so its path is the discrete
/// one's.
#[test]
fn a_joint_without_contacts_exempts_its_static_partner_from_the_sweep() {
    let run = |quality| {
        let mut w = world(PhysicsSettings::default());
        let post = w
            .create_and_add_body(&BodyCreationSettings::new(
                Shape::cuboid(Vec3::new(0.1, 1.0, 0.1)).unwrap(),
                Vec3::ZERO,
                MotionType::Static,
            ))
            .unwrap();
        let ball = w
            .create_and_add_body(
                &BodyCreationSettings::new(
                    Shape::sphere(0.1).unwrap(),
                    Vec3::new(0.15, 0.5, 0.0),
                    MotionType::Dynamic,
                )
                .with_linear_velocity(Vec3::new(-30.0, 0.0, 0.0))
                .with_gravity_factor(0.0)
                .with_motion_quality(quality),
            )
            .unwrap();
        w.create_joint(&JointSettings::distance(
            Some(post),
            Some(ball),
            Vec3::new(0.0, 0.5, 0.0),
            Vec3::ZERO,
            0.0,
            3.0,
        ))
        .unwrap();
        let mut hits = 0;
        let mut path = Vec::new();
        for _ in 0..10 {
            hits += w.update(DT, 1, pool()).unwrap().linear_cast_hits;
            path.push(w.position(ball).unwrap());
        }
        (path, hits)
    };
    let (discrete, _) = run(MotionQuality::Discrete);
    let (cast, hits) = run(MotionQuality::LinearCast);
    println!(
        "through a jointed post at 30 m/s: x after 2 steps {:.3} discrete, {:.3} linear cast ({hits} stops)",
        discrete[1].x, cast[1].x
    );
    // a contact would hold its centre at x >= 0.2 (the post's face plus
    // its radius); without one it is inside or past the post
    assert!(discrete[1].x < 0.0, "it went into the post");
    assert_eq!(hits, 0);
    for (d, c) in discrete.iter().zip(&cast) {
        assert!((*d - *c).length() < 1e-4, "{d:?} vs {c:?}");
    }
}
