//! Reading back 4096 transforms (the rain after 300 steps; or `bulk_copy
//! N`: the N bodies of an avalanche as built): one
//! `copy_poses` call, one `copy_poses_aos` call, and 4096 `position` +
//! `rotation` getter calls, timed side by side (alternating, median of 201
//! rounds), plus `par_copy_poses` on 2 workers.
//!
//! `cargo run --release -p archipelago --example bulk_copy [-- N]`

use archipelago::{scenes, PhysicsSettings, Pose, Quat, Vec3};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let pinned = archipelago::build_pinned_pool(Some(2)).unwrap();
    // `bulk_copy N`: the avalanche of N bodies as built (where a copy's
    // cost does not depend on motion), to find where going parallel pays.
    let n_arg: Option<usize> = std::env::args().nth(1).and_then(|a| a.parse().ok());
    let (w, _) = match n_arg {
        Some(n) => scenes::avalanche(n)
            .build(PhysicsSettings::default())
            .unwrap(),
        None => {
            let (mut w, ids) = scenes::rain().build(PhysicsSettings::default()).unwrap();
            for _ in 0..300 {
                w.update(scenes::DT, 1, &pinned.pool).unwrap();
            }
            (w, ids)
        }
    };
    let ids: Vec<_> = w.body_ids().into_iter().skip(1).collect(); // without the floor
    let n = ids.len();
    let (mut p, mut q) = (vec![Vec3::ZERO; n], vec![Quat::IDENTITY; n]);
    let mut poses = vec![Pose::default(); n];
    let mut times = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..201 {
        let t = Instant::now();
        for (k, &id) in ids.iter().enumerate() {
            p[k] = w.position(id).unwrap();
            q[k] = w.rotation(id).unwrap();
        }
        black_box((&p, &q));
        times[0].push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        w.copy_poses(&ids, &mut p, &mut q).unwrap();
        black_box((&p, &q));
        times[1].push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        w.copy_poses_aos(&ids, &mut poses).unwrap();
        black_box(&poses);
        times[2].push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        w.par_copy_poses(&ids, &mut p, &mut q, &pinned).unwrap();
        black_box((&p, &q));
        times[3].push(t.elapsed().as_secs_f64() * 1e6);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let m: Vec<f64> = times.iter_mut().map(median).collect();
    println!("{n} transforms, median of 201 alternating rounds:");
    println!("  {n} getter pairs          : {:8.1} µs", m[0]);
    println!(
        "  copy_poses (SoA)          : {:8.1} µs ({:.1}x faster)",
        m[1],
        m[0] / m[1]
    );
    println!(
        "  copy_poses_aos            : {:8.1} µs ({:.1}x faster)",
        m[2],
        m[0] / m[2]
    );
    println!(
        "  par_copy_poses, 2 workers : {:8.1} µs ({:.1}x faster)",
        m[3],
        m[0] / m[3]
    );
}
