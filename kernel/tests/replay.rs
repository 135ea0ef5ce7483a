//! The scheduler simulator (`StepTrace::replay`) on synthetic traces with
//! known answers, and on a real 1-thread trace, whose wall time a
//! 1-worker replay must reproduce exactly.

use archipelago::*;
use std::time::Duration;

/// Chains of packed small islands start here in traces (the kernel's
/// `PACK_CHAIN_BASE`).
const PACK: u32 = 1 << 20;

/// A 1-thread trace: the jobs `(section, chain, stage, ns)` back to back
/// from t = 0, in the order given.
fn trace(sections: &[SectionKind], jobs: &[(u32, u32, u32, u64)]) -> StepTrace {
    let mut t = 0;
    let events = jobs
        .iter()
        .map(|&(section, chain, stage, dur_ns)| {
            let e = TraceEvent {
                name: "job",
                thread: 0,
                start_ns: t,
                dur_ns,
                kind: SliceKind::Job {
                    section,
                    chain,
                    stage,
                },
                bytes: 0,
            };
            t += dur_ns;
            e
        })
        .collect();
    StepTrace {
        events,
        threads: 1,
        sections: sections.to_vec(),
        wall_ns: t,
        footprint_bytes: 0,
        relayed: false,
    }
}

fn ns(r: &Replay) -> u64 {
    r.step.as_nanos() as u64
}

const WORKERS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

fn costs(steal_ns: f64, handoff_ns: f64) -> ReplayCosts {
    ReplayCosts {
        steal_ns,
        handoff_ns,
        ..ReplayCosts::default()
    }
}

#[test]
fn one_long_job_does_not_speed_up() {
    for kind in [
        SectionKind::Serial,
        SectionKind::Loop,
        SectionKind::Schedule,
    ] {
        let t = trace(&[kind], &[(0, 0, 0, 5_000)]);
        for p in WORKERS {
            assert_eq!(ns(&t.replay(p, &ReplayCosts::default())), 5_000);
            // priced, a schedule's lone batch sits in the last worker's
            // home range, and the driving worker steals it (one handoff)
            let r = t.replay(p, &costs(300.0, 100.0));
            let steal = if kind == SectionKind::Schedule && p > 1 {
                100
            } else {
                0
            };
            assert_eq!(ns(&r), 5_000 + steal, "{kind:?} at {p}");
        }
    }
}

#[test]
fn equal_jobs_speed_up_by_the_worker_count_up_to_the_job_count() {
    let n = 16;
    for kind in [SectionKind::Loop, SectionKind::Schedule] {
        let jobs: Vec<_> = (0..n).map(|_| (0, 0, 0, 1_000)).collect();
        let t = trace(&[kind], &jobs);
        for p in WORKERS {
            // free synchronisation: exactly min(P, n)
            let free = t.replay(p, &ReplayCosts::default());
            let speedup = 16_000.0 / ns(&free) as f64;
            assert_eq!(speedup, p.min(n) as f64, "{kind:?} at {p}");
            // priced: slower by the forks, claims and joins, never faster
            // than free, and never by more than every one of them paid in
            // full
            let (s, h) = (300, 100);
            let priced = ns(&t.replay(p, &costs(s as f64, h as f64)));
            let q = p.min(n) as u64;
            let bound = ns(&free) + (q - 1) * s + (n as u64 + q) * h;
            assert!(
                priced >= ns(&free) && priced <= bound,
                "{kind:?} at {p}: {priced} ns not in {}..={bound}",
                ns(&free)
            );
        }
    }
}

#[test]
fn two_workers_on_four_batches_pay_one_steal_and_one_handoff() {
    // home ranges [b0 b1] and [b2 b3]: worker 1 starts one steal late, so
    // it ends at steal + 200 and the driver sees it one handoff later
    let jobs: Vec<_> = (0..4).map(|_| (0, 0, 0, 100)).collect();
    let t = trace(&[SectionKind::Schedule], &jobs);
    assert_eq!(ns(&t.replay(2, &costs(30.0, 10.0))), 200 + 30 + 10);
    // a loop's home ranges are the same: [j0 j1] and [j2 j3], no claim
    // from another's counter
    let t = trace(&[SectionKind::Loop], &jobs);
    assert_eq!(ns(&t.replay(2, &costs(30.0, 10.0))), 200 + 30 + 10);
}

#[test]
fn a_loop_worker_done_with_its_home_takes_the_others_leftovers() {
    // homes [300 100] and [100 100]: worker 1 (from 30) runs its two by
    // 230, then takes job 1 from worker 0's home (a handoff: 240-340);
    // worker 0 is busy with job 0 until 300; the driver sees 340 at 350
    let jobs: Vec<_> = [300, 100, 100, 100].map(|d| (0, 0, 0, d)).to_vec();
    let t = trace(&[SectionKind::Loop], &jobs);
    assert_eq!(ns(&t.replay(2, &costs(30.0, 10.0))), 350);
    // free: the same claims, 300 (job 0) against 300 (jobs 2, 3, 1)
    assert_eq!(ns(&t.replay(2, &ReplayCosts::default())), 300);
}

#[test]
fn a_chain_of_stages_takes_the_sum_of_its_stage_maxima() {
    let t = trace(
        &[SectionKind::Schedule],
        &[
            (0, 0, 0, 10),
            (0, 0, 0, 30),
            (0, 0, 0, 20),
            (0, 0, 1, 5),
            (0, 0, 1, 5),
            (0, 0, 2, 40),
        ],
    );
    assert_eq!(ns(&t.replay(1, &ReplayCosts::default())), 110);
    for p in [3, 4, 8, 64] {
        assert_eq!(ns(&t.replay(p, &ReplayCosts::default())), 30 + 5 + 40);
    }
    // two workers: stage 0's home ranges are [10] and [30 20]; worker 0
    // steals the 20 at 10 and ends at 30 with worker 1
    assert_eq!(ns(&t.replay(2, &ReplayCosts::default())), 30 + 5 + 40);
    // every barrier is seen one handoff late
    let r = t.replay(4, &costs(0.0, 7.0));
    assert!(ns(&r) >= 75 + 2 * 7, "{}", ns(&r));
}

#[test]
fn packs_of_small_islands_fill_a_barrier_wait() {
    // stage 1 waits for stage 0's one long batch; the other worker runs
    // both packs meanwhile
    let t = trace(
        &[SectionKind::Schedule],
        &[
            (0, 0, 0, 100),
            (0, 0, 1, 10),
            (0, PACK, 0, 50),
            (0, PACK + 1, 0, 50),
        ],
    );
    assert_eq!(ns(&t.replay(1, &ReplayCosts::default())), 210);
    assert_eq!(ns(&t.replay(2, &ReplayCosts::default())), 110);
}

#[test]
fn sections_run_in_order_with_the_gaps_between_them_serial() {
    // 4 jobs of 100 (a loop), a gap of 50, a serial job of 70, and 30 of
    // bookkeeping after the last section
    let mut t = trace(
        &[SectionKind::Loop, SectionKind::Serial],
        &[
            (0, 0, 0, 100),
            (0, 0, 0, 100),
            (0, 0, 0, 100),
            (0, 0, 0, 100),
            (1, 0, 0, 70),
        ],
    );
    t.events[4].start_ns += 50;
    t.wall_ns += 50 + 30;
    let one = t.replay(1, &ReplayCosts::default());
    assert_eq!(ns(&one), t.wall_ns);
    assert_eq!(one.serial_gaps_ns, 80);
    let four = t.replay(4, &ReplayCosts::default());
    assert_eq!(ns(&four), 100 + 80 + 70);
    assert_eq!(four.sections.len(), 2);
    assert_eq!(four.sections[0].predicted_ns, 100);
    assert!(
        four.limiter().0.starts_with("serial"),
        "{:?}",
        four.limiter()
    );
}

#[test]
fn bandwidth_caps_a_section_that_streams_more_than_its_cores_get() {
    // 8 jobs of 100 ns streaming 1000 bytes each; a core copies 10 B/ns,
    // the memory system 20 B/ns: from 2 workers on the loop is bandwidth
    // bound at 8000 / 20 = 400 ns
    let mut t = trace(&[SectionKind::Loop], &[(0, 0, 0, 100); 8]);
    for e in &mut t.events {
        e.bytes = 1000;
    }
    let c = ReplayCosts {
        core_bandwidth: 10e9,
        memory_bandwidth: 20e9,
        ..ReplayCosts::default()
    };
    assert_eq!(ns(&t.replay(1, &c)), 800);
    let eight = t.replay(8, &c);
    assert_eq!(ns(&eight), 400);
    assert!(eight.sections[0].bandwidth_bound());
    assert!(
        eight.limiter().0.contains("bandwidth"),
        "{:?}",
        eight.limiter()
    );
}

#[test]
fn a_real_one_thread_trace_replays_to_its_own_wall_time() {
    let pool = build_pinned_pool(Some(1)).unwrap().pool;
    let (mut w, _) = scenes::pyramid().build(PhysicsSettings::default()).unwrap();
    for _ in 0..30 {
        w.update(scenes::DT, 1, &pool).unwrap();
    }
    w.record_trace();
    w.update(scenes::DT, 1, &pool).unwrap();
    let t = w.take_trace().expect("armed");
    assert!(t.sections.contains(&SectionKind::Schedule));
    assert!(t.sections.contains(&SectionKind::Serial));
    let one = t.replay(1, &ReplayCosts::default());
    assert_eq!(ns(&one), t.wall_ns);
    // the solver's batches estimate what they stream
    let velocity = one
        .sections
        .iter()
        .find(|s| s.name == "velocity batch")
        .expect("a velocity solve");
    assert_eq!(velocity.kind, SectionKind::Schedule);
    assert!(velocity.bytes > 0);
    // more workers never cost more when synchronisation is free, and the
    // same trace always replays the same
    let mut last = ns(&one);
    for p in [2, 4, 8, 16] {
        let r = t.replay(p, &ReplayCosts::default());
        assert!(ns(&r) <= last, "{p} workers: {} > {last}", ns(&r));
        assert_eq!(r, t.replay(p, &ReplayCosts::default()));
        last = ns(&r);
    }
}

#[test]
fn costs_are_measured_on_a_pool_of_two() {
    let one = build_pinned_pool(Some(1)).unwrap().pool;
    assert_eq!(ReplayCosts::measure(&one), None, "needs two workers");
    let two = build_pinned_pool(Some(2)).unwrap().pool;
    let c = ReplayCosts::measure(&two).expect("two workers");
    for (what, v) in [
        ("steal", c.steal_ns),
        ("handoff", c.handoff_ns),
        ("core bandwidth", c.core_bandwidth),
        ("memory bandwidth", c.memory_bandwidth),
    ] {
        assert!(v.is_finite() && v > 0.0, "{what}: {v}");
    }
    // a cache line moves in well under a millisecond; a core copies more
    // than 100 MB/s
    assert!(c.handoff_ns < 1e6 && c.steal_ns < 1e6, "{c:?}");
    assert!(c.core_bandwidth > 1e8, "{c:?}");
    assert!(c.memory_bandwidth >= c.core_bandwidth);
    let _ = Duration::ZERO;
}

#[test]
fn a_worker_that_waited_past_its_spinning_sees_the_release_late() {
    // stage 0: one batch of 10 us (worker 0 steals it from worker 1's home
    // range); stage 1: two of 5 us. Worker 1 waits 10 us for stage 0, past
    // its 1 us of spinning, so it starts stage 1 a wake-up (500 ns) after
    // the release instead of a handoff (10 ns).
    let t = trace(
        &[SectionKind::Schedule],
        &[(0, 0, 0, 10_000), (0, 0, 1, 5_000), (0, 0, 1, 5_000)],
    );
    let spinning = ReplayCosts {
        handoff_ns: 10.0,
        wake_ns: 500.0,
        spin_window_ns: 1_000.0,
        ..ReplayCosts::default()
    };
    assert_eq!(ns(&t.replay(2, &spinning)), 10 + 10_000 + 500 + 5_000 + 10);
    // spinning forever: the release is a handoff away
    let forever = ReplayCosts {
        spin_window_ns: f64::INFINITY,
        ..spinning
    };
    assert_eq!(ns(&t.replay(2, &forever)), 10 + 10_000 + 10 + 5_000 + 10);
}

/// A loop `copy` of 4 jobs, a serial `serial` job and the solver's
/// `batch` schedule of 2 batches, with the durations given.
fn named(copy: u64, serial: u64, batch: u64) -> StepTrace {
    let mut t = trace(
        &[
            SectionKind::Loop,
            SectionKind::Serial,
            SectionKind::Schedule,
        ],
        &[
            (0, 0, 0, copy),
            (0, 0, 0, copy),
            (0, 0, 0, copy),
            (0, 0, 0, copy),
            (1, 0, 0, serial),
            (2, 0, 0, batch),
            (2, 0, 0, batch),
        ],
    );
    for (e, name) in t
        .events
        .iter_mut()
        .zip(["copy", "copy", "copy", "copy", "serial", "batch", "batch"])
    {
        e.name = name;
    }
    t
}

#[test]
fn migration_is_the_relayed_over_the_one_thread_time_of_loops_and_serial_jobs() {
    let one = [named(100, 70, 50), named(100, 70, 50)];
    // relayed: the loop 2.5x, the serial job 2x, the schedule 10x (left
    // out: its home ranges keep its data local)
    let mut relayed = [named(250, 140, 500), named(250, 140, 500)];
    for t in &mut relayed {
        t.relayed = true;
    }
    let m = Migration::measure(&one, &relayed);
    assert_eq!(m.factors, vec![("copy", 2.5), ("serial", 2.0)]);
    // a pair stretched by a preemption does not move the median
    let stretched = [
        named(250, 140, 50),
        named(2500, 140, 50),
        named(250, 1400, 50),
    ];
    let m3 = Migration::measure(
        &[named(100, 70, 50), named(100, 70, 50), named(100, 70, 50)],
        &stretched,
    );
    assert_eq!(m3.factors, vec![("copy", 2.5), ("serial", 2.0)]);
    // faster when relayed is noise: no slowdown
    let quicker = Migration::measure(&one, &[named(90, 70, 50)]);
    assert_eq!(quicker.factors, vec![("copy", 1.0), ("serial", 1.0)]);
    // the measured factor is for half the data remote; on P workers
    // (P - 1) / P of it is
    assert_eq!(m.at("copy", 1), 1.0);
    assert_eq!(m.at("copy", 2), 2.5);
    assert_eq!(m.at("copy", 4), 1.0 + 1.5 * 0.75 * 2.0);
    assert_eq!(m.at("batch", 4), 1.0);
    assert_eq!(m.at("unknown", 4), 1.0);
}

#[test]
fn a_migrating_replay_slows_loops_and_serial_jobs_on_two_workers_or_more() {
    let t = named(100, 70, 50);
    let m = Migration {
        factors: vec![("copy", 2.5), ("serial", 2.0)],
    };
    let free = ReplayCosts::default();
    // one worker: nothing moves between cores
    assert_eq!(ns(&t.replay_migrating(1, &free, &m)), 400 + 70 + 100);
    assert_eq!(
        t.replay_migrating(1, &free, &m),
        t.replay(1, &free),
        "one worker"
    );
    // two: 4 jobs of 250 on 2 workers, the serial job 140, the batches
    // untouched (one each)
    assert_eq!(ns(&t.replay_migrating(2, &free, &m)), 500 + 140 + 50);
    assert_eq!(ns(&t.replay(2, &free)), 200 + 70 + 50);
    // four: 3/4 of the data remote, copy 3.25x, serial 2.5x
    assert_eq!(ns(&t.replay_migrating(4, &free, &m)), 325 + 175 + 50);
}

#[test]
fn a_relayed_step_runs_one_job_at_a_time_on_both_workers_and_gives_the_same_bits() {
    let one = build_pinned_pool(Some(1)).unwrap().pool;
    let two = build_pinned_pool(Some(2)).unwrap().pool;
    let scene = scenes::pyramid();
    let (mut plain, _) = scene.build(PhysicsSettings::default()).unwrap();
    let (mut relayed, _) = scene.build(PhysicsSettings::default()).unwrap();
    let (mut ones, mut relays) = (Vec::new(), Vec::new());
    let mut threads_seen = [false; 2];
    for step in 0..24 {
        let traced = step % 3 == 0;
        if traced {
            plain.record_trace();
            relayed.record_relayed_trace();
        }
        plain.update(scenes::DT, 1, &one).unwrap();
        relayed.update(scenes::DT, 1, &two).unwrap();
        if !traced {
            continue;
        }
        let t = relayed.take_trace().expect("armed");
        assert!(t.relayed && t.threads == 2);
        // one job at a time, start to end
        let mut jobs: Vec<&TraceEvent> = t
            .events
            .iter()
            .filter(|e| matches!(e.kind, SliceKind::Job { .. }))
            .collect();
        assert!(jobs.len() > 10);
        jobs.sort_by_key(|e| e.start_ns);
        for w in jobs.windows(2) {
            assert!(
                w[1].start_ns >= w[0].start_ns + w[0].dur_ns,
                "{} at {} overlaps {} ending at {}",
                w[1].name,
                w[1].start_ns,
                w[0].name,
                w[0].start_ns + w[0].dur_ns
            );
        }
        for e in &jobs {
            if let Some(seen) = threads_seen.get_mut(e.thread as usize) {
                *seen = true;
            }
        }
        relays.push(t);
        let p = plain.take_trace().expect("armed");
        assert!(!p.relayed);
        ones.push(p);
    }
    assert_eq!(threads_seen, [true, true], "jobs ran on both workers");
    assert_eq!(plain.state_hash(), relayed.state_hash());
    let m = Migration::measure(&ones, &relays);
    assert!(m.factors.iter().any(|f| f.0 == "collide pairs"), "{m:?}");
    assert!(
        m.factors.iter().all(|f| f.1.is_finite() && f.1 >= 1.0),
        "{m:?}"
    );
}
