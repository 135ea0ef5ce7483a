//! The churn soak (see `soak.rs`): 2,000 bodies, 1% of them destroyed and
//! replaced every step, for 100,000 steps by default.
//!
//!     cargo run --release -p archipelago-fuzz --bin soak -- --steps 100000
//!
//! Prints a row per window (ms/step, live heap bytes, resident memory,
//! active bodies, manifolds) and a verdict; exits 1 if any check failed.

use archipelago_fuzz::soak::{soak, SoakConfig, Window};
use archipelago_layout::CountingAlloc;

#[global_allocator]
static HEAP: CountingAlloc = CountingAlloc::new();

fn main() {
    let mut cfg = SoakConfig {
        bodies: 2000,
        steps: 100_000,
        churn: 20,
        threads: archipelago::detect_cores().physical().max(1),
        seed: 1,
        window: 10_000,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v: u64 = args
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                eprintln!("usage: soak [--bodies N] [--steps N] [--churn N] [--threads N] [--seed N] [--window N]");
                std::process::exit(2)
            });
        match a.as_str() {
            "--bodies" => cfg.bodies = v as usize,
            "--steps" => cfg.steps = v,
            "--churn" => cfg.churn = v as usize,
            "--threads" => cfg.threads = v as usize,
            "--seed" => cfg.seed = v,
            "--window" => cfg.window = v.max(1),
            _ => std::process::exit(2),
        }
    }
    println!(
        "soak: {} bodies, {} replaced per step, {} steps, {} threads, seed {}",
        cfg.bodies, cfg.churn, cfg.steps, cfg.threads, cfg.seed
    );
    println!("    step   ms/step   heap MiB    RSS MiB   active  manifolds  sleeping islands");
    let heap = || HEAP.live_bytes();
    let row = |w: &Window| {
        println!(
            "{:>8} {:>9.3} {:>10.3} {:>10.1} {:>8} {:>10} {:>17}",
            w.step,
            w.ms_per_step,
            w.heap_bytes.unwrap_or(0) as f64 / (1 << 20) as f64,
            w.rss_bytes.unwrap_or(0) as f64 / (1 << 20) as f64,
            w.active,
            w.manifolds,
            w.sleeping_islands
        )
    };
    let r = soak(&cfg, Some(&heap), row);
    let first = r.windows.first();
    let last = r.windows.last();
    let heap_growth = match (first, last) {
        (Some(a), Some(b)) => b.heap_bytes.unwrap_or(0) - a.heap_bytes.unwrap_or(0),
        _ => 0,
    };
    let max_heap = r
        .windows
        .iter()
        .filter_map(|w| w.heap_bytes)
        .max()
        .unwrap_or(0);
    let min_heap = r
        .windows
        .iter()
        .filter_map(|w| w.heap_bytes)
        .min()
        .unwrap_or(0);
    println!(
        "{} steps in {:.1} s: {} bodies created, {} destroyed; body count wrong after {} steps; {} faulted; {} non-finite; {} failed calls",
        cfg.steps,
        r.elapsed.as_secs_f64(),
        r.created,
        r.destroyed,
        r.count_errors,
        r.faulted,
        r.non_finite,
        r.call_errors
    );
    println!(
        "heap from the first window to the last: {heap_growth:+} bytes (range over windows {} bytes)",
        max_heap - min_heap
    );
    if !r.clean() {
        std::process::exit(1);
    }
}
