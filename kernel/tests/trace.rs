//! The chrome-trace recorder: one armed `update` yields a valid Perfetto /
//! chrome://tracing JSON file with every phase and every job on its
//! worker's track, and a work/span analysis that is consistent with it.

use archipelago::*;

#[test]
fn traced_step_is_valid_chrome_json_with_every_phase_and_job() {
    let pool = build_pinned_pool(Some(2)).unwrap().pool;
    let (mut w, _) = scenes::pyramid().build(PhysicsSettings::default()).unwrap();
    for _ in 0..5 {
        w.update(scenes::DT, 1, &pool).unwrap();
    }
    assert!(w.take_trace().is_none(), "nothing recorded unless armed");
    w.record_trace();
    let stats = w.update(scenes::DT, 1, &pool).unwrap();
    let trace = w.take_trace().expect("armed step recorded");
    assert!(w.take_trace().is_none(), "taken once");
    assert_eq!(trace.threads, 2);

    // every phase of the step is a slice, in step order
    let phases: Vec<&str> = trace
        .events
        .iter()
        .filter(|e| e.kind == SliceKind::Phase)
        .map(|e| e.name)
        .collect();
    let expected: Vec<&str> = stats.times.named().iter().map(|(n, _)| *n).collect();
    assert_eq!(phases, expected);
    // jobs run on pool workers, inside the step
    let jobs: Vec<&TraceEvent> = trace
        .events
        .iter()
        .filter(|e| e.kind != SliceKind::Phase)
        .collect();
    assert!(jobs.len() > 100, "{} jobs", jobs.len());
    let step_ns = stats.total.as_nanos() as u64;
    for j in &jobs {
        assert!(j.thread < 2, "job on thread {}", j.thread);
        assert!(j.start_ns + j.dur_ns <= step_ns + 1_000_000, "{j:?}");
    }
    for name in [
        "collide pairs",
        "build constraints",
        "velocity batch",
        "position batch",
    ] {
        assert!(jobs.iter().any(|j| j.name == name), "no {name} job");
    }

    // work and span: span <= work, and work is the sum of the job slices
    let ws = trace.work_span();
    let sum: u64 = jobs.iter().map(|j| j.dur_ns).sum();
    assert_eq!(ws.work.as_nanos() as u64, sum);
    assert!(ws.span > std::time::Duration::ZERO && ws.span <= ws.work);
    assert!(ws.parallelism() >= 1.0);
    assert_eq!(ws.jobs, jobs.len());

    // the JSON parses and holds one "X" slice per event, with thread names
    let json: serde_json::Value = serde_json::from_str(&trace.to_chrome_json()).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let slices: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(slices.len(), trace.events.len());
    assert_eq!(events.iter().filter(|e| e["ph"] == "M").count(), 3);
    for (e, v) in trace.events.iter().zip(&slices) {
        assert_eq!(v["name"], e.name);
        assert_eq!(v["tid"], e.thread);
        assert!(v["ts"].as_f64().unwrap() >= 0.0);
        assert!(v["dur"].as_f64().unwrap() >= 0.0);
    }
}

#[test]
fn step_stats_report_pool_pinning_and_splits() {
    let pinned = build_pinned_pool(Some(2)).unwrap();
    let (mut w, _) = scenes::pyramid().build(PhysicsSettings::default()).unwrap();
    let mut stats = w.update(scenes::DT, 1, &pinned.pool).unwrap();
    // layers start 0.5 m apart: after 1.5 s the pyramid stands as one island
    for _ in 0..90 {
        stats = w.update(scenes::DT, 1, &pinned.pool).unwrap();
    }
    assert_eq!(stats.threads, 2);
    assert_eq!(stats.pinning, pinned.pinning);
    // once settled the pyramid is one island of ~8000 contacts: split,
    // nearly all of it into parallel splits
    assert_eq!(stats.large_islands, 1);
    let total: u32 = stats.split_items.iter().sum();
    assert_eq!(total, stats.manifolds);
    assert!(
        stats.splits >= 8 && stats.split_items[31] < total / 10,
        "{stats:?}"
    );
    // a plain rayon pool is reported as not pinned
    let plain = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let stats = w.update(scenes::DT, 1, &plain).unwrap();
    assert_eq!(stats.pinning, Pinning::NotPinned);
}
