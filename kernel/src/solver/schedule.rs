//! The solver's job queue: one solve (velocity or position) as stages and
//! packs, run on all workers.
//!
//! Large islands come first, as chains of stages (one stage per split per
//! iteration, a barrier between consecutive stages of a chain); each worker
//! claims batches from its home range of a stage, then steals from the
//! others'. Small islands are packed into jobs (`layout.rs`: at least 128
//! constraints, coloured) taken from a second counter, first by workers
//! that would otherwise wait at a barrier (Jolt's longest job first, with
//! the waiting time filled).
//!
//! A worker waits at a stage only after every batch of the stage before it
//! was claimed, and claimed batches are being run by workers that wait for
//! nothing later: the loop cannot deadlock however many workers the pool
//! has, however many of its tasks one thread ends up running, or however
//! the OS schedules them. A batch that panics raises the step's abort flag,
//! and waiting workers give up (`jobs.rs`).

use super::layout::{Layout, Slots};
use super::splitter::NON_PARALLEL_SPLIT;
use crate::jobs::{backoff, claim_homes, StepCtx};
use crate::trace::{SectionKind, PACK_CHAIN_BASE};
use archipelago_layout::CachePadded;
use archipelago_simd::LANES;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

const NO_STAGE: u32 = u32::MAX;

/// Bundles per claimed batch of a parallel split: 32 constraints, a
/// couple of microseconds wide, long enough that the claim is noise and
/// short enough to balance 2–16 workers.
pub(crate) const BUNDLES_PER_BATCH: u32 = 2;

/// One split of one large island in one iteration: `batches` batches of
/// [`BUNDLES_PER_BATCH`] bundles, the contact bundles' batches first, then
/// the joint bundles' (one batch with all of it for the non-parallel
/// split), runnable once stage `dep` of the same chain is done.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stage {
    /// Its slots (`layout.rs`).
    pub items: Slots,
    pub batches: u32,
    /// Batches of contact bundles (the first ones).
    pub contact_batches: u32,
    pub dep: u32,
    /// Index of the split island (its chain in traces).
    pub chain: u32,
    /// Iteration number within the solve (0 is the warm start for the
    /// velocity solve).
    pub iteration: u32,
    pub non_parallel: bool,
}

/// The job queue of one solve (velocity or position).
pub(crate) struct Schedule {
    stages: Vec<Stage>,
    done: Vec<CachePadded<AtomicU32>>,
    /// Per stage and worker: batches claimed from that worker's home range.
    claims: Vec<CachePadded<AtomicUsize>>,
    /// Packs of small islands (`layout.rs`), run by index.
    packs: u32,
    next_pack: CachePadded<AtomicU32>,
    /// Per pack: its contact and joint slots (for the bytes in traces).
    pack_slots: Vec<(u32, u32)>,
    /// Passes per solve.
    iterations: u32,
}

/// Bytes one contact slot and one joint slot stream per pass (traces'
/// estimate for the bandwidth ceiling, see `TraceEvent::bytes`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotBytes {
    pub contact: u64,
    pub joint: u64,
}

impl Schedule {
    pub fn new() -> Self {
        Self {
            stages: Vec::new(),
            done: Vec::new(),
            claims: Vec::new(),
            packs: 0,
            next_pack: CachePadded::new(AtomicU32::new(0)),
            pack_slots: Vec::new(),
            iterations: 0,
        }
    }

    /// Lays out `iterations` passes over every split island, then packs the
    /// small islands.
    pub fn build(&mut self, layout: &Layout, iterations: u32) {
        self.stages.clear();
        let per_batch = BUNDLES_PER_BATCH * LANES as u32;
        for (chain, splits) in layout.splits.iter().enumerate() {
            let mut dep = NO_STAGE;
            for iteration in 0..iterations {
                for (s, &items) in splits.iter().enumerate() {
                    if items.is_empty() {
                        continue;
                    }
                    let non_parallel = s == NON_PARALLEL_SPLIT;
                    let count = |(start, end): (u32, u32)| (end - start).div_ceil(per_batch);
                    let (contact_batches, batches) = if non_parallel {
                        (1, 1)
                    } else {
                        let c = count(items.contacts);
                        (c, c + count(items.joints))
                    };
                    self.stages.push(Stage {
                        items,
                        batches,
                        contact_batches,
                        dep,
                        chain: chain as u32,
                        iteration,
                        non_parallel,
                    });
                    dep = (self.stages.len() - 1) as u32;
                }
            }
        }
        while self.done.len() < self.stages.len() {
            self.done.push(CachePadded::new(AtomicU32::new(0)));
        }
        self.packs = layout.packs.len() as u32;
        self.iterations = iterations;
        self.pack_slots.clear();
        // Room for as many packs as the layout can hold, once: later steps
        // with more packs do not allocate.
        if self.pack_slots.capacity() < layout.packs.capacity() {
            self.pack_slots.reserve_exact(layout.packs.capacity());
        }
        let len = |(a, b): (u32, u32)| b - a;
        for pack in &layout.packs {
            let colours = &layout.colour_ranges[pack.colours.0 as usize..pack.colours.1 as usize];
            let (c, j) = colours
                .iter()
                .chain([&pack.overflow])
                .fold((0, 0), |(c, j), s| (c + len(s.contacts), j + len(s.joints)));
            self.pack_slots.push((c, j));
        }
    }

    /// Runs the schedule on all workers: `batch(stage, contact slots,
    /// joint slots)` for every batch of every stage (a parallel stage's
    /// batch has slots of one type, the other range empty; the
    /// non-parallel split's one batch has all of both), `pack(index)` for
    /// every pack.
    ///
    /// Each stage's batches are dealt out as one contiguous home range per
    /// worker task, claimed from that range's own counter; a worker that
    /// finished its range steals from the others'. Splits keep island
    /// (body-index) order, so a worker's home ranges touch about the same
    /// bodies and constraints in every split and iteration, and they stay
    /// in its core's cache instead of moving between cores (dynamic
    /// claiming from one shared counter did that: 30% more work at 2
    /// threads on the pyramid).
    pub fn run(
        &mut self,
        ctx: &StepCtx,
        name: &'static str,
        slot_bytes: SlotBytes,
        batch: impl Fn(&Stage, Range<usize>, Range<usize>) + Sync,
        pack: impl Fn(usize) + Sync,
    ) {
        // A relayed step (`StepTrace::relayed`) runs the schedule on one
        // worker: its home ranges keep a parallel run's solver data on its
        // core, so what the relay measures, data moving between cores, is
        // a cost of the parallel loops.
        let workers = if ctx.relay() { 1 } else { ctx.threads.max(1) };
        let needed = self.stages.len() * workers;
        while self.claims.len() < needed {
            self.claims.push(CachePadded::new(AtomicUsize::new(0)));
        }
        for c in &self.claims[..needed] {
            c.store(0, Ordering::Relaxed);
        }
        for d in &self.done[..self.stages.len()] {
            d.store(0, Ordering::Relaxed);
        }
        self.next_pack.store(0, Ordering::Relaxed);
        let this = &*self;
        let section = ctx.section(SectionKind::Schedule);
        let bytes =
            |contacts: u64, joints: u64| contacts * slot_bytes.contact + joints * slot_bytes.joint;
        let run_pack = || -> bool {
            let p = this.next_pack.fetch_add(1, Ordering::Relaxed) as usize;
            if p >= this.packs as usize {
                return false;
            }
            ctx.maybe_inject(name);
            let t = ctx.now();
            pack(p);
            let b = if ctx.tracer.is_some() {
                let (c, j) = this.pack_slots[p];
                bytes(c as u64, j as u64) * this.iterations as u64
            } else {
                0
            };
            ctx.job_done(name, t, section, PACK_CHAIN_BASE + p as u32, 0, b);
            true
        };
        let worker = |w: usize| {
            ctx.note_worker();
            for (st, stage) in this.stages.iter().enumerate() {
                if stage.dep != NO_STAGE {
                    let dep = stage.dep as usize;
                    let need = this.stages[dep].batches;
                    let mut spins = 0;
                    while this.done[dep].load(Ordering::Acquire) < need {
                        // A batch panicked: the stage will never complete.
                        if ctx.aborted() {
                            return;
                        }
                        // Fill the wait with a small island if one is left.
                        if !run_pack() {
                            backoff(&mut spins);
                        }
                    }
                }
                // Batches this worker finished in the stage, published once
                // when it has no more to claim (one write to the shared
                // counter per worker and stage, not one per batch: the
                // counter's line then moves between cores twice per stage).
                let claims = &this.claims[st * workers..(st + 1) * workers];
                let n = stage.batches as usize;
                let finished = claim_homes(
                    n,
                    w,
                    claims,
                    || false,
                    |b| {
                        let per_batch = BUNDLES_PER_BATCH as usize * LANES;
                        let whole = |(start, end): (u32, u32)| start as usize..end as usize;
                        // whole bundles: the split's last one ends in
                        // padding lanes
                        let part = |(start, end): (u32, u32), b: usize| {
                            let (start, end) = (start as usize, end as usize);
                            let end = end.div_ceil(LANES) * LANES;
                            start + b * per_batch..(start + (b + 1) * per_batch).min(end)
                        };
                        let (c, j) = (stage.items.contacts, stage.items.joints);
                        let cb = stage.contact_batches as usize;
                        let (contacts, joints) = if stage.non_parallel {
                            (whole(c), whole(j))
                        } else if b < cb {
                            (part(c, b), 0..0)
                        } else {
                            (0..0, part(j, b - cb))
                        };
                        ctx.maybe_inject(name);
                        let t = ctx.now();
                        // only a traced step pays for the estimate
                        let b = if ctx.tracer.is_some() {
                            bytes(contacts.len() as u64, joints.len() as u64)
                        } else {
                            0
                        };
                        batch(stage, contacts, joints);
                        ctx.job_done(name, t, section, stage.chain, st as u32, b);
                    },
                );
                if finished > 0 {
                    this.done[st].fetch_add(finished as u32, Ordering::Release);
                }
            }
            while run_pack() {}
        };
        ctx.run_jobs(workers, worker);
    }
}
