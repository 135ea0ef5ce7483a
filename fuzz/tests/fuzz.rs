//! The fuzzer in CI: a fixed-seed campaign for a short budget must find
//! nothing; a planted failure must be found and shrunk to its essence; and
//! a short churn soak must keep the count exact and the heap flat.

use archipelago_fuzz::ops::{Case, Op, Target};
use archipelago_fuzz::soak::{soak, SoakConfig};
use archipelago_fuzz::{campaign, describe, run_case, shrink, Budget, Pools, Tally};
use archipelago_layout::CountingAlloc;
use std::sync::Mutex;
use std::time::Duration;

#[global_allocator]
static HEAP: CountingAlloc = CountingAlloc::new();

/// The panic hook and the heap counter are process-wide: one test at a
/// time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// 150,000 calls (about 10 s here) of two fixed seeds: every check holds.
#[test]
fn a_short_campaign_finds_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for seed in [0xC1, 0x5EED] {
        let budget = Budget {
            calls: 75_000,
            time: Duration::from_secs(120),
        };
        let report = campaign(seed, budget, Duration::from_secs(60), |_| {});
        if let Some(found) = &report.found {
            panic!("{}", describe(found));
        }
        assert!(report.tally.calls >= 75_000, "{:?}", report.tally);
        // the mix reached what it is meant to reach
        let t = &report.tally;
        assert!(
            t.simulated > 5_000 && t.refused > 10_000 && t.shadowed > 10,
            "{t:?}"
        );
        assert!(t.updates_with_drops > 0 && t.worlds_refused > 0, "{t:?}");
    }
}

/// A panic planted among 600 random calls is caught, and shrinking keeps
/// only what it needs: the injection and an update (plus whatever the
/// named job needs to run at all).
#[test]
fn a_planted_panic_is_found_and_shrunk() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    archipelago_fuzz::quiet_panics();
    let pools = Pools::new();
    // a sane case that passes, with the injection spliced in
    let mut case = (0..)
        .map(Case::generate)
        .find(|c| {
            c.ops.len() >= 300
                && c.ops
                    .iter()
                    .filter(|o| matches!(o, Op::Update { .. }))
                    .count()
                    > 50
                && run_case(c, &pools, &mut Tally::default(), &|_| {}).is_ok()
        })
        .expect("a passing case");
    let at = case.ops.len() / 3;
    case.ops.insert(
        at,
        Op::InjectPanic {
            job: "forces",
            nth: 0,
        },
    );
    let failure = run_case(&case, &pools, &mut Tally::default(), &|_| {}).unwrap_err();
    assert_eq!(failure.kind, "panic");
    assert!(
        failure.detail.contains("injected panic"),
        "{}",
        failure.detail
    );
    let (small, again) = shrink::shrink(&case, &failure, &pools);
    assert_eq!(again.kind, "panic");
    // the injection, one body for the job to work on, and one update
    assert!(small.ops.len() <= 3, "{small:#?}");
    assert!(small
        .ops
        .iter()
        .any(|o| matches!(o, Op::InjectPanic { .. })));
    assert!(small.ops.iter().any(|o| matches!(o, Op::Update { .. })));
    let _ = std::panic::take_hook();
    let _ = Target::Latest;
}

/// 3,000 steps of 300 bodies with 6 replaced per step: the count is exact
/// after every step, nothing faults or goes non-finite, and the live heap
/// is the same at the end as after the first window (every buffer sized
/// at creation or by the first steps).
#[test]
fn a_short_soak_stays_exact_and_flat() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cfg = SoakConfig {
        bodies: 300,
        steps: 3_000,
        churn: 6,
        threads: 2,
        seed: 7,
        window: 500,
    };
    let heap = || HEAP.live_bytes();
    let r = soak(&cfg, Some(&heap), |_| {});
    assert!(r.clean(), "{r:?}");
    assert_eq!(r.created, 6 * 3_000);
    let heaps: Vec<i64> = r.windows.iter().filter_map(|w| w.heap_bytes).collect();
    // after the second window, not a byte more
    assert!(
        heaps[1..].iter().all(|&h| h == heaps[1]),
        "heap per window: {heaps:?}"
    );
}
