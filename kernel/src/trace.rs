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
//! number of workers can reach on this step, so it predicts where scaling
//! stops on machines with more cores than the one measured.

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
}

/// The trace of one `update`.
#[derive(Debug, Clone, Default)]
pub struct StepTrace {
    pub events: Vec<TraceEvent>,
    /// Workers in the pool that ran the step.
    pub threads: usize,
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
        let mut jobs: Vec<(u32, u32, u32, u64)> = self
            .events
            .iter()
            .filter_map(|e| match e.kind {
                SliceKind::Job {
                    section,
                    chain,
                    stage,
                } => Some((section, chain, stage, e.dur_ns)),
                SliceKind::Phase => None,
            })
            .collect();
        jobs.sort_unstable();
        let work: u64 = jobs.iter().map(|j| j.3).sum();
        let mut span = 0u64;
        let mut i = 0;
        while i < jobs.len() {
            // one section
            let section = jobs[i].0;
            let mut longest_chain = 0u64;
            while i < jobs.len() && jobs[i].0 == section {
                let chain = jobs[i].1;
                let mut chain_len = 0u64;
                while i < jobs.len() && jobs[i].0 == section && jobs[i].1 == chain {
                    let stage = jobs[i].2;
                    let mut stage_max = 0u64;
                    while i < jobs.len()
                        && jobs[i].0 == section
                        && jobs[i].1 == chain
                        && jobs[i].2 == stage
                    {
                        stage_max = stage_max.max(jobs[i].3);
                        i += 1;
                    }
                    chain_len += stage_max;
                }
                longest_chain = longest_chain.max(chain_len);
            }
            span += longest_chain;
        }
        WorkSpan {
            work: Duration::from_nanos(work),
            span: Duration::from_nanos(span),
            jobs: jobs.len(),
        }
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

/// Armed recorder: one event buffer per worker (plus one for outside
/// threads), so recording never contends across workers.
pub(crate) struct Tracer {
    origin: Instant,
    buffers: Vec<Mutex<Vec<TraceEvent>>>,
    next_section: AtomicU32,
    threads: usize,
}

impl Tracer {
    pub fn new(threads: usize) -> Self {
        Self {
            origin: Instant::now(),
            buffers: (0..=threads)
                .map(|_| Mutex::new(Vec::with_capacity(4096)))
                .collect(),
            next_section: AtomicU32::new(0),
            threads,
        }
    }

    fn thread(&self) -> usize {
        rayon::current_thread_index()
            .filter(|&t| t < self.threads)
            .unwrap_or(self.threads)
    }

    pub fn new_section(&self) -> u32 {
        self.next_section.fetch_add(1, Ordering::Relaxed)
    }

    pub fn record(&self, name: &'static str, start: Instant, kind: SliceKind) {
        let end = Instant::now();
        let t = self.thread();
        let event = TraceEvent {
            name,
            thread: t as u32,
            start_ns: start.duration_since(self.origin).as_nanos() as u64,
            dur_ns: end.duration_since(start).as_nanos() as u64,
            kind,
        };
        self.buffers[t]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event);
    }

    pub fn finish(self) -> StepTrace {
        let mut events: Vec<TraceEvent> = self
            .buffers
            .into_iter()
            .flat_map(|b| b.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect();
        events.sort_by_key(|e| (e.start_ns, e.thread));
        StepTrace {
            events,
            threads: self.threads,
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
        }
    }

    #[test]
    fn work_and_span_follow_sections_chains_and_stages() {
        let t = StepTrace {
            threads: 2,
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
}
