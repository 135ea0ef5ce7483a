//! SAP's sweep mode: box pruning along one axis, for the steps when the
//! three sorted axes churn.
//!
//! Incremental SAP pays one shift per pair of endpoints whose order
//! changed, on each of three axes, whether or not the boxes come near each
//! other on the other two. That is cheap for a pile at rest and ruinous for
//! rows of identical moving bodies: the chains scene (64 equal chains side
//! by side, swinging in x–y) shifted ~77,000 endpoints per axis per step
//! of ~2,600, every link crossing its 63 twins on x and on y; the broad
//! phase was a quarter of the step. Along the axis where boxes overlap
//! least (z there: each link overlaps only its own chain's), sorting is
//! nearly free and a sweep tests ~20 boxes per box.
//!
//! So, after a full insertion pass that shifted more than
//! [`SWEEP_FROM_SHIFTS`] endpoints per box, SAP counts each axis's
//! overlapping pairs (one walk over its sorted endpoints) and, if the
//! fewest is below the shifts, leaves the axes and sweeps instead (PhysX's
//! ABP does this every step): per update, the members are kept sorted by
//! `(min on the axis, slot)` (an insertion sort from the last order, a radix
//! sort if that shifts too much), and every box that moved or was added
//! this update is paired with every box overlapping it, 16 boxes at a time
//! ([`overlap_mask`]). Pairs of two boxes that did not move keep their
//! answer from before. Found pairs are marked in the pair set, and an
//! unmarked pair with a moved box is dropped: the set is again exactly the
//! overlapping pairs, as after a SAP update. SAP comes back (its axes
//! rebuilt by radix sort) when fewer than [`FULL_SORT_FRACTION`] of the
//! boxes moved, and every [`SWEEP_REVISIT`] updates to measure its shifts
//! again. Every choice is made from counts of the world's boxes (shifts,
//! overlaps, moved boxes), never from timing, and both modes end an update
//! with the same pair set: the mode changes the cost only, never a result.
//!
//! [`FULL_SORT_FRACTION`]: super::sap::FULL_SORT_FRACTION

use super::box_columns::BoxColumns;
use super::pair_manager::pair_key;
use super::{encode, radix_sort_by_key};
use crate::body::Bodies;
use archipelago_simd::{overlap_mask, LANES};

/// Endpoint shifts per box (all three axes together) in one full
/// insertion pass from which SAP considers sweeping. A pass visits six
/// endpoints per box anyway; a sweep costs about that much per box to
/// sort and gather, plus its overlap tests.
pub(crate) const SWEEP_FROM_SHIFTS: u64 = 8;

/// Updates in sweep mode after which SAP rebuilds its axes and measures
/// its shifts again (a scene that calmed down, or whose best axis
/// changed, goes back to SAP within this many steps).
pub(crate) const SWEEP_REVISIT: u32 = 64;

/// Shifts per box past which the sweep's insertion sort gives up and
/// radix sorts (a teleport of everything, or a new axis).
const RESORT_SHIFTS_PER_BOX: usize = 8;

/// The sweep's state: the axis, the members in sorted order, and scratch.
pub(crate) struct Sweep {
    pub axis: usize,
    /// Every box in the structure, sorted by `(min on axis, slot)` as of
    /// the last sweep.
    pub order: Vec<u32>,
    /// Updates since sweeping began.
    pub updates: u32,
    /// Pairs found this sweep (each once, keys).
    pub found: Vec<u64>,
    sort: Vec<u64>,
    sort_tmp: Vec<u64>,
    // the sorted boxes: their flags, and their columns (padded with
    // `LANES` empty boxes for the 16-lane overlap test)
    active: Vec<bool>,
    is_static: Vec<bool>,
    boxes: BoxColumns,
}

impl Sweep {
    pub fn new(max_bodies: usize, max_pairs: usize) -> Self {
        Self {
            axis: 0,
            order: Vec::with_capacity(max_bodies),
            updates: 0,
            found: Vec::with_capacity(max_pairs),
            sort: Vec::with_capacity(max_bodies),
            sort_tmp: Vec::with_capacity(max_bodies),
            active: Vec::with_capacity(max_bodies + LANES),
            is_static: Vec::with_capacity(max_bodies + LANES),
            boxes: BoxColumns::with_capacity(max_bodies),
        }
    }

    /// Sorts `order` by `(min on the axis, slot)` at the current boxes: a
    /// unique key, so insertion and radix sort give the same order.
    fn sort(&mut self, bodies: &Bodies) {
        let min = bodies.aabb_min.slices();
        let column = [min.0, min.1, min.2][self.axis];
        self.sort.clear();
        self.sort.extend(
            self.order
                .iter()
                .map(|&s| ((encode(column[s as usize]) as u64) << 32) | s as u64),
        );
        let budget = RESORT_SHIFTS_PER_BOX * self.sort.len();
        let mut shifts = 0;
        let v = &mut self.sort;
        'insertion: for i in 1..v.len() {
            let e = v[i];
            let mut j = i;
            while j > 0 && v[j - 1] > e {
                v[j] = v[j - 1];
                j -= 1;
                shifts += 1;
            }
            v[j] = e;
            if shifts > budget {
                break 'insertion;
            }
        }
        if shifts > budget {
            radix_sort_by_key(&mut self.sort, &mut self.sort_tmp, |&k| k);
        }
        self.order.clear();
        self.order.extend(self.sort.iter().map(|&k| k as u32));
    }

    /// Copies the sorted boxes into the SoA columns.
    fn gather(&mut self, bodies: &Bodies, active: &[bool], is_static: &[bool]) {
        self.active.clear();
        self.is_static.clear();
        self.boxes.clear();
        for &s in &self.order {
            let s = s as usize;
            self.active.push(active[s]);
            self.is_static.push(is_static[s]);
            self.boxes.push(bodies, s);
        }
        self.boxes.pad();
    }

    /// Sorts, then finds every overlapping pair with at least one `active`
    /// box (not two static ones) into `found`, in sorted order of its first
    /// box. `false` if `found` filled up (pairs beyond it are missing).
    pub fn find(&mut self, bodies: &Bodies, active: &[bool], is_static: &[bool]) -> bool {
        self.sort(bodies);
        self.gather(bodies, active, is_static);
        self.found.clear();
        let n = self.order.len();
        let lanes = self.boxes.lanes();
        let starts = &self.boxes.min[self.axis];
        for i in 0..n {
            let one = self.boxes.aabb(i);
            let end = one.max[self.axis];
            let (active_i, static_i) = (self.active[i], self.is_static[i]);
            // Boxes after `i` start at or after it on the axis: they overlap
            // it there while they start by its end. Padding boxes (past
            // `n`) overlap nothing.
            let mut j = i + 1;
            while j < n && starts[j] <= end {
                let mut m = overlap_mask(&one, &lanes, j);
                while m != 0 {
                    let k = j + m.trailing_zeros() as usize;
                    m &= m - 1;
                    if (active_i || self.active[k]) && !(static_i && self.is_static[k]) {
                        if self.found.len() == self.found.capacity() {
                            return false;
                        }
                        self.found.push(pair_key(self.order[i], self.order[k]));
                    }
                }
                j += LANES;
            }
        }
        true
    }
}

/// The number of pairs of boxes overlapping on one axis, from its sorted
/// endpoints' max flags (a min opens an interval, a max closes one): what
/// a sweep along that axis would test.
pub(crate) fn overlaps_on_axis(max_flags: impl Iterator<Item = bool>) -> u64 {
    let (mut open, mut pairs) = (0u64, 0u64);
    for is_max in max_flags {
        if is_max {
            open = open.saturating_sub(1);
        } else {
            pairs += open;
            open += 1;
        }
    }
    pairs
}
