//! `scaling --predict`: the step's time on 1 to 64 workers, predicted by
//! replaying the 1-thread traces on simulated workers
//! ([`StepTrace::replay`]) with this machine's measured synchronisation
//! and memory costs, the knee (the first worker count whose efficiency is
//! below 50%), what limits it, and the prediction for 2 workers against the
//! 2-thread row measured in the same run.

use archipelago::{scenes, Migration, PhysicsSettings, ReplayCosts, StepTrace};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Steps of the co-run measurement: alone and together alternate step by
/// step, so a slow minute of this shared machine hits both alike; at least
/// this many of each, and at least [`CO_RUN_TIME`] of stepping.
const CO_RUN_STEPS: u32 = 100;
const CO_RUN_TIME: Duration = Duration::from_millis(600);

/// Step pairs of the migration measurement (a 1-thread traced step and a
/// relayed one, alternating on one world): at least this many, and at
/// least [`MIGRATION_TIME`] of stepping.
const MIGRATION_PAIRS: u32 = 30;
const MIGRATION_TIME: Duration = Duration::from_millis(600);

/// 1-thread steps traced per run for the prediction, spread over the run.
pub const TRACES_PER_RUN: u32 = 10;

/// Worker counts predicted.
pub const WORKERS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// Efficiency below which a worker count is past the knee.
const KNEE_EFFICIENCY: f64 = 0.5;

/// Cores whose copy streams together reach a socket's memory bandwidth,
/// assumed when the machine has too few cores to measure it: one core of
/// a current server streams 1/8 to 1/16 of an 8- to 12-channel socket
/// (`--memory-bandwidth` sets the socket's figure instead).
const ASSUMED_CORES_TO_SATURATE: f64 = 8.0;

/// The prediction at one worker count.
pub struct Predicted {
    pub workers: usize,
    /// Median over the traced steps of T(1 worker) / T(P workers).
    pub speedup: f64,
    /// The measured 1-thread ms/step divided by the speedup.
    pub ms: f64,
    /// What costs the most beyond a perfect share of the work.
    pub limiter: String,
    /// Sections whose time the bandwidth ceiling decides.
    pub bandwidth_bound: Vec<&'static str>,
    /// The section streaming the most bytes per ns of its predicted time,
    /// and that demand in GB/s.
    pub top_demand: Option<(&'static str, f64)>,
    /// The predicted step split into ms of serial time (gaps between
    /// sections and one-job sections), parallel loops and the solver's
    /// schedule, with their excess over a perfect share of the work.
    pub split: [(f64, f64); 3],
}

impl Predicted {
    pub fn efficiency(&self) -> f64 {
        self.speedup / self.workers as f64
    }
}

/// Measures the costs on `pool` (2 workers at least); the memory system's
/// bandwidth is `memory_gbs` if given, else the larger of what all the
/// pool's workers measured and [`ASSUMED_CORES_TO_SATURATE`] cores' worth.
/// Returns the costs and a line saying what was measured and assumed.
pub fn costs(pool: &rayon::ThreadPool, memory_gbs: Option<f64>) -> Option<(ReplayCosts, String)> {
    let measured = ReplayCosts::measure(pool)?;
    let workers = pool.current_num_threads();
    let (memory, how) = match memory_gbs {
        Some(g) => (g * 1e9, "given".to_string()),
        None => {
            let assumed = ASSUMED_CORES_TO_SATURATE * measured.core_bandwidth;
            if assumed > measured.memory_bandwidth {
                (
                    assumed,
                    format!("assumed: {ASSUMED_CORES_TO_SATURATE} cores' worth"),
                )
            } else {
                (measured.memory_bandwidth, "measured".to_string())
            }
        }
    };
    let line = format!(
        "costs measured here on {workers} workers: steal {:.0} ns, handoff {:.0} ns (after {:.0} ns of spinning {:.0} ns), copy bandwidth {:.1} GB/s on one core, {:.1} GB/s on {workers}; memory system {:.1} GB/s ({how})",
        measured.steal_ns,
        measured.handoff_ns,
        measured.spin_window_ns,
        measured.wake_ns,
        measured.core_bandwidth / 1e9,
        measured.memory_bandwidth / 1e9,
        memory / 1e9,
    );
    Some((
        ReplayCosts {
            memory_bandwidth: memory,
            ..measured
        },
        line,
    ))
}

/// How much slower the scene's step runs on a core while every other core
/// steps its own copy (no data shared, no synchronisation) than alone.
/// `copies` worlds, each on its own 1-worker pool and thread, are advanced
/// `warmup` steps; then steps alternate between copy 0 stepping alone (the
/// others spin-wait, yielding) and every copy stepping at once, released
/// together by a spinning barrier, and copy 0's step times are summed per
/// mode (after the fine interleaving, drift of this shared machine hits
/// both modes alike). Captures what cores share (caches, memory, a
/// hypervisor's hyperthreads, a lower clock when all are busy) for this
/// workload. Returns the ratio and the step pairs timed; a ratio below 1
/// is noise (busy neighbours do not make a core faster) and counts as 1.
pub fn co_run_slowdown(
    scene: &scenes::Scene,
    settings: PhysicsSettings,
    copies: usize,
    warmup: u32,
) -> (f64, u32) {
    let copies = copies.max(2);
    let pools: Vec<rayon::ThreadPool> = (0..copies)
        .map(|_| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .expect("a 1-worker pool")
        })
        .collect();
    // Rounds go in pairs: everyone arrives, copy 0 steps (alone in one
    // pair, with the others in the next), everyone arrives again.
    let arrived = AtomicU32::new(0);
    let stop = AtomicBool::new(false);
    let barrier = |round: u32| {
        arrived.fetch_add(1, Ordering::AcqRel);
        let target = (round + 1) * copies as u32;
        let mut spins = 0u32;
        while arrived.load(Ordering::Acquire) < target {
            spins += 1;
            if spins < 200 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    };
    let results: Vec<(Duration, Duration, u32)> = std::thread::scope(|s| {
        let handles: Vec<_> = pools
            .iter()
            .enumerate()
            .map(|(c, pool)| {
                let (barrier, stop) = (&barrier, &stop);
                s.spawn(move || {
                    let (mut world, ids) = scene.build(settings).expect("scene builds");
                    let mut step = 0;
                    let mut advance = |world: &mut archipelago::PhysicsSystem| -> Duration {
                        scene
                            .before_update(world, &ids, step)
                            .expect("late bodies fit");
                        step += 1;
                        let t0 = Instant::now();
                        world.update(scenes::DT, 1, pool).expect("valid step");
                        t0.elapsed()
                    };
                    for _ in 0..warmup {
                        advance(&mut world);
                    }
                    let (mut alone, mut together, mut pairs) = (Duration::ZERO, Duration::ZERO, 0);
                    let mut round = 0;
                    loop {
                        barrier(round);
                        if stop.load(Ordering::Acquire) {
                            break;
                        }
                        // odd pairs of rounds: everyone steps
                        let with_others = round % 4 == 2;
                        if c == 0 {
                            let t = advance(&mut world);
                            if with_others {
                                together += t;
                                pairs += 1;
                                let enough =
                                    pairs >= CO_RUN_STEPS && alone + together >= CO_RUN_TIME;
                                if enough || pairs >= 100 * CO_RUN_STEPS {
                                    stop.store(true, Ordering::Release);
                                }
                            } else {
                                alone += t;
                            }
                        } else if with_others {
                            advance(&mut world);
                        }
                        round += 1;
                        barrier(round);
                        round += 1;
                    }
                    (alone, together, pairs)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    let (alone, together, pairs) = results[0];
    let ratio = together.as_secs_f64() / alone.as_secs_f64().max(1e-12);
    (ratio.max(1.0), pairs)
}

/// What moving data between cores costs the scene's loops
/// ([`Migration::measure`]): one world, `warmup` steps on `one` (a
/// 1-worker pool), then 1-thread traced steps on `one` and relayed traced
/// steps on `two` (2 workers at least) alternating, each after an
/// untraced step on its pool, so both see the same states and the same
/// minutes of this shared machine. Returns the factors
/// and the pairs of steps traced.
pub fn migration(
    scene: &scenes::Scene,
    settings: PhysicsSettings,
    one: &rayon::ThreadPool,
    two: &rayon::ThreadPool,
    warmup: u32,
) -> (Migration, u32) {
    let (mut world, ids) = scene.build(settings).expect("scene builds");
    let mut step = 0;
    let mut advance = |world: &mut archipelago::PhysicsSystem, pool: &rayon::ThreadPool| {
        scene
            .before_update(world, &ids, step)
            .expect("late bodies fit");
        step += 1;
        world.update(scenes::DT, 1, pool).expect("valid step");
    };
    for _ in 0..warmup {
        advance(&mut world, one);
    }
    let (mut plain, mut relayed) = (Vec::new(), Vec::new());
    let t0 = Instant::now();
    while (plain.len() as u32) < MIGRATION_PAIRS || t0.elapsed() < MIGRATION_TIME {
        // Each traced step follows an untraced one of its kind: a 1-thread
        // step finds the data on its core (as in a 1-thread run), a relayed
        // one finds it spread over both (as in a 2-thread run).
        advance(&mut world, one);
        world.record_trace();
        advance(&mut world, one);
        plain.push(world.take_trace().expect("armed"));
        advance(&mut world, two);
        world.record_relayed_trace();
        advance(&mut world, two);
        relayed.push(world.take_trace().expect("armed"));
        if plain.len() >= 100 * MIGRATION_PAIRS as usize {
            break;
        }
    }
    (Migration::measure(&plain, &relayed), plain.len() as u32)
}

/// The co-run slowdown measured at a few worker counts (see
/// [`co_run_slowdown`] at each of [`co_run_counts`]): `(copies,
/// slowdown)`, copies ascending.
pub struct CoRun(pub Vec<(usize, f64)>);

impl CoRun {
    /// The slowdown of a job while `workers` workers run: 1 on one
    /// worker, linear between the counts measured, and the nearest
    /// measured count's beyond them (past the machine's cores nothing was
    /// measured; the replay has no model of oversubscription anyway).
    pub fn at(&self, workers: usize) -> f64 {
        let pts = &self.0;
        if workers <= 1 || pts.is_empty() {
            return 1.0;
        }
        if workers <= pts[0].0 {
            return pts[0].1;
        }
        for w in pts.windows(2) {
            let ((p0, f0), (p1, f1)) = (w[0], w[1]);
            if workers <= p1 {
                let x = (workers - p0) as f64 / (p1 - p0) as f64;
                return f0 + (f1 - f0) * x;
            }
        }
        pts[pts.len() - 1].1
    }
}

/// The copy counts the co-run slowdown is measured at: 2, 4, 8, … up to
/// `cores` (and `cores` itself). On a 2-core machine that is 2 alone; on
/// a 16-core one the slowdown of 2 busy cores and of 16 differ (a lone
/// core's turbo clock, the shared L3 and memory), and a prediction for 2
/// workers built from 16 copies' slowdown would be as wrong as one for 16
/// built from 2.
pub fn co_run_counts(cores: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = std::iter::successors(Some(2usize), |c| Some(c * 2))
        .take_while(|&c| c <= cores)
        .collect();
    if cores >= 2 && counts.last() != Some(&cores) {
        counts.push(cores);
    }
    if counts.is_empty() {
        counts.push(2);
    }
    counts
}

/// Replays every trace at every count in [`WORKERS`]; per count the
/// median speedup over the traces, and the limiter of the trace with that
/// median. Jobs on `P` workers run `co_run.at(P)` times slower (replacing
/// `costs.co_run_slowdown`).
pub fn predict(
    traces: &[StepTrace],
    costs: &ReplayCosts,
    co_run: &CoRun,
    migration: &Migration,
    one_thread_ms: f64,
) -> Vec<Predicted> {
    let base: Vec<f64> = traces
        .iter()
        .map(|t| t.replay(1, costs).step.as_secs_f64())
        .collect();
    WORKERS
        .iter()
        .map(|&p| {
            let costs = &ReplayCosts {
                co_run_slowdown: co_run.at(p),
                ..*costs
            };
            let mut runs: Vec<(f64, archipelago::Replay)> = traces
                .iter()
                .zip(&base)
                .map(|(t, &b)| {
                    let r = t.replay_migrating(p, costs, migration);
                    (b / r.step.as_secs_f64().max(1e-12), r)
                })
                .collect();
            runs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (speedup, r) = &runs[runs.len() / 2];
            let top_demand = r
                .sections
                .iter()
                .filter(|s| s.bytes > 0 && s.predicted_ns > 0)
                .map(|s| (s.name, s.bytes as f64 / s.predicted_ns as f64))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let mut split = [(0.0, 0.0); 3];
            let ms = |ns: u64| ns as f64 / 1e6;
            split[0].0 += ms(r.serial_gaps_ns);
            split[0].1 += ms(r.serial_gaps_ns - r.serial_gaps_ns / p as u64);
            for sec in &r.sections {
                let k = match sec.kind {
                    _ if sec.jobs == 1 => 0,
                    archipelago::SectionKind::Serial => 0,
                    archipelago::SectionKind::Loop => 1,
                    archipelago::SectionKind::Schedule => 2,
                };
                split[k].0 += ms(sec.predicted_ns);
                split[k].1 += ms(sec.excess_ns(p));
            }
            let mut bound: Vec<&'static str> = r
                .sections
                .iter()
                .filter(|s| s.bandwidth_bound())
                .map(|s| s.name)
                .collect();
            bound.sort_unstable();
            bound.dedup();
            Predicted {
                workers: p,
                speedup: *speedup,
                ms: one_thread_ms / speedup,
                // one worker has nothing beyond its share of the work
                limiter: if p == 1 { "-".into() } else { r.limiter().0 },
                bandwidth_bound: bound,
                top_demand,
                split,
            }
        })
        .collect()
}

/// The smallest worker count past the knee.
pub fn knee(rows: &[Predicted]) -> Option<&Predicted> {
    rows.iter().find(|r| r.efficiency() < KNEE_EFFICIENCY)
}

/// Prints the predicted table beside the measured speedups (`measured`:
/// thread count, speedup, oversubscribed).
pub fn print(
    scene: &str,
    rows: &[Predicted],
    measured: &[(usize, f64, bool)],
    costs_line: &str,
    footprint: (u64, &ReplayCosts),
) {
    println!("prediction for {scene} from the 1-thread traced steps (StepTrace::replay)");
    println!("  {costs_line}");
    let (bytes, costs) = footprint;
    println!(
        "  step footprint {:.1} MB, last-level cache {:.1} MB: {:.0}% of the streamed bytes from memory",
        bytes as f64 / 1e6,
        costs.cache_bytes / 1e6,
        100.0 * costs.memory_share(bytes)
    );
    println!(
        "{:>7} {:>12} {:>8} {:>6} {:>9} {:>7}  limited by",
        "workers", "predicted ms", "speedup", "eff", "measured", "error"
    );
    for r in rows {
        let m = measured.iter().find(|m| m.0 == r.workers);
        let (meas, err) = match m {
            Some(&(_, s, false)) => (
                format!("{s:.2}x"),
                format!("{:+.1}%", 100.0 * (r.speedup - s) / s),
            ),
            Some(&(_, s, true)) => (format!("({s:.2}x)"), "oversub".into()),
            None => ("-".into(), "-".into()),
        };
        println!(
            "{:>7} {:>12.3} {:>7.2}x {:>5.0}% {:>9} {:>7}  {}",
            r.workers,
            r.ms,
            r.speedup,
            100.0 * r.efficiency(),
            meas,
            err,
            r.limiter
        );
    }
    match knee(rows) {
        Some(k) => {
            println!(
                "knee: {} workers (efficiency {:.0}%), limited by {}",
                k.workers,
                100.0 * k.efficiency(),
                k.limiter
            );
            let [serial, loops, schedule] = k.split;
            println!(
                "  there (ms/step, and beyond a perfect share of the work): serial {:.3} (+{:.3}), parallel loops {:.3} (+{:.3}), solver schedule {:.3} (+{:.3})",
                serial.0, serial.1, loops.0, loops.1, schedule.0, schedule.1
            );
        }
        None => println!(
            "knee: beyond {} workers (efficiency still >= 50%)",
            WORKERS[WORKERS.len() - 1]
        ),
    }
    match rows.iter().find(|r| !r.bandwidth_bound.is_empty()) {
        Some(r) => println!(
            "bandwidth: first bound at {} workers, by {}",
            r.workers,
            r.bandwidth_bound.join(", ")
        ),
        None => {
            let last = &rows[rows.len() - 1];
            if let Some((name, gbs)) = last.top_demand {
                println!(
                    "bandwidth: no section bound up to {} workers (the hungriest, {name}, streams {gbs:.1} GB/s there)",
                    last.workers
                );
            }
        }
    }
}

/// One CSV row per worker count: what `report` plots beside the measured
/// points.
pub fn write_csv(path: &str, scene: &str, rows: &[Predicted]) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    writeln!(
        f,
        "scene,workers,predicted_ms,predicted_speedup,predicted_efficiency,limiter"
    )?;
    for r in rows {
        writeln!(
            f,
            "{scene},{},{:.4},{:.4},{:.4},\"{}\"",
            r.workers,
            r.ms,
            r.speedup,
            r.efficiency(),
            r.limiter.replace('"', "'")
        )?;
    }
    Ok(())
}

/// Per section name, ms per step: the 2-worker replay of the 1-thread
/// traces (median over them) against the measured sections of steps traced
/// at 2 threads (a section from its first job's start to its last job's
/// end), the names that differ most first: where the model is wrong.
pub fn print_sections(
    one: &[StepTrace],
    two: &[StepTrace],
    costs: &ReplayCosts,
    migration: &Migration,
) {
    use std::collections::BTreeMap;
    let median = |mut v: Vec<u64>| -> f64 {
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0) as f64 / 1e6
    };
    let mut predicted: BTreeMap<&'static str, Vec<u64>> = BTreeMap::new();
    for t in one {
        let mut per: BTreeMap<&'static str, u64> = BTreeMap::new();
        let r = t.replay_migrating(2, costs, migration);
        per.insert("(between sections)", r.serial_gaps_ns);
        per.insert("(whole step)", r.step.as_nanos() as u64);
        for s in r.sections {
            *per.entry(s.name).or_default() += s.predicted_ns;
        }
        for (n, v) in per {
            predicted.entry(n).or_default().push(v);
        }
    }
    let mut measured: BTreeMap<&'static str, Vec<u64>> = BTreeMap::new();
    for t in two {
        let mut spans: BTreeMap<u32, (&'static str, u64, u64)> = BTreeMap::new();
        for e in &t.events {
            if let archipelago::SliceKind::Job { section, .. } = e.kind {
                let s = spans.entry(section).or_insert((e.name, u64::MAX, 0));
                s.1 = s.1.min(e.start_ns);
                s.2 = s.2.max(e.start_ns + e.dur_ns);
            }
        }
        let mut per: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut inside = 0;
        for (name, start, end) in spans.into_values() {
            *per.entry(name).or_default() += end - start;
            inside += end - start;
        }
        per.insert("(between sections)", t.wall_ns.saturating_sub(inside));
        per.insert("(whole step)", t.wall_ns);
        for (n, v) in per {
            measured.entry(n).or_default().push(v);
        }
    }
    let mut rows: Vec<(&'static str, f64, f64)> = predicted
        .into_iter()
        .map(|(n, v)| {
            let m = measured.remove(n).map_or(0.0, median);
            (n, median(v), m)
        })
        .collect();
    rows.sort_by(|a, b| (b.2 - b.1).abs().total_cmp(&(a.2 - a.1).abs()));
    println!("sections at 2 workers, predicted vs traced at 2 threads (ms/step, largest differences first):");
    for (n, p, m) in rows.iter().take(10) {
        println!("  {n:<22} {p:>7.3} {m:>7.3}  {:+.3}", m - p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn co_run_counts_double_up_to_the_cores() {
        assert_eq!(co_run_counts(1), vec![2]);
        assert_eq!(co_run_counts(2), vec![2]);
        assert_eq!(co_run_counts(12), vec![2, 4, 8, 12]);
        assert_eq!(co_run_counts(16), vec![2, 4, 8, 16]);
    }

    #[test]
    fn co_run_interpolates_between_measured_counts() {
        let c = CoRun(vec![(2, 1.1), (4, 1.3), (16, 1.9)]);
        assert_eq!(c.at(1), 1.0);
        assert_eq!(c.at(2), 1.1);
        assert!((c.at(3) - 1.2).abs() < 1e-12);
        assert!((c.at(10) - 1.6).abs() < 1e-12);
        assert_eq!(c.at(64), 1.9);
        assert_eq!(CoRun(Vec::new()).at(8), 1.0);
    }
}
