//! The brute-force pair finder: every added body against every later slot,
//! 16 slots per SIMD overlap test. O(N²), but simple enough to be obviously
//! right: it is the oracle the SAP and MBP broad phases are tested against.

use super::{reported, BodyPair, LayerFilter, PairSearch};
use crate::body::Bodies;
use archipelago_simd::{overlap_mask, AabbRef, LANES};

/// Brute-force pair finder; writes into `pairs` (capacity preallocated, never
/// grown past `max_pairs`).
pub(crate) fn find_pairs_brute_force(
    bodies: &Bodies,
    filter: &LayerFilter,
    pairs: &mut Vec<BodyPair>,
    max_pairs: usize,
) -> PairSearch {
    pairs.clear();
    let mut dropped = 0u32;
    let high = bodies.slots.high_water();
    // Columns are padded with empty boxes to a multiple of 16 lanes, so the
    // lane loop below can always read a whole lane.
    let lanes = bodies.aabb_lanes();
    let padded = bodies.aabb_min.padded_len();
    for i in 0..high {
        if !bodies.is_added(i) {
            continue;
        }
        let one = AabbRef {
            min: bodies.aabb_min.get(i),
            max: bodies.aabb_max.get(i),
        };
        let mut start = i + 1;
        while start < high {
            let base = start.min(padded - LANES);
            let mut mask = overlap_mask(&one, &lanes, base);
            // Drop lanes before `start` when the last load was shifted back.
            mask &= u32::MAX << (start - base);
            while mask != 0 {
                let j = base + mask.trailing_zeros() as usize;
                mask &= mask - 1;
                if j >= high || !reported(bodies, filter, i, j) {
                    continue;
                }
                if pairs.len() < max_pairs {
                    pairs.push(BodyPair {
                        a: i as u32,
                        b: j as u32,
                    });
                } else {
                    dropped += 1;
                }
            }
            start = base + LANES;
        }
    }
    PairSearch {
        dropped,
        ..PairSearch::default()
    }
}
