//! Steps a scene on an engine-style job system (`scope_pool.rs`: plain
//! `std::thread::scope` threads behind `archipelago::Executor`) and on the
//! kernel's pinned rayon pool, side by side, and shows that both give the
//! same state hash.
//!
//! `cargo run --release -p archipelago --example scoped_executor -- [scene] [threads] [steps]`

mod scope_pool;

use archipelago::{scenes, Executor, PhysicsSettings, PhysicsSystem};
use scope_pool::ScopePool;
use std::time::{Duration, Instant};

fn run(scene: &scenes::Scene, steps: u32, exec: &dyn Executor) -> (u64, Duration) {
    let (mut world, ids): (PhysicsSystem, _) = scene.build(PhysicsSettings::default()).unwrap();
    let mut spent = Duration::ZERO;
    for s in 0..steps {
        scene.before_update(&mut world, &ids, s).unwrap();
        let t = Instant::now();
        world.update(scenes::DT, 1, exec).unwrap();
        spent += t.elapsed();
    }
    (world.state_hash(), spent)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map_or("pyramid", String::as_str);
    let threads: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2);
    let steps: u32 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(200);
    let scene = scenes::by_name(name).expect("a scene of archipelago::scenes::NAMES");
    let pinned = archipelago::build_pinned_pool(Some(threads)).unwrap();
    // Alternate the two, three rounds each, so a noisy machine hurts both.
    let (mut rayon_ms, mut scope_ms) = (Vec::new(), Vec::new());
    let mut hashes = Vec::new();
    for _ in 0..3 {
        let (h, t) = run(&scene, steps, &pinned.pool);
        hashes.push(h);
        rayon_ms.push(t.as_secs_f64() * 1e3 / steps as f64);
        let (h, t) = ScopePool::with(threads, |pool| run(&scene, steps, pool));
        hashes.push(h);
        scope_ms.push(t.as_secs_f64() * 1e3 / steps as f64);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (r, s) = (median(&mut rayon_ms), median(&mut scope_ms));
    println!("{name}, {threads} threads, {steps} steps (median of 3 alternating runs):");
    println!("  rayon pinned pool : {r:.3} ms/step");
    println!("  std::thread::scope: {s:.3} ms/step ({:.2}x rayon)", s / r);
    let same = hashes.iter().all(|&h| h == hashes[0]);
    println!("  state hash {:016x} on both: {same}", hashes[0]);
    assert!(same, "executors gave different states: {hashes:x?}");
}
