//! Runs a standard scene for a number of steps and prints ms/step, body and
//! contact counts, the per-phase split and the final state hash.
//!
//! `cargo run --release -p archipelago-benches --bin scaling -- [--scene NAME] [--steps N] [--runs R]`
//!
//! Single-threaded for now: the thread-scaling table (1/2/4/8/16 threads on
//! pinned pools) arrives with the parallel pipeline.

use archipelago::{scenes, BroadPhaseKind, MbpSettings, PhaseTimes, PhysicsSettings, Vec3};
use std::time::{Duration, Instant};

struct Args {
    scene: String,
    steps: u32,
    runs: u32,
    broad_phase: BroadPhaseKind,
    no_sleep: bool,
}

/// MBP regions for the standard scenes: an 8 × 8 grid over the floor.
fn mbp() -> BroadPhaseKind {
    BroadPhaseKind::Mbp(MbpSettings {
        world_min: Vec3::new(-52.0, -4.0, -52.0),
        world_max: Vec3::new(52.0, 60.0, 52.0),
        subdivisions: 8,
    })
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        scene: "pyramid".into(),
        steps: 500,
        runs: 3,
        broad_phase: BroadPhaseKind::Sap,
        no_sleep: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--scene" => args.scene = value()?,
            "--steps" => args.steps = value()?.parse().map_err(|e| format!("--steps: {e}"))?,
            "--runs" => args.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--broadphase" => {
                args.broad_phase = match value()?.as_str() {
                    "sap" => BroadPhaseKind::Sap,
                    "mbp" => mbp(),
                    "brute" => BroadPhaseKind::BruteForce,
                    other => return Err(format!("--broadphase: unknown {other:?} (sap|mbp|brute)")),
                }
            }
            "--no-sleep" => args.no_sleep = true,
            "--help" | "-h" => {
                return Err(format!(
                    "usage: scaling [--scene {}] [--steps N] [--runs R] [--broadphase sap|mbp|brute] [--no-sleep]",
                    scenes::NAMES.join("|")
                ))
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    if args.steps == 0 || args.runs == 0 {
        return Err("--steps and --runs must be at least 1".into());
    }
    Ok(args)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let Some(scene) = scenes::by_name(&args.scene) else {
        eprintln!(
            "unknown scene {:?}; one of {}",
            args.scene,
            scenes::NAMES.join(", ")
        );
        std::process::exit(2);
    };
    println!(
        "scene {} ({} dynamic bodies), {} steps x {} runs, dt {:.5} s, 1 thread, broad phase {:?}{}",
        scene.name,
        scene.dynamic_count(),
        args.steps,
        args.runs,
        scenes::DT,
        args.broad_phase,
        if args.no_sleep { ", sleeping off" } else { "" }
    );
    let mut per_run = Vec::new();
    let mut hash = None;
    let mut phases = PhaseTimes::default();
    let mut last = None;
    for run in 0..args.runs {
        let (mut world, _) = scene
            .build(PhysicsSettings::default())
            .expect("standard scene builds");
        let mut total = Duration::ZERO;
        for step in 0..args.steps {
            let t0 = Instant::now();
            let stats = world.update(scenes::DT, 1).expect("valid step");
            total += t0.elapsed();
            if run == args.runs - 1 {
                phases.accumulate(&stats.times);
                last = Some(stats);
            }
            if step % 100 == 0 {
                eprint!(
                    "\rrun {}/{} step {}/{}   ",
                    run + 1,
                    args.runs,
                    step,
                    args.steps
                );
            }
        }
        let h = world.state_hash();
        if let Some(prev) = hash {
            if prev != h {
                println!("WARNING: run {run} hash {h:016x} differs from {prev:016x}");
            }
        }
        hash = Some(h);
        per_run.push(total.as_secs_f64() * 1e3 / args.steps as f64);
    }
    eprintln!();
    per_run.sort_by(f64::total_cmp);
    let median = per_run[per_run.len() / 2];
    let stats = last.expect("at least one step ran");
    println!(
        "threads 1: {:.3} ms/step (median of {}, min {:.3}, max {:.3})",
        median,
        args.runs,
        per_run[0],
        per_run[per_run.len() - 1]
    );
    println!(
        "active bodies {}, islands awake/total {}/{}, body pairs {}, manifolds {}, contact points {}, dropped pairs/manifolds {}/{}",
        stats.active_bodies,
        stats.islands,
        stats.total_islands(),
        stats.body_pairs,
        stats.manifolds,
        stats.contact_points,
        stats.body_pairs_dropped,
        stats.manifolds_dropped
    );
    let sum: f64 = phases.named().iter().map(|(_, t)| t.as_secs_f64()).sum();
    let split: Vec<String> = phases
        .named()
        .iter()
        .map(|(n, t)| format!("{n} {:.1}%", 100.0 * t.as_secs_f64() / sum.max(1e-12)))
        .collect();
    println!("phases: {}", split.join(", "));
    println!("state hash {:016x}", hash.expect("ran"));
}
