//! The kernel never starts threads of its own: tools that run outside
//! `update` (`update_broad_phase`) run on the calling thread and do not
//! even build rayon's global pool (they did, through a parallel loop that
//! asked for the current pool). One test in its own binary, so nothing else
//! in the process touches the global pool.

use archipelago::*;

#[test]
fn update_broad_phase_starts_no_pool() {
    let mbp = BroadPhaseKind::Mbp(MbpSettings {
        world_min: Vec3::splat(-50.0),
        world_max: Vec3::splat(50.0),
        subdivisions: 4,
    });
    for broad_phase in [BroadPhaseKind::Sap, mbp, BroadPhaseKind::BruteForce] {
        let settings = PhysicsSettings {
            broad_phase,
            ..PhysicsSettings::default()
        };
        let mut w = PhysicsSystem::new(Capacities::default(), settings).unwrap();
        w.create_and_add_body(&scenes::floor()).unwrap();
        for k in 0..300 {
            let p = Vec3::new((k % 20) as f32 * 0.9 - 9.0, 0.5 + (k / 20) as f32, 0.0);
            w.create_and_add_body(&scenes::cube(0.5, p)).unwrap();
        }
        let pairs = w.update_broad_phase();
        assert!(pairs > 300, "{broad_phase:?}: {pairs} pairs");
    }
    // Building the global pool succeeds only if nothing built it before.
    assert!(rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .is_ok());
}
