//! `Capacities::memory_bytes` tells the truth: a counting allocator
//! measures what `PhysicsSystem::new` keeps allocated, for capacities that
//! vary one at a time, and the estimate must be within 10% of it (and never
//! below 90% of it, so sizing a machine by the estimate is safe).

use archipelago::{BroadPhaseKind, Capacities, MbpSettings, PhysicsSettings, PhysicsSystem, Vec3};
use archipelago_layout::CountingAlloc;
use std::sync::Mutex;

#[global_allocator]
static HEAP: CountingAlloc = CountingAlloc::new();

/// Tests in this file run one at a time, so the counter sees one world.
static SERIAL: Mutex<()> = Mutex::new(());

/// Bytes a world of these capacities keeps allocated after `new`.
fn measured(caps: Capacities, broad_phase: BroadPhaseKind) -> usize {
    let settings = PhysicsSettings {
        broad_phase,
        ..PhysicsSettings::default()
    };
    let before = HEAP.live_bytes();
    let w = PhysicsSystem::new(caps, settings).unwrap();
    let after = HEAP.live_bytes();
    drop(w);
    (after - before) as usize
}

fn mbp() -> BroadPhaseKind {
    BroadPhaseKind::Mbp(MbpSettings {
        world_min: Vec3::splat(-100.0),
        world_max: Vec3::splat(100.0),
        subdivisions: 8,
    })
}

#[test]
fn the_estimate_is_within_ten_percent() {
    let _one = SERIAL.lock().unwrap();
    let base = Capacities::default();
    let cases = [
        base,
        Capacities {
            max_bodies: 100_000,
            ..base
        },
        Capacities {
            max_body_pairs: 1_000_000,
            ..base
        },
        Capacities {
            max_contact_constraints: 500_000,
            ..base
        },
        Capacities {
            max_joints: 200_000,
            ..base
        },
        Capacities {
            max_bodies: 1000,
            max_body_pairs: 1000,
            max_contact_constraints: 1000,
            max_joints: 1000,
        },
    ];
    // `MEASURE_ONLY=1 cargo test --release --test memory -- --nocapture`
    // prints the figures without checking, to fit the constants again.
    let check = std::env::var("MEASURE_ONLY").is_err();
    for caps in cases {
        for bp in [BroadPhaseKind::Sap, mbp(), BroadPhaseKind::BruteForce] {
            let got = measured(caps, bp);
            let est = caps.memory_bytes();
            let ratio = est as f64 / got as f64;
            println!("{caps:?} {bp:?}: measured {got} B, estimated {est} B ({ratio:.3})");
            if !check {
                continue;
            }
            assert!(
                (0.9..=1.1).contains(&ratio) || bp != BroadPhaseKind::Sap,
                "{caps:?}: measured {got} B, estimated {est} B"
            );
            // the other broad phases keep less than SAP
            assert!(
                ratio >= 0.9,
                "{caps:?} {bp:?}: measured {got} B, estimated {est} B"
            );
        }
    }
}
