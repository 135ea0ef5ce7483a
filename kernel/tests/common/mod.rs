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

/// The wall: 0.2 m thick (x in -0.1..0.1), 10 × 10 m.
pub const WALL_HALF: Vec3 = Vec3::new(0.1, 5.0, 5.0);

/// A small world (1,000 trials make and drop 1,000 bodies in it) with the
/// wall at the origin.
pub fn wall_world() -> PhysicsSystem {
    let caps = Capacities {
        max_bodies: 16,
        max_body_pairs: 256,
        max_contact_constraints: 256,
        max_joints: 0,
    };
    let mut w = PhysicsSystem::new(caps, PhysicsSettings::default()).unwrap();
    let wall = BodyCreationSettings::new(
        Shape::cuboid(WALL_HALF).unwrap(),
        Vec3::ZERO,
        MotionType::Static,
    );
    w.create_and_add_body(&wall).unwrap();
    w
}

/// In how many of `trials` random shots at the wall of `w` (a
/// [`wall_world`], perhaps with stored shapes added) a body of `shape` at
/// `speed` m/s ends a step with its centre past the wall's middle plane
/// (from there the contacts push it out of the far side). Each shot starts
/// 1–2 m in front of the wall (so the steps fall at every phase of the
/// approach), aims within 30° of the wall's normal, and turns the body at
/// random; 12 steps of 1/60 s follow (the shot reaches the wall in 3).
pub fn shots_through(
    w: &mut PhysicsSystem,
    shape: Shape,
    speed: f32,
    quality: MotionQuality,
    trials: usize,
) -> (usize, u32) {
    let mut seed = 11u64;
    let (mut passed, mut hits) = (0, 0);
    for _ in 0..trials {
        let start = Vec3::new(
            -1.0 - rng(&mut seed),
            4.0 * rng(&mut seed) - 2.0,
            4.0 * rng(&mut seed) - 2.0,
        );
        let (yaw, pitch) = (
            (rng(&mut seed) - 0.5) * 60f32.to_radians(),
            (rng(&mut seed) - 0.5) * 60f32.to_radians(),
        );
        let dir = Quat::from_rotation_y(yaw) * Quat::from_rotation_z(pitch) * Vec3::X;
        let turn = Quat::from_xyzw(
            rng(&mut seed) - 0.5,
            rng(&mut seed) - 0.5,
            rng(&mut seed) - 0.5,
            rng(&mut seed) - 0.5,
        )
        .normalize();
        let id = w
            .create_and_add_body(
                &BodyCreationSettings::new(shape, start, MotionType::Dynamic)
                    .with_rotation(turn)
                    .with_linear_velocity(dir * speed)
                    .with_motion_quality(quality),
            )
            .unwrap();
        let mut through = false;
        for _ in 0..12 {
            let stats = w.update(DT, 1, pool()).unwrap();
            hits += stats.linear_cast_hits;
            through |= w.position(id).unwrap().x > 0.0;
        }
        passed += through as usize;
        w.remove_body(id).unwrap();
        w.destroy_body(id).unwrap();
    }
    (passed, hits)
}
