//! Where each constraint is solved: islands → splits (or colours) →
//! bundles of [`LANES`] lanes.
//!
//! A slot is `bundle * LANES + lane`.
//!
//! - Large islands: every split starts on a bundle boundary, so a bundle
//!   of a parallel split holds constraints of that split only (they share
//!   no dynamic body, so its lanes are solved at once); the split's last
//!   bundle is filled up with padding lanes. The non-parallel split runs
//!   one lane after the other, in island order.
//! - Small islands are packed into jobs of at least [`PACK_ITEMS`]
//!   constraints, and each pack is coloured as the splitter colours a large
//!   island (Box2D v3 colours its whole awake graph; here a pack): a
//!   constraint takes the lowest colour neither of its dynamic bodies has
//!   yet, from a `u32` mask per body. Each colour's constraints share no
//!   dynamic body and are laid out in whole bundles, solved wide; colours
//!   with fewer than [`MIN_COLOUR_ITEMS`] constraints, and the 32nd, join
//!   the pack's overflow, solved one lane after the other. One job solves
//!   its pack colour after colour, iteration after iteration.

use super::splitter::{LargeIslandSplitter, NON_PARALLEL_SPLIT, NO_BODY, NUM_SPLITS};
use archipelago_simd::LANES;

/// A slot that holds no constraint.
pub(crate) const PADDING: u32 = u32::MAX;

/// Small islands are packed until a job holds at least this many
/// constraints: enough for a few full bundles per colour, and 100,000
/// one-body islands are ~800 jobs, not 100,000.
pub(crate) const PACK_ITEMS: u32 = 128;

/// A colour with fewer constraints than this is cheaper solved lane by lane
/// in the overflow than padded to a bundle.
pub(crate) const MIN_COLOUR_ITEMS: u32 = 4;

/// Colours of a pack (the last is the overflow).
const COLOURS: usize = NUM_SPLITS;

/// A pack of small islands: its colours' slots (`colours` is a range of
/// [`Layout::colour_ranges`]), then its overflow's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pack {
    pub colours: (u32, u32),
    pub overflow: (u32, u32),
}

pub(crate) struct Layout {
    /// Per slot: the manifold solved there, or [`PADDING`].
    pub slot_manifold: Vec<u32>,
    /// Per large island and split: its slots `[start, end)`.
    pub splits: Vec<[(u32, u32); NUM_SPLITS]>,
    pub packs: Vec<Pack>,
    /// Slots of every pack's colours, pack after pack.
    pub colour_ranges: Vec<(u32, u32)>,
    /// Constraints laid out in wide bundles, and lane by lane.
    pub wide: u32,
    pub scalar: u32,
    /// Per body slot: the colours it is in (for the pack being coloured).
    masks: Vec<u32>,
    /// Per constraint of the pack being coloured: its colour.
    colour_of: Vec<u8>,
    /// The slots `slot_manifold` may never outgrow (its capacity).
    capacity: usize,
}

/// `n` rounded up to a whole bundle.
fn align(n: usize) -> usize {
    n.div_ceil(LANES) * LANES
}

impl Layout {
    /// Room for `max_constraints` constraints among `max_bodies` bodies.
    pub fn new(max_constraints: usize, max_bodies: usize) -> Self {
        let capacity = Self::max_slots(max_constraints);
        Self {
            slot_manifold: Vec::with_capacity(capacity),
            splits: Vec::with_capacity(max_constraints / 128 + 1),
            packs: Vec::with_capacity(max_constraints / PACK_ITEMS as usize + 1),
            colour_ranges: Vec::with_capacity(max_constraints),
            wide: 0,
            scalar: 0,
            masks: vec![0; max_bodies],
            colour_of: Vec::with_capacity(max_constraints),
            capacity,
        }
    }

    /// The slots a layout of `n` constraints may use. Large islands need at
    /// most this (every non-empty parallel split holds at least 32
    /// constraints and every large island at least 128, so padding adds at
    /// most (32 + 1) × 15 slots per 128 constraints); the colours of small
    /// islands are given bundles of their own only while they fit in it,
    /// and join their pack's overflow when they would not.
    pub fn max_slots(n: usize) -> usize {
        n + (n / 32 + n / 128 + 2) * (LANES - 1) + LANES
    }

    /// Lays out the large islands' splits (their items are constraint
    /// indices into `order`, island after island) and then the small
    /// islands (`small_ranges`: their ranges of `order`), packed and
    /// coloured. `bodies(m)` are manifold `m`'s dynamic bodies ([`NO_BODY`]
    /// for a static or kinematic side).
    ///
    /// Within a split or a colour, constraints keep island order (body
    /// order), so a worker's home range of a split touches about the same
    /// bodies as its home range of the next one. (Ordering them by point
    /// count instead, so that a bundle's lanes take the same path, measured
    /// no faster at 1 or 2 threads on the pyramid.)
    pub fn build(
        &mut self,
        order: &[u32],
        splitter: &LargeIslandSplitter,
        small_ranges: &[(u32, u32)],
        bodies: impl Fn(u32) -> [u32; 2],
    ) {
        self.slot_manifold.clear();
        self.splits.clear();
        self.packs.clear();
        self.colour_ranges.clear();
        self.wide = 0;
        self.scalar = 0;
        // Appends the `keep(k)` of `items`, in island order.
        let in_order = |slots: &mut Vec<u32>, items: &[u32], keep: &dyn Fn(usize) -> bool| {
            slots.extend(
                items
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| keep(k))
                    .map(|(_, &m)| m),
            );
        };
        for isl in &splitter.islands {
            let slots = &mut self.slot_manifold;
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
                    self.scalar += b - a;
                } else {
                    in_order(slots, items, &|_| true);
                    self.wide += b - a;
                }
                *range = (start, slots.len() as u32);
            }
            self.splits.push(ranges);
        }
        let small_total: u32 = small_ranges.iter().map(|&(a, b)| b - a).sum();
        let mut placed = 0u32;
        let mut first = 0;
        while first < small_ranges.len() {
            // islands until the pack holds PACK_ITEMS constraints
            let mut end = first;
            let mut items = 0;
            while end < small_ranges.len() && items < PACK_ITEMS {
                items += small_ranges[end].1 - small_ranges[end].0;
                end += 1;
            }
            let (a, b) = (small_ranges[first].0, small_ranges[end - 1].1);
            let pack = &order[a as usize..b as usize];
            placed += b - a;
            self.pack(pack, small_total - placed, &in_order, &bodies);
            first = end;
        }
        let slots = &mut self.slot_manifold;
        slots.resize(align(slots.len()), PADDING);
        debug_assert!(slots.len() <= self.capacity);
    }

    /// Colours one pack and lays it out; `after` constraints of later packs
    /// still need room.
    fn pack(
        &mut self,
        items: &[u32],
        after: u32,
        in_order: &impl Fn(&mut Vec<u32>, &[u32], &dyn Fn(usize) -> bool),
        bodies: &impl Fn(u32) -> [u32; 2],
    ) {
        for &m in items {
            for body in bodies(m) {
                if body != NO_BODY {
                    self.masks[body as usize] = 0;
                }
            }
        }
        self.colour_of.clear();
        let mut count = [0u32; COLOURS];
        for &m in items {
            let [a, b] = bodies(m);
            let mask = |body: u32| {
                if body == NO_BODY {
                    0
                } else {
                    self.masks[body as usize]
                }
            };
            // Bit 31 is never set, so this is at most the overflow colour.
            let colour = (!mask(a) & !mask(b)).trailing_zeros() as usize;
            if colour < COLOURS - 1 {
                for body in [a, b] {
                    if body != NO_BODY {
                        self.masks[body as usize] |= 1 << colour;
                    }
                }
            }
            self.colour_of.push(colour as u8);
            count[colour] += 1;
        }
        let colours_start = self.colour_ranges.len() as u32;
        let overflow_colour = (COLOURS - 1) as u8;
        let mut wide = [false; COLOURS];
        for c in 0..COLOURS - 1 {
            if count[c] == 0 {
                continue;
            }
            let slots = &mut self.slot_manifold;
            let start = align(slots.len());
            // room for this colour in whole bundles, then all of this pack
            // and the later ones again, and a last bundle's padding
            let rest = (items.len() as u32 + after) as usize;
            let fits = start + align(count[c] as usize) + rest + LANES <= self.capacity;
            if count[c] < MIN_COLOUR_ITEMS || !fits {
                continue;
            }
            wide[c] = true;
            slots.resize(start, PADDING);
            let (colour, of) = (c as u8, &self.colour_of);
            in_order(slots, items, &|k| of[k] == colour);
            self.colour_ranges.push((start as u32, slots.len() as u32));
            // the bundle's other lanes are padding (a wide bundle holds one
            // colour only)
            slots.resize(align(slots.len()), PADDING);
            self.wide += count[c];
        }
        // The overflow: the last colour and the colours too small or too
        // late for bundles, in island order.
        let slots = &mut self.slot_manifold;
        let start = slots.len() as u32;
        let of = &self.colour_of;
        slots.extend(
            items
                .iter()
                .zip(of)
                .filter(|&(_, &k)| k == overflow_colour || !wide[k as usize])
                .map(|(&m, _)| m),
        );
        let overflow = (start, slots.len() as u32);
        self.scalar += overflow.1 - overflow.0;
        self.packs.push(Pack {
            colours: (colours_start, self.colour_ranges.len() as u32),
            overflow,
        });
    }

    pub fn bundles(&self) -> usize {
        self.slot_manifold.len() / LANES
    }
}
