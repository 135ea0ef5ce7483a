//! # archipelago-fuzz
//!
//! A stateful random driver of archipelago's whole public API, and what
//! runs it:
//!
//! - `ops.rs`: every public call as data ([`Op`]), and how a seed becomes a
//!   [`Case`]: a world's capacities and settings (sane or hostile), maybe a
//!   standard scene, then up to 2,000 random calls with sane and hostile
//!   values, stale, foreign and forged ids, capacity edges, and updates on
//!   1-, 2- and 4-worker pools.
//! - `driver.rs`: runs a case and checks the kernel's promises after every
//!   call (no panic, refused calls change nothing, the right errors, a
//!   model's body count, finiteness, sleep invariants, contacts that name
//!   live bodies, consistent step stats, and a shadow world on another
//!   pool size giving identical results).
//! - `shrink.rs`: a failing case shrunk to a minimal list of calls.
//! - [`campaign`]: cases one after another within a budget of calls or
//!   time, with a watchdog that turns a hang into a reported failure.
//!
//! The `fuzz` binary runs a campaign for hours (`--minutes`), the test
//! `tests/fuzz.rs` for a few seconds in CI, and the `soak` binary churns
//! bodies for 10^5+ steps.

pub mod driver;
pub mod ops;
pub mod rust;
pub mod shrink;
pub mod soak;

pub use driver::{quiet_panics, run_case, Failure, Pools, Tally};
pub use ops::{Case, Op, Rng};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// When a campaign stops: after this many calls or this much time,
/// whichever comes first.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub calls: u64,
    pub time: Duration,
}

/// A failure a campaign found, shrunk.
#[derive(Debug, Clone)]
pub struct Found {
    pub seed: u64,
    /// Which case of the campaign (its seed is [`case_seed`]).
    pub case_index: u64,
    /// Calls in the case as generated.
    pub original_calls: usize,
    pub case: Case,
    pub failure: Failure,
}

/// What a campaign did.
#[derive(Debug, Clone)]
pub struct Report {
    pub seed: u64,
    pub tally: Tally,
    pub cases: u64,
    pub elapsed: Duration,
    pub found: Option<Found>,
}

/// The seed of case `index` of the campaign seeded `seed`.
pub fn case_seed(seed: u64, index: u64) -> u64 {
    archipelago::scenes::splitmix64(seed.rotate_left(32) ^ index)
}

/// Runs cases `seed`'s campaign until the budget is spent or a check fails
/// (then the failing case is shrunk). `log` is called after every case.
///
/// The watchdog: if no call finishes for `hang_after`, the process prints
/// the seed, the case and the call in flight, and exits with status 3 (a
/// hung call cannot be stopped from inside; the replay reproduces it).
pub fn campaign(
    seed: u64,
    budget: Budget,
    hang_after: Duration,
    mut log: impl FnMut(&Report),
) -> Report {
    quiet_panics();
    let pools = Pools::new();
    let start = Instant::now();
    let heartbeat = Arc::new(AtomicU64::new(0));
    let where_ = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    // Shrinking replays the case many times without a heartbeat and may
    // take minutes: the watchdog waits it out (it once reported a shrink
    // as a hang of the call the failure was found at).
    let shrinking = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (heartbeat, where_, done) = (heartbeat.clone(), where_.clone(), done.clone());
        let shrinking = shrinking.clone();
        std::thread::spawn(move || {
            let mut last = (u64::MAX, Instant::now());
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let beat = heartbeat.load(Ordering::Relaxed);
                if beat != last.0 || shrinking.load(Ordering::Relaxed) {
                    last = (beat, Instant::now());
                } else if last.1.elapsed() > hang_after {
                    let w = where_.load(Ordering::Relaxed);
                    let (case, op) = (w >> 32, w & 0xFFFF_FFFF);
                    eprintln!(
                        "HANG: no call returned for {:?}: seed {seed:#x}, case {case} (case seed {:#x}), call {op}; replay with `fuzz --seed {seed:#x} --case {case}`",
                        hang_after,
                        case_seed(seed, case)
                    );
                    std::process::exit(3);
                }
            }
        })
    };
    let mut report = Report {
        seed,
        tally: Tally::default(),
        cases: 0,
        elapsed: Duration::ZERO,
        found: None,
    };
    while report.tally.calls < budget.calls && start.elapsed() < budget.time {
        let index = report.cases;
        let case = Case::generate(case_seed(seed, index));
        let progress = |k: usize| {
            heartbeat.fetch_add(1, Ordering::Relaxed);
            where_.store(index << 32 | k as u64, Ordering::Relaxed);
        };
        let result = run_case(&case, &pools, &mut report.tally, &progress);
        report.cases += 1;
        if let Err(failure) = result {
            shrinking.store(true, Ordering::Relaxed);
            let (small, failure) = shrink::shrink(&case, &failure, &pools);
            shrinking.store(false, Ordering::Relaxed);
            report.found = Some(Found {
                seed,
                case_index: index,
                original_calls: case.ops.len(),
                case: small,
                failure,
            });
        }
        report.elapsed = start.elapsed();
        log(&report);
        if report.found.is_some() {
            break;
        }
    }
    done.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    let _ = std::panic::take_hook();
    report
}

/// A failing case as text: the world, then its calls numbered.
pub fn describe(found: &Found) -> String {
    let c = &found.case;
    let f = &found.failure;
    let mut s = format!(
        "FAILURE: {} at call {:?}\n  {}\nseed {:#x}, case {} (case seed {:#x}); shrunk from {} calls to {}\n",
        f.kind,
        f.op,
        f.detail,
        found.seed,
        found.case_index,
        case_seed(found.seed, found.case_index),
        found.original_calls,
        c.ops.len()
    );
    s += &format!(
        "world: {:?}\n  settings: {:?}\n  shadow world: {}\n",
        c.capacities, c.settings, c.shadow
    );
    for (k, op) in c.ops.iter().enumerate() {
        s += &format!("  {k:4}: {op:?}\n");
    }
    s += "as a Rust test:\n";
    s += &rust::to_rust(c);
    s
}
