//! The standard scenes of `shared/SCENES.md`, one function each, shared by
//! tests, benches and peer comparisons so they all run exactly the same
//! bodies. Units: m, kg, s; dt = 1/60 s; density 1000 kg/m³, friction 0.2,
//! restitution 0 (the [`BodyCreationSettings`] defaults).

use crate::body::{BodyCreationSettings, BodyId, MotionType};
use crate::compound::{CompoundChild, CompoundShape};
use crate::error::Result;
use crate::heightfield::HeightField;
use crate::hull::ConvexHull;
use crate::hull_shape::HullId;
use crate::joint::{
    DistanceJoint, HingeJoint, JointFrame, JointKind, JointSettings, SwingTwistJoint,
};
use crate::math::{quat_mul, rotate, Quat, Vec3};
use crate::mesh::TriangleMesh;
use crate::settings::{Capacities, PhysicsSettings};
use crate::shape::Shape;
use crate::shape_store::{CompoundId, HeightFieldId, MeshId};
use crate::system::PhysicsSystem;

/// Time step every standard scene uses.
pub const DT: f32 = 1.0 / 60.0;

/// A joint of a scene, between bodies given by their index in
/// [`Scene::bodies`] (`None`: the world), with frames in each body's local
/// space (world space for the world).
#[derive(Debug, Clone, Copy)]
pub struct SceneJoint {
    pub a: Option<usize>,
    pub b: Option<usize>,
    pub frame_a: JointFrame,
    pub frame_b: JointFrame,
    pub kind: JointKind,
}

/// Bodies that join a scene during its run: `bodies[first..]` are created
/// with the others but added only before update number `step` (counting
/// from 0), as the net's falling cubes.
#[derive(Debug, Clone, Copy)]
pub struct LateBodies {
    pub step: u32,
    pub first: usize,
}

/// Stored shapes a scene's bodies name, added to the world in this order
/// before any body (so a fresh world gives them ids 0, 1, ...: the ids
/// the scene's shapes use).
#[derive(Debug, Clone, Default)]
pub struct SceneShapes {
    pub hulls: Vec<ConvexHull>,
    pub meshes: Vec<TriangleMesh>,
    pub heightfields: Vec<HeightField>,
    /// Compounds, each its children (hull children name `hulls` by
    /// index), built against the world's hulls after the others.
    pub compounds: Vec<Vec<CompoundChild>>,
}

/// A scene: capacities, the stored shapes, the bodies to create, in order
/// (body 0 is the floor where there is one), the joints between them, and
/// bodies that arrive later.
#[derive(Debug, Clone)]
pub struct Scene {
    pub name: &'static str,
    pub capacities: Capacities,
    pub shapes: SceneShapes,
    pub bodies: Vec<BodyCreationSettings>,
    pub joints: Vec<SceneJoint>,
    pub late: Option<LateBodies>,
}

impl Scene {
    /// Creates a world with these bodies (added, but for the late ones) and
    /// joints, returning the bodies' ids in order. Drive it with
    /// [`before_update`](Self::before_update) so late bodies arrive.
    pub fn build(&self, settings: PhysicsSettings) -> Result<(PhysicsSystem, Vec<BodyId>)> {
        let mut world = PhysicsSystem::new(self.capacities, settings)?;
        for h in &self.shapes.hulls {
            world.add_hull(h)?;
        }
        for m in &self.shapes.meshes {
            world.add_mesh(m.clone())?;
        }
        for f in &self.shapes.heightfields {
            world.add_heightfield(f.clone())?;
        }
        for children in &self.shapes.compounds {
            let c = CompoundShape::new(children, world.shapes())
                .map_err(|_| crate::error::PhysicsError::InvalidShape)?;
            world.add_compound(c)?;
        }
        let first_late = self.late.map_or(self.bodies.len(), |l| l.first);
        let ids = self
            .bodies
            .iter()
            .enumerate()
            .map(|(k, b)| {
                if k < first_late {
                    world.create_and_add_body(b)
                } else {
                    world.create_body(b)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        for j in &self.joints {
            world.create_joint(&JointSettings::new(
                j.a.map(|k| ids[k]),
                j.b.map(|k| ids[k]),
                j.frame_a,
                j.frame_b,
                j.kind,
            ))?;
        }
        Ok((world, ids))
    }

    /// What the scene does before update number `steps_done` (from 0): adds
    /// its late bodies when their step comes. Scenes without late bodies do
    /// nothing.
    pub fn before_update(
        &self,
        world: &mut PhysicsSystem,
        ids: &[BodyId],
        steps_done: u32,
    ) -> Result<()> {
        if let Some(late) = self.late {
            if late.step == steps_done {
                for &id in &ids[late.first..] {
                    world.add_body(id)?;
                }
            }
        }
        Ok(())
    }

    /// The largest violation of any joint at these poses (one per body, in
    /// scene order; from any engine): how far apart a joint's anchors are
    /// (for a distance joint, how far its length is outside its limits),
    /// m. Engines' joints stretch under load; this is what the peers
    /// compare.
    pub fn joint_stretch(&self, poses: &[(Vec3, Quat)]) -> f32 {
        let anchor = |k: Option<usize>, f: &JointFrame| match k {
            Some(k) => poses[k].0 + rotate(poses[k].1, f.anchor),
            None => f.anchor,
        };
        self.joints
            .iter()
            .map(|j| {
                let d = (anchor(j.b, &j.frame_b) - anchor(j.a, &j.frame_a)).length();
                match j.kind {
                    JointKind::Distance(dj) => (d - d.clamp(dj.min, dj.max)).abs(),
                    JointKind::Slider(_) => 0.0,
                    _ => d,
                }
            })
            .fold(0.0, f32::max)
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
pub const NAMES: [&str; 16] = [
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
    "chains",
    "net",
    "ragdolls",
    "terrain",
    "terrain_mesh",
    "compounds",
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
        "chains" => chains(),
        "net" => net(),
        "ragdolls" => ragdolls(),
        "terrain" => terrain(),
        "terrain_mesh" => terrain_mesh(),
        "compounds" => compounds(),
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
        shapes: SceneShapes::default(),
        bodies,
        joints: Vec::new(),
        late: None,
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

/// The avalanche of SCENES.md: `n` dynamic bodies cycling box (half
/// extent 0.4), sphere (radius 0.4) and capsule (radius 0.3, half height
/// 0.3), in a cube grid of side `s = ceil(n^(1/3))` spaced 1.5 m (x
/// fastest, then z, then y), the lowest layer at y = 3, centred on
/// x = z = 0, each turned about y by π/2·u(k), falling onto the floor
/// widened to half extents (1.5·s + 10, 1, 1.5·s + 10) (its top at y = 0).
/// Sleeping allowed; capacities from [`Capacities::for_bodies`]. N =
/// 1,024 / 4,096 / 16,384 / 65,536 give the cost-growth curve, 32,768 is the
/// headline.
pub fn avalanche(n: usize) -> Scene {
    const SPACING: f32 = 1.5;
    let side = (1..).find(|&s: &usize| s * s * s >= n).unwrap_or(1);
    let half = (side as f32 - 1.0) * 0.5;
    let reach = SPACING * side as f32 + 10.0;
    let floor = BodyCreationSettings::new(
        Shape::Box {
            half_extents: Vec3::new(reach, 1.0, reach),
        },
        Vec3::new(0.0, -1.0, 0.0),
        MotionType::Static,
    );
    let mut bodies = Vec::with_capacity(n + 1);
    bodies.push(floor);
    for k in 0..n {
        let (ix, iz, iy) = (k % side, (k / side) % side, k / (side * side));
        let p = Vec3::new(
            (ix as f32 - half) * SPACING,
            3.0 + iy as f32 * SPACING,
            (iz as f32 - half) * SPACING,
        );
        let shape = match k % 3 {
            0 => Shape::Box {
                half_extents: Vec3::splat(0.4),
            },
            1 => Shape::Sphere { radius: 0.4 },
            _ => Shape::Capsule {
                half_height: 0.3,
                radius: 0.3,
            },
        };
        let angle = core::f32::consts::FRAC_PI_2 * unit_random(k as u64);
        bodies.push(
            BodyCreationSettings::new(shape, p, MotionType::Dynamic)
                .with_rotation(Quat::from_rotation_y(angle)),
        );
    }
    Scene {
        capacities: Capacities::for_bodies(n + 1),
        ..scene("avalanche", bodies)
    }
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

/// `world` (a frame in world space) in the local space of a body created
/// with `b` (where it starts).
pub fn local_frame(b: &BodyCreationSettings, world: JointFrame) -> JointFrame {
    let q = b.rotation.inverse();
    JointFrame {
        anchor: rotate(q, world.anchor - b.position),
        axis: rotate(q, world.axis),
        normal: rotate(q, world.normal),
    }
}

/// A joint between scene bodies `a` and `b` (or the world) at the world
/// frame `at`, where both start.
fn joint_at(
    bodies: &[BodyCreationSettings],
    a: Option<usize>,
    b: Option<usize>,
    at: JointFrame,
    kind: JointKind,
) -> SceneJoint {
    let frame = |k: Option<usize>| k.map_or(at, |k| local_frame(&bodies[k], at));
    SceneJoint {
        a,
        b,
        frame_a: frame(a),
        frame_b: frame(b),
        kind,
    }
}

/// Turns the capsule's local y axis onto world x.
fn along_x() -> Quat {
    Quat::from_rotation_z(-core::f32::consts::FRAC_PI_2)
}

/// 64 chains of 20 capsule links (radius 0.05, half height 0.1) along +x,
/// joined by point joints at their shared cap centres; each chain's first
/// link hangs from the world at (0, 10, 0.5 c), and swings down in its own
/// x–y plane.
pub fn chains() -> Scene {
    const CHAINS: usize = 64;
    const LINKS: usize = 20;
    let capsule = Shape::Capsule {
        half_height: 0.1,
        radius: 0.05,
    };
    let mut bodies = Vec::with_capacity(CHAINS * LINKS);
    let mut joints = Vec::with_capacity(CHAINS * LINKS);
    for c in 0..CHAINS {
        let z = 0.5 * c as f32;
        for k in 0..LINKS {
            let centre = Vec3::new(0.1 + 0.2 * k as f32, 10.0, z);
            bodies.push(
                BodyCreationSettings::new(capsule, centre, MotionType::Dynamic)
                    .with_rotation(along_x()),
            );
            let at = JointFrame::at(Vec3::new(0.2 * k as f32, 10.0, z));
            let prev = (k > 0).then(|| bodies.len() - 2);
            joints.push(joint_at(
                &bodies,
                prev,
                Some(bodies.len() - 1),
                at,
                JointKind::Point,
            ));
        }
    }
    Scene {
        joints,
        ..scene("chains", bodies)
    }
}

/// A 32 × 32 net of spheres (radius 0.1) 0.3 m apart at y = 8, each joined
/// to its +x and +z neighbours by rigid distance joints, the corners held
/// by the world; after 60 steps, 64 cubes (half extent 0.2) in an 8 × 8
/// grid spaced 0.6 m fall onto it from y = 10. No sleeping.
pub fn net() -> Scene {
    const N: usize = 32;
    const SPACING: f32 = 0.3;
    let ball = Shape::Sphere { radius: 0.1 };
    let at = |i: usize, k: usize| {
        let c = (N as f32 - 1.0) / 2.0;
        Vec3::new((i as f32 - c) * SPACING, 8.0, (k as f32 - c) * SPACING)
    };
    let mut bodies = vec![floor()];
    for k in 0..N {
        for i in 0..N {
            bodies.push(
                BodyCreationSettings::new(ball, at(i, k), MotionType::Dynamic)
                    .with_allow_sleeping(false),
            );
        }
    }
    let index = |i: usize, k: usize| 1 + k * N + i;
    let rod = JointKind::Distance(DistanceJoint {
        min: SPACING,
        max: SPACING,
        spring: None,
    });
    let mut joints = Vec::new();
    for k in 0..N {
        for i in 0..N {
            let here = JointFrame::at(Vec3::ZERO);
            for (di, dk) in [(1, 0), (0, 1)] {
                if i + di < N && k + dk < N {
                    joints.push(SceneJoint {
                        a: Some(index(i, k)),
                        b: Some(index(i + di, k + dk)),
                        frame_a: here,
                        frame_b: here,
                        kind: rod,
                    });
                }
            }
        }
    }
    for (i, k) in [(0, 0), (N - 1, 0), (0, N - 1), (N - 1, N - 1)] {
        joints.push(joint_at(
            &bodies,
            None,
            Some(index(i, k)),
            JointFrame::at(at(i, k)),
            JointKind::Point,
        ));
    }
    let first = bodies.len();
    for k in 0..8 {
        for i in 0..8 {
            let p = Vec3::new((i as f32 - 3.5) * 0.6, 10.0, (k as f32 - 3.5) * 0.6);
            bodies.push(cube(0.2, p).with_allow_sleeping(false));
        }
    }
    Scene {
        joints,
        late: Some(LateBodies { step: 60, first }),
        ..scene("net", bodies)
    }
}

/// The swing-twist joints of a ragdoll: a 45° cone, ±20° of twist.
fn ragdoll_swing_twist() -> JointKind {
    JointKind::SwingTwist(SwingTwistJoint {
        swing: 45f32.to_radians(),
        twist: [-20f32.to_radians(), 20f32.to_radians()],
    })
}

/// Elbows and knees: 0° to 140° about their hinge axis.
fn ragdoll_hinge() -> JointKind {
    JointKind::Hinge(HingeJoint {
        limits: Some([0.0, 140f32.to_radians()]),
        ..HingeJoint::default()
    })
}

/// One ragdoll of SCENES.md (11 bodies, 10 joints), posed by `pose` (the
/// standing ragdoll, pelvis at the origin, y up, facing +z, turned by
/// `pose.0` and moved to `pose.1`), appended to `bodies` and `joints`.
fn ragdoll(
    pose: (Quat, Vec3),
    bodies: &mut Vec<BodyCreationSettings>,
    joints: &mut Vec<SceneJoint>,
) {
    let (q, at) = pose;
    let place = |p: Vec3| at + rotate(q, p);
    let part = |shape: Shape, p: Vec3, along: Quat| {
        BodyCreationSettings::new(shape, place(p), MotionType::Dynamic)
            .with_rotation(crate::math::quat_mul(q, along))
    };
    let capsule = |radius: f32, half_height: f32| Shape::Capsule {
        half_height,
        radius,
    };
    let cuboid = |x, y, z| Shape::Box {
        half_extents: Vec3::new(x, y, z),
    };
    let first = bodies.len();
    let id = |k: usize| Some(first + k);
    // 0 pelvis, 1 chest, 2 head, 3/4 upper arms, 5/6 forearms, 7/8 thighs, 9/10 shins
    bodies.push(part(cuboid(0.15, 0.10, 0.10), Vec3::ZERO, Quat::IDENTITY));
    bodies.push(part(
        cuboid(0.17, 0.20, 0.10),
        Vec3::new(0.0, 0.32, 0.0),
        Quat::IDENTITY,
    ));
    bodies.push(part(
        Shape::Sphere { radius: 0.11 },
        Vec3::new(0.0, 0.66, 0.0),
        Quat::IDENTITY,
    ));
    for s in [-1.0f32, 1.0] {
        bodies.push(part(
            capsule(0.05, 0.12),
            Vec3::new(0.35 * s, 0.42, 0.0),
            along_x(),
        ));
    }
    for s in [-1.0f32, 1.0] {
        bodies.push(part(
            capsule(0.04, 0.11),
            Vec3::new(0.62 * s, 0.42, 0.0),
            along_x(),
        ));
    }
    for s in [-1.0f32, 1.0] {
        bodies.push(part(
            capsule(0.07, 0.17),
            Vec3::new(0.09 * s, -0.34, 0.0),
            Quat::IDENTITY,
        ));
    }
    for s in [-1.0f32, 1.0] {
        bodies.push(part(
            capsule(0.06, 0.17),
            Vec3::new(0.09 * s, -0.82, 0.0),
            Quat::IDENTITY,
        ));
    }
    // A frame at standing point `p` with standing axis and normal.
    let frame = |p: Vec3, axis: Vec3, normal: Vec3| {
        JointFrame::new(place(p), rotate(q, axis), rotate(q, normal))
    };
    let mut join = |a: usize, b: usize, f: JointFrame, kind: JointKind| {
        joints.push(joint_at(bodies, id(a), id(b), f, kind));
    };
    // spine and neck: twist about the bone (up)
    join(
        0,
        1,
        frame(Vec3::new(0.0, 0.11, 0.0), Vec3::Y, Vec3::X),
        ragdoll_swing_twist(),
    );
    join(
        1,
        2,
        frame(Vec3::new(0.0, 0.535, 0.0), Vec3::Y, Vec3::X),
        ragdoll_swing_twist(),
    );
    for (k, s) in [(0usize, -1.0f32), (1, 1.0)] {
        // shoulders: twist about the arm (outwards)
        let out = Vec3::new(s, 0.0, 0.0);
        join(
            1,
            3 + k,
            frame(Vec3::new(0.175 * s, 0.42, 0.0), out, Vec3::Y),
            ragdoll_swing_twist(),
        );
        // elbows bend forwards (towards +z): about +y on the left arm (−x),
        // −y on the right
        let elbow = Vec3::new(0.0, -s, 0.0);
        join(
            3 + k,
            5 + k,
            frame(Vec3::new(0.49 * s, 0.42, 0.0), elbow, out),
            ragdoll_hinge(),
        );
        // hips: twist about the leg (down)
        join(
            0,
            7 + k,
            frame(Vec3::new(0.09 * s, -0.10, 0.0), -Vec3::Y, Vec3::Z),
            ragdoll_swing_twist(),
        );
        // knees bend backwards (towards −z): about +x
        join(
            7 + k,
            9 + k,
            frame(Vec3::new(0.09 * s, -0.58, 0.0), Vec3::X, -Vec3::Y),
            ragdoll_hinge(),
        );
    }
}

/// 100 ragdolls lying face down in a 10 × 10 grid spaced 2 m (pelvis at
/// y = 1.5), dropped into a 1 m deep pit of four static walls around them.
pub fn ragdolls() -> Scene {
    let mut bodies = vec![floor()];
    // walls: inner faces 10.5 m from the centre, 1 m tall, 0.5 m thick
    for s in [-1.0f32, 1.0] {
        for (half, p) in [
            (Vec3::new(0.25, 0.5, 11.0), Vec3::new(10.75 * s, 0.5, 0.0)),
            (Vec3::new(11.0, 0.5, 0.25), Vec3::new(0.0, 0.5, 10.75 * s)),
        ] {
            bodies.push(BodyCreationSettings::new(
                Shape::Box { half_extents: half },
                p,
                MotionType::Static,
            ));
        }
    }
    let mut joints = Vec::new();
    let face_down = Quat::from_rotation_x(core::f32::consts::FRAC_PI_2);
    for k in 0..10 {
        for i in 0..10 {
            let at = Vec3::new((i as f32 - 4.5) * 2.0, 1.5, (k as f32 - 4.5) * 2.0);
            ragdoll((face_down, at), &mut bodies, &mut joints);
        }
    }
    Scene {
        joints,
        ..scene("ragdolls", bodies)
    }
}

/// Steps the `raycast` scene settles the rain for before adding its
/// spheres.
pub const RAYCAST_SETTLE_STEPS: u32 = 300;

/// Samples per side of the terrain's height field (128 cells of 1 m).
pub const TERRAIN_SAMPLES: usize = 129;

/// The terrain's height at `(x, z)` (SCENES.md): `2 sin(x/7) cos(z/9) +
/// 0.5 sin(x/2.3)` m.
pub fn terrain_height(x: f32, z: f32) -> f32 {
    2.0 * (x / 7.0).sin() * (z / 9.0).cos() + 0.5 * (x / 2.3).sin()
}

/// The terrain's samples, row by row (x fastest), centred on the origin.
fn terrain_samples() -> Vec<f32> {
    let n = TERRAIN_SAMPLES;
    let half = (n - 1) as f32 / 2.0;
    (0..n * n)
        .map(|k| terrain_height((k % n) as f32 - half, (k / n) as f32 - half))
        .collect()
}

/// The hull of the terrain scene: the 12 vertices of an icosahedron of
/// circumradius 0.45 m.
pub fn icosahedron(circumradius: f32) -> ConvexHull {
    let phi = (1.0 + 5f32.sqrt()) / 2.0;
    let s = circumradius / (1.0 + phi * phi).sqrt();
    let mut v = Vec::new();
    for (a, b) in [(1.0, phi), (-1.0, phi), (1.0, -phi), (-1.0, -phi)] {
        v.push(Vec3::new(0.0, a, b) * s);
        v.push(Vec3::new(a, b, 0.0) * s);
        v.push(Vec3::new(b, 0.0, a) * s);
    }
    ConvexHull::from_points(&v).expect("an icosahedron is a hull")
}

/// The terrain of SCENES.md on `surface` (a height field, or the same
/// surface as a mesh): 2,000 bodies cycling sphere (r 0.4), box (half
/// extent 0.35), capsule (r 0.3, half height 0.3) and an icosahedron hull
/// (circumradius 0.45), dropped from a 20 × 20 grid spaced 2.5 m centred
/// on the origin (x fastest, then z), in 5 layers 2 m apart from y = 8.
fn terrain_scene(name: &'static str, surface: Shape, shapes: SceneShapes) -> Scene {
    let mut bodies = vec![BodyCreationSettings::new(
        surface,
        Vec3::ZERO,
        MotionType::Static,
    )];
    let hull = Shape::Hull(HullId(0));
    for k in 0..2000usize {
        let (ix, iz, layer) = (k % 20, (k / 20) % 20, k / 400);
        let p = Vec3::new(
            (ix as f32 - 9.5) * 2.5,
            8.0 + 2.0 * layer as f32,
            (iz as f32 - 9.5) * 2.5,
        );
        let shape = match k % 4 {
            0 => Shape::Sphere { radius: 0.4 },
            1 => Shape::Box {
                half_extents: Vec3::splat(0.35),
            },
            2 => Shape::Capsule {
                half_height: 0.3,
                radius: 0.3,
            },
            _ => hull,
        };
        bodies.push(BodyCreationSettings::new(shape, p, MotionType::Dynamic));
    }
    Scene {
        shapes,
        ..scene(name, bodies)
    }
}

/// The terrain scene on a 129 × 129 height field (1 m cells).
pub fn terrain() -> Scene {
    let n = TERRAIN_SAMPLES;
    let field = HeightField::new(n, n, (1.0, 1.0), &terrain_samples())
        .expect("the terrain's samples are valid");
    let shapes = SceneShapes {
        hulls: vec![icosahedron(0.45)],
        heightfields: vec![field],
        ..SceneShapes::default()
    };
    terrain_scene("terrain", Shape::HeightField(HeightFieldId(0)), shapes)
}

/// The terrain scene with the height field replaced by the same surface as
/// a triangle mesh: two triangles a cell, split along the same diagonal
/// as the height field's (from sample (i, j) to (i + 1, j + 1)).
pub fn terrain_mesh() -> Scene {
    let n = TERRAIN_SAMPLES;
    let half = (n - 1) as f32 / 2.0;
    let h = terrain_samples();
    let vertices: Vec<Vec3> = (0..n * n)
        .map(|k| Vec3::new((k % n) as f32 - half, h[k], (k / n) as f32 - half))
        .collect();
    let at = |i: usize, j: usize| (j * n + i) as u32;
    let mut triangles = Vec::with_capacity(2 * (n - 1) * (n - 1));
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            triangles.push([at(i, j), at(i + 1, j + 1), at(i + 1, j)]);
            triangles.push([at(i, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    let mesh = TriangleMesh::new(&vertices, &triangles).expect("the terrain mesh is valid");
    let shapes = SceneShapes {
        hulls: vec![icosahedron(0.45)],
        meshes: vec![mesh],
        ..SceneShapes::default()
    };
    terrain_scene("terrain_mesh", Shape::Mesh(MeshId(0)), shapes)
}

/// The four compounds of the `compounds` scene, in [`CompoundId`] order:
/// a table (a 1.2 × 0.1 × 0.8 m top on four 0.1 × 0.7 × 0.1 m legs), a
/// dumbbell (two spheres of radius 0.2 m on a 0.8 m bar of radius
/// 0.06 m), an L of two 1.0 × 0.3 × 0.3 m beams, and a mace (a capsule
/// handle under an icosahedron hull of circumradius 0.3 m, hull 0).
pub fn compound_children() -> Vec<Vec<CompoundChild>> {
    let cuboid = |x, y, z| Shape::Box {
        half_extents: Vec3::new(x, y, z),
    };
    let mut table = vec![CompoundChild::new(
        cuboid(0.6, 0.05, 0.4),
        Vec3::new(0.0, 0.75, 0.0),
    )];
    for (x, z) in [(-0.55, -0.35), (0.55, -0.35), (-0.55, 0.35), (0.55, 0.35)] {
        table.push(CompoundChild::new(
            cuboid(0.05, 0.35, 0.05),
            Vec3::new(x, 0.35, z),
        ));
    }
    let ball = Shape::Sphere { radius: 0.2 };
    let bar = Shape::Capsule {
        half_height: 0.4,
        radius: 0.06,
    };
    let dumbbell = vec![
        CompoundChild::new(ball, Vec3::new(-0.45, 0.0, 0.0)),
        CompoundChild::new(ball, Vec3::new(0.45, 0.0, 0.0)),
        CompoundChild::new(bar, Vec3::ZERO)
            .rotated(Quat::from_rotation_z(core::f32::consts::FRAC_PI_2)),
    ];
    let ell = vec![
        CompoundChild::new(cuboid(0.5, 0.15, 0.15), Vec3::ZERO),
        CompoundChild::new(cuboid(0.15, 0.5, 0.15), Vec3::new(0.35, 0.35, 0.0)),
    ];
    let mace = vec![
        CompoundChild::new(
            Shape::Capsule {
                half_height: 0.4,
                radius: 0.07,
            },
            Vec3::ZERO,
        ),
        CompoundChild::new(Shape::Hull(HullId(0)), Vec3::new(0.0, 0.65, 0.0)),
    ];
    vec![table, dumbbell, ell, mace]
}

/// The `compounds` scene (ours; SCENES.md has none): the floor and 500
/// compounds of [`compound_children`] (table, dumbbell, L, mace in turn),
/// 10 × 10 on a 2.5 m grid in 5 layers 2.5 m apart from y = 3 m, each
/// turned about y by 0.7 rad per index and the odd ones tipped 0.3 rad
/// about x, so they land unevenly and pile.
pub fn compounds() -> Scene {
    let mut bodies = vec![floor()];
    for k in 0..500usize {
        let (ix, iz, layer) = (k % 10, (k / 10) % 10, k / 100);
        let p = Vec3::new(
            (ix as f32 - 4.5) * 2.5,
            3.0 + 2.5 * layer as f32,
            (iz as f32 - 4.5) * 2.5,
        );
        let turn = Quat::from_rotation_y(0.7 * k as f32);
        let tip = Quat::from_rotation_x(if k % 2 == 1 { 0.3 } else { 0.0 });
        // quat_mul, not glam's `*`, which fuses under target-cpu=native
        let shape = Shape::Compound(CompoundId((k % 4) as u32));
        bodies.push(
            BodyCreationSettings::new(shape, p, MotionType::Dynamic)
                .with_rotation(quat_mul(turn, tip)),
        );
    }
    Scene {
        shapes: SceneShapes {
            hulls: vec![icosahedron(0.3)],
            compounds: compound_children(),
            ..SceneShapes::default()
        },
        ..scene("compounds", bodies)
    }
}

/// The `raycast` scene of SCENES.md: the rain after
/// [`RAYCAST_SETTLE_STEPS`] steps on `pool`, plus up to 2,000 static
/// spheres (radius 0.3) on a 45 × 45 grid spaced 2 m at y = 0.3, centred
/// on the origin, skipping grid points whose sphere's box overlaps a
/// cube's; and its `rays` rays: ray `k` starts at x, z = 60·u(4k) − 30,
/// 60·u(4k+1) − 30, y = 30, and points down tilted by 30°·u(4k+2)
/// towards the azimuth 2π·u(4k+3); max distance 100 m.
pub fn raycast(
    pool: &rayon::ThreadPool,
    rays: usize,
) -> Result<(PhysicsSystem, Vec<crate::query::Ray>)> {
    let rain = rain();
    let (mut world, ids) = rain.build(PhysicsSettings::default())?;
    for _ in 0..RAYCAST_SETTLE_STEPS {
        world.update(DT, 1, pool)?;
    }
    let boxes: Vec<(Vec3, Vec3)> = ids[1..]
        .iter()
        .map(|&id| world.world_aabb(id))
        .collect::<Result<_>>()?;
    let r = 0.3;
    let mut placed = 0;
    'grid: for n in 0..45 * 45 {
        if placed == 2000 {
            break;
        }
        let (ix, iz) = (n % 45, n / 45);
        let c = Vec3::new((ix as f32 - 22.0) * 2.0, r, (iz as f32 - 22.0) * 2.0);
        for &(lo, hi) in &boxes {
            if (c - Vec3::splat(r)).cmple(hi).all() && (c + Vec3::splat(r)).cmpge(lo).all() {
                continue 'grid;
            }
        }
        let s = BodyCreationSettings::new(Shape::Sphere { radius: r }, c, MotionType::Static);
        world.create_and_add_body(&s)?;
        placed += 1;
    }
    world.optimize_query_trees();
    let rays = (0..rays as u64)
        .map(|k| {
            let o = Vec3::new(
                60.0 * unit_random(4 * k) - 30.0,
                30.0,
                60.0 * unit_random(4 * k + 1) - 30.0,
            );
            let tilt = core::f32::consts::FRAC_PI_6 * unit_random(4 * k + 2);
            let azimuth = 2.0 * core::f32::consts::PI * unit_random(4 * k + 3);
            let d = Vec3::new(
                tilt.sin() * azimuth.cos(),
                -tilt.cos(),
                tilt.sin() * azimuth.sin(),
            );
            crate::query::Ray::new(o, d, 100.0)
        })
        .collect::<Result<_>>()?;
    Ok((world, rays))
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
        assert_eq!(chains().dynamic_count(), 1280);
        assert_eq!(chains().joints.len(), 1280);
        assert_eq!(net().dynamic_count(), 1024 + 64);
        assert_eq!(net().joints.len(), 2 * 32 * 31 + 4);
        assert_eq!(ragdolls().dynamic_count(), 1100);
        assert_eq!(ragdolls().joints.len(), 1000);
        assert_eq!(terrain().dynamic_count(), 2000);
        assert_eq!(terrain_mesh().dynamic_count(), 2000);
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
