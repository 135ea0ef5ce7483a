//! The main job: runs a standard scene at several thread counts, one pinned
//! pool per count, and prints a table of ms/step (median and min–max over
//! runs), speedup and efficiency against 1 thread, whether the state hash
//! equals the 1-thread hash, counts, the per-phase split, and the work/span
//! parallelism T1/T∞ (median of 5 traced steps after the timed ones).
//!
//! `cargo run --release -p archipelago-benches --bin scaling -- [options]`
//!
//! Options: `--scene NAME` (pyramid; `avalanche` with `--bodies N`, default
//! 32768), `--threads 1,2,4` (default 1,2,4,8,16;
//! rows with more threads than physical cores are marked oversubscribed),
//! `--steps N` (500), `--runs R` (3), `--warmup N` (60 untimed steps per
//! thread count first), `--csv FILE`, `--trace FILE` (chrome trace of the median traced
//! step at the largest thread count), `--no-sleep`, `--no-splitter`,
//! `--contact-events` (on for every body), `--broadphase
//! sap|mbp|mbp-fitted|auto|brute` (mbp: an 8 × 8 grid over ±52 m; mbp-fitted: 8 × 8
//! fitted to the bodies), `--solver wide|scalar` (the solver's lane width: same
//! results, to compare their speed), `--simd auto|avx512|avx2|baseline` (the
//! instruction set of the wide bundles: same results), `--pair-cache
//! on|off|both` (the body-pair cache; `both` runs every thread count with it
//! on and off, alternating, and prints the narrow phase's ratio),
//! `--predict` (replays the 1-thread traced steps on 1–64 simulated workers
//! and prints the predicted table beside the measured one, the knee and what
//! limits it: `predict.rs`; needs 1 among the thread counts), `--predict-csv
//! FILE` (that table as CSV, for `report`), `--memory-bandwidth GB/s` (the
//! memory system's bandwidth for the prediction's ceiling, where this
//! machine has too few cores to measure it). The header says which SIMD
//! path ran.

mod predict;

use archipelago::{
    build_pinned_pool, detect_cores, scenes, BroadPhaseKind, MbpSettings, PhaseTimes,
    PhysicsSettings, SimdPath, SolverWidth, StepStats, StepTrace, Vec3, WorkSpan,
};
use std::io::Write;
use std::time::{Duration, Instant};

/// Steps traced after the timed ones, for work and span.
const TRACED_STEPS: usize = 5;

struct Args {
    scene: String,
    /// Bodies of the avalanche scene.
    bodies: usize,
    threads: Option<Vec<usize>>,
    steps: u32,
    runs: u32,
    warmup: u32,
    csv: Option<String>,
    trace: Option<String>,
    broad_phase: BroadPhaseKind,
    no_sleep: bool,
    /// Contact events on for every body.
    contact_events: bool,
    no_splitter: bool,
    solver: SolverWidth,
    simd: SimdPath,
    /// Body-pair cache settings to run, each at every thread count.
    pair_cache: Vec<bool>,
    predict: bool,
    predict_csv: Option<String>,
    memory_gbs: Option<f64>,
}

/// MBP regions for the standard scenes: an 8 × 8 grid over the floor.
fn mbp() -> BroadPhaseKind {
    BroadPhaseKind::Mbp(MbpSettings {
        world_min: Vec3::new(-52.0, -4.0, -52.0),
        world_max: Vec3::new(52.0, 60.0, 52.0),
        subdivisions: 8,
    })
}

fn usage() -> String {
    format!(
        "usage: scaling [--scene {}|avalanche] [--bodies N (avalanche, default 32768)] [--threads 1,2,4] [--steps N] [--runs R] [--warmup N] [--csv FILE] [--trace FILE] [--broadphase sap|mbp|mbp-fitted|auto|brute] [--no-sleep] [--no-splitter] [--contact-events] [--solver wide|scalar] [--simd auto|avx512|avx2|baseline] [--pair-cache on|off|both] [--predict] [--predict-csv FILE] [--memory-bandwidth GB/s]",
        scenes::NAMES.join("|")
    )
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        scene: "pyramid".into(),
        bodies: 32_768,
        threads: None,
        steps: 500,
        runs: 3,
        warmup: 60,
        csv: None,
        trace: None,
        broad_phase: BroadPhaseKind::Sap,
        no_sleep: false,
        contact_events: false,
        no_splitter: false,
        solver: SolverWidth::Wide,
        simd: SimdPath::Auto,
        pair_cache: vec![true],
        predict: false,
        predict_csv: None,
        memory_gbs: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--scene" => args.scene = value()?,
            "--bodies" => args.bodies = value()?.parse().map_err(|e| format!("--bodies: {e}"))?,
            "--threads" => {
                let list: Result<Vec<usize>, _> = value()?
                    .split(',')
                    .map(|t| t.trim().parse::<usize>())
                    .collect();
                let list = list.map_err(|e| format!("--threads: {e}"))?;
                if list.is_empty() || list.contains(&0) {
                    return Err("--threads: counts must be at least 1".into());
                }
                args.threads = Some(list);
            }
            "--steps" => args.steps = value()?.parse().map_err(|e| format!("--steps: {e}"))?,
            "--runs" => args.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--warmup" => args.warmup = value()?.parse().map_err(|e| format!("--warmup: {e}"))?,
            "--csv" => args.csv = Some(value()?),
            "--trace" => args.trace = Some(value()?),
            "--broadphase" => {
                args.broad_phase = match value()?.as_str() {
                    "sap" => BroadPhaseKind::Sap,
                    "mbp" => mbp(),
                    "brute" => BroadPhaseKind::BruteForce,
                    "mbp-fitted" => BroadPhaseKind::MbpFitted { subdivisions: 8 },
                    "auto" => BroadPhaseKind::Auto,
                    other => {
                        return Err(format!(
                            "--broadphase: unknown {other:?} (sap|mbp|mbp-fitted|auto|brute)"
                        ))
                    }
                }
            }
            "--no-sleep" => args.no_sleep = true,
            "--contact-events" => args.contact_events = true,
            "--no-splitter" => args.no_splitter = true,
            "--simd" => {
                args.simd = match value()?.as_str() {
                    "auto" => SimdPath::Auto,
                    "avx512" => SimdPath::Avx512,
                    "avx2" => SimdPath::Avx2,
                    "baseline" => SimdPath::Baseline,
                    other => return Err(format!("--simd: unknown path {other}")),
                };
                if !args.simd.is_available() {
                    return Err(format!("--simd: this CPU cannot run {:?}", args.simd));
                }
            }
            "--solver" => {
                args.solver = match value()?.as_str() {
                    "wide" => SolverWidth::Wide,
                    "scalar" => SolverWidth::Scalar,
                    other => return Err(format!("--solver: unknown width {other}")),
                }
            }
            "--pair-cache" => {
                args.pair_cache = match value()?.as_str() {
                    "on" => vec![true],
                    "off" => vec![false],
                    "both" => vec![true, false],
                    other => return Err(format!("--pair-cache: unknown {other} (on|off|both)")),
                }
            }
            "--predict" => args.predict = true,
            "--predict-csv" => {
                args.predict = true;
                args.predict_csv = Some(value()?);
            }
            "--memory-bandwidth" => {
                let g: f64 = value()?
                    .parse()
                    .map_err(|e| format!("--memory-bandwidth: {e}"))?;
                if !(g.is_finite() && g > 0.0) {
                    return Err("--memory-bandwidth: GB/s must be positive".into());
                }
                args.memory_gbs = Some(g);
            }
            "--help" | "-h" => return Err(usage()),
            other => return Err(format!("unknown option {other}\n{}", usage())),
        }
    }
    if args.steps == 0 || args.runs == 0 {
        return Err("--steps and --runs must be at least 1".into());
    }
    if args.predict && !args.threads.as_ref().is_none_or(|t| t.contains(&1)) {
        return Err("--predict replays 1-thread traces: --threads must include 1".into());
    }
    Ok(args)
}

/// Each phase's share of the summed phase times, in percent.
fn phase_percentages(phases: &PhaseTimes) -> Vec<(&'static str, f64)> {
    let named = phases.named();
    let sum: f64 = named.iter().map(|(_, t)| t.as_secs_f64()).sum();
    named
        .iter()
        .map(|(n, t)| (*n, 100.0 * t.as_secs_f64() / sum.max(1e-12)))
        .collect()
}

/// One thread count's measurements.
struct Row {
    threads: usize,
    pair_cache: bool,
    /// Body-pair cache hits and misses over the last run's timed steps, and
    /// pairs whose bounding spheres were apart (neither).
    cache_hits: u64,
    cache_misses: u64,
    apart_by_bounds: u64,
    median_ms: f64,
    min_ms: f64,
    max_ms: f64,
    hash: u64,
    stats: StepStats,
    phases: PhaseTimes,
    work_span: WorkSpan,
    /// Per-stage median over the traced steps (robust to preemption), when
    /// the steps had the same structure.
    median_work_span: Option<WorkSpan>,
    /// Largest joint stretch after the last timed step (m).
    stretch: f32,
    /// --predict: 1-thread steps traced during the runs.
    predict_traces: Vec<StepTrace>,
    /// The steps traced after the last run.
    traces: Vec<StepTrace>,
    oversubscribed: bool,
    pinning: archipelago::Pinning,
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let scene = match args.scene.as_str() {
        "avalanche" => Some(scenes::avalanche(args.bodies)),
        name => scenes::by_name(name),
    };
    let Some(mut scene) = scene else {
        eprintln!(
            "unknown scene {:?}; one of {}",
            args.scene,
            scenes::NAMES.join(", ")
        );
        std::process::exit(2);
    };
    if args.contact_events {
        scene
            .bodies
            .iter_mut()
            .for_each(|b| b.contact_events = true);
    }
    let cores = detect_cores();
    let threads = args.threads.clone().unwrap_or_else(|| vec![1, 2, 4, 8, 16]);
    let base_settings = PhysicsSettings {
        broad_phase: args.broad_phase,
        allow_sleeping: !args.no_sleep,
        use_large_island_splitter: !args.no_splitter,
        solver_width: args.solver,
        simd: args.simd,
        ..PhysicsSettings::default()
    };
    println!(
        "scene {} ({} dynamic bodies), {} steps x {} runs, dt {:.5} s, broad phase {:?}, sleeping {}, splitter {}, solver {:?}, SIMD path {:?} (of {:?} here), body-pair cache {}, contact events {}",
        scene.name,
        scene.dynamic_count(),
        args.steps,
        args.runs,
        scenes::DT,
        args.broad_phase,
        if args.no_sleep { "off" } else { "on" },
        if args.no_splitter { "off" } else { "on" },
        args.solver,
        args.simd.resolve(),
        SimdPath::available().collect::<Vec<_>>(),
        match args.pair_cache[..] {
            [true] => "on",
            [false] => "off",
            _ => "on and off",
        },
        if args.contact_events { "on for every body" } else { "off" },
    );
    println!(
        "machine: {} logical CPUs, {} physical cores ({})",
        cores.logical,
        cores.physical(),
        if cores.from_os {
            "from sysfs"
        } else {
            "topology unknown: logical counted as physical"
        }
    );

    // Runs alternate between thread counts (run 1 at every count, then run
    // 2, ...), so slow phases of this shared machine hit every count alike.
    let max_threads = *threads.iter().max().expect("at least one count");
    let pools: Vec<_> = threads
        .iter()
        .map(|&t| build_pinned_pool(Some(t)).expect("thread pool"))
        .collect();
    // One configuration per (thread count, cache setting), in the order
    // the runs alternate through them.
    let configs: Vec<(usize, bool)> = (0..threads.len())
        .flat_map(|ti| args.pair_cache.iter().map(move |&c| (ti, c)))
        .collect();
    let settings_of = |cache: bool| PhysicsSettings {
        use_body_pair_cache: cache,
        ..base_settings
    };
    struct Acc {
        per_run: Vec<f64>,
        hash: Option<u64>,
        phases: PhaseTimes,
        last: Option<StepStats>,
        work_span: Option<WorkSpan>,
        median_work_span: Option<WorkSpan>,
        /// --predict: 1-thread steps traced during the runs.
        predict_traces: Vec<StepTrace>,
        /// The steps traced after the last run.
        traces: Vec<StepTrace>,
        cache_hits: u64,
        cache_misses: u64,
        apart_by_bounds: u64,
        stretch: f32,
    }
    // Warm-up: start every pool's workers, fault in the buffers and let the
    // CPU clocks settle before anything is timed.
    for &(ti, cache) in &configs {
        let (p, t) = (&pools[ti], threads[ti]);
        let (mut world, ids) = scene
            .build(settings_of(cache))
            .expect("standard scene builds");
        for step in 0..args.warmup {
            scene
                .before_update(&mut world, &ids, step)
                .expect("late bodies fit");
            world.update(scenes::DT, 1, &p.pool).expect("valid step");
        }
        eprint!("\rwarm-up {t} threads      ");
    }
    let mut acc: Vec<Acc> = configs
        .iter()
        .map(|_| Acc {
            per_run: Vec::new(),
            hash: None,
            phases: PhaseTimes::default(),
            last: None,
            work_span: None,
            median_work_span: None,
            predict_traces: Vec::new(),
            traces: Vec::new(),
            cache_hits: 0,
            cache_misses: 0,
            apart_by_bounds: 0,
            stretch: 0.0,
        })
        .collect();
    for run in 0..args.runs {
        for (ci, &(ti, cache)) in configs.iter().enumerate() {
            let (pool, t) = (&pools[ti].pool, threads[ti]);
            let a = &mut acc[ci];
            let (mut world, ids) = scene
                .build(settings_of(cache))
                .expect("standard scene builds");
            let mut total = Duration::ZERO;
            let mut timed = 0u32;
            // --predict: the 1-thread runs trace steps spread over each run
            // (so the replayed steps are a sample of the timed ones, taken
            // at the same moments of this shared machine); they are left
            // out of the timing.
            let stride = (args.steps / predict::TRACES_PER_RUN).max(1);
            let traces_here = args.predict && t == 1 && cache == args.pair_cache[0];
            for step in 0..args.steps {
                scene
                    .before_update(&mut world, &ids, step)
                    .expect("late bodies fit");
                if traces_here && step % stride == stride / 2 {
                    world.record_trace();
                    world.update(scenes::DT, 1, pool).expect("valid step");
                    a.predict_traces.push(world.take_trace().expect("armed"));
                    continue;
                }
                let t0 = Instant::now();
                let stats = world.update(scenes::DT, 1, pool).expect("valid step");
                total += t0.elapsed();
                timed += 1;
                if run == args.runs - 1 {
                    a.phases.accumulate(&stats.times);
                    a.cache_hits += stats.body_pair_cache_hits as u64;
                    a.cache_misses += stats.body_pair_cache_misses as u64;
                    a.apart_by_bounds += stats.body_pairs_apart_by_bounds as u64;
                    a.last = Some(stats);
                }
                if step % 50 == 0 {
                    eprint!(
                        "\rrun {}/{} {t} threads: step {}/{}      ",
                        run + 1,
                        args.runs,
                        step,
                        args.steps
                    );
                }
            }
            let h = world.state_hash();
            if run == args.runs - 1 && !scene.joints.is_empty() {
                let poses: Vec<_> = ids
                    .iter()
                    .map(|&id| {
                        (
                            world.position(id).expect("live"),
                            world.rotation(id).expect("live"),
                        )
                    })
                    .collect();
                a.stretch = scene.joint_stretch(&poses);
            }
            if let Some(prev) = a.hash {
                if prev != h {
                    println!(
                        "WARNING: {t} threads run {run}: hash {h:016x} differs from {prev:016x}"
                    );
                }
            }
            a.hash = Some(h);
            a.per_run
                .push(total.as_secs_f64() * 1e3 / timed.max(1) as f64);
            if run == args.runs - 1 {
                // A few more steps, traced (not timed): work and span. One
                // preempted job stretches a step's critical path, so the
                // median step by T1/T∞ is reported.
                let mut traced = Vec::new();
                for _ in 0..TRACED_STEPS {
                    world.record_trace();
                    world.update(scenes::DT, 1, pool).expect("valid step");
                    let trace = world.take_trace().expect("armed");
                    traced.push((trace.work_span(), trace));
                }
                let steps: Vec<StepTrace> = traced.iter().map(|(_, t)| t.clone()).collect();
                a.median_work_span = StepTrace::median_work_span(&steps);
                a.traces = steps;
                traced.sort_by(|a, b| a.0.parallelism().total_cmp(&b.0.parallelism()));
                let (ws, trace) = &traced[traced.len() / 2];
                a.work_span = Some(*ws);
                if t == max_threads {
                    if let Some(path) = &args.trace {
                        std::fs::write(path, trace.to_chrome_json()).expect("write trace");
                    }
                }
            }
        }
    }
    let rows: Vec<Row> = configs
        .iter()
        .zip(acc)
        .map(|(&(ti, cache), mut a)| {
            let (t, p) = (threads[ti], &pools[ti]);
            a.per_run.sort_by(f64::total_cmp);
            Row {
                threads: t,
                pair_cache: cache,
                cache_hits: a.cache_hits,
                cache_misses: a.cache_misses,
                apart_by_bounds: a.apart_by_bounds,
                median_ms: a.per_run[a.per_run.len() / 2],
                min_ms: a.per_run[0],
                max_ms: a.per_run[a.per_run.len() - 1],
                hash: a.hash.expect("ran"),
                stats: a.last.expect("ran"),
                phases: a.phases,
                work_span: a.work_span.expect("traced"),
                median_work_span: a.median_work_span,
                stretch: a.stretch,
                predict_traces: a.predict_traces,
                traces: a.traces,
                oversubscribed: t > cores.physical(),
                pinning: p.pinning,
            }
        })
        .collect();
    eprintln!();

    // Speedup and the hash check compare rows of the same cache setting
    // (the cache changes trajectories, so their hashes differ).
    let first = |cache: bool| rows.iter().find(|r| r.pair_cache == cache).expect("a row");
    let base = |r: &Row| first(r.pair_cache).median_ms * first(r.pair_cache).threads as f64;
    let base_hash = |r: &Row| {
        rows.iter()
            .find(|o| o.threads == 1 && o.pair_cache == r.pair_cache)
            .map(|o| o.hash)
    };
    let label = |r: &Row| {
        if args.pair_cache.len() > 1 {
            format!("{} {}", r.threads, if r.pair_cache { "on" } else { "off" })
        } else {
            r.threads.to_string()
        }
    };
    println!(
        "{:>7} {:>9} {:>17} {:>8} {:>6} {:>16} {:>5} {:>7} {:>7} {:>9} {:>7}  pinning",
        "threads",
        "ms/step",
        "min-max",
        "speedup",
        "eff",
        "hash",
        "=1t",
        "active",
        "islands",
        "contacts",
        "T1/Tinf"
    );
    for r in &rows {
        let speedup = base(r) / r.median_ms;
        println!(
            "{:>7} {:>9.3} {:>17} {:>7.2}x {:>5.0}% {:016x} {:>5} {:>7} {:>7} {:>9} {:>7.1}  {:?}{}",
            label(r),
            r.median_ms,
            format!("{:.3}-{:.3}", r.min_ms, r.max_ms),
            speedup,
            100.0 * speedup / r.threads as f64,
            r.hash,
            match base_hash(r) {
                Some(h) if h == r.hash => "yes",
                Some(_) => "NO",
                None => "-",
            },
            r.stats.active_bodies,
            r.stats.islands,
            r.stats.manifolds,
            r.work_span.parallelism(),
            r.pinning,
            if r.oversubscribed { "  (oversubscribed)" } else { "" },
        );
    }
    let last = &rows[rows.len() - 1].stats;
    println!(
        "last step: body pairs {}, contact points {}, joints {}, large islands {}, splits {}, split 31 items {}, dropped pairs/manifolds {}/{}, constraints solved wide {} ({:.0}%) / scalar {}",
        last.body_pairs,
        last.contact_points,
        last.active_joints,
        last.large_islands,
        last.splits,
        last.split_items[31],
        last.body_pairs_dropped,
        last.manifolds_dropped,
        last.constraints_wide,
        100.0 * last.constraints_wide as f64
            / (last.constraints_wide + last.constraints_scalar).max(1) as f64,
        last.constraints_scalar,
    );
    if !scene.joints.is_empty() {
        for r in &rows {
            println!(
                "joints at {} threads: largest stretch after the run {:.4} mm ({} joints, {} solved by joint trees)",
                label(r),
                r.stretch * 1e3,
                scene.joints.len(),
                r.stats.joints_in_trees,
            );
        }
    }
    for r in &rows {
        let split: Vec<String> = phase_percentages(&r.phases)
            .iter()
            .map(|(n, p)| format!("{n} {p:.1}%"))
            .collect();
        println!("phases at {} threads: {}", label(r), split.join(", "));
    }
    // The narrow phase per step, and what the body-pair cache served.
    let narrow_ms = |r: &Row| r.phases.narrow_phase.as_secs_f64() * 1e3 / args.steps as f64;
    for r in &rows {
        let pairs = (r.cache_hits + r.cache_misses).max(1);
        println!(
            "narrow phase at {} threads: {:.3} ms/step, body-pair cache {} ({:.1}% of {} pairs served from it; {} more apart by bounding spheres)",
            label(r),
            narrow_ms(r),
            if r.pair_cache { "on" } else { "off" },
            100.0 * r.cache_hits as f64 / pairs as f64,
            r.cache_hits + r.cache_misses,
            r.apart_by_bounds,
        );
    }
    if args.pair_cache.len() > 1 {
        for on in rows.iter().filter(|r| r.pair_cache) {
            if let Some(off) = rows
                .iter()
                .find(|o| !o.pair_cache && o.threads == on.threads)
            {
                println!(
                    "body-pair cache at {} threads: narrow phase {:.2}x faster with it (off {:.3} / on {:.3} ms/step), step {:.2}x",
                    on.threads,
                    narrow_ms(off) / narrow_ms(on).max(1e-9),
                    narrow_ms(off),
                    narrow_ms(on),
                    off.median_ms / on.median_ms,
                );
            }
        }
    }
    for r in &rows {
        println!(
            "work/span at {} threads (median of {TRACED_STEPS} traced steps): T1 {:.3} ms, Tinf {:.3} ms, T1/Tinf {:.1}, {} jobs",
            label(r),
            r.work_span.work.as_secs_f64() * 1e3,
            r.work_span.span.as_secs_f64() * 1e3,
            r.work_span.parallelism(),
            r.work_span.jobs
        );
        match r.median_work_span {
            Some(m) => println!(
                "  per-stage median over the {TRACED_STEPS} steps (a preempted job counts in one step, not in the median): T1 {:.3} ms, Tinf {:.3} ms, T1/Tinf {:.1}",
                m.work.as_secs_f64() * 1e3,
                m.span.as_secs_f64() * 1e3,
                m.parallelism()
            ),
            None => println!("  per-stage median: the traced steps differ in structure"),
        }
    }

    if args.predict {
        let cache = args.pair_cache[0];
        let one = rows
            .iter()
            .find(|r| r.threads == 1 && r.pair_cache == cache)
            .expect("--predict: a 1-thread row");
        // One worker per physical core (two at least: a handoff needs a
        // partner), so the costs are the machine's, not oversubscription's.
        let workers = cores.physical().max(2);
        let pool = build_pinned_pool(Some(workers)).expect("thread pool");
        match predict::costs(&pool.pool, args.memory_gbs) {
            Some((costs, line)) => {
                // the slowdown at 2, 4, 8, … copies up to the cores
                let mut co_run = predict::CoRun(Vec::new());
                let mut said = Vec::new();
                for copies in predict::co_run_counts(workers) {
                    let (f, pairs) =
                        predict::co_run_slowdown(&scene, settings_of(cache), copies, args.warmup);
                    co_run.0.push((copies, f));
                    said.push(format!("{f:.3}x with {copies} ({pairs} pairs)"));
                }
                // the costs of 2 workers (the per-section comparison)
                let costs = archipelago::ReplayCosts {
                    co_run_slowdown: co_run.at(2),
                    ..costs
                };
                let line = format!(
                    "{line}; a step on one core is slower while copies run on other cores at once (steps alone and together, interleaved): {}",
                    said.join(", ")
                );
                // what data moving between cores costs each loop
                let single = build_pinned_pool(Some(1)).expect("thread pool");
                let (migration, pairs) = predict::migration(
                    &scene,
                    settings_of(cache),
                    &single.pool,
                    &pool.pool,
                    args.warmup,
                );
                let mut moved: Vec<&(&str, f64)> =
                    migration.factors.iter().filter(|f| f.1 > 1.0).collect();
                moved.sort_by(|a, b| b.1.total_cmp(&a.1));
                let line = format!(
                    "{line}; data moving between cores (1-thread and relayed steps interleaved, {pairs} pairs), jobs slower with half their data from the other core: {}",
                    moved
                        .iter()
                        .take(8)
                        .map(|(n, f)| format!("{n} {f:.2}x"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                let predicted = predict::predict(
                    &one.predict_traces,
                    &costs,
                    &co_run,
                    &migration,
                    one.median_ms,
                );
                let measured: Vec<(usize, f64, bool)> = rows
                    .iter()
                    .filter(|r| r.pair_cache == cache)
                    .map(|r| (r.threads, one.median_ms / r.median_ms, r.oversubscribed))
                    .collect();
                let line = if workers > cores.physical() {
                    format!("{line} (oversubscribed: one core)")
                } else {
                    line
                };
                let footprint = one.predict_traces.first().map_or(0, |t| t.footprint_bytes);
                predict::print(
                    scene.name,
                    &predicted,
                    &measured,
                    &line,
                    (footprint, &costs),
                );
                // the same replay without the migration factors: what
                // modelling data movement changes
                let plain = predict::predict(
                    &one.predict_traces,
                    &costs,
                    &co_run,
                    &archipelago::Migration::default(),
                    one.median_ms,
                );
                if let (Some(p), Some(m)) = (
                    plain.iter().find(|r| r.workers == 2),
                    measured.iter().find(|m| m.0 == 2 && !m.2),
                ) {
                    println!(
                        "without data migration (StepTrace::replay): 2 workers {:.2}x, error {:+.1}%",
                        p.speedup,
                        100.0 * (p.speedup - m.1) / m.1
                    );
                }
                // per section name: the 2-worker prediction against the
                // sections of the steps traced at 2 threads
                if let Some(two) = rows
                    .iter()
                    .find(|r| r.threads == 2 && r.pair_cache == cache && !r.oversubscribed)
                {
                    predict::print_sections(&one.predict_traces, &two.traces, &costs, &migration);
                }
                if let Some(path) = &args.predict_csv {
                    predict::write_csv(path, scene.name, &predicted).expect("write predict csv");
                }
            }
            None => println!(
                "prediction: the costs could not be measured (a pool of {workers} workers)"
            ),
        }
    }

    if let Some(path) = &args.csv {
        let mut f = std::fs::File::create(path).expect("create csv");
        let phase_names: Vec<&str> = rows[0].phases.named().iter().map(|(n, _)| *n).collect();
        writeln!(
            f,
            "scene,threads,pair_cache,ms_per_step,min_ms,max_ms,speedup,efficiency,hash,matches_1_thread,active_bodies,islands,manifolds,t1_ms,tinf_ms,parallelism,tinf_median_ms,parallelism_median,oversubscribed,{}",
            phase_names
                .iter()
                .map(|n| format!("{n}_pct"))
                .collect::<Vec<_>>()
                .join(",")
        )
        .expect("write csv");
        for r in &rows {
            let speedup = base(r) / r.median_ms;
            let pct: Vec<String> = phase_percentages(&r.phases)
                .iter()
                .map(|(_, p)| format!("{p:.2}"))
                .collect();
            writeln!(
                f,
                "{},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:016x},{},{},{},{},{:.4},{:.4},{:.2},{},{},{},{}",
                scene.name,
                r.threads,
                r.pair_cache,
                r.median_ms,
                r.min_ms,
                r.max_ms,
                speedup,
                speedup / r.threads as f64,
                r.hash,
                base_hash(r).is_none_or(|h| h == r.hash),
                r.stats.active_bodies,
                r.stats.islands,
                r.stats.manifolds,
                r.work_span.work.as_secs_f64() * 1e3,
                r.work_span.span.as_secs_f64() * 1e3,
                r.work_span.parallelism(),
                r.median_work_span
                    .map_or(String::new(), |m| format!("{:.4}", m.span.as_secs_f64() * 1e3)),
                r.median_work_span
                    .map_or(String::new(), |m| format!("{:.2}", m.parallelism())),
                r.oversubscribed,
                pct.join(",")
            )
            .expect("write csv");
        }
    }
}
