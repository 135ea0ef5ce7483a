//! `update` allocates nothing in steady state: every buffer is sized at
//! creation (or grows during warm-up and then stays). A counting global
//! allocator proves it over 100 steps of the pyramid, the towers and the
//! joint scenes (chains: joint trees; net: joints and contacts in one split
//! large island; ragdolls: piling and falling asleep) and the terrain
//! (several manifolds per body on a height field) and compounds resting on
//! it (a child against a surface) on a 4-worker pool, stepped from inside the pool (see `update`'s docs for the
//! one rayon allocation per 63 calls from outside), and of the pyramid on
//! the serial executor and on a `std::thread::scope` job system; and
//! `save_state` into a buffer with room allocates nothing either.

#[path = "../examples/scoped_executor/scope_pool.rs"]
mod scope_pool;

use archipelago::{build_pinned_pool, scenes, Executor, PhysicsSettings, SerialExecutor};
use archipelago_layout::CountingAlloc;

#[global_allocator]
static HEAP: CountingAlloc = CountingAlloc::new();

/// Allocations during `steps` updates after `warmup`, with the steps
/// driven from inside one of the pool's workers (as an engine's job system
/// would) or from the test's own thread.
fn allocations_in_steady_state(
    scene: scenes::Scene,
    pool: &dyn Executor,
    warmup: usize,
    steps: usize,
    from_inside: bool,
) -> usize {
    let (mut w, _) = scene.build(PhysicsSettings::default()).unwrap();
    for _ in 0..warmup {
        w.update(scenes::DT, 1, pool).unwrap();
    }
    let mut run = || {
        HEAP.start_counting();
        for _ in 0..steps {
            w.update(scenes::DT, 1, pool).unwrap();
        }
        HEAP.stop_counting()
    };
    if from_inside {
        let mut counted = 0;
        pool.install(&mut || counted = run());
        counted
    } else {
        run()
    }
}

/// 64 tables and Ls (the `compounds` scene's, which stand) dropped on the
/// terrain's height field, 8 × 8 spaced 4 m, never sleeping.
fn compounds_on_terrain() -> scenes::Scene {
    let terrain = scenes::terrain();
    let compounds = scenes::compounds();
    // bodies 1 and 3 of the compounds scene are its table and its L
    let (table, ell) = (compounds.bodies[1].shape, compounds.bodies[3].shape);
    let mut bodies = vec![terrain.bodies[0]];
    for k in 0..64 {
        let p = archipelago::Vec3::new(
            (k % 8) as f32 * 4.0 - 14.0,
            scenes::terrain_height((k % 8) as f32 * 4.0 - 14.0, (k / 8) as f32 * 4.0 - 14.0) + 1.5,
            (k / 8) as f32 * 4.0 - 14.0,
        );
        let shape = if k % 2 == 0 { table } else { ell };
        bodies.push(
            archipelago::BodyCreationSettings::new(shape, p, archipelago::MotionType::Dynamic)
                .with_allow_sleeping(false),
        );
    }
    scenes::Scene {
        shapes: scenes::SceneShapes {
            compounds: compounds.shapes.compounds,
            ..terrain.shapes
        },
        bodies,
        ..terrain
    }
}

// One test function: the counter is global, so the scenes run one after
// the other rather than in parallel test threads.
#[test]
fn update_does_not_allocate_in_steady_state() {
    // 4 workers on this 2-core machine: every parallel path, with stealing.
    let pool = build_pinned_pool(Some(4)).unwrap().pool;
    // the counter works: a step of a freshly built world does allocate
    // (buffers growing to their working size)
    let (mut fresh, _) = scenes::rain().build(PhysicsSettings::default()).unwrap();
    HEAP.start_counting();
    let v: Vec<u64> = Vec::with_capacity(16);
    fresh.update(scenes::DT, 1, &pool).unwrap();
    let counted = HEAP.stop_counting();
    drop(v);
    assert!(counted > 0, "the counting allocator must count");

    // contact events on for every body: the event buffers are preallocated
    let with_events = |mut s: scenes::Scene| {
        s.bodies.iter_mut().for_each(|b| b.contact_events = true);
        s
    };
    for (name, scene) in [
        ("pyramid", scenes::pyramid()),
        ("towers", scenes::towers()),
        ("chains", scenes::chains()),
        ("ragdolls", scenes::ragdolls()),
        (
            "ragdolls with contact events",
            with_events(scenes::ragdolls()),
        ),
        (
            "pyramid with contact events",
            with_events(scenes::pyramid()),
        ),
    ] {
        assert_eq!(
            allocations_in_steady_state(scene, &pool, 10, 100, true),
            0,
            "{name}, stepped from a pool worker"
        );
    }
    // The net keeps changing for seconds as it sags: after 10 warm-up steps
    // its scratch lists still grew 6 times in the next 100 (each to a
    // larger step than any before, as documented); after 300, never.
    assert_eq!(
        allocations_in_steady_state(scenes::net(), &pool, 300, 100, true),
        0,
        "net, stepped from a pool worker"
    );
    // The terrain: bodies touching the height field with several
    // manifolds each, through the narrow phase's per-job extra lists
    // (each reserved once, on its job's first such pair). Like the net,
    // its steps keep changing while 2,000 bodies tumble and roll: after
    // 300 warm-up steps the next 100 still allocated 3 times (which
    // buffer grew was not traced); from 900 steps, when most bodies have
    // come to rest, never.
    assert_eq!(
        allocations_in_steady_state(scenes::terrain(), &pool, 900, 100, true),
        0,
        "terrain, stepped from a pool worker"
    );
    // Compounds on the height field: each child that touches the surface
    // gathers its triangles' contacts in a scratch the narrow phase keeps
    // one a job (it was boxed per compound–surface pair per step, stop 35:
    // 100 steps of this scene then allocated once per resting pair and
    // step). Sleeping is off, so every pair is collided in every counted
    // step (and compound pairs never come from the body-pair cache).
    let scene = compounds_on_terrain();
    let pairs = {
        let (mut w, _) = scene.build(PhysicsSettings::default()).unwrap();
        for _ in 0..300 {
            w.update(scenes::DT, 1, &pool).unwrap();
        }
        let field = scene.bodies[0].shape;
        w.contacts()
            .filter(|c| {
                let shapes = [c.body_a, c.body_b].map(|b| w.shape(b).unwrap());
                shapes.contains(&field)
            })
            .count()
    };
    println!("compounds on the terrain: {pairs} compound-surface manifolds after 300 steps");
    assert!(
        pairs >= 32,
        "the compounds rest on the height field ({pairs} manifolds)"
    );
    assert_eq!(
        allocations_in_steady_state(scene, &pool, 300, 100, true),
        0,
        "compounds on a height field, stepped from a pool worker"
    );
    // The other executors: the serial one, and an engine-style job system
    // (the example's `std::thread::scope` pool, which posts each loop's
    // helper on a board instead of allocating a task).
    assert_eq!(
        allocations_in_steady_state(scenes::pyramid(), &SerialExecutor, 10, 100, true),
        0,
        "pyramid on SerialExecutor"
    );
    let on_scope = scope_pool::ScopePool::with(4, |scope| {
        allocations_in_steady_state(scenes::pyramid(), scope, 10, 100, true)
    });
    assert_eq!(on_scope, 0, "pyramid on the std::thread::scope executor");
    // Rollback networking saves every frame: into a buffer with room, a
    // save allocates nothing either.
    let (mut w, _) = scenes::pyramid().build(PhysicsSettings::default()).unwrap();
    let mut snapshot = Vec::new();
    for _ in 0..10 {
        w.update(scenes::DT, 1, &SerialExecutor).unwrap();
    }
    w.save_state(&mut snapshot).unwrap();
    snapshot.reserve(snapshot.len() / 4);
    HEAP.start_counting();
    for _ in 0..100 {
        w.update(scenes::DT, 1, &SerialExecutor).unwrap();
        w.save_state(&mut snapshot).unwrap();
    }
    assert_eq!(HEAP.stop_counting(), 0, "pyramid, update and save_state");
    // From outside the pool each update is one job injected into rayon's
    // global queue, which allocates a 63-slot block when one fills: at most
    // 2 blocks per 100 steps, nothing from the engine.
    let outside = allocations_in_steady_state(scenes::pyramid(), &pool, 10, 100, false);
    println!("pyramid stepped from outside the pool: {outside} allocations in 100 steps");
    assert!(outside <= 100usize.div_ceil(63), "{outside}");
}
