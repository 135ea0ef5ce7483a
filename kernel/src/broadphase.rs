//! Broad phase: candidate body pairs whose (inflated) world AABBs overlap.
//!
//! For now a brute-force O(N²) sweep with SIMD overlap tests: every added body
//! against every later slot, eight slots per test. It stays in the code as the
//! oracle the SAP and MBP broad phases are checked against.
//!
//! Pairs come out sorted by (lower slot, higher slot), the order the narrow
//! phase and solver consume, so results never depend on how pairs were found.

use crate::body::{Bodies, MotionType};
use archipelago_simd::{overlap_mask, AabbLanes, AabbRef, LANES};

/// A candidate pair: slot `a` < slot `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct BodyPair {
    pub a: u32,
    pub b: u32,
}

impl BodyPair {
    pub fn key(self) -> u64 {
        ((self.a as u64) << 32) | self.b as u64
    }
}

/// Whether two bodies may collide at all: at least one must be dynamic
/// (static–static, static–kinematic and kinematic–kinematic pairs never
/// produce a response).
#[inline]
pub(crate) fn should_collide(a: MotionType, b: MotionType) -> bool {
    a == MotionType::Dynamic || b == MotionType::Dynamic
}

/// Whether the pair `(i, j)` is reported this step: it may collide, and at
/// least one of the two is awake (sleeping–sleeping and sleeping–static
/// pairs cost nothing; awake–sleeping pairs are reported so the awake body
/// can wake the sleeping one).
#[inline]
pub(crate) fn reported(bodies: &Bodies, i: usize, j: usize) -> bool {
    should_collide(bodies.motion(i), bodies.motion(j))
        && (bodies.is_active(i) || bodies.is_active(j))
}

/// Outcome of one pair search.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PairSearch {
    /// Pairs that did not fit in `max_body_pairs` and were dropped.
    pub dropped: u32,
}

/// Brute-force pair finder; writes into `pairs` (capacity preallocated, never
/// grown past `max_pairs`).
pub(crate) fn find_pairs_brute_force(
    bodies: &Bodies,
    pairs: &mut Vec<BodyPair>,
    max_pairs: usize,
) -> PairSearch {
    pairs.clear();
    let mut dropped = 0u32;
    let high = bodies.slots.high_water();
    // Columns are padded with empty boxes to a multiple of 16 lanes, so the
    // lane loop below can always read 8 slots at once.
    let (min_x, min_y, min_z) = bodies.aabb_min.slices();
    let (max_x, max_y, max_z) = bodies.aabb_max.slices();
    let lanes = AabbLanes {
        min_x,
        min_y,
        min_z,
        max_x,
        max_y,
        max_z,
    };
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
                if j >= high || !reported(bodies, i, j) {
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
    PairSearch { dropped }
}
