//! Failures stay contained: a job that panics reaches the caller in bounded
//! time on any pool (it used to leave its partner spinning at a barrier
//! forever), and a body whose state turns non-finite is taken out of the
//! simulation before its NaN reaches the bodies it touches.

mod common;
use archipelago::*;
use common::DT;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

/// How long an `update` of the 145-body pile may take before the test calls
/// it a hang: a step takes about a millisecond, so this is only reached by
/// a deadlock.
const WATCHDOG: Duration = Duration::from_secs(60);

/// What became of an update with an injected panic, and of the update
/// after it.
#[derive(Debug, PartialEq)]
enum Outcome {
    PanickedThenPoisoned,
    /// The second update's result, as text.
    PanickedThen(String),
    Returned,
}

fn update_with_injected_panic(threads: usize, job: &'static str, nth: usize) -> Outcome {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let pool = build_pinned_pool(Some(threads)).unwrap().pool;
        let (mut w, _) = scenes::pile_split()
            .build(PhysicsSettings::default())
            .unwrap();
        for _ in 0..30 {
            w.update(DT, 1, &pool).unwrap();
        }
        w.inject_job_panic(job, nth);
        let first = catch_unwind(AssertUnwindSafe(|| w.update(DT, 1, &pool)));
        let outcome = match first {
            Ok(_) => Outcome::Returned,
            Err(_) => match w.update(DT, 1, &pool) {
                Err(PhysicsError::Poisoned) => Outcome::PanickedThenPoisoned,
                other => Outcome::PanickedThen(format!("{other:?}")),
            },
        };
        tx.send(outcome).unwrap();
    });
    rx.recv_timeout(WATCHDOG)
        .unwrap_or_else(|_| panic!("update hung: {threads} workers, panic in '{job}' #{nth}"))
}

/// Panics in a parallel loop, in a solver batch whose partners wait at the
/// next stage's barrier, in a small-island pack and in a serial stretch:
/// every one reaches the caller, on 1, 2 and 4 workers, and the world then
/// refuses to step.
#[test]
fn a_panicking_job_reaches_the_caller_on_any_pool() {
    let jobs = [
        ("collide pairs", 0),
        ("collide pairs", 3),
        ("velocity batch", 0),
        ("velocity batch", 57),
        ("position batch", 11),
        ("build constraints", 2),
        ("forces", 0),
        ("sap sweep", 0),
        ("split islands", 0),
    ];
    for threads in [1, 2, 4] {
        for (job, nth) in jobs {
            assert_eq!(
                update_with_injected_panic(threads, job, nth),
                Outcome::PanickedThenPoisoned,
                "{threads} workers, panic in '{job}' #{nth}"
            );
        }
    }
}

/// A body made non-finite on purpose in the middle of a pile: the step
/// takes it out before the solver sees it, reports it, and every other
/// body stays finite and keeps simulating.
#[test]
fn a_non_finite_body_in_a_pile_is_contained() {
    for threads in [1, 2] {
        let pool = build_pinned_pool(Some(threads)).unwrap().pool;
        let (mut w, ids) = scenes::pile_split()
            .build(PhysicsSettings::default())
            .unwrap();
        for _ in 0..60 {
            w.update(DT, 1, &pool).unwrap();
        }
        let victim = ids[70];
        let touching = w
            .contacts()
            .filter(|c| c.body_a == victim || c.body_b == victim)
            .count();
        assert!(touching > 0, "the victim must touch other bodies");
        let before = w.position(victim).unwrap();
        w.corrupt_velocity_for_tests(victim).unwrap();
        let stats = w.update(DT, 1, &pool).unwrap();
        assert_eq!(stats.bodies_faulted, 1);
        assert!(stats.warnings.contains(UpdateWarnings::BODIES_FAULTED));
        assert_eq!(w.faulted_bodies(), &[victim]);
        assert!(!w.is_added(victim).unwrap());
        assert_eq!(w.position(victim).unwrap(), before, "stopped where it was");
        assert_eq!(w.linear_velocity(victim).unwrap(), Vec3::ZERO);
        assert!(w
            .contacts()
            .all(|c| c.body_a != victim && c.body_b != victim));
        for _ in 0..60 {
            let stats = w.update(DT, 1, &pool).unwrap();
            assert_eq!(stats.bodies_faulted, 0);
            assert!(w.faulted_bodies().is_empty());
        }
        for &id in &ids {
            let (p, v) = (w.position(id).unwrap(), w.linear_velocity(id).unwrap());
            assert!(p.is_finite() && v.is_finite(), "{id:?}: {p:?} {v:?}");
        }
        // the user may put it back
        w.add_body(victim).unwrap();
        for _ in 0..10 {
            assert_eq!(w.update(DT, 1, &pool).unwrap().bodies_faulted, 0);
        }
        assert!(w.position(victim).unwrap().is_finite());
    }
}
