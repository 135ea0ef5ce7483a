//! Where each constraint is solved: islands → splits → bundles of
//! [`LANES`] lanes.
//!
//! A slot is `bundle * LANES + lane`. Every split of a large island starts
//! on a bundle boundary, so a bundle of a parallel split holds constraints
//! of that split only (they share no dynamic body, so its lanes are solved
//! at once); the split's last bundle is filled up with padding lanes. The
//! non-parallel split and the small islands are solved one lane after the
//! other, in island order; the small islands follow the large ones in one
//! contiguous run of slots.

use super::splitter::{LargeIslandSplitter, NON_PARALLEL_SPLIT, NUM_SPLITS};
use crate::collide::MAX_POINTS;
use archipelago_simd::LANES;

/// A slot that holds no constraint.
pub(crate) const PADDING: u32 = u32::MAX;

pub(crate) struct Layout {
    /// Per slot: the manifold solved there, or [`PADDING`].
    pub slot_manifold: Vec<u32>,
    /// Per large island and split: its slots `[start, end)`.
    pub splits: Vec<[(u32, u32); NUM_SPLITS]>,
    /// Per small island (in island order, after the large ones): its slots.
    pub small: Vec<(u32, u32)>,
}

/// `n` rounded up to a whole bundle.
fn align(n: usize) -> usize {
    n.div_ceil(LANES) * LANES
}

impl Layout {
    /// Room for `max_constraints` constraints in `max_islands` islands:
    /// every non-empty parallel split holds at least
    /// `SPLIT_COMBINE_THRESHOLD` (32) constraints and every large island at
    /// least 128, so padding adds at most (32 + 1) × 15 slots per 128
    /// constraints, plus one bundle.
    pub fn new(max_constraints: usize, max_islands: usize) -> Self {
        let slots = Self::max_slots(max_constraints);
        Self {
            slot_manifold: Vec::with_capacity(slots),
            splits: Vec::with_capacity(max_constraints / 128 + 1),
            small: Vec::with_capacity(max_islands),
        }
    }

    /// The most slots a layout of `n` constraints can need.
    pub fn max_slots(n: usize) -> usize {
        n + (n / 32 + n / 128 + 2) * (LANES - 1) + LANES
    }

    /// Lays out the large islands' splits (their items are constraint
    /// indices into `order`, island after island) and then the small
    /// islands (`small_ranges`: their ranges of `order`).
    ///
    /// Within a parallel split, constraints are ordered by their manifold's
    /// point count (`points(manifold)`), most first, so a bundle's lanes
    /// mostly take the same path (the face block of 4-point faces, the
    /// point rows of edges): the order inside a split changes no result,
    /// since its constraints share no dynamic body.
    pub fn build(
        &mut self,
        order: &[u32],
        splitter: &LargeIslandSplitter,
        small_ranges: &[(u32, u32)],
        points: impl Fn(u32) -> u32,
    ) {
        self.slot_manifold.clear();
        self.splits.clear();
        self.small.clear();
        let slots = &mut self.slot_manifold;
        for isl in &splitter.islands {
            let mut ranges = [(0u32, 0u32); NUM_SPLITS];
            for (s, range) in ranges.iter_mut().enumerate() {
                let (a, b) = isl.split(s);
                if a == b {
                    let at = slots.len() as u32;
                    *range = (at, at);
                    continue;
                }
                slots.resize(align(slots.len()), PADDING);
                let start = slots.len() as u32;
                let items = &order[a as usize..b as usize];
                if s == NON_PARALLEL_SPLIT {
                    slots.extend_from_slice(items);
                } else {
                    for n in (1..=MAX_POINTS as u32).rev() {
                        slots.extend(items.iter().filter(|&&m| points(m) == n));
                    }
                }
                *range = (start, slots.len() as u32);
            }
            self.splits.push(ranges);
        }
        slots.resize(align(slots.len()), PADDING);
        for &(a, b) in small_ranges {
            let start = slots.len() as u32;
            slots.extend_from_slice(&order[a as usize..b as usize]);
            self.small.push((start, slots.len() as u32));
        }
        slots.resize(align(slots.len()), PADDING);
    }

    /// Constraints in parallel splits (solved wide), and the others.
    pub fn widths(&self) -> (u32, u32) {
        let wide: u32 = self
            .splits
            .iter()
            .flat_map(|s| s[..NON_PARALLEL_SPLIT].iter())
            .map(|&(a, b)| b - a)
            .sum();
        let total = self.slot_manifold.iter().filter(|&&m| m != PADDING).count() as u32;
        (wide, total - wide)
    }

    pub fn bundles(&self) -> usize {
        self.slot_manifold.len() / LANES
    }
}
