//! Every executor gives the bits rayon gives: the same state hash after the
//! same steps on rayon pools of 1, 2 and 4 workers, the pinned pool, the
//! serial executor and an engine-style `std::thread::scope` job system
//! (`examples/scoped_executor/scope_pool.rs`) of 1, 2 and 4 workers, on the
//! pyramid (one split island), the rain (many islands, landing) and the
//! chains (joint trees). And an executor that breaks its contract gets a
//! typed error, not a half step.

#[path = "../examples/scoped_executor/scope_pool.rs"]
mod scope_pool;

use archipelago::{
    build_pinned_pool, scenes, Executor, PhysicsError, PhysicsSettings, SerialExecutor,
};
use scope_pool::ScopePool;

fn hash_after(scene: &scenes::Scene, steps: u32, exec: &dyn Executor) -> u64 {
    let (mut world, ids) = scene.build(PhysicsSettings::default()).unwrap();
    for s in 0..steps {
        scene.before_update(&mut world, &ids, s).unwrap();
        world.update(scenes::DT, 1, exec).unwrap();
    }
    world.state_hash()
}

#[test]
fn every_executor_gives_rayons_bits() {
    for (scene, steps) in [
        (scenes::pyramid(), 60),
        (scenes::rain(), 90),
        (scenes::chains(), 60),
    ] {
        let rayon1 = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let reference = hash_after(&scene, steps, &rayon1);
        let mut seen = vec![("rayon, 1 worker".to_string(), reference)];
        for n in [2, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap();
            seen.push((
                format!("rayon, {n} workers"),
                hash_after(&scene, steps, &pool),
            ));
        }
        let pinned = build_pinned_pool(Some(2)).unwrap();
        seen.push((
            "PinnedPool, 2 workers".into(),
            hash_after(&scene, steps, &pinned),
        ));
        seen.push((
            "SerialExecutor".into(),
            hash_after(&scene, steps, &SerialExecutor),
        ));
        for n in [1, 2, 4] {
            let h = ScopePool::with(n, |pool| hash_after(&scene, steps, pool));
            seen.push((format!("std::thread::scope, {n} workers"), h));
        }
        println!("{}: {:016x} after {steps} steps", scene.name, reference);
        for (who, h) in &seen {
            assert_eq!(*h, reference, "{} on {who}", scene.name);
        }
    }
}

/// An executor whose `install` never runs the step.
struct Lazy;
impl Executor for Lazy {
    fn workers(&self) -> usize {
        2
    }
    fn install(&self, _f: &mut (dyn FnMut() + Send)) {}
    fn fan_out(
        &self,
        _helpers: usize,
        _helper: &(dyn Fn() + Sync),
        caller: &mut (dyn FnMut() + Send),
    ) {
        caller()
    }
    fn worker_index(&self) -> Option<usize> {
        None
    }
}

#[test]
fn an_executor_that_does_not_run_the_step_gets_a_typed_error() {
    let (mut world, _) = scenes::towers().build(PhysicsSettings::default()).unwrap();
    world.update(scenes::DT, 1, &SerialExecutor).unwrap();
    let before = world.state_hash();
    assert_eq!(
        world.update(scenes::DT, 1, &Lazy).unwrap_err(),
        PhysicsError::ExecutorDidNotRun
    );
    assert_eq!(world.state_hash(), before, "nothing stepped");
    // and the world still steps on a proper one
    world.update(scenes::DT, 1, &SerialExecutor).unwrap();
    assert_ne!(world.state_hash(), before);
}

#[test]
fn a_helper_panic_reaches_the_caller_of_the_scope_pool() {
    let caught = ScopePool::with(3, |pool| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let ran = std::sync::atomic::AtomicUsize::new(0);
            pool.fan_out(
                2,
                &|| {
                    ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    panic!("helper");
                },
                // the caller's part lasts until a helper has started
                &mut || {
                    let t = std::time::Instant::now();
                    while ran.load(std::sync::atomic::Ordering::Relaxed) == 0
                        && t.elapsed() < std::time::Duration::from_secs(30)
                    {
                        std::thread::yield_now();
                    }
                },
            );
        }))
    });
    assert!(caught.is_err(), "the helper's panic is resumed in fan_out");
}
