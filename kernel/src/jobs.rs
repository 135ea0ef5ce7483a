//! How the step's work is handed to the pool's workers.
//!
//! - [`StepCtx::par_chunks_mut`] / [`StepCtx::par_for`] / [`StepCtx::par_any`]:
//!   batched data-parallel loops (narrow phase over pairs, constraint setup,
//!   ...). Each chunk writes only its own slots, so results never depend on
//!   which worker ran what. All of them go through [`StepCtx::run_jobs`]:
//!   chunks are claimed from one counter by the calling worker and helpers,
//!   and the loop ends on a done counter.
//! - [`Schedule`]: the solver's job queue. Large islands come first, as
//!   chains of stages (one stage per split per iteration, a barrier between
//!   consecutive stages of a chain); each worker claims batches from its
//!   home range of a stage, then steals from the others'. Small islands are
//!   packed into jobs of at least
//!   [`PACK_ITEMS`] constraints and taken from a second counter, first by
//!   workers that would otherwise wait at a barrier (Jolt's longest job
//!   first, with the waiting time filled).
//!
//! A worker waits at a stage only after every batch of the stage before it
//! was claimed, and claimed batches are being run by workers that wait for
//! nothing later: the loop cannot deadlock however many workers the pool
//! has, however many of its tasks one thread ends up running, or however
//! the OS schedules them.
//!
//! A job that panics never leaves the others waiting for it: while it
//! unwinds it raises the step's abort flag ([`StepCtx::abort`]), every wait
//! loop (the end of a parallel loop, a stage barrier) gives up when it sees
//! the flag, and rayon's `join` carries the panic out to `update`'s caller.

use crate::disjoint::Disjoint;
use crate::splitter::{LargeIslandSplitter, BATCH_SIZE, NON_PARALLEL_SPLIT, NUM_SPLITS};
use crate::thread_pool::pin_state_bit;
use crate::trace::{SliceKind, Tracer};
use archipelago_layout::CachePadded;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Small islands are packed until a job holds at least this many
/// constraints, so 100,000 one-body islands are ~1,500 jobs, not 100,000.
pub(crate) const PACK_ITEMS: u32 = 64;
/// Chains of packed small islands are numbered from here in traces.
const PACK_CHAIN_BASE: u32 = 1 << 20;
/// Spins before a waiting worker starts yielding its core (an
/// oversubscribed pool must let the worker holding the batch run).
const SPINS_BEFORE_YIELD: u32 = 64;

/// What the step's phases share: the pool's size, the trace recorder when
/// armed, the pin states seen, the abort flag and an injected fault.
pub(crate) struct StepCtx<'a> {
    pub threads: usize,
    pub tracer: Option<&'a Tracer>,
    pub pin_bits: &'a AtomicU32,
    /// Raised by a job that panics, so that no worker waits for it forever.
    pub abort: AtomicBool,
    /// A panic to inject into one job (tests of the abort path).
    pub fault: Option<&'a InjectedPanic>,
}

/// Pin states of work done outside `update` (tools, tests).
static NO_PINS: AtomicU32 = AtomicU32::new(0);

impl StepCtx<'static> {
    /// A context for work outside `update`: no trace, and one thread, so
    /// every loop runs on the calling thread and no rayon pool is touched
    /// (not even the global one).
    pub fn untraced() -> Self {
        StepCtx {
            threads: 1,
            tracer: None,
            pin_bits: &NO_PINS,
            abort: AtomicBool::new(false),
            fault: None,
        }
    }
}

/// Makes the `nth` start (counting from 0) of a job named `job` panic: the
/// hidden test hook behind
/// [`PhysicsSystem::inject_job_panic`](crate::PhysicsSystem::inject_job_panic).
#[derive(Debug)]
pub struct InjectedPanic {
    pub job: &'static str,
    pub nth: usize,
    pub seen: AtomicUsize,
}

/// Raises the abort flag if dropped while its thread unwinds.
struct AbortOnUnwind<'a>(&'a AtomicBool);

impl Drop for AbortOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Release);
        }
    }
}

impl StepCtx<'_> {
    /// Whether a job of this step panicked: waiting loops give up.
    #[inline]
    pub fn aborted(&self) -> bool {
        self.abort.load(Ordering::Acquire)
    }

    /// The injected panic, if it is this job's turn.
    #[inline]
    fn maybe_inject(&self, name: &'static str) {
        if let Some(f) = self.fault {
            if f.job == name && f.seen.fetch_add(1, Ordering::Relaxed) == f.nth {
                panic!("injected panic in job '{name}' (test hook)");
            }
        }
    }

    #[inline]
    fn now(&self) -> Option<Instant> {
        self.tracer.map(|_| Instant::now())
    }

    #[inline]
    fn job_done(
        &self,
        name: &'static str,
        t: Option<Instant>,
        section: u32,
        chain: u32,
        stage: u32,
    ) {
        if let (Some(tr), Some(t)) = (self.tracer, t) {
            tr.record(
                name,
                t,
                SliceKind::Job {
                    section,
                    chain,
                    stage,
                },
            );
        }
    }

    fn section(&self) -> u32 {
        self.tracer.map_or(0, |t| t.new_section())
    }

    /// Records that the current worker took part (for the pinning report).
    #[inline]
    fn note_worker(&self) {
        self.pin_bits.fetch_or(pin_state_bit(), Ordering::Relaxed);
    }

    /// Runs a phase, adding its wall time to `slot` (and a phase slice to
    /// the trace).
    pub fn phase<R>(&self, name: &'static str, slot: &mut Duration, f: impl FnOnce() -> R) -> R {
        let t0 = Instant::now();
        let r = f();
        *slot += t0.elapsed();
        if let Some(tr) = self.tracer {
            tr.record(name, t0, SliceKind::Phase);
        }
        r
    }

    /// A serial stretch of work: on the critical path in full.
    pub fn serial<R>(&self, name: &'static str, f: impl FnOnce() -> R) -> R {
        self.maybe_inject(name);
        let section = self.section();
        let t = self.now();
        let r = f();
        self.job_done(name, t, section, 0, 0);
        r
    }

    /// Runs `job(k)` for every `k` in `0..jobs` on the pool: the calling
    /// worker and up to `threads - 1` helper tasks claim indices from one
    /// counter, and the caller, once nothing is left to claim, spins until
    /// every claimed job has finished.
    ///
    /// Why not rayon's own parallel iterators: they split work by nested
    /// joins, and a join completes only when the worker that stole its
    /// other half wakes up to report it. On a VM a sleeping worker takes
    /// 30-70 µs to wake, and a chain of joins pays that more than once per
    /// loop. Here no worker waits for another's wake-up: jobs are claimed
    /// by whoever is awake, and the end of the loop is a counter.
    ///
    /// Cannot deadlock: after the caller's claim loop every job is claimed,
    /// and a claimed job is being run by the worker that claimed it, which
    /// waits for nothing of the caller's (the spin yields, so an
    /// oversubscribed pool lets that worker run).
    ///
    /// A panicking job raises the abort flag as it unwinds: nobody claims
    /// further jobs, the caller stops waiting for the done counter, and the
    /// panic reaches the caller through rayon's `join`.
    pub fn run_jobs(&self, jobs: usize, job: impl Fn(usize) + Sync) {
        if jobs == 0 {
            return;
        }
        let helpers = self.threads.min(jobs).saturating_sub(1);
        if helpers == 0 {
            self.note_worker();
            (0..jobs).for_each(job);
            return;
        }
        let next = CachePadded::new(AtomicUsize::new(0));
        let done = CachePadded::new(AtomicUsize::new(0));
        let claim = || {
            self.note_worker();
            let _unwinding = AbortOnUnwind(&self.abort);
            while !self.aborted() {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= jobs {
                    break;
                }
                job(k);
                done.fetch_add(1, Ordering::Release);
            }
        };
        // Helpers go out as the stealable halves of joins (a join's job
        // lives on the stack: nothing is allocated). One that no worker
        // took before the jobs ran out runs here afterwards, finds nothing
        // and returns.
        rayon::join(
            || {
                claim();
                let mut spins = 0;
                while done.load(Ordering::Acquire) < jobs && !self.aborted() {
                    backoff(&mut spins);
                }
            },
            || fan_out(helpers, &claim),
        );
    }

    /// `f(first_index, chunk)` over `chunk`-sized pieces of `data`, in
    /// parallel; returns the sum of what the chunks return.
    pub fn par_chunks_mut<T: Send>(
        &self,
        name: &'static str,
        data: &mut [T],
        chunk: usize,
        f: impl Fn(usize, &mut [T]) -> u32 + Sync,
    ) -> u32 {
        let section = self.section();
        let chunk = chunk.max(1);
        let n = data.len();
        let total = AtomicU32::new(0);
        let data = Disjoint::new(data);
        self.run_jobs(n.div_ceil(chunk), |k| {
            self.maybe_inject(name);
            let t = self.now();
            let (start, end) = (k * chunk, ((k + 1) * chunk).min(n));
            // SAFETY: job `k` is claimed once, and chunks do not overlap.
            let r = f(start, unsafe { data.slice_mut(start, end) });
            self.job_done(name, t, section, 0, 0);
            total.fetch_add(r, Ordering::Relaxed);
        });
        total.into_inner()
    }

    /// Whether `pred` holds for any item, checked in parallel `chunk`-sized
    /// pieces (a piece stops at its first hit; the answer, a bool, does not
    /// depend on timing).
    pub fn par_any<T: Sync>(
        &self,
        name: &'static str,
        items: &[T],
        chunk: usize,
        pred: impl Fn(&T) -> bool + Sync,
    ) -> bool {
        let hit = AtomicBool::new(false);
        self.par_for(name, items.len(), chunk, |range| {
            if !hit.load(Ordering::Relaxed) && items[range].iter().any(&pred) {
                hit.store(true, Ordering::Relaxed);
            }
        });
        hit.into_inner()
    }

    /// `f(range)` over `chunk`-sized ranges of `0..n`, in parallel.
    pub fn par_for(
        &self,
        name: &'static str,
        n: usize,
        chunk: usize,
        f: impl Fn(Range<usize>) + Sync,
    ) {
        let section = self.section();
        let chunk = chunk.max(1);
        self.run_jobs(n.div_ceil(chunk), |k| {
            self.maybe_inject(name);
            let t = self.now();
            f(k * chunk..((k + 1) * chunk).min(n));
            self.job_done(name, t, section, 0, 0);
        });
    }
}

const NO_STAGE: u32 = u32::MAX;

/// One split of one large island in one iteration: `batches` batches of
/// [`BATCH_SIZE`] items (one batch with all items for the non-parallel
/// split), runnable once stage `dep` of the same chain is done.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stage {
    /// Range of constraints.
    pub items: (u32, u32),
    pub batches: u32,
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
    claims: Vec<CachePadded<AtomicU32>>,
    /// Packs of small islands: ranges of island indices.
    packs: Vec<(u32, u32)>,
    next_pack: CachePadded<AtomicU32>,
}

impl Schedule {
    pub fn new() -> Self {
        Self {
            stages: Vec::new(),
            done: Vec::new(),
            claims: Vec::new(),
            packs: Vec::new(),
            next_pack: CachePadded::new(AtomicU32::new(0)),
        }
    }

    /// Lays out `iterations` passes over every split island, then packs the
    /// islands `first_small..` (`island_size(i)` constraints each).
    pub fn build(
        &mut self,
        splitter: &LargeIslandSplitter,
        iterations: u32,
        first_small: usize,
        num_islands: usize,
        island_size: impl Fn(usize) -> u32,
    ) {
        self.stages.clear();
        for (chain, isl) in splitter.islands.iter().enumerate() {
            let mut dep = NO_STAGE;
            for iteration in 0..iterations {
                for s in 0..NUM_SPLITS {
                    let (start, end) = isl.split(s);
                    if start == end {
                        continue;
                    }
                    let non_parallel = s == NON_PARALLEL_SPLIT;
                    let batches = if non_parallel {
                        1
                    } else {
                        (end - start).div_ceil(BATCH_SIZE as u32)
                    };
                    self.stages.push(Stage {
                        items: (start, end),
                        batches,
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
        self.packs.clear();
        let mut start = first_small;
        let mut items = 0;
        for i in first_small..num_islands {
            items += island_size(i);
            if items >= PACK_ITEMS {
                self.packs.push((start as u32, i as u32 + 1));
                start = i + 1;
                items = 0;
            }
        }
        if start < num_islands {
            self.packs.push((start as u32, num_islands as u32));
        }
    }

    /// Runs the schedule on all workers: `batch(stage, items)` for every
    /// batch of every stage, `pack(islands)` for every pack.
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
        batch: impl Fn(&Stage, Range<usize>) + Sync,
        pack: impl Fn(Range<usize>) + Sync,
    ) {
        let workers = ctx.threads.max(1);
        let needed = self.stages.len() * workers;
        while self.claims.len() < needed {
            self.claims.push(CachePadded::new(AtomicU32::new(0)));
        }
        for c in &self.claims[..needed] {
            c.store(0, Ordering::Relaxed);
        }
        for d in &self.done[..self.stages.len()] {
            d.store(0, Ordering::Relaxed);
        }
        self.next_pack.store(0, Ordering::Relaxed);
        let this = &*self;
        let section = ctx.section();
        let run_pack = || -> bool {
            let p = this.next_pack.fetch_add(1, Ordering::Relaxed) as usize;
            let Some(&(first, end)) = this.packs.get(p) else {
                return false;
            };
            ctx.maybe_inject(name);
            let t = ctx.now();
            pack(first as usize..end as usize);
            ctx.job_done(name, t, section, PACK_CHAIN_BASE + p as u32, 0);
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
                let (start, end) = (stage.items.0 as usize, stage.items.1 as usize);
                for k in 0..workers {
                    let home = (w + k) % workers;
                    let lo = stage.batches as usize * home / workers;
                    let hi = stage.batches as usize * (home + 1) / workers;
                    let claim = &this.claims[st * workers + home];
                    // A plain load first: a drained range costs no write.
                    while lo + (claim.load(Ordering::Relaxed) as usize) < hi {
                        let b = lo + claim.fetch_add(1, Ordering::Relaxed) as usize;
                        if b >= hi {
                            break;
                        }
                        let range = if stage.non_parallel {
                            start..end
                        } else {
                            start + b * BATCH_SIZE..(start + (b + 1) * BATCH_SIZE).min(end)
                        };
                        ctx.maybe_inject(name);
                        let t = ctx.now();
                        batch(stage, range);
                        ctx.job_done(name, t, section, stage.chain, st as u32);
                        this.done[st].fetch_add(1, Ordering::Release);
                    }
                }
            }
            while run_pack() {}
        };
        ctx.run_jobs(workers, worker);
    }
}

#[inline]
/// `helpers` calls of `claim`, each stealable by another worker.
fn fan_out(helpers: usize, claim: &(dyn Fn() + Sync)) {
    if helpers > 0 {
        rayon::join(claim, || fan_out(helpers - 1, claim));
    }
}

fn backoff(spins: &mut u32) {
    if *spins < SPINS_BEFORE_YIELD {
        *spins += 1;
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}
