//! Peers side by side, in one process: the same standard scene in
//! archipelago, Rapier and Jolt, alternating repeats, at the same thread
//! counts, with ms/step, ratios and each engine's state after the run (so a
//! fast engine that lets the pyramid collapse is not mistaken for a good one).
//!
//! ```text
//! bash perf-reports/install-peer-deps.sh   # cmake, clang, libclang-dev
//! cargo run --release -p archipelago-benches --features peers --bin peers -- \
//!     [--scenes pyramid,rain,piles,towers] [--threads 1,2] [--steps 500] [--runs 3]
//!     [--broadphase sap|auto]   (archipelago's; `avalanche-N` scenes too)
//!     [--engines archipelago,rapier,jolt]   (a subset, e.g. one per process to read its peak memory)
//! # without Jolt (no cmake or clang needed):
//! cargo run --release -p archipelago-benches --features rapier --bin peers -- ...
//! ```
//!
//! Joint scenes (chains, net, ragdolls) print each engine's largest joint
//! stretch over the run (`Scene::joint_stretch`, measured after every step
//! outside the timed part). Jolt is not in them: Jolt's C API (joltc-sys
//! 0.3.1) has no constraints. Hulls, compounds, meshes and height fields
//! are mapped to each engine's own (`rapier.rs`, `jolt.rs`).
//!
//! Settings, matched as closely as each API allows (see `rapier.rs` and
//! `jolt.rs` for the per-engine choices):
//! - all: dt 1/60 s, one collision step per update, gravity −9.81 m/s², the
//!   scene's bodies with their shapes, poses, velocities, friction,
//!   restitution, damping (archipelago's world default 0.05 where a body
//!   has none, as Jolt's), density, sleeping flags.
//! - archipelago: `PhysicsSettings::default()` (Jolt's values: 10 velocity
//!   and 2 position iterations, 2 cm speculative distance), SAP, splitter on,
//!   a pinned pool of N workers.
//! - Jolt (joltc-sys 0.3.1 = Jolt 5.0.0): its PerformanceTest setup: 10240
//!   bodies, 65536 body pairs, 20480 contact constraints, default physics
//!   settings (10 velocity / 2 position steps), boxes without convex radius
//!   (as PerformanceTest's, and as archipelago's sharp boxes), hulls with
//!   its default convex radius, a job system of N−1 workers plus the
//!   calling thread. Its library is joltc-sys's CMake build (Release: the
//!   profiler and debug renderer compiled in, as that build has them).
//! - Rapier 0.36.1 with `parallel`: default integration parameters (4
//!   solver iterations = substeps of its soft-TGS solver, 1 internal PGS
//!   and 1 stabilisation iteration each: Rapier's own recommendation;
//!   10+2 has no equivalent), prediction distance 2 cm (its default,
//!   matching ours), friction/restitution combined by averaging (its only
//!   rule that equals our geometric mean / max for the equal coefficients
//!   of these scenes), stepped inside a rayon pool of N workers. Joints as
//!   its impulse joints (`rapier.rs` lists the mapping).

#[cfg(feature = "jolt")]
mod jolt;
mod rapier;

use archipelago::{
    build_pinned_pool, scenes, BroadPhaseKind, PhysicsSettings, PhysicsSystem, ThreadPool,
};
use std::time::Instant;

/// Jolt's PerformanceTest prints this for the pyramid after 500 steps
/// (FNV-1a 64 over each body's position and rotation, in body-id order).
const JOLT_PYRAMID_500_HASH: u64 = 0x632157dec8d0f0bd;

/// FNV-1a 64 over bytes, as Jolt's `HashBytes`.
pub fn fnv1a(bytes: &[u8], mut hash: u64) -> u64 {
    for &b in bytes {
        hash ^= b as u64;
        hash = hash.wrapping_mul(0x100000001b3);
    }
    hash
}
pub const FNV_OFFSET: u64 = 0xcbf29ce484222325;

/// One engine running one scene.
pub trait Peer {
    /// Called before every step with the number of steps done (late
    /// bodies arrive).
    fn before_step(&mut self, _steps_done: u32) {}
    fn step(&mut self);
    /// Position and rotation (x, y, z, w) of every body, in scene order.
    fn poses(&self) -> Vec<([f32; 3], [f32; 4])>;
}

struct Archipelago {
    world: PhysicsSystem,
    pool: &'static ThreadPool,
    scene: scenes::Scene,
    ids: Vec<archipelago::BodyId>,
}

impl Peer for Archipelago {
    fn before_step(&mut self, steps_done: u32) {
        self.scene
            .before_update(&mut self.world, &self.ids, steps_done)
            .expect("late bodies fit");
    }
    fn step(&mut self) {
        self.world
            .update(scenes::DT, 1, self.pool)
            .expect("valid step");
    }
    fn poses(&self) -> Vec<([f32; 3], [f32; 4])> {
        let ids = self.world.body_ids();
        ids.iter()
            .map(|&id| {
                let p = self.world.position(id).expect("live body");
                let q = self.world.rotation(id).expect("live body");
                (p.to_array(), q.to_array())
            })
            .collect()
    }
}

/// The engines this build has, archipelago first; Jolt only with the
/// `jolt` feature, only for scenes without joints (its C API has none),
/// and for meshes and height fields only where its shim could be built
/// against the library's own configuration (`jolt::maps`).
fn engines(scene: &scenes::Scene) -> Vec<&'static str> {
    #[cfg(feature = "jolt")]
    let jolt = scene.joints.is_empty() && jolt::maps(scene);
    #[cfg(not(feature = "jolt"))]
    let jolt = {
        let _ = scene;
        false
    };
    let mut e = vec!["archipelago", "rapier"];
    if jolt {
        e.push("jolt");
    }
    e
}

/// A standard scene by name, or `avalanche-N` (`avalanche`: 32,768
/// bodies).
fn scene_by_name(name: &str) -> Option<scenes::Scene> {
    if let Some(n) = name.strip_prefix("avalanche") {
        let n = match n.strip_prefix('-') {
            Some(count) => count.parse().ok()?,
            None if n.is_empty() => 32_768,
            None => return None,
        };
        return Some(scenes::avalanche(n));
    }
    scenes::by_name(name)
}

fn build(
    engine: &str,
    scene: &scenes::Scene,
    threads: usize,
    pools: &Pools,
    broad_phase: BroadPhaseKind,
) -> Box<dyn Peer> {
    match engine {
        "archipelago" => {
            let settings = PhysicsSettings {
                broad_phase,
                ..PhysicsSettings::default()
            };
            let (world, ids) = scene.build(settings).expect("standard scene");
            Box::new(Archipelago {
                world,
                pool: pools.get(threads),
                scene: scene.clone(),
                ids,
            })
        }
        "rapier" => Box::new(rapier::Rapier::new(scene, pools.get(threads))),
        #[cfg(feature = "jolt")]
        "jolt" => Box::new(jolt::Jolt::new(scene, threads)),
        _ => unreachable!(),
    }
}

struct Pools(Vec<(usize, &'static ThreadPool)>);

impl Pools {
    fn get(&self, threads: usize) -> &'static ThreadPool {
        self.0
            .iter()
            .find(|(t, _)| *t == threads)
            .map(|(_, p)| *p)
            .expect("pool built")
    }
}

/// State of a scene after the run: highest and lowest dynamic centre and
/// the largest horizontal drift of a dynamic body from where it started.
#[derive(Debug, Clone, Copy)]
struct Stability {
    top_y: f32,
    low_y: f32,
    max_drift: f32,
    /// On the terrain scenes: the lowest dynamic centre's height over the
    /// terrain's surface beneath it (m), and how many centres are under it
    /// (a body that fell through, or a surface mapped wrongly).
    surface: Option<(f32, usize)>,
}

fn stability(scene: &scenes::Scene, poses: &[([f32; 3], [f32; 4])]) -> Stability {
    let mut s = Stability {
        top_y: f32::MIN,
        low_y: f32::MAX,
        max_drift: 0.0,
        surface: None,
    };
    let on_terrain = scene.name.starts_with("terrain");
    let half = (scenes::TERRAIN_SAMPLES - 1) as f32 / 2.0;
    for (b, (p, _)) in scene.bodies.iter().zip(poses) {
        if b.motion_type != archipelago::MotionType::Dynamic {
            continue;
        }
        s.top_y = s.top_y.max(p[1]);
        s.low_y = s.low_y.min(p[1]);
        if on_terrain && p[0].abs() <= half && p[2].abs() <= half {
            let gap = p[1] - scenes::terrain_height(p[0], p[2]);
            let (low, under) = s.surface.get_or_insert((f32::MAX, 0));
            *low = low.min(gap);
            *under += (gap < 0.0) as usize;
        }
        let (dx, dz) = (p[0] - b.position.x, p[2] - b.position.z);
        s.max_drift = s.max_drift.max((dx * dx + dz * dz).sqrt());
    }
    s
}

/// The scene's largest joint stretch at these poses (m).
fn joint_stretch(scene: &scenes::Scene, poses: &[([f32; 3], [f32; 4])]) -> f32 {
    let poses: Vec<_> = poses
        .iter()
        .map(|(p, q)| {
            (
                archipelago::Vec3::from_array(*p),
                archipelago::Quat::from_array(*q),
            )
        })
        .collect();
    scene.joint_stretch(&poses)
}

fn hash(poses: &[([f32; 3], [f32; 4])]) -> u64 {
    poses.iter().fold(FNV_OFFSET, |h, (p, q)| {
        let h = p.iter().fold(h, |h, v| fnv1a(&v.to_le_bytes(), h));
        q.iter().fold(h, |h, v| fnv1a(&v.to_le_bytes(), h))
    })
}

fn list<T: std::str::FromStr>(s: &str) -> Result<Vec<T>, String> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse::<T>()
                .map_err(|_| format!("bad value {x:?}"))
        })
        .collect()
}

fn main() {
    let mut scene_names: Vec<String> = vec!["pyramid".into()];
    let mut threads: Vec<usize> = vec![1, 2];
    let mut steps = 500u32;
    let mut runs = 3u32;
    let mut broad_phase = BroadPhaseKind::Sap;
    let mut only: Option<Vec<String>> = None;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_default();
        let r = match flag.as_str() {
            "--scenes" => list(&value).map(|v| scene_names = v),
            "--threads" => list(&value).map(|v| threads = v),
            "--steps" => value.parse().map(|v| steps = v).map_err(|e| format!("{e}")),
            "--runs" => value.parse().map(|v| runs = v).map_err(|e| format!("{e}")),
            "--broadphase" => match value.as_str() {
                "sap" => Ok(BroadPhaseKind::Sap),
                "auto" => Ok(BroadPhaseKind::Auto),
                other => Err(format!("--broadphase: sap or auto, got {other:?}")),
            }
            .map(|k| broad_phase = k),
            "--engines" => list(&value).map(|v| only = Some(v)),
            _ => Err(format!(
                "usage: peers [--scenes pyramid,rain,piles,towers,avalanche-N] [--threads 1,2] [--steps N] [--runs R] [--broadphase sap|auto] [--engines archipelago,rapier,jolt]; got {flag}"
            )),
        };
        if let Err(e) = r {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
    if threads.contains(&0) || steps == 0 || runs == 0 {
        eprintln!("threads, steps and runs must be at least 1");
        std::process::exit(2);
    }
    let pools = Pools(
        threads
            .iter()
            .map(|&t| {
                let pool: &'static ThreadPool =
                    Box::leak(Box::new(build_pinned_pool(Some(t)).expect("pool").pool));
                (t, pool)
            })
            .collect(),
    );
    println!(
        "peers: {steps} steps x {runs} runs per engine, engines alternating, dt {:.5} s",
        scenes::DT
    );
    println!(
        "{:<8} {:>3} {:<12} {:>9} {:>17} {:>10} {:>7} {:>7} {:>9} {:>12}  hash",
        "scene",
        "thr",
        "engine",
        "ms/step",
        "min-max",
        "x archip.",
        "top y",
        "low y",
        "drift",
        "stretch mm"
    );
    for name in &scene_names {
        let Some(scene) = scene_by_name(name) else {
            eprintln!("unknown scene {name}");
            std::process::exit(2);
        };
        // `--engines`: only those (one engine per process: its peak memory)
        let engines: Vec<&str> = engines(&scene)
            .into_iter()
            .filter(|e| only.as_ref().is_none_or(|o| o.iter().any(|x| x == e)))
            .collect();
        let jointed = !scene.joints.is_empty();
        for &t in &threads {
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); engines.len()];
            let mut last = vec![None; engines.len()];
            let mut stretch = vec![0f32; engines.len()];
            for run in 0..runs as usize {
                for k in 0..engines.len() {
                    // rotate the order each run: no engine always goes first
                    let e = (run + k) % engines.len();
                    eprint!(
                        "\r{name} {t} threads run {}/{runs}: {:<12}",
                        run + 1,
                        engines[e]
                    );
                    let mut peer = build(engines[e], &scene, t, &pools, broad_phase);
                    let mut elapsed = std::time::Duration::ZERO;
                    for k in 0..steps {
                        peer.before_step(k);
                        let t0 = Instant::now();
                        peer.step();
                        elapsed += t0.elapsed();
                        if jointed {
                            stretch[e] = stretch[e].max(joint_stretch(&scene, &peer.poses()));
                        }
                    }
                    times[e].push(elapsed.as_secs_f64() * 1e3 / steps as f64);
                    let poses = peer.poses();
                    last[e] = Some((stability(&scene, &poses), hash(&poses)));
                }
            }
            eprint!("\r{:60}\r", "");
            let medians: Vec<f64> = times
                .iter_mut()
                .map(|v| {
                    v.sort_by(f64::total_cmp);
                    v[v.len() / 2]
                })
                .collect();
            for (e, engine) in engines.iter().enumerate() {
                let v = &times[e];
                let (st, h) = last[e].expect("ran");
                let stretch = if jointed {
                    format!("{:.3}", stretch[e] * 1e3)
                } else {
                    "-".into()
                };
                println!(
                    "{:<8} {:>3} {:<12} {:>9.3} {:>17} {:>9.2}x {:>7.3} {:>7.3} {:>9.4} {:>12}  {h:016x}",
                    name,
                    t,
                    engine,
                    medians[e],
                    format!("{:.3}-{:.3}", v[0], v[v.len() - 1]),
                    medians[e] / medians[0],
                    st.top_y,
                    st.low_y,
                    st.max_drift,
                    stretch,
                );
            }
            for (e, engine) in engines.iter().enumerate() {
                if let Some((gap, under)) = last[e].expect("ran").0.surface {
                    println!(
                        "{name:<8} {t:>3} {engine:<12} lowest centre {gap:.3} m over the surface, {under} centres under it"
                    );
                }
            }
            if jointed {
                println!("{name:<8} {t:>3} jolt         n/a: Jolt's C API (joltc-sys 0.3.1) has no constraints");
            }
            if name == "pyramid" && steps == 500 && engines.len() > 2 {
                let h = last[2].expect("ran").1;
                println!(
                    "jolt pyramid hash after 500 steps {h:016x}; Jolt's PerformanceTest prints {JOLT_PYRAMID_500_HASH:016x}: {}",
                    if h == JOLT_PYRAMID_500_HASH {
                        "same scene"
                    } else {
                        "MISMATCH (not the PerformanceTest scene)"
                    }
                );
            }
        }
    }
    println!(
        "'x archip.' is the engine's ms/step over archipelago's (above 1: archipelago is faster)"
    );
}
