//! Property tests: on random scenes, SAP and MBP report exactly the pair
//! set of the brute-force oracle, step after step, through random motion,
//! insertions, removals, sleeping bodies and out-of-bounds bodies.

use super::mbp::MbpSettings;
use super::{brute_force::find_pairs_brute_force, BodyPair, BroadPhaseKind};
use crate::body::{BodyCreationSettings, BodyId, MotionType};
use crate::math::{Quat, Vec3};
use crate::settings::{Capacities, PhysicsSettings};
use crate::shape::Shape;
use crate::system::PhysicsSystem;

fn pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| crate::build_pinned_pool(Some(2)).unwrap().pool)
}

use crate::test_rng::TestRng as Rng;

fn random_body(rng: &mut Rng, world: f32) -> BodyCreationSettings {
    let mut h = Vec3::new(rng.f(0.05, 2.0), rng.f(0.05, 2.0), rng.f(0.05, 2.0));
    if rng.below(10) == 0 {
        // degenerate: as thin as accepted on one axis
        let k = rng.below(3);
        h[k] = crate::limits::MIN_SHAPE_SIZE;
    }
    let p = Vec3::new(
        rng.f(-world, world),
        rng.f(-world, world),
        rng.f(-world, world),
    );
    let motion = if rng.below(8) == 0 {
        MotionType::Static
    } else if rng.below(10) == 0 {
        MotionType::Kinematic
    } else {
        MotionType::Dynamic
    };
    BodyCreationSettings::new(Shape::cuboid(h).unwrap(), p, motion)
        .with_rotation(
            Quat::from_rotation_y(rng.f(0.0, 3.0)) * Quat::from_rotation_x(rng.f(0.0, 3.0)),
        )
        .with_object_layer(rng.below(3) as u8)
}

fn pairs_of(w: &mut PhysicsSystem, oracle: bool) -> Vec<BodyPair> {
    let mut out = Vec::with_capacity(w.capacities.max_body_pairs);
    let max = w.capacities.max_body_pairs;
    let filter = w.settings.layer_filter;
    if oracle {
        find_pairs_brute_force(&w.bodies, &filter, &mut out, max);
    } else {
        w.broad.update(&crate::jobs::StepCtx::untraced(), &w.bodies);
        w.broad.report(
            &crate::jobs::StepCtx::untraced(),
            &w.bodies,
            &filter,
            &mut out,
            max,
        );
    }
    out
}

/// Runs one random scene through `steps` rounds of changes, checking the
/// broad phase against the oracle after each.
fn check_scene(kind: BroadPhaseKind, seed: u64, n: usize, steps: usize) {
    check_scene_with(kind, seed, n, steps, |_| {});
}

/// [`check_scene`], with `tweak` applied to the world before every round;
/// returns the world at the end.
fn check_scene_with(
    kind: BroadPhaseKind,
    seed: u64,
    n: usize,
    steps: usize,
    tweak: impl Fn(&mut PhysicsSystem),
) -> PhysicsSystem {
    let mut rng = Rng(seed);
    let world = 10.0 + (n as f32).cbrt() * 3.0;
    let mut settings = PhysicsSettings {
        broad_phase: kind,
        ..PhysicsSettings::default()
    };
    // one layer pair that never collides, to exercise the filter
    settings.layer_filter.set(1, 2, false);
    let caps = Capacities {
        max_bodies: 2 * n + 64,
        max_body_pairs: 400_000,
        max_contact_constraints: 16,
        max_joints: 0,
    };
    let mut w = PhysicsSystem::new(caps, settings).unwrap();
    let mut ids: Vec<BodyId> = (0..n)
        .map(|_| {
            w.create_and_add_body(&random_body(&mut rng, world))
                .unwrap()
        })
        .collect();
    for step in 0..steps {
        tweak(&mut w);
        let got = pairs_of(&mut w, false);
        let want = pairs_of(&mut w, true);
        assert_eq!(
            got.len(),
            want.len(),
            "{kind:?} seed {seed} n {n} step {step}: pair count"
        );
        assert_eq!(got, want, "{kind:?} seed {seed} n {n} step {step}");
        // random motion: most bodies jitter, a few teleport far
        for &id in &ids {
            let r = rng.below(10);
            if r < 3 {
                let p = w.position(id).unwrap()
                    + Vec3::new(rng.f(-0.3, 0.3), rng.f(-0.3, 0.3), rng.f(-0.3, 0.3));
                w.set_position(id, p).unwrap();
            } else if r == 3 {
                let p = Vec3::new(
                    rng.f(-world, world),
                    rng.f(-world, world),
                    rng.f(-world, world),
                ) * 1.3;
                w.set_position(id, p).unwrap();
                w.set_rotation(id, Quat::from_rotation_z(rng.f(0.0, 3.0)))
                    .unwrap();
            }
        }
        // removals, insertions, sleepers
        for _ in 0..rng.below(1 + n / 10) {
            if ids.is_empty() {
                break;
            }
            let k = rng.below(ids.len());
            let id = ids.swap_remove(k);
            if rng.below(2) == 0 {
                w.destroy_body(id).unwrap();
            } else {
                w.remove_body(id).unwrap();
                // and back in, later in the same batch
                w.add_body(id).unwrap();
                ids.push(id);
            }
        }
        for _ in 0..rng.below(1 + n / 10) {
            if let Ok(id) = w.create_and_add_body(&random_body(&mut rng, world)) {
                ids.push(id);
            }
        }
        for _ in 0..rng.below(1 + n / 20) {
            if ids.is_empty() {
                break;
            }
            let id = ids[rng.below(ids.len())];
            if w.motion_type(id).unwrap() == MotionType::Dynamic {
                if rng.below(2) == 0 {
                    w.deactivate_body(id).unwrap();
                } else {
                    w.activate_body(id).unwrap();
                }
            }
        }
    }
    w
}

fn mbp() -> BroadPhaseKind {
    // regions cover less than the scene, so some bodies straddle borders
    // and some are out of bounds
    BroadPhaseKind::Mbp(MbpSettings {
        world_min: Vec3::splat(-20.0),
        world_max: Vec3::splat(20.0),
        subdivisions: 4,
    })
}

#[test]
fn sap_matches_the_oracle_on_random_scenes() {
    for (seed, &n) in [1usize, 2, 3, 10, 50, 200, 1000].iter().enumerate() {
        check_scene(BroadPhaseKind::Sap, seed as u64, n, 50);
    }
    // both SAP update paths: few moved (per-box) and many (full sort)
    check_scene(BroadPhaseKind::Sap, 99, 5000, 6);
}

/// Teleporting every body swaps far more endpoints than the candidate
/// lists hold (one persistent-pair capacity per axis): SAP must notice,
/// rebuild its pairs from the sorted axes, and still match the oracle.
#[test]
fn sap_rebuilds_when_candidates_overflow() {
    let mut rng = Rng(7);
    let caps = Capacities {
        max_bodies: 512,
        max_body_pairs: 200,
        max_contact_constraints: 16,
        max_joints: 0,
    };
    let mut w = PhysicsSystem::new(caps, PhysicsSettings::default()).unwrap();
    // this test is about the axes' candidate lists: keep SAP off its sweep
    if let crate::broadphase::AnyBroadPhase::Sap(sap) = &mut w.broad {
        sap.sweep_from_shifts = u64::MAX;
    }
    let world = 200.0;
    let ids: Vec<BodyId> = (0..400)
        .map(|_| {
            let p = Vec3::new(
                rng.f(-world, world),
                rng.f(-world, world),
                rng.f(-world, world),
            );
            w.create_and_add_body(&BodyCreationSettings::new(
                Shape::cuboid(Vec3::splat(1.0)).unwrap(),
                p,
                MotionType::Dynamic,
            ))
            .unwrap()
        })
        .collect();
    for step in 0..5 {
        assert_eq!(
            pairs_of(&mut w, false),
            pairs_of(&mut w, true),
            "step {step}"
        );
        for &id in &ids {
            let p = Vec3::new(
                rng.f(-world, world),
                rng.f(-world, world),
                rng.f(-world, world),
            );
            w.set_position(id, p).unwrap();
        }
    }
    assert_eq!(pairs_of(&mut w, false), pairs_of(&mut w, true));
    let crate::broadphase::AnyBroadPhase::Sap(sap) = &w.broad else {
        panic!("default broad phase is SAP");
    };
    // 400 boxes teleported: ~40k endpoint inversions per axis, against
    // room for 400 candidates
    assert!(sap.rebuilds >= 5, "rebuilds {}", sap.rebuilds);
}

/// SAP's sweep mode (box pruning along one axis while the axes churn)
/// started after every full pass that shifted anything, and handing back
/// to the axes every third update: through random moves, teleports,
/// removals, insertions and sleepers the pairs are the oracle's every
/// step, on both sides of every switch.
#[test]
fn sap_sweep_matches_the_oracle_while_it_switches() {
    let mut started = 0;
    for (seed, &n) in [10usize, 50, 200, 1000, 3000].iter().enumerate() {
        let force = |w: &mut PhysicsSystem| {
            if let crate::broadphase::AnyBroadPhase::Sap(sap) = &mut w.broad {
                sap.sweep_from_shifts = 0;
                sap.sweep_revisit = 3;
            }
        };
        let w = check_scene_with(BroadPhaseKind::Sap, 700 + seed as u64, n, 40, force);
        let crate::broadphase::AnyBroadPhase::Sap(sap) = &w.broad else {
            panic!("SAP");
        };
        assert!(
            sap.sweeps_started >= 5,
            "n {n}: {} sweeps",
            sap.sweeps_started
        );
        started += sap.sweeps_started;
    }
    println!("sweeps started: {started}");
}

/// A sweep whose pairs do not fit the pair set drops what does not fit
/// (counted in `dropped`), never panics, and finds every pair once there
/// is room again.
#[test]
fn sap_sweep_survives_a_full_pair_set() {
    let caps = Capacities {
        max_bodies: 256,
        max_body_pairs: 60,
        max_contact_constraints: 16,
        max_joints: 0,
    };
    let mut w = PhysicsSystem::new(caps, PhysicsSettings::default()).unwrap();
    if let crate::broadphase::AnyBroadPhase::Sap(sap) = &mut w.broad {
        sap.sweep_from_shifts = 0;
        sap.sweep_revisit = u32::MAX;
    }
    // a row of 200 unit boxes, spread out (no pairs), then squeezed into
    // a heap (thousands of pairs), then spread out again
    let ids: Vec<BodyId> = (0..200)
        .map(|k| {
            w.create_and_add_body(&BodyCreationSettings::new(
                Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                Vec3::new(3.0 * k as f32, 0.0, 0.0),
                MotionType::Dynamic,
            ))
            .unwrap()
        })
        .collect();
    let place = |w: &mut PhysicsSystem, spacing: f32, shift: f32| {
        for (k, &id) in ids.iter().enumerate() {
            let x = spacing * (199 - k) as f32 + shift;
            w.set_position(id, Vec3::new(x, 0.0, 0.0)).unwrap();
        }
    };
    assert!(pairs_of(&mut w, false).is_empty());
    // reversing the row shifts every endpoint past every other: sweeping
    place(&mut w, 3.0, 0.5);
    assert!(pairs_of(&mut w, false).is_empty());
    let sweeping = |w: &PhysicsSystem| match &w.broad {
        crate::broadphase::AnyBroadPhase::Sap(sap) => sap.sweeping,
        _ => false,
    };
    assert!(sweeping(&w), "sweep mode after the reversal");
    place(&mut w, 0.05, 0.0);
    let search = w.broad.update(&crate::jobs::StepCtx::untraced(), &w.bodies);
    assert!(
        sweeping(&w) && search.dropped > 0,
        "a heap of 200 boxes overflows 120 pairs"
    );
    place(&mut w, 3.0, 0.25);
    assert_eq!(pairs_of(&mut w, false), pairs_of(&mut w, true));
    assert!(pairs_of(&mut w, false).is_empty());
}

#[test]
fn mbp_matches_the_oracle_on_random_scenes() {
    for (seed, &n) in [1usize, 2, 3, 10, 50, 200, 1000].iter().enumerate() {
        check_scene(mbp(), 100 + seed as u64, n, 50);
    }
    check_scene(mbp(), 199, 5000, 6);
}

/// A grid fitted to the bodies matches the oracle; it is fitted at the
/// first update, and again when more than 64 (or 1 in 64) bodies are out
/// of it.
#[test]
fn fitted_mbp_matches_the_oracle_on_random_scenes() {
    let fitted = BroadPhaseKind::MbpFitted { subdivisions: 4 };
    let mut fits = 0;
    // (teleports land within 1.3 times the scene: inside the fitted grid)
    for (seed, &n) in [1usize, 2, 3, 10, 50, 200, 1000, 3000].iter().enumerate() {
        let w = check_scene_with(fitted, 300 + seed as u64, n, 40, |_| {});
        let crate::broadphase::AnyBroadPhase::Mbp(m) = &w.broad else {
            panic!("a fitted MBP");
        };
        assert!(m.fits >= 1, "n {n}: fitted at the first update");
        fits += m.fits;
    }
    assert!(fits >= 8, "{fits}");
    // bodies thrown far outside the grid: it is fitted again around them
    let mut rng = Rng(9);
    let mut w = PhysicsSystem::new(
        Capacities::default(),
        PhysicsSettings {
            broad_phase: fitted,
            ..PhysicsSettings::default()
        },
    )
    .unwrap();
    let ids: Vec<BodyId> = (0..1000)
        .map(|_| w.create_and_add_body(&random_body(&mut rng, 20.0)).unwrap())
        .collect();
    assert_eq!(pairs_of(&mut w, false), pairs_of(&mut w, true));
    for &id in &ids[..100] {
        let far = Vec3::new(
            rng.f(200.0, 300.0),
            rng.f(-50.0, 50.0),
            rng.f(-300.0, -200.0),
        );
        w.set_position(id, far).unwrap();
    }
    // the first update finds them outside, the next fits the grid again
    assert_eq!(pairs_of(&mut w, false), pairs_of(&mut w, true));
    assert_eq!(w.out_of_bounds_bodies().len(), 100);
    assert_eq!(pairs_of(&mut w, false), pairs_of(&mut w, true));
    assert!(w.out_of_bounds_bodies().is_empty());
    let crate::broadphase::AnyBroadPhase::Mbp(m) = &w.broad else {
        panic!("a fitted MBP");
    };
    assert_eq!(m.fits, 2);
    // region calls are refused: the grid is the broad phase's own
    let mut w = PhysicsSystem::new(
        Capacities::default(),
        PhysicsSettings {
            broad_phase: fitted,
            ..PhysicsSettings::default()
        },
    )
    .unwrap();
    assert_eq!(
        w.add_broad_phase_region(Vec3::ZERO, Vec3::ONE),
        Err(crate::error::PhysicsError::InvalidBroadPhaseRegions)
    );
    let bad = PhysicsSettings {
        broad_phase: BroadPhaseKind::MbpFitted { subdivisions: 17 },
        ..PhysicsSettings::default()
    };
    assert!(PhysicsSystem::new(Capacities::default(), bad).is_err());
}

/// `Auto` switching between SAP and MBP every third round (its thresholds
/// forced one way, then the other) reports the oracle's pairs every step.
#[test]
fn auto_matches_the_oracle_while_it_switches() {
    let mut switches = 0;
    for (seed, &n) in [10usize, 50, 200, 1000].iter().enumerate() {
        let round = core::cell::Cell::new(0usize);
        let force = |w: &mut PhysicsSystem| {
            let k = round.get();
            round.set(k + 1);
            if let crate::broadphase::AnyBroadPhase::Auto(a) = &mut w.broad {
                let (from, below) = if (k / 3).is_multiple_of(2) {
                    (usize::MAX, usize::MAX) // SAP
                } else {
                    (0, 0) // MBP
                };
                a.mbp_from = from;
                a.sap_below = below;
            }
        };
        let w = check_scene_with(BroadPhaseKind::Auto, 400 + seed as u64, n, 60, force);
        let crate::broadphase::AnyBroadPhase::Auto(a) = &w.broad else {
            panic!("Auto");
        };
        switches += a.switches;
    }
    // 60 rounds, a switch every 3 from the 4th: 19 per scene
    assert_eq!(switches, 4 * 19, "switches");
}

#[test]
fn mbp_regions_can_change_at_run_time_and_bad_regions_are_refused() {
    use crate::error::PhysicsError;
    let bad = |lo: Vec3, hi: Vec3, n: u32| {
        PhysicsSystem::new(
            Capacities::default(),
            PhysicsSettings {
                broad_phase: BroadPhaseKind::Mbp(MbpSettings {
                    world_min: lo,
                    world_max: hi,
                    subdivisions: n,
                }),
                ..PhysicsSettings::default()
            },
        )
        .err()
    };
    let e = Some(PhysicsError::InvalidBroadPhaseRegions);
    assert_eq!(bad(Vec3::ZERO, Vec3::ONE, 0), e, "no regions");
    assert_eq!(bad(Vec3::ZERO, Vec3::ONE, 17), e, "more than 256");
    assert_eq!(bad(Vec3::ONE, Vec3::ZERO, 4), e, "inverted");
    assert_eq!(bad(Vec3::ZERO, Vec3::new(1.0, 0.0, 1.0), 4), e, "flat");
    assert_eq!(bad(Vec3::ZERO, Vec3::splat(f32::NAN), 4), e, "NaN");

    let mut rng = Rng(7);
    let mut w = PhysicsSystem::new(
        Capacities::default(),
        PhysicsSettings {
            broad_phase: mbp(),
            ..PhysicsSettings::default()
        },
    )
    .unwrap();
    for _ in 0..300 {
        w.create_and_add_body(&random_body(&mut rng, 25.0)).unwrap();
    }
    assert_eq!(pairs_of(&mut w, false), pairs_of(&mut w, true));
    let oob = w.out_of_bounds_bodies().len();
    assert!(oob > 0, "some bodies start outside the regions");
    // a big region around everything: nobody is out of bounds any more
    let id = w
        .add_broad_phase_region(Vec3::splat(-100.0), Vec3::splat(100.0))
        .unwrap();
    assert_eq!(pairs_of(&mut w, false), pairs_of(&mut w, true));
    assert!(w.out_of_bounds_bodies().is_empty());
    w.remove_broad_phase_region(id).unwrap();
    assert_eq!(pairs_of(&mut w, false), pairs_of(&mut w, true));
    assert_eq!(w.out_of_bounds_bodies().len(), oob);
    assert_eq!(
        w.remove_broad_phase_region(id),
        Err(PhysicsError::InvalidBroadPhaseRegions)
    );
    // region calls on a non-MBP world are refused
    let mut sap = PhysicsSystem::new(Capacities::default(), PhysicsSettings::default()).unwrap();
    assert_eq!(
        sap.add_broad_phase_region(Vec3::ZERO, Vec3::ONE),
        Err(PhysicsError::InvalidBroadPhaseRegions)
    );
}

#[test]
fn all_broad_phases_give_bit_identical_simulations() {
    // Same pair sets in the same order mean the same simulation.
    let run = |kind: BroadPhaseKind| {
        let (mut w, _) = crate::scenes::towers()
            .build(PhysicsSettings {
                broad_phase: kind,
                ..PhysicsSettings::default()
            })
            .unwrap();
        for _ in 0..60 {
            w.update(crate::scenes::DT, 1, pool()).unwrap();
        }
        w.state_hash()
    };
    let oracle = run(BroadPhaseKind::BruteForce);
    assert_eq!(run(BroadPhaseKind::Sap), oracle);
    assert_eq!(run(BroadPhaseKind::MbpFitted { subdivisions: 8 }), oracle);
    assert_eq!(run(BroadPhaseKind::Auto), oracle);
    assert_eq!(
        run(BroadPhaseKind::Mbp(MbpSettings {
            world_min: Vec3::new(-60.0, -5.0, -60.0),
            world_max: Vec3::new(60.0, 50.0, 60.0),
            subdivisions: 8,
        })),
        oracle
    );
}

#[test]
fn many_seeds_small_scenes() {
    for seed in 0..40u64 {
        for &n in &[4usize, 30, 150] {
            check_scene(BroadPhaseKind::Sap, 1000 + seed, n, 25);
            check_scene(mbp(), 2000 + seed, n, 25);
        }
    }
}
