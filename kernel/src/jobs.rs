//! How the step's work is handed to the pool's workers.
//!
//! [`StepCtx::par_chunks_mut`] / [`StepCtx::par_for`] / [`StepCtx::par_any`]:
//! batched data-parallel loops (narrow phase over pairs, constraint setup,
//! ...). Each chunk writes only its own slots, so results never depend on
//! which worker ran what. All of them go through [`StepCtx::run_jobs`]:
//! the calling worker and helpers claim chunks, each first from its own
//! home range (by worker index, so consecutive loops over the same items
//! keep them on the same core) and then from the others', and the loop
//! ends on a done counter. The solver's staged schedule
//! (`solver/schedule.rs`) runs on it too.
//!
//! A job that panics never leaves the others waiting for it: while it
//! unwinds it raises the step's abort flag ([`StepCtx::abort`]), every wait
//! loop (the end of a parallel loop, a stage barrier) gives up when it sees
//! the flag, and the executor's `fan_out` (rayon's `join`) carries the
//! panic out to `update`'s caller.

use crate::disjoint::Disjoint;
use crate::executor::{Executor, SerialExecutor};
use crate::thread_pool::pin_state_bit;
use crate::trace::{SectionKind, SliceKind, Tracer};
use archipelago_layout::CachePadded;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Spins before a waiting worker starts yielding its core (an
/// oversubscribed pool must let the worker holding the batch run).
pub(crate) const SPINS_BEFORE_YIELD: u32 = 64;

/// How long the caller of a relayed loop waits for its helper to start
/// before it runs the helper's jobs itself: past a sleeping worker's
/// wake-up on a VM (30-70 µs), short enough that a pool whose other
/// worker is busy elsewhere costs a traced step little.
const RELAY_HELPER_WAIT: Duration = Duration::from_millis(1);

/// Most home ranges a parallel loop has (one per worker; workers past this
/// share them): the loop's cursors are an array on the caller's stack, one
/// cache line pair each.
const MAX_HOMES: usize = 16;

/// What the step's phases share: the pool's size, the trace recorder when
/// armed, the pin states seen, the abort flag and an injected fault.
pub(crate) struct StepCtx<'a> {
    /// What the loops run on (`executor.rs`).
    pub exec: &'a dyn Executor,
    /// Workers a loop may use: `exec.workers()` (less in tools and tests).
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
            exec: &SerialExecutor,
            threads: 1,
            tracer: None,
            pin_bits: &NO_PINS,
            abort: AtomicBool::new(false),
            fault: None,
        }
    }
}

/// Makes the `nth` start (counting from 0) of a job named `job` panic: the
/// test hook behind `PhysicsSystem::inject_job_panic` (feature `test-hooks`).
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
    pub(crate) fn maybe_inject(&self, name: &'static str) {
        if let Some(f) = self.fault {
            if f.job == name && f.seen.fetch_add(1, Ordering::Relaxed) == f.nth {
                panic!("injected panic in job '{name}' (test hook)");
            }
        }
    }

    #[inline]
    pub(crate) fn now(&self) -> Option<Instant> {
        self.tracer.map(|_| Instant::now())
    }

    #[inline]
    pub(crate) fn job_done(
        &self,
        name: &'static str,
        t: Option<Instant>,
        section: u32,
        chain: u32,
        stage: u32,
        bytes: u64,
    ) {
        if let (Some(tr), Some(t)) = (self.tracer, t) {
            tr.record(
                self.exec.worker_index(),
                name,
                t,
                SliceKind::Job {
                    section,
                    chain,
                    stage,
                },
                bytes,
            );
        }
    }

    /// Whether this is a relayed step
    /// ([`StepTrace::relayed`](crate::StepTrace::relayed)).
    #[inline]
    pub(crate) fn relay(&self) -> bool {
        self.tracer.is_some_and(|t| t.relay)
    }

    /// Opens a section of the trace (0 when not tracing).
    pub(crate) fn section(&self, kind: SectionKind) -> u32 {
        self.tracer.map_or(0, |t| t.new_section(kind))
    }

    /// Records that the current worker took part (for the pinning report).
    #[inline]
    pub(crate) fn note_worker(&self) {
        self.pin_bits.fetch_or(pin_state_bit(), Ordering::Relaxed);
    }

    /// Runs a phase, adding its wall time to `slot` (and a phase slice to
    /// the trace).
    pub fn phase<R>(&self, name: &'static str, slot: &mut Duration, f: impl FnOnce() -> R) -> R {
        let t0 = Instant::now();
        let r = f();
        *slot += t0.elapsed();
        if let Some(tr) = self.tracer {
            tr.record(self.exec.worker_index(), name, t0, SliceKind::Phase, 0);
        }
        r
    }

    /// A serial stretch of work: on the critical path in full.
    pub fn serial<R>(&self, name: &'static str, f: impl FnOnce() -> R) -> R {
        self.maybe_inject(name);
        let section = self.section(SectionKind::Serial);
        let t = self.now();
        let r = f();
        self.job_done(name, t, section, 0, 0, 0);
        r
    }

    /// Runs `job(k)` for every `k` in `0..jobs` on the pool: the calling
    /// worker and up to `threads - 1` helper tasks claim indices, each from
    /// its own home range first ([`home_range`], by its worker index) and
    /// then from the other homes' counters in turn, and the caller, once
    /// nothing is left to claim, spins until every claimed job has
    /// finished.
    ///
    /// Why not rayon's own parallel iterators: they split work by nested
    /// joins, and a join completes only when the worker that stole its
    /// other half wakes up to report it. On a VM a sleeping worker takes
    /// 30-70 µs to wake, and a chain of joins pays that more than once per
    /// loop. Here no worker waits for another's wake-up: jobs are claimed
    /// by whoever is awake, and the end of the loop is a counter.
    ///
    /// Which worker runs a job still does not decide any result (a job
    /// writes only its own outputs), only where its data is cached.
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
        if self.relay() {
            self.relay_jobs(jobs, &job);
            return;
        }
        // Home ranges: loop after loop over the same items, worker `w`
        // starts with the same share, so what it wrote in the last loop is
        // in its own caches (a shared counter paired jobs with workers at
        // random, and jobs read half their data from the other core: 1.6-5x
        // slower, `perf-reports/README.md`, "Data moving between cores").
        let homes = (helpers + 1).min(MAX_HOMES);
        let cursor: [CachePadded<AtomicUsize>; MAX_HOMES] =
            std::array::from_fn(|_| CachePadded::new(AtomicUsize::new(0)));
        let done = CachePadded::new(AtomicUsize::new(0));
        let claim = || {
            self.note_worker();
            let _unwinding = AbortOnUnwind(&self.abort);
            let me = self.exec.worker_index().unwrap_or(0) % homes;
            // Published once when nothing is left to claim (one write to
            // the shared counter per worker, not per job).
            let finished = claim_homes(jobs, me, &cursor[..homes], || self.aborted(), &job);
            done.fetch_add(finished, Ordering::Release);
        };
        // A helper that starts after the jobs ran out finds nothing and
        // returns; the caller waits only for jobs that were claimed.
        self.exec.fan_out(helpers, &claim, &mut || {
            claim();
            let mut spins = 0;
            while done.load(Ordering::Acquire) < jobs && !self.aborted() {
                backoff(&mut spins);
            }
        });
    }

    /// A relayed loop ([`StepTrace::relayed`](crate::StepTrace::relayed)):
    /// the jobs run one at a time in index order, each on worker 0 or 1 as
    /// [`relay_owner`] says (its home), the other waiting. A job then reads
    /// what the loops before it wrote on either core, as in a 2-worker step
    /// where neither worker steals, but never shares its core's
    /// caches, memory or clock with a job running beside it; its traced
    /// duration measures data migration alone. Results do not depend on
    /// who runs a job, so the step's are the same bits.
    ///
    /// Cannot deadlock: if the helper has not started after
    /// [`RELAY_HELPER_WAIT`], the caller runs the helper's jobs too until
    /// it does (a pool whose other worker is busy elsewhere never starts
    /// it); a job is started once, by whoever moves `next` past it.
    fn relay_jobs(&self, jobs: usize, job: &(impl Fn(usize) + Sync)) {
        // The next job to start and the jobs finished: one job in flight.
        let next = CachePadded::new(AtomicUsize::new(0));
        let finished = CachePadded::new(AtomicUsize::new(0));
        let helper_started = AtomicBool::new(false);
        let run = |me: usize| {
            self.note_worker();
            let _unwinding = AbortOnUnwind(&self.abort);
            let mut spins = 0;
            let since = Instant::now();
            loop {
                let f = finished.load(Ordering::Acquire);
                if f >= jobs || self.aborted() {
                    return;
                }
                let mine = relay_owner(jobs, f) == me
                    || (me == 0
                        && !helper_started.load(Ordering::Acquire)
                        && since.elapsed() > RELAY_HELPER_WAIT);
                if mine
                    && next
                        .compare_exchange(f, f + 1, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                {
                    job(f);
                    finished.store(f + 1, Ordering::Release);
                    spins = 0;
                } else {
                    backoff(&mut spins);
                }
            }
        };
        self.exec.fan_out(
            1,
            &|| {
                helper_started.store(true, Ordering::Release);
                run(1);
            },
            &mut || run(0),
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
        let section = self.section(SectionKind::Loop);
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
            let bytes = ((end - start) * std::mem::size_of::<T>()) as u64;
            self.job_done(name, t, section, 0, 0, bytes);
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
        let section = self.section(SectionKind::Loop);
        let chunk = chunk.max(1);
        self.run_jobs(n.div_ceil(chunk), |k| {
            self.maybe_inject(name);
            let t = self.now();
            f(k * chunk..((k + 1) * chunk).min(n));
            self.job_done(name, t, section, 0, 0, 0);
        });
    }
}

/// The jobs of home `h` of a loop of `jobs` jobs over `homes` homes: the
/// `h`-th of `homes` equal runs, in index order, so a job's home follows
/// its place in the loop whatever the loop's job count.
pub(crate) fn home_range(jobs: usize, homes: usize, h: usize) -> Range<usize> {
    h * jobs / homes..(h + 1) * jobs / homes
}

/// Worker `me`'s part of a loop of `n` items split into one home range per
/// cursor ([`home_range`]): `run(k)` for every item it claims, from its
/// own home first and then from the others' in turn, each home's cursor
/// counting its claims (a plain load first: a drained home costs no
/// write), until nothing is left or `stop()`. Returns how many it ran.
/// The parallel loops and the solver's stages both claim this way.
pub(crate) fn claim_homes(
    n: usize,
    me: usize,
    cursors: &[CachePadded<AtomicUsize>],
    stop: impl Fn() -> bool,
    mut run: impl FnMut(usize),
) -> usize {
    let homes = cursors.len();
    let mut ran = 0;
    for r in 0..homes {
        let h = (me + r) % homes;
        let range = home_range(n, homes, h);
        let cursor = &cursors[h];
        while range.start + cursor.load(Ordering::Relaxed) < range.end {
            if stop() {
                return ran;
            }
            let k = range.start + cursor.fetch_add(1, Ordering::Relaxed);
            if k >= range.end {
                break;
            }
            run(k);
            ran += 1;
        }
    }
    ran
}

/// Which of two workers runs job `k` of a relayed loop of `jobs` jobs: its
/// home's ([`home_range`]), as in a 2-worker run where nobody steals.
fn relay_owner(jobs: usize, k: usize) -> usize {
    usize::from(k >= home_range(jobs, 2, 0).end)
}

pub(crate) fn backoff(spins: &mut u32) {
    if *spins < SPINS_BEFORE_YIELD {
        *spins += 1;
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_ranges_cover_every_job_once_in_order() {
        for jobs in 0..40 {
            for homes in 1..=MAX_HOMES {
                let mut next = 0;
                for h in 0..homes {
                    let r = home_range(jobs, homes, h);
                    assert_eq!(r.start, next, "{jobs} jobs, {homes} homes");
                    assert!(r.len() <= jobs.div_ceil(homes));
                    next = r.end;
                }
                assert_eq!(next, jobs);
            }
        }
        assert_eq!(relay_owner(5, 1), 0);
        assert_eq!(relay_owner(5, 2), 1);
    }

    /// Every job runs once, whoever's home it is, with homes that finish
    /// at very different times (the others steal), on pools of 2 to 20
    /// workers (past `MAX_HOMES`, homes are shared).
    #[test]
    fn run_jobs_runs_every_job_once_and_steals_from_a_slow_home() {
        for workers in [2, 3, 4, 20] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(workers)
                .build()
                .expect("pool");
            let pins = AtomicU32::new(0);
            let ctx = StepCtx {
                exec: &pool,
                threads: workers,
                tracer: None,
                pin_bits: &pins,
                abort: AtomicBool::new(false),
                fault: None,
            };
            for jobs in [1, 2, 3, 7, 64, 257] {
                let runs: Vec<AtomicUsize> = (0..jobs).map(|_| AtomicUsize::new(0)).collect();
                let mut all = || {
                    ctx.run_jobs(jobs, |k| {
                        if k == 0 {
                            // home 0's first job is slow: its other jobs
                            // are left for the others to take
                            std::thread::sleep(Duration::from_micros(300));
                        }
                        runs[k].fetch_add(1, Ordering::Relaxed);
                    })
                };
                ctx.exec.install(&mut all);
                for (k, r) in runs.iter().enumerate() {
                    assert_eq!(
                        r.load(Ordering::Relaxed),
                        1,
                        "job {k} of {jobs}, {workers} workers"
                    );
                }
            }
        }
    }
}
