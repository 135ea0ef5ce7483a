//! Incremental sweep and prune (PhysX's SAP, Terdiman's design).
//!
//! Three axes, each an array of endpoints sorted by key, with a sentinel at
//! each end. A key is the order-preserving integer of the coordinate with
//! one extra low bit, 0 for a min and 1 for a max, so ties sort min before
//! max (touching boxes overlap). Each proxy remembers the positions of its
//! six endpoints.
//!
//! Per update:
//! - removals: flagged proxies' endpoints are compacted out in place, and
//!   their pairs dropped;
//! - insertions: the new endpoints are radix sorted and merged into each axis
//!   in one pass; then new boxes are box-pruned against each other and
//!   against the old boxes (both sorted by min x), and overlapping pairs are
//!   added;
//! - moves: each moved endpoint is insertion-sorted to its new place. When
//!   few boxes moved (under [`FULL_SORT_FRACTION`]) only their endpoints are
//!   visited; otherwise every axis gets one insertion-sort pass. The three
//!   axes are sorted in parallel, one job each: an axis job touches only its
//!   own endpoints and positions, and records every pair whose min and max
//!   endpoints swapped (an overlap on that axis began or ended) as a
//!   candidate. Insertion sort swaps every inverted pair exactly once, so
//!   every pair whose overlap changed is among the candidates.
//! - candidates are then checked in parallel chunks: overlap on all three
//!   axes now (sorted positions) against overlap at the last update (the
//!   boxes' keys then, kept per axis and slot). Only the pairs whose answer
//!   differs touch the pair set, serially and in candidate order. The pair
//!   set after an update is therefore exactly the set of overlapping boxes,
//!   whatever order the axes finished in, and `created` / `deleted` count
//!   net changes.
//!
//! When a full pass shifts far more endpoints than the boxes overlap on
//! some axis (rows of identical moving bodies), SAP sweeps along that axis
//! instead until the scene calms down: see [`super::sweep`]. The pair set
//! after an update is the same in either mode.
//!
//! Persistent overlaps live in a [`PairManager`]; [`Sap::report`] filters
//! them by the bodies' current states and layers.

use super::pair_manager::{pair_key, PairManager};
use super::sweep::{overlaps_on_axis, Sweep, SWEEP_FROM_SHIFTS, SWEEP_REVISIT};
use super::{
    max_key, min_key, radix_sort_by_key, BodyPair, BroadPhase, ChangeQueue, KeyReport, LayerFilter,
    PairSearch,
};
use crate::body::{Bodies, MotionType};
use crate::disjoint::Disjoint;
use crate::jobs::StepCtx;
use archipelago_layout::Vec3Column;

/// PhysX switches from per-box updates to a full insertion sort when more
/// than this fraction of the boxes moved.
pub(crate) const FULL_SORT_FRACTION: f32 = 0.2;

/// Candidates checked per job. A check is three overlap tests and one hash
/// lookup (~50 ns), so a job is ~50 µs: long enough to amortise the task.
const CHECK_CHUNK: usize = 1024;

/// Moved boxes whose keys are stored per job after a sort.
const KEYS_PER_JOB: usize = 1024;

/// Marks a candidate whose pair must be added or removed. Slots are below
/// 2^31 (`Capacities::validate`), so bit 63 of a pair key is always free.
const CHANGED: u64 = 1 << 63;

const NONE: u32 = u32::MAX;
const SENTINEL_OWNER: u32 = u32::MAX;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Endpoint {
    key: u64,
    owner: u32,
}

impl Endpoint {
    #[inline]
    fn is_max(self) -> bool {
        self.key & 1 == 1
    }
}

/// One axis: its sorted endpoints, each slot's endpoint positions on it, and
/// the candidate pairs its last sort found. Axes share nothing mutable, so
/// the three sort in parallel.
struct Axis {
    endpoints: Vec<Endpoint>,
    /// Per slot: positions of its min and max endpoints.
    pos: Vec<[u32; 2]>,
    /// Keys of pairs whose min and max endpoints swapped in the last sort.
    candidates: Vec<u64>,
    /// The candidate list was full: pairs must be rebuilt from scratch.
    candidates_overflowed: bool,
    /// Endpoint shifts of the last full insertion pass (0 after a pass
    /// over few boxes).
    shifts: u64,
}

impl Axis {
    fn new(max_bodies: usize, max_candidates: usize) -> Self {
        let mut endpoints = Vec::with_capacity(2 * max_bodies + 2);
        endpoints.push(Endpoint {
            key: 0,
            owner: SENTINEL_OWNER,
        });
        endpoints.push(Endpoint {
            key: u64::MAX,
            owner: SENTINEL_OWNER,
        });
        Self {
            endpoints,
            pos: vec![[NONE; 2]; max_bodies],
            candidates: Vec::with_capacity(max_candidates),
            candidates_overflowed: false,
            shifts: 0,
        }
    }

    #[inline]
    fn set_pos(&mut self, e: Endpoint, i: usize) {
        if e.owner != SENTINEL_OWNER {
            self.pos[e.owner as usize][e.is_max() as usize] = i as u32;
        }
    }

    /// Re-reads every endpoint's position (after a compaction or merge).
    fn reindex(&mut self) {
        for i in 1..self.endpoints.len() - 1 {
            let e = self.endpoints[i];
            self.pos[e.owner as usize][e.is_max() as usize] = i as u32;
        }
    }

    /// `e` moved left past `f`: see [`record_crossing`].
    #[inline]
    fn swapped(&mut self, e: Endpoint, f: Endpoint, is_static: &[bool]) {
        record_crossing(
            &mut self.candidates,
            &mut self.candidates_overflowed,
            e,
            f,
            is_static,
        );
    }

    /// Moves the endpoint at `i` left/right to its sorted place.
    fn bubble(&mut self, mut i: usize, is_static: &[bool]) {
        let e = self.endpoints[i];
        while self.endpoints[i - 1].key > e.key {
            let f = self.endpoints[i - 1];
            self.endpoints[i] = f;
            self.set_pos(f, i);
            self.endpoints[i - 1] = e;
            self.set_pos(e, i - 1);
            i -= 1;
            self.swapped(e, f, is_static);
        }
        while self.endpoints[i + 1].key < e.key {
            let f = self.endpoints[i + 1];
            self.endpoints[i] = f;
            self.set_pos(f, i);
            self.endpoints[i + 1] = e;
            self.set_pos(e, i + 1);
            i += 1;
            self.swapped(f, e, is_static);
        }
    }

    /// One insertion-sort pass over the whole axis, recording every
    /// min/max crossing of two boxes as [`Axis::swapped`] does. The
    /// endpoint being placed stays in a register while the larger ones
    /// shift right, and is written (with its position) once where it
    /// lands: scenes of identical moving bodies (rows of equal chains,
    /// ragdoll grids) cross whole groups of tied endpoints every step, and
    /// a swap per crossing doubled the stores of a shift. The min sentinel
    /// (key 0) stops every walk, so a shifted endpoint is never a sentinel.
    /// Positions are written once at the end, from the lowest endpoint
    /// that landed: an endpoint crossed by a group shifts once per member,
    /// so a position store per shift was half a shift's stores (the chains
    /// scene shifts ~77,000 endpoints an axis per step, of ~2,600; writing
    /// positions at the end took its sort from 58.3M to 41.2M instructions
    /// in 20 steps).
    fn insertion_pass(&mut self, is_static: &[bool]) {
        let Axis {
            endpoints,
            candidates,
            candidates_overflowed,
            ..
        } = self;
        let n = endpoints.len();
        let mut lowest = n - 1;
        let mut shifts = 0u64;
        for i in 2..n - 1 {
            let e = endpoints[i];
            if endpoints[i - 1].key <= e.key {
                continue;
            }
            let mut j = i;
            loop {
                // SAFETY: 1 <= j <= i < n. The min sentinel at 0 has key 0,
                // which no u64 key is below, so the walk stops at j = 1 at
                // the latest. Without the two bounds checks the chains
                // scene's sort is 70.2M -> 59.2M instructions (callgrind,
                // 20 steps), its whole step 3% fewer.
                let f = unsafe { *endpoints.get_unchecked(j - 1) };
                if f.key <= e.key {
                    break;
                }
                // SAFETY: j <= i < n, as above.
                unsafe { *endpoints.get_unchecked_mut(j) = f };
                j -= 1;
                shifts += 1;
                record_crossing(candidates, candidates_overflowed, e, f, is_static);
            }
            endpoints[j] = e;
            lowest = lowest.min(j);
        }
        self.shifts = shifts;
        for i in lowest..n - 1 {
            let e = self.endpoints[i];
            self.pos[e.owner as usize][e.is_max() as usize] = i as u32;
        }
    }

    /// Writes the moved boxes' new keys on axis `axis` and restores the
    /// order, recording candidates.
    fn sort_moved(
        &mut self,
        axis: usize,
        bodies: &Bodies,
        moved: &[u32],
        few: bool,
        is_static: &[bool],
    ) {
        self.candidates.clear();
        self.candidates_overflowed = false;
        self.shifts = 0;
        if few {
            for &s in moved {
                let (lo, hi) = Sap::keys(bodies, s as usize, axis);
                let [pmin, pmax] = self.pos[s as usize];
                let old_lo = self.endpoints[pmin as usize].key;
                self.endpoints[pmin as usize].key = lo;
                self.endpoints[pmax as usize].key = hi;
                // Growing to the left: min first; to the right: max first,
                // so a box's own endpoints never cross.
                if lo < old_lo {
                    self.bubble(pmin as usize, is_static);
                    self.bubble(self.pos[s as usize][1] as usize, is_static);
                } else {
                    self.bubble(pmax as usize, is_static);
                    self.bubble(self.pos[s as usize][0] as usize, is_static);
                }
            }
        } else {
            for &s in moved {
                let (lo, hi) = Sap::keys(bodies, s as usize, axis);
                let [pmin, pmax] = self.pos[s as usize];
                self.endpoints[pmin as usize].key = lo;
                self.endpoints[pmax as usize].key = hi;
            }
            self.insertion_pass(is_static);
        }
    }
}

/// `e` moved left past `f` on an axis: if one is a min and the other a max
/// of two different boxes (not both static), their overlap on the axis
/// began or ended, and the pair is a candidate; past the list's capacity
/// the axis is flagged overflowed instead (the pairs are then rebuilt).
#[inline]
fn record_crossing(
    candidates: &mut Vec<u64>,
    overflowed: &mut bool,
    e: Endpoint,
    f: Endpoint,
    is_static: &[bool],
) {
    if e.is_max() == f.is_max() || e.owner == f.owner || f.owner == SENTINEL_OWNER {
        return;
    }
    if is_static[e.owner as usize] && is_static[f.owner as usize] {
        return;
    }
    if candidates.len() < candidates.capacity() {
        candidates.push(pair_key(e.owner, f.owner));
    } else {
        *overflowed = true;
    }
}

/// Overlap of `a` and `b` on all three axes by their keys at the last
/// update: exactly whether the pair set held the pair before this update
/// (the set is the overlap set after every update; static pairs and pairs
/// with a box added or removed never become candidates).
#[inline]
fn overlapped(keys: &[Vec<[u64; 2]>; 3], a: usize, b: usize) -> bool {
    keys.iter().all(|k| {
        let (ka, kb) = (k[a], k[b]);
        ka[0] < kb[1] && kb[0] < ka[1]
    })
}

/// Overlap of proxies `a` and `b` on one axis, from endpoint positions.
#[inline]
fn overlap_on(axis: &Axis, a: usize, b: usize) -> bool {
    let (pa, pb) = (axis.pos[a], axis.pos[b]);
    pa[0] < pb[1] && pb[0] < pa[1]
}

#[inline]
fn overlap(axes: &[Axis; 3], a: usize, b: usize) -> bool {
    axes.iter().all(|ax| overlap_on(ax, a, b))
}

pub(crate) struct Sap {
    axes: [Axis; 3],
    /// Per axis and slot: the box's [min, max] keys as of the last update
    /// (read by the other axes' jobs while the axes sort).
    keys: [Vec<[u64; 2]>; 3],
    /// Proxies in the structure.
    count: usize,
    in_sap: Vec<bool>,
    is_static: Vec<bool>,
    queue: ChangeQueue,
    removing: Vec<bool>,
    pairs: PairManager,
    reporter: KeyReport,
    /// Set when the pair set overflowed: pairs are rebuilt from scratch.
    resync: bool,
    /// All three axes' candidates of the last move, `CHANGED` set on those
    /// whose pair must be added or removed.
    candidates: Vec<u64>,
    // preallocated scratch
    merge: Vec<Endpoint>,
    new_eps: Vec<Endpoint>,
    radix_tmp: Vec<Endpoint>,
    by_min_x: Vec<u32>,
    new_by_min_x: Vec<u32>,
    overflowed: u32,
    /// Box pruning along one axis while the axes churn (see [`super::sweep`]).
    sweep: Sweep,
    /// The sweep holds the pairs: the axes and `keys` are stale until it
    /// hands back (and rebuilds them).
    pub sweeping: bool,
    /// Per slot: moved or added this update (the sweep's scratch).
    active: Vec<bool>,
    /// [`SWEEP_FROM_SHIFTS`] and [`SWEEP_REVISIT`] (tests set others to
    /// switch small worlds).
    pub sweep_from_shifts: u64,
    pub sweep_revisit: u32,
    /// Times SAP started sweeping.
    pub sweeps_started: u32,
    /// Times the pairs were rebuilt from scratch (tests check the path).
    #[cfg(test)]
    pub rebuilds: u32,
}

impl Sap {
    pub fn new(max_bodies: usize, max_pairs: usize) -> Self {
        // Each axis may record as many candidates as the pair set holds;
        // beyond that (a teleport of everything) rebuilding is cheaper.
        let axis = || Axis::new(max_bodies, max_pairs);
        Self {
            axes: [axis(), axis(), axis()],
            keys: [(); 3].map(|_| vec![[0; 2]; max_bodies]),
            count: 0,
            in_sap: vec![false; max_bodies],
            is_static: vec![false; max_bodies],
            queue: ChangeQueue::new(max_bodies),
            removing: vec![false; max_bodies],
            pairs: PairManager::new(max_pairs),
            reporter: KeyReport::new(max_pairs),
            resync: false,
            candidates: Vec::with_capacity(3 * max_pairs),
            merge: Vec::with_capacity(2 * max_bodies + 2),
            new_eps: Vec::with_capacity(2 * max_bodies),
            radix_tmp: Vec::with_capacity(2 * max_bodies),
            by_min_x: Vec::with_capacity(max_bodies),
            new_by_min_x: Vec::with_capacity(max_bodies),
            overflowed: 0,
            sweep: Sweep::new(max_bodies, max_pairs),
            sweeping: false,
            active: vec![false; max_bodies],
            sweep_from_shifts: SWEEP_FROM_SHIFTS,
            sweep_revisit: SWEEP_REVISIT,
            sweeps_started: 0,
            #[cfg(test)]
            rebuilds: 0,
        }
    }

    fn keys(bodies: &Bodies, slot: usize, axis: usize) -> (u64, u64) {
        let component = |c: &Vec3Column| match axis {
            0 => c.x[slot],
            1 => c.y[slot],
            _ => c.z[slot],
        };
        (
            min_key(component(&bodies.aabb_min)),
            max_key(component(&bodies.aabb_max)),
        )
    }

    fn add_pair(&mut self, a: u32, b: u32) {
        if a == b || (self.is_static[a as usize] && self.is_static[b as usize]) {
            return;
        }
        if self.pairs.add(a, b).is_err() {
            // Never silently lose a persistent pair: rebuild them all next
            // update (counted and reported as dropped pairs meanwhile).
            self.overflowed += 1;
            self.resync = true;
        }
    }

    fn apply_removals(&mut self) {
        if self.queue.remove.is_empty() {
            return;
        }
        for k in 0..self.queue.remove.len() {
            let s = self.queue.remove[k] as usize;
            self.removing[s] = true;
        }
        let removing = &self.removing;
        if self.sweeping {
            // the axes are stale while sweeping: only the order holds boxes
            self.sweep.order.retain(|&s| !removing[s as usize]);
        } else {
            for axis in &mut self.axes {
                axis.endpoints
                    .retain(|e| e.owner == SENTINEL_OWNER || !removing[e.owner as usize]);
                axis.reindex();
            }
        }
        let removing = &self.removing;
        self.pairs
            .retain(|p| !removing[p.a as usize] && !removing[p.b as usize]);
        for k in 0..self.queue.remove.len() {
            let s = self.queue.remove[k] as usize;
            self.removing[s] = false;
            self.in_sap[s] = false;
            for axis in &mut self.axes {
                axis.pos[s] = [NONE; 2];
            }
            self.count -= 1;
        }
        self.queue.clear_removed();
    }

    fn apply_insertions(&mut self, bodies: &Bodies) {
        if self.queue.add.is_empty() {
            return;
        }
        for k in 0..self.queue.add.len() {
            let s = self.queue.add[k] as usize;
            self.in_sap[s] = true;
            self.is_static[s] = bodies.motion(s) == MotionType::Static;
            for axis in 0..3 {
                let (lo, hi) = Self::keys(bodies, s, axis);
                self.keys[axis][s] = [lo, hi];
            }
        }
        for (k, axis) in self.axes.iter_mut().enumerate() {
            // new endpoints, radix sorted, merged into the axis in one pass
            self.new_eps.clear();
            for &s in &self.queue.add {
                let (lo, hi) = Self::keys(bodies, s as usize, k);
                self.new_eps.push(Endpoint { key: lo, owner: s });
                self.new_eps.push(Endpoint { key: hi, owner: s });
            }
            radix_sort_by_key(&mut self.new_eps, &mut self.radix_tmp, |e| e.key);
            let old = &axis.endpoints;
            self.merge.clear();
            let (mut i, mut j) = (0, 0);
            // old[0] is the min sentinel, old[last] the max sentinel
            while i < old.len() || j < self.new_eps.len() {
                let take_new =
                    j < self.new_eps.len() && (i >= old.len() || self.new_eps[j].key < old[i].key);
                if take_new {
                    self.merge.push(self.new_eps[j]);
                    j += 1;
                } else {
                    self.merge.push(old[i]);
                    i += 1;
                }
            }
            core::mem::swap(&mut axis.endpoints, &mut self.merge);
            axis.reindex();
        }
        self.count += self.queue.add.len();
        let mut is_new = core::mem::take(&mut self.removing); // reuse as a flag array
        for &s in &self.queue.add {
            is_new[s as usize] = true;
        }
        self.prune_new(&is_new);
        for &s in &self.queue.add {
            is_new[s as usize] = false;
        }
        self.removing = is_new;
        self.queue.clear_added();
    }

    /// Box pruning on x for every pair with at least one box flagged new:
    /// new boxes against every box starting within their x extent after
    /// them, and old boxes against the new boxes starting within theirs (a
    /// pointer walk over the new boxes, both lists in min-x order). Each
    /// x-overlapping pair is found once and confirmed on y and z; old boxes
    /// are never swept against each other.
    fn prune_new(&mut self, is_new: &[bool]) {
        self.by_min_x.clear();
        self.new_by_min_x.clear();
        for e in &self.axes[0].endpoints {
            if e.owner != SENTINEL_OWNER && !e.is_max() {
                self.by_min_x.push(e.owner);
                if is_new[e.owner as usize] {
                    self.new_by_min_x.push(e.owner);
                }
            }
        }
        let by_min_x = core::mem::take(&mut self.by_min_x);
        let new_by_min_x = core::mem::take(&mut self.new_by_min_x);
        let mut next_new = 0;
        for (k, &a) in by_min_x.iter().enumerate() {
            let [a_min, a_max] = self.axes[0].pos[a as usize];
            let candidates = if is_new[a as usize] {
                &by_min_x[k + 1..]
            } else {
                while next_new < new_by_min_x.len()
                    && self.axes[0].pos[new_by_min_x[next_new] as usize][0] < a_min
                {
                    next_new += 1;
                }
                &new_by_min_x[next_new..]
            };
            for &b in candidates {
                if self.axes[0].pos[b as usize][0] >= a_max {
                    break;
                }
                if overlap_on(&self.axes[1], a as usize, b as usize)
                    && overlap_on(&self.axes[2], a as usize, b as usize)
                {
                    self.add_pair(a, b);
                }
            }
        }
        self.by_min_x = by_min_x;
        self.new_by_min_x = new_by_min_x;
    }

    /// Rebuilds every pair from the sorted axes (after an overflow): every
    /// box counts as new.
    fn rebuild_pairs(&mut self) {
        #[cfg(test)]
        {
            self.rebuilds += 1;
        }
        self.pairs.clear();
        self.resync = false;
        let mut all = core::mem::take(&mut self.removing);
        all.fill(true);
        self.prune_new(&all);
        all.fill(false);
        self.removing = all;
    }

    /// Sorts the moved boxes' endpoints (one job per axis), then brings the
    /// pair set up to date from the candidates.
    fn apply_moves(&mut self, ctx: &StepCtx, bodies: &Bodies) {
        if self.queue.moved.is_empty() {
            return;
        }
        let few = (self.queue.moved.len() as f32) < FULL_SORT_FRACTION * self.count as f32;
        let moved = &self.queue.moved;
        let is_static = &self.is_static;
        ctx.par_chunks_mut("sort axis", &mut self.axes, 1, |k, axis| {
            axis[0].sort_moved(k, bodies, moved, few, is_static);
            0
        });
        if !self.axes.iter().any(|a| a.candidates_overflowed) {
            ctx.serial("gather candidates", || {
                self.candidates.clear();
                for axis in &self.axes {
                    self.candidates.extend_from_slice(&axis.candidates);
                }
            });
            // Before (last update's keys) against after (sorted positions);
            // no hash lookups, so a check is a dozen loads.
            let (axes, keys) = (&self.axes, &self.keys);
            ctx.par_chunks_mut(
                "check candidates",
                &mut self.candidates,
                CHECK_CHUNK,
                |_, chunk| {
                    for key in chunk {
                        let (a, b) = ((*key >> 32) as usize, *key as u32 as usize);
                        if overlap(axes, a, b) != overlapped(keys, a, b) {
                            *key |= CHANGED;
                        }
                    }
                    0
                },
            );
        }
        {
            let [kx, ky, kz] = &mut self.keys;
            let views = [Disjoint::new(kx), Disjoint::new(ky), Disjoint::new(kz)];
            ctx.par_for("store keys", moved.len(), KEYS_PER_JOB, |range| {
                for &s in &moved[range] {
                    for (axis, view) in views.iter().enumerate() {
                        let (lo, hi) = Self::keys(bodies, s as usize, axis);
                        // SAFETY: moved slots are listed once each.
                        unsafe { view.set(s as usize, [lo, hi]) };
                    }
                }
            });
        }
        self.queue.clear_moved();
        if self.axes.iter().any(|a| a.candidates_overflowed) {
            self.resync = true;
            return;
        }
        ctx.serial("apply candidates", || {
            for k in 0..self.candidates.len() {
                let key = self.candidates[k];
                if key & CHANGED == 0 {
                    continue;
                }
                // A pair found on two axes is flagged twice; adding or
                // removing it again is a no-op, so the state decides.
                let (a, b) = ((key >> 32) as u32 & !(1 << 31), key as u32);
                if overlap(&self.axes, a as usize, b as usize) {
                    self.add_pair(a, b);
                } else {
                    self.pairs.remove(a, b);
                }
            }
        });
    }
}

/// Sweep mode (see [`super::sweep`]).
impl Sap {
    /// After a full insertion pass: starts sweeping along the axis with
    /// the fewest overlapping pairs if the pass shifted more than
    /// `sweep_from_shifts` endpoints per box and more than that axis has
    /// overlaps. The pair set is exact here, so the sweep starts from it.
    fn consider_sweeping(&mut self) {
        let shifts: u64 = self.axes.iter().map(|a| a.shifts).sum();
        for axis in &mut self.axes {
            axis.shifts = 0; // each pass is weighed once
        }
        if shifts == 0 || shifts <= self.sweep_from_shifts.saturating_mul(self.count as u64) {
            return;
        }
        let mut best = (0, u64::MAX);
        for (k, axis) in self.axes.iter().enumerate() {
            let inner = &axis.endpoints[1..axis.endpoints.len() - 1];
            let overlaps = overlaps_on_axis(inner.iter().map(|e| e.is_max()));
            if overlaps < best.1 {
                best = (k, overlaps);
            }
        }
        if best.1 >= shifts {
            return;
        }
        let sweep = &mut self.sweep;
        sweep.axis = best.0;
        sweep.order.clear();
        sweep.order.extend(
            self.axes[best.0]
                .endpoints
                .iter()
                .filter(|e| e.owner != SENTINEL_OWNER && !e.is_max())
                .map(|e| e.owner),
        );
        sweep.updates = 0;
        self.sweeping = true;
        self.sweeps_started += 1;
    }

    /// One update in sweep mode: removals, insertions and moves, then the
    /// pairs of every added or moved box found again.
    fn sweep_update(&mut self, bodies: &Bodies) {
        self.apply_removals();
        // after an overflow, every pair is found again
        let everything = self.resync;
        if everything {
            self.pairs.clear();
            self.resync = false;
        }
        for k in 0..self.queue.add.len() {
            let s = self.queue.add[k];
            self.in_sap[s as usize] = true;
            self.is_static[s as usize] = bodies.motion(s as usize) == MotionType::Static;
            self.sweep.order.push(s);
        }
        self.count += self.queue.add.len();
        let mut moving = 0;
        for &s in self.queue.add.iter().chain(&self.queue.moved) {
            let a = &mut self.active[s as usize];
            moving += !*a as usize;
            *a = true;
        }
        if everything {
            for &s in &self.sweep.order {
                self.active[s as usize] = true;
            }
            moving = self.count;
        }
        if moving > 0 {
            let complete = self.sweep.find(bodies, &self.active, &self.is_static);
            for k in 0..self.sweep.found.len() {
                let key = self.sweep.found[k];
                if self.pairs.mark((key >> 32) as u32, key as u32).is_err() {
                    // counted as dropped; every pair is found again next
                    self.overflowed += 1;
                    self.resync = true;
                }
            }
            if !complete {
                self.overflowed += 1;
                self.resync = true;
            }
            let active = &self.active;
            self.pairs
                .drop_unmarked(|a, b| active[a as usize] || active[b as usize]);
        }
        if everything {
            for &s in &self.sweep.order {
                self.active[s as usize] = false;
            }
        }
        for &s in self.queue.add.iter().chain(&self.queue.moved) {
            self.active[s as usize] = false;
        }
        self.queue.clear_added();
        self.queue.clear_moved();
        self.sweep.updates += 1;
        let few = (moving as f32) < FULL_SORT_FRACTION * self.count as f32;
        if few || self.sweep.updates >= self.sweep_revisit {
            self.stop_sweeping(bodies);
        }
    }

    /// Back to SAP: every axis radix sorted from the current boxes (those
    /// the pairs were found with) and their keys stored.
    fn stop_sweeping(&mut self, bodies: &Bodies) {
        for (k, axis) in self.axes.iter_mut().enumerate() {
            self.new_eps.clear();
            for &s in &self.sweep.order {
                let (lo, hi) = Self::keys(bodies, s as usize, k);
                self.keys[k][s as usize] = [lo, hi];
                self.new_eps.push(Endpoint { key: lo, owner: s });
                self.new_eps.push(Endpoint { key: hi, owner: s });
            }
            radix_sort_by_key(&mut self.new_eps, &mut self.radix_tmp, |e| e.key);
            let (first, last) = (axis.endpoints[0], axis.endpoints[axis.endpoints.len() - 1]);
            axis.endpoints.clear();
            axis.endpoints.push(first);
            axis.endpoints.extend_from_slice(&self.new_eps);
            axis.endpoints.push(last);
            axis.reindex();
            axis.shifts = 0;
        }
        self.sweeping = false;
    }
}

impl BroadPhase for Sap {
    fn add(&mut self, slot: u32) {
        self.queue.queue_add(slot);
    }

    fn remove(&mut self, slot: u32) {
        let present = self.in_sap[slot as usize];
        self.queue.queue_remove(slot, present);
    }

    fn moved(&mut self, slot: u32) {
        let present = self.in_sap[slot as usize];
        self.queue.queue_moved(slot, present);
    }

    fn has_pending(&self) -> bool {
        !self.queue.is_empty()
    }

    fn update(&mut self, ctx: &StepCtx, bodies: &Bodies) -> PairSearch {
        self.pairs.begin_step();
        self.overflowed = 0;
        if self.sweeping {
            ctx.serial("sap sweep", || self.sweep_update(bodies));
        } else {
            if !self.queue.remove.is_empty() {
                ctx.serial("sap removals", || self.apply_removals());
            }
            self.apply_moves(ctx, bodies);
            if !self.queue.add.is_empty() || self.resync {
                ctx.serial("sap insertions", || {
                    self.apply_insertions(bodies);
                    if self.resync {
                        self.rebuild_pairs();
                    }
                });
            }
            if !self.resync {
                self.consider_sweeping();
            }
        }
        PairSearch {
            created: self.pairs.created,
            deleted: self.pairs.deleted,
            dropped: self.overflowed,
            ..PairSearch::default()
        }
    }

    fn report(
        &mut self,
        ctx: &StepCtx,
        bodies: &Bodies,
        filter: &LayerFilter,
        out: &mut Vec<BodyPair>,
        max_pairs: usize,
    ) -> PairSearch {
        self.reporter
            .report(ctx, &self.pairs.pairs, bodies, filter, out, max_pairs)
    }
}
