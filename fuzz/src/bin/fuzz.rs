//! The fuzzer: random calls of the whole public API, checked after each.
//!
//!     cargo run --release -p archipelago-fuzz --bin fuzz -- --minutes 60
//!     cargo run --release -p archipelago-fuzz --bin fuzz -- --calls 10000000 --seed 7
//!     cargo run --release -p archipelago-fuzz --bin fuzz -- --seed 7 --case 1234
//!
//! Prints progress, and on a failure the shrunk list of calls and how to
//! replay it; exits 1 on a failure, 3 on a hang (the watchdog), 0 when the
//! budget is spent cleanly.

use archipelago_fuzz::{
    campaign, case_seed, describe, run_case, shrink, Budget, Case, Found, Pools, Tally,
};
use std::time::{Duration, Instant};

fn usage() -> ! {
    eprintln!(
        "usage: fuzz [--minutes M] [--calls N] [--seed S] [--case K] [--hang-secs H]\n\
         \x20 --minutes M   stop after M minutes (default 1 unless --calls is given)\n\
         \x20 --calls N     stop after N calls\n\
         \x20 --seed S      campaign seed (decimal or 0x hex; default 1)\n\
         \x20 --case K      replay only case K of the campaign, and shrink it if it fails\n\
         \x20 --hang-secs H a call running H seconds is a hang (default 60)"
    );
    std::process::exit(2)
}

fn parse_u64(s: &str) -> u64 {
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.unwrap_or_else(|_| usage())
}

fn main() {
    let mut minutes = None;
    let mut calls = None;
    let mut seed = 1u64;
    let mut case = None;
    let mut hang = 60u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--minutes" => minutes = Some(value().parse::<f64>().unwrap_or_else(|_| usage())),
            "--calls" => calls = Some(parse_u64(&value())),
            "--seed" => seed = parse_u64(&value()),
            "--case" => case = Some(parse_u64(&value())),
            "--hang-secs" => hang = parse_u64(&value()),
            _ => usage(),
        }
    }
    if let Some(index) = case {
        archipelago_fuzz::quiet_panics();
        let pools = Pools::new();
        let c = Case::generate(case_seed(seed, index));
        let mut tally = Tally::default();
        match run_case(&c, &pools, &mut tally, &|_| {}) {
            Ok(()) => println!(
                "case {index} of seed {seed:#x}: {} calls, all checks held",
                c.ops.len()
            ),
            Err(f) => {
                let (small, failure) = shrink::shrink(&c, &f, &pools);
                let found = Found {
                    seed,
                    case_index: index,
                    original_calls: c.ops.len(),
                    case: small,
                    failure,
                };
                println!("{}", describe(&found));
                std::process::exit(1);
            }
        }
        return;
    }
    let budget = Budget {
        calls: calls.unwrap_or(u64::MAX),
        time: match (minutes, calls) {
            (Some(m), _) => Duration::from_secs_f64(m * 60.0),
            (None, Some(_)) => Duration::MAX,
            (None, None) => Duration::from_secs(60),
        },
    };
    println!("fuzz: seed {seed:#x}, budget {budget:?}, hang after {hang} s");
    let mut last = Instant::now();
    let report = campaign(seed, budget, Duration::from_secs(hang), |r| {
        if last.elapsed() > Duration::from_secs(10) {
            last = Instant::now();
            println!("{}", line(r.cases, &r.tally, r.elapsed));
        }
    });
    println!("{}", line(report.cases, &report.tally, report.elapsed));
    match report.found {
        Some(found) => {
            println!("{}", describe(&found));
            std::process::exit(1);
        }
        None => println!(
            "done: {} calls, 0 panics, 0 hangs, 0 non-finite bodies, 0 invariant failures",
            report.tally.calls
        ),
    }
}

fn line(cases: u64, t: &Tally, elapsed: Duration) -> String {
    format!(
        "{:>8.1} s  {:>11} calls ({:>7.0}/s)  {} worlds ({} refused, {} shadowed)  {} refused calls  {} updates ({} simulated, {} with drops)  slowest call {:.3} s (world {:?})",
        elapsed.as_secs_f64(),
        t.calls,
        t.calls as f64 / elapsed.as_secs_f64().max(1e-9),
        cases,
        t.worlds_refused,
        t.shadowed,
        t.refused,
        t.updates,
        t.simulated,
        t.updates_with_drops,
        t.slowest,
        t.slowest_call
    )
}
