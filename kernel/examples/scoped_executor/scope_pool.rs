//! An [`Executor`] over plain `std::thread::scope` threads, as an engine's
//! own job system would provide one: `workers - 1` threads park on a
//! condition variable; `fan_out` posts the helper function on a board,
//! wakes them, runs the caller's part, then takes the function down and
//! waits for the helpers that picked it up. Nothing is allocated per call.
//! Shared by the example and by `tests/executors.rs`.

use archipelago::Executor;
use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex};

thread_local! {
    /// This thread's worker index in the pool that started it.
    static WORKER: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The posted helper, as a raw pointer: it outlives no `fan_out` call (see
/// the SAFETY note there).
#[derive(Clone, Copy)]
struct Job(*const (dyn Fn() + Sync));
// SAFETY: the pointee is `Sync`, so calling it from any thread is sound;
// the pointer is only dereferenced while `fan_out` keeps it alive.
unsafe impl Send for Job {}

#[derive(Default)]
struct Board {
    job: Option<Job>,
    /// Helpers wanted for the posted job, and how many took it.
    wanted: usize,
    taken: usize,
    /// Helpers inside the job right now.
    running: usize,
    panic: Option<Box<dyn std::any::Any + Send>>,
    shutdown: bool,
}

pub struct ScopePool {
    workers: usize,
    board: Mutex<Board>,
    work: Condvar,
    idle: Condvar,
}

impl ScopePool {
    /// Runs `body` with a pool of `workers` threads (the calling thread is
    /// worker 0; `workers - 1` are spawned in a scope and joined on return).
    pub fn with<R>(workers: usize, body: impl FnOnce(&ScopePool) -> R) -> R {
        let pool = ScopePool {
            workers: workers.max(1),
            board: Mutex::new(Board::default()),
            work: Condvar::new(),
            idle: Condvar::new(),
        };
        std::thread::scope(|s| {
            for w in 1..pool.workers {
                let pool = &pool;
                s.spawn(move || pool.worker(w));
            }
            WORKER.with(|c| c.set(Some(0)));
            let r = body(&pool);
            WORKER.with(|c| c.set(None));
            pool.board.lock().unwrap().shutdown = true;
            pool.work.notify_all();
            r
        })
    }

    fn worker(&self, index: usize) {
        WORKER.with(|c| c.set(Some(index)));
        let mut board = self.board.lock().unwrap();
        loop {
            if board.shutdown {
                return;
            }
            match board.job {
                Some(job) if board.taken < board.wanted => {
                    board.taken += 1;
                    board.running += 1;
                    drop(board);
                    // SAFETY: `fan_out` does not return (so the function
                    // stays alive) while `running` counts this call, and
                    // no call starts after it took the job down.
                    let r = catch_unwind(AssertUnwindSafe(|| unsafe { (*job.0)() }));
                    board = self.board.lock().unwrap();
                    board.running -= 1;
                    if let Err(p) = r {
                        board.panic.get_or_insert(p);
                    }
                    if board.running == 0 {
                        self.idle.notify_all();
                    }
                }
                _ => board = self.work.wait(board).unwrap(),
            }
        }
    }
}

impl Executor for ScopePool {
    fn workers(&self) -> usize {
        self.workers
    }

    fn install(&self, f: &mut (dyn FnMut() + Send)) {
        // The calling thread is worker 0: the step runs right here.
        f()
    }

    fn fan_out(
        &self,
        helpers: usize,
        helper: &(dyn Fn() + Sync),
        caller: &mut (dyn FnMut() + Send),
    ) {
        let helpers = helpers.min(self.workers - 1);
        if helpers > 0 {
            // SAFETY: erasing the lifetime; the pointer is taken down below
            // before this function returns, and we wait for every call
            // that picked it up.
            let job = Job(unsafe {
                std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync)>(
                    helper,
                )
            });
            let mut b = self.board.lock().unwrap();
            (b.job, b.wanted, b.taken) = (Some(job), helpers, 0);
            drop(b);
            self.work.notify_all();
        }
        let mine = catch_unwind(AssertUnwindSafe(caller));
        if helpers > 0 {
            let mut b = self.board.lock().unwrap();
            b.job = None;
            while b.running > 0 {
                b = self.idle.wait(b).unwrap();
            }
            if let Some(p) = b.panic.take() {
                drop(b);
                resume_unwind(p);
            }
        }
        if let Err(p) = mine {
            resume_unwind(p);
        }
    }

    fn worker_index(&self) -> Option<usize> {
        WORKER.with(|c| c.get())
    }
}
