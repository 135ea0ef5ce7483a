//! Broad phase: candidate body pairs whose world AABBs overlap (AABBs of
//! moving bodies are inflated by the speculative contact distance).
//!
//! Three implementations behind one trait, chosen by
//! [`BroadPhaseKind`](crate::BroadPhaseKind):
//! - [`sap`]: PhysX-style incremental sweep and prune on three axes with a
//!   persistent pair set; cheap when most bodies sleep or stand still.
//! - [`mbp`]: PhysX-style multi box pruning over a grid of regions, each
//!   region sorted and swept from scratch every step; cheap when everything
//!   moves and for bulk insertion.
//! - [`brute_force`]: all pairs, the test oracle.
//!
//! Whatever the implementation, the reported pairs are filtered the same way
//! (at least one awake body, at least one dynamic body, object layers that
//! collide) and come out sorted by (lower slot, higher slot), the order the
//! narrow phase consumes, so results never depend on how pairs were found.

pub(crate) mod auto;
pub(crate) mod box_columns;
pub(crate) mod brute_force;
pub(crate) mod mbp;
pub(crate) mod pair_manager;
#[cfg(test)]
mod property_tests;
pub(crate) mod sap;
pub(crate) mod sweep;

use crate::body::{Bodies, MotionType};
use crate::disjoint::Disjoint;
use crate::jobs::StepCtx;

/// A candidate pair: slot `a` < slot `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct BodyPair {
    pub a: u32,
    pub b: u32,
}

impl crate::snapshot::codec::Snap for BodyPair {
    fn put(&self, w: &mut crate::snapshot::codec::Writer) {
        w.u32(self.a);
        w.u32(self.b);
    }
    fn get(r: &mut crate::snapshot::codec::Reader) -> crate::error::Result<Self> {
        Ok(Self {
            a: r.slot()?,
            b: r.slot()?,
        })
    }
}

impl BodyPair {
    pub fn key(self) -> u64 {
        ((self.a as u64) << 32) | self.b as u64
    }
}

/// Which object layers may collide: bit `j` of `rows[i]` (symmetric).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerFilter {
    rows: [u32; 32],
}

impl Default for LayerFilter {
    /// Every layer collides with every layer.
    fn default() -> Self {
        Self {
            rows: [u32::MAX; 32],
        }
    }
}

impl LayerFilter {
    /// No layer collides with any.
    pub fn none() -> Self {
        Self { rows: [0; 32] }
    }

    /// Sets whether layers `a` and `b` collide (both directions). Layers at
    /// or above `MAX_OBJECT_LAYERS` are ignored.
    pub fn set(&mut self, a: u8, b: u8, collide: bool) {
        if a >= 32 || b >= 32 {
            return;
        }
        for (r, c) in [(a, b), (b, a)] {
            if collide {
                self.rows[r as usize] |= 1 << c;
            } else {
                self.rows[r as usize] &= !(1 << c);
            }
        }
    }

    /// Row `i`: bit `j` set when layers `i` and `j` collide (for saving
    /// and rebuilding a filter; see [`from_rows`](Self::from_rows)).
    pub fn rows(&self) -> [u32; 32] {
        self.rows
    }

    /// A filter from its rows, if they are symmetric (bit `j` of row `i`
    /// equals bit `i` of row `j`).
    pub fn from_rows(rows: [u32; 32]) -> Option<Self> {
        let symmetric = (0..32).all(|i| (0..32).all(|j| (rows[i] >> j) & 1 == (rows[j] >> i) & 1));
        symmetric.then_some(Self { rows })
    }

    #[inline]
    pub fn collides(&self, a: u8, b: u8) -> bool {
        self.rows[(a & 31) as usize] & (1 << (b & 31)) != 0
    }
}

/// Whether two bodies may collide at all: at least one must be dynamic
/// (static–static, static–kinematic and kinematic–kinematic pairs never
/// produce a response).
#[inline]
pub(crate) fn should_collide(a: MotionType, b: MotionType) -> bool {
    a == MotionType::Dynamic || b == MotionType::Dynamic
}

/// Whether the pair `(i, j)` is reported this step: it may collide, at least
/// one of the two is awake (sleeping–sleeping and sleeping–static pairs cost
/// nothing; awake–sleeping pairs are reported so the awake body can wake the
/// sleeping one), and their layers collide.
#[inline]
pub(crate) fn reported(bodies: &Bodies, filter: &LayerFilter, i: usize, j: usize) -> bool {
    should_collide(bodies.motion(i), bodies.motion(j))
        && (bodies.is_active(i) || bodies.is_active(j))
        && filter.collides(bodies.object_layer[i], bodies.object_layer[j])
}

/// Outcome of one pair search.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PairSearch {
    /// Pairs that did not fit in `max_body_pairs` and were dropped.
    pub dropped: u32,
    /// Persistent overlaps created and deleted by this update (SAP; net:
    /// a pair that ended and began again within one update counts in
    /// neither).
    pub created: u32,
    pub deleted: u32,
    /// Bodies outside every MBP region (not tested against anything).
    pub out_of_bounds: u32,
}

/// Order-preserving integer encoding of a float: `a <= b` exactly when
/// `encode(a) <= encode(b)` (−0 and +0 encode alike). Endpoint keys append
/// one bit, 0 for a min and 1 for a max, so that at equal values a max sorts
/// after a min and touching boxes count as overlapping, as in the oracle.
#[inline]
pub(crate) fn encode(f: f32) -> u32 {
    let bits = (f + 0.0).to_bits(); // -0.0 + 0.0 == +0.0
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

#[inline]
pub(crate) fn min_key(f: f32) -> u64 {
    (encode(f) as u64) << 1
}

#[inline]
pub(crate) fn max_key(f: f32) -> u64 {
    ((encode(f) as u64) << 1) | 1
}

/// Additions, removals and moves queued between updates, shared by the
/// incremental broad phases, which apply them in that order: removals,
/// then moves, then additions.
///
/// A slot goes through any sequence of calls between two updates (remove,
/// add again, move; destroy, reuse by a new body, move; ...), so the queue
/// keeps per slot what the structure must do with it: a slot removed and
/// added again is in both `remove` and `add`; a move is queued only for a
/// slot that will still be in the structure when moves are applied (not
/// one whose removal is queued: its endpoints are gone by then, and a
/// re-added slot is inserted at its current box anyway).
pub(crate) struct ChangeQueue {
    pub add: Vec<u32>,
    pub remove: Vec<u32>,
    pub moved: Vec<u32>,
    moved_flag: Vec<bool>,
    /// Per slot: its place in `add`, or `NOT_QUEUED`.
    add_pos: Vec<u32>,
    /// Per slot: queued in `remove`.
    removing: Vec<bool>,
}

const NOT_QUEUED: u32 = u32::MAX;

impl ChangeQueue {
    pub fn new(max_bodies: usize) -> Self {
        Self {
            add: Vec::with_capacity(max_bodies),
            remove: Vec::with_capacity(max_bodies),
            moved: Vec::with_capacity(max_bodies),
            moved_flag: vec![false; max_bodies],
            add_pos: vec![NOT_QUEUED; max_bodies],
            removing: vec![false; max_bodies],
        }
    }

    /// Queues an addition (the slot is not in the structure, or its removal
    /// is queued).
    pub fn queue_add(&mut self, slot: u32) {
        self.add_pos[slot as usize] = self.add.len() as u32;
        self.add.push(slot);
    }

    /// Queues a removal; `present` says whether the structure holds the
    /// slot now (else it can only be queued for addition).
    pub fn queue_remove(&mut self, slot: u32, present: bool) {
        let s = slot as usize;
        let k = self.add_pos[s];
        if k != NOT_QUEUED {
            // Added since the last update: just forget the addition.
            self.add.swap_remove(k as usize);
            if let Some(&moved) = self.add.get(k as usize) {
                self.add_pos[moved as usize] = k;
            }
            self.add_pos[s] = NOT_QUEUED;
        } else if present && !self.removing[s] {
            self.removing[s] = true;
            self.remove.push(slot);
        }
        if self.moved_flag[s] {
            self.moved_flag[s] = false;
            self.moved.retain(|&m| m != slot);
        }
    }

    /// Queues a move once per update, for a slot the structure holds and
    /// will still hold when moves are applied.
    pub fn queue_moved(&mut self, slot: u32, present: bool) {
        let s = slot as usize;
        if present && !self.removing[s] && !self.moved_flag[s] {
            self.moved_flag[s] = true;
            self.moved.push(slot);
        }
    }

    /// Whether anything waits for the next update.
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.remove.is_empty() && self.moved.is_empty()
    }

    /// Forgets the applied removals.
    pub fn clear_removed(&mut self) {
        for &s in &self.remove {
            self.removing[s as usize] = false;
        }
        self.remove.clear();
    }

    /// Forgets the applied moves.
    pub fn clear_moved(&mut self) {
        for &s in &self.moved {
            self.moved_flag[s as usize] = false;
        }
        self.moved.clear();
    }

    /// Forgets the applied additions.
    pub fn clear_added(&mut self) {
        for &s in &self.add {
            self.add_pos[s as usize] = NOT_QUEUED;
        }
        self.add.clear();
    }
}

/// The maintenance interface every broad phase implements; pairs are then
/// read with [`BroadPhase::report`].
pub(crate) trait BroadPhase {
    /// A body entered the world (its AABB is in `bodies`); applied at the
    /// next [`update`](BroadPhase::update), in one batch.
    fn add(&mut self, slot: u32);
    /// A body left the world; applied at the next update, in one batch.
    fn remove(&mut self, slot: u32);
    /// A body's AABB changed.
    fn moved(&mut self, slot: u32);
    /// Applies the queued additions, removals and moves.
    fn update(&mut self, ctx: &StepCtx, bodies: &Bodies) -> PairSearch;
    /// Whether additions, removals or moves wait for the next update.
    fn has_pending(&self) -> bool {
        false
    }
    /// Writes the overlapping pairs that pass the filters, sorted.
    fn report(
        &mut self,
        ctx: &StepCtx,
        bodies: &Bodies,
        filter: &LayerFilter,
        out: &mut Vec<BodyPair>,
        max_pairs: usize,
    ) -> PairSearch;
}

/// Which broad phase a world uses (fixed at creation).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum BroadPhaseKind {
    /// Incremental sweep and prune: best when most bodies sleep or rest.
    #[default]
    Sap,
    /// Multi box pruning over a grid of regions: best when most bodies move
    /// and for bulk insertion.
    Mbp(mbp::MbpSettings),
    /// MBP over a `subdivisions × subdivisions` grid (`1..=16`) fitted to
    /// the bodies' bounds at the first update, and fitted again when more
    /// than 64 bodies (or 1 in 64) are outside it: MBP without knowing the
    /// world's bounds. No region calls.
    MbpFitted { subdivisions: u32 },
    /// SAP while fewer than [`MBP_FROM_MOVING`](crate::MBP_FROM_MOVING)
    /// bodies are awake, MBP over a fitted 8 × 8 grid from there, back to
    /// SAP below [`SAP_BELOW_MOVING`](crate::SAP_BELOW_MOVING); chosen at
    /// each collision step from the awake count (deterministic), the same
    /// pairs either way. Both structures are allocated. No region calls.
    Auto,
    /// All pairs, O(N²): the reference the others are tested against.
    BruteForce,
}

/// The world's broad phase (enum dispatch: no virtual calls on the hot path).
pub(crate) enum AnyBroadPhase {
    Sap(Box<sap::Sap>),
    Mbp(Box<mbp::Mbp>),
    Auto(Box<auto::AutoBroadPhase>),
    BruteForce(BruteForce),
}

impl AnyBroadPhase {
    pub fn new(
        kind: &BroadPhaseKind,
        max_bodies: usize,
        max_pairs: usize,
    ) -> crate::error::Result<Self> {
        // Persistent sets hold every overlap (also sleeping and static
        // ones), so they get twice the reported-pair capacity.
        let persistent = max_pairs.saturating_mul(2);
        Ok(match kind {
            BroadPhaseKind::Sap => Self::Sap(Box::new(sap::Sap::new(max_bodies, persistent))),
            BroadPhaseKind::Mbp(s) => {
                Self::Mbp(Box::new(mbp::Mbp::new(s, max_bodies, persistent)?))
            }
            BroadPhaseKind::MbpFitted { subdivisions } => Self::Mbp(Box::new(mbp::Mbp::fitted(
                *subdivisions,
                max_bodies,
                persistent,
            )?)),
            BroadPhaseKind::Auto => {
                Self::Auto(Box::new(auto::AutoBroadPhase::new(max_bodies, persistent)?))
            }
            BroadPhaseKind::BruteForce => Self::BruteForce(BruteForce),
        })
    }

    /// The MBP in use, if any (for region calls and out-of-bounds lists).
    pub fn mbp(&self) -> Option<&mbp::Mbp> {
        match self {
            Self::Mbp(m) => Some(m),
            Self::Auto(a) if a.on_mbp() => Some(a.mbp()),
            _ => None,
        }
    }

    fn inner(&mut self) -> &mut dyn BroadPhase {
        match self {
            Self::Sap(b) => b.as_mut(),
            Self::Mbp(b) => b.as_mut(),
            Self::Auto(b) => b.as_mut(),
            Self::BruteForce(b) => b,
        }
    }

    pub fn add(&mut self, slot: u32) {
        self.inner().add(slot)
    }
    pub fn remove(&mut self, slot: u32) {
        self.inner().remove(slot)
    }
    pub fn moved(&mut self, slot: u32) {
        self.inner().moved(slot)
    }
    pub fn update(&mut self, ctx: &StepCtx, bodies: &Bodies) -> PairSearch {
        self.inner().update(ctx, bodies)
    }
    pub fn has_pending(&self) -> bool {
        match self {
            Self::Sap(b) => b.has_pending(),
            Self::Mbp(b) => b.has_pending(),
            Self::Auto(b) => b.has_pending(),
            Self::BruteForce(b) => b.has_pending(),
        }
    }
    pub fn report(
        &mut self,
        ctx: &StepCtx,
        bodies: &Bodies,
        filter: &LayerFilter,
        out: &mut Vec<BodyPair>,
        max_pairs: usize,
    ) -> PairSearch {
        self.inner().report(ctx, bodies, filter, out, max_pairs)
    }
}

/// The brute-force finder behind the trait: nothing to maintain.
pub(crate) struct BruteForce;

impl BroadPhase for BruteForce {
    fn add(&mut self, _slot: u32) {}
    fn remove(&mut self, _slot: u32) {}
    fn moved(&mut self, _slot: u32) {}
    fn update(&mut self, _ctx: &StepCtx, _bodies: &Bodies) -> PairSearch {
        PairSearch::default()
    }
    fn report(
        &mut self,
        _ctx: &StepCtx,
        bodies: &Bodies,
        filter: &LayerFilter,
        out: &mut Vec<BodyPair>,
        max_pairs: usize,
    ) -> PairSearch {
        brute_force::find_pairs_brute_force(bodies, filter, out, max_pairs)
    }
}

/// Turns a pair set's keys into the sorted, filtered pair list, with
/// preallocated scratch (a pair set holds up to twice `max_body_pairs`, so
/// the filtered keys are gathered here before at most `max_pairs` go out).
///
/// A parallel bucket sort: keys are bucketed by their lower slot into
/// [`SORT_BUCKETS`] ranges of equal width while they are filtered, then the
/// buckets are sorted independently. Keys are unique, so the result is the
/// one sorted order whatever ran where.
pub(crate) struct KeyReport {
    keys: Vec<u64>,
    /// Per filter chunk and bucket: passing keys, then each chunk's first
    /// output index in each bucket.
    counts: Vec<u32>,
    /// Where each bucket starts in `keys` (plus the end).
    bucket_start: Vec<u32>,
}

/// Keys filtered per report job.
const REPORT_CHUNK: usize = 2048;
/// Buckets of the pair sort. Pairs spread over the slots about evenly, so
/// 256 buckets leave ~85 keys each in rain (20k pairs), sorted with a few
/// hundred compares; the serial prefix sum over chunks × buckets stays a
/// few microseconds.
const SORT_BUCKETS: usize = 256;
/// Buckets sorted per job.
const BUCKETS_PER_JOB: usize = 32;

impl KeyReport {
    pub fn new(capacity: usize) -> Self {
        Self {
            keys: Vec::with_capacity(capacity),
            counts: Vec::with_capacity(capacity.div_ceil(REPORT_CHUNK) * SORT_BUCKETS),
            bucket_start: Vec::with_capacity(SORT_BUCKETS + 1),
        }
    }

    /// Writes the keys that pass the filters to `out` as pairs in (a, b)
    /// order, at most `max_pairs`: the highest pairs are the ones dropped,
    /// the oracle's rule.
    pub fn report(
        &mut self,
        ctx: &StepCtx,
        keys: &[u64],
        bodies: &Bodies,
        filter: &LayerFilter,
        out: &mut Vec<BodyPair>,
        max_pairs: usize,
    ) -> PairSearch {
        let pass = |k: u64| reported(bodies, filter, (k >> 32) as usize, k as u32 as usize);
        // every key's lower slot is below the high-water mark
        let slots = bodies.slots.high_water().max(1) as u64;
        let bucket = |k: u64| ((k >> 32) * SORT_BUCKETS as u64 / slots) as usize;
        let chunk_range = |k: usize| k * REPORT_CHUNK..((k + 1) * REPORT_CHUNK).min(keys.len());
        let chunks = keys.len().div_ceil(REPORT_CHUNK);
        self.counts.clear();
        self.counts.resize(chunks * SORT_BUCKETS, 0);
        ctx.par_chunks_mut(
            "filter pairs",
            &mut self.counts,
            SORT_BUCKETS,
            |first, row| {
                for &key in &keys[chunk_range(first / SORT_BUCKETS)] {
                    if pass(key) {
                        row[bucket(key)] += 1;
                    }
                }
                0
            },
        );
        // Bucket-major prefix sum: chunk k's keys of bucket b go after
        // those of chunks before k, so each bucket keeps key-set order.
        self.bucket_start.clear();
        let mut total = 0u32;
        for b in 0..SORT_BUCKETS {
            self.bucket_start.push(total);
            for k in 0..chunks {
                let c = &mut self.counts[k * SORT_BUCKETS + b];
                let n = *c;
                *c = total;
                total += n;
            }
        }
        self.bucket_start.push(total);
        self.keys.clear();
        self.keys.resize(total as usize, 0);
        let dst = Disjoint::new(&mut self.keys);
        let counts = &self.counts;
        ctx.par_for("gather pairs", chunks, 1, |ks| {
            for k in ks {
                let mut next = [0u32; SORT_BUCKETS];
                next.copy_from_slice(&counts[k * SORT_BUCKETS..(k + 1) * SORT_BUCKETS]);
                for &key in keys[chunk_range(k)].iter().filter(|&&key| pass(key)) {
                    let b = bucket(key);
                    // SAFETY: the prefix sums give every (bucket, chunk) its
                    // own range of output indices.
                    unsafe { dst.set(next[b] as usize, key) };
                    next[b] += 1;
                }
            }
        });
        let starts = &self.bucket_start;
        ctx.par_for("sort pairs", SORT_BUCKETS, BUCKETS_PER_JOB, |bs| {
            for b in bs {
                // SAFETY: buckets are disjoint ranges of the output.
                unsafe { dst.slice_mut(starts[b] as usize, starts[b + 1] as usize) }
                    .sort_unstable();
            }
        });
        // key = a << 32 | b, so key order is pair order
        out.clear();
        let n = self.keys.len().min(max_pairs);
        out.extend(self.keys[..n].iter().map(|&k| BodyPair {
            a: (k >> 32) as u32,
            b: k as u32,
        }));
        PairSearch {
            dropped: (self.keys.len() - n) as u32,
            ..PairSearch::default()
        }
    }
}

/// Stable LSD radix sort of `v` by a `u64` key, 8 bits per pass, skipping
/// passes whose digit is the same for every item (keys built from slot
/// indices or encoded floats leave most of the 8 passes out). `tmp` is
/// scratch of the same capacity, so nothing is allocated in steady state.
/// Shared by the SAP's inserted endpoints and MBP's region lists.
pub(crate) fn radix_sort_by_key<T: Copy + Default>(
    v: &mut Vec<T>,
    tmp: &mut Vec<T>,
    key: impl Fn(&T) -> u64,
) {
    let mut counts = [0usize; 256];
    for pass in 0..8 {
        let shift = pass * 8;
        counts.fill(0);
        for x in v.iter() {
            counts[((key(x) >> shift) & 0xFF) as usize] += 1;
        }
        if counts.contains(&v.len()) {
            continue;
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            let n = *c;
            *c = sum;
            sum += n;
        }
        tmp.clear();
        tmp.resize(v.len(), T::default());
        for x in v.iter() {
            let d = ((key(x) >> shift) & 0xFF) as usize;
            tmp[counts[d]] = *x;
            counts[d] += 1;
        }
        core::mem::swap(v, tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_preserves_order_exactly() {
        let vals = [
            f32::MIN,
            -1e30,
            -1.5,
            -1e-40,
            -0.0,
            0.0,
            1e-40,
            1.0,
            1.0000001,
            3.4e38,
        ];
        for &a in &vals {
            for &b in &vals {
                assert_eq!(a <= b, encode(a) <= encode(b), "{a} {b}");
                assert_eq!(a <= b, min_key(a) < max_key(b), "{a} {b}");
            }
        }
    }

    #[test]
    fn radix_sort_sorts_pair_keys() {
        let mut x = 99u64;
        let mut v: Vec<u64> = (0..5000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                ((x >> 40) << 32) | ((x >> 8) & 0xFFFFF)
            })
            .collect();
        let mut expected = v.clone();
        expected.sort_unstable();
        radix_sort_by_key(&mut v, &mut Vec::new(), |&k| k);
        assert_eq!(v, expected);
    }

    #[test]
    fn layer_filter_is_symmetric() {
        let mut f = LayerFilter::default();
        f.set(3, 5, false);
        assert!(!f.collides(3, 5) && !f.collides(5, 3));
        assert!(f.collides(3, 3) && f.collides(5, 6));
        let mut n = LayerFilter::none();
        n.set(1, 2, true);
        assert!(n.collides(2, 1) && !n.collides(1, 1));
        assert_eq!(LayerFilter::from_rows(n.rows()), Some(n));
        let mut lopsided = [0u32; 32];
        lopsided[1] = 1 << 2;
        assert_eq!(LayerFilter::from_rows(lopsided), None);
    }
}
