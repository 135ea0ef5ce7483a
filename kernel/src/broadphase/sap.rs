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
//! - moves: each moved endpoint is insertion-sorted to its new place. A min
//!   passing a max (or a max passing a min) to the left may start an overlap,
//!   confirmed by testing the other two axes; passing to the right ends one.
//!   When few boxes moved (under [`FULL_SORT_FRACTION`]) only their endpoints
//!   are visited; otherwise every axis gets one insertion-sort pass.
//!
//! Persistent overlaps live in a [`PairManager`]; [`Sap::report`] filters
//! them by the bodies' current states and layers.

use super::pair_manager::PairManager;
use super::{
    max_key, min_key, radix_sort_by_key, BodyPair, BroadPhase, ChangeQueue, KeyReport, LayerFilter,
    PairSearch,
};
use crate::body::{Bodies, MotionType};
use crate::jobs::StepCtx;

/// PhysX switches from per-box updates to a full insertion sort when more
/// than this fraction of the boxes moved.
pub(crate) const FULL_SORT_FRACTION: f32 = 0.2;

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

pub(crate) struct Sap {
    axes: [Vec<Endpoint>; 3],
    /// Per slot and axis: positions of its min and max endpoints.
    pos: Vec<[[u32; 2]; 3]>,
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
    // preallocated scratch
    merge: Vec<Endpoint>,
    new_eps: Vec<Endpoint>,
    radix_tmp: Vec<Endpoint>,
    by_min_x: Vec<u32>,
    new_by_min_x: Vec<u32>,
    overflowed: u32,
}

impl Sap {
    pub fn new(max_bodies: usize, max_pairs: usize) -> Self {
        let axis = || {
            let mut v = Vec::with_capacity(2 * max_bodies + 2);
            v.push(Endpoint {
                key: 0,
                owner: SENTINEL_OWNER,
            });
            v.push(Endpoint {
                key: u64::MAX,
                owner: SENTINEL_OWNER,
            });
            v
        };
        Self {
            axes: [axis(), axis(), axis()],
            pos: vec![[[NONE; 2]; 3]; max_bodies],
            count: 0,
            in_sap: vec![false; max_bodies],
            is_static: vec![false; max_bodies],
            queue: ChangeQueue::new(max_bodies),
            removing: vec![false; max_bodies],
            pairs: PairManager::new(max_pairs),
            reporter: KeyReport::new(max_pairs),
            resync: false,
            merge: Vec::with_capacity(2 * max_bodies + 2),
            new_eps: Vec::with_capacity(2 * max_bodies),
            radix_tmp: Vec::with_capacity(2 * max_bodies),
            by_min_x: Vec::with_capacity(max_bodies),
            new_by_min_x: Vec::with_capacity(max_bodies),
            overflowed: 0,
        }
    }

    fn keys(bodies: &Bodies, slot: usize, axis: usize) -> (u64, u64) {
        let lo = bodies.aabb_min.get(slot)[axis];
        let hi = bodies.aabb_max.get(slot)[axis];
        (min_key(lo), max_key(hi))
    }

    /// Overlap of proxies `a` and `b` on `axis`, from endpoint positions.
    #[inline]
    fn overlap_on(&self, a: usize, b: usize, axis: usize) -> bool {
        let (pa, pb) = (self.pos[a][axis], self.pos[b][axis]);
        pa[0] < pb[1] && pb[0] < pa[1]
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

    /// Handles `e` (moving left) passing `f`: a min passing a max may start
    /// an overlap, a max passing a min ends one.
    #[inline]
    fn swap_left(&mut self, e: Endpoint, f: Endpoint, axis: usize) {
        if e.owner == f.owner || f.owner == SENTINEL_OWNER {
            return;
        }
        if !e.is_max() && f.is_max() {
            let (a, b) = (e.owner as usize, f.owner as usize);
            let (o1, o2) = ((axis + 1) % 3, (axis + 2) % 3);
            if self.overlap_on(a, b, o1) && self.overlap_on(a, b, o2) {
                self.add_pair(e.owner, f.owner);
            }
        } else if e.is_max() && !f.is_max() {
            self.pairs.remove(e.owner, f.owner);
        }
    }

    /// Moves the endpoint at `i` on `axis` left/right to its sorted place.
    fn bubble(&mut self, axis: usize, mut i: usize) {
        let e = self.axes[axis][i];
        // left
        while self.axes[axis][i - 1].key > e.key {
            let f = self.axes[axis][i - 1];
            self.axes[axis][i] = f;
            self.set_pos(f, axis, i);
            self.axes[axis][i - 1] = e;
            self.set_pos(e, axis, i - 1);
            i -= 1;
            self.swap_left(e, f, axis);
        }
        // right: `f` moving left past `e` is the same event seen from f
        while self.axes[axis][i + 1].key < e.key {
            let f = self.axes[axis][i + 1];
            self.axes[axis][i] = f;
            self.set_pos(f, axis, i);
            self.axes[axis][i + 1] = e;
            self.set_pos(e, axis, i + 1);
            i += 1;
            self.swap_left(f, e, axis);
        }
    }

    #[inline]
    fn set_pos(&mut self, e: Endpoint, axis: usize, i: usize) {
        if e.owner != SENTINEL_OWNER {
            self.pos[e.owner as usize][axis][e.is_max() as usize] = i as u32;
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
        for axis in 0..3 {
            let removing = &self.removing;
            self.axes[axis].retain(|e| e.owner == SENTINEL_OWNER || !removing[e.owner as usize]);
            for i in 1..self.axes[axis].len() - 1 {
                let e = self.axes[axis][i];
                self.pos[e.owner as usize][axis][e.is_max() as usize] = i as u32;
            }
        }
        let removing = &self.removing;
        self.pairs
            .retain(|p| !removing[p.a as usize] && !removing[p.b as usize]);
        for k in 0..self.queue.remove.len() {
            let s = self.queue.remove[k] as usize;
            self.removing[s] = false;
            self.in_sap[s] = false;
            self.pos[s] = [[NONE; 2]; 3];
            self.count -= 1;
        }
        self.queue.remove.clear();
    }

    fn apply_insertions(&mut self, bodies: &Bodies) {
        if self.queue.add.is_empty() {
            return;
        }
        for k in 0..self.queue.add.len() {
            let s = self.queue.add[k] as usize;
            self.in_sap[s] = true;
            self.is_static[s] = bodies.motion(s) == MotionType::Static;
        }
        for axis in 0..3 {
            // new endpoints, radix sorted, merged into the axis in one pass
            self.new_eps.clear();
            for &s in &self.queue.add {
                let (lo, hi) = Self::keys(bodies, s as usize, axis);
                self.new_eps.push(Endpoint { key: lo, owner: s });
                self.new_eps.push(Endpoint { key: hi, owner: s });
            }
            radix_sort_by_key(&mut self.new_eps, &mut self.radix_tmp, |e| e.key);
            let old = &self.axes[axis];
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
            core::mem::swap(&mut self.axes[axis], &mut self.merge);
            for i in 1..self.axes[axis].len() - 1 {
                let e = self.axes[axis][i];
                self.pos[e.owner as usize][axis][e.is_max() as usize] = i as u32;
            }
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
        self.queue.add.clear();
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
        for e in &self.axes[0] {
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
            let [a_min, a_max] = self.pos[a as usize][0];
            let candidates = if is_new[a as usize] {
                &by_min_x[k + 1..]
            } else {
                while next_new < new_by_min_x.len()
                    && self.pos[new_by_min_x[next_new] as usize][0][0] < a_min
                {
                    next_new += 1;
                }
                &new_by_min_x[next_new..]
            };
            for &b in candidates {
                if self.pos[b as usize][0][0] >= a_max {
                    break;
                }
                if self.overlap_on(a as usize, b as usize, 1)
                    && self.overlap_on(a as usize, b as usize, 2)
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
        self.pairs.clear();
        self.resync = false;
        let mut all = core::mem::take(&mut self.removing);
        all.fill(true);
        self.prune_new(&all);
        all.fill(false);
        self.removing = all;
    }

    fn apply_moves(&mut self, bodies: &Bodies) {
        if self.queue.moved.is_empty() {
            return;
        }
        let few = (self.queue.moved.len() as f32) < FULL_SORT_FRACTION * self.count as f32;
        for axis in 0..3 {
            if few {
                for k in 0..self.queue.moved.len() {
                    let s = self.queue.moved[k] as usize;
                    let (lo, hi) = Self::keys(bodies, s, axis);
                    let [pmin, pmax] = self.pos[s][axis];
                    let old_lo = self.axes[axis][pmin as usize].key;
                    self.axes[axis][pmin as usize].key = lo;
                    self.axes[axis][pmax as usize].key = hi;
                    // Growing to the left: min first; to the right: max
                    // first, so a box's own endpoints never cross.
                    if lo < old_lo {
                        self.bubble(axis, pmin as usize);
                        self.bubble(axis, self.pos[s][axis][1] as usize);
                    } else {
                        self.bubble(axis, pmax as usize);
                        self.bubble(axis, self.pos[s][axis][0] as usize);
                    }
                }
            } else {
                for k in 0..self.queue.moved.len() {
                    let s = self.queue.moved[k] as usize;
                    let (lo, hi) = Self::keys(bodies, s, axis);
                    let [pmin, pmax] = self.pos[s][axis];
                    self.axes[axis][pmin as usize].key = lo;
                    self.axes[axis][pmax as usize].key = hi;
                }
                // one insertion-sort pass over the whole axis
                let n = self.axes[axis].len();
                for i in 2..n - 1 {
                    let e = self.axes[axis][i];
                    let mut j = i;
                    while self.axes[axis][j - 1].key > e.key {
                        let f = self.axes[axis][j - 1];
                        self.axes[axis][j] = f;
                        self.set_pos(f, axis, j);
                        j -= 1;
                        self.axes[axis][j] = e;
                        self.set_pos(e, axis, j);
                        self.swap_left(e, f, axis);
                    }
                }
            }
        }
        self.queue.clear_moved();
    }
}

impl BroadPhase for Sap {
    fn add(&mut self, slot: u32) {
        self.queue.add.push(slot);
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

    fn update(&mut self, bodies: &Bodies) -> PairSearch {
        self.pairs.begin_step();
        self.overflowed = 0;
        self.apply_removals();
        self.apply_moves(bodies);
        self.apply_insertions(bodies);
        if self.resync {
            self.rebuild_pairs();
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
