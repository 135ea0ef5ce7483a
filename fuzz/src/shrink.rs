//! Shrinking a failing case to a short list of calls that fails the same
//! way (the same invariant), by delta debugging: drop everything after the
//! failing call, then try removing chunks of calls, halving the chunk size
//! whenever no chunk can go, down to single calls. Every try replays the
//! candidate on a fresh world, which reproduces exactly: the kernel is
//! deterministic and the ops are plain data.

use crate::driver::{run_case, Failure, Pools, Tally};
use crate::ops::Case;

/// Replays at most this many candidates (a few seconds on small worlds).
const MAX_TRIES: usize = 3000;

/// The shortest case found that still fails with `failure.kind`, and that
/// failure.
pub fn shrink(case: &Case, failure: &Failure, pools: &Pools) -> (Case, Failure) {
    let fails_alike = |c: &Case| -> Option<Failure> {
        let mut tally = Tally::default();
        match run_case(c, pools, &mut tally, &|_| {}) {
            Err(f) if f.kind == failure.kind => Some(f),
            _ => None,
        }
    };
    let mut best = case.clone();
    let mut best_failure = failure.clone();
    if let Some(k) = failure.op {
        best.ops.truncate(k + 1);
        match fails_alike(&best) {
            Some(f) => best_failure = f,
            // failing only with the later calls present cannot happen for
            // a per-call check, but keep the original if it does
            None => return (case.clone(), failure.clone()),
        }
    }
    let mut tries = 0;
    let mut chunk = best.ops.len().div_ceil(2).max(1);
    while tries < MAX_TRIES {
        let mut removed = false;
        let mut start = 0;
        while start < best.ops.len() && tries < MAX_TRIES {
            let end = (start + chunk).min(best.ops.len());
            let mut candidate = best.clone();
            candidate.ops.drain(start..end);
            tries += 1;
            if let Some(f) = fails_alike(&candidate) {
                best = candidate;
                best_failure = f;
                removed = true;
            } else {
                start = end;
            }
        }
        if !removed {
            if chunk == 1 {
                break;
            }
            chunk = chunk.div_ceil(2);
        }
    }
    // A shadow world is only needed if the failure is a divergence.
    if best.shadow && best_failure.kind != "shadow diverged" {
        let mut plain = best.clone();
        plain.shadow = false;
        if let Some(f) = fails_alike(&plain) {
            return (plain, f);
        }
    }
    (best, best_failure)
}
