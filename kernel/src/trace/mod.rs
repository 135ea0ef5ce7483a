//! Chrome-trace (Perfetto JSON) recording of one step, and its work and span.
//!
//! While a recorder is armed ([`PhysicsSystem::record_trace`](crate::PhysicsSystem::record_trace)),
//! every phase is a slice on the track of the worker that ran it and every
//! job (a chunk of a parallel loop, a batch of a split, a pack of small
//! islands, a serial stretch) a slice on its worker's track.
//!
//! Jobs carry where they sit in the step's dependency structure: a
//! `section` (parallel regions and serial stretches follow each other), a
//! `chain` inside the section (independent sequences, e.g. two large
//! islands) and a `stage` along the chain (splits separated by barriers).
//! From that, [`StepTrace::work_span`] computes the total work T1 (sum of all
//! jobs) and the critical path T∞ (per section, the longest chain of
//! per-stage maxima, summed over sections). T1/T∞ bounds the speedup any
//! number of workers can reach on this step. [`StepTrace::replay`]
//! (`replay.rs`) goes further: it runs a 1-thread trace's jobs on simulated
//! workers with the kernel's own claiming rules and measured
//! synchronisation costs ([`ReplayCosts::measure`], `calibrate.rs`), which
//! predicts the step's time at any worker count and what limits it.

mod calibrate;
mod replay;

pub(crate) use replay::PACK_CHAIN_BASE;
pub use replay::{Migration, Replay, ReplayCosts, SectionReplay};

use archipelago_layout::CachePadded;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where a slice sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceKind {
    /// A whole phase, on the track of the worker that drove the step.
    Phase,
    /// A unit of work; see the module docs for section, chain and stage.
    Job {
        section: u32,
        chain: u32,
        stage: u32,
    },
}

/// How the jobs of a section are handed to workers (what a replay
/// simulates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SectionKind {
    /// One job on the worker driving the step.
    Serial,
    /// A parallel loop: jobs claimed in index order, each worker's own home
    /// range first and then the others', by the driving worker and
    /// helpers that join it one after another (each helper a stolen half
    /// of a `rayon::join`).
    #[default]
    Loop,
    /// The solver's staged schedule (`solver/schedule.rs`): per split
    /// island a chain of stages with a barrier between consecutive ones,
    /// each stage's batches dealt out as one home range per worker (then
    /// stolen), and packs of small islands from a shared counter, taken by
    /// workers waiting at a barrier and by all at the end. A job's `chain`
    /// is its island (or [`PACK_CHAIN_BASE`] + its pack), its `stage` the
    /// stage's index in the schedule.
    Schedule,
}

/// One recorded slice.
#[derive(Debug, Clone, Copy)]
pub struct TraceEvent {
    pub name: &'static str,
    /// Pool worker index (the pool's size for a thread outside the pool).
    pub thread: u32,
    /// Nanoseconds from the start of the step.
    pub start_ns: u64,
    pub dur_ns: u64,
    pub kind: SliceKind,
    /// Estimated bytes the job streams (its columns' sizes, read and
    /// written, counted once per pass; 0 where not estimated): a parallel
    /// loop over a slice counts the slice it writes, a solver batch every
    /// column of its constraints and both bodies' state. Feeds the memory
    /// bandwidth ceiling of [`StepTrace::replay`].
    pub bytes: u64,
}

/// The trace of one `update`.
#[derive(Debug, Clone, Default)]
pub struct StepTrace {
    pub events: Vec<TraceEvent>,
    /// Workers in the pool that ran the step.
    pub threads: usize,
    /// Per section number: how its jobs were handed out (a section missing
    /// here replays as a [`SectionKind::Loop`]).
    pub sections: Vec<SectionKind>,
    /// Nanoseconds from the start of the step to the end of its recording
    /// (the step's wall time, plus a few microseconds of bookkeeping).
    pub wall_ns: u64,
    /// About how many bytes the step's data takes: the awake bodies, body
    /// pairs, contact constraints and joints at their allocation cost per
    /// item ([`Capacities::memory_bytes`](crate::Capacities::memory_bytes)'s
    /// figures). A replay counts the part beyond the machine's last-level
    /// cache as streamed from memory; 0 counts everything.
    pub footprint_bytes: u64,
    /// Recorded by [`PhysicsSystem::record_relayed_trace`](crate::PhysicsSystem::record_relayed_trace):
    /// the parallel loops ran one job at a time, handed between two
    /// workers, so its job durations include data moving between cores and
    /// nothing else of a parallel run (see [`Migration`]).
    pub relayed: bool,
}

/// Total work and critical path of a traced step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkSpan {
    /// T1: sum of all job durations.
    pub work: Duration,
    /// T∞: the longest dependency chain of jobs.
    pub span: Duration,
    pub jobs: usize,
}

impl WorkSpan {
    /// T1/T∞: the most speedup any number of workers could give.
    pub fn parallelism(&self) -> f64 {
        self.work.as_secs_f64() / self.span.as_secs_f64().max(1e-12)
    }
}

impl StepTrace {
    /// T1 and T∞ of the step (see the module docs).
    pub fn work_span(&self) -> WorkSpan {
        let (work, jobs) = self
            .events
            .iter()
            .fold((0u64, 0usize), |(w, n), e| match e.kind {
                SliceKind::Job { .. } => (w + e.dur_ns, n + 1),
                SliceKind::Phase => (w, n),
            });
        WorkSpan {
            work: Duration::from_nanos(work),
            span: Duration::from_nanos(span_of(&self.stage_maxima())),
            jobs,
        }
    }

    /// Work and span of a run of near-identical steps (a settled scene
    /// traced several times in a row), robust to preemption: every stage's
    /// longest job is taken per step, and then the median over the steps,
    /// before chains and sections are summed as in [`work_span`](Self::work_span);
    /// T1 is the median step's work. A job stretched by an interrupt or a
    /// vCPU pause makes one step's stage long but not the median's, so this
    /// estimates the span of the code rather than of the machine's noise.
    /// `None` unless every trace has the same sections, chains and stages.
    pub fn median_work_span(traces: &[StepTrace]) -> Option<WorkSpan> {
        let per_step: Vec<Vec<StageMax>> = traces.iter().map(|t| t.stage_maxima()).collect();
        let first = per_step.first()?;
        if per_step
            .iter()
            .any(|s| s.len() != first.len() || s.iter().zip(first).any(|(a, b)| a.0 != b.0))
        {
            return None;
        }
        let median = |mut v: Vec<u64>| {
            v.sort_unstable();
            v[v.len() / 2]
        };
        let stages: Vec<StageMax> = (0..first.len())
            .map(|k| {
                (
                    first[k].0,
                    median(per_step.iter().map(|s| s[k].1).collect()),
                )
            })
            .collect();
        let mut works: Vec<WorkSpan> = traces.iter().map(|t| t.work_span()).collect();
        works.sort_by_key(|w| w.work);
        let mid = works[works.len() / 2];
        Some(WorkSpan {
            work: mid.work,
            span: Duration::from_nanos(span_of(&stages)),
            jobs: mid.jobs,
        })
    }

    /// The longest job of every (section, chain, stage), sorted by it.
    fn stage_maxima(&self) -> Vec<StageMax> {
        let mut jobs: Vec<StageMax> = self
            .events
            .iter()
            .filter_map(|e| match e.kind {
                SliceKind::Job {
                    section,
                    chain,
                    stage,
                } => Some(((section, chain, stage), e.dur_ns)),
                SliceKind::Phase => None,
            })
            .collect();
        jobs.sort_unstable();
        let mut out: Vec<StageMax> = Vec::new();
        for (key, d) in jobs {
            match out.last_mut() {
                Some(last) if last.0 == key => last.1 = last.1.max(d),
                _ => out.push((key, d)),
            }
        }
        out
    }

    /// The trace as Chrome trace-event JSON (open in Perfetto or
    /// chrome://tracing): one track per worker, phases and jobs as complete
    /// ("X") slices, times in microseconds.
    pub fn to_chrome_json(&self) -> String {
        use std::fmt::Write;
        let mut s = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        for t in 0..=self.threads {
            let name = if t == self.threads {
                "caller".to_string()
            } else {
                format!("worker {t}")
            };
            let _ = writeln!(
                s,
                "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":{t},\"args\":{{\"name\":\"{name}\"}}}},"
            );
        }
        for (k, e) in self.events.iter().enumerate() {
            let (cat, args) = match e.kind {
                SliceKind::Phase => ("phase", String::new()),
                SliceKind::Job {
                    section,
                    chain,
                    stage,
                } => (
                    "job",
                    format!(
                        ",\"args\":{{\"section\":{section},\"chain\":{chain},\"stage\":{stage}}}"
                    ),
                ),
            };
            let comma = if k + 1 == self.events.len() { "" } else { "," };
            let _ = writeln!(
                s,
                "{{\"name\":\"{}\",\"cat\":\"{cat}\",\"ph\":\"X\",\"pid\":1,\"tid\":{},\"ts\":{:.3},\"dur\":{:.3}{args}}}{comma}",
                e.name,
                e.thread,
                e.start_ns as f64 / 1000.0,
                e.dur_ns as f64 / 1000.0,
            );
        }
        s.push_str("]}\n");
        s
    }
}

/// A (section, chain, stage) and the duration of its longest job, in ns.
type StageMax = ((u32, u32, u32), u64);

/// T∞ from the longest job of every (section, chain, stage), sorted: per
/// section the longest chain (sum of its stages), summed over sections.
fn span_of(stages: &[StageMax]) -> u64 {
    let mut span = 0;
    let mut i = 0;
    while i < stages.len() {
        let section = stages[i].0 .0;
        let mut longest = 0;
        while i < stages.len() && stages[i].0 .0 == section {
            let chain = stages[i].0 .1;
            let mut length = 0;
            while i < stages.len() && stages[i].0 .0 == section && stages[i].0 .1 == chain {
                length += stages[i].1;
                i += 1;
            }
            longest = longest.max(length);
        }
        span += longest;
    }
    span
}

/// Armed recorder: one event buffer per worker (plus one for outside
/// threads), each on its own cache lines, so recording never contends
/// across workers (adjacent buffers made a traced 2-thread step's jobs up
/// to 1.5x slower: every push moved the shared line).
pub(crate) struct Tracer {
    origin: Instant,
    buffers: Vec<CachePadded<Mutex<Vec<TraceEvent>>>>,
    next_section: AtomicU32,
    /// (section, kind) as the sections were opened.
    sections: Mutex<Vec<(u32, SectionKind)>>,
    threads: usize,
    /// A relayed step ([`StepTrace::relayed`]).
    pub relay: bool,
}

impl Tracer {
    pub fn new(threads: usize) -> Self {
        Self {
            origin: Instant::now(),
            buffers: (0..=threads)
                .map(|_| CachePadded::new(Mutex::new(Vec::with_capacity(4096))))
                .collect(),
            next_section: AtomicU32::new(0),
            sections: Mutex::new(Vec::with_capacity(256)),
            threads,
            relay: false,
        }
    }

    /// A recorder for a relayed step (see [`StepTrace::relayed`]).
    pub fn relayed(threads: usize) -> Self {
        Self {
            relay: true,
            ..Self::new(threads)
        }
    }

    /// The lane of a worker (`Executor::worker_index`); work from outside
    /// the executor's workers goes on the last one.
    fn lane(&self, worker: Option<usize>) -> usize {
        worker.filter(|&t| t < self.threads).unwrap_or(self.threads)
    }

    pub fn new_section(&self, kind: SectionKind) -> u32 {
        let section = self.next_section.fetch_add(1, Ordering::Relaxed);
        self.sections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((section, kind));
        section
    }

    pub fn record(
        &self,
        worker: Option<usize>,
        name: &'static str,
        start: Instant,
        kind: SliceKind,
        bytes: u64,
    ) {
        let end = Instant::now();
        let t = self.lane(worker);
        let event = TraceEvent {
            name,
            thread: t as u32,
            start_ns: start.duration_since(self.origin).as_nanos() as u64,
            dur_ns: end.duration_since(start).as_nanos() as u64,
            kind,
            bytes,
        };
        self.buffers[t]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event);
    }

    pub fn finish(self) -> StepTrace {
        let wall_ns = self.origin.elapsed().as_nanos() as u64;
        let mut opened = self
            .sections
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        opened.sort_unstable_by_key(|&(s, _)| s);
        let mut sections = vec![SectionKind::Loop; opened.len()];
        for (s, kind) in opened {
            if let Some(slot) = sections.get_mut(s as usize) {
                *slot = kind;
            }
        }
        let mut events: Vec<TraceEvent> = self
            .buffers
            .into_iter()
            .flat_map(|b| {
                b.into_inner()
                    .into_inner()
                    .unwrap_or_else(|e| e.into_inner())
            })
            .collect();
        events.sort_by_key(|e| (e.start_ns, e.thread));
        StepTrace {
            events,
            threads: self.threads,
            sections,
            wall_ns,
            footprint_bytes: 0,
            relayed: self.relay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(section: u32, chain: u32, stage: u32, dur_ns: u64) -> TraceEvent {
        TraceEvent {
            name: "j",
            thread: 0,
            start_ns: 0,
            dur_ns,
            kind: SliceKind::Job {
                section,
                chain,
                stage,
            },
            bytes: 0,
        }
    }

    #[test]
    fn work_and_span_follow_sections_chains_and_stages() {
        let t = StepTrace {
            threads: 2,
            sections: Vec::new(),
            wall_ns: 0,
            footprint_bytes: 0,
            relayed: false,
            events: vec![
                // section 0: serial 10
                job(0, 0, 0, 10),
                // section 1: one parallel loop, jobs 5, 7, 3 -> span 7
                job(1, 0, 0, 5),
                job(1, 0, 0, 7),
                job(1, 0, 0, 3),
                // section 2: chain 0 has stages (4,6) then (2) -> 8;
                // chain 1 is one job of 9 -> span 9
                job(2, 0, 0, 4),
                job(2, 0, 0, 6),
                job(2, 0, 1, 2),
                job(2, 1, 0, 9),
            ],
        };
        let ws = t.work_span();
        assert_eq!(ws.work, Duration::from_nanos(10 + 15 + 21));
        assert_eq!(ws.span, Duration::from_nanos(10 + 7 + 9));
        assert_eq!(ws.jobs, 8);
    }

    #[test]
    fn median_span_drops_a_preempted_job_but_keeps_steady_costs() {
        let step = |stretched: Option<usize>| {
            let mut durs = [10, 5, 7, 4, 6];
            if let Some(k) = stretched {
                durs[k] += 1000;
            }
            StepTrace {
                threads: 2,
                sections: Vec::new(),
                wall_ns: 0,
                footprint_bytes: 0,
                relayed: false,
                events: vec![
                    job(0, 0, 0, durs[0]),
                    job(1, 0, 0, durs[1]),
                    job(1, 0, 0, durs[2]),
                    job(2, 0, 0, durs[3]),
                    job(2, 0, 1, durs[4]),
                ],
            }
        };
        // each step has one job stretched by 1000 ns, a different one each
        let traces: Vec<StepTrace> = (0..5).map(|k| step(Some(k))).collect();
        for t in &traces {
            assert!(t.work_span().span >= Duration::from_nanos(1000));
        }
        let m = StepTrace::median_work_span(&traces).expect("same structure");
        assert_eq!(m.span, Duration::from_nanos(10 + 7 + 4 + 6));
        assert_eq!(m.work, Duration::from_nanos(32 + 1000));
        // a different structure has no median
        let mut other = traces.clone();
        other[2].events.pop();
        assert_eq!(StepTrace::median_work_span(&other), None);
    }
}
