//! Narrow phase: exact contact manifolds for the broad phase's candidate
//! pairs. Each pair writes its manifold into the preallocated slot of the same
//! index (no shared push, so the parallel loop needs no lock); the touching
//! slots are then compacted, keeping pair order. If more manifolds touch than
//! `max_contact_constraints`, the deepest are kept and the rest are counted as
//! dropped.
//!
//! With the body-pair cache on (`body_pair_cache.rs`), a pair first looks
//! for its slot of the last step (both pair lists are sorted: one binary
//! search per job, then a forward walk) and is collided only when the cache
//! cannot rebuild its manifold; this step's slots become the next step's
//! cache.

use crate::body::Bodies;
use crate::body_pair_cache::{carry, Apart, PairCacheTolerance, PairPoses, PairSlot, SlotManifold};
use crate::broadphase::BodyPair;
use crate::collide::box_box_sat::{sat_of_boxes, BoxPairs, Verdict};
use crate::collide::compound::collide_compound;
use crate::collide::surface::{collide_surface, SurfaceManifolds};
use crate::collide::{
    box_contact_or_edge, collide_in, ContactPoints, Obb, Placed, Points, MAX_POINTS,
};
use crate::disjoint::Disjoint;
use crate::jobs::StepCtx;
use crate::math::{rotate, Vec3};
use crate::shape::Shape;
use archipelago_simd::BUNDLE;
use core::sync::atomic::{AtomicU32, Ordering};

/// Candidate pairs per narrow-phase job: tens of microseconds, long enough
/// to hide the claim and, once the pairs apart by their bounding spheres
/// drop out (a quarter of rain's), to fill the 16-lane box bundles (32 left
/// them half empty: 5% more instructions on rain); short enough to
/// balance. At most 256: a job's pair index is a `u8`.
const PAIRS_PER_JOB: usize = 64;
/// A job's box–box pairs to collide are tested 16 lanes wide when there
/// are at least this many (fewer would leave most lanes idle; both paths
/// give the same verdicts).
const MIN_WIDE_BOX_PAIRS: usize = 4;
/// Room a job's extra list takes the first time one of its pairs touches
/// a mesh or height field with more than one manifold: two more per pair
/// (a body on a terrain has one to three), so it rarely grows after.
const EXTRAS_PER_JOB: usize = 2 * PAIRS_PER_JOB;
/// Slots per compaction job: whole collide jobs, so that a chunk's
/// manifold count is the sum of its jobs' counts.
const COMPACT_CHUNK: usize = 16 * PAIRS_PER_JOB;

/// One contact manifold between two bodies, as the solver and the contact
/// cache use it. Points are stored in each body's local frame so the position
/// solver can re-evaluate them after bodies move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Manifold {
    pub pair: BodyPair,
    /// World-space normal from body A to body B.
    pub normal: Vec3,
    pub count: u32,
    pub local_a: [Vec3; MAX_POINTS],
    pub local_b: [Vec3; MAX_POINTS],
    /// Separation of each point when found (negative: penetration).
    pub separation: [f32; MAX_POINTS],
    /// Accumulated normal impulse per point. Filled from the cache before
    /// solving (warm start), by the solver after.
    pub normal_impulse: [f32; MAX_POINTS],
    /// Accumulated friction impulse of the manifold, anchored at the centre
    /// of its points: tangent 1, tangent 2, twist about the normal.
    pub friction_impulse: [f32; 3],
    /// Either body is a sensor: reported, never solved.
    pub sensor: bool,
    /// The parts of A and of B the manifold's first contact came from (a
    /// compound's child, a surface's triangle; 0 for a whole shape).
    pub sub: [u32; 2],
}

impl Manifold {
    pub const EMPTY: Manifold = Manifold {
        pair: BodyPair { a: 0, b: 0 },
        normal: Vec3::ZERO,
        count: 0,
        local_a: [Vec3::ZERO; MAX_POINTS],
        local_b: [Vec3::ZERO; MAX_POINTS],
        separation: [0.0; MAX_POINTS],
        normal_impulse: [0.0; MAX_POINTS],
        friction_impulse: [0.0; 3],
        sensor: false,
        sub: [0; 2],
    };
}

/// Preallocated narrow-phase buffers.
pub(crate) struct NarrowPhase {
    /// One slot per candidate pair (len = max_body_pairs).
    slots: Vec<PairSlot>,
    /// The last step's slots and their pairs (the body-pair cache); empty
    /// while the cache is off.
    previous_slots: Vec<PairSlot>,
    previous_pairs: Vec<BodyPair>,
    /// Touching manifolds in pair order (capacity = max_contact_constraints).
    pub manifolds: Vec<Manifold>,
    /// Scratch for choosing the deepest manifolds on overflow.
    depth_order: Vec<(f32, u32)>,
    /// Output offset of each compaction chunk.
    chunk_start: Vec<u32>,
    max_manifolds: usize,
    /// Per job of [`PAIRS_PER_JOB`] pairs, what it found beside its slots.
    jobs: Vec<JobOutput>,
}

/// What a collide job hands to compaction beside its slots.
struct JobOutput {
    /// The manifolds of its shape–surface pairs beyond each pair's first,
    /// in pair order (see [`PairSlot::extra`]). Empty until a world has
    /// meshes or height fields; each grows to its high-water mark, then
    /// allocates no more.
    extra: Vec<SlotManifold>,
    /// Its manifolds in all (touching slots and extras), counted while
    /// its slots are still in cache: compaction needs no pass of its own
    /// over every slot to place its chunks' output.
    manifolds: u32,
}

#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct NarrowStats {
    pub dropped_manifolds: u32,
    /// Pairs whose manifold the body-pair cache rebuilt.
    pub cache_hits: u32,
    /// Pairs collided (all the others while the cache is off).
    pub cache_misses: u32,
    /// Pairs whose bounding spheres were apart (see [`bounds_apart`]).
    pub apart_by_bounds: u32,
    /// Pairs a joint keeps from colliding.
    pub jointed: u32,
}

impl NarrowPhase {
    pub fn new(max_body_pairs: usize, max_contact_constraints: usize) -> Self {
        Self {
            slots: vec![PairSlot::EMPTY; max_body_pairs],
            previous_slots: vec![PairSlot::EMPTY; max_body_pairs],
            previous_pairs: Vec::with_capacity(max_body_pairs),
            manifolds: Vec::with_capacity(max_contact_constraints),
            depth_order: Vec::with_capacity(max_body_pairs),
            chunk_start: Vec::with_capacity(max_body_pairs / COMPACT_CHUNK + 2),
            max_manifolds: max_contact_constraints,
            jobs: (0..max_body_pairs.div_ceil(PAIRS_PER_JOB))
                .map(|_| JobOutput {
                    extra: Vec::new(),
                    manifolds: 0,
                })
                .collect(),
        }
    }

    /// Manifolds of `pairs` (sorted), through the body-pair cache when
    /// `cache` gives its tolerance; the pairs in `no_contact` (sorted:
    /// bodies a joint keeps from colliding) get none.
    // Never inlined: instruction counts toggle collection on it.
    #[inline(never)]
    pub fn run(
        &mut self,
        ctx: &StepCtx,
        bodies: &Bodies,
        pairs: &[BodyPair],
        no_contact: &[BodyPair],
        max_separation: f32,
        cache: Option<PairCacheTolerance>,
    ) -> NarrowStats {
        if cache.is_none() {
            self.previous_pairs.clear();
        }
        // The same pairs as last step (a settled scene): each slot still
        // holds its pair's last result, and a hit only refreshes it in
        // place instead of copying it across.
        let in_place = cache.is_some() && pairs == &self.previous_pairs[..];
        if in_place {
            core::mem::swap(&mut self.slots, &mut self.previous_slots);
        }
        let slots = &mut self.slots[..pairs.len()];
        let previous_pairs = if in_place {
            &[][..]
        } else {
            &self.previous_pairs[..]
        };
        let previous_slots = &self.previous_slots[..previous_pairs.len()];
        // One add per job: a sum, the same whatever order jobs finish in.
        let apart_by_bounds = AtomicU32::new(0);
        let jointed = AtomicU32::new(0);
        let jobs = Disjoint::new(&mut self.jobs[..pairs.len().div_ceil(PAIRS_PER_JOB)]);
        let hits = ctx.par_chunks_mut("collide pairs", slots, PAIRS_PER_JOB, |first, chunk| {
            let pairs = &pairs[first..first + chunk.len()];
            let job = first / PAIRS_PER_JOB;
            // SAFETY: job `job` owns its pairs' chunk, and with it the one
            // output of the same index.
            let output = unsafe { &mut jobs.slice_mut(job, job + 1)[0] };
            let extra = &mut output.extra;
            extra.clear();
            // a multi-manifold pair's output, and the scratch a compound's
            // child gathers its surface contacts into (each made once a job,
            // on the stack, the first time a pair needs it)
            let mut surface_out: Option<SurfaceManifolds> = None;
            let mut surface_scratch: Option<SurfaceManifolds> = None;
            let mut j = previous_pairs.partition_point(|p| *p < pairs[0]);
            // the pairs joints keep apart, walked forward like the cache's
            let mut x = no_contact.partition_point(|p| *p < pairs[0]);
            let (mut hits, mut apart, mut joined) = (0, 0, 0);
            // Box–box pairs to collide wait in lanes for the wide test
            // (set up on the job's first such pair: a settled job has none).
            let mut waiting: Option<(BoxPairs, [(u8, PairPoses); BUNDLE])> = None;
            let cached = cache.is_some();
            for (k, &pair) in pairs.iter().enumerate() {
                while x < no_contact.len() && no_contact[x] < pair {
                    x += 1;
                }
                if x < no_contact.len() && no_contact[x] == pair {
                    chunk[k].not_collided();
                    joined += 1;
                    continue;
                }
                if bounds_apart(bodies, pair, max_separation) {
                    chunk[k].not_collided();
                    apart += 1;
                    continue;
                }
                let poses = PairPoses::read(bodies, pair, cached);
                if let Some(tol) = &cache {
                    // The slot holds the pair's last record (in place), or
                    // takes it over from the last step's slots on a hit.
                    let hit = if in_place {
                        chunk[k].serves(&poses, tol)
                    } else {
                        while j < previous_pairs.len() && previous_pairs[j] < pair {
                            j += 1;
                        }
                        let found = j < previous_pairs.len()
                            && previous_pairs[j] == pair
                            && previous_slots[j].serves(&poses, tol);
                        if found {
                            chunk[k].copy_from(&previous_slots[j]);
                        }
                        found
                    };
                    if hit {
                        carry(&mut chunk[k], &poses, is_sensor(bodies, pair));
                        hits += 1;
                        continue;
                    }
                }
                let (sa, sb) = (bodies.shape[pair.a as usize], bodies.shape[pair.b as usize]);
                if sa.is_multi() || sb.is_multi() {
                    let out = surface_out.get_or_insert_with(SurfaceManifolds::new);
                    let sensor = is_sensor(bodies, pair);
                    collide_pair_in_parts(
                        bodies,
                        pair,
                        &poses,
                        max_separation,
                        out,
                        &mut surface_scratch,
                    );
                    let first = (out.count > 0).then(|| out.list[0]);
                    record(&mut chunk[k], &poses, sensor, first, Apart::UNKNOWN, false);
                    chunk[k].manifold.sub = out.sub[0];
                    if out.count > 1 && extra.capacity() == 0 {
                        // once per job: room for two manifolds a pair
                        extra.reserve(EXTRAS_PER_JOB);
                    }
                    for (c, &sub) in out.list[1..out.count.max(1)].iter().zip(&out.sub[1..]) {
                        extra.push(SlotManifold {
                            sub,
                            ..slot_manifold(c, &poses, sensor)
                        });
                    }
                    chunk[k].extra = out.count.saturating_sub(1) as u8;
                    continue;
                }
                if let (Shape::Box { half_extents: ha }, Shape::Box { half_extents: hb }) = (sa, sb)
                {
                    let (lanes, entries) = waiting
                        .get_or_insert_with(|| (BoxPairs::new(), [(0, PairPoses::ZERO); BUNDLE]));
                    entries[lanes.len] = (k as u8, poses);
                    lanes.push(poses.pos_a, poses.rot_a, ha, poses.pos_b, poses.rot_b, hb);
                    if lanes.is_full() {
                        collide_boxes(lanes, entries, chunk, pairs, bodies, max_separation, cached);
                    }
                    continue;
                }
                let a = Placed {
                    shape: sa,
                    pos: poses.pos_a,
                    rot: poses.rot_a,
                };
                let b = Placed {
                    shape: sb,
                    pos: poses.pos_b,
                    rot: poses.rot_b,
                };
                let c = collide_in(&a, &b, max_separation, &bodies.shapes);
                let sensor = is_sensor(bodies, pair);
                record(&mut chunk[k], &poses, sensor, c, Apart::UNKNOWN, cached);
            }
            if let Some((lanes, entries)) = &mut waiting {
                collide_boxes(lanes, entries, chunk, pairs, bodies, max_separation, cached);
            }
            output.manifolds = chunk
                .iter()
                .map(|s| u32::from(s.manifold.count > 0) + u32::from(s.extra))
                .sum();
            apart_by_bounds.fetch_add(apart, Ordering::Relaxed);
            jointed.fetch_add(joined, Ordering::Relaxed);
            hits
        });
        let mut stats = self.compact(ctx, pairs);
        stats.cache_hits = hits;
        stats.apart_by_bounds = apart_by_bounds.into_inner();
        stats.jointed = jointed.into_inner();
        stats.cache_misses = pairs.len() as u32 - hits - stats.apart_by_bounds - stats.jointed;
        if cache.is_some() {
            core::mem::swap(&mut self.slots, &mut self.previous_slots);
            if !in_place {
                self.previous_pairs.clear();
                self.previous_pairs.extend_from_slice(pairs);
            }
        }
        stats
    }

    /// Gathers the touching slots into `manifolds`, in pair order (a
    /// slot's extra manifolds right after its own): a prefix sum of the
    /// collide jobs' counts gives each chunk its output range, and the
    /// chunks copy in parallel.
    fn compact(&mut self, ctx: &StepCtx, pairs: &[BodyPair]) -> NarrowStats {
        let n = pairs.len();
        let slots = &self.slots[..n];
        let jobs = &self.jobs[..n.div_ceil(PAIRS_PER_JOB)];
        let chunks = n.div_ceil(COMPACT_CHUNK);
        self.chunk_start.clear();
        self.chunk_start.push(0);
        let mut at = 0;
        for chunk in jobs.chunks(COMPACT_CHUNK / PAIRS_PER_JOB) {
            at += chunk.iter().map(|j| j.manifolds).sum::<u32>();
            self.chunk_start.push(at);
        }
        let touching = self.chunk_start[chunks] as usize;
        if touching <= self.max_manifolds {
            // Only a longer list than last step's writes new slots here.
            self.manifolds.resize(touching, Manifold::EMPTY);
            let out = Disjoint::new(&mut self.manifolds);
            let starts = &self.chunk_start;
            ctx.par_for("copy manifolds", chunks, 1, |ks| {
                for k in ks {
                    let range = k * COMPACT_CHUNK..((k + 1) * COMPACT_CHUNK).min(n);
                    // SAFETY: the prefix sums give every chunk its own
                    // output range.
                    let dst = unsafe { out.slice_mut(starts[k] as usize, starts[k + 1] as usize) };
                    let mut d = 0;
                    for_each_manifold(slots, jobs, pairs, range, |m| {
                        dst[d] = m;
                        d += 1;
                    });
                }
            });
            return NarrowStats::default();
        }
        self.manifolds.clear();
        // Overflow: keep the deepest `max_manifolds` (ties broken by their
        // place in pair order, so the choice is deterministic), then
        // restore pair order.
        self.depth_order.clear();
        let mut at = 0u32;
        for_each_manifold(slots, jobs, pairs, 0..n, |m| {
            let deepest = m.separation[..m.count as usize]
                .iter()
                .copied()
                .fold(f32::INFINITY, f32::min);
            self.depth_order.push((deepest, at));
            at += 1;
        });
        let keep = self.max_manifolds;
        self.depth_order
            .select_nth_unstable_by(keep - 1, |x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let kept = &mut self.depth_order[..keep];
        kept.sort_unstable_by_key(|&(_, k)| k);
        let (mut at, mut next) = (0u32, 0);
        let manifolds = &mut self.manifolds;
        for_each_manifold(slots, jobs, pairs, 0..n, |m| {
            if next < kept.len() && kept[next].1 == at {
                manifolds.push(m);
                next += 1;
            }
            at += 1;
        });
        NarrowStats {
            dropped_manifolds: (touching - keep) as u32,
            ..NarrowStats::default()
        }
    }
}

/// Every manifold of the slots in `range`, in order: a touching slot's
/// own, then its extras (from its job's list).
fn for_each_manifold(
    slots: &[PairSlot],
    jobs: &[JobOutput],
    pairs: &[BodyPair],
    range: core::ops::Range<usize>,
    mut f: impl FnMut(Manifold),
) {
    // the first extra of the range's first job that belongs to the range
    let mut job = range.start / PAIRS_PER_JOB;
    let job_start = job * PAIRS_PER_JOB;
    let mut cursor: usize = slots[job_start..range.start]
        .iter()
        .map(|s| s.extra as usize)
        .sum();
    for k in range {
        if k / PAIRS_PER_JOB != job {
            job = k / PAIRS_PER_JOB;
            cursor = 0;
        }
        let s = &slots[k];
        if s.manifold.count > 0 {
            f(s.manifold.manifold_of(pairs[k]));
        }
        for e in &jobs[job].extra[cursor..cursor + s.extra as usize] {
            f(e.manifold_of(pairs[k]));
        }
        cursor += s.extra as usize;
    }
}

impl crate::snapshot::codec::Snap for Manifold {
    fn put(&self, w: &mut crate::snapshot::codec::Writer) {
        use crate::snapshot::codec::put_first;
        w.put(&self.pair);
        w.put(&self.normal);
        w.u32(self.count);
        put_first(w, &self.local_a, self.count);
        put_first(w, &self.local_b, self.count);
        put_first(w, &self.separation, self.count);
        put_first(w, &self.normal_impulse, self.count);
        w.put(&self.friction_impulse);
        w.put(&self.sensor);
        w.put(&self.sub);
    }
    fn get(r: &mut crate::snapshot::codec::Reader) -> crate::error::Result<Self> {
        use crate::snapshot::codec::{get_count, get_first};
        let pair = r.get()?;
        let normal = r.get()?;
        let count = get_count(r, MAX_POINTS)?;
        Ok(Manifold {
            pair,
            normal,
            count,
            local_a: get_first(r, count)?,
            local_b: get_first(r, count)?,
            separation: get_first(r, count)?,
            normal_impulse: get_first(r, count)?,
            friction_impulse: r.get()?,
            sensor: r.get()?,
            sub: r.get()?,
        })
    }
}

impl NarrowPhase {
    /// Snapshot section: the body-pair cache (last step's pairs and their
    /// slots) and the last manifolds (what `contacts` reports).
    pub fn save_state(&self, w: &mut crate::snapshot::codec::Writer) {
        w.items(&self.previous_pairs);
        w.items(&self.previous_slots[..self.previous_pairs.len()]);
        w.items(&self.manifolds);
    }

    /// Reads [`save_state`](Self::save_state)'s section, into `dst` if
    /// given. Pairs must be sorted and distinct (the cache is searched by
    /// pair) and manifold counts at most `MAX_POINTS`.
    pub fn restore_state(
        r: &mut crate::snapshot::codec::Reader,
        mut dst: Option<&mut Self>,
        caps: &crate::settings::Capacities,
    ) -> crate::error::Result<()> {
        use crate::error::PhysicsError::InvalidSnapshot;
        let pairs_at = r.clone();
        r.items_into::<BodyPair>(
            caps.max_body_pairs,
            dst.as_deref_mut().map(|n| &mut n.previous_pairs),
        )?;
        // the pairs again, to check their order without a copy
        let mut check = pairs_at;
        let n = check.len(caps.max_body_pairs)?;
        let mut last: Option<BodyPair> = None;
        for _ in 0..n {
            let p: BodyPair = check.get()?;
            if p.a >= p.b || last.is_some_and(|l| l >= p) {
                return Err(InvalidSnapshot);
            }
            last = Some(p);
        }
        if r.len(n)? != n {
            return Err(InvalidSnapshot);
        }
        for k in 0..n {
            let slot: PairSlot = r.get()?;
            if slot.manifold.count as usize > MAX_POINTS {
                return Err(InvalidSnapshot);
            }
            if let Some(np) = dst.as_deref_mut() {
                np.previous_slots[k] = slot;
            }
        }
        let m = r.len(caps.max_contact_constraints)?;
        if let Some(np) = dst.as_deref_mut() {
            np.manifolds.clear();
        }
        for _ in 0..m {
            let man: Manifold = r.get()?;
            if man.count as usize > MAX_POINTS || man.pair.a >= man.pair.b {
                return Err(InvalidSnapshot);
            }
            if let Some(np) = dst.as_deref_mut() {
                np.manifolds.push(man);
            }
        }
        Ok(())
    }
}

/// The pair's bounding spheres are more than `max_separation` apart, so
/// its shapes are too: no pair function would report a contact (each omits
/// points farther apart than that), and the pair needs neither a collision
/// nor the cache. Rotated boxes have loose bounding boxes, so a good part
/// of the broad phase's pairs of tumbling boxes end here (rain).
#[inline]
fn bounds_apart(bodies: &Bodies, pair: BodyPair, max_separation: f32) -> bool {
    let (a, b) = (pair.a as usize, pair.b as usize);
    let d = bodies.pos(b) - bodies.pos(a);
    let reach = bodies.bounding_radius[a] + bodies.bounding_radius[b] + max_separation;
    d.length_squared() > reach * reach
}

fn is_sensor(bodies: &Bodies, pair: BodyPair) -> bool {
    bodies.is_sensor(pair.a as usize) || bodies.is_sensor(pair.b as usize)
}

/// The box–box pairs waiting in `lanes` (`waiting[lane]` = their index in
/// the job): the separating-axis test 16 lanes wide (one by one when there
/// are few), then the contact of each pair that touches. Empties `lanes`.
fn collide_boxes(
    lanes: &mut BoxPairs,
    waiting: &[(u8, PairPoses); BUNDLE],
    slots: &mut [PairSlot],
    pairs: &[BodyPair],
    bodies: &Bodies,
    max_separation: f32,
    cached: bool,
) {
    let n = lanes.len;
    let wide = (n >= MIN_WIDE_BOX_PAIRS).then(|| lanes.test(max_separation));
    for (lane, (k, p)) in waiting[..n].iter().enumerate() {
        let k = *k as usize;
        let (ha, hb) = lanes.half_extents(lane);
        let boxes = || {
            (
                Obb::new(p.pos_a, p.rot_a, ha),
                Obb::new(p.pos_b, p.rot_b, hb),
            )
        };
        // The wide test's lane, or the pair's own test (whose boxes its
        // contact then reuses).
        let (sat, tested) = match &wide {
            Some(wide) => (wide.lane(lane), None),
            None => {
                let (a, b) = boxes();
                (sat_of_boxes(&a, &b, max_separation), Some((a, b)))
            }
        };
        match sat.verdict() {
            Verdict::Separated => {
                // (Only the cache reads how far apart.)
                let apart = if cached {
                    let (face_a, face_b) = sat.face_separations();
                    let b_in_a = p.relative.position;
                    Apart::of_boxes(face_a, face_b, max_separation, ha, hb, b_in_a)
                } else {
                    Apart::UNKNOWN
                };
                record(&mut slots[k], p, false, None, apart, cached);
            }
            Verdict::Touching(f) => {
                let (a, b) = tested.unwrap_or_else(boxes);
                let c = box_contact_or_edge(&a, &b, &sat, f, max_separation);
                let sensor = is_sensor(bodies, pairs[k]);
                record(&mut slots[k], p, sensor, c, Apart::UNKNOWN, cached);
            }
        }
    }
    lanes.len = 0;
}

/// Writes a pair's collision result into its slot, with what the body-pair
/// cache will read (the pose it was found at, and for a pair that did not
/// touch how far apart it was) when `cached`. A slot that did not touch
/// keeps only its count (0); the rest of its manifold is never read.
fn record(
    slot: &mut PairSlot,
    poses: &PairPoses,
    sensor: bool,
    contact: Option<ContactPoints>,
    apart: Apart,
    cached: bool,
) {
    slot.recorded = cached;
    slot.extra = 0;
    if cached {
        slot.pose = poses.relative;
        slot.generation = poses.generation;
        slot.apart = apart;
    }
    let Some(c) = contact else {
        slot.manifold.count = 0;
        return;
    };
    slot.normal_a = rotate(poses.inv_rot_a, c.normal);
    write_manifold(&mut slot.manifold, &c, poses, sensor);
}

/// A found contact as a slot's manifold: points in each body's frame.
fn slot_manifold(c: &ContactPoints, poses: &PairPoses, sensor: bool) -> SlotManifold {
    let mut m = SlotManifold::EMPTY;
    write_manifold(&mut m, c, poses, sensor);
    m
}

fn write_manifold(m: &mut SlotManifold, c: &ContactPoints, poses: &PairPoses, sensor: bool) {
    match &c.points {
        // Written field by field: the whole manifold is set, once.
        Points::Local(l) => {
            m.normal = c.normal;
            m.count = c.count as u32;
            m.sensor = sensor;
            m.local_a = l.on_a;
            m.local_b = l.on_b;
            m.separation = l.separation;
            m.sub = [0; 2];
        }
        Points::World { on_a, on_b } => {
            *m = SlotManifold {
                normal: c.normal,
                count: c.count as u32,
                sensor,
                ..SlotManifold::EMPTY
            };
            let inv_b = poses.rot_b.conjugate();
            for k in 0..c.count {
                m.local_a[k] = rotate(poses.inv_rot_a, on_a[k] - poses.pos_a);
                m.local_b[k] = rotate(inv_b, on_b[k] - poses.pos_b);
                m.separation[k] = c.separation(k);
            }
        }
    }
}

/// The manifolds of a pair one of whose bodies is a mesh, a height field
/// or a compound, normal from A to B, into `out`. The pair goes to the
/// part colliders in shape-kind order (a compound before a surface, any
/// convex shape before both) and the result is turned back. The first
/// body's velocity relative to the second steers a surface's active-edge
/// rule. `scratch` (made on first use) is a compound's gathering space
/// for a child against a surface.
fn collide_pair_in_parts(
    bodies: &Bodies,
    pair: BodyPair,
    poses: &PairPoses,
    max_separation: f32,
    out: &mut SurfaceManifolds,
    scratch: &mut Option<SurfaceManifolds>,
) {
    let (a, b) = (pair.a as usize, pair.b as usize);
    let placed_a = Placed {
        shape: bodies.shape[a],
        pos: poses.pos_a,
        rot: poses.rot_a,
    };
    let placed_b = Placed {
        shape: bodies.shape[b],
        pos: poses.pos_b,
        rot: poses.rot_b,
    };
    let swap = placed_a.shape.kind() > placed_b.shape.kind();
    let (first, second, f, s) = if swap {
        (&placed_b, &placed_a, b, a)
    } else {
        (&placed_a, &placed_b, a, b)
    };
    let motion = bodies.lin_vel(f) - bodies.lin_vel(s);
    let m = max_separation;
    if matches!(first.shape, Shape::Compound(_)) || matches!(second.shape, Shape::Compound(_)) {
        let scratch = scratch.get_or_insert_with(SurfaceManifolds::new);
        collide_compound(first, second, m, &bodies.shapes, motion, out, scratch);
    } else {
        collide_surface(first, second, m, &bodies.shapes, motion, 0, out);
    }
    if swap {
        for c in &mut out.list[..out.count] {
            *c = c.flipped();
        }
        for sub in &mut out.sub[..out.count] {
            sub.swap(0, 1);
        }
    }
}
