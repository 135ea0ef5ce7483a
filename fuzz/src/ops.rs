//! What the fuzzer calls: one [`Op`] per public method of `PhysicsSystem`,
//! with its arguments as plain data, and how a seed becomes a [`Case`] (a
//! world's capacities and settings, then a list of ops).
//!
//! Values come from two pools: *sane* ones (what a game passes) and
//! *hostile* ones (NaN, infinities, zeros, denormals, `f32::MAX`, and every
//! documented limit with its neighbours on both sides). Each case draws how
//! hostile it is, so some worlds get only sane values (their failures are
//! ordinary call sequences) and others get many hostile ones.

use archipelago::*;

/// splitmix64 steps: fast, seedable, and the same sequence on every
/// machine, so a seed replays its case exactly.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        scenes::splitmix64(self.0)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f32) -> bool {
        self.unit() < p
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// The next representable value up and down (the two sides of a limit).
fn next_up(x: f32) -> f32 {
    f32::from_bits(if x >= 0.0 {
        x.to_bits() + 1
    } else {
        x.to_bits() - 1
    })
}

fn next_down(x: f32) -> f32 {
    f32::from_bits(if x > 0.0 {
        x.to_bits() - 1
    } else {
        x.to_bits() + 1
    })
}

/// Floats no caller should pass, and the edges of every documented range.
fn hostile_f32(r: &mut Rng) -> f32 {
    const SPECIAL: [f32; 24] = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
        -1e-45,
        1e-30,
        -1e-30,
        1e30,
        -1e30,
        3e38,
        -3e38,
        1e20,
        1e-20,
        -1.0,
        1e12,
        -1e12,
        4e-6,
        1e9,
        -1e9,
    ];
    const LIMITS: [f32; 13] = [
        MAX_COORDINATE,
        MAX_SHAPE_SIZE,
        MIN_SHAPE_SIZE,
        MAX_MASS,
        MIN_MASS,
        MAX_FRICTION,
        MAX_SPEED,
        MAX_GRAVITY,
        MAX_GRAVITY_FACTOR,
        MAX_CONTACT_DISTANCE,
        MAX_TIME_STEP,
        MIN_TIME_STEP,
        1.0,
    ];
    if r.chance(0.5) {
        r.pick(&SPECIAL)
    } else {
        let l = r.pick(&LIMITS);
        let v = match r.below(3) {
            0 => l,
            1 => next_up(l),
            _ => next_down(l),
        };
        if r.chance(0.3) {
            -v
        } else {
            v
        }
    }
}

/// A value generator for one case: `hostility` is the chance that any one
/// value comes from the hostile pool.
pub struct Gen {
    pub rng: Rng,
    pub hostility: f32,
}

impl Gen {
    fn hostile(&mut self) -> bool {
        self.rng.chance(self.hostility)
    }

    /// A float: sane in `lo..hi`, or hostile.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        if self.hostile() {
            hostile_f32(&mut self.rng)
        } else {
            self.rng.range(lo, hi)
        }
    }

    pub fn vec3_in(&mut self, lo: f32, hi: f32) -> Vec3 {
        Vec3::new(
            self.f32_in(lo, hi),
            self.f32_in(lo, hi),
            self.f32_in(lo, hi),
        )
    }

    pub fn quat(&mut self) -> Quat {
        let unit = |g: &mut Self| {
            let v = Vec3::new(
                g.rng.range(-1.0, 1.0),
                g.rng.range(-1.0, 1.0),
                g.rng.range(-1.0, 1.0),
            );
            Quat::from_xyzw(v.x, v.y, v.z, g.rng.range(-1.0, 1.0)).normalize()
        };
        if !self.hostile() {
            return if self.rng.chance(0.5) {
                Quat::IDENTITY
            } else {
                unit(self)
            };
        }
        match self.rng.below(5) {
            // slightly off unit length: within and beyond the tolerance
            0 => unit(self) * (1.0 + self.rng.pick(&[5e-4, -5e-4, 2e-3, -2e-3])),
            1 => Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            2 => Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
            3 => Quat::from_xyzw(
                hostile_f32(&mut self.rng),
                0.0,
                0.0,
                hostile_f32(&mut self.rng),
            ),
            _ => unit(self) * 1e20,
        }
    }

    pub fn shape(&mut self) -> Shape {
        match self.rng.below(3) {
            0 => Shape::Sphere {
                radius: self.f32_in(0.05, 1.5),
            },
            1 => Shape::Box {
                half_extents: self.vec3_in(0.05, 1.5),
            },
            _ => Shape::Capsule {
                half_height: self.f32_in(0.05, 1.5),
                radius: self.f32_in(0.05, 1.0),
            },
        }
    }

    pub fn motion(&mut self) -> MotionType {
        match self.rng.below(10) {
            0 => MotionType::Static,
            1 => MotionType::Kinematic,
            _ => MotionType::Dynamic,
        }
    }

    pub fn body(&mut self) -> BodyCreationSettings {
        let mut s =
            BodyCreationSettings::new(self.shape(), self.vec3_in(-15.0, 15.0), self.motion());
        s.rotation = self.quat();
        if self.rng.chance(0.3) {
            s.linear_velocity = self.vec3_in(-10.0, 10.0);
            s.angular_velocity = self.vec3_in(-5.0, 5.0);
        }
        if self.rng.chance(0.3) {
            s.mass = if self.rng.chance(0.5) {
                MassSpec::Density(self.f32_in(10.0, 5000.0))
            } else {
                MassSpec::Mass(self.f32_in(0.1, 500.0))
            };
        }
        if self.rng.chance(0.3) {
            s.friction = self.f32_in(0.0, 1.0);
            s.restitution = self.f32_in(0.0, 1.0);
        }
        if self.rng.chance(0.2) {
            s.linear_damping = Some(self.f32_in(0.0, 1.0));
            s.angular_damping = Some(self.f32_in(0.0, 1.0));
        }
        if self.rng.chance(0.2) {
            s.gravity_factor = self.f32_in(-1.0, 2.0);
        }
        s.allow_sleeping = self.rng.chance(0.8);
        s.is_sensor = self.rng.chance(0.05);
        s.contact_events = self.rng.chance(0.3);
        if self.rng.chance(0.25) {
            s.motion_quality = MotionQuality::LinearCast;
        }
        if self.rng.chance(0.2) {
            let layers = if self.hostile() { 256 } else { 4 };
            s.object_layer = self.rng.below(layers) as u8;
        }
        s.user_data = self.rng.next_u64();
        s
    }

    pub fn settings(&mut self, broad_phase: BroadPhaseKind) -> PhysicsSettings {
        let mut s = PhysicsSettings {
            broad_phase,
            ..PhysicsSettings::default()
        };
        let g = &mut *self;
        if g.rng.chance(0.3) {
            s.gravity = g.vec3_in(-20.0, 20.0);
        }
        let iterations = |g: &mut Self, lo: u32, hi: u32| {
            if g.hostile() {
                g.rng.pick(&[
                    0,
                    1,
                    MAX_SOLVER_ITERATIONS,
                    MAX_SOLVER_ITERATIONS + 1,
                    u32::MAX,
                ])
            } else {
                lo + g.rng.below((hi - lo + 1) as u64) as u32
            }
        };
        if g.rng.chance(0.3) {
            s.velocity_iterations = iterations(g, 1, 16);
            s.position_iterations = iterations(g, 0, 4);
        }
        if g.rng.chance(0.2) {
            s.baumgarte = g.f32_in(0.0, 1.0);
            s.speculative_contact_distance = g.f32_in(0.0, 0.1);
            s.penetration_slop = g.f32_in(0.0, 0.05);
            s.max_penetration_distance = g.f32_in(0.01, 0.5);
        }
        if g.rng.chance(0.2) {
            s.linear_damping = g.f32_in(0.0, 1.0);
            s.angular_damping = g.f32_in(0.0, 1.0);
        }
        if g.rng.chance(0.2) {
            s.max_linear_velocity = g.f32_in(1.0, 1000.0);
            s.max_angular_velocity = g.f32_in(1.0, 100.0);
        }
        if g.rng.chance(0.1) {
            s.min_velocity_for_restitution = g.f32_in(0.0, 5.0);
            s.contact_point_preserve_distance = g.f32_in(0.0, 0.1);
            s.contact_normal_preserve_cos = g.f32_in(-1.0, 1.0);
        }
        if g.rng.chance(0.2) {
            let mut f = LayerFilter::default();
            for _ in 0..g.rng.below(8) {
                let (a, b) = (g.rng.below(40) as u8, g.rng.below(40) as u8);
                f.set(a, b, g.rng.chance(0.5));
            }
            s.layer_filter = f;
        }
        s.allow_sleeping = g.rng.chance(0.85);
        s.use_large_island_splitter = g.rng.chance(0.8);
        s.use_body_pair_cache = g.rng.chance(0.8);
        if g.rng.chance(0.2) {
            s.body_pair_cache_max_delta_position = g.f32_in(0.0, 0.05);
            s.body_pair_cache_max_delta_rotation = g.f32_in(0.0, 3.0);
        }
        if g.rng.chance(0.2) {
            s.time_before_sleep = g.f32_in(0.0, 1.0);
            s.point_velocity_sleep_threshold = g.f32_in(0.0, 0.1);
        }
        s
    }

    pub fn broad_phase(&mut self) -> BroadPhaseKind {
        match self.rng.below(7) {
            0 | 1 => BroadPhaseKind::Sap,
            5 => BroadPhaseKind::MbpFitted {
                subdivisions: if self.hostile() {
                    self.rng.pick(&[0, 17, u32::MAX, 16])
                } else {
                    1 + self.rng.below(8) as u32
                },
            },
            6 => BroadPhaseKind::Auto,
            2 | 3 => BroadPhaseKind::Mbp(MbpSettings {
                world_min: self.vec3_in(-60.0, -20.0),
                world_max: self.vec3_in(20.0, 60.0),
                subdivisions: if self.hostile() {
                    self.rng.pick(&[0, 17, u32::MAX, 16])
                } else {
                    1 + self.rng.below(8) as u32
                },
            }),
            _ => BroadPhaseKind::BruteForce,
        }
    }

    pub fn capacities(&mut self) -> Capacities {
        let mut c = Capacities {
            max_bodies: self.rng.pick(&[1, 2, 3, 8, 32, 64, 200, 256]),
            max_body_pairs: self.rng.pick(&[1, 2, 8, 64, 512, 4096, 65536]),
            max_contact_constraints: self.rng.pick(&[1, 2, 8, 64, 512, 4096]),
            max_joints: self.rng.pick(&[0, 1, 2, 8, 64, 512]),
        };
        if self.hostile() {
            let bad = self.rng.pick(&[
                0,
                usize::MAX,
                usize::MAX / 2,
                1 << 40,
                u32::MAX as usize / 2,
                MAX_BODY_PAIRS + 1,
                MAX_BODIES + 1,
            ]);
            match self.rng.below(3) {
                0 => c.max_bodies = bad,
                1 => c.max_body_pairs = bad,
                _ => c.max_contact_constraints = bad,
            }
        }
        c
    }
}

/// Which body a call names: one this world issued (by issue order, wrapped
/// to those issued so far), the latest, one of another world (same slot
/// and generation: only the world tag differs), or a forged id (world tag
/// 0, which no world has).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    Issued(u32),
    Latest,
    Foreign(u32),
    Forged([u32; 3]),
}

/// The per-body getters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Query {
    Position,
    Rotation,
    LinearVelocity,
    AngularVelocity,
    MotionType,
    Shape,
    UserData,
    Mass,
    WorldAabb,
    IsAdded,
    IsActive,
    IsSleeping,
}

const QUERIES: [Query; 12] = [
    Query::Position,
    Query::Rotation,
    Query::LinearVelocity,
    Query::AngularVelocity,
    Query::MotionType,
    Query::Shape,
    Query::UserData,
    Query::Mass,
    Query::WorldAabb,
    Query::IsAdded,
    Query::IsActive,
    Query::IsSleeping,
];

/// One public call, with its arguments.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    /// `create_body`, or `create_and_add_body` when `add`.
    Create {
        settings: BodyCreationSettings,
        add: bool,
    },
    Add(Target),
    Remove(Target),
    Destroy(Target),
    SetPosition(Target, Vec3),
    SetRotation(Target, Quat),
    SetLinearVelocity(Target, Vec3),
    SetAngularVelocity(Target, Vec3),
    AddForce(Target, Vec3),
    AddTorque(Target, Vec3),
    AddImpulse(Target, Vec3),
    AddImpulseAt(Target, Vec3, Option<Vec3>),
    AddAngularImpulse(Target, Vec3),
    MoveKinematic(Target, Vec3, Quat, f32),
    Activate(Target),
    Deactivate(Target),
    ActivateInAabb(Vec3, Vec3, u32),
    Get(Target, Query),
    /// Every whole-world reader: `contacts`, `body_ids`, `state_hash`,
    /// `num_bodies`, `num_active_bodies`, `out_of_bounds_bodies`,
    /// `faulted_bodies`, `last_stats`, `settings`, `capacities`,
    /// `check_sleep_invariants`.
    ReadAll,
    /// `set_settings`; with `keep_broad_phase` the world's own broad phase
    /// is put in first (else the kind drawn here, usually refused).
    SetSettings {
        settings: PhysicsSettings,
        keep_broad_phase: bool,
    },
    AddRegion(Vec3, Vec3),
    RemoveRegion(u32),
    UpdateBroadPhase,
    /// `cast_ray`, `cast_ray_all`, a three-ray `cast_rays` batch on the
    /// pool of `POOL_SIZES[pool]` workers, `overlap_aabb` of the box of
    /// half extents `half` about `origin`, and `overlap_point` at
    /// `origin`: the ray answers must agree with each other.
    SceneQuery {
        origin: Vec3,
        direction: Vec3,
        max: f32,
        half: Vec3,
        mask: u32,
        pool: usize,
    },
    /// `update` on the pool of `POOL_SIZES[pool]` workers.
    Update {
        dt: f32,
        steps: u32,
        pool: usize,
    },
    RecordTrace,
    TakeTrace,
    /// `create_joint` between two targets (`None`: the world); the
    /// settings' body fields are filled in from them.
    CreateJoint {
        a: Option<Target>,
        b: Option<Target>,
        settings: JointSettings,
    },
    /// The joint calls name a joint this world issued (by issue order,
    /// wrapped; removed ones stay in the list, so stale ids come up).
    RemoveJoint(u32),
    SetJointMotor(u32, JointMotor),
    SetJointLimits(u32, Option<[f32; 2]>),
    /// Every joint getter: `joint`, `joint_impulse`, `joint_coordinate`,
    /// `num_joints`, `joint_ids`, and `body_joints` of its first body.
    GetJoint(u32),
    /// The hidden panic hook (only in the fuzzer's own self-tests).
    InjectPanic {
        job: &'static str,
        nth: usize,
    },
}

/// Worker counts of the pools updates run on.
pub const POOL_SIZES: [usize; 3] = [1, 2, 4];

/// A world to build and the calls to make on it.
#[derive(Debug, Clone)]
pub struct Case {
    pub capacities: Capacities,
    pub settings: PhysicsSettings,
    /// Replay every call on a second world whose updates run on another
    /// pool size: results and state hashes must stay identical.
    pub shadow: bool,
    pub ops: Vec<Op>,
}

/// Small standard scenes a case may start from (as create calls).
const SCENES: [&str; 6] = [
    "pile_split",
    "tower_split",
    "slide",
    "two_towers",
    "sleep_tower",
    "tower_poke",
];

impl Case {
    /// The case of `seed`: the same seed gives the same case everywhere.
    pub fn generate(seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        // A third of the worlds get only sane values.
        let hostility = rng.pick(&[0.0, 0.0, 0.005, 0.02, 0.1, 0.3]);
        let mut g = Gen { rng, hostility };
        let mut capacities = g.capacities();
        let bp = g.broad_phase();
        let settings = g.settings(bp);
        let shadow = g.rng.chance(0.25);
        let mut ops = Vec::new();
        // A scene's bodies first, sometimes.
        if g.rng.chance(0.15) {
            let scene = scenes::by_name(g.rng.pick(&SCENES)).expect("a known scene");
            if capacities.max_bodies < scene.bodies.len() + 16 && g.rng.chance(0.8) {
                capacities.max_bodies = scene.bodies.len() + 16;
            }
            ops.extend(scene.bodies.iter().map(|&settings| Op::Create {
                settings,
                add: true,
            }));
            if capacities.max_joints < scene.joints.len() && g.rng.chance(0.8) {
                capacities.max_joints = scene.joints.len();
            }
            let side = |k: Option<usize>| k.map(|k| Target::Issued(k as u32));
            ops.extend(scene.joints.iter().map(|j| Op::CreateJoint {
                a: side(j.a),
                b: side(j.b),
                settings: JointSettings::new(None, None, j.frame_a, j.frame_b, j.kind),
            }));
        } else if g.rng.chance(0.7) {
            // a floor
            ops.push(Op::Create {
                settings: scenes::floor(),
                add: true,
            });
        }
        let n = g.rng.pick(&[20, 100, 300, 1000, 2000]);
        for _ in 0..n {
            ops.push(g.op());
        }
        Case {
            capacities,
            settings,
            shadow,
            ops,
        }
    }
}

impl Gen {
    fn target(&mut self) -> Target {
        match self.rng.below(20) {
            0 => Target::Foreign(self.rng.below(8) as u32),
            // world tag 0 is never issued: a forged id names no body
            1 => Target::Forged([self.rng.below(300) as u32, self.rng.below(3) as u32, 0]),
            2..=4 => Target::Latest,
            _ => Target::Issued(self.rng.below(1 << 16) as u32),
        }
    }

    fn force(&mut self) -> Vec3 {
        self.vec3_in(-2000.0, 2000.0)
    }

    /// A joint frame: a sane anchor and an orthonormal axis pair from one
    /// rotation (hostile quaternions make them non-unit or non-finite).
    fn joint_frame(&mut self) -> JointFrame {
        let q = self.quat();
        JointFrame::new(self.vec3_in(-1.0, 1.0), q * Vec3::X, q * Vec3::Y)
    }

    /// Limits in `lo..hi`, sometimes inverted.
    fn limits(&mut self, lo: f32, hi: f32) -> [f32; 2] {
        let (a, b) = (self.f32_in(lo, hi), self.f32_in(lo, hi));
        if self.rng.chance(0.9) {
            [a.min(b), a.max(b)]
        } else {
            [a, b]
        }
    }

    fn spring(&mut self) -> Spring {
        Spring::new(self.f32_in(0.5, 20.0), self.f32_in(0.0, 2.0))
    }

    fn motor(&mut self) -> JointMotor {
        let max = self.f32_in(0.0, 500.0);
        match self.rng.below(3) {
            0 => JointMotor::default(),
            1 => JointMotor::velocity(self.f32_in(-10.0, 10.0), max),
            _ => {
                let target = self.f32_in(-3.0, 3.0);
                JointMotor::position(target, self.spring(), max)
            }
        }
    }

    fn joint_kind(&mut self) -> JointKind {
        let pi = core::f32::consts::PI;
        match self.rng.below(6) {
            0 => JointKind::Fixed,
            1 => JointKind::Point,
            2 => {
                let [min, max] = self.limits(0.0, 2.0);
                let spring = self.rng.chance(0.3).then(|| self.spring());
                JointKind::Distance(DistanceJoint { min, max, spring })
            }
            3 => JointKind::Hinge(HingeJoint {
                limits: self.rng.chance(0.6).then(|| self.limits(-pi, pi)),
                motor: self.motor(),
                max_friction: self.f32_in(0.0, 5.0),
            }),
            4 => JointKind::Slider(SliderJoint {
                limits: self.rng.chance(0.6).then(|| self.limits(-1.0, 1.0)),
                motor: self.motor(),
                max_friction: self.f32_in(0.0, 5.0),
            }),
            _ => JointKind::SwingTwist(SwingTwistJoint {
                swing: self.f32_in(0.0, pi),
                twist: self.limits(-pi, pi),
            }),
        }
    }

    /// A joint between two targets (or a target and the world).
    fn joint(&mut self) -> Op {
        let a = self.rng.chance(0.85).then(|| self.target());
        let b = (a.is_none() || self.rng.chance(0.95)).then(|| self.target());
        let mut settings = JointSettings::new(
            None,
            None,
            self.joint_frame(),
            self.joint_frame(),
            self.joint_kind(),
        );
        settings.collide_connected = self.rng.chance(0.2);
        Op::CreateJoint { a, b, settings }
    }

    /// One random call, weighted roughly by how often engines make it.
    pub fn op(&mut self) -> Op {
        let t = self.target();
        match self.rng.below(110) {
            0..=9 => Op::Create {
                settings: self.body(),
                add: self.rng.chance(0.75),
            },
            10..=12 => Op::Add(t),
            13..=15 => Op::Remove(t),
            16..=19 => Op::Destroy(t),
            20..=22 => Op::SetPosition(t, self.vec3_in(-15.0, 15.0)),
            23..=24 => Op::SetRotation(t, self.quat()),
            25..=27 => Op::SetLinearVelocity(t, self.vec3_in(-15.0, 15.0)),
            28..=29 => Op::SetAngularVelocity(t, self.vec3_in(-10.0, 10.0)),
            30..=31 => Op::AddForce(t, self.force()),
            32 => Op::AddTorque(t, self.force()),
            33..=34 => Op::AddImpulse(t, self.vec3_in(-50.0, 50.0)),
            35 => {
                let point = self.rng.chance(0.7).then(|| self.vec3_in(-15.0, 15.0));
                Op::AddImpulseAt(t, self.vec3_in(-50.0, 50.0), point)
            }
            36 => Op::AddAngularImpulse(t, self.vec3_in(-20.0, 20.0)),
            37..=38 => {
                let dt = self.f32_in(0.005, 0.05);
                Op::MoveKinematic(t, self.vec3_in(-15.0, 15.0), self.quat(), dt)
            }
            39..=40 => Op::Activate(t),
            41..=42 => Op::Deactivate(t),
            43 => {
                let lo = self.vec3_in(-20.0, 5.0);
                let hi = self.vec3_in(-5.0, 20.0);
                Op::ActivateInAabb(lo, hi, self.rng.next_u64() as u32)
            }
            44..=57 => Op::Get(t, self.rng.pick(&QUERIES)),
            58..=61 => Op::ReadAll,
            62..=63 => {
                let bp = self.broad_phase();
                Op::SetSettings {
                    settings: self.settings(bp),
                    keep_broad_phase: self.rng.chance(0.9),
                }
            }
            64 => Op::AddRegion(self.vec3_in(-40.0, 0.0), self.vec3_in(0.0, 40.0)),
            65 => Op::RemoveRegion(self.rng.below(300) as u32),
            66 => Op::UpdateBroadPhase,
            67 => {
                if self.rng.chance(0.5) {
                    Op::RecordTrace
                } else {
                    Op::TakeTrace
                }
            }
            68..=91 => {
                let hostile = self.hostile();
                let dt = if hostile {
                    hostile_f32(&mut self.rng)
                } else {
                    self.rng
                        .pick(&[1.0 / 60.0, 1.0 / 60.0, 1.0 / 120.0, 1.0 / 30.0, 0.004])
                };
                let steps = if self.hostile() {
                    self.rng
                        .pick(&[0, MAX_COLLISION_STEPS, MAX_COLLISION_STEPS + 1, u32::MAX])
                } else {
                    self.rng.pick(&[1, 1, 1, 2, 4])
                };
                Op::Update {
                    dt,
                    steps,
                    pool: self.rng.below(POOL_SIZES.len() as u64) as usize,
                }
            }
            92..=95 => Op::SceneQuery {
                origin: self.vec3_in(-20.0, 20.0),
                direction: if self.rng.chance(0.5) {
                    self.vec3_in(-1.0, 1.0)
                } else {
                    Vec3::new(self.f32_in(-0.3, 0.3), -1.0, self.f32_in(-0.3, 0.3))
                },
                max: self.f32_in(0.0, 60.0),
                half: self.vec3_in(0.0, 5.0),
                mask: if self.rng.chance(0.5) {
                    u32::MAX
                } else {
                    self.rng.next_u64() as u32
                },
                pool: self.rng.below(POOL_SIZES.len() as u64) as usize,
            },
            100..=103 => self.joint(),
            104 => Op::RemoveJoint(self.rng.below(1 << 16) as u32),
            105 => Op::SetJointMotor(self.rng.below(1 << 16) as u32, self.motor()),
            106 => {
                let limits = self.rng.chance(0.8).then(|| self.limits(-3.0, 3.0));
                Op::SetJointLimits(self.rng.below(1 << 16) as u32, limits)
            }
            107..=109 => Op::GetJoint(self.rng.below(1 << 16) as u32),
            _ => Op::Get(t, self.rng.pick(&QUERIES)),
        }
    }
}
