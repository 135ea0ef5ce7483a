//! Multi box pruning (PhysX's MBP).
//!
//! The world is cut into regions (a grid over given bounds, at most
//! [`MAX_REGIONS`]; regions can be added and removed at run time). A body is
//! a member of every region its AABB overlaps. Each update, every region
//! independently sorts its moving members on min x (radix sort) and sweeps:
//! moving against moving (complete box pruning) and moving against static
//! (bipartite box pruning; the static list stays sorted and is re-sorted only
//! when it changes), testing the remaining axes 16 boxes at a time with the
//! SIMD overlap mask. Regions run in parallel (rayon); their pair lists are
//! merged in region order through one pair set, which removes the duplicates
//! of bodies that straddle region borders.
//!
//! A body outside every region is listed and counted as out of bounds, and
//! is tested against all bodies by brute force, so it is never silently
//! ignored (PhysX only reports it).

use super::pair_manager::PairManager;
use super::{
    radix_sort_by_key, BodyPair, BroadPhase, ChangeQueue, KeyReport, LayerFilter, PairSearch,
};
use crate::body::{Bodies, MotionType};
use crate::error::{PhysicsError, Result};
use crate::jobs::StepCtx;
use crate::math::Vec3;
use archipelago_simd::{overlap_mask, AabbLanes, AabbRef, LANES};

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
    min: [Vec<f32>; 3],
    max: [Vec<f32>; 3],
}

impl SortedBoxes {
    fn lanes(&self) -> AabbLanes<'_> {
        AabbLanes {
            min_x: &self.min[0],
            min_y: &self.min[1],
            min_z: &self.min[2],
            max_x: &self.max[0],
            max_y: &self.max[1],
            max_z: &self.max[2],
        }
    }

    /// Fills from `members` sorted by min x (radix sort on the encoded key).
    fn build(
        &mut self,
        members: &[u32],
        bodies: &Bodies,
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
        for a in 0..3 {
            self.min[a].clear();
            self.max[a].clear();
        }
        for &(_, s) in keys.iter() {
            self.slots.push(s);
            let (lo, hi) = (
                bodies.aabb_min.get(s as usize),
                bodies.aabb_max.get(s as usize),
            );
            for a in 0..3 {
                self.min[a].push(lo[a]);
                self.max[a].push(hi[a]);
            }
        }
        for _ in 0..LANES {
            for a in 0..3 {
                self.min[a].push(f32::INFINITY);
                self.max[a].push(f32::NEG_INFINITY);
            }
        }
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn aabb(&self, i: usize) -> AabbRef {
        AabbRef {
            min: [self.min[0][i], self.min[1][i], self.min[2][i]],
            max: [self.max[0][i], self.max[1][i], self.max[2][i]],
        }
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
    /// Box pruning within the region; pairs go to `self.out`.
    fn find_pairs(&mut self, bodies: &Bodies) {
        self.out.clear();
        self.dynamics
            .build(&self.dynamic_members, bodies, &mut self.keys, &mut self.tmp);
        if self.static_dirty {
            self.statics
                .build(&self.static_members, bodies, &mut self.keys, &mut self.tmp);
            self.static_dirty = false;
        }
        let d = &self.dynamics;
        let s = &self.statics;
        let (nd, ns) = (d.len(), s.len());
        let dl = d.lanes();
        let sl = s.lanes();
        // complete: each dynamic box against the dynamic boxes after it
        // that start before it ends
        for i in 0..nd {
            let one = d.aabb(i);
            let mut j = i + 1;
            while j < nd && d.min[0][j] <= one.max[0] {
                let mask = overlap_mask(&one, &dl, j);
                let mut m = mask;
                while m != 0 {
                    let k = j + m.trailing_zeros() as usize;
                    m &= m - 1;
                    if k < nd && d.min[0][k] <= one.max[0] {
                        self.out
                            .push(super::pair_manager::pair_key(d.slots[i], d.slots[k]));
                    }
                }
                j += LANES;
            }
        }
        // bipartite, pass 1: statics starting at or after each dynamic box's
        // min x and before its max x
        let mut s0 = 0;
        for i in 0..nd {
            let one = d.aabb(i);
            while s0 < ns && s.min[0][s0] < one.min[0] {
                s0 += 1;
            }
            let mut j = s0;
            while j < ns && s.min[0][j] <= one.max[0] {
                let mut m = overlap_mask(&one, &sl, j);
                while m != 0 {
                    let k = j + m.trailing_zeros() as usize;
                    m &= m - 1;
                    if k < ns && s.min[0][k] <= one.max[0] && s.min[0][k] >= one.min[0] {
                        self.out
                            .push(super::pair_manager::pair_key(d.slots[i], s.slots[k]));
                    }
                }
                j += LANES;
            }
        }
        // pass 2: dynamics starting strictly after each static box's min x
        let mut d0 = 0;
        for i in 0..ns {
            let one = s.aabb(i);
            while d0 < nd && d.min[0][d0] <= one.min[0] {
                d0 += 1;
            }
            let mut j = d0;
            while j < nd && d.min[0][j] <= one.max[0] {
                let mut m = overlap_mask(&one, &dl, j);
                while m != 0 {
                    let k = j + m.trailing_zeros() as usize;
                    m &= m - 1;
                    if k < nd && d.min[0][k] <= one.max[0] && d.min[0][k] > one.min[0] {
                        self.out
                            .push(super::pair_manager::pair_key(s.slots[i], d.slots[k]));
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
    pairs: PairManager,
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
            pairs: PairManager::new(max_pairs),
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

    /// Recomputes slot `s`'s memberships, moving it between region lists.
    fn place(&mut self, bodies: &Bodies, s: usize) {
        let (lo, hi) = (bodies.aabb_min.get(s), bodies.aabb_max.get(s));
        let is_static = bodies.motion(s) == MotionType::Static;
        let old = self.membership[s];
        if self.regions_disjoint && self.in_mbp[s] && self.placed_static[s] == is_static {
            // still strictly inside its only region: nothing changes
            let ones: u32 = old.iter().map(|w| w.count_ones()).sum();
            if ones == 1 {
                let id = old
                    .iter()
                    .enumerate()
                    .find(|(_, w)| **w != 0)
                    .map(|(k, w)| k * 64 + w.trailing_zeros() as usize);
                if let Some(r) = id.map(|id| &mut self.regions[id]) {
                    let inside = (0..3).all(|a| lo[a] > r.min[a] && hi[a] < r.max[a]);
                    if inside {
                        r.static_dirty |= is_static;
                        return;
                    }
                }
            }
        }
        self.placed_static[s] = is_static;
        let mut new = [0u64; 4];
        for (id, r) in self.regions.iter().enumerate() {
            if Self::region_overlaps(r, lo, hi) {
                new[id / 64] |= 1 << (id % 64);
            }
        }
        for id in 0..self.regions.len() {
            let bit = 1u64 << (id % 64);
            let (was, is) = (old[id / 64] & bit != 0, new[id / 64] & bit != 0);
            let r = &mut self.regions[id];
            let list = if is_static {
                &mut r.static_members
            } else {
                &mut r.dynamic_members
            };
            if was && !is {
                if let Some(k) = list.iter().position(|&x| x == s as u32) {
                    list.swap_remove(k);
                }
                r.static_dirty |= is_static;
            } else if is && !was {
                list.push(s as u32);
                r.static_dirty |= is_static;
            } else if is && is_static {
                // a static body that moved inside the region
                r.static_dirty = true;
            }
        }
        self.membership[s] = new;
        let oob = new == [0; 4];
        if oob != self.oob_flag[s] {
            self.oob_flag[s] = oob;
            if oob {
                self.out_of_bounds.push(s as u32);
            } else if let Some(k) = self.out_of_bounds.iter().position(|&x| x == s as u32) {
                self.out_of_bounds.swap_remove(k);
            }
        }
    }

    fn unplace(&mut self, s: usize) {
        let is_static = self.placed_static[s];
        let old = self.membership[s];
        for id in 0..self.regions.len() {
            if old[id / 64] & (1u64 << (id % 64)) != 0 {
                let r = &mut self.regions[id];
                let list = if is_static {
                    &mut r.static_members
                } else {
                    &mut r.dynamic_members
                };
                if let Some(k) = list.iter().position(|&x| x == s as u32) {
                    list.swap_remove(k);
                }
                r.static_dirty |= is_static;
            }
        }
        self.membership[s] = [0; 4];
        if self.oob_flag[s] {
            self.oob_flag[s] = false;
            if let Some(k) = self.out_of_bounds.iter().position(|&x| x == s as u32) {
                self.out_of_bounds.swap_remove(k);
            }
        }
    }
}

impl Mbp {
    /// Files the queued changes (serial).
    fn apply_queue(&mut self, bodies: &Bodies) {
        for k in 0..self.queue.remove.len() {
            let s = self.queue.remove[k] as usize;
            self.unplace(s);
            self.in_mbp[s] = false;
            let p = self.proxy_pos[s] as usize;
            self.proxies.swap_remove(p);
            if p < self.proxies.len() {
                self.proxy_pos[self.proxies[p] as usize] = p as u32;
            }
            self.proxy_pos[s] = NOT_PROXY;
        }
        self.queue.clear_removed();
        for k in 0..self.queue.moved.len() {
            let s = self.queue.moved[k] as usize;
            self.place(bodies, s);
        }
        self.queue.clear_moved();
        for k in 0..self.queue.add.len() {
            let s = self.queue.add[k] as usize;
            self.in_mbp[s] = true;
            self.proxy_pos[s] = self.proxies.len() as u32;
            self.proxies.push(s as u32);
            self.place(bodies, s);
        }
        self.queue.clear_added();
    }

    /// Merges the regions' pairs in region order through one set, then
    /// adds the out-of-bounds bodies' pairs (serial).
    fn merge_pairs(&mut self, bodies: &Bodies) -> PairSearch {
        self.pairs.clear();
        self.overflowed = 0;
        for r in &self.regions {
            for &key in &r.out {
                if self.pairs.add((key >> 32) as u32, key as u32).is_err() {
                    self.overflowed += 1;
                }
            }
        }
        // Out-of-bounds bodies against everything, by brute force.
        for k in 0..self.out_of_bounds.len() {
            let o = self.out_of_bounds[k] as usize;
            brute_force_one(bodies, o, |j| {
                if j != o && self.in_mbp[j] && !(self.oob_flag[j] && j < o) {
                    let both_static = bodies.motion(j) == MotionType::Static
                        && bodies.motion(o) == MotionType::Static;
                    if !both_static && self.pairs.add(o as u32, j as u32).is_err() {
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
        ctx.serial("mbp changes", || self.apply_queue(bodies));
        ctx.par_chunks_mut("mbp regions", &mut self.regions, 1, |_, r| {
            if r[0].live {
                r[0].find_pairs(bodies);
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
        let mut search =
            self.reporter
                .report(ctx, &self.pairs.pairs, bodies, filter, out, max_pairs);
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
