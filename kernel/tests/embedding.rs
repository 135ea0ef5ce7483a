//! What an engine embedding the kernel reads and writes in bulk: the
//! active list, pose copies (SoA, AoS, parallel) equal to the per-body
//! getters bit for bit, kinematic targets all or nothing, and debug draw
//! (one shape per body at its pose, one colour per split on the pyramid).

use archipelago::{
    build_pinned_pool, scenes, BodyCreationSettings, BodyId, Colour, DebugColouring,
    DebugDrawSettings, DebugSink, KinematicTarget, MotionType, PhysicsError, PhysicsSettings,
    PhysicsSystem, Pose, Quat, Shape, Vec3,
};
use std::collections::{BTreeMap, BTreeSet};

fn bits(v: Vec3, q: Quat) -> ([u32; 3], [u32; 4]) {
    (
        v.to_array().map(f32::to_bits),
        q.to_array().map(f32::to_bits),
    )
}

fn stepped(scene: scenes::Scene, steps: u32) -> PhysicsSystem {
    let pool = build_pinned_pool(Some(2)).unwrap().pool;
    let (mut w, ids) = scene.build(PhysicsSettings::default()).unwrap();
    for s in 0..steps {
        scene.before_update(&mut w, &ids, s).unwrap();
        w.update(scenes::DT, 1, &pool).unwrap();
    }
    w
}

#[test]
fn bulk_copies_equal_the_getters() {
    let mut w = stepped(scenes::rain(), 120);
    let ids = w.body_ids();
    let n = ids.len();
    let want: Vec<_> = ids
        .iter()
        .map(|&id| bits(w.position(id).unwrap(), w.rotation(id).unwrap()))
        .collect();
    let (mut p, mut q) = (vec![Vec3::ZERO; n], vec![Quat::IDENTITY; n]);
    w.copy_poses(&ids, &mut p, &mut q).unwrap();
    let got: Vec<_> = p.iter().zip(&q).map(|(&p, &q)| bits(p, q)).collect();
    assert_eq!(got, want, "SoA");
    let mut poses = vec![Pose::default(); n];
    w.copy_poses_aos(&ids, &mut poses).unwrap();
    let got: Vec<_> = poses
        .iter()
        .map(|p| bits(Vec3::from_array(p.position), Quat::from_array(p.rotation)))
        .collect();
    assert_eq!(got, want, "AoS");
    let pool = build_pinned_pool(Some(2)).unwrap();
    let (mut pp, mut pq) = (vec![Vec3::ZERO; n], vec![Quat::IDENTITY; n]);
    w.par_copy_poses(&ids, &mut pp, &mut pq, &pool).unwrap();
    let got: Vec<_> = pp.iter().zip(&pq).map(|(&p, &q)| bits(p, q)).collect();
    assert_eq!(got, want, "parallel SoA");

    // Refused calls write nothing.
    let (mut short, mut q2) = (vec![Vec3::NAN; n - 1], vec![Quat::IDENTITY; n]);
    assert_eq!(
        w.copy_poses(&ids, &mut short, &mut q2),
        Err(PhysicsError::BufferLengthMismatch)
    );
    assert!(short.iter().all(|v| v.x.is_nan()));
    let gone = ids[7];
    w.destroy_body(gone).unwrap();
    let mut one = vec![
        Pose {
            position: [9.0; 3],
            rotation: [9.0; 4]
        };
        2
    ];
    assert_eq!(
        w.copy_poses_aos(&[ids[3], gone], &mut one),
        Err(PhysicsError::InvalidBodyId)
    );
    assert!(
        one.iter().all(|p| p.position == [9.0; 3]),
        "nothing written"
    );
}

#[test]
fn the_active_list_is_the_awake_bodies() {
    let mut w = stepped(scenes::towers(), 10);
    let check = |w: &PhysicsSystem| {
        let listed: BTreeSet<BodyId> = w.active_bodies().iter().copied().collect();
        assert_eq!(listed.len(), w.active_bodies().len(), "no duplicates");
        let awake: BTreeSet<BodyId> = w
            .body_ids()
            .into_iter()
            .filter(|&id| w.is_active(id).unwrap())
            .collect();
        assert_eq!(listed, awake);
        assert_eq!(listed.len(), w.num_active_bodies());
    };
    check(&w);
    assert!(w.num_active_bodies() > 0);
    // Sleep, removal and re-adding reorder the list; it stays right.
    let some: Vec<_> = w.active_bodies()[..3].to_vec();
    w.deactivate_body(some[0]).unwrap();
    check(&w);
    w.remove_body(some[1]).unwrap();
    check(&w);
    w.add_body(some[1]).unwrap();
    check(&w);
    let pool = build_pinned_pool(Some(2)).unwrap().pool;
    for _ in 0..400 {
        w.update(scenes::DT, 1, &pool).unwrap();
    }
    check(&w);
    println!("towers: {} active after 410 steps", w.num_active_bodies());
}

#[test]
fn kinematic_targets_are_all_or_nothing() {
    let mut w = PhysicsSystem::new(Default::default(), PhysicsSettings::default()).unwrap();
    let kin = |w: &mut PhysicsSystem, x: f32| {
        let s = BodyCreationSettings::new(
            Shape::sphere(0.5).unwrap(),
            Vec3::new(x, 1.0, 0.0),
            MotionType::Kinematic,
        );
        w.create_and_add_body(&s).unwrap()
    };
    let (a, b) = (kin(&mut w, 0.0), kin(&mut w, 3.0));
    let dynamic = w
        .create_and_add_body(&BodyCreationSettings::new(
            Shape::sphere(0.5).unwrap(),
            Vec3::new(6.0, 1.0, 0.0),
            MotionType::Dynamic,
        ))
        .unwrap();
    let dt = 1.0 / 60.0;
    let targets = [
        KinematicTarget {
            body: a,
            position: Vec3::new(0.5, 1.0, 0.0),
            rotation: Quat::from_rotation_y(0.1),
        },
        KinematicTarget {
            body: b,
            position: Vec3::new(3.0, 2.0, 0.0),
            rotation: Quat::IDENTITY,
        },
    ];
    // A bad target anywhere in the list: refused, nothing set.
    let bad = [
        targets[0],
        KinematicTarget {
            body: dynamic,
            ..targets[1]
        },
    ];
    assert_eq!(
        w.set_kinematic_targets(&bad, dt),
        Err(PhysicsError::WrongMotionType)
    );
    assert_eq!(
        w.linear_velocity(a).unwrap(),
        Vec3::ZERO,
        "the first target was not applied"
    );
    // The good list sets what move_kinematic would, bit for bit.
    w.set_kinematic_targets(&targets, dt).unwrap();
    let velocities = |w: &PhysicsSystem, id: BodyId| {
        let (v, av) = (
            w.linear_velocity(id).unwrap(),
            w.angular_velocity(id).unwrap(),
        );
        (
            v.to_array().map(f32::to_bits),
            av.to_array().map(f32::to_bits),
        )
    };
    let got: Vec<_> = [a, b].iter().map(|&id| velocities(&w, id)).collect();
    let mut one_by_one =
        PhysicsSystem::new(Default::default(), PhysicsSettings::default()).unwrap();
    let (a2, b2) = (kin(&mut one_by_one, 0.0), kin(&mut one_by_one, 3.0));
    for (id, t) in [(a2, targets[0]), (b2, targets[1])] {
        one_by_one
            .move_kinematic(id, t.position, t.rotation, dt)
            .unwrap();
    }
    let want: Vec<_> = [a2, b2]
        .iter()
        .map(|&id| velocities(&one_by_one, id))
        .collect();
    assert_eq!(got, want);
    assert!((w.linear_velocity(a).unwrap().x - 30.0).abs() < 1e-3);
}

#[derive(Default)]
struct Recorder {
    shapes: BTreeMap<BodyId, (Shape, Vec3, Quat, Colour)>,
    contacts: Vec<(Vec3, Colour)>,
    lines: usize,
    aabbs: usize,
}

impl DebugSink for Recorder {
    fn shape(
        &mut self,
        body: BodyId,
        shape: &Shape,
        position: Vec3,
        rotation: Quat,
        colour: Colour,
    ) {
        assert!(
            self.shapes
                .insert(body, (*shape, position, rotation, colour))
                .is_none(),
            "one shape per body"
        );
    }
    fn line(&mut self, _from: Vec3, _to: Vec3, _colour: Colour) {
        self.lines += 1;
    }
    fn contact(&mut self, point: Vec3, _normal: Vec3, _separation: f32, colour: Colour) {
        self.contacts.push((point, colour));
    }
    fn aabb(&mut self, _body: BodyId, _min: Vec3, _max: Vec3, _colour: Colour) {
        self.aabbs += 1;
    }
}

#[test]
fn debug_draw_shows_every_body_and_one_colour_per_split() {
    let w = stepped(scenes::pyramid(), 60);
    let settings = DebugDrawSettings {
        colouring: DebugColouring::Split,
        contacts: true,
        aabbs: true,
        ..Default::default()
    };
    let mut r = Recorder::default();
    w.debug_draw(&settings, &mut r);
    assert_eq!(r.shapes.len(), 1241);
    assert_eq!(r.aabbs, 1241);
    for (&id, &(shape, p, q, colour)) in &r.shapes {
        assert_eq!(shape, w.shape(id).unwrap());
        assert_eq!(
            bits(p, q),
            bits(w.position(id).unwrap(), w.rotation(id).unwrap())
        );
        if w.motion_type(id).unwrap() == MotionType::Static {
            assert_eq!(colour, Colour::STATIC);
        }
    }
    let stats = w.last_stats();
    let splits = stats.split_items.iter().filter(|&&n| n > 0).count();
    let colours: BTreeSet<Colour> = r.contacts.iter().map(|c| c.1).collect();
    let points: usize = w.contacts().map(|c| c.points().len()).sum();
    assert_eq!(r.contacts.len(), points);
    println!(
        "pyramid: {splits} splits, {} contact colours, {} points",
        colours.len(),
        points
    );
    assert!(splits > 1);
    // Contacts of islands the splitter left whole (a cube resting on the
    // floor alone) are ungrouped; the split island's take one colour per
    // split.
    let mut split_colours = colours.clone();
    let ungrouped = split_colours.remove(&Colour::UNGROUPED);
    assert_eq!(split_colours.len(), splits, "one colour per split");
    assert_eq!(ungrouped, stats.islands > stats.large_islands, "{stats:?}");
    // Bodies coloured by split use split colours (no ungrouped body: one split island).
    let body_colours: BTreeSet<Colour> = r
        .shapes
        .values()
        .filter(|s| s.3 != Colour::STATIC)
        .map(|s| s.3)
        .collect();
    assert!(body_colours.is_subset(&colours), "{body_colours:?}");
    assert!(body_colours.len() > 1);

    // Joints: three lines each (anchor to anchor, and to each side's centre
    // or none for the world).
    let chains = stepped(scenes::chains(), 10);
    let mut r = Recorder::default();
    chains.debug_draw(&DebugDrawSettings::default(), &mut r);
    let to_world = chains
        .joint_ids()
        .iter()
        .filter(|&&j| {
            let s = chains.joint(j).unwrap();
            s.body_a.is_none() || s.body_b.is_none()
        })
        .count();
    assert_eq!(r.lines, 3 * chains.num_joints() - to_world);
    assert_eq!(r.shapes.len(), chains.num_bodies());
}
