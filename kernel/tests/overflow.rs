//! Full contact buffers: the step keeps the deepest manifolds, drops and
//! counts the rest, raises a warning, and loses no body.

use archipelago::*;
mod common;
use common::pool;

const DT: f32 = 1.0 / 60.0;

/// Boxes dropped onto each other so that many manifolds of differing depth
/// exist in the same step.
fn pile(capacities: Capacities, settings: PhysicsSettings) -> PhysicsSystem {
    let mut w = PhysicsSystem::new(capacities, settings).unwrap();
    w.create_and_add_body(&scenes::floor()).unwrap();
    for i in 0..60 {
        let p = Vec3::new(
            (i % 6) as f32 * 0.95 - 2.5,
            0.48 + (i / 6) as f32 * 0.97,
            0.0,
        );
        w.create_and_add_body(&scenes::cube(0.5, p)).unwrap();
    }
    w
}

fn deepest(c: &Contact) -> f32 {
    c.points()
        .iter()
        .map(|p| p.separation)
        .fold(f32::INFINITY, f32::min)
}

#[test]
fn full_contact_buffer_keeps_the_deepest_manifolds() {
    let mut roomy = pile(Capacities::default(), PhysicsSettings::default());
    let tight_caps = Capacities {
        max_contact_constraints: 40,
        ..Capacities::default()
    };
    let mut tight = pile(tight_caps, PhysicsSettings::default());
    let full = roomy.update(DT, 1, pool()).unwrap();
    let stats = tight.update(DT, 1, pool()).unwrap();
    assert!(
        full.manifolds > 40,
        "the scene must overflow ({} manifolds)",
        full.manifolds
    );
    assert!(full.warnings.is_empty());
    assert!(stats
        .warnings
        .contains(UpdateWarnings::CONTACT_CONSTRAINTS_FULL));
    assert_eq!(stats.manifolds, 40);
    assert_eq!(stats.manifolds_dropped, full.manifolds - 40);

    // Same pre-step state in both worlds: the kept set must be the 40
    // deepest of the full set.
    let mut all: Vec<f32> = roomy.contacts().map(|c| deepest(&c)).collect();
    all.sort_by(f32::total_cmp);
    let cutoff = all[39];
    let kept: Vec<f32> = tight.contacts().map(|c| deepest(&c)).collect();
    assert_eq!(kept.len(), 40);
    assert!(
        kept.iter().all(|&d| d <= cutoff),
        "a shallower manifold was kept over a deeper one"
    );
    // Kept manifolds are still reported in body-pair order.
    let pairs: Vec<(u32, u32)> = tight
        .contacts()
        .map(|c| (c.body_a.index(), c.body_b.index()))
        .collect();
    assert!(pairs.windows(2).all(|w| w[0] < w[1]));

    for _ in 0..120 {
        tight.update(DT, 1, pool()).unwrap();
    }
    assert_eq!(tight.num_bodies(), 61);
    for id in tight.body_ids() {
        assert!(tight.position(id).unwrap().is_finite());
    }
}

/// For every broad phase: a full pair buffer reports exactly
/// `max_body_pairs` pairs, counts the drops and warns, and loses no body.
/// The brute-force finder drops exactly the surplus; SAP and MBP also keep
/// persistent pair sets (twice `max_body_pairs`) whose overflow is counted
/// too, so they report at least the surplus.
#[test]
fn full_pair_buffer_drops_and_counts_pairs() {
    let mbp = BroadPhaseKind::Mbp(MbpSettings {
        world_min: Vec3::new(-20.0, -5.0, -20.0),
        world_max: Vec3::new(20.0, 20.0, 20.0),
        subdivisions: 4,
    });
    for kind in [BroadPhaseKind::BruteForce, BroadPhaseKind::Sap, mbp] {
        let settings = PhysicsSettings {
            broad_phase: kind,
            ..PhysicsSettings::default()
        };
        let build = |caps: Capacities| pile(caps, settings);
        let mut roomy = build(Capacities::default());
        let mut tight = build(Capacities {
            max_body_pairs: 25,
            ..Capacities::default()
        });
        let full = roomy.update(DT, 1, pool()).unwrap();
        let stats = tight.update(DT, 1, pool()).unwrap();
        assert!(full.body_pairs > 25);
        assert_eq!(stats.body_pairs, 25, "{kind:?}");
        if kind == BroadPhaseKind::BruteForce {
            assert_eq!(stats.body_pairs_dropped, full.body_pairs - 25);
        } else {
            assert!(stats.body_pairs_dropped >= full.body_pairs - 25, "{kind:?}");
        }
        assert!(stats.warnings.contains(UpdateWarnings::BODY_PAIRS_FULL));
        for _ in 0..60 {
            tight.update(DT, 1, pool()).unwrap();
        }
        assert_eq!(tight.num_bodies(), 61);
        for id in tight.body_ids() {
            assert!(tight.position(id).unwrap().is_finite());
        }
    }
}
