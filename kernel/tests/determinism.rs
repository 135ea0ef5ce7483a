//! The same scene gives the same bits at any thread count and run after
//! run: `state_hash()` after N steps is compared across pools of 1, 2, 4, 8
//! and 16 workers (oversubscribing this 2-core machine on purpose: thread
//! timing varies wildly then, and must not matter), with and without the
//! large-island splitter.

use archipelago::*;
use std::sync::OnceLock;

const THREADS: [usize; 5] = [1, 2, 4, 8, 16];

fn pool(threads: usize) -> &'static ThreadPool {
    static POOLS: OnceLock<Vec<ThreadPool>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| {
        THREADS
            .iter()
            .map(|&t| build_pinned_pool(Some(t)).unwrap().pool)
            .collect()
    });
    &pools[THREADS.iter().position(|&t| t == threads).unwrap()]
}

fn settings(splitter: bool) -> PhysicsSettings {
    PhysicsSettings {
        use_large_island_splitter: splitter,
        ..PhysicsSettings::default()
    }
}

/// Hash after every step, and the most large islands any step had.
fn run(scene: &scenes::Scene, splitter: bool, threads: usize, steps: usize) -> (Vec<u64>, u32) {
    run_with(scene, settings(splitter), threads, steps)
}

fn run_with(
    scene: &scenes::Scene,
    settings: PhysicsSettings,
    threads: usize,
    steps: usize,
) -> (Vec<u64>, u32) {
    let (mut w, ids) = scene.build(settings).unwrap();
    let mut hashes = Vec::with_capacity(steps);
    let mut large = 0;
    for k in 0..steps {
        scene.before_update(&mut w, &ids, k as u32).unwrap();
        let stats = w.update(scenes::DT, 1, pool(threads)).unwrap();
        assert!(stats.warnings.is_empty(), "{}: {stats:?}", scene.name);
        assert_eq!(stats.threads as usize, threads);
        large = large.max(stats.large_islands);
        hashes.push(w.state_hash());
    }
    (hashes, large)
}

/// Final hash at every thread count (and a second run at 2 threads) equals
/// the 1-thread one.
fn same_at_every_thread_count(name: &str, splitter: bool, steps: usize) -> u32 {
    let scene = scenes::by_name(name).unwrap();
    let (reference, large) = run(&scene, splitter, 1, steps);
    let expected = *reference.last().unwrap();
    for threads in THREADS.into_iter().skip(1).chain([2]) {
        let (hashes, _) = run(&scene, splitter, threads, steps);
        assert_eq!(
            *hashes.last().unwrap(),
            expected,
            "{name}, splitter {splitter}: {threads} threads differ from 1 thread"
        );
    }
    large
}

#[test]
fn pyramid_is_bit_identical_at_any_thread_count() {
    let large = same_at_every_thread_count("pyramid", true, 300);
    assert!(
        large >= 1,
        "the pyramid is one large island: it must be split"
    );
}

#[test]
fn rain_is_bit_identical_at_any_thread_count() {
    same_at_every_thread_count("rain", true, 300);
}

#[test]
fn towers_are_bit_identical_at_any_thread_count() {
    same_at_every_thread_count("towers", true, 300);
}

#[test]
fn piles_are_bit_identical_at_any_thread_count() {
    same_at_every_thread_count("piles", true, 300);
}

#[test]
fn pile_split_is_bit_identical_at_any_thread_count() {
    let large = same_at_every_thread_count("pile_split", true, 300);
    assert!(large >= 1);
}

#[test]
fn tower_split_is_bit_identical_at_any_thread_count() {
    same_at_every_thread_count("tower_split", true, 300);
}

/// The joint scenes of SCENES.md over 150 steps (the net's cubes land on it
/// from step 60), splitter on and off; the net is one large island that
/// the splitter splits, joints and contacts coloured together.
#[test]
fn joint_scenes_are_bit_identical_at_any_thread_count() {
    for name in ["chains", "net", "ragdolls"] {
        for splitter in [true, false] {
            let large = same_at_every_thread_count(name, splitter, 150);
            if name == "net" {
                assert_eq!(large, u32::from(splitter), "net, splitter {splitter}");
            }
        }
    }
}

/// The terrain scenes (a height field, and the same surface as a mesh:
/// bodies touching it with several manifolds each), 240 steps: every body
/// has landed and many roll.
#[test]
fn terrain_scenes_are_bit_identical_at_any_thread_count() {
    for name in ["terrain", "terrain_mesh"] {
        same_at_every_thread_count(name, true, 240);
    }
}

/// Every scene of SCENES.md, splitter on and off, at every thread count
/// (shorter runs; the six above run 300 steps).
#[test]
fn every_scene_with_and_without_splitter() {
    for name in scenes::NAMES {
        for splitter in [true, false] {
            same_at_every_thread_count(name, splitter, 90);
        }
    }
}

/// With the body-pair cache off (every pair collided every step) each scene
/// is bit-identical at every thread count too; the pyramid, whose resting
/// pairs are served from the cache, differs from its cached run.
#[test]
fn every_scene_with_the_body_pair_cache_off() {
    let off = PhysicsSettings {
        use_body_pair_cache: false,
        ..PhysicsSettings::default()
    };
    let steps = 90;
    for name in scenes::NAMES {
        let scene = scenes::by_name(name).unwrap();
        let (reference, _) = run_with(&scene, off, 1, steps);
        for threads in THREADS.into_iter().skip(1) {
            assert_eq!(
                run_with(&scene, off, threads, steps).0,
                reference,
                "{name}, cache off: {threads} threads differ from 1 thread"
            );
        }
        if name == "pyramid" {
            let (cached, _) = run_with(&scene, PhysicsSettings::default(), 1, steps);
            assert_ne!(cached.last(), reference.last(), "the cache served no pair");
        }
    }
}

/// SCENES.md's pile_split: with the splitter on and off the trajectories
/// are identical until the pile's island reaches the splitter threshold,
/// and differ from that step on; each is bit-identical at 1 and 4 threads,
/// step by step.
///
/// Precisely: below 128 constraints an island is a small island either
/// way (packed and coloured the same, `solver/layout.rs`); from 128 on,
/// the splitter splits it (its splits merged into the non-parallel split
/// 31, island order, until a split holds 32 items), while without the
/// splitter it stays a coloured pack.
#[test]
fn pile_split_diverges_once_large() {
    let scene = scenes::pile_split();
    let steps = 300;
    let (on, _) = run(&scene, true, 1, steps);
    let (off, _) = run(&scene, false, 1, steps);
    assert_eq!(
        run(&scene, true, 4, steps).0,
        on,
        "splitter on: 1 vs 4 threads"
    );
    assert_eq!(
        run(&scene, false, 4, steps).0,
        off,
        "splitter off: 1 vs 4 threads"
    );

    let (mut w, _) = scene.build(settings(true)).unwrap();
    let (mut first_large, mut first_parallel) = (None, None);
    for step in 0..steps {
        let stats = w.update(scenes::DT, 1, pool(1)).unwrap();
        if stats.large_islands > 0 && first_large.is_none() {
            first_large = Some(step);
        }
        let parallel = stats.split_items[..31].iter().any(|&n| n > 0);
        if parallel && first_parallel.is_none() {
            first_parallel = Some(step);
        }
    }
    let first_difference = on.iter().zip(&off).position(|(a, b)| a != b);
    println!(
        "pile_split: island over 128 constraints at step {first_large:?}, first parallel split at step {first_parallel:?}, first difference at step {first_difference:?}"
    );
    let first_large = first_large.expect("145 cubes in one pile exceed 128 contacts");
    assert!(first_parallel.is_some_and(|p| p >= first_large));
    assert_eq!(
        first_difference,
        Some(first_large),
        "identical until the island is large, different from then on"
    );
    assert_ne!(on.last(), off.last());
}

/// SCENES.md's tower_split: 11 cubes never reach 128 constraints, so the
/// splitter never acts and on/off are identical.
#[test]
fn tower_split_is_unaffected_by_the_splitter() {
    let scene = scenes::tower_split();
    let (on, large) = run(&scene, true, 4, 300);
    let (off, _) = run(&scene, false, 4, 300);
    assert_eq!(large, 0);
    assert_eq!(on, off);
}

/// The solver's widths and SIMD paths are one source: every scene gives the
/// same state hash, step by step, with its bundles solved 16 lanes wide on
/// every instruction set this CPU has (AVX-512, AVX2, the build's baseline)
/// and lane by lane (on 1, 2 and 4 workers).
#[test]
fn every_solver_width_and_simd_path_gives_the_same_bits() {
    let paths: Vec<SimdPath> = SimdPath::available().collect();
    assert_eq!(paths.last(), Some(&SimdPath::Baseline));
    for name in scenes::NAMES {
        let scene = scenes::by_name(name).unwrap();
        let steps = if matches!(name, "pyramid" | "rain") {
            60
        } else {
            150
        };
        let mut runs = vec![
            (SolverWidth::Wide, SimdPath::Auto, 1),
            (SolverWidth::Scalar, SimdPath::Auto, 1),
            (SolverWidth::Scalar, SimdPath::Auto, 4),
            (SolverWidth::Wide, SimdPath::Auto, 4),
        ];
        runs.extend(paths.iter().map(|&p| (SolverWidth::Wide, p, 2)));
        let mut reference = None;
        for (width, simd, threads) in runs {
            let settings = PhysicsSettings {
                solver_width: width,
                simd,
                ..PhysicsSettings::default()
            };
            let (mut w, ids) = scene.build(settings).unwrap();
            assert_eq!(w.simd_path(), simd.resolve());
            let mut hashes = Vec::with_capacity(steps);
            for k in 0..steps {
                scene.before_update(&mut w, &ids, k as u32).unwrap();
                w.update(scenes::DT, 1, pool(threads)).unwrap();
                hashes.push(w.state_hash());
            }
            match &reference {
                None => reference = Some(hashes),
                Some(r) => assert_eq!(
                    &hashes, r,
                    "{name}: {width:?} on {simd:?} and {threads} workers"
                ),
            }
        }
    }
}

/// `Auto` runs the widest path the CPU has; a path it lacks is refused
/// without changing the world's settings.
#[test]
fn simd_paths_resolve_to_what_the_cpu_has() {
    let auto = SimdPath::Auto.resolve();
    assert_ne!(auto, SimdPath::Auto);
    assert!(auto.is_available());
    assert_eq!(SimdPath::available().next(), Some(auto));
    let mut w = PhysicsSystem::new(Capacities::default(), PhysicsSettings::default()).unwrap();
    assert_eq!(w.simd_path(), auto);
    for p in [SimdPath::Avx512, SimdPath::Avx2, SimdPath::Baseline] {
        let s = PhysicsSettings {
            simd: p,
            ..PhysicsSettings::default()
        };
        if p.is_available() {
            w.set_settings(s).unwrap();
            assert_eq!(w.simd_path(), p);
        } else {
            let before = *w.settings();
            assert_eq!(w.set_settings(s), Err(PhysicsError::InvalidSettings));
            assert_eq!(*w.settings(), before);
        }
    }
}

/// `Auto` on 9,000 awake bodies (above `MBP_FROM_MOVING`: the fitted MBP
/// runs) gives the same bits at every thread count, and the bits SAP gives
/// (the same pairs, so the same simulation).
#[test]
fn auto_broad_phase_is_bit_identical_at_any_thread_count_and_to_sap() {
    let scene = scenes::avalanche(9000);
    assert!(scene.dynamic_count() >= MBP_FROM_MOVING);
    let with = |broad_phase: BroadPhaseKind| PhysicsSettings {
        broad_phase,
        ..PhysicsSettings::default()
    };
    let (sap, _) = run_with(&scene, with(BroadPhaseKind::Sap), 1, 30);
    for threads in THREADS {
        let (auto, _) = run_with(&scene, with(BroadPhaseKind::Auto), threads, 30);
        assert_eq!(
            auto, sap,
            "Auto at {threads} threads vs SAP at 1, step by step"
        );
    }
}
