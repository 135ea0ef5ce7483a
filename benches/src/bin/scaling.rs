//! The main job: runs a standard scene at several thread counts, one pinned
//! pool per count, and prints a table of ms/step (median and min–max over
//! runs), speedup and efficiency against 1 thread, whether the state hash
//! equals the 1-thread hash, counts, the per-phase split, and the work/span
//! parallelism T1/T∞ (median of 5 traced steps after the timed ones).
//!
//! `cargo run --release -p archipelago-benches --bin scaling -- [options]`
//!
//! Options: `--scene NAME` (pyramid), `--threads 1,2,4` (default 1,2,4,8,16;
//! rows with more threads than physical cores are marked oversubscribed),
//! `--steps N` (500), `--runs R` (3), `--warmup N` (60 untimed steps per
//! thread count first), `--csv FILE`, `--trace FILE` (chrome trace of the median traced
//! step at the largest thread count), `--no-sleep`, `--no-splitter`, `--broadphase
//! sap|mbp|brute`, `--solver wide|scalar` (the solver's lane width: same
//! results, to compare their speed), `--simd auto|avx512|avx2|baseline` (the
//! instruction set of the wide bundles: same results). The header says which
//! SIMD path ran.

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
    threads: Option<Vec<usize>>,
    steps: u32,
    runs: u32,
    warmup: u32,
    csv: Option<String>,
    trace: Option<String>,
    broad_phase: BroadPhaseKind,
    no_sleep: bool,
    no_splitter: bool,
    solver: SolverWidth,
    simd: SimdPath,
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
        "usage: scaling [--scene {}] [--threads 1,2,4] [--steps N] [--runs R] [--warmup N] [--csv FILE] [--trace FILE] [--broadphase sap|mbp|brute] [--no-sleep] [--no-splitter] [--solver wide|scalar] [--simd auto|avx512|avx2|baseline]",
        scenes::NAMES.join("|")
    )
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        scene: "pyramid".into(),
        threads: None,
        steps: 500,
        runs: 3,
        warmup: 60,
        csv: None,
        trace: None,
        broad_phase: BroadPhaseKind::Sap,
        no_sleep: false,
        no_splitter: false,
        solver: SolverWidth::Wide,
        simd: SimdPath::Auto,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--scene" => args.scene = value()?,
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
                    other => {
                        return Err(format!("--broadphase: unknown {other:?} (sap|mbp|brute)"))
                    }
                }
            }
            "--no-sleep" => args.no_sleep = true,
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
            "--help" | "-h" => return Err(usage()),
            other => return Err(format!("unknown option {other}\n{}", usage())),
        }
    }
    if args.steps == 0 || args.runs == 0 {
        return Err("--steps and --runs must be at least 1".into());
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
    let Some(scene) = scenes::by_name(&args.scene) else {
        eprintln!(
            "unknown scene {:?}; one of {}",
            args.scene,
            scenes::NAMES.join(", ")
        );
        std::process::exit(2);
    };
    let cores = detect_cores();
    let threads = args.threads.clone().unwrap_or_else(|| vec![1, 2, 4, 8, 16]);
    let settings = PhysicsSettings {
        broad_phase: args.broad_phase,
        allow_sleeping: !args.no_sleep,
        use_large_island_splitter: !args.no_splitter,
        solver_width: args.solver,
        simd: args.simd,
        ..PhysicsSettings::default()
    };
    println!(
        "scene {} ({} dynamic bodies), {} steps x {} runs, dt {:.5} s, broad phase {:?}, sleeping {}, splitter {}, solver {:?}, SIMD path {:?} (of {:?} here)",
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
    struct Acc {
        per_run: Vec<f64>,
        hash: Option<u64>,
        phases: PhaseTimes,
        last: Option<StepStats>,
        work_span: Option<WorkSpan>,
        median_work_span: Option<WorkSpan>,
    }
    // Warm-up: start every pool's workers, fault in the buffers and let the
    // CPU clocks settle before anything is timed.
    for (p, &t) in pools.iter().zip(&threads) {
        let (mut world, _) = scene.build(settings).expect("standard scene builds");
        for _ in 0..args.warmup {
            world.update(scenes::DT, 1, &p.pool).expect("valid step");
        }
        eprint!("\rwarm-up {t} threads      ");
    }
    let mut acc: Vec<Acc> = threads
        .iter()
        .map(|_| Acc {
            per_run: Vec::new(),
            hash: None,
            phases: PhaseTimes::default(),
            last: None,
            work_span: None,
            median_work_span: None,
        })
        .collect();
    for run in 0..args.runs {
        for (ti, &t) in threads.iter().enumerate() {
            let pool = &pools[ti].pool;
            let a = &mut acc[ti];
            let (mut world, _) = scene.build(settings).expect("standard scene builds");
            let mut total = Duration::ZERO;
            for step in 0..args.steps {
                let t0 = Instant::now();
                let stats = world.update(scenes::DT, 1, pool).expect("valid step");
                total += t0.elapsed();
                if run == args.runs - 1 {
                    a.phases.accumulate(&stats.times);
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
            if let Some(prev) = a.hash {
                if prev != h {
                    println!(
                        "WARNING: {t} threads run {run}: hash {h:016x} differs from {prev:016x}"
                    );
                }
            }
            a.hash = Some(h);
            a.per_run
                .push(total.as_secs_f64() * 1e3 / args.steps as f64);
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
    let rows: Vec<Row> = threads
        .iter()
        .zip(acc)
        .zip(&pools)
        .map(|((&t, mut a), p)| {
            a.per_run.sort_by(f64::total_cmp);
            Row {
                threads: t,
                median_ms: a.per_run[a.per_run.len() / 2],
                min_ms: a.per_run[0],
                max_ms: a.per_run[a.per_run.len() - 1],
                hash: a.hash.expect("ran"),
                stats: a.last.expect("ran"),
                phases: a.phases,
                work_span: a.work_span.expect("traced"),
                median_work_span: a.median_work_span,
                oversubscribed: t > cores.physical(),
                pinning: p.pinning,
            }
        })
        .collect();
    eprintln!();

    let base = rows[0].median_ms * rows[0].threads as f64;
    let base_hash = rows.iter().find(|r| r.threads == 1).map(|r| r.hash);
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
        let speedup = base / r.median_ms;
        println!(
            "{:>7} {:>9.3} {:>17} {:>7.2}x {:>5.0}% {:016x} {:>5} {:>7} {:>7} {:>9} {:>7.1}  {:?}{}",
            r.threads,
            r.median_ms,
            format!("{:.3}-{:.3}", r.min_ms, r.max_ms),
            speedup,
            100.0 * speedup / r.threads as f64,
            r.hash,
            match base_hash {
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
        "last step: body pairs {}, contact points {}, large islands {}, splits {}, split 31 items {}, dropped pairs/manifolds {}/{}, constraints solved wide {} ({:.0}%) / scalar {}",
        last.body_pairs,
        last.contact_points,
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
    for r in &rows {
        let split: Vec<String> = phase_percentages(&r.phases)
            .iter()
            .map(|(n, p)| format!("{n} {p:.1}%"))
            .collect();
        println!("phases at {} threads: {}", r.threads, split.join(", "));
    }
    for r in &rows {
        println!(
            "work/span at {} threads (median of {TRACED_STEPS} traced steps): T1 {:.3} ms, Tinf {:.3} ms, T1/Tinf {:.1}, {} jobs",
            r.threads,
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

    if let Some(path) = &args.csv {
        let mut f = std::fs::File::create(path).expect("create csv");
        let phase_names: Vec<&str> = rows[0].phases.named().iter().map(|(n, _)| *n).collect();
        writeln!(
            f,
            "scene,threads,ms_per_step,min_ms,max_ms,speedup,efficiency,hash,matches_1_thread,active_bodies,islands,manifolds,t1_ms,tinf_ms,parallelism,tinf_median_ms,parallelism_median,oversubscribed,{}",
            phase_names
                .iter()
                .map(|n| format!("{n}_pct"))
                .collect::<Vec<_>>()
                .join(",")
        )
        .expect("write csv");
        for r in &rows {
            let speedup = base / r.median_ms;
            let pct: Vec<String> = phase_percentages(&r.phases)
                .iter()
                .map(|(_, p)| format!("{p:.2}"))
                .collect();
            writeln!(
                f,
                "{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:016x},{},{},{},{},{:.4},{:.4},{:.2},{},{},{},{}",
                scene.name,
                r.threads,
                r.median_ms,
                r.min_ms,
                r.max_ms,
                speedup,
                speedup / r.threads as f64,
                r.hash,
                base_hash.is_none_or(|h| h == r.hash),
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
