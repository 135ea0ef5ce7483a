//! `LargeIslandSplitter`: Jolt's splitting of big islands into groups of
//! constraints that share no dynamic body, so one island's constraints can be
//! solved by several workers at once.
//!
//! Every dynamic body of the island carries a `u32` mask of the splits it
//! already appears in. A constraint goes to the lowest split neither of its
//! bodies is in, `(!mask_a & !mask_b).trailing_zeros()`, and sets that bit in
//! both (static and kinematic bodies have no mask: they are only read, so
//! any number of constraints in a split may share them). When all 31
//! parallel bits are taken the constraint lands in split 31, the
//! non-parallel split, solved by one worker after the others. Splits that
//! end up with fewer than [`SPLIT_COMBINE_THRESHOLD`] items are not worth a
//! barrier and are merged into split 31.
//!
//! Constraints are assigned in island order (manifold order, i.e. body-pair
//! order), so the split of every constraint depends on body indices alone.
//! Within a split the order is island order again; `layout.rs` puts each
//! split's items in bundles of 16, which is what workers claim.

/// Islands with at least this many constraints (contacts + joints) are split
/// (Jolt's `cLargeIslandTreshold`); smaller ones are one job on one worker.
pub(crate) const LARGE_ISLAND_THRESHOLD: usize = 128;
/// Bits in a body's split mask.
pub(crate) const NUM_SPLITS: usize = 32;
/// The last split is solved by a single worker: it takes what does not fit
/// in the 31 parallel splits and the contents of tiny splits.
pub(crate) const NON_PARALLEL_SPLIT: usize = NUM_SPLITS - 1;
/// A parallel split smaller than this costs more in barrier wait than it
/// gains (Jolt's `cSplitCombineTreshold`).
pub(crate) const SPLIT_COMBINE_THRESHOLD: usize = 32;

/// A static or kinematic side of an item: it takes no split bit.
pub(crate) const NO_BODY: u32 = u32::MAX;

/// One split island: its items (constraint indices) grouped by split.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SplitIsland {
    /// `items[split_start[s]..split_start[s + 1]]` are the items of split
    /// `s`; absolute offsets into [`LargeIslandSplitter::items`].
    pub split_start: [u32; NUM_SPLITS + 1],
}

impl SplitIsland {
    pub fn split(&self, s: usize) -> (u32, u32) {
        (self.split_start[s], self.split_start[s + 1])
    }
    #[cfg(test)]
    pub fn num_items(&self) -> u32 {
        self.split_start[NUM_SPLITS] - self.split_start[0]
    }
}

pub(crate) struct LargeIslandSplitter {
    /// Per body slot: the splits it is in (valid for the island being split).
    masks: Vec<u32>,
    /// Per item of the island being split: its split.
    split_of: Vec<u8>,
    /// Items of every split island, island after island, split after split.
    pub items: Vec<u32>,
    pub islands: Vec<SplitIsland>,
}

impl LargeIslandSplitter {
    pub fn new(max_bodies: usize, max_constraints: usize) -> Self {
        Self {
            masks: vec![0; max_bodies],
            split_of: Vec::with_capacity(max_constraints),
            items: Vec::with_capacity(max_constraints),
            islands: Vec::with_capacity(max_constraints / LARGE_ISLAND_THRESHOLD + 1),
        }
    }

    pub fn clear(&mut self) {
        self.items.clear();
        self.islands.clear();
    }

    /// Splits one island (call in island order). `items` are its items
    /// (manifold indices) in island order and `bodies[k]` the slots of item
    /// `k`'s two bodies, [`NO_BODY`] for a static or kinematic one (looked up
    /// beforehand, in parallel: this pass is serial and reads them in order).
    pub fn split_island(&mut self, items: &[u32], bodies: &[[u32; 2]]) {
        debug_assert_eq!(items.len(), bodies.len());
        for pair in bodies {
            for &body in pair {
                if body != NO_BODY {
                    self.masks[body as usize] = 0;
                }
            }
        }
        self.split_of.clear();
        let mut count = [0u32; NUM_SPLITS];
        // Items come in body-pair order, so runs of items share their
        // first body: its mask stays in a register across the run instead of
        // making every item wait for the last one's store.
        let (mut last, mut last_mask) = (NO_BODY, 0u32);
        for &[a, b] in bodies {
            let mask = |body: u32| match body {
                NO_BODY => 0,
                _ if body == last => last_mask,
                _ => self.masks[body as usize],
            };
            let (mask_a, mask_b) = (mask(a), mask(b));
            // Bit 31 is never set, so this is at most NON_PARALLEL_SPLIT.
            let split = (!mask_a & !mask_b).trailing_zeros() as usize;
            if split < NON_PARALLEL_SPLIT {
                let bit = 1 << split;
                for (body, m) in [(a, mask_a | bit), (b, mask_b | bit)] {
                    if body != NO_BODY {
                        self.masks[body as usize] = m;
                        if body == last {
                            last_mask = m;
                        }
                    }
                }
            }
            if a != NO_BODY && a != last {
                last = a;
                last_mask = if split < NON_PARALLEL_SPLIT {
                    mask_a | 1 << split
                } else {
                    mask_a
                };
            }
            self.split_of.push(split as u8);
            count[split] += 1;
        }
        // Tiny parallel splits join the non-parallel one.
        let mut target = [0u8; NUM_SPLITS];
        for s in 0..NUM_SPLITS {
            target[s] = if s != NON_PARALLEL_SPLIT && (count[s] as usize) < SPLIT_COMBINE_THRESHOLD
            {
                NON_PARALLEL_SPLIT as u8
            } else {
                s as u8
            };
        }
        for s in 0..NON_PARALLEL_SPLIT {
            if target[s] as usize == NON_PARALLEL_SPLIT {
                count[NON_PARALLEL_SPLIT] += count[s];
                count[s] = 0;
            }
        }
        // Counting sort by split, stable (island order within a split).
        let base = self.items.len() as u32;
        let mut split_start = [0u32; NUM_SPLITS + 1];
        split_start[0] = base;
        for s in 0..NUM_SPLITS {
            split_start[s + 1] = split_start[s] + count[s];
        }
        let mut cursor = split_start;
        let total = split_start[NUM_SPLITS] - base;
        self.items.resize(self.items.len() + total as usize, 0);
        for (k, &item) in items.iter().enumerate() {
            let s = target[self.split_of[k] as usize] as usize;
            self.items[cursor[s] as usize] = item;
            cursor[s] += 1;
        }
        self.islands.push(SplitIsland { split_start });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_rng::TestRng;

    /// Splits `pairs` (None = static side) as one island.
    fn split(pairs: &[(Option<u32>, Option<u32>)], bodies: usize) -> LargeIslandSplitter {
        let mut s = LargeIslandSplitter::new(bodies, pairs.len());
        let items: Vec<u32> = (0..pairs.len() as u32).collect();
        let ends: Vec<[u32; 2]> = pairs
            .iter()
            .map(|&(a, b)| [a.unwrap_or(NO_BODY), b.unwrap_or(NO_BODY)])
            .collect();
        s.split_island(&items, &ends);
        s
    }

    fn check_invariants(
        pairs: &[(Option<u32>, Option<u32>)],
        s: &LargeIslandSplitter,
        bodies: usize,
    ) {
        let isl = s.islands[0];
        let mut seen = vec![0u32; pairs.len()];
        for sp in 0..NUM_SPLITS {
            let (start, end) = isl.split(sp);
            let mut used = vec![false; bodies];
            let mut prev = None;
            for &item in &s.items[start as usize..end as usize] {
                seen[item as usize] += 1;
                // island order within a split
                assert!(prev < Some(item), "split {sp} out of order");
                prev = Some(item);
                if sp == NON_PARALLEL_SPLIT {
                    continue;
                }
                let (a, b) = pairs[item as usize];
                for body in [a, b].into_iter().flatten() {
                    assert!(!used[body as usize], "split {sp} shares body {body}");
                    used[body as usize] = true;
                }
            }
            if sp != NON_PARALLEL_SPLIT && end > start {
                assert!((end - start) as usize >= SPLIT_COMBINE_THRESHOLD);
            }
        }
        assert!(
            seen.iter().all(|&n| n == 1),
            "every item in exactly one split"
        );
    }

    #[test]
    fn random_graphs_respect_split_invariants() {
        let mut rng = TestRng(0x5EED);
        for case in 0..200 {
            let bodies = 2 + rng.below(2000);
            let n = 1 + rng.below(4000);
            let pairs: Vec<_> = (0..n)
                .map(|_| {
                    let a = rng.below(bodies) as u32;
                    let mut b = rng.below(bodies) as u32;
                    if b == a {
                        b = (a + 1) % bodies as u32;
                    }
                    // one in eight contacts is against a static body
                    if rng.below(8) == 0 {
                        (Some(a), None)
                    } else {
                        (Some(a), Some(b))
                    }
                })
                .collect();
            let s = split(&pairs, bodies);
            check_invariants(&pairs, &s, bodies);
            assert_eq!(s.islands[0].num_items() as usize, n, "case {case}");
        }
    }

    /// Static bodies take no bit: 100 boxes on one floor all fit split 0.
    #[test]
    fn static_bodies_do_not_serialize() {
        let pairs: Vec<_> = (0..100).map(|i| (None, Some(i))).collect();
        let s = split(&pairs, 100);
        assert_eq!(s.islands[0].split(0), (0, 100));
        check_invariants(&pairs, &s, 100);
    }

    /// 32 hubs with 40 spokes each: every hub needs 40 colours, only 31 are
    /// parallel, so spokes 32..40 of every hub overflow into split 31 and
    /// the 31 parallel splits hold exactly one spoke of each hub.
    #[test]
    fn colour_overflow_goes_to_the_non_parallel_split() {
        let (hubs, spokes) = (32u32, 40u32);
        let mut pairs = Vec::new();
        for h in 0..hubs {
            for k in 0..spokes {
                pairs.push((Some(h), Some(hubs + h * spokes + k)));
            }
        }
        let bodies = (hubs + hubs * spokes) as usize;
        let s = split(&pairs, bodies);
        check_invariants(&pairs, &s, bodies);
        let isl = s.islands[0];
        for sp in 0..NON_PARALLEL_SPLIT {
            let (start, end) = isl.split(sp);
            assert_eq!(end - start, hubs, "split {sp}");
        }
        let (start, end) = isl.split(NON_PARALLEL_SPLIT);
        assert_eq!(end - start, hubs * (spokes - 31));
        for &item in &s.items[start as usize..end as usize] {
            assert!(item % spokes >= 31, "spoke {} overflowed", item % spokes);
        }
    }

    /// A chain needs two colours; with few items both are tiny and merge
    /// into split 31, which then holds the whole island in order.
    #[test]
    fn tiny_splits_merge_into_split_31() {
        let pairs: Vec<_> = (0..40u32).map(|i| (Some(i), Some(i + 1))).collect();
        let s = split(&pairs, 41);
        let (start, end) = s.islands[0].split(NON_PARALLEL_SPLIT);
        assert_eq!((start, end), (0, 40));
        assert_eq!(s.items, (0..40).collect::<Vec<_>>());
    }
}
