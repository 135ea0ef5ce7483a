//! Replaying a traced step on simulated workers: a prediction of the step's
//! time at any worker count, and of what stops it scaling.
//!
//! T1/T∞ brackets the speedup between Brent's bound and the step's
//! parallelism, which is too wide to say where adding cores stops paying.
//! A replay runs the trace's own jobs, with their measured durations, on
//! `P` simulated workers that claim them by the kernel's rules:
//!
//! - the step's sections in order, with the time between them (the driving
//!   worker's untraced bookkeeping) serial;
//! - a serial section on one worker;
//! - a parallel loop (`jobs.rs`): the jobs split into one home range per
//!   worker; a worker claims its own range's jobs in index order, then
//!   the other ranges' leftovers in turn; the driving worker starts at
//!   once, helper `i` after `i` steals (each helper is the stolen half of
//!   the previous one's `rayon::join`); a claim from a range another
//!   worker claimed from last costs one handoff (the range's counter's
//!   cache line moves); the loop ends when the driver has seen
//!   every helper finish (helper `i`'s end reaches it through `i` joins);
//! - the solver's schedule (`solver/schedule.rs`): every worker walks the
//!   stages in order; at a stage whose predecessor in its island is not yet
//!   seen complete it runs a pack of small islands if one is left, else
//!   waits; a stage's batches are dealt out as one home range per worker,
//!   a worker drains its own range and then steals from the others' (a
//!   steal costs a handoff); it publishes its count once it finds nothing
//!   left, and a waiting worker sees a completed stage one handoff later
//!   (a wake-up later if it waited past its spinning and began yielding);
//!   packs left after the last stage are shared out at the end.
//!
//! The durations should come from a 1-thread trace (no contention baked
//! in), and a 1-thread replay reproduces that trace's wall time exactly:
//! there a job's gap to the next job of its section (the claim and the
//! recording) is counted as part of the job, and time outside sections as
//! serial.
//!
//! The memory-bandwidth ceiling: where the trace estimates the bytes a
//! section streams, the share of them that comes from memory rather than
//! the cache the cores share (the part of the step's footprint beyond
//! [`ReplayCosts::cache_bytes`]; never more than one core could have
//! streamed in the section's 1-thread time) must move at the bandwidth `P`
//! cores get: `P` times [`ReplayCosts::core_bandwidth`], at most
//! [`ReplayCosts::memory_bandwidth`]. A section takes at least that long.
//!
//! Jobs of parallel sections take [`ReplayCosts::co_run_slowdown`] times
//! their 1-thread duration on 2 workers or more (what busy neighbours cost
//! a core on this machine, measured apart from any sharing of data).
//!
//! Data moving between cores: [`StepTrace::replay_migrating`] slows the
//! jobs of parallel loops and serial stretches by [`Migration`]'s factors,
//! measured per job name from relayed traces (one job at a time, handed
//! between two cores); plain [`StepTrace::replay`] leaves it out.
//!
//! Not modelled: a worker that is
//! preempted or a core that runs slower than the other for a while (on a
//! shared VM the measured 2-thread speedup moves by ±8% from run to run
//! while the replay stays within ±3%), and the OS waking sleeping workers
//! (a pool runs steps back to back, so its workers are awake; the first
//! fork after an idle pause costs more).

use super::{SectionKind, SliceKind, StepTrace, TraceEvent};
use crate::jobs::home_range;
use std::time::Duration;

/// Chains of packed small islands are numbered from here in traces (see
/// [`SectionKind::Schedule`]).
pub(crate) const PACK_CHAIN_BASE: u32 = 1 << 20;

/// What synchronisation and memory cost on the machine a replay models.
/// Measure them with [`ReplayCosts::measure`]; [`Default`] is a machine
/// where synchronisation is free and bandwidth unlimited.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayCosts {
    /// Nanoseconds from a worker offering half of a `rayon::join` to an
    /// idle worker starting it (a parallel loop's helpers start one such
    /// steal after another).
    pub steal_ns: f64,
    /// Nanoseconds for a value one worker writes to reach another that is
    /// waiting for it (a cache line moving between cores): a barrier's
    /// release, a claim from a counter another worker touched last, the end
    /// of a join.
    pub handoff_ns: f64,
    /// Nanoseconds for a release to reach a worker that has waited longer
    /// than [`spin_window_ns`](Self::spin_window_ns) and so has begun
    /// yielding its core between checks (`jobs.rs`'s backoff).
    pub wake_ns: f64,
    /// How long a waiting worker spins before it starts yielding, ns.
    pub spin_window_ns: f64,
    /// Bytes per second one core streams from memory (a STREAM-like copy);
    /// `P` workers get `P` times this, up to [`memory_bandwidth`](Self::memory_bandwidth).
    pub core_bandwidth: f64,
    /// Bytes per second all cores together get (the memory system's limit).
    pub memory_bandwidth: f64,
    /// Bytes of last-level cache the workers share: a step whose footprint
    /// fits streams its repeated passes from there, not from memory.
    pub cache_bytes: f64,
    /// How much longer a job takes while every other worker runs one too
    /// (cores sharing caches, memory, a hypervisor's hyperthreads, a lower
    /// clock when all cores are busy): applied to the jobs of parallel
    /// sections on 2 workers or more; 1 when nothing is shared.
    pub co_run_slowdown: f64,
}

impl Default for ReplayCosts {
    fn default() -> Self {
        ReplayCosts {
            steal_ns: 0.0,
            handoff_ns: 0.0,
            wake_ns: 0.0,
            spin_window_ns: f64::INFINITY,
            core_bandwidth: f64::INFINITY,
            memory_bandwidth: f64::INFINITY,
            cache_bytes: 0.0,
            co_run_slowdown: 1.0,
        }
    }
}

impl ReplayCosts {
    /// Bytes per second `workers` cores stream together.
    pub fn bandwidth(&self, workers: usize) -> f64 {
        (self.core_bandwidth * workers as f64).min(self.memory_bandwidth)
    }

    /// The share of a step's streamed bytes that comes from memory: the
    /// part of its footprint beyond the shared cache (all of it when the
    /// footprint is unknown).
    pub fn memory_share(&self, footprint_bytes: u64) -> f64 {
        if footprint_bytes == 0 {
            return 1.0;
        }
        let f = footprint_bytes as f64;
        ((f - self.cache_bytes.max(0.0)) / f).clamp(0.0, 1.0)
    }
}

/// What data moving between cores costs the jobs of a step's parallel
/// loops and serial stretches, by job name: the model's answer to what a
/// 1-thread trace cannot show. On one core every job finds what the jobs
/// before it wrote in that core's caches; on `P` cores, part of it was
/// written on another core and its lines move first. Home ranges keep it
/// local between loops that split the same items the same way (bodies
/// after bodies), not between loops over different items (manifolds in
/// pair order, then in the solver's order; bodies, then pairs of bodies),
/// where about `(P - 1) / P` of it is remote. Scattered reads of such
/// lines cost a loop like `copy manifolds` several times its 1-thread time
/// on a 2-core VM, more than anything else the replay leaves out.
///
/// Measured with the kernel's own jobs ([`measure`](Self::measure)): a
/// relayed trace ([`StepTrace::relayed`]) runs every loop's jobs one at a
/// time, each on the one of two workers whose home range holds it, so what
/// a job reads was written on the other core as often as on 2 workers that
/// do not steal, while nothing runs
/// beside it (what running beside other jobs costs is
/// [`ReplayCosts::co_run_slowdown`], measured apart). The solver's
/// schedule is left out: its home ranges keep its data on its core from
/// one iteration to the next.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Migration {
    /// `(job name, factor)`: a job of that name takes `factor` (at least 1)
    /// times its 1-thread duration when half its data was last written on
    /// another core. Names not listed cost nothing extra.
    pub factors: Vec<(&'static str, f64)>,
}

impl Migration {
    /// Per name of a loop's or serial stretch's jobs, the median over the
    /// pairs `(one[i], relayed[i])` of the name's summed durations in the
    /// relayed trace over those in the 1-thread one. A pair should be two
    /// neighbouring steps of one world (see `scaling --predict`), so that
    /// both see about the same state and the same moment of a shared
    /// machine; the median drops a pair that a preemption or a slow
    /// minute stretched. A ratio below 1 is noise and counts as 1; a name
    /// missing from either trace of a pair is left out of that pair, and a
    /// name in no pair gets no factor. Sorted by name.
    pub fn measure(one: &[StepTrace], relayed: &[StepTrace]) -> Migration {
        let sums = |t: &StepTrace| {
            let mut by_name: Vec<(&'static str, u64)> = Vec::new();
            for e in &t.events {
                let SliceKind::Job { section, .. } = e.kind else {
                    continue;
                };
                let kind = t
                    .sections
                    .get(section as usize)
                    .copied()
                    .unwrap_or_default();
                if kind == SectionKind::Schedule {
                    continue;
                }
                match by_name.iter_mut().find(|(n, _)| *n == e.name) {
                    Some((_, d)) => *d += e.dur_ns,
                    None => by_name.push((e.name, e.dur_ns)),
                }
            }
            by_name
        };
        let mut ratios: Vec<(&'static str, Vec<f64>)> = Vec::new();
        for (a, b) in one.iter().zip(relayed) {
            let moved = sums(b);
            for (name, d1) in sums(a) {
                let Some(&(_, d2)) = moved.iter().find(|(n, _)| *n == name) else {
                    continue;
                };
                if d1 == 0 {
                    continue;
                }
                let r = d2 as f64 / d1 as f64;
                match ratios.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, v)) => v.push(r),
                    None => ratios.push((name, vec![r])),
                }
            }
        }
        let mut factors: Vec<(&'static str, f64)> = ratios
            .into_iter()
            .map(|(name, mut v)| {
                v.sort_by(f64::total_cmp);
                // the lower middle of an even count: no mean of two
                (name, v[(v.len() - 1) / 2].max(1.0))
            })
            .collect();
        factors.sort_by(|a, b| a.0.cmp(b.0));
        Migration { factors }
    }

    /// How much longer a job named `name` takes on `workers` workers:
    /// its factor's excess over 1 scaled from the measured half remote to
    /// `(workers - 1) / workers` remote (1 on one worker).
    pub fn at(&self, name: &str, workers: usize) -> f64 {
        if workers <= 1 {
            return 1.0;
        }
        let Some(&(_, f)) = self.factors.iter().find(|(n, _)| *n == name) else {
            return 1.0;
        };
        if !f.is_finite() || f <= 1.0 {
            return 1.0;
        }
        let remote = (workers - 1) as f64 / workers as f64;
        1.0 + (f - 1.0) * remote * 2.0
    }
}

/// One section of a replayed step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SectionReplay {
    /// The section's number in the trace.
    pub section: u32,
    /// Its jobs' name.
    pub name: &'static str,
    pub kind: SectionKind,
    pub jobs: usize,
    /// Sum of its jobs' durations (gaps between them included, see the
    /// module docs), ns.
    pub work_ns: u64,
    /// Its predicted wall time on the replay's workers, ns.
    pub predicted_ns: u64,
    /// Estimated bytes its jobs stream.
    pub bytes: u64,
    /// The part of them streamed from memory (see the module docs).
    pub memory_bytes: u64,
    /// The time those take at the workers' bandwidth, ns (the prediction
    /// is at least this).
    pub bandwidth_ns: u64,
}

impl SectionReplay {
    /// Predicted time beyond a perfect share of the work (`work / P`), ns:
    /// what barriers, claims, load imbalance, a serial job or bandwidth
    /// cost this section.
    pub fn excess_ns(&self, workers: usize) -> u64 {
        self.predicted_ns
            .saturating_sub(self.work_ns / workers.max(1) as u64)
    }

    /// Whether the bandwidth ceiling decides this section's time.
    pub fn bandwidth_bound(&self) -> bool {
        self.memory_bytes > 0 && self.bandwidth_ns >= self.predicted_ns
    }
}

/// A traced step replayed on simulated workers ([`StepTrace::replay`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    pub workers: usize,
    /// Predicted wall time of the step.
    pub step: Duration,
    /// Time outside every section (serial bookkeeping of the driving
    /// worker), ns.
    pub serial_gaps_ns: u64,
    pub sections: Vec<SectionReplay>,
}

impl Replay {
    /// What costs this replay the most beyond a perfect share of the work:
    /// the serial gaps between sections (all serial sections and gaps
    /// together, named by the longest serial section), or the section with
    /// the largest excess. Returns a description and its excess in ns.
    pub fn limiter(&self) -> (String, u64) {
        let p = self.workers;
        let serial_jobs = self
            .sections
            .iter()
            .filter(|s| s.kind == SectionKind::Serial || s.jobs == 1);
        let serial: u64 = self.serial_gaps_ns - self.serial_gaps_ns / p as u64
            + serial_jobs.clone().map(|s| s.excess_ns(p)).sum::<u64>();
        let longest_serial = serial_jobs.max_by_key(|s| s.excess_ns(p));
        let worst = self
            .sections
            .iter()
            .filter(|s| s.kind != SectionKind::Serial && s.jobs > 1)
            .max_by_key(|s| s.excess_ns(p));
        match worst {
            Some(s) if s.excess_ns(p) > serial => {
                let why = if s.bandwidth_bound() {
                    "memory bandwidth"
                } else if s.kind == SectionKind::Schedule {
                    "barriers and imbalance of its stages"
                } else {
                    "fork, claims and join"
                };
                (format!("{} ({why})", s.name), s.excess_ns(p))
            }
            _ => (
                format!(
                    "serial stretches ({} and the gaps between sections)",
                    longest_serial.map_or("bookkeeping", |s| s.name)
                ),
                serial,
            ),
        }
    }
}

/// A section of a trace, rebuilt for replay.
struct Model {
    section: u32,
    name: &'static str,
    kind: SectionKind,
    /// Loop and serial: job durations in claim order.
    jobs: Vec<u64>,
    /// Schedule: stages in schedule order, and packs by index.
    stages: Vec<StageModel>,
    packs: Vec<u64>,
    work: u64,
    bytes: u64,
    count: usize,
    start: u64,
    end: u64,
}

struct StageModel {
    /// The stage this one waits for (the previous stage of its island).
    dep: Option<usize>,
    batches: Vec<u64>,
}

impl StepTrace {
    /// Predicts this step's time on `workers` workers (see the module
    /// docs): the trace's jobs replayed with the kernel's claiming rules
    /// and the given synchronisation and bandwidth costs. Meant for a
    /// 1-thread trace; a multi-thread trace replays too, with its jobs'
    /// contended durations. Deterministic: the same trace and costs give
    /// the same prediction.
    pub fn replay(&self, workers: usize, costs: &ReplayCosts) -> Replay {
        self.replay_migrating(workers, costs, &Migration::default())
    }

    /// [`replay`](Self::replay) with the jobs of parallel loops and serial
    /// stretches slowed, on 2 workers or more, by what moving their data
    /// between cores costs them ([`Migration::at`]).
    pub fn replay_migrating(
        &self,
        workers: usize,
        costs: &ReplayCosts,
        migration: &Migration,
    ) -> Replay {
        let p = workers.max(1);
        let models = self.models();
        // Serial time outside sections: before the first, between, after
        // the last (to the end of the recording).
        let mut gaps = 0u64;
        let mut at = 0u64;
        for m in &models {
            gaps += m.start.saturating_sub(at);
            at = at.max(m.end);
        }
        gaps += self.wall_ns.saturating_sub(at);
        let bandwidth = costs.bandwidth(p);
        let share = costs.memory_share(self.footprint_bytes);
        let sections: Vec<SectionReplay> = models
            .iter()
            .map(|m| {
                let moved = migration.at(m.name, p);
                let jobs: Vec<u64> = m
                    .jobs
                    .iter()
                    .map(|&d| (d as f64 * moved).round() as u64)
                    .collect();
                let simulated = match m.kind {
                    SectionKind::Serial => jobs.iter().sum(),
                    SectionKind::Loop => replay_loop(&jobs, p, costs),
                    SectionKind::Schedule => replay_schedule(&m.stages, &m.packs, p, costs),
                };
                // One core streamed them in the section's 1-thread time at
                // most at one core's bandwidth.
                let one_core = m.work as f64 * 1e-9 * costs.core_bandwidth;
                let memory_bytes = (m.bytes as f64 * share).min(one_core) as u64;
                let bandwidth_ns = if memory_bytes > 0 && bandwidth.is_finite() && bandwidth > 0.0 {
                    (memory_bytes as f64 * 1e9 / bandwidth) as u64
                } else {
                    0
                };
                SectionReplay {
                    section: m.section,
                    name: m.name,
                    kind: m.kind,
                    jobs: m.count,
                    work_ns: m.work,
                    predicted_ns: simulated.max(bandwidth_ns),
                    bytes: m.bytes,
                    memory_bytes,
                    bandwidth_ns,
                }
            })
            .collect();
        let total = gaps + sections.iter().map(|s| s.predicted_ns).sum::<u64>();
        Replay {
            workers: p,
            step: Duration::from_nanos(total),
            serial_gaps_ns: gaps,
            sections,
        }
    }

    /// The trace's sections in order, each job with its duration (a
    /// 1-thread trace: up to the next job of its section).
    fn models(&self) -> Vec<Model> {
        let mut jobs: Vec<(&TraceEvent, u32, u32, u32)> = self
            .events
            .iter()
            .filter_map(|e| match e.kind {
                SliceKind::Job {
                    section,
                    chain,
                    stage,
                } => Some((e, section, chain, stage)),
                SliceKind::Phase => None,
            })
            .collect();
        // by section, then in the order the jobs started
        jobs.sort_by_key(|&(e, section, _, _)| (section, e.start_ns, e.thread));
        let mut models: Vec<Model> = Vec::new();
        let mut i = 0;
        while i < jobs.len() {
            let section = jobs[i].1;
            let mut j = i;
            while j < jobs.len() && jobs[j].1 == section {
                j += 1;
            }
            let run = &jobs[i..j];
            let kind = self
                .sections
                .get(section as usize)
                .copied()
                .unwrap_or_default();
            // A job's cost: up to the next job's start in a 1-thread trace
            // (the claim and its recording belong to it), its own slice
            // otherwise.
            let cost = |k: usize| -> u64 {
                let e = run[k].0;
                match run.get(k + 1) {
                    Some(next) if self.threads == 1 => {
                        next.0.start_ns.saturating_sub(e.start_ns).max(e.dur_ns)
                    }
                    _ => e.dur_ns,
                }
            };
            let mut model = Model {
                section,
                name: run[0].0.name,
                kind,
                jobs: Vec::new(),
                stages: Vec::new(),
                packs: Vec::new(),
                work: 0,
                bytes: run.iter().map(|r| r.0.bytes).sum(),
                count: run.len(),
                start: run.iter().map(|r| r.0.start_ns).min().unwrap_or(0),
                end: run
                    .iter()
                    .map(|r| r.0.start_ns + r.0.dur_ns)
                    .max()
                    .unwrap_or(0),
            };
            let costs: Vec<u64> = (0..run.len()).map(cost).collect();
            model.work = costs.iter().sum();
            if kind == SectionKind::Schedule {
                let mut packs: Vec<(u32, u64)> = Vec::new();
                let mut stages: Vec<(u32, u32, Vec<u64>)> = Vec::new();
                for (k, &(_, _, chain, stage)) in run.iter().enumerate() {
                    if chain >= PACK_CHAIN_BASE {
                        packs.push((chain - PACK_CHAIN_BASE, costs[k]));
                    } else {
                        match stages.iter_mut().find(|s| s.0 == stage) {
                            Some(s) => s.2.push(costs[k]),
                            None => stages.push((stage, chain, vec![costs[k]])),
                        }
                    }
                }
                packs.sort_by_key(|p| p.0);
                stages.sort_by_key(|s| s.0);
                model.packs = packs.into_iter().map(|p| p.1).collect();
                for k in 0..stages.len() {
                    let chain = stages[k].1;
                    let dep = (0..k).rev().find(|&d| stages[d].1 == chain);
                    model.stages.push(StageModel {
                        dep,
                        batches: std::mem::take(&mut stages[k].2),
                    });
                }
            } else {
                model.jobs = costs;
            }
            models.push(model);
            i = j;
        }
        models.sort_by_key(|m| (m.start, m.section));
        models
    }
}

/// The worker with the earliest clock among those `runnable` (ties: the
/// lowest index, so a replay is deterministic).
fn earliest(clock: &[u64], runnable: impl Fn(usize) -> bool) -> Option<usize> {
    (0..clock.len())
        .filter(|&w| runnable(w))
        .min_by_key(|&w| (clock[w], w))
}

/// A parallel loop on `p` workers (see the module docs).
fn replay_loop(jobs: &[u64], p: usize, costs: &ReplayCosts) -> u64 {
    let tasks = p.min(jobs.len()).max(1);
    let sync = sync_costs(tasks, costs);
    let (steal, handoff) = (sync.steal, sync.handoff);
    let slow = co_run(tasks, costs);
    let mut clock: Vec<u64> = (0..tasks).map(|i| i as u64 * steal).collect();
    let mut ran = vec![false; tasks];
    // per home: the next job, and who claimed from it last (its worker
    // first: the caller's writes of the cursors are part of the steal)
    let mut next: Vec<usize> = (0..tasks)
        .map(|h| home_range(jobs.len(), tasks, h).start)
        .collect();
    let mut last: Vec<usize> = (0..tasks).collect();
    loop {
        let w = earliest(&clock, |_| true).expect("one task at least");
        // its own home first, then the others' in turn; none left: done
        let Some(h) = (0..tasks)
            .map(|r| (w + r) % tasks)
            .find(|&h| next[h] < home_range(jobs.len(), tasks, h).end)
        else {
            break;
        };
        let claim = if last[h] != w { handoff } else { 0 };
        clock[w] += claim + slow(jobs[next[h]]);
        next[h] += 1;
        last[h] = w;
        ran[w] = true;
    }
    join_end(&clock, &ran, &sync)
}

/// When the driving worker (task 0) has seen every helper that ran finish:
/// helper `i`'s end reaches it through `i` joins (the last one late if the
/// driver waited past its spinning).
fn join_end(clock: &[u64], ran: &[bool], sync: &Sync) -> u64 {
    let last = (1..clock.len())
        .filter(|&w| ran[w])
        .map(|w| clock[w] + (w as u64 - 1) * sync.handoff)
        .max();
    match last {
        Some(end) => sync.seen(end, clock[0]).max(clock[0]),
        None => clock[0],
    }
}

/// A replay's synchronisation costs in whole ns (all zero on one worker).
struct Sync {
    steal: u64,
    handoff: u64,
    wake: u64,
    window: u64,
}

impl Sync {
    /// When a worker waiting since `since` sees a release made at
    /// `release`: a handoff later, or a wake-up later if it waited past its
    /// spinning.
    fn seen(&self, release: u64, since: u64) -> u64 {
        if release.saturating_sub(since) > self.window {
            release + self.wake.max(self.handoff)
        } else {
            release + self.handoff
        }
    }
}

/// A job's duration while `workers` workers run (see
/// [`ReplayCosts::co_run_slowdown`]).
fn co_run(workers: usize, costs: &ReplayCosts) -> impl Fn(u64) -> u64 {
    let f = costs.co_run_slowdown;
    let f = if workers > 1 && f.is_finite() && f > 0.0 {
        f
    } else {
        1.0
    };
    move |d| (d as f64 * f).round() as u64
}

/// The costs of a replay on `workers` workers.
fn sync_costs(workers: usize, costs: &ReplayCosts) -> Sync {
    let ns = |x: f64| {
        if x.is_finite() && x > 0.0 {
            x.round() as u64
        } else {
            0
        }
    };
    if workers <= 1 {
        return Sync {
            steal: 0,
            handoff: 0,
            wake: 0,
            window: u64::MAX,
        };
    }
    Sync {
        steal: ns(costs.steal_ns),
        handoff: ns(costs.handoff_ns),
        wake: ns(costs.wake_ns),
        window: if costs.spin_window_ns.is_finite() {
            ns(costs.spin_window_ns)
        } else {
            u64::MAX
        },
    }
}

/// Where a simulated worker of the schedule is.
#[derive(Clone, Copy, PartialEq)]
enum At {
    /// Before stage `s` (checking its dependency).
    Before,
    /// Claiming in the stage, at home range offset `k`.
    Claiming {
        k: usize,
        finished: u32,
    },
    /// Waiting for the stage's dependency, no pack left.
    Blocked,
    Finished,
}

/// The solver's schedule on `p` workers (see the module docs): a discrete
/// event simulation, always advancing the worker with the earliest clock,
/// so every claim and publication happens in time order.
fn replay_schedule(stages: &[StageModel], packs: &[u64], p: usize, costs: &ReplayCosts) -> u64 {
    let sync = sync_costs(p, costs);
    let (steal, handoff) = (sync.steal, sync.handoff);
    let slow = co_run(p, costs);
    // Since when each blocked worker has been waiting (the wake-up rule).
    let mut since = vec![0u64; p];
    let mut clock: Vec<u64> = (0..p).map(|w| w as u64 * steal).collect();
    let mut stage = vec![0usize; p];
    let mut at = vec![At::Before; p];
    let mut claimed = vec![0usize; stages.len() * p];
    let mut done = vec![0usize; stages.len()];
    let mut complete: Vec<Option<u64>> = vec![None; stages.len()];
    let mut next_pack = 0usize;
    let mut ran = vec![false; p];
    while let Some(w) = earliest(&clock, |w| !matches!(at[w], At::Blocked | At::Finished)) {
        let s = stage[w];
        if s == stages.len() {
            // every stage done: the packs left
            if next_pack < packs.len() {
                clock[w] += handoff + slow(packs[next_pack]);
                next_pack += 1;
                ran[w] = true;
            } else {
                at[w] = At::Finished;
            }
            continue;
        }
        match at[w] {
            At::Before => {
                // a stage without a predecessor is open at once
                let done_at = stages[s].dep.map_or(Some(None), |d| complete[d].map(Some));
                match done_at {
                    Some(None) => at[w] = At::Claiming { k: 0, finished: 0 },
                    Some(Some(c)) if c + handoff <= clock[w] => {
                        at[w] = At::Claiming { k: 0, finished: 0 }
                    }
                    _ if next_pack < packs.len() => {
                        clock[w] += handoff + slow(packs[next_pack]);
                        next_pack += 1;
                        ran[w] = true;
                    }
                    Some(Some(c)) => clock[w] = sync.seen(c, clock[w]),
                    None => {
                        since[w] = clock[w];
                        at[w] = At::Blocked;
                    }
                }
            }
            At::Claiming { mut k, finished } => {
                let n = stages[s].batches.len();
                let mut got = None;
                while k < p {
                    let home = (w + k) % p;
                    let std::ops::Range { start: lo, end: hi } = home_range(n, p, home);
                    let c = &mut claimed[s * p + home];
                    if lo + *c < hi {
                        got = Some((lo + *c, k > 0));
                        *c += 1;
                        break;
                    }
                    k += 1;
                }
                match got {
                    Some((b, stolen)) => {
                        clock[w] += slow(stages[s].batches[b]) + if stolen { handoff } else { 0 };
                        ran[w] = true;
                        at[w] = At::Claiming {
                            k,
                            finished: finished + 1,
                        };
                    }
                    None => {
                        // nothing left to claim: publish and move on
                        done[s] += finished as usize;
                        if done[s] == n && complete[s].is_none() {
                            complete[s] = Some(clock[w]);
                            for v in 0..p {
                                if at[v] == At::Blocked && stages[stage[v]].dep == Some(s) {
                                    clock[v] = clock[v].max(sync.seen(clock[w], since[v]));
                                    at[v] = At::Before;
                                }
                            }
                        }
                        stage[w] += 1;
                        at[w] = At::Before;
                    }
                }
            }
            At::Blocked | At::Finished => unreachable!("not runnable"),
        }
    }
    debug_assert!(
        at.iter().all(|a| *a == At::Finished),
        "every simulated worker finishes"
    );
    join_end(&clock, &ran, &sync)
}
