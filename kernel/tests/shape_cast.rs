//! `cast_shape` through the public API, as a character controller uses it:
//! a capsule cast down finds the floor, cast sideways finds a wall, a
//! filter lets it through the wall; after steps, a cast sees where a box
//! came to rest. Distances are closed forms of the geometry, to the cast's
//! documented tolerance (at most 0.1 mm short, never past).

use archipelago::{
    BodyCreationSettings, Capacities, MotionType, PhysicsSettings, PhysicsSystem, Quat,
    QueryFilter, Ray, SerialExecutor, Shape, Vec3,
};

const TOLERANCE: f32 = 1e-4;

fn near(d: f32, expect: f32) -> bool {
    d <= expect + 1e-5 && d >= expect - TOLERANCE - 1e-5
}

#[test]
fn a_capsule_finds_the_floor_the_wall_and_a_resting_box() {
    let mut w = PhysicsSystem::new(Capacities::default(), PhysicsSettings::default()).unwrap();
    let floor = w
        .create_and_add_body(&BodyCreationSettings::new(
            Shape::cuboid(Vec3::new(20.0, 1.0, 20.0)).unwrap(),
            Vec3::new(0.0, -1.0, 0.0),
            MotionType::Static,
        ))
        .unwrap();
    let wall = w
        .create_and_add_body(&BodyCreationSettings::new(
            Shape::cuboid(Vec3::new(0.5, 2.0, 2.0)).unwrap(),
            Vec3::new(5.0, 2.0, 0.0),
            MotionType::Static,
        ))
        .unwrap();
    let capsule = Shape::capsule(0.5, 0.3).unwrap();
    let all = QueryFilter::default();

    // down onto the floor: the capsule's bottom is 0.8 below its centre
    let down = Ray::new(Vec3::new(0.0, 3.0, 0.0), -Vec3::Y, 10.0).unwrap();
    let hit = w
        .cast_shape(&capsule, Quat::IDENTITY, &down, &all)
        .unwrap()
        .unwrap();
    assert_eq!(hit.body, floor);
    assert!(near(hit.distance, 2.2), "{hit:?}");
    assert!((hit.normal - Vec3::Y).length() < 1e-4, "{hit:?}");
    assert!(hit.point.y.abs() < 1e-4, "{hit:?}");

    // sideways into the wall's face at x = 4.5
    let side = Ray::new(Vec3::new(0.0, 1.0, 0.0), Vec3::X, 10.0).unwrap();
    let hit = w
        .cast_shape(&capsule, Quat::IDENTITY, &side, &all)
        .unwrap()
        .unwrap();
    assert_eq!(hit.body, wall);
    assert!(near(hit.distance, 4.2), "{hit:?}");
    assert!((hit.normal + Vec3::X).length() < 1e-4, "{hit:?}");
    // lying along the motion, the capsule's cap reaches 0.8 ahead
    let lying = Quat::from_rotation_z(core::f32::consts::FRAC_PI_2);
    let hit = w.cast_shape(&capsule, lying, &side, &all).unwrap().unwrap();
    assert!(near(hit.distance, 3.7), "{hit:?}");
    // through the wall when it is filtered out; too short a cast misses
    let hit = w
        .cast_shape(&capsule, Quat::IDENTITY, &side, &all.excluding(wall))
        .unwrap();
    assert_eq!(hit, None);
    let short = Ray::new(Vec3::new(0.0, 1.0, 0.0), Vec3::X, 4.0).unwrap();
    assert_eq!(
        w.cast_shape(&capsule, Quat::IDENTITY, &short, &all)
            .unwrap(),
        None
    );

    // a box dropped beside the wall comes to rest; a cast sees it there
    let crate_id = w
        .create_and_add_body(&BodyCreationSettings::new(
            Shape::cuboid(Vec3::splat(0.5)).unwrap(),
            Vec3::new(-3.0, 2.0, 0.0),
            MotionType::Dynamic,
        ))
        .unwrap();
    for _ in 0..120 {
        w.update(1.0 / 60.0, 1, &SerialExecutor).unwrap();
    }
    let top = w.position(crate_id).unwrap().y + 0.5;
    let over = Ray::new(Vec3::new(-3.0, 5.0, 0.0), -Vec3::Y, 10.0).unwrap();
    let ball = Shape::sphere(0.25).unwrap();
    let hit = w
        .cast_shape(&ball, Quat::IDENTITY, &over, &all)
        .unwrap()
        .unwrap();
    assert_eq!(hit.body, crate_id);
    // a resting box tilts by a hair: its top under its centre is within
    // 1 mm of its centre's height + 0.5 (checked: the rotation is near 1)
    assert!(
        w.rotation(crate_id).unwrap().w.abs() > 0.99999,
        "the box rests level"
    );
    assert!(
        (hit.distance - (4.75 - top)).abs() < 1e-3,
        "{hit:?}, top {top}"
    );
}
