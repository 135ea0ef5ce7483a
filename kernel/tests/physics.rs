//! Physics checked against numbers. Run in release mode (`cargo test
//! --release`): the pyramid test simulates 1240 cubes for 10 s.

mod common;
use archipelago::*;
use common::*;

/// Semi-implicit Euler: v_n = n g dt, x_n = Σ v_k dt = g dt² n(n+1)/2.
#[test]
fn free_fall_matches_the_integrators_closed_form() {
    let mut w = world(undamped());
    let s = BodyCreationSettings::new(
        Shape::sphere(0.5).unwrap(),
        Vec3::new(0.0, 100.0, 0.0),
        MotionType::Dynamic,
    );
    let id = w.create_and_add_body(&s).unwrap();
    let n = 60.0f64;
    step(&mut w, 60);
    let fallen = 100.0 - w.position(id).unwrap().y as f64;
    let closed = 9.81 * (DT as f64).powi(2) * n * (n + 1.0) / 2.0;
    let rel = (fallen - closed).abs() / closed;
    println!(
        "free fall: {fallen:.6} m vs closed form {closed:.6} m (rel {rel:.2e}), analytic 4.905 m"
    );
    assert!(rel < 1e-4, "relative error {rel}");
    assert!((fallen - 4.905).abs() / 4.905 < 0.02);
    let v = w.linear_velocity(id).unwrap().y as f64;
    assert!((v + 9.81).abs() < 1e-3 * 9.81, "v = {v}");
}

/// A box resting on the floor: the floor pushes m·g·dt per step, and the
/// box stays put.
#[test]
fn resting_box_impulse_is_m_g_dt_and_it_does_not_drift() {
    let mut w = world(PhysicsSettings::default());
    let floor = add_floor(&mut w);
    // sleeping off: the test reads the contact impulses of every step
    let id = w
        .create_and_add_body(
            &scenes::cube(0.5, Vec3::new(0.0, 0.5, 0.0)).with_allow_sleeping(false),
        )
        .unwrap();
    let mass = w.mass(id).unwrap();
    step(&mut w, 60);
    let start = w.position(id).unwrap();
    let mut worst = 0.0f32;
    for _ in 0..600 {
        step(&mut w, 1);
        let impulse: f32 = w
            .contacts()
            .filter(|c| c.body_a == floor && c.body_b == id)
            .map(|c| c.total_normal_impulse())
            .sum();
        let expected = mass * 9.81 * DT;
        worst = worst.max((impulse - expected).abs() / expected);
    }
    let drift = (w.position(id).unwrap() - start).length();
    println!(
        "resting box: worst impulse error {:.4}%, drift {:.3e} m in 10 s",
        worst * 100.0,
        drift
    );
    assert!(worst < 0.01, "impulse off by {worst}");
    assert!(drift < 1e-3, "drift {drift}");
}

/// Equal spheres, restitution 1, head-on: velocities swap.
#[test]
fn equal_elastic_spheres_swap_velocities() {
    let mut w = world(PhysicsSettings {
        gravity: Vec3::ZERO,
        ..undamped()
    });
    let ball = |x: f32, vx: f32| {
        BodyCreationSettings::new(
            Shape::sphere(0.5).unwrap(),
            Vec3::new(x, 5.0, 0.0),
            MotionType::Dynamic,
        )
        .with_linear_velocity(Vec3::new(vx, 0.0, 0.0))
        .with_restitution(1.0)
    };
    let a = w.create_and_add_body(&ball(-2.0, 3.0)).unwrap();
    let b = w.create_and_add_body(&ball(2.0, -1.0)).unwrap();
    step(&mut w, 120);
    let (va, vb) = (w.linear_velocity(a).unwrap(), w.linear_velocity(b).unwrap());
    println!("after collision: va = {va}, vb = {vb}");
    assert!((va.x + 1.0).abs() < 0.01, "va {va}");
    assert!((vb.x - 3.0).abs() < 0.03, "vb {vb}");
    assert!(va.y.abs() < 1e-4 && vb.y.abs() < 1e-4);
}

fn rng(seed: &mut u64) -> f32 {
    *seed += 1;
    scenes::unit_random(*seed)
}

/// 100 mixed bodies (spheres, boxes, capsules) colliding without floor or
/// gravity: contact impulses come in equal and opposite pairs, so linear
/// momentum is conserved up to float rounding.
#[test]
fn momentum_is_conserved_in_a_100_body_collision() {
    let mut w = world(PhysicsSettings {
        gravity: Vec3::ZERO,
        ..undamped()
    });
    let mut seed = 7u64;
    let mut ids = Vec::new();
    for i in 0..100 {
        let p = Vec3::new(
            (i % 5) as f32 * 1.3,
            ((i / 5) % 5) as f32 * 1.3,
            (i / 25) as f32 * 1.3,
        );
        let shape = match i % 3 {
            0 => Shape::sphere(0.4 + 0.2 * rng(&mut seed)).unwrap(),
            1 => Shape::cuboid(Vec3::new(0.3, 0.4, 0.5) * (0.8 + 0.4 * rng(&mut seed))).unwrap(),
            _ => Shape::capsule(0.3, 0.25).unwrap(),
        };
        // converge on the centre, plus a common drift so |P| is not ~0
        let to_centre = Vec3::new(2.6, 2.6, 1.95) - p;
        let v = to_centre * 1.5 + Vec3::new(0.5, -0.3, 0.2);
        let s = BodyCreationSettings::new(shape, p, MotionType::Dynamic)
            .with_linear_velocity(v)
            .with_angular_velocity(Vec3::new(rng(&mut seed), rng(&mut seed), rng(&mut seed)))
            .with_restitution(rng(&mut seed))
            .with_friction(rng(&mut seed));
        ids.push(w.create_and_add_body(&s).unwrap());
    }
    let momentum = |w: &PhysicsSystem| -> (glam::DVec3, f64) {
        let mut p = glam::DVec3::ZERO;
        let mut scale = 0.0;
        for &id in &ids {
            let mv = w.linear_velocity(id).unwrap().as_dvec3() * w.mass(id).unwrap() as f64;
            p += mv;
            scale += mv.length();
        }
        (p, scale)
    };
    let (p0, scale) = momentum(&w);
    let mut contacts = 0;
    for _ in 0..240 {
        step(&mut w, 1);
        contacts += w.contacts().count();
    }
    let (p1, _) = momentum(&w);
    let rel = (p1 - p0).length() / scale;
    println!("momentum: |ΔP| / Σ|mv| = {rel:.2e} over {contacts} manifold-steps");
    assert!(contacts > 500, "the bodies must actually collide");
    assert!(rel < 1e-4, "momentum drift {rel}");
}

/// Sliding box at 2 m/s with μ = 0.5 on a μ = 0.5 floor stops at
/// v²/(2 μ g) = 0.408 m.
#[test]
fn sliding_box_stops_where_friction_says() {
    let mut w = world(undamped());
    let floor_settings = scenes::floor().with_friction(0.5);
    w.create_and_add_body(&floor_settings).unwrap();
    let id = w
        .create_and_add_body(
            &scenes::cube(0.5, Vec3::new(0.0, 0.5, 0.0))
                .with_friction(0.5)
                .with_linear_velocity(Vec3::new(2.0, 0.0, 0.0)),
        )
        .unwrap();
    step(&mut w, 120);
    let x = w.position(id).unwrap().x;
    let expected = 4.0 / (2.0 * 0.5 * 9.81);
    println!(
        "sliding box stopped at {x:.4} m, expected {expected:.4} m ({:+.2}%)",
        100.0 * (x - expected) / expected
    );
    assert!(w.linear_velocity(id).unwrap().length() < 1e-3);
    assert!((x - expected).abs() / expected < 0.05);
}

/// Ten cubes stacked: after 20 s none has moved more than 1 cm sideways.
#[test]
fn ten_cube_tower_stands_for_20_seconds() {
    let mut w = world(PhysicsSettings::default());
    add_floor(&mut w);
    let ids: Vec<BodyId> = scenes::tower(0.0, 0.0, 10, scenes::TOWER_GAP)
        .iter()
        .map(|b| {
            w.create_and_add_body(&b.with_allow_sleeping(false))
                .unwrap()
        })
        .collect();
    let start: Vec<Vec3> = ids.iter().map(|&id| w.position(id).unwrap()).collect();
    step(&mut w, 1200);
    let mut worst = 0.0f32;
    for (id, p0) in ids.iter().zip(&start) {
        let d = w.position(*id).unwrap() - *p0;
        worst = worst.max((d.x * d.x + d.z * d.z).sqrt());
    }
    let top = w.position(ids[9]).unwrap().y;
    println!("tower: worst horizontal drift {worst:.2e} m, top at y = {top:.4}");
    assert!(worst < 0.01);
    assert!(top > 9.4, "the tower must not collapse (top at {top})");
}

/// Jolt's Pyramid: 1240 cubes. Between t = 2 s and t = 10 s no cube moves
/// more than 5 cm and none sinks through the floor.
#[test]
fn pyramid_stands() {
    let scene = scenes::pyramid();
    assert_eq!(scene.dynamic_count(), 1240);
    let (mut w, ids) = scene.build(PhysicsSettings::default()).unwrap();
    let cubes = &ids[1..];
    step(&mut w, 120);
    let at_2s: Vec<Vec3> = cubes.iter().map(|&id| w.position(id).unwrap()).collect();
    let mut lowest = f32::INFINITY;
    for _ in 0..480 {
        step(&mut w, 1);
        for &id in cubes {
            lowest = lowest.min(w.position(id).unwrap().y);
        }
    }
    let mut worst = (0.0f32, 0usize);
    for (k, (&id, p0)) in cubes.iter().zip(&at_2s).enumerate() {
        let d = (w.position(id).unwrap() - *p0).length();
        if d > worst.0 {
            worst = (d, k);
        }
    }
    let stats = w.last_stats();
    println!(
        "pyramid: largest movement 2 s..10 s = {:.4} m (cube {}), lowest centre y = {lowest:.4}, {} manifolds, {} points",
        worst.0, worst.1, stats.manifolds, stats.contact_points
    );
    assert!(worst.0 < 0.05, "cube {} moved {} m", worst.1, worst.0);
    assert!(lowest > 0.9, "a cube sank to y = {lowest}");
}
