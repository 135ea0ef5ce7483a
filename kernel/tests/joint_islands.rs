//! Joints in the step's bookkeeping: islands link jointed bodies, whole
//! jointed islands sleep and wake together, removing a joint or changing
//! it wakes both sides, and `joint_impulse` reports what held a joint over
//! the last update.

mod common;
use archipelago::*;
use common::*;

fn ball(w: &mut PhysicsSystem, at: Vec3, sleeping: bool) -> BodyId {
    w.create_and_add_body(
        &BodyCreationSettings::new(Shape::sphere(0.1).unwrap(), at, MotionType::Dynamic)
            .with_allow_sleeping(sleeping),
    )
    .unwrap()
}

/// Two weightless spheres 3 m apart never touch: two islands, one once a
/// distance joint joins them, two again once it is removed.
#[test]
fn a_jointed_pair_is_one_island() {
    let mut w = world(PhysicsSettings {
        gravity: Vec3::ZERO,
        ..PhysicsSettings::default()
    });
    let a = ball(&mut w, Vec3::new(0.0, 5.0, 0.0), false);
    let b = ball(&mut w, Vec3::new(3.0, 5.0, 0.0), false);
    w.set_linear_velocity(a, Vec3::new(0.0, 0.0, 1.0)).unwrap();
    step(&mut w, 1);
    let apart = w.last_stats().islands;
    let j = w
        .create_joint(&JointSettings::distance(
            Some(a),
            Some(b),
            Vec3::ZERO,
            Vec3::ZERO,
            3.0,
            3.0,
        ))
        .unwrap();
    step(&mut w, 1);
    let joined = w.last_stats().islands;
    step(&mut w, 30);
    let length = (w.position(b).unwrap() - w.position(a).unwrap()).length();
    w.remove_joint(j).unwrap();
    step(&mut w, 1);
    let removed = w.last_stats().islands;
    println!(
        "islands: {apart} apart, {joined} jointed (length after 0.5 s {length:.5} m), {removed} after removal"
    );
    assert_eq!((apart, joined, removed), (2, 1, 2));
    assert!((length - 3.0).abs() < 1e-3, "the joint held: {length}");
}

/// A pile of ragdolls (the ragdolls scene, settled until every body
/// sleeps): pushing one ragdoll's pelvis wakes that ragdoll whole (its
/// limbs through its joints) and whatever touches it, and nothing else:
/// every ragdoll is awake or asleep as a whole, and the ragdoll farthest
/// from the pushed one sleeps on.
#[test]
fn poking_one_ragdoll_wakes_its_island_only() {
    let scene = scenes::ragdolls();
    let (mut w, ids) = scene.build(PhysicsSettings::default()).unwrap();
    let first = 1 + 4; // floor and four walls, then 11 bodies per ragdoll
    let mut slept_at = None;
    for k in 0..1200 {
        step(&mut w, 1);
        if w.num_active_bodies() == 0 {
            slept_at = Some(k + 1);
            break;
        }
    }
    let slept_at = slept_at.expect("the ragdolls fall asleep within 20 s");
    let ragdoll = |r: usize| &ids[first + 11 * r..first + 11 * (r + 1)];
    let poked = 44;
    let pelvis = ragdoll(poked)[0];
    let far = (0..100)
        .max_by(|&a, &b| {
            let d = |r: usize| {
                (w.position(ragdoll(r)[0]).unwrap() - w.position(pelvis).unwrap()).length()
            };
            d(a).total_cmp(&d(b))
        })
        .unwrap();
    w.add_impulse(pelvis, Vec3::new(0.0, 20.0, 0.0)).unwrap();
    step(&mut w, 1);
    let awake: Vec<usize> = (0..100)
        .filter(|&r| w.is_active(ragdoll(r)[0]).unwrap())
        .collect();
    for r in 0..100 {
        let a = ragdoll(r)
            .iter()
            .filter(|&&id| w.is_active(id).unwrap())
            .count();
        assert!(a == 0 || a == 11, "ragdoll {r}: {a} of 11 bodies awake");
    }
    println!(
        "ragdolls asleep at step {slept_at}; poking ragdoll {poked} woke ragdolls {awake:?} ({} bodies awake of 1100), farthest ragdoll {far} asleep",
        w.num_active_bodies()
    );
    assert!(awake.contains(&poked));
    assert!(awake.len() < 100, "the pile is not one island");
    assert!(!awake.contains(&far));
    w.check_sleep_invariants().unwrap();
}

/// A pendulum on a kinematic arm sleeps with it; moving the arm wakes it
/// (the joint wakes a sleeping side when the other moves).
#[test]
fn moving_one_side_wakes_the_other() {
    let mut w = world(PhysicsSettings::default());
    let arm = w
        .create_and_add_body(&BodyCreationSettings::new(
            Shape::cuboid(Vec3::splat(0.1)).unwrap(),
            Vec3::new(0.0, 5.0, 0.0),
            MotionType::Kinematic,
        ))
        .unwrap();
    let bob = ball(&mut w, Vec3::new(0.0, 4.0, 0.0), true);
    w.create_joint(&JointSettings::point(
        Some(arm),
        Some(bob),
        Vec3::ZERO,
        Vec3::new(0.0, 1.0, 0.0),
    ))
    .unwrap();
    let mut slept = None;
    for k in 0..300 {
        step(&mut w, 1);
        if w.is_sleeping(bob).unwrap() {
            slept = Some(k + 1);
            break;
        }
    }
    let slept = slept.expect("a pendulum at rest sleeps");
    w.move_kinematic(arm, Vec3::new(0.5, 5.0, 0.0), Quat::IDENTITY, DT)
        .unwrap();
    step(&mut w, 1);
    println!(
        "bob asleep at step {slept}, awake after the arm moved: {}",
        w.is_active(bob).unwrap()
    );
    assert!(w.is_active(bob).unwrap());
}

/// Two spheres hanging in a chain from the world sleep together; removing
/// the joint between them wakes both, and so does changing a joint's
/// limits.
#[test]
fn removing_or_changing_a_joint_wakes_both_sides() {
    let mut w = world(PhysicsSettings::default());
    let upper = ball(&mut w, Vec3::new(0.0, 4.0, 0.0), true);
    let lower = ball(&mut w, Vec3::new(0.0, 3.0, 0.0), true);
    let top = w
        .create_joint(&JointSettings::point(
            None,
            Some(upper),
            Vec3::new(0.0, 5.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ))
        .unwrap();
    let link = w
        .create_joint(&JointSettings::distance(
            Some(upper),
            Some(lower),
            Vec3::ZERO,
            Vec3::ZERO,
            0.5,
            1.0,
        ))
        .unwrap();
    let settle = |w: &mut PhysicsSystem| {
        for _ in 0..300 {
            step(w, 1);
            if w.num_active_bodies() == 0 {
                return true;
            }
        }
        false
    };
    assert!(settle(&mut w), "the hanging pair sleeps");
    assert!(w.is_sleeping(upper).unwrap() && w.is_sleeping(lower).unwrap());
    w.set_joint_limits(link, Some([0.5, 0.9])).unwrap();
    assert!(w.is_active(upper).unwrap() && w.is_active(lower).unwrap());
    assert!(settle(&mut w), "and sleeps again");
    w.remove_joint(link).unwrap();
    assert!(w.is_active(upper).unwrap() && w.is_active(lower).unwrap());
    step(&mut w, 30);
    println!(
        "after removing the link the lower sphere falls to y {:.3}, the upper hangs at {:.3}",
        w.position(lower).unwrap().y,
        w.position(upper).unwrap().y
    );
    assert!(w.position(lower).unwrap().y < 2.0, "the lower sphere fell");
    assert!((w.position(upper).unwrap().y - 4.0).abs() < 1e-3);
    assert!(w.joint(top).is_ok());
}

/// A sphere of mass m hanging at rest from the world: the joint
/// holds it with `m g dt` per update, whether the update takes one
/// collision step or four (the impulses of its collision steps add up).
#[test]
fn joint_impulse_is_the_updates_total() {
    for collision_steps in [1, 4] {
        let mut w = world(PhysicsSettings::default());
        let bob = ball(&mut w, Vec3::new(0.0, 4.0, 0.0), false);
        let j = w
            .create_joint(&JointSettings::point(
                None,
                Some(bob),
                Vec3::new(0.0, 5.0, 0.0),
                Vec3::new(0.0, 1.0, 0.0),
            ))
            .unwrap();
        for _ in 0..60 {
            w.update(DT, collision_steps, pool()).unwrap();
        }
        let m = w.mass(bob).unwrap();
        let expected = m * 9.81 * DT;
        let got = w.joint_impulse(j).unwrap();
        let error = (got.linear - expected).abs() / expected;
        println!(
            "{collision_steps} collision steps: joint impulse {:.6} N s, m g dt {expected:.6} ({:.3}%), angular {:.2e}",
            got.linear,
            error * 100.0,
            got.angular
        );
        assert!(error < 1e-3, "{got:?} vs {expected}");
    }
}

/// Three hanging chains of six spheres (0.2 m apart, point joints, the
/// first held by the world at (0, 10, 2c)); returns the links and joints
/// by chain.
fn hanging_chains(w: &mut PhysicsSystem) -> (Vec<Vec<BodyId>>, Vec<Vec<JointId>>) {
    let (mut links, mut joints) = (Vec::new(), Vec::new());
    for c in 0..3 {
        let z = 2.0 * c as f32;
        let (mut l, mut j) = (Vec::new(), Vec::new());
        for k in 0..6 {
            let b = ball(w, Vec3::new(0.1 + 0.2 * k as f32, 10.0, z), true);
            let (a, anchor_a) = match l.last() {
                Some(&prev) => (Some(prev), Vec3::new(0.1, 0.0, 0.0)),
                None => (None, Vec3::new(0.0, 10.0, z)),
            };
            let s = JointSettings::point(a, Some(b), anchor_a, Vec3::new(-0.1, 0.0, 0.0));
            j.push(w.create_joint(&s).unwrap());
            l.push(b);
        }
        links.push(l);
        joints.push(j);
    }
    (links, joints)
}

/// Steps `w` and a fresh world restored from a snapshot of it (its joint
/// trees built from nothing) `n` times side by side: the same state hash
/// after each step. Returns whether `w`'s first step reused its trees.
fn steps_like_a_fresh_world(w: &mut PhysicsSystem, n: usize) -> bool {
    let mut bytes = Vec::new();
    w.save_state(&mut bytes).unwrap();
    let mut fresh = world(PhysicsSettings::default());
    fresh.restore_state(&bytes).unwrap();
    let mut first = None;
    for s in 0..n {
        step(w, 1);
        step(&mut fresh, 1);
        first.get_or_insert(w.last_stats().joint_trees_reused);
        assert!(!fresh.last_stats().joint_trees_reused || s > 0);
        assert_eq!(w.state_hash(), fresh.state_hash(), "step {s}");
    }
    first.unwrap()
}

/// The joint trees keep their structure from one step to the next while
/// the tree joints, their bodies and the packs stay the same
/// (`joint_trees_reused`), and build it again when a joint is removed or
/// created, a body leaves or a chain is put to sleep; either way the world
/// steps bit-identically to a fresh one restored from its snapshot, whose
/// trees are built from nothing.
#[test]
fn joint_trees_are_reused_only_while_their_structure_holds() {
    let mut w = world(PhysicsSettings::default());
    let (links, joints) = hanging_chains(&mut w);
    step(&mut w, 2);
    let s = *w.last_stats();
    println!(
        "swinging: {} joints in trees, reused {}",
        s.joints_in_trees, s.joint_trees_reused
    );
    assert_eq!(s.joints_in_trees, 18);
    assert!(s.joint_trees_reused, "nothing changed");
    assert!(steps_like_a_fresh_world(&mut w, 5));

    // a chain cut in the middle: a held tree and a free one
    w.remove_joint(joints[0][3]).unwrap();
    assert!(!steps_like_a_fresh_world(&mut w, 5), "a joint removed");
    assert_eq!(w.last_stats().joints_in_trees, 17);

    // the tips of chains 1 and 2 joined: one island held at two places,
    // which a tree cannot solve (it stays on Gauss–Seidel)
    let tips = JointSettings::point(Some(links[1][5]), Some(links[2][5]), Vec3::ZERO, Vec3::ZERO);
    let bridge = w.create_joint(&tips).unwrap();
    assert!(!steps_like_a_fresh_world(&mut w, 5), "a joint created");
    assert_eq!(w.last_stats().joints_in_trees, 5);
    w.remove_joint(bridge).unwrap();
    assert!(!steps_like_a_fresh_world(&mut w, 5), "the bridge removed");
    assert_eq!(w.last_stats().joints_in_trees, 17);

    // a link leaves the world: its two joints leave the step
    w.remove_body(links[1][2]).unwrap();
    assert!(!steps_like_a_fresh_world(&mut w, 5), "a body removed");
    assert_eq!(w.last_stats().joints_in_trees, 15);

    // chain 2 put to sleep: its island leaves the step
    for &b in &links[2] {
        w.deactivate_body(b).unwrap();
    }
    assert!(!steps_like_a_fresh_world(&mut w, 5), "a chain asleep");
    println!(
        "after the changes: {} joints in trees",
        w.last_stats().joints_in_trees
    );
    assert_eq!(w.last_stats().joints_in_trees, 9);
    assert!(w.last_stats().joint_trees_reused);
}
