//! The seam between the step and the threads it runs on.
//!
//! Every parallel loop of a step, and the solver's staged schedule, is one
//! call of `run_jobs` (`jobs.rs`): the calling worker and some helpers
//! claim job indices, each from its own home range first, and the caller
//! waits for a done counter. So all a step needs from a thread system is
//! [`Executor`]: how many workers it has, a way to enter it, and a way to
//! run one function on a number of other workers while the caller runs
//! its own part. The
//! kernel implements it for a rayon [`ThreadPool`](rayon::ThreadPool), for
//! [`PinnedPool`], and for [`SerialExecutor`]; an engine with its own job
//! system implements it in a few lines (`examples/scoped_executor/` does it
//! with `std::thread::scope` and a condition variable).
//!
//! Results never depend on the executor: which worker runs which job, or
//! whether a helper runs at all, changes no bit (every job writes only its
//! own slots, and the loops' orders come from indices, not from timing).

/// What a step runs on. See the module docs; the contract:
///
/// - [`workers`](Self::workers): how many threads may work on the step at
///   once, the calling one included (at least 1). The kernel never asks
///   `fan_out` for more than `workers() - 1` helpers.
/// - [`install`](Self::install): runs `f` on the executor's own worker (or
///   on the calling thread, if the executor has no other notion), returning
///   when it has returned; the whole step runs inside.
/// - [`fan_out`](Self::fan_out): calls `helper` on up to `helpers` other
///   threads, concurrently with `caller` on this one, and returns only when
///   `caller` and every call of `helper` that started have returned.
///   Helpers that cannot start (all threads busy) may be skipped, or run
///   late, even after `caller` returned: the kernel's jobs never wait for a
///   helper that has not started, so this cannot deadlock. A panic in
///   `helper` must reach `fan_out`'s caller (resumed there) once every
///   started call has returned; the kernel's waits give up when a job
///   panics.
/// - [`worker_index`](Self::worker_index): the current thread's index in
///   `0..workers()` if it is one of the executor's, for the step trace's
///   lanes and each worker's home range of a parallel loop (`None` is
///   fine: its work is drawn on one extra lane, and every such thread
///   starts at the first home, which costs only locality).
///
/// Called from within a step: must not allocate if `update` is to allocate
/// nothing per step (rayon's and [`SerialExecutor`] do not).
pub trait Executor: Sync {
    fn workers(&self) -> usize;
    fn install(&self, f: &mut (dyn FnMut() + Send));
    fn fan_out(
        &self,
        helpers: usize,
        helper: &(dyn Fn() + Sync),
        caller: &mut (dyn FnMut() + Send),
    );
    fn worker_index(&self) -> Option<usize>;
}

impl Executor for rayon::ThreadPool {
    fn workers(&self) -> usize {
        self.current_num_threads()
    }

    fn install(&self, f: &mut (dyn FnMut() + Send)) {
        rayon::ThreadPool::install(self, f)
    }

    /// Helpers go out as the stealable halves of nested joins (a join's
    /// job lives on the stack: nothing is allocated); one that no worker
    /// stole runs on the caller after its part, finding nothing to claim.
    fn fan_out(
        &self,
        helpers: usize,
        helper: &(dyn Fn() + Sync),
        caller: &mut (dyn FnMut() + Send),
    ) {
        rayon::join(caller, || fan_out_joins(helpers, helper));
    }

    fn worker_index(&self) -> Option<usize> {
        self.current_thread_index()
    }
}

fn fan_out_joins(helpers: usize, helper: &(dyn Fn() + Sync)) {
    if helpers > 0 {
        rayon::join(helper, || fan_out_joins(helpers - 1, helper));
    }
}

impl Executor for crate::thread_pool::PinnedPool {
    fn workers(&self) -> usize {
        self.pool.workers()
    }
    fn install(&self, f: &mut (dyn FnMut() + Send)) {
        self.pool.install(f)
    }
    fn fan_out(
        &self,
        helpers: usize,
        helper: &(dyn Fn() + Sync),
        caller: &mut (dyn FnMut() + Send),
    ) {
        self.pool.fan_out(helpers, helper, caller)
    }
    fn worker_index(&self) -> Option<usize> {
        self.pool.worker_index()
    }
}

/// Runs the whole step on the calling thread: no pool, no threads, the
/// same bits as any pool.
#[derive(Debug, Default, Clone, Copy)]
pub struct SerialExecutor;

impl Executor for SerialExecutor {
    fn workers(&self) -> usize {
        1
    }
    fn install(&self, f: &mut (dyn FnMut() + Send)) {
        f()
    }
    fn fan_out(
        &self,
        helpers: usize,
        helper: &(dyn Fn() + Sync),
        caller: &mut (dyn FnMut() + Send),
    ) {
        caller();
        // Never asked for (one worker); were it, the helpers find nothing.
        for _ in 0..helpers {
            helper();
        }
    }
    fn worker_index(&self) -> Option<usize> {
        Some(0)
    }
}
