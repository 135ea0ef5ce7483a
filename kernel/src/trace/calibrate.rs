//! Measuring what a replay's synchronisation and memory costs are on the
//! running machine, with the kernel's own fork and wait paths.

use super::ReplayCosts;
use crate::jobs::{backoff, StepCtx, SPINS_BEFORE_YIELD};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Forks timed for the steal latency (the median is kept).
const STEAL_TRIALS: usize = 401;
/// Ping-pong trials (median kept) and round trips per trial.
const HANDOFF_TRIALS: usize = 41;
const ROUND_TRIPS: u64 = 2000;
/// The same with one side holding the release long past the waiter's
/// spinning (it has begun yielding its core), fewer of them.
const WAKE_HOLD: Duration = Duration::from_micros(20);
const WAKE_TRIALS: usize = 11;
const WAKE_ROUND_TRIPS: u64 = 300;
/// A measurement whose partner has not answered by then gives up (a pool
/// whose second worker never runs), so `measure` cannot hang.
const DEADLINE: Duration = Duration::from_secs(2);
/// Bytes each copying worker moves per pass of the STREAM-like copy: two
/// arrays well beyond a core's L2 and, for one core, beyond most L3s.
const COPY_BYTES_PER_WORKER: usize = 64 << 20;
const COPY_PASSES: usize = 5;

impl ReplayCosts {
    /// Measures on `pool` (which needs 2 workers at least, else `None`):
    /// the steal latency of a parallel loop's fork and the handoff latency
    /// of a counter between two workers (through `jobs.rs`'s own fork and
    /// wait loop), a STREAM-like copy's bandwidth on one worker
    /// ([`core_bandwidth`](Self::core_bandwidth)) and on all of the pool's
    /// workers at once ([`memory_bandwidth`](Self::memory_bandwidth): on a
    /// machine with more cores than the pool the memory system may give
    /// more; set it from the machine's figures then), and the last-level
    /// cache's size from Linux's sysfs ([`cache_bytes`](Self::cache_bytes);
    /// 0, so every byte counts as memory traffic, where it cannot be read).
    /// [`co_run_slowdown`](Self::co_run_slowdown) is left at 1: it depends
    /// on the workload, so measure it on yours (run independent copies of
    /// it on every core at once against one copy alone; `scaling
    /// --predict` does this with the scene).
    /// Takes about a second and allocates `64 MiB` per worker while it runs.
    pub fn measure(pool: &rayon::ThreadPool) -> Option<ReplayCosts> {
        let threads = pool.current_num_threads();
        if threads < 2 {
            return None;
        }
        pool.install(|| {
            let mut ctx = StepCtx {
                exec: pool,
                threads: 2,
                ..StepCtx::untraced()
            };
            let steal_ns = median(
                (0..STEAL_TRIALS)
                    .map(|_| steal_once(&ctx))
                    .collect::<Option<Vec<_>>>()?,
            );
            // a round trip is two handoffs
            let handoff_ns = median(
                (0..HANDOFF_TRIALS)
                    .map(|_| handoff_once(&ctx, Duration::ZERO, ROUND_TRIPS))
                    .collect::<Option<Vec<_>>>()?,
            ) / 2.0;
            // one side held past the waiter's spinning: the round trip is
            // a handoff, the hold, and the late waiter's wake-up
            let held = median(
                (0..WAKE_TRIALS)
                    .map(|_| handoff_once(&ctx, WAKE_HOLD, WAKE_ROUND_TRIPS))
                    .collect::<Option<Vec<_>>>()?,
            );
            let wake_ns = (held - WAKE_HOLD.as_nanos() as f64 - handoff_ns).max(handoff_ns);
            let spin_window_ns = spin_window();
            ctx.threads = 1;
            let core_bandwidth = copy_bandwidth(&ctx, 1);
            ctx.threads = threads;
            let memory_bandwidth = copy_bandwidth(&ctx, threads).max(core_bandwidth);
            Some(ReplayCosts {
                steal_ns,
                handoff_ns,
                wake_ns,
                spin_window_ns,
                core_bandwidth,
                memory_bandwidth,
                cache_bytes: last_level_cache_bytes().unwrap_or(0) as f64,
                // a property of the workload as much as of the machine
                co_run_slowdown: 1.0,
            })
        })
    }
}

/// How long a waiter spins before it starts yielding its core (`jobs.rs`'s
/// backoff), ns: the median of timed spin phases.
fn spin_window() -> f64 {
    let mut v: Vec<f64> = (0..101)
        .map(|_| {
            let t = Instant::now();
            let mut spins = 0;
            while spins < SPINS_BEFORE_YIELD {
                backoff(&mut spins);
            }
            t.elapsed().as_nanos() as f64
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A two-job loop whose first job waits for the second to start: the time
/// from the fork to the helper's start, ns.
fn steal_once(ctx: &StepCtx) -> Option<f64> {
    let t0 = Instant::now();
    let started = AtomicU64::new(0);
    let late = AtomicBool::new(false);
    ctx.run_jobs(2, |k| {
        if k == 1 {
            started.store(t0.elapsed().as_nanos() as u64 + 1, Ordering::Release);
            return;
        }
        let mut spins = 0;
        while started.load(Ordering::Acquire) == 0 {
            if t0.elapsed() > DEADLINE {
                late.store(true, Ordering::Relaxed);
                return;
            }
            backoff(&mut spins);
        }
    });
    let ns = started.load(Ordering::Acquire);
    (!late.load(Ordering::Relaxed) && ns > 0).then(|| (ns - 1) as f64)
}

/// Two jobs bouncing a counter [`ROUND_TRIPS`] times: half a round trip,
/// ns (the first round, which waits for the helper to start, not timed).
fn handoff_once(ctx: &StepCtx, hold: Duration, round_trips: u64) -> Option<f64> {
    let flag = AtomicU64::new(0);
    let late = AtomicBool::new(false);
    let took = AtomicU64::new(0);
    let t0 = Instant::now();
    let wait_for = |want: u64| -> bool {
        let mut spins = 0;
        while flag.load(Ordering::Acquire) != want {
            if late.load(Ordering::Relaxed) || t0.elapsed() > DEADLINE {
                late.store(true, Ordering::Relaxed);
                return false;
            }
            backoff(&mut spins);
        }
        true
    };
    ctx.run_jobs(2, |k| {
        let mut start = None;
        for i in 0..=round_trips {
            if k == 0 {
                if i == 1 {
                    start = Some(Instant::now());
                }
                flag.store(2 * i + 1, Ordering::Release);
                if !wait_for(2 * i + 2) {
                    return;
                }
            } else {
                if !wait_for(2 * i + 1) {
                    return;
                }
                // the other side waits this long before the release
                let t = Instant::now();
                while t.elapsed() < hold {
                    std::hint::spin_loop();
                }
                flag.store(2 * i + 2, Ordering::Release);
            }
        }
        if let Some(s) = start {
            took.store(s.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
    });
    let ns = took.load(Ordering::Relaxed);
    (!late.load(Ordering::Relaxed) && ns > 0).then(|| ns as f64 / round_trips as f64)
}

/// Bytes per second `workers` workers copy together, each between its own
/// two arrays (bytes read plus bytes written, STREAM's convention; the best
/// of [`COPY_PASSES`]).
fn copy_bandwidth(ctx: &StepCtx, workers: usize) -> f64 {
    let len = COPY_BYTES_PER_WORKER / 2 / std::mem::size_of::<f64>();
    let mut arrays: Vec<(Vec<f64>, Vec<f64>)> = (0..workers)
        .map(|w| (vec![w as f64 + 1.0; len], vec![0.0; len]))
        .collect();
    let mut best = f64::INFINITY;
    for _ in 0..COPY_PASSES {
        let t0 = Instant::now();
        ctx.par_chunks_mut("copy", &mut arrays, 1, |_, pair| {
            for (src, dst) in pair.iter_mut() {
                dst.copy_from_slice(src);
            }
            0
        });
        best = best.min(t0.elapsed().as_secs_f64());
        // keep the copies observable
        std::hint::black_box(&arrays);
    }
    (workers * len * 2 * std::mem::size_of::<f64>()) as f64 / best.max(1e-9)
}

/// The size of the highest-level cache of CPU 0 (Linux sysfs), bytes.
fn last_level_cache_bytes() -> Option<u64> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let mut best: Option<(u32, u64)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let read = |f: &str| std::fs::read_to_string(entry.path().join(f)).ok();
        let (Some(level), Some(size)) = (read("level"), read("size")) else {
            continue;
        };
        let Ok(level) = level.trim().parse::<u32>() else {
            continue;
        };
        let size = size.trim();
        let (digits, unit) = size.split_at(
            size.find(|c: char| !c.is_ascii_digit())
                .unwrap_or(size.len()),
        );
        let Ok(n) = digits.parse::<u64>() else {
            continue;
        };
        let bytes = n * match unit {
            "K" => 1 << 10,
            "M" => 1 << 20,
            "G" => 1 << 30,
            _ => 1,
        };
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, bytes));
        }
    }
    best.map(|(_, b)| b)
}
