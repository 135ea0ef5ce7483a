//! The standard scenes of `shared/SCENES.md`, one function each, shared by
//! tests, benches and peer comparisons so they all run exactly the same
//! bodies. Units: m, kg, s; dt = 1/60 s; density 1000 kg/m³, friction 0.2,
//! restitution 0 (the [`BodyCreationSettings`] defaults).

use crate::body::{BodyCreationSettings, BodyId, MotionType};
use crate::error::Result;
use crate::math::{Quat, Vec3};
use crate::settings::{Capacities, PhysicsSettings};
use crate::shape::Shape;
use crate::system::PhysicsSystem;

/// Time step every standard scene uses.
pub const DT: f32 = 1.0 / 60.0;

/// A scene: capacities and the bodies to create, in order (body 0 is the
/// floor where there is one).
#[derive(Debug, Clone)]
pub struct Scene {
    pub name: &'static str,
    pub capacities: Capacities,
    pub bodies: Vec<BodyCreationSettings>,
}

impl Scene {
    /// Creates a world with these bodies added, returning their ids in order.
    pub fn build(&self, settings: PhysicsSettings) -> Result<(PhysicsSystem, Vec<BodyId>)> {
        let mut world = PhysicsSystem::new(self.capacities, settings)?;
        let ids = self
            .bodies
            .iter()
            .map(|b| world.create_and_add_body(b))
            .collect::<Result<Vec<_>>>()?;
        Ok((world, ids))
    }

    /// Number of dynamic bodies.
    pub fn dynamic_count(&self) -> usize {
        self.bodies
            .iter()
            .filter(|b| b.motion_type == MotionType::Dynamic)
            .count()
    }
}

/// Names accepted by [`by_name`].
pub const NAMES: [&str; 10] = [
    "pyramid",
    "rain",
    "piles",
    "towers",
    "tower_poke",
    "two_towers",
    "sleep_tower",
    "slide",
    "pile_split",
    "tower_split",
];

pub fn by_name(name: &str) -> Option<Scene> {
    Some(match name {
        "pyramid" => pyramid(),
        "rain" => rain(),
        "piles" => piles(),
        "towers" => towers(),
        "tower_poke" => tower_poke(),
        "two_towers" => two_towers(),
        "sleep_tower" => sleep_tower(),
        "slide" => slide(),
        "pile_split" => pile_split(),
        "tower_split" => tower_split(),
        _ => return None,
    })
}

/// The static floor: half extents (50, 1, 50) at (0, -1, 0).
pub fn floor() -> BodyCreationSettings {
    let shape = Shape::Box {
        half_extents: Vec3::new(50.0, 1.0, 50.0),
    };
    BodyCreationSettings::new(shape, Vec3::new(0.0, -1.0, 0.0), MotionType::Static)
}

/// A dynamic cube of half extent `h`.
pub fn cube(h: f32, position: Vec3) -> BodyCreationSettings {
    let shape = Shape::Box {
        half_extents: Vec3::splat(h),
    };
    BodyCreationSettings::new(shape, position, MotionType::Dynamic)
}

fn scene(name: &'static str, bodies: Vec<BodyCreationSettings>) -> Scene {
    Scene {
        name,
        capacities: Capacities::default(),
        bodies,
    }
}

/// splitmix64, as SCENES.md defines it.
pub fn splitmix64(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `u(k) = (splitmix64(k) >> 40) / 2^24`, uniform in [0, 1).
pub fn unit_random(k: u64) -> f32 {
    (splitmix64(k) >> 40) as f32 / (1u64 << 24) as f32
}

/// Jolt's PerformanceTest "Pyramid": 1240 cubes of half extent 1, sleeping
/// disabled, one large island.
pub fn pyramid() -> Scene {
    const HEIGHT: i32 = 15;
    const SIZE: f32 = 2.0;
    const SEPARATION: f32 = 0.5;
    let mut bodies = vec![floor()];
    for i in 0..HEIGHT {
        let o = if i % 2 == 1 { 1.0 } else { 0.0 };
        for j in i / 2..HEIGHT - (i + 1) / 2 {
            for k in i / 2..HEIGHT - (i + 1) / 2 {
                let p = Vec3::new(
                    -(HEIGHT as f32) + SIZE * j as f32 + o,
                    1.0 + (SIZE + SEPARATION) * i as f32,
                    -(HEIGHT as f32) + SIZE * k as f32 + o,
                );
                bodies.push(cube(1.0, p).with_allow_sleeping(false));
            }
        }
    }
    scene("pyramid", bodies)
}

/// 4096 cubes (half extent 0.5) in a jittered 16³ grid spaced 1.2 m, the
/// lowest layer's bottoms 2 m above the floor (centres at y = 2.5).
pub fn rain() -> Scene {
    let mut bodies = vec![floor()];
    for n in 0..4096u64 {
        let (ix, iz, iy) = (n % 16, (n / 16) % 16, n / 256);
        let jx = 0.2 * (unit_random(3 * n) - 0.5);
        let jz = 0.2 * (unit_random(3 * n + 1) - 0.5);
        let angle = core::f32::consts::FRAC_PI_2 * unit_random(3 * n + 2);
        let p = Vec3::new(
            (ix as f32 - 7.5) * 1.2 + jx,
            2.5 + iy as f32 * 1.2,
            (iz as f32 - 7.5) * 1.2 + jz,
        );
        bodies.push(cube(0.5, p).with_rotation(Quat::from_rotation_y(angle)));
    }
    scene("rain", bodies)
}

/// 1000 separate cubes resting on the floor on a 2 m grid (32 × 32 minus 24).
pub fn piles() -> Scene {
    let mut bodies = vec![floor()];
    for n in 0..1000 {
        let (ix, iz) = (n % 32, n / 32);
        let p = Vec3::new((ix as f32 - 15.5) * 2.0, 0.5, (iz as f32 - 15.5) * 2.0);
        bodies.push(cube(0.5, p));
    }
    scene("piles", bodies)
}

/// Gap between the cubes of the `towers` scene (SCENES.md).
pub const TOWER_GAP: f32 = 0.01;

/// A stack of `n` cubes (half extent 0.5) standing on the floor at (x, z),
/// `gap` metres apart.
pub fn tower(x: f32, z: f32, n: usize, gap: f32) -> Vec<BodyCreationSettings> {
    (0..n)
        .map(|k| cube(0.5, Vec3::new(x, 0.5 + (1.0 + gap) * k as f32, z)))
        .collect()
}

/// 64 towers of 10 cubes on an 8 × 8 grid spaced 4 m.
pub fn towers() -> Scene {
    let mut bodies = vec![floor()];
    for gx in 0..8 {
        for gz in 0..8 {
            bodies.extend(tower(
                (gx as f32 - 3.5) * 4.0,
                (gz as f32 - 3.5) * 4.0,
                10,
                TOWER_GAP,
            ));
        }
    }
    scene("towers", bodies)
}

// The experiment towers (tower_poke, two_towers, sleep_tower, tower_split)
// stand on the floor with their cubes touching: SCENES.md gives a gap only
// for the `towers` scene, and the reference's sleep steps (29 for 0.5 s)
// show a tower that is still from the first step.

/// An 8-cube tower and one lone cube 5 m away.
pub fn tower_poke() -> Scene {
    let mut bodies = vec![floor()];
    bodies.extend(tower(0.0, 0.0, 8, 0.0));
    bodies.push(cube(0.5, Vec3::new(5.0, 0.5, 0.0)));
    scene("tower_poke", bodies)
}

/// Two 6-cube towers 6 m apart.
pub fn two_towers() -> Scene {
    let mut bodies = vec![floor()];
    bodies.extend(tower(-3.0, 0.0, 6, 0.0));
    bodies.extend(tower(3.0, 0.0, 6, 0.0));
    scene("two_towers", bodies)
}

/// The 8-cube tower of the sleep_time and sleep_threshold experiments.
pub fn sleep_tower() -> Scene {
    let mut bodies = vec![floor()];
    bodies.extend(tower(0.0, 0.0, 8, 0.0));
    scene("sleep_tower", bodies)
}

/// A cube on the floor sliding at 0.2 m/s along x.
pub fn slide() -> Scene {
    let bodies = vec![
        floor(),
        cube(0.5, Vec3::new(0.0, 0.5, 0.0)).with_linear_velocity(Vec3::new(0.2, 0.0, 0.0)),
    ];
    scene("slide", bodies)
}

/// 145 cubes dropped into one pile: 16 layers of 3 × 3 plus one on top,
/// spaced 1.1 m with a jitter so they tumble into one island (no sleeping).
pub fn pile_split() -> Scene {
    let mut bodies = vec![floor()];
    for n in 0..145u64 {
        let (ix, iz, iy) = (n % 3, (n / 3) % 3, n / 9);
        let jx = 0.3 * (unit_random(3 * n) - 0.5);
        let jz = 0.3 * (unit_random(3 * n + 1) - 0.5);
        let angle = core::f32::consts::FRAC_PI_2 * unit_random(3 * n + 2);
        let p = Vec3::new(
            (ix as f32 - 1.0) * 1.1 + jx,
            0.6 + iy as f32 * 1.1,
            (iz as f32 - 1.0) * 1.1 + jz,
        );
        bodies.push(
            cube(0.5, p)
                .with_rotation(Quat::from_rotation_y(angle))
                .with_allow_sleeping(false),
        );
    }
    scene("pile_split", bodies)
}

/// An 11-cube tower (under 128 contacts: never split).
pub fn tower_split() -> Scene {
    let mut bodies = vec![floor()];
    bodies.extend(
        tower(0.0, 0.0, 11, 0.0)
            .into_iter()
            .map(|b| b.with_allow_sleeping(false)),
    );
    scene("tower_split", bodies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scene_sizes_match_scenes_md() {
        assert_eq!(pyramid().dynamic_count(), 1240);
        assert_eq!(rain().dynamic_count(), 4096);
        assert_eq!(piles().dynamic_count(), 1000);
        assert_eq!(towers().dynamic_count(), 640);
        assert_eq!(pile_split().dynamic_count(), 145);
        assert_eq!(tower_split().dynamic_count(), 11);
        for name in NAMES {
            let s = by_name(name).unwrap();
            assert_eq!(s.name, name);
            assert!(s.build(PhysicsSettings::default()).is_ok(), "{name}");
        }
    }

    #[test]
    fn splitmix_matches_reference_values() {
        // splitmix64 with state 0: first output of the reference generator
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        let u = unit_random(12345);
        assert!((0.0..1.0).contains(&u));
    }
}
