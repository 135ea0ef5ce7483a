#![allow(dead_code)]
use archipelago::*;

pub const DT: f32 = 1.0 / 60.0;

/// The pool every test steps on: two workers, so every test also runs the
/// parallel paths (results do not depend on the worker count).
pub fn pool() -> &'static ThreadPool {
    static POOL: std::sync::OnceLock<ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| build_pinned_pool(Some(2)).unwrap().pool)
}

pub fn world(settings: PhysicsSettings) -> PhysicsSystem {
    PhysicsSystem::new(Capacities::default(), settings).unwrap()
}

/// Settings without damping, so closed forms hold exactly.
pub fn undamped() -> PhysicsSettings {
    PhysicsSettings {
        linear_damping: 0.0,
        angular_damping: 0.0,
        ..PhysicsSettings::default()
    }
}

pub fn add_floor(w: &mut PhysicsSystem) -> BodyId {
    w.create_and_add_body(&scenes::floor()).unwrap()
}

pub fn step(w: &mut PhysicsSystem, n: usize) {
    for _ in 0..n {
        let stats = w.update(DT, 1, pool()).unwrap();
        assert!(stats.warnings.is_empty(), "unexpected drops: {stats:?}");
    }
}

/// A uniform number in `[0, 1)` from a 64-bit LCG (Knuth's MMIX
/// constants) on `seed`: the same sequence on every machine.
pub fn rng(seed: &mut u64) -> f32 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 40) as f32 / (1u64 << 24) as f32
}
