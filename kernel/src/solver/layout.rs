//! Where each constraint is solved: islands → splits (or colours) →
//! bundles of [`LANES`] lanes, one type batch per constraint type.
//!
//! Constraints are items: manifold `m` is item `m`, and the step's active
//! joint `j` is item `manifolds + j` (the islands and the splitter see one
//! graph of both). Each type has its own slots (`slot = bundle * LANES +
//! lane` in that type's batch), and every split, colour and overflow is a
//! range of contact slots and a range of joint slots ([`Slots`]): a bundle
//! holds one type only, and the constraints of one split or colour share no
//! dynamic body whatever their types.
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

/// A colour with fewer constraints of a type than this is cheaper solved
/// lane by lane in the overflow than padded to a bundle.
pub(crate) const MIN_COLOUR_ITEMS: u32 = 4;

/// Colours of a pack (the last is the overflow).
const COLOURS: usize = NUM_SPLITS;

/// Constraint types with their own batch.
const TYPES: usize = 2;
const CONTACTS: usize = 0;
const JOINTS: usize = 1;

/// The slots of one split, colour or overflow: `[start, end)` of contact
/// slots and of joint slots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Slots {
    pub contacts: (u32, u32),
    pub joints: (u32, u32),
}

impl Pack {
    /// Whether nothing of the pack is solved in slots (its joints are all
    /// solved whole by joint trees).
    pub fn has_no_slots(&self) -> bool {
        self.colours.0 == self.colours.1 && self.overflow.is_empty()
    }
}

impl Slots {
    pub fn is_empty(&self) -> bool {
        self.contacts.0 == self.contacts.1 && self.joints.0 == self.joints.1
    }

    fn set(&mut self, t: usize, range: (u32, u32)) {
        if t == CONTACTS {
            self.contacts = range;
        } else {
            self.joints = range;
        }
    }
}

/// A pack of small islands: its colours' slots (`colours` is a range of
/// [`Layout::colour_ranges`]), then its overflow's, and the small islands
/// it holds (a range of the `small_ranges` given to [`Layout::build`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pack {
    pub colours: (u32, u32),
    pub overflow: Slots,
    pub islands: (u32, u32),
}

pub(crate) struct Layout {
    /// Per contact slot: the manifold solved there, or [`PADDING`].
    pub slot_manifold: Vec<u32>,
    /// Per joint slot: the active joint solved there, or [`PADDING`].
    pub slot_joint: Vec<u32>,
    /// Per large island and split: its slots.
    pub splits: Vec<[Slots; NUM_SPLITS]>,
    pub packs: Vec<Pack>,
    /// Slots of every pack's colours, pack after pack.
    pub colour_ranges: Vec<Slots>,
    /// Constraints laid out in wide bundles, and lane by lane.
    pub wide: u32,
    pub scalar: u32,
    /// Per body slot: the colours it is in (for the pack being coloured).
    masks: Vec<u32>,
    /// Per constraint of the pack being coloured: its colour.
    colour_of: Vec<u8>,
    /// The items of the pack being laid out that get slots.
    kept: Vec<u32>,
    /// The slots each type's batch may never outgrow (its capacity).
    capacity: [usize; TYPES],
}

/// `n` rounded up to a whole bundle.
fn align(n: usize) -> usize {
    n.div_ceil(LANES) * LANES
}

impl Layout {
    /// Room for `max_contacts` contacts and `max_joints` joints among
    /// `max_bodies` bodies.
    pub fn new(max_contacts: usize, max_joints: usize, max_bodies: usize) -> Self {
        let capacity = [Self::max_slots(max_contacts), Self::max_slots(max_joints)];
        Self {
            slot_manifold: Vec::with_capacity(capacity[CONTACTS]),
            slot_joint: Vec::with_capacity(capacity[JOINTS]),
            splits: Vec::with_capacity((max_contacts + max_joints) / 128 + 1),
            packs: Vec::with_capacity((max_contacts + max_joints) / PACK_ITEMS as usize + 1),
            colour_ranges: Vec::with_capacity(max_contacts + max_joints),
            wide: 0,
            scalar: 0,
            masks: vec![0; max_bodies],
            colour_of: Vec::with_capacity(max_contacts + max_joints),
            kept: Vec::with_capacity(max_contacts + max_joints),
            capacity,
        }
    }

    /// The slots a layout of `n` constraints of one type may use. Large
    /// islands need at most this (every non-empty parallel split holds at
    /// least 32 constraints and every large island at least 128, so padding
    /// adds at most (32 + 1) × 15 slots per 128 constraints, per type); the
    /// colours of small islands are given bundles of their own only while
    /// they fit in it, and join their pack's overflow when they would not.
    pub fn max_slots(n: usize) -> usize {
        n + (n / 32 + n / 128 + 2) * (LANES - 1) + LANES
    }

    fn slots_mut(&mut self, t: usize) -> &mut Vec<u32> {
        if t == CONTACTS {
            &mut self.slot_manifold
        } else {
            &mut self.slot_joint
        }
    }

    /// Lays out the large islands' splits (their items are indices into
    /// `order`, island after island) and then the small islands
    /// (`small_ranges`: their ranges of `order`), packed and coloured.
    /// Items below `manifolds` are contacts, the others joints (see the
    /// module docs); items `include` refuses get no slot (joints a joint
    /// tree solves whole). `bodies(item)` are an item's dynamic bodies
    /// ([`NO_BODY`] for a static or kinematic side).
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
        manifolds: u32,
        include: impl Fn(u32) -> bool,
        bodies: impl Fn(u32) -> [u32; 2],
    ) {
        self.slot_manifold.clear();
        self.slot_joint.clear();
        self.splits.clear();
        self.packs.clear();
        self.colour_ranges.clear();
        self.wide = 0;
        self.scalar = 0;
        let type_of = |item: u32| (item >= manifolds) as usize;
        // an item's index in its type's batch (a manifold, an active joint)
        let index = |item: u32| {
            if item >= manifolds {
                item - manifolds
            } else {
                item
            }
        };
        for isl in &splitter.islands {
            let mut ranges = [Slots::default(); NUM_SPLITS];
            for (s, range) in ranges.iter_mut().enumerate() {
                let (a, b) = isl.split(s);
                let items = &order[a as usize..b as usize];
                for t in 0..TYPES {
                    let slots = self.slots_mut(t);
                    if a == b {
                        let at = slots.len() as u32;
                        range.set(t, (at, at));
                        continue;
                    }
                    slots.resize(align(slots.len()), PADDING);
                    let start = slots.len() as u32;
                    slots.extend(
                        items
                            .iter()
                            .filter(|&&i| type_of(i) == t)
                            .map(|&i| index(i)),
                    );
                    let end = slots.len() as u32;
                    range.set(t, (start, end));
                    if s == NON_PARALLEL_SPLIT {
                        self.scalar += end - start;
                    } else {
                        self.wide += end - start;
                    }
                }
            }
            self.splits.push(ranges);
        }
        let mut after = [0u32; TYPES];
        for &(a, b) in small_ranges {
            for &i in order[a as usize..b as usize]
                .iter()
                .filter(|&&i| include(i))
            {
                after[type_of(i)] += 1;
            }
        }
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
            self.kept.clear();
            self.kept.extend(
                order[a as usize..b as usize]
                    .iter()
                    .filter(|&&i| include(i)),
            );
            let pack = core::mem::take(&mut self.kept);
            self.pack(&pack, &mut after, &type_of, &index, &bodies);
            self.kept = pack;
            if let Some(p) = self.packs.last_mut() {
                p.islands = (first as u32, end as u32);
            }
            first = end;
        }
        for t in 0..TYPES {
            let slots = self.slots_mut(t);
            slots.resize(align(slots.len()), PADDING);
        }
        debug_assert!(self.slot_manifold.len() <= self.capacity[CONTACTS]);
        debug_assert!(self.slot_joint.len() <= self.capacity[JOINTS]);
    }

    /// Colours one pack and lays it out; `after[t]` constraints of type `t`
    /// of this pack and the later ones still need room (this pack's are
    /// counted off here).
    fn pack(
        &mut self,
        items: &[u32],
        after: &mut [u32; TYPES],
        type_of: &impl Fn(u32) -> usize,
        index: &impl Fn(u32) -> u32,
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
        let mut count = [[0u32; COLOURS]; TYPES];
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
            count[type_of(m)][colour] += 1;
        }
        let colours_start = self.colour_ranges.len() as u32;
        let overflow_colour = (COLOURS - 1) as u8;
        let mut wide = [[false; COLOURS]; TYPES];
        for c in 0..COLOURS - 1 {
            let mut range = Slots::default();
            for t in 0..TYPES {
                let n = count[t][c];
                let cap = self.capacity[t];
                let slots = if t == CONTACTS {
                    &mut self.slot_manifold
                } else {
                    &mut self.slot_joint
                };
                let start = align(slots.len());
                // room for this colour in whole bundles, then all of this
                // pack and the later ones again, and a last bundle's padding
                let fits = start + align(n as usize) + after[t] as usize + LANES <= cap;
                if n < MIN_COLOUR_ITEMS || !fits {
                    let at = slots.len() as u32;
                    range.set(t, (at, at));
                    continue;
                }
                wide[t][c] = true;
                slots.resize(start, PADDING);
                let colour = c as u8;
                slots.extend(
                    items
                        .iter()
                        .zip(&self.colour_of)
                        .filter(|&(&i, &k)| k == colour && type_of(i) == t)
                        .map(|(&i, _)| index(i)),
                );
                range.set(t, (start as u32, slots.len() as u32));
                // the bundle's other lanes are padding (a wide bundle
                // holds one colour only)
                slots.resize(align(slots.len()), PADDING);
                self.wide += n;
            }
            if !range.is_empty() {
                self.colour_ranges.push(range);
            }
        }
        // The overflow: the last colour and the colours too small or too
        // late for bundles, in island order.
        let mut overflow = Slots::default();
        for t in 0..TYPES {
            let slots = if t == CONTACTS {
                &mut self.slot_manifold
            } else {
                &mut self.slot_joint
            };
            let start = slots.len() as u32;
            slots.extend(
                items
                    .iter()
                    .zip(&self.colour_of)
                    .filter(|&(&i, &k)| {
                        type_of(i) == t && (k == overflow_colour || !wide[t][k as usize])
                    })
                    .map(|(&i, _)| index(i)),
            );
            let end = slots.len() as u32;
            overflow.set(t, (start, end));
            self.scalar += end - start;
            after[t] -= count[t].iter().sum::<u32>();
        }
        self.packs.push(Pack {
            colours: (colours_start, self.colour_ranges.len() as u32),
            overflow,
            islands: (0, 0),
        });
    }

    /// Bundles of contacts.
    pub fn bundles(&self) -> usize {
        self.slot_manifold.len() / LANES
    }

    /// Bundles of joints.
    pub fn joint_bundles(&self) -> usize {
        self.slot_joint.len() / LANES
    }
}
