//! What a snapshot costs: bytes, `save_state` and `restore_state` time
//! (median of repeated calls into one reused buffer), and the update right
//! after a restore (the broad phase re-inserts every body) against a plain
//! update, side by side in one run, for the pyramid and the rain after 100
//! steps.
//!
//! `cargo run --release -p archipelago --example snapshot_cost [THREADS]`

use archipelago::{build_pinned_pool, scenes, PhysicsSettings};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let threads: usize = std::env::args()
        .nth(1)
        .map_or(2, |s| s.parse().expect("THREADS"));
    let pool = build_pinned_pool(Some(threads)).expect("pool").pool;
    println!("threads {threads}");
    println!(
        "{:<8} {:>7} {:>10} {:>9} {:>12} {:>14} {:>14}",
        "scene", "bodies", "bytes", "save µs", "restore µs", "update ms", "after rest. ms"
    );
    for scene in [scenes::pyramid(), scenes::rain()] {
        let (mut world, ids) = scene.build(PhysicsSettings::default()).expect("scene");
        for s in 0..100 {
            scene
                .before_update(&mut world, &ids, s)
                .expect("late bodies");
            world.update(scenes::DT, 1, &pool).expect("update");
        }
        let mut buf = Vec::new();
        world.save_state(&mut buf).expect("save");
        const REPS: usize = 50;
        let save_us = median(
            (0..REPS)
                .map(|_| {
                    let t = Instant::now();
                    world.save_state(&mut buf).expect("save");
                    t.elapsed().as_secs_f64() * 1e6
                })
                .collect(),
        );
        let restore_us = median(
            (0..REPS)
                .map(|_| {
                    let t = Instant::now();
                    world.restore_state(&buf).expect("restore");
                    t.elapsed().as_secs_f64() * 1e6
                })
                .collect(),
        );
        // alternate: restore + update, and update from the state a plain
        // update reaches (restore untimed, then one update to settle the
        // re-insertion, then the timed one)
        let (mut plain, mut after) = (Vec::new(), Vec::new());
        for _ in 0..10 {
            world.restore_state(&buf).expect("restore");
            let t = Instant::now();
            world.update(scenes::DT, 1, &pool).expect("update");
            after.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            world.update(scenes::DT, 1, &pool).expect("update");
            plain.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "{:<8} {:>7} {:>10} {:>9.0} {:>12.0} {:>14.3} {:>14.3}",
            scene.name,
            world.num_bodies(),
            buf.len(),
            save_us,
            restore_us,
            median(plain),
            median(after)
        );
    }
}
