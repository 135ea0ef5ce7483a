//! The body-pair cache's thresholds (Jolt's defaults: 1 mm and 2°) and what
//! a hit gives back. Two boxes face to face 5 mm apart (inside the
//! speculative distance, so they make a manifold), with no gravity and no
//! approach speed: no impulse ever moves them, and only the test's
//! teleports change their relative pose. The cache keeps the pose a
//! manifold was found at, so every move below is measured from the last
//! miss.
mod common;
use archipelago::*;
use common::*;

const GAP: f32 = 0.005;

fn settings(cache: bool) -> PhysicsSettings {
    PhysicsSettings {
        gravity: Vec3::ZERO,
        allow_sleeping: false,
        use_body_pair_cache: cache,
        ..PhysicsSettings::default()
    }
}

fn cube(w: &mut PhysicsSystem, pos: Vec3) -> BodyId {
    w.create_and_add_body(&BodyCreationSettings::new(
        Shape::cuboid(Vec3::splat(0.5)).unwrap(),
        pos,
        MotionType::Dynamic,
    ))
    .unwrap()
}

/// A's box at the origin, B's box on top of it, `GAP` above.
fn two_boxes(cache: bool) -> (PhysicsSystem, BodyId, BodyId) {
    let mut w = world(settings(cache));
    let a = cube(&mut w, Vec3::ZERO);
    let b = cube(&mut w, Vec3::new(0.0, 1.0 + GAP, 0.0));
    (w, a, b)
}

/// One step: (hits, misses).
fn step_counts(w: &mut PhysicsSystem) -> (u32, u32) {
    let s = w.update(DT, 1, pool()).unwrap();
    assert!(s.warnings.is_empty());
    (s.body_pair_cache_hits, s.body_pair_cache_misses)
}

/// Separations and positions of the pair's points, in order.
fn points(w: &PhysicsSystem) -> Vec<(f32, Vec3)> {
    let contacts: Vec<Contact> = w.contacts().collect();
    assert_eq!(contacts.len(), 1, "one touching pair");
    contacts[0]
        .points()
        .iter()
        .map(|p| (p.separation, p.position))
        .collect()
}

#[test]
fn a_pair_that_moved_0_9_mm_hits_and_1_1_mm_misses() {
    let (mut w, a, b) = two_boxes(true);
    let start = w.position(b).unwrap();
    assert_eq!(step_counts(&mut w), (0, 1), "first sight: collided");
    assert_eq!(step_counts(&mut w), (1, 0), "unmoved: from the cache");
    assert_eq!(w.position(b).unwrap(), start, "nothing pushes them");
    assert_eq!(w.position(a).unwrap(), Vec3::ZERO);

    w.set_position(b, start + Vec3::new(0.0009, 0.0, 0.0))
        .unwrap();
    assert_eq!(step_counts(&mut w), (1, 0), "0.9 mm: hit");
    w.set_position(b, start + Vec3::new(0.0011, 0.0, 0.0))
        .unwrap();
    assert_eq!(step_counts(&mut w), (0, 1), "1.1 mm: miss");
    // The miss recorded the new pose: 0.9 mm from there hits again, in any
    // direction, and moving A instead of B counts the same.
    w.set_position(a, Vec3::new(0.0, 0.0, 0.0009)).unwrap();
    assert_eq!(step_counts(&mut w), (1, 0), "A moved 0.9 mm: hit");
    w.set_position(a, Vec3::new(0.0, 0.0011, 0.0)).unwrap();
    assert_eq!(step_counts(&mut w), (0, 1), "A moved 1.1 mm: miss");
}

#[test]
fn a_pair_turned_1_5_degrees_hits_and_2_5_degrees_misses() {
    let (mut w, _, b) = two_boxes(true);
    assert_eq!(step_counts(&mut w), (0, 1));
    let turn = |deg: f32| Quat::from_rotation_y(deg.to_radians());
    w.set_rotation(b, turn(1.5)).unwrap();
    assert_eq!(step_counts(&mut w), (1, 0), "1.5°: hit");
    w.set_rotation(b, turn(2.5)).unwrap();
    assert_eq!(step_counts(&mut w), (0, 1), "2.5°: miss");
    // Both turned together: the relative rotation is unchanged.
    let (mut w, a, b) = two_boxes(true);
    assert_eq!(step_counts(&mut w), (0, 1));
    w.set_rotation(a, turn(30.0)).unwrap();
    w.set_rotation(b, turn(30.0)).unwrap();
    let moved = w.position(b).unwrap();
    assert_eq!(moved, Vec3::new(0.0, 1.0 + GAP, 0.0));
    assert_eq!(step_counts(&mut w), (1, 0), "turned together: hit");
}

/// The thresholds are settings: tighter ones make the same move a miss,
/// and the cache switched off collides every pair.
#[test]
fn thresholds_and_switch_are_settings() {
    let (mut w, _, b) = two_boxes(true);
    assert_eq!(step_counts(&mut w), (0, 1));
    w.set_settings(PhysicsSettings {
        body_pair_cache_max_delta_position: 0.0005,
        ..settings(true)
    })
    .unwrap();
    let p = w.position(b).unwrap();
    w.set_position(b, p + Vec3::new(0.0007, 0.0, 0.0)).unwrap();
    assert_eq!(
        step_counts(&mut w),
        (0, 1),
        "0.7 mm past a 0.5 mm tolerance"
    );
    w.set_settings(settings(false)).unwrap();
    assert_eq!(step_counts(&mut w), (0, 1), "off: collided");
    assert_eq!(step_counts(&mut w), (0, 1), "off: collided again");
    w.set_settings(settings(true)).unwrap();
    assert_eq!(step_counts(&mut w), (0, 1), "back on: starts cold");
    assert_eq!(step_counts(&mut w), (1, 0));
    for bad in [f32::NAN, -0.001, f32::INFINITY] {
        let s = PhysicsSettings {
            body_pair_cache_max_delta_position: bad,
            ..settings(true)
        };
        assert_eq!(w.set_settings(s), Err(PhysicsError::InvalidSettings));
        let s = PhysicsSettings {
            body_pair_cache_max_delta_rotation: bad,
            ..settings(true)
        };
        assert_eq!(w.set_settings(s), Err(PhysicsError::InvalidSettings));
    }
}

/// A hit's manifold is the cached one carried with the bodies: the same
/// points as a fresh collision where nothing moved, and where B moved
/// 0.9 mm sideways, separations measured anew (equal to a fresh
/// collision's to 1 µm: the faces are parallel, so a sideways move does not
/// change them) while the points stay within the 0.9 mm the cache allows.
#[test]
fn a_hit_gives_the_fresh_manifold_within_the_tolerance() {
    let (mut on, _, b_on) = two_boxes(true);
    let (mut off, _, b_off) = two_boxes(false);
    step_counts(&mut on);
    step_counts(&mut off);
    assert_eq!(points(&on), points(&off), "first step: both collided");
    assert_eq!(step_counts(&mut on), (1, 0));
    step_counts(&mut off);
    for ((s_on, p_on), (s_off, p_off)) in points(&on).into_iter().zip(points(&off)) {
        assert!((s_on - s_off).abs() < 1e-6, "{s_on} vs {s_off}");
        assert!((p_on - p_off).length() < 1e-6);
    }
    let shift = Vec3::new(0.0009, 0.0, 0.0);
    let p = on.position(b_on).unwrap();
    on.set_position(b_on, p + shift).unwrap();
    off.set_position(b_off, p + shift).unwrap();
    assert_eq!(step_counts(&mut on), (1, 0));
    step_counts(&mut off);
    let (hit, fresh) = (points(&on), points(&off));
    assert_eq!(hit.len(), 4);
    assert_eq!(fresh.len(), 4);
    for &(s, _) in &hit {
        assert!((s - GAP).abs() < 1e-6, "separation {s}, gap {GAP}");
    }
    // Each cached point has a fresh point within the tolerance.
    for &(_, p) in &hit {
        let nearest = fresh
            .iter()
            .map(|&(_, q)| (p - q).length())
            .fold(f32::INFINITY, f32::min);
        assert!(
            nearest <= 0.0009 + 1e-6,
            "point {p} is {nearest} m from any fresh one"
        );
    }
}

/// A hit re-measures separations: a pair pushed 0.8 mm closer along the
/// normal (within the tolerance) reports separations 0.8 mm smaller.
#[test]
fn a_hit_measures_separation_at_this_steps_poses() {
    let (mut w, _, b) = two_boxes(true);
    step_counts(&mut w);
    let p = w.position(b).unwrap();
    w.set_position(b, p - Vec3::new(0.0, 0.0008, 0.0)).unwrap();
    assert_eq!(step_counts(&mut w), (1, 0));
    for (s, _) in points(&w) {
        assert!((s - (GAP - 0.0008)).abs() < 1e-6, "separation {s}");
    }
}

/// A body destroyed and another created in its slot is a new pair, even at
/// the same pose: a sphere where the box was gets a sphere's one-point
/// manifold, not the box's cached four.
#[test]
fn a_reused_slot_is_not_a_cached_pair() {
    let (mut w, _, b) = two_boxes(true);
    step_counts(&mut w);
    assert_eq!(points(&w).len(), 4);
    let p = w.position(b).unwrap();
    w.destroy_body(b).unwrap();
    let sphere = w
        .create_and_add_body(&BodyCreationSettings::new(
            Shape::sphere(0.5).unwrap(),
            p,
            MotionType::Dynamic,
        ))
        .unwrap();
    assert_eq!(sphere.index(), b.index(), "the test needs the slot reused");
    assert_eq!(step_counts(&mut w), (0, 1), "a new body: collided");
    assert_eq!(points(&w).len(), 1);
    // Removed and added again, the same body (same shape) may hit.
    w.remove_body(sphere).unwrap();
    w.add_body(sphere).unwrap();
    assert_eq!(step_counts(&mut w), (1, 0));
    assert_eq!(points(&w).len(), 1);
}

/// Pairs that are near but not touching are cached too (an empty
/// manifold): two boxes 3 cm apart, out of the 2 cm speculative reach, hit
/// the cache with no contact; moved 1.5 cm closer (past the tolerance) they
/// are collided again and now touch.
#[test]
fn near_misses_are_cached_and_found_when_they_close_in() {
    let mut w = world(settings(true));
    let a = cube(&mut w, Vec3::ZERO);
    // AABBs overlap (each inflated by the 2 cm speculative distance), the
    // boxes do not touch: 3 cm apart.
    let b = cube(&mut w, Vec3::new(0.0, 1.03, 0.0));
    assert_eq!(step_counts(&mut w), (0, 1));
    assert_eq!(w.contacts().count(), 0);
    assert_eq!(step_counts(&mut w), (1, 0));
    assert_eq!(w.contacts().count(), 0);
    // 1.5 cm closer: a miss, and now within the speculative distance.
    w.set_position(b, Vec3::new(0.0, 1.015, 0.0)).unwrap();
    assert_eq!(step_counts(&mut w), (0, 1));
    assert_eq!(w.contacts().count(), 1);
    assert_eq!(w.position(a).unwrap(), Vec3::ZERO);
}

/// Beyond Jolt: a pair of boxes that did not touch stays out of the
/// collision for as long as its recorded gap guarantees it is apart, however
/// far it moves within that, and is collided again once it may touch.
#[test]
fn a_pair_that_was_apart_is_not_collided_until_it_may_touch() {
    let mut w = world(settings(true));
    // Both cubes turned 45° about y, face to face along the diagonal u:
    // their bounding boxes overlap although the faces are 20 cm apart.
    let q = Quat::from_rotation_y(core::f32::consts::FRAC_PI_4);
    let u = Vec3::new(1.0, 0.0, 1.0).normalize();
    let a = cube(&mut w, Vec3::ZERO);
    let b = cube(&mut w, u * 1.2);
    w.set_rotation(a, q).unwrap();
    w.set_rotation(b, q).unwrap();
    assert_eq!(step_counts(&mut w), (0, 1), "first sight: collided");
    assert_eq!(w.contacts().count(), 0, "20 cm apart");
    // 5 cm closer: far past Jolt's 1 mm, but the 18 cm of gap beyond the
    // contact distance guarantees they are still apart.
    w.set_position(b, u * 1.15).unwrap();
    assert_eq!(
        step_counts(&mut w),
        (1, 0),
        "still surely apart: from the cache"
    );
    // Turned 3° more (past Jolt's 2°) about u: B's farthest point (0.87 m
    // out) swings by at most 4.5 cm, under the gap left.
    let turned = Quat::from_axis_angle(u, 3f32.to_radians()) * q;
    w.set_rotation(b, turned).unwrap();
    assert_eq!(step_counts(&mut w), (1, 0), "turned, still surely apart");
    // 1 cm apart, within the contact distance: collided, and a manifold.
    w.set_rotation(b, q).unwrap();
    w.set_position(b, u * 1.01).unwrap();
    assert_eq!(step_counts(&mut w), (0, 1), "may touch: collided");
    assert_eq!(w.contacts().count(), 1);
    assert_eq!(w.position(a).unwrap(), Vec3::ZERO);
}

/// Boxes turned 45° have bounding boxes much larger than themselves: a pair
/// whose bounding spheres are apart is neither collided nor looked up.
#[test]
fn bounding_spheres_apart_skip_the_pair() {
    let mut w = world(settings(true));
    let q = Quat::from_rotation_y(core::f32::consts::FRAC_PI_4);
    for pos in [Vec3::ZERO, Vec3::new(1.3, 0.0, 1.3)] {
        let id = cube(&mut w, pos);
        w.set_rotation(id, q).unwrap();
    }
    // Centres 1.84 m apart, spheres of 0.866 m each plus 2 cm: apart. The
    // bounding boxes (half width 0.707 m + 2 cm) overlap along x and z.
    let s = w.update(DT, 1, pool()).unwrap();
    assert_eq!(s.body_pairs, 1, "the broad phase reports the pair");
    assert_eq!(s.body_pairs_apart_by_bounds, 1);
    assert_eq!((s.body_pair_cache_hits, s.body_pair_cache_misses), (0, 0));
    assert_eq!(w.contacts().count(), 0);
}
