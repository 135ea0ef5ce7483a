//! Compound shapes as bodies: a compound of two cubes is the 2 × 1 × 1
//! box it fills, a table stands on its four legs with the floor pushing
//! m·g·dt, a dumbbell rolls down a slope at the acceleration its inertia
//! gives, queries and contacts name the child they touch, a fast compound
//! does not pass a thin wall, and bad compounds are refused with nothing
//! changed. Each test prints its figure.

mod common;
use archipelago::*;
use common::*;

fn cuboid(x: f32, y: f32, z: f32) -> Shape {
    Shape::cuboid(Vec3::new(x, y, z)).unwrap()
}

/// Adds the compound of `kids` to `w`: its shape and its principal frame
/// in the frame the children were given in (`(origin, rotation)`).
fn add(w: &mut PhysicsSystem, kids: &[CompoundChild]) -> (Shape, Vec3, Quat) {
    let c = CompoundShape::new(kids, w.shapes()).unwrap();
    let (origin, turn) = c.frame();
    (w.add_compound(c).unwrap(), origin, turn)
}

/// A body of the compound `(shape, origin, turn)` whose given frame stands
/// at `at`, not turned: the body (the principal frame) goes at
/// `at + origin`, rotated `turn`.
fn placed(c: (Shape, Vec3, Quat), at: Vec3, motion: MotionType) -> BodyCreationSettings {
    let (shape, origin, turn) = c;
    BodyCreationSettings::new(shape, at + origin, motion).with_rotation(turn)
}

/// The scene's table: a 1.2 × 0.1 × 0.8 m top (child 0) on four 0.1 ×
/// 0.7 × 0.1 m legs (children 1–4 at (∓0.55, ∓0.35), x first), feet at
/// y = 0 of the given frame.
fn table() -> Vec<CompoundChild> {
    scenes::compound_children().swap_remove(0)
}

/// Two spheres of radius `r` at z = ±`half_width` on a bar along z (a
/// capsule of radius `bar`), centre at the origin.
fn dumbbell(r: f32, half_width: f32, bar: f32) -> Vec<CompoundChild> {
    vec![
        CompoundChild::new(Shape::sphere(r).unwrap(), Vec3::new(0.0, 0.0, -half_width)),
        CompoundChild::new(Shape::sphere(r).unwrap(), Vec3::new(0.0, 0.0, half_width)),
        CompoundChild::new(Shape::capsule(half_width, bar).unwrap(), Vec3::ZERO)
            .rotated(Quat::from_rotation_x(core::f32::consts::FRAC_PI_2)),
    ]
}

/// Two unit cubes side by side against one 2 × 1 × 1 box, each dropped
/// from 10 m in a world of its own: the same mass, the same free fall
/// (the integrator's closed form, as any body), and at rest the same
/// height to 1 mm, one manifold of four points under the compound (the
/// two cubes' eight corners reduced to the widest four) pushed m·g·dt by
/// the floor to 0.5%.
#[test]
fn two_cubes_fall_and_rest_as_the_box_they_fill() {
    let cubes = [
        CompoundChild::new(cuboid(0.5, 0.5, 0.5), Vec3::new(-0.5, 0.0, 0.0)),
        CompoundChild::new(cuboid(0.5, 0.5, 0.5), Vec3::new(0.5, 0.0, 0.0)),
    ];
    let start = Vec3::new(0.0, 10.0, 0.0);
    let mut wc = world(undamped());
    let floor_c = add_floor(&mut wc);
    let c = add(&mut wc, &cubes);
    let comp = wc
        .create_and_add_body(&placed(c, start, MotionType::Dynamic).with_allow_sleeping(false))
        .unwrap();
    let mut wb = world(undamped());
    add_floor(&mut wb);
    let bar = wb
        .create_and_add_body(
            &BodyCreationSettings::new(cuboid(1.0, 0.5, 0.5), start, MotionType::Dynamic)
                .with_allow_sleeping(false),
        )
        .unwrap();
    let (mc, mb) = (wc.mass(comp).unwrap(), wb.mass(bar).unwrap());
    println!("compound of two cubes: {mc} kg, the 2 x 1 x 1 box: {mb} kg");
    assert!((mc - mb).abs() / mb < 1e-6);

    step(&mut wc, 60);
    step(&mut wb, 60);
    let n = 60.0f64;
    let closed = 9.81 * (DT as f64).powi(2) * n * (n + 1.0) / 2.0;
    let fallen = f64::from(start.y - wc.position(comp).unwrap().y);
    println!("fell {fallen:.6} m in 1 s (closed form {closed:.6} m, analytic 4.905 m)");
    assert!((fallen - closed).abs() / closed < 1e-4);
    assert!(wc.contacts().next().is_none(), "still in the air");

    step(&mut wc, 240);
    step(&mut wb, 240);
    let (yc, yb) = (wc.position(comp).unwrap().y, wb.position(bar).unwrap().y);
    let expected = mc * 9.81 * DT;
    let mut worst = 0.0f32;
    for _ in 0..60 {
        step(&mut wc, 1);
        let touching: Vec<Contact> = wc.contacts().collect();
        assert_eq!(touching.len(), 1, "one manifold: {touching:?}");
        let m = &touching[0];
        assert_eq!((m.body_a, m.body_b), (floor_c, comp));
        assert_eq!(m.points().len(), 4);
        worst = worst.max((m.total_normal_impulse() - expected).abs() / expected);
    }
    let tilt = wc.rotation(comp).unwrap() * c.2.conjugate();
    let tilt = tilt.angle_between(Quat::IDENTITY).to_degrees();
    println!(
        "at rest: compound at y {yc:.5} m, box at {yb:.5} m ({:+.2e}); \
         floor impulse error {:.3}% of m g dt; tilt {tilt:.3} deg",
        yc - yb,
        100.0 * worst
    );
    assert!((yc - yb).abs() < 1e-3);
    assert!(worst < 5e-3);
    assert!(tilt < 0.1);
}

/// A table set on the floor stands for 10 s: the top stays level (tilt
/// under 0.1°) at its height to 1 cm, it falls asleep, and while it
/// stood the floor held it by one manifold of four points, one under each
/// leg, naming a leg (children 1–4, never the top; so did the contact's
/// added event) and pushing m·g·dt.
#[test]
fn a_table_stands_on_its_four_legs() {
    let mut w = world(PhysicsSettings::default());
    let floor = add_floor(&mut w);
    let t = add(&mut w, &table());
    let id = w
        .create_and_add_body(
            &placed(t, Vec3::new(0.0, 0.002, 0.0), MotionType::Dynamic).with_contact_events(true),
        )
        .unwrap();
    let mass = w.mass(id).unwrap();
    // the first step's contact is added once, naming a leg
    step(&mut w, 1);
    let added: Vec<ContactEvent> = w.contact_events().to_vec();
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(added[0].kind, ContactEventKind::Added);
    assert!((1..=4).contains(&added[0].sub_shapes[1]), "{added:?}");
    let top = |w: &PhysicsSystem| {
        let (p, q) = (w.position(id).unwrap(), w.rotation(id).unwrap());
        // the top's centre, given at (0, 0.75, 0)
        p + q * (t.2.conjugate() * (Vec3::new(0.0, 0.75, 0.0) - t.1))
    };
    // (it falls asleep after 0.5 s at rest: read its contacts before)
    step(&mut w, 9);
    let expected = mass * 9.81 * DT;
    let mut worst = 0.0f32;
    for _ in 0..15 {
        step(&mut w, 1);
        let touching: Vec<Contact> = w.contacts().collect();
        assert_eq!(touching.len(), 1, "one manifold: {touching:?}");
        let m = &touching[0];
        assert_eq!((m.body_a, m.body_b), (floor, id));
        assert!(
            (1..=4).contains(&m.sub_shapes[1]),
            "a leg: {:?}",
            m.sub_shapes
        );
        assert_eq!(m.points().len(), 4);
        let mut legs = [false; 4];
        for p in m.points() {
            legs[usize::from(p.position.x > 0.0) + 2 * usize::from(p.position.z > 0.0)] = true;
        }
        assert_eq!(legs, [true; 4], "a point under each leg: {:?}", m.points());
        worst = worst.max((m.total_normal_impulse() - expected).abs() / expected);
    }
    step(&mut w, 575);
    let p = top(&w);
    let tilt = (w.rotation(id).unwrap() * t.2.conjugate())
        .angle_between(Quat::IDENTITY)
        .to_degrees();
    println!(
        "table ({mass:.1} kg): floor impulse error {:.3}% of m g dt; after 10 s the top at \
         {p:.4} (given y 0.75), tilt {tilt:.4} deg, asleep {}",
        100.0 * worst,
        w.is_sleeping(id).unwrap()
    );
    assert!(worst < 0.01);
    assert!((p.y - 0.75).abs() < 0.01 && p.x.abs() < 0.01 && p.z.abs() < 0.01);
    assert!(tilt < 0.1);
    assert!(w.is_sleeping(id).unwrap());
}

/// A dumbbell (two spheres of radius 0.2 m on a bar) lying across a 15°
/// slope rolls down it without slipping, at g sin θ / (1 + I/(m r²)) to
/// 2%, where I is the moment about the bar worked from the children, and
/// straight (drift along the bar under 1 mm).
#[test]
fn a_dumbbell_rolls_down_a_slope_at_its_inertias_acceleration() {
    let theta = 15f32.to_radians();
    let (r, half_width, bar) = (0.2, 0.45, 0.06);
    let kids = dumbbell(r, half_width, bar);
    // I about the bar (z): the spheres' own, the bar's axial moment; the
    // spheres' offsets lie along the axis and add nothing
    let none = ShapeStore::new();
    let (ms, is) = Shape::sphere(r).unwrap().mass_properties(1.0, &none);
    let (mb, ib) = Shape::capsule(half_width, bar)
        .unwrap()
        .mass_properties(1.0, &none);
    let (m, i_axis) = (2.0 * ms + mb, 2.0 * is.x + ib.y);
    let want = 9.81 * theta.sin() / (1.0 + i_axis / (m * r * r));

    let mut w = world(undamped());
    let normal = Vec3::new(theta.sin(), theta.cos(), 0.0);
    let slope = BodyCreationSettings::new(cuboid(30.0, 1.0, 5.0), -normal, MotionType::Static)
        .with_rotation(Quat::from_rotation_z(-theta))
        .with_friction(1.0);
    w.create_and_add_body(&slope).unwrap();
    let c = add(&mut w, &kids);
    let down = Vec3::new(theta.cos(), -theta.sin(), 0.0);
    let at = normal * r - down * 10.0;
    let id = w
        .create_and_add_body(&placed(c, at, MotionType::Dynamic).with_friction(1.0))
        .unwrap();
    // one of the compound's principal moments is the hand-worked one
    let (_, principal) = c.0.mass_properties(1.0, w.shapes());
    let closest = principal
        .to_array()
        .iter()
        .map(|p| (p - i_axis).abs() / i_axis)
        .fold(f32::INFINITY, f32::min);
    assert!(closest < 1e-4, "{principal:?} vs {i_axis}");

    let speed = |w: &PhysicsSystem| w.linear_velocity(id).unwrap().dot(down);
    step(&mut w, 30);
    let v0 = speed(&w);
    step(&mut w, 90);
    let v1 = speed(&w);
    let a = (v1 - v0) / 1.5;
    let spin = w.angular_velocity(id).unwrap();
    let slip = (w.linear_velocity(id).unwrap() + spin.cross(-normal * r)).length();
    let drift = w.position(id).unwrap().z;
    println!(
        "dumbbell rolled at {a:.4} m/s² (expected {want:.4}, {:+.2}%; a sphere alone would \
         roll at {:.4}), slip {slip:.2e} m/s, drift along the bar {drift:.2e} m",
        100.0 * (a - want) / want,
        5.0 / 7.0 * 9.81 * theta.sin()
    );
    assert!((a - want).abs() / want < 0.02);
    assert!(slip < 0.02);
    assert!(drift.abs() < 1e-3);
    let h = w.position(id).unwrap().dot(normal);
    assert!((h - r).abs() < 0.01, "height over the slope {h}");
}

/// Rays, shape casts and points against a static table name the child:
/// down onto the top (child 0), sideways into each leg (1–4) at the
/// distance the geometry gives; a point inside a leg finds the table, one
/// under the top between the legs finds nothing.
#[test]
fn queries_name_the_child_they_hit() {
    let mut w = world(PhysicsSettings::default());
    let t = add(&mut w, &table());
    let id = w
        .create_and_add_body(&placed(t, Vec3::ZERO, MotionType::Static))
        .unwrap();
    let all = QueryFilter::default();
    let down = Ray::new(Vec3::new(0.3, 5.0, 0.1), Vec3::NEG_Y, 10.0).unwrap();
    let hit = w.cast_ray(&down, &all).unwrap();
    println!("down onto the top: {hit:?}");
    assert_eq!((hit.body, hit.sub_shape), (id, 0));
    assert!((hit.distance - 4.2).abs() < 1e-4 && (hit.normal - Vec3::Y).length() < 1e-4);
    for (leg, (x, z)) in [
        (-0.55f32, -0.35f32),
        (0.55, -0.35),
        (-0.55, 0.35),
        (0.55, 0.35),
    ]
    .into_iter()
    .enumerate()
    {
        // from outside, along x towards the leg's outer face
        let dir = Vec3::new(x.signum(), 0.0, 0.0) * -1.0;
        let ray = Ray::new(Vec3::new(x.signum() * 5.0, 0.3, z), dir, 10.0).unwrap();
        let hit = w.cast_ray(&ray, &all).unwrap();
        assert_eq!((hit.body, hit.sub_shape), (id, leg as u32 + 1), "leg {leg}");
        assert!((hit.distance - 4.4).abs() < 1e-4, "{hit:?}");
        assert!((hit.normal + dir).length() < 1e-4);
    }
    let sphere = Shape::sphere(0.1).unwrap();
    let path = Ray::new(Vec3::new(-0.2, 3.0, 0.0), Vec3::NEG_Y, 10.0).unwrap();
    let cast = w
        .cast_shape(&sphere, Quat::IDENTITY, &path, &all)
        .unwrap()
        .unwrap();
    println!("sphere cast onto the top: {cast:?}");
    assert_eq!((cast.body, cast.sub_shape), (id, 0));
    // stops touching the top (y 0.8): centre at 0.9, 2.1 m down
    assert!((cast.distance - 2.1).abs() < 1e-3);
    let mut found = Vec::new();
    w.overlap_point(Vec3::new(0.55, 0.2, -0.35), &all, &mut found)
        .unwrap();
    assert_eq!(found.len(), 1, "inside leg 2");
    found.clear();
    w.overlap_point(Vec3::new(0.0, 0.3, 0.0), &all, &mut found)
        .unwrap();
    assert!(found.is_empty(), "between the legs: {found:?}");
}

/// A box dropped onto a static table rests on its top as it rests on a
/// static box of the top's size at the same place: the same height to
/// 0.1 mm (both within the solver's penetration slop of touching), the
/// contact naming the top (child 0).
#[test]
fn a_box_rests_on_a_static_tables_top_as_on_a_box() {
    let drop = |on_table: bool| {
        let mut w = world(PhysicsSettings::default());
        let under = if on_table {
            let t = add(&mut w, &table());
            placed(t, Vec3::ZERO, MotionType::Static)
        } else {
            let top = cuboid(0.6, 0.05, 0.4);
            BodyCreationSettings::new(top, Vec3::new(0.0, 0.75, 0.0), MotionType::Static)
        };
        let under = w.create_and_add_body(&under).unwrap();
        let cube = w
            .create_and_add_body(
                &scenes::cube(0.1, Vec3::new(0.2, 1.5, 0.1)).with_allow_sleeping(false),
            )
            .unwrap();
        step(&mut w, 180);
        let touching: Vec<Contact> = w.contacts().collect();
        assert_eq!(touching.len(), 1, "{touching:?}");
        assert_eq!((touching[0].body_a, touching[0].body_b), (under, cube));
        (w.position(cube).unwrap().y, touching[0].sub_shapes)
    };
    let (on_table, sub) = drop(true);
    let (on_box, _) = drop(false);
    let slop = PhysicsSettings::default().penetration_slop;
    println!(
        "box dropped 0.6 m onto the table's top: rests at y {on_table:.5}, on a box there \
         {on_box:.5} (touching 0.9, slop {slop}); contact parts {sub:?}"
    );
    assert!((on_table - on_box).abs() < 1e-4);
    assert!(on_table > 0.9 - slop - 1e-3 && on_table < 0.9 + 1e-3);
    assert_eq!(sub, [0, 0]);
}

/// A dumbbell of two 0.1 m spheres on a thin bar shot at 50 m/s into a
/// 0.2 m wall in 300 random trials (`tests/ccd.rs`'s shots): with
/// `LinearCast` it never passes; `Discrete` shows that it would.
#[test]
fn a_fast_linear_cast_compound_never_passes_a_thin_wall() {
    let n = 300;
    let shot = |quality| {
        let mut w = wall_world();
        let c = add(&mut w, &dumbbell(0.1, 0.2, 0.03));
        shots_through(&mut w, c.0, 50.0, quality, n)
    };
    let (discrete, _) = shot(MotionQuality::Discrete);
    let (cast, hits) = shot(MotionQuality::LinearCast);
    println!(
        "dumbbell at 50 m/s into a 0.2 m wall: passed {discrete}/{n} discrete, {cast}/{n} \
         with LinearCast ({hits} steps stopped by a sweep)"
    );
    assert!(discrete > 0, "the discrete control never passed");
    assert_eq!(cast, 0);
    assert!(hits as usize >= n / 2, "the sweep stopped most shots");
}

/// Bad compounds: no children, a nested compound, a mesh child, a hull of
/// another world; each refused with its typed error and the world
/// unchanged. A compound may be static, kinematic or dynamic.
#[test]
fn bad_compounds_are_refused_and_nothing_changes() {
    let mut w = world(PhysicsSettings::default());
    assert_eq!(
        CompoundShape::new(&[], w.shapes()),
        Err(CompoundError::NoChildren)
    );
    let (inner, _, _) = add(&mut w, &table());
    let nested = [
        CompoundChild::new(cuboid(0.5, 0.5, 0.5), Vec3::ZERO),
        CompoundChild::new(inner, Vec3::X),
    ];
    assert_eq!(
        CompoundShape::new(&nested, w.shapes()),
        Err(CompoundError::InvalidChild { index: 1 })
    );
    // a hull of another world: built there, refused here
    let mut other = world(PhysicsSettings::default());
    let corners: Vec<Vec3> = (0..8)
        .map(|k| Vec3::new((k & 1) as f32, ((k >> 1) & 1) as f32, ((k >> 2) & 1) as f32))
        .collect();
    let hull = other
        .add_hull(&ConvexHull::from_points(&corners).unwrap())
        .unwrap();
    let with_hull = CompoundShape::new(
        &[
            CompoundChild::new(hull, Vec3::ZERO),
            CompoundChild::new(cuboid(0.1, 0.1, 0.1), Vec3::X),
        ],
        other.shapes(),
    )
    .unwrap();
    let before = w.shapes().num_compounds();
    assert_eq!(
        w.add_compound(with_hull.clone()),
        Err(PhysicsError::InvalidShape)
    );
    assert_eq!(w.shapes().num_compounds(), before);
    assert!(other.add_compound(with_hull).is_ok());
    let second = CompoundShape::new(&table(), other.shapes()).unwrap();
    // a compound id this world never issued (another world's second)
    let stray = other.add_compound(second).unwrap();
    for motion in [
        MotionType::Static,
        MotionType::Kinematic,
        MotionType::Dynamic,
    ] {
        let id = w
            .create_and_add_body(&BodyCreationSettings::new(inner, Vec3::ZERO, motion))
            .unwrap();
        assert!(w.position(id).is_ok());
    }
    assert_eq!(
        w.create_body(&BodyCreationSettings::new(
            stray,
            Vec3::ZERO,
            MotionType::Dynamic
        )),
        Err(PhysicsError::InvalidShape)
    );
    assert_eq!(w.num_bodies(), 3);
}

/// The compounds scene: 500 tables, dumbbells, Ls and maces dropped in
/// five layers onto the floor. After 8 s every body is still in the world
/// and above the floor (no centre under y = 0), and most have come to
/// rest.
#[test]
fn the_compounds_scene_lands_and_settles() {
    let scene = scenes::compounds();
    let (mut w, ids) = scene.build(PhysicsSettings::default()).unwrap();
    for _ in 0..480 {
        w.update(DT, 1, pool()).unwrap();
    }
    let lowest = ids
        .iter()
        .skip(1)
        .map(|&id| w.position(id).unwrap().y)
        .fold(f32::INFINITY, f32::min);
    let awake = ids.iter().filter(|&&id| w.is_active(id).unwrap()).count();
    println!(
        "compounds scene after 8 s: {} bodies, lowest centre y {lowest:.3} m, {awake} awake",
        w.num_bodies()
    );
    assert_eq!(w.num_bodies(), ids.len());
    assert!(lowest > 0.0);
}
