//! Multi box pruning (PhysX's MBP).
//!
//! The world is cut into regions (a grid over given bounds, at most
//! [`MAX_REGIONS`]; regions can be added and removed at run time). A body is
//! a member of every region its AABB overlaps. Each update, every region
//! independently sorts its moving members on min x (radix sort) and sweeps:
//! moving against moving (complete box pruning) and moving against static
//! (bipartite box pruning; the static list stays sorted and is re-sorted only
//! when it changes), testing the remaining axes 16 boxes at a time with the
//! SIMD overlap mask. Regions run in parallel. Two bodies that straddle a
//! border meet in every region they share; the lowest of those owns the
//! pair and the others drop it, so the regions' lists, joined in region
//! order, hold each pair once with no pair set to merge them through.
//!
//! Filing a step's changes is parallel too: every moved body's new
//! memberships first (over bodies), then every region's list edits in
//! queue order (over regions), then the per-body bookkeeping of the few
//! bodies whose regions changed (serial). A body strictly inside its only
//! region of a grid skips the scan over all regions.
//!
//! A body outside every region is listed and counted as out of bounds, and
//! is tested against all bodies by brute force, so it is never silently
//! ignored (PhysX only reports it).

use super::box_columns::BoxColumns;
use super::pair_manager::pair_key;
use super::{
    radix_sort_by_key, BodyPair, BroadPhase, ChangeQueue, KeyReport, LayerFilter, PairSearch,
};
use crate::body::{Bodies, MotionType};
use crate::error::{PhysicsError, Result};
use crate::jobs::StepCtx;
use crate::math::Vec3;
use archipelago_simd::{overlap_mask, AabbRef, LANES};

/// At most 256 regions (PhysX's limit), e.g. a 16 × 16 grid.
pub const MAX_REGIONS: usize = 256;

/// A grid of `subdivisions × subdivisions` regions over the x–z extent of
/// `world_min..world_max` (each spanning the full y extent), like PhysX's
/// `createRegionsFromWorldBounds`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MbpSettings {
    pub world_min: Vec3,
    pub world_max: Vec3,
    /// 1 to 16.
    pub subdivisions: u32,
}

impl MbpSettings {
    /// The regions' bounds, or `InvalidBroadPhaseRegions` when there would
    /// be none or the bounds are degenerate (non-finite, or not max > min on
    /// every axis).
    pub fn regions(&self) -> Result<Vec<(Vec3, Vec3)>> {
        let (lo, hi) = (self.world_min, self.world_max);
        let n = self.subdivisions;
        let ok = lo.is_finite() && hi.is_finite() && hi.cmpgt(lo).all() && (1..=16).contains(&n);
        if !ok {
            return Err(PhysicsError::InvalidBroadPhaseRegions);
        }
        let cell = (hi - lo) / n as f32;
        let mut out = Vec::with_capacity((n * n) as usize);
        for iz in 0..n {
            for ix in 0..n {
                let min = Vec3::new(lo.x + cell.x * ix as f32, lo.y, lo.z + cell.z * iz as f32);
                // the last cell ends exactly at the world bound
                let max = Vec3::new(
                    if ix + 1 == n {
                        hi.x
                    } else {
                        lo.x + cell.x * (ix + 1) as f32
                    },
                    hi.y,
                    if iz + 1 == n {
                        hi.z
                    } else {
                        lo.z + cell.z * (iz + 1) as f32
                    },
                );
                out.push((min, max));
            }
        }
        Ok(out)
    }
}

/// Sorted SoA boxes of one region list, padded with empty boxes so SIMD
/// loads never run past the end.
#[derive(Default)]
struct SortedBoxes {
    slots: Vec<u32>,
    /// Per box: whether its body is a member of other regions too (only a
    /// pair of two such bodies can be owned by another region).
    shared: Vec<bool>,
    boxes: BoxColumns,
}

impl SortedBoxes {
    /// Fills from `members` sorted by min x (radix sort on the encoded key).
    fn build(
        &mut self,
        members: &[u32],
        bodies: &Bodies,
        membership: &[[u64; 4]],
        keys: &mut Vec<(u32, u32)>,
        tmp: &mut Vec<(u32, u32)>,
    ) {
        keys.clear();
        keys.extend(
            members
                .iter()
                .map(|&s| (super::encode(bodies.aabb_min.x[s as usize]), s)),
        );
        radix_sort_by_key(keys, tmp, |&(k, _)| k as u64);
        self.slots.clear();
        self.shared.clear();
        self.boxes.clear();
        for &(_, s) in keys.iter() {
            self.slots.push(s);
            let regions: u32 = membership[s as usize].iter().map(|w| w.count_ones()).sum();
            self.shared.push(regions > 1);
            self.boxes.push(bodies, s as usize);
        }
        self.boxes.pad();
    }

    fn len(&self) -> usize {
        self.slots.len()
    }
}

#[derive(Default)]
struct Region {
    min: Vec3,
    max: Vec3,
    live: bool,
    dynamic_members: Vec<u32>,
    static_members: Vec<u32>,
    static_dirty: bool,
    dynamics: SortedBoxes,
    statics: SortedBoxes,
    keys: Vec<(u32, u32)>,
    tmp: Vec<(u32, u32)>,
    /// This update's pairs (keys), in discovery order.
    out: Vec<u64>,
}

impl Region {
    /// Box pruning within region `id`; the pairs it owns go to `self.out`.
    /// A pair of bodies that share several regions is found in each of
    /// them and owned by the lowest: so the regions' lists never repeat a
    /// pair, and joined in region order they are the serial merge's list.
    fn find_pairs(&mut self, id: usize, bodies: &Bodies, membership: &[[u64; 4]]) {
        self.out.clear();
        let owned = |a: u32, b: u32| {
            let (ma, mb) = (&membership[a as usize], &membership[b as usize]);
            let word = (0..4).find(|&w| ma[w] & mb[w] != 0);
            word.is_some_and(|w| w * 64 + (ma[w] & mb[w]).trailing_zeros() as usize == id)
        };
        // `shared`: both bodies are members of other regions too
        let push = |out: &mut Vec<u64>, a: u32, b: u32, shared: bool| {
            if !shared || owned(a, b) {
                out.push(pair_key(a, b));
            }
        };
        self.dynamics.build(
            &self.dynamic_members,
            bodies,
            membership,
            &mut self.keys,
            &mut self.tmp,
        );
        if self.static_dirty {
            self.statics.build(
                &self.static_members,
                bodies,
                membership,
                &mut self.keys,
                &mut self.tmp,
            );
            self.static_dirty = false;
        }
        let d = &self.dynamics;
        let s = &self.statics;
        let (nd, ns) = (d.len(), s.len());
        let dl = d.boxes.lanes();
        let sl = s.boxes.lanes();
        // complete: each dynamic box against the dynamic boxes after it
        // that start before it ends
        for i in 0..nd {
            let one = d.boxes.aabb(i);
            let mut j = i + 1;
            while j < nd && d.boxes.min[0][j] <= one.max[0] {
                let mask = overlap_mask(&one, &dl, j);
                let mut m = mask;
                while m != 0 {
                    let k = j + m.trailing_zeros() as usize;
                    m &= m - 1;
                    if k < nd && d.boxes.min[0][k] <= one.max[0] {
                        push(
                            &mut self.out,
                            d.slots[i],
                            d.slots[k],
                            d.shared[i] && d.shared[k],
                        );
                    }
                }
                j += LANES;
            }
        }
        // bipartite, pass 1: statics starting at or after each dynamic box's
        // min x and before its max x
        let mut s0 = 0;
        for i in 0..nd {
            let one = d.boxes.aabb(i);
            while s0 < ns && s.boxes.min[0][s0] < one.min[0] {
                s0 += 1;
            }
            let mut j = s0;
            while j < ns && s.boxes.min[0][j] <= one.max[0] {
                let mut m = overlap_mask(&one, &sl, j);
                while m != 0 {
                    let k = j + m.trailing_zeros() as usize;
                    m &= m - 1;
                    if k < ns && s.boxes.min[0][k] <= one.max[0] && s.boxes.min[0][k] >= one.min[0]
                    {
                        push(
                            &mut self.out,
                            d.slots[i],
                            s.slots[k],
                            d.shared[i] && s.shared[k],
                        );
                    }
                }
                j += LANES;
            }
        }
        // pass 2: dynamics starting strictly after each static box's min x
        let mut d0 = 0;
        for i in 0..ns {
            let one = s.boxes.aabb(i);
            while d0 < nd && d.boxes.min[0][d0] <= one.min[0] {
                d0 += 1;
            }
            let mut j = d0;
            while j < nd && d.boxes.min[0][j] <= one.max[0] {
                let mut m = overlap_mask(&one, &dl, j);
                while m != 0 {
                    let k = j + m.trailing_zeros() as usize;
                    m &= m - 1;
                    if k < nd && d.boxes.min[0][k] <= one.max[0] && d.boxes.min[0][k] > one.min[0] {
                        push(
                            &mut self.out,
                            s.slots[i],
                            d.slots[k],
                            s.shared[i] && d.shared[k],
                        );
                    }
                }
                j += LANES;
            }
        }
    }
}

pub(crate) struct Mbp {
    regions: Vec<Region>,
    /// Per body slot: bitset of the regions it is a member of.
    membership: Vec<[u64; 4]>,
    in_mbp: Vec<bool>,
    /// Whether the slot's body was static when placed (a destroyed body's
    /// slot can be reused by another before the next update).
    placed_static: Vec<bool>,
    proxies: Vec<u32>,
    proxy_pos: Vec<u32>,
    out_of_bounds: Vec<u32>,
    oob_flag: Vec<bool>,
    queue: ChangeQueue,
    /// Scratch of [`Mbp::apply_queue`]: per queued change, its placement,
    /// and the changes that edit anything.
    placed: Vec<Placement>,
    changed: Vec<u32>,
    /// This update's pairs (keys), at most `max_pairs`.
    pairs: Vec<u64>,
    max_pairs: usize,
    reporter: KeyReport,
    overflowed: u32,
    /// No two live regions share interior (a grid): a body strictly inside
    /// one region then overlaps no other, so a move that keeps it inside
    /// skips the scan over all regions.
    regions_disjoint: bool,
    /// [`BroadPhaseKind::MbpFitted`](super::BroadPhaseKind::MbpFitted):
    /// the grid's subdivisions, the grid fitted to the bodies (see
    /// [`Mbp::needs_fit`]).
    fit: Option<u32>,
    /// Times the grid was fitted.
    pub fits: u32,
}

const NOT_PROXY: u32 = u32::MAX;

/// A fitted grid is fitted again when more bodies than this (or than 1 in
/// 64 of its bodies) are outside it: each out-of-bounds body is tested
/// against every body, so a few are cheap and many are not.
const FIT_OUT_OF_BOUNDS: usize = 64;
/// Room a fitted grid leaves around the bodies' bounds, as a share of
/// their extent per axis, plus [`FIT_MARGIN`] (m): a heap spreads, debris
/// flies; refits stay rare.
const FIT_GROWTH: f32 = 0.25;
const FIT_MARGIN: f32 = 2.0;

impl Mbp {
    pub fn new(settings: &MbpSettings, max_bodies: usize, max_pairs: usize) -> Result<Self> {
        let bounds = settings.regions()?;
        let mut mbp = Self {
            regions: Vec::with_capacity(MAX_REGIONS),
            membership: vec![[0; 4]; max_bodies],
            in_mbp: vec![false; max_bodies],
            placed_static: vec![false; max_bodies],
            proxies: Vec::with_capacity(max_bodies),
            proxy_pos: vec![NOT_PROXY; max_bodies],
            out_of_bounds: Vec::with_capacity(max_bodies),
            oob_flag: vec![false; max_bodies],
            queue: ChangeQueue::new(max_bodies),
            placed: Vec::new(),
            changed: Vec::new(),
            pairs: Vec::with_capacity(max_pairs),
            max_pairs,
            reporter: KeyReport::new(max_pairs),
            overflowed: 0,
            regions_disjoint: true,
            fit: None,
            fits: 0,
        };
        for (lo, hi) in bounds {
            mbp.add_region(lo, hi)?;
        }
        Ok(mbp)
    }

    /// An MBP whose `subdivisions × subdivisions` grid is fitted to the
    /// bodies' bounds at its first update with bodies, and fitted again
    /// when too many leave it (`1..=16` subdivisions, else
    /// `InvalidBroadPhaseRegions`).
    pub fn fitted(subdivisions: u32, max_bodies: usize, max_pairs: usize) -> Result<Self> {
        // any valid bounds: the regions are replaced before the first use
        let mut mbp = Self::new(
            &MbpSettings {
                world_min: Vec3::ZERO,
                world_max: Vec3::ONE,
                subdivisions,
            },
            max_bodies,
            max_pairs,
        )?;
        for r in &mut mbp.regions {
            *r = Region::default();
        }
        mbp.fit = Some(subdivisions);
        Ok(mbp)
    }

    /// Whether the grid is fitted by the broad phase itself (no region
    /// calls).
    pub fn is_fitted(&self) -> bool {
        self.fit.is_some()
    }

    /// A fitted grid is fitted when it has no region yet, or when more
    /// than [`FIT_OUT_OF_BOUNDS`] bodies (or 1 in 64) were outside it at
    /// the last update.
    fn needs_fit(&self, bodies: &Bodies) -> bool {
        let live = self.regions.iter().any(|r| r.live);
        let limit = FIT_OUT_OF_BOUNDS.max(self.proxies.len() / 64);
        self.fit.is_some()
            && !bodies.added.is_empty()
            && (!live || self.out_of_bounds.len() > limit)
    }

    /// Fits the grid to the added bodies' boxes (grown by [`FIT_GROWTH`]
    /// and [`FIT_MARGIN`]). The bounds depend only on the boxes, so the
    /// grid is the same on every run and thread count; the pairs never
    /// depend on it.
    fn fit_grid(&mut self, bodies: &Bodies) {
        let Some(subdivisions) = self.fit else {
            return;
        };
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for &s in &bodies.added {
            lo = lo.min(Vec3::from_array(bodies.aabb_min.get(s as usize)));
            hi = hi.max(Vec3::from_array(bodies.aabb_max.get(s as usize)));
        }
        let grow = (hi - lo) * FIT_GROWTH + Vec3::splat(FIT_MARGIN);
        let grid = MbpSettings {
            world_min: lo - grow,
            world_max: hi + grow,
            subdivisions,
        };
        let Ok(bounds) = grid.regions() else {
            return; // boxes beyond f32 range: keep what there is
        };
        for r in &mut self.regions {
            *r = Region::default();
        }
        for k in 0..self.proxies.len() {
            self.membership[self.proxies[k] as usize] = [0; 4];
        }
        for (lo, hi) in bounds {
            let _ = self.insert_region(lo, hi);
        }
        self.remember_all_moved();
        self.fits += 1;
    }

    /// Adds a region; returns its id. Memberships are recomputed at the next
    /// update.
    pub fn add_region(&mut self, min: Vec3, max: Vec3) -> Result<u32> {
        let id = self.insert_region(min, max)?;
        self.remember_all_moved();
        Ok(id)
    }

    fn insert_region(&mut self, min: Vec3, max: Vec3) -> Result<u32> {
        if !(min.is_finite() && max.is_finite() && max.cmpgt(min).all()) {
            return Err(PhysicsError::InvalidBroadPhaseRegions);
        }
        let id = match self.regions.iter().position(|r| !r.live) {
            Some(k) => k,
            None if self.regions.len() < MAX_REGIONS => {
                self.regions.push(Region::default());
                self.regions.len() - 1
            }
            None => return Err(PhysicsError::InvalidBroadPhaseRegions),
        };
        self.regions[id] = Region {
            min,
            max,
            live: true,
            static_dirty: true,
            ..Region::default()
        };
        Ok(id as u32)
    }

    /// Removes a region (its bodies move to their other regions, or out of
    /// bounds, at the next update).
    pub fn remove_region(&mut self, id: u32) -> Result<()> {
        let r = self
            .regions
            .get_mut(id as usize)
            .filter(|r| r.live)
            .ok_or(PhysicsError::InvalidBroadPhaseRegions)?;
        *r = Region::default();
        for m in self.membership.iter_mut() {
            m[id as usize / 64] &= !(1u64 << (id % 64));
        }
        self.remember_all_moved();
        Ok(())
    }

    pub fn out_of_bounds(&self) -> &[u32] {
        &self.out_of_bounds
    }

    fn update_disjoint(&mut self) {
        let live: Vec<(Vec3, Vec3)> = self
            .regions
            .iter()
            .filter(|r| r.live)
            .map(|r| (r.min, r.max))
            .collect();
        self.regions_disjoint = live.iter().enumerate().all(|(i, a)| {
            live[i + 1..]
                .iter()
                .all(|b| a.0.cmpge(b.1).any() || b.0.cmpge(a.1).any())
        });
    }

    fn remember_all_moved(&mut self) {
        self.update_disjoint();
        for k in 0..self.proxies.len() {
            let s = self.proxies[k];
            BroadPhase::moved(self, s);
        }
    }

    fn region_overlaps(r: &Region, lo: [f32; 3], hi: [f32; 3]) -> bool {
        r.live
            && lo[0] <= r.max.x
            && hi[0] >= r.min.x
            && lo[1] <= r.max.y
            && hi[1] >= r.min.y
            && lo[2] <= r.max.z
            && hi[2] >= r.min.z
    }

    /// The regions a box at `lo..hi` is a member of. `old` is the body's
    /// current set when the body stays in the same kind of list (`keep`):
    /// a box still strictly inside its only region of a grid overlaps no
    /// other, and the scan over all regions is skipped.
    fn membership_of(
        regions: &[Region],
        disjoint: bool,
        lo: [f32; 3],
        hi: [f32; 3],
        old: Option<[u64; 4]>,
    ) -> [u64; 4] {
        if let Some(old) = old.filter(|_| disjoint) {
            let ones: u32 = old.iter().map(|w| w.count_ones()).sum();
            if ones == 1 {
                let (k, w) = old.iter().enumerate().find(|(_, w)| **w != 0).unwrap();
                let r = &regions[k * 64 + w.trailing_zeros() as usize];
                if (0..3).all(|a| lo[a] > r.min[a] && hi[a] < r.max[a]) {
                    return old;
                }
            }
        }
        let mut new = [0u64; 4];
        for (id, r) in regions.iter().enumerate() {
            if Self::region_overlaps(r, lo, hi) {
                new[id / 64] |= 1 << (id % 64);
            }
        }
        new
    }
}

/// What a queued change does to a body's region lists.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum ChangeKind {
    #[default]
    Remove,
    Move,
    Add,
}

/// One queued change (queue order: removals, moves, additions) and the
/// memberships it leaves, found in parallel before any list changes.
#[derive(Clone, Copy, Default)]
struct Placement {
    kind: ChangeKind,
    /// Whether the body's lists are the static ones.
    is_static: bool,
    /// Whether any region list or bookkeeping changes: memberships
    /// differ, a static body moved (its regions re-sort their statics),
    /// the body changed kind, or it left or entered the regions.
    edits: bool,
    /// The memberships after the change (read only where `edits`).
    new: [u64; 4],
}

/// Regions filed per job of the list edits.
const REGIONS_PER_EDIT_JOB: usize = 4;
/// Queued changes placed per job.
const PLACEMENTS_PER_JOB: usize = 1024;

impl Mbp {
    /// The slot of queued change `k`, in queue order.
    fn change_slot(queue: &ChangeQueue, k: usize) -> usize {
        let (nr, nm) = (queue.remove.len(), queue.moved.len());
        let s = if k < nr {
            queue.remove[k]
        } else if k < nr + nm {
            queue.moved[k - nr]
        } else {
            queue.add[k - nr - nm]
        };
        s as usize
    }

    /// Files the queued changes in three stages, each the serial order's
    /// result: every change's new memberships (parallel over changes),
    /// then every region's list edits in queue order (parallel over
    /// regions: a region's list depends only on the edits made to it, in
    /// order), then the per-body bookkeeping (serial, only for changed
    /// bodies).
    fn apply_queue(&mut self, ctx: &StepCtx, bodies: &Bodies) {
        let queue = &self.queue;
        let (nr, nm) = (queue.remove.len(), queue.moved.len());
        let n = nr + nm + queue.add.len();
        if self.placed.len() < n {
            self.placed.resize(n, Placement::default());
        }
        let (regions, membership) = (&self.regions, &self.membership);
        let (in_mbp, placed_static) = (&self.in_mbp, &self.placed_static);
        let oob_flag = &self.oob_flag;
        let disjoint = self.regions_disjoint;
        ctx.par_chunks_mut(
            "mbp place",
            &mut self.placed[..n],
            PLACEMENTS_PER_JOB,
            |first, chunk| {
                for (i, p) in chunk.iter_mut().enumerate() {
                    let k = first + i;
                    let s = Self::change_slot(queue, k);
                    if k < nr {
                        *p = Placement {
                            kind: ChangeKind::Remove,
                            is_static: placed_static[s],
                            edits: true,
                            new: [0; 4],
                        };
                        continue;
                    }
                    let kind = if k < nr + nm {
                        ChangeKind::Move
                    } else {
                        ChangeKind::Add
                    };
                    let is_static = bodies.motion(s) == MotionType::Static;
                    let old = if kind == ChangeKind::Move {
                        membership[s]
                    } else {
                        [0; 4]
                    };
                    let keep =
                        kind == ChangeKind::Move && in_mbp[s] && placed_static[s] == is_static;
                    let (lo, hi) = (bodies.aabb_min.get(s), bodies.aabb_max.get(s));
                    let new = Self::membership_of(regions, disjoint, lo, hi, keep.then_some(old));
                    p.kind = kind;
                    p.is_static = is_static;
                    // (memberships can be cleared under a body, by a
                    // removed region or a refit: compare the out-of-bounds
                    // flag too)
                    p.edits = kind == ChangeKind::Add
                        || new != old
                        || (is_static && new != [0; 4])
                        || placed_static[s] != is_static
                        || (new == [0; 4]) != oob_flag[s];
                    if p.edits {
                        p.new = new;
                    }
                }
                0
            },
        );
        self.changed.clear();
        for (k, p) in self.placed[..n].iter().enumerate() {
            if p.edits {
                self.changed.push(k as u32);
            }
        }
        // (every body stayed inside its regions: no jobs to run)
        if !self.changed.is_empty() {
            self.file_region_lists(ctx);
            ctx.serial("mbp bodies", || self.file_changes());
        }
        self.queue.clear_removed();
        self.queue.clear_moved();
        self.queue.clear_added();
    }

    /// Every region's list edits of the changed bodies, in queue order
    /// (parallel over regions).
    fn file_region_lists(&mut self, ctx: &StepCtx) {
        let (queue, membership) = (&self.queue, &self.membership);
        let (changed, placed) = (&self.changed, &self.placed);
        ctx.par_chunks_mut(
            "mbp region lists",
            &mut self.regions,
            REGIONS_PER_EDIT_JOB,
            |first, chunk| {
                for &k in changed {
                    let p = &placed[k as usize];
                    let s = Self::change_slot(queue, k as usize);
                    let old = if p.kind == ChangeKind::Add {
                        [0; 4]
                    } else {
                        membership[s]
                    };
                    for (i, r) in chunk.iter_mut().enumerate() {
                        let id = first + i;
                        let bit = 1u64 << (id % 64);
                        let (was, is) = (old[id / 64] & bit != 0, p.new[id / 64] & bit != 0);
                        file_edit(r, s as u32, p.is_static, was, is);
                    }
                }
                0
            },
        );
    }

    /// The per-body bookkeeping of the filed changes, in queue order.
    fn file_changes(&mut self) {
        for k in 0..self.changed.len() {
            let k = self.changed[k] as usize;
            let p = self.placed[k];
            let s = Self::change_slot(&self.queue, k);
            match p.kind {
                ChangeKind::Remove => {
                    self.in_mbp[s] = false;
                    let at = self.proxy_pos[s] as usize;
                    self.proxies.swap_remove(at);
                    if at < self.proxies.len() {
                        self.proxy_pos[self.proxies[at] as usize] = at as u32;
                    }
                    self.proxy_pos[s] = NOT_PROXY;
                }
                ChangeKind::Add => {
                    self.in_mbp[s] = true;
                    self.proxy_pos[s] = self.proxies.len() as u32;
                    self.proxies.push(s as u32);
                }
                ChangeKind::Move => {}
            }
            self.placed_static[s] = p.is_static;
            self.membership[s] = p.new;
            let oob = p.kind != ChangeKind::Remove && p.new == [0; 4];
            if oob != self.oob_flag[s] {
                self.oob_flag[s] = oob;
                if oob {
                    self.out_of_bounds.push(s as u32);
                } else if let Some(at) = self.out_of_bounds.iter().position(|&x| x == s as u32) {
                    self.out_of_bounds.swap_remove(at);
                }
            }
        }
    }

    /// Joins the regions' pairs in region order (each region kept only the
    /// pairs it owns, so there is nothing to deduplicate), then adds the
    /// out-of-bounds bodies' pairs (serial). Past `max_pairs` the rest are
    /// counted as dropped.
    fn merge_pairs(&mut self, bodies: &Bodies) -> PairSearch {
        self.pairs.clear();
        self.overflowed = 0;
        for r in &self.regions {
            let room = self.max_pairs - self.pairs.len();
            let take = r.out.len().min(room);
            self.pairs.extend_from_slice(&r.out[..take]);
            self.overflowed += (r.out.len() - take) as u32;
        }
        // Out-of-bounds bodies against everything, by brute force: no
        // region holds them, so no region pair repeats one of these.
        for k in 0..self.out_of_bounds.len() {
            let o = self.out_of_bounds[k] as usize;
            brute_force_one(bodies, o, |j| {
                if j != o && self.in_mbp[j] && !(self.oob_flag[j] && j < o) {
                    let both_static = bodies.motion(j) == MotionType::Static
                        && bodies.motion(o) == MotionType::Static;
                    if both_static {
                    } else if self.pairs.len() < self.max_pairs {
                        self.pairs.push(pair_key(o as u32, j as u32));
                    } else {
                        self.overflowed += 1;
                    }
                }
            });
        }
        PairSearch {
            dropped: self.overflowed,
            out_of_bounds: self.out_of_bounds.len() as u32,
            ..PairSearch::default()
        }
    }
}

/// One body's edit of one region's lists, as the body's memberships go
/// from `was` to `is` in it.
fn file_edit(r: &mut Region, s: u32, is_static: bool, was: bool, is: bool) {
    let list = if is_static {
        &mut r.static_members
    } else {
        &mut r.dynamic_members
    };
    if was && !is {
        if let Some(k) = list.iter().position(|&x| x == s) {
            list.swap_remove(k);
        }
        r.static_dirty |= is_static;
    } else if is && !was {
        list.push(s);
        r.static_dirty |= is_static;
    } else if is && is_static {
        // a static body that moved inside the region
        r.static_dirty = true;
    }
}

impl BroadPhase for Mbp {
    fn add(&mut self, slot: u32) {
        self.queue.queue_add(slot);
    }

    fn remove(&mut self, slot: u32) {
        let present = self.in_mbp[slot as usize];
        self.queue.queue_remove(slot, present);
    }

    fn moved(&mut self, slot: u32) {
        let present = self.in_mbp[slot as usize];
        self.queue.queue_moved(slot, present);
    }

    fn has_pending(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Files the queued changes, then finds every region's pairs (regions
    /// in parallel) and merges them in region order.
    fn update(&mut self, ctx: &StepCtx, bodies: &Bodies) -> PairSearch {
        // (checked here: a step that fits nothing records no job)
        if self.needs_fit(bodies) {
            ctx.serial("mbp fit", || self.fit_grid(bodies));
        }
        self.apply_queue(ctx, bodies);
        let membership = &self.membership;
        ctx.par_chunks_mut("mbp regions", &mut self.regions, 1, |id, r| {
            if r[0].live {
                r[0].find_pairs(id, bodies, membership);
            }
            0
        });
        ctx.serial("mbp merge", || self.merge_pairs(bodies))
    }

    fn report(
        &mut self,
        ctx: &StepCtx,
        bodies: &Bodies,
        filter: &LayerFilter,
        out: &mut Vec<BodyPair>,
        max_pairs: usize,
    ) -> PairSearch {
        let mut search = self
            .reporter
            .report(ctx, &self.pairs, bodies, filter, out, max_pairs);
        search.out_of_bounds = self.out_of_bounds.len() as u32;
        search
    }
}

/// Calls `hit(j)` for every body slot whose AABB overlaps slot `o`'s.
fn brute_force_one(bodies: &Bodies, o: usize, mut hit: impl FnMut(usize)) {
    let lanes = bodies.aabb_lanes();
    let one = AabbRef {
        min: bodies.aabb_min.get(o),
        max: bodies.aabb_max.get(o),
    };
    let high = bodies.slots.high_water();
    let mut start = 0;
    while start < high {
        let mut m = overlap_mask(&one, &lanes, start);
        while m != 0 {
            let j = start + m.trailing_zeros() as usize;
            m &= m - 1;
            if j < high {
                hit(j);
            }
        }
        start += LANES;
    }
}
