//! The trees answer what a loop over every added body answers: on random
//! worlds (1 to 5,000 mixed bodies, static and dynamic, stepped so some
//! sleep and many move, with bodies added, removed and teleported between
//! steps and queries asked before and after each step), every ray, box
//! and point query gives the brute-force loop's result (closest hit to
//! 1e-5 m and the same body, the same sets), and a batch of rays gives
//! single rays' bits at 1, 2 and 4 workers.

use super::{shape_tests, QueryFilter, Ray, RayHit};
use crate::body::{BodyCreationSettings, BodyId, MotionType};
use crate::math::Vec3;
use crate::settings::{Capacities, PhysicsSettings};
use crate::shape::Shape;
use crate::system::PhysicsSystem;
use crate::test_rng::TestRng;

fn pool(n: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap()
}

fn random_shape(r: &mut TestRng) -> Shape {
    match r.below(3) {
        0 => Shape::Sphere {
            radius: r.f(0.1, 1.0),
        },
        1 => Shape::Box {
            half_extents: Vec3::new(r.f(0.1, 1.0), r.f(0.1, 1.0), r.f(0.1, 1.0)),
        },
        _ => Shape::Capsule {
            half_height: r.f(0.1, 1.0),
            radius: r.f(0.1, 0.6),
        },
    }
}

fn add_random(w: &mut PhysicsSystem, r: &mut TestRng, extent: f32) -> BodyId {
    let motion = if r.below(4) == 0 {
        MotionType::Static
    } else {
        MotionType::Dynamic
    };
    let p = Vec3::new(r.f(-extent, extent), r.f(0.0, extent), r.f(-extent, extent));
    let s = BodyCreationSettings::new(random_shape(r), p, motion)
        .with_rotation(r.quat())
        .with_sensor(r.below(10) == 0)
        .with_object_layer(r.below(4) as u8);
    w.create_and_add_body(&s).unwrap()
}

fn random_ray(r: &mut TestRng, extent: f32) -> Ray {
    let o = Vec3::new(
        r.f(-extent, extent),
        r.f(-1.0, extent * 1.5),
        r.f(-extent, extent),
    );
    let d = Vec3::new(r.f(-1.0, 1.0), r.f(-1.0, 0.3), r.f(-1.0, 1.0));
    let d = if d.length() < 0.01 { Vec3::NEG_Y } else { d };
    let max = if r.below(4) == 0 {
        f32::INFINITY
    } else {
        r.f(0.0, 3.0 * extent)
    };
    Ray::new(o, d, max).unwrap()
}

/// What a loop over every added body says about `ray`.
fn brute_ray_all(w: &PhysicsSystem, ray: &Ray, f: &QueryFilter) -> Vec<RayHit> {
    let b = &w.bodies;
    let mut hits: Vec<RayHit> = b
        .added
        .iter()
        .map(|&s| s as usize)
        .filter(|&s| w.passes(s, f))
        .filter_map(|s| {
            shape_tests::cast_ray_in(
                &b.shape[s],
                &b.shapes,
                b.pos(s),
                b.rot(s),
                ray.origin,
                ray.direction,
                ray.max_distance,
            )
            .map(|(t, n, sub_shape)| RayHit {
                body: b.id_of(s),
                distance: t,
                point: ray.origin + ray.direction * t,
                normal: n,
                sub_shape,
            })
        })
        .collect();
    hits.sort_by(|a, b| {
        a.distance
            .total_cmp(&b.distance)
            .then(a.body.index().cmp(&b.body.index()))
    });
    hits
}

fn brute_sets(
    w: &PhysicsSystem,
    min: Vec3,
    max: Vec3,
    point: Vec3,
    f: &QueryFilter,
) -> (Vec<BodyId>, Vec<BodyId>) {
    let b = &w.bodies;
    let (mut boxes, mut points) = (Vec::new(), Vec::new());
    for &s in &b.added {
        let s = s as usize;
        if !w.passes(s, f) {
            continue;
        }
        let (lo, hi) = b.aabb_of(s, 0.0);
        if lo.cmple(max).all() && hi.cmpge(min).all() {
            boxes.push(b.id_of(s));
        }
        if shape_tests::contains_point_in(&b.shape[s], &b.shapes, b.pos(s), b.rot(s), point) {
            points.push(b.id_of(s));
        }
    }
    boxes.sort();
    points.sort();
    (boxes, points)
}

/// Checks `rays` random rays, boxes, points and shapes; returns (closest
/// hits, bodies touched by the shapes).
/// Shape casts that hit something (checked against the loop over bodies).
static CAST_HITS: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

fn check_queries(w: &PhysicsSystem, r: &mut TestRng, extent: f32, rays: usize) -> (usize, usize) {
    let pred = |id: BodyId| id.index() % 7 != 3;
    let filters = [
        QueryFilter::default(),
        QueryFilter::default()
            .with_layer_mask(0b0101)
            .without_sensors(),
        QueryFilter::default().with_predicate(&pred),
    ];
    let (mut hits, mut shapes_touching) = (0, 0);
    let mut all = Vec::new();
    for k in 0..rays {
        let f = &filters[k % filters.len()];
        let ray = random_ray(r, extent);
        let expect = brute_ray_all(w, &ray, f);
        let got = w.cast_ray(&ray, f);
        match (expect.first(), got) {
            (None, None) => {}
            (Some(e), Some(g)) => {
                assert_eq!(e.body, g.body, "ray {k}: closest body");
                assert!(
                    (e.distance - g.distance).abs() <= 1e-5,
                    "ray {k}: {e:?} vs {g:?}"
                );
                hits += 1;
            }
            (e, g) => panic!("ray {k}: brute force {e:?}, tree {g:?}"),
        }
        w.cast_ray_all(&ray, f, &mut all);
        assert_eq!(all, expect, "ray {k}: every hit");
        // boxes and points
        let c = Vec3::new(r.f(-extent, extent), r.f(0.0, extent), r.f(-extent, extent));
        let h = Vec3::new(r.f(0.0, 3.0), r.f(0.0, 3.0), r.f(0.0, 3.0));
        let (boxes, points) = brute_sets(w, c - h, c + h, c, f);
        let mut out = Vec::new();
        w.overlap_aabb(c - h, c + h, f, &mut out).unwrap();
        assert_eq!(out, boxes, "box {k}");
        w.overlap_point(c, f, &mut out).unwrap();
        assert_eq!(out, points, "point {k}");
        // a shape at a pose
        let me = crate::collide::Placed {
            shape: random_shape(r),
            pos: c,
            rot: r.quat(),
        };
        let mut touching: Vec<BodyId> = w
            .bodies
            .added
            .iter()
            .map(|&s| s as usize)
            .filter(|&s| w.passes(s, f) && w.shape_overlaps(&me, s))
            .map(|s| w.bodies.id_of(s))
            .collect();
        touching.sort();
        w.overlap_shape(&me.shape, me.pos, me.rot, f, &mut out)
            .unwrap();
        assert_eq!(out, touching, "shape {k}");
        shapes_touching += touching.len();
        // a shape cast from where the ray starts, along it
        let cast = random_shape(r);
        let turn = r.quat();
        let me = super::sweep::Core::new(
            cast,
            ray.origin(),
            crate::body::checked_rotation(turn).unwrap(),
            &w.bodies.shapes,
        );
        let mut expect: Option<(f32, usize)> = None;
        for &s in &w.bodies.added {
            let s = s as usize;
            if !w.passes(s, f) {
                continue;
            }
            let b = &w.bodies;
            let other = super::sweep::Core::new(b.shape[s], b.pos(s), b.rot(s), &b.shapes);
            if let Some(i) = super::sweep::cast(&me, ray.direction(), ray.max_distance(), &other) {
                if expect.is_none_or(|(d, e)| i.distance < d || (i.distance == d && s < e)) {
                    expect = Some((i.distance, s));
                }
            }
        }
        let got = w.cast_shape(&cast, turn, &ray, f).unwrap();
        assert_eq!(
            got.map(|h| (h.distance, h.body)),
            expect.map(|(d, s)| (d, w.bodies.id_of(s))),
            "shape cast {k}"
        );
        CAST_HITS.fetch_add(
            got.is_some() as usize,
            core::sync::atomic::Ordering::Relaxed,
        );
    }
    (hits, shapes_touching)
}

#[test]
fn queries_equal_a_loop_over_every_body() {
    let mut r = TestRng(77);
    // two workers: the big worlds' refits run as parallel jobs
    let two = pool(2);
    let (mut total_hits, mut sleepers_woken, mut touched_by_shapes) = (0, 0, 0);
    let mut tally = |(h, t): (usize, usize)| {
        total_hits += h;
        touched_by_shapes += t;
    };
    for (world, n) in [1usize, 2, 9, 64, 65, 700, 5000].into_iter().enumerate() {
        let extent = (n as f32).cbrt() * 2.0 + 2.0;
        let mut w = PhysicsSystem::new(
            Capacities {
                max_bodies: n + 600,
                ..Capacities::default()
            },
            PhysicsSettings::default(),
        )
        .unwrap();
        let floor = Shape::Box {
            half_extents: Vec3::new(extent * 2.0, 0.5, extent * 2.0),
        };
        w.create_and_add_body(&BodyCreationSettings::new(
            floor,
            Vec3::new(0.0, -0.5, 0.0),
            MotionType::Static,
        ))
        .unwrap();
        let mut ids: Vec<BodyId> = (0..n).map(|_| add_random(&mut w, &mut r, extent)).collect();
        let rays = if n > 1000 { 150 } else { 60 };
        // before any step: everything is in the added list
        tally(check_queries(&w, &mut r, extent, rays));
        for round in 0..6 {
            for _ in 0..10 {
                w.update(1.0 / 60.0, 1, &two).unwrap();
            }
            tally(check_queries(&w, &mut r, extent, rays));
            // between steps: adds, removes, teleports
            for _ in 0..(n / 10 + 1) {
                match r.below(3) {
                    0 => ids.push(add_random(&mut w, &mut r, extent)),
                    1 if !ids.is_empty() => {
                        let id = ids.swap_remove(r.below(ids.len()));
                        w.remove_body(id).unwrap();
                        if r.below(2) == 0 {
                            w.destroy_body(id).unwrap();
                        } else {
                            w.add_body(id).unwrap();
                            ids.push(id);
                        }
                    }
                    _ if !ids.is_empty() => {
                        let id = ids[r.below(ids.len())];
                        let p =
                            Vec3::new(r.f(-extent, extent), r.f(0.0, extent), r.f(-extent, extent));
                        w.set_position(id, p).unwrap();
                        w.set_rotation(id, r.quat()).unwrap();
                    }
                    _ => {}
                }
            }
            if round == 1 {
                // sleepers: islands put to sleep by hand (a second of
                // falling puts few to sleep on its own)
                for &id in ids.iter().step_by(7) {
                    if w.motion_type(id).unwrap() == MotionType::Dynamic && w.is_active(id).unwrap()
                    {
                        w.deactivate_body(id).unwrap();
                    }
                }
            }
            if round == 2 {
                // the tree finds every sleeper a box touches
                let c = Vec3::new(r.f(-extent, extent), r.f(0.0, extent), r.f(-extent, extent));
                let (lo, hi) = (c - Vec3::splat(extent * 0.4), c + Vec3::splat(extent * 0.4));
                let touched: Vec<BodyId> = ids
                    .iter()
                    .copied()
                    .filter(|&id| w.is_sleeping(id).unwrap())
                    .filter(|&id| {
                        let (a, b) = w.world_aabb(id).unwrap();
                        a.cmple(hi).all() && b.cmpge(lo).all()
                    })
                    .collect();
                let woken = w.activate_bodies_in_aabb(lo, hi, u32::MAX).unwrap();
                assert!(
                    woken >= touched.len(),
                    "{woken} woken, {} touched",
                    touched.len()
                );
                assert!(touched.iter().all(|&id| !w.is_sleeping(id).unwrap()));
                sleepers_woken += touched.len();
            }
            tally(check_queries(&w, &mut r, extent, rays));
            if round == 3 {
                w.optimize_query_trees();
                tally(check_queries(&w, &mut r, extent, rays));
            }
        }
        let sleeping = ids.iter().filter(|&&id| w.is_sleeping(id).unwrap()).count();
        println!("world {world}: {n} bodies, {sleeping} asleep at the end");
    }
    println!("closest hits checked: {total_hits}, bodies touched by shapes: {touched_by_shapes}, sleepers woken by a box: {sleepers_woken}");
    assert!(
        touched_by_shapes > 300,
        "shapes touched bodies: {touched_by_shapes}"
    );
    assert!(total_hits > 1500, "the rays hit something: {total_hits}");
    let casts = CAST_HITS.load(core::sync::atomic::Ordering::Relaxed);
    println!("shape casts that hit: {casts}");
    assert!(casts > 1000, "the shape casts hit something: {casts}");
    assert!(
        sleepers_woken > 20,
        "boxes touched sleepers: {sleepers_woken}"
    );
}

#[test]
fn batched_rays_give_single_rays_bits_on_any_pool() {
    let mut r = TestRng(5);
    let mut w = PhysicsSystem::new(Capacities::default(), PhysicsSettings::default()).unwrap();
    for _ in 0..3000 {
        add_random(&mut w, &mut r, 30.0);
    }
    let one = pool(1);
    for _ in 0..20 {
        w.update(1.0 / 60.0, 1, &one).unwrap();
    }
    let rays: Vec<Ray> = (0..5000).map(|_| random_ray(&mut r, 30.0)).collect();
    let f = QueryFilter::default();
    let single: Vec<Option<RayHit>> = rays.iter().map(|ray| w.cast_ray(ray, &f)).collect();
    let bits = |h: &Option<RayHit>| {
        h.map(|h| {
            (
                h.body,
                h.distance.to_bits(),
                h.point.to_array().map(f32::to_bits),
                h.normal.to_array().map(f32::to_bits),
            )
        })
    };
    assert!(single.iter().filter(|h| h.is_some()).count() > 1000);
    for threads in [1, 2, 4] {
        let mut out = vec![None; rays.len()];
        w.cast_rays(&rays, &mut out, &f, &pool(threads)).unwrap();
        for (k, (a, b)) in single.iter().zip(&out).enumerate() {
            assert_eq!(bits(a), bits(b), "ray {k} at {threads} threads");
        }
    }
    let mut short = vec![None; 3];
    assert_eq!(
        w.cast_rays(&rays, &mut short, &f, &one),
        Err(crate::error::PhysicsError::QueryBufferMismatch)
    );
}

#[test]
fn bad_rays_and_boxes_are_refused() {
    use crate::error::PhysicsError::{InvalidPosition, InvalidRay};
    let o = Vec3::ZERO;
    assert_eq!(Ray::new(o, Vec3::ZERO, 1.0), Err(InvalidRay));
    assert_eq!(Ray::new(o, Vec3::new(1e-7, 0.0, 0.0), 1.0), Err(InvalidRay));
    assert_eq!(
        Ray::new(o, Vec3::new(f32::NAN, 1.0, 0.0), 1.0),
        Err(InvalidRay)
    );
    assert_eq!(
        Ray::new(o, Vec3::new(f32::INFINITY, 1.0, 0.0), 1.0),
        Err(InvalidRay)
    );
    assert_eq!(
        Ray::new(Vec3::splat(f32::NAN), Vec3::X, 1.0),
        Err(InvalidRay)
    );
    assert_eq!(Ray::new(o, Vec3::X, -1.0), Err(InvalidRay));
    assert_eq!(Ray::new(o, Vec3::X, f32::NAN), Err(InvalidRay));
    let r = Ray::new(o, Vec3::new(0.0, 3.0, 4.0), f32::INFINITY).unwrap();
    assert_eq!(r.direction(), Vec3::new(0.0, 0.6, 0.8));
    let w = PhysicsSystem::new(Capacities::default(), PhysicsSettings::default()).unwrap();
    let mut out = Vec::new();
    let f = QueryFilter::default();
    assert_eq!(
        w.overlap_aabb(Vec3::splat(f32::NAN), Vec3::ONE, &f, &mut out),
        Err(InvalidPosition)
    );
    assert_eq!(
        w.overlap_point(Vec3::splat(f32::INFINITY), &f, &mut out),
        Err(InvalidPosition)
    );
    assert_eq!(w.cast_ray(&r, &f), None);
    use crate::error::PhysicsError::{InvalidRotation, InvalidShape};
    let ball = Shape::Sphere { radius: 1.0 };
    let q = crate::math::Quat::IDENTITY;
    assert_eq!(
        w.overlap_shape(&Shape::Sphere { radius: -1.0 }, o, q, &f, &mut out),
        Err(InvalidShape)
    );
    assert_eq!(
        w.overlap_shape(&ball, Vec3::splat(f32::NAN), q, &f, &mut out),
        Err(InvalidPosition)
    );
    assert_eq!(
        w.overlap_shape(&ball, o, q * 2.0, &f, &mut out),
        Err(InvalidRotation)
    );
    assert_eq!(w.overlap_shape(&ball, o, q, &f, &mut out), Ok(0));
    // shape casts: the shape and rotation checked as above, the path as a
    // ray, and a start beyond the world's coordinates
    assert_eq!(
        w.cast_shape(&Shape::Sphere { radius: 0.0 }, q, &r, &f),
        Err(InvalidShape)
    );
    assert_eq!(w.cast_shape(&ball, q * 0.5, &r, &f), Err(InvalidRotation));
    let far = Ray::new(Vec3::splat(1e9), Vec3::X, 1.0).unwrap();
    assert_eq!(w.cast_shape(&ball, q, &far, &f), Err(InvalidPosition));
    assert_eq!(w.cast_shape(&ball, q, &r, &f), Ok(None));
}

#[test]
fn trees_stay_within_their_node_bound_and_are_wide() {
    use super::tree::{QueryTree, MAX_DEPTH, WIDTH};
    let mut r = TestRng(9);
    let mut w = PhysicsSystem::new(
        Capacities {
            max_bodies: 5000,
            ..Capacities::default()
        },
        PhysicsSettings::default(),
    )
    .unwrap();
    let mut slots = Vec::new();
    let mut leaf_of = vec![u32::MAX; 5000];
    for n in 0..5000usize {
        let id = add_random(&mut w, &mut r, 40.0);
        slots.push(id.index());
        if n % 37 != 0 && n > 80 {
            continue;
        }
        let mut t = QueryTree::new(slots.len());
        let cap = t.nodes.capacity();
        t.build(&slots, &w.bodies, &mut leaf_of);
        assert!(
            t.nodes.len() <= QueryTree::max_nodes(slots.len()),
            "{} bodies: {} nodes",
            slots.len(),
            t.nodes.len()
        );
        assert_eq!(t.nodes.capacity(), cap, "built without growing");
        // every body is in exactly one lane, found through leaf_of
        let mut seen = 0;
        for (k, node) in t.nodes.iter().enumerate() {
            for l in 0..WIDTH {
                let c = node.child[l];
                if c != super::tree::EMPTY && c & super::tree::LEAF != 0 {
                    assert_eq!(
                        leaf_of[(c & !super::tree::LEAF) as usize],
                        (k * WIDTH + l) as u32
                    );
                    seen += 1;
                }
            }
        }
        assert_eq!(seen, slots.len());
        // wide: every node over more than 8 bodies has all 8 lanes
        for node in &t.nodes {
            let full = node.child.iter().all(|&c| c != super::tree::EMPTY);
            let bodies_only = node.child.iter().all(|&c| c & super::tree::LEAF != 0);
            assert!(full || bodies_only, "{} bodies", slots.len());
        }
        assert!(t.depth() <= MAX_DEPTH);
    }
}

/// Bodies in geometric rows (each 2^(1/10) farther out and bigger than
/// the last) deepen a surface-area build (10 levels for 600 bodies where
/// medians need 4); it stays within `MAX_DEPTH` and its node bound, the
/// median levels alone give the balanced depth `SAH_DEPTH` falls back to,
/// and rays find what the loop over every body finds.
#[test]
fn a_geometric_row_of_bodies_stays_within_the_depth_bound() {
    use super::tree::{QueryTree, MAX_DEPTH, SAH_DEPTH};
    let mut w = PhysicsSystem::new(
        Capacities {
            max_bodies: 600,
            ..Capacities::default()
        },
        PhysicsSettings::default(),
    )
    .unwrap();
    let mut slots = Vec::new();
    for k in 0..600 {
        // positions grow by 2^(1/10) a body and sizes with them, up to
        // 2^20 (1e6 m) over a row of 200; three rows
        let g = 2f32.powf((k % 200) as f32 / 10.0);
        let s = BodyCreationSettings::new(
            Shape::Sphere { radius: 0.01 * g },
            Vec3::new(g, (k / 200) as f32, 0.0),
            MotionType::Static,
        );
        slots.push(w.create_and_add_body(&s).unwrap().index());
    }
    let mut leaf_of = vec![u32::MAX; 600];
    let mut t = QueryTree::new(slots.len());
    t.build(&slots, &w.bodies, &mut leaf_of);
    println!(
        "geometric row of 600 bodies: depth {} (surface area to {SAH_DEPTH}, bound {MAX_DEPTH}), {} nodes",
        t.depth(),
        t.nodes.len()
    );
    assert!(t.depth() <= MAX_DEPTH);
    assert!(t.nodes.len() <= QueryTree::max_nodes(slots.len()));
    // the median levels alone: each child at most an eighth (rounded up)
    // of its parent, so ceil(log8 600) = 4 levels (one for 8 bodies)
    t.build_to(&slots, &w.bodies, &mut leaf_of, 0);
    println!("the same by medians only: depth {}", t.depth());
    assert_eq!(t.depth(), 4);
    assert!(t.nodes.len() <= QueryTree::max_nodes(slots.len()));
    w.optimize_query_trees();
    let f = QueryFilter::default();
    for k in 0..600 {
        let x = 2f32.powf((k % 200) as f32 / 10.0) * (1.0 + 0.003 * (k / 200) as f32);
        let ray = Ray::new(Vec3::new(x, 5.0, 0.0), Vec3::NEG_Y, 10.0).unwrap();
        let want = brute_ray_all(&w, &ray, &f)
            .first()
            .map(|h| (h.body, h.distance));
        let got = w.cast_ray(&ray, &f).map(|h| (h.body, h.distance));
        assert_eq!(got.map(|g| g.0), want.map(|w| w.0), "ray {k}");
    }
}

/// A floor far larger than the bodies on it goes into the root's lanes
/// (where every ray tests it once) instead of down the path to a leaf
/// node, where every ray would enter each node on the way.
#[test]
fn a_floor_far_larger_than_the_bodies_sits_in_the_root() {
    use super::tree::{QueryTree, WIDTH};
    let mut r = TestRng(12);
    let mut w = PhysicsSystem::new(
        Capacities {
            max_bodies: 2001,
            ..Capacities::default()
        },
        PhysicsSettings::default(),
    )
    .unwrap();
    let floor = BodyCreationSettings::new(
        Shape::Box {
            half_extents: Vec3::new(100.0, 1.0, 100.0),
        },
        Vec3::new(0.0, -1.0, 0.0),
        MotionType::Static,
    );
    let mut slots = vec![w.create_and_add_body(&floor).unwrap().index()];
    for _ in 0..2000 {
        let p = Vec3::new(r.f(-40.0, 40.0), r.f(0.3, 3.0), r.f(-40.0, 40.0));
        let s = BodyCreationSettings::new(random_shape(&mut r), p, MotionType::Static);
        slots.push(w.create_and_add_body(&s).unwrap().index());
    }
    let mut leaf_of = vec![u32::MAX; 2001];
    let mut t = QueryTree::new(slots.len());
    t.build(&slots, &w.bodies, &mut leaf_of);
    println!(
        "floor and 2000 bodies: floor at node {}, tree cost {:.1} (root area = 1)",
        leaf_of[slots[0] as usize] as usize / WIDTH,
        t.cost()
    );
    assert_eq!(
        leaf_of[slots[0] as usize] as usize / WIDTH,
        0,
        "in the root"
    );
}
