use crate::broadphase::{BroadPhaseKind, LayerFilter};
use crate::error::{PhysicsError, Result};
use crate::limits::{
    MAX_BODIES, MAX_BODY_PAIRS, MAX_CONTACT_CONSTRAINTS, MAX_CONTACT_DISTANCE, MAX_GRAVITY,
    MAX_JOINTS, MAX_SOLVER_ITERATIONS, MAX_SPEED,
};
use crate::math::Vec3;

/// Fixed capacities, chosen at creation. Buffers never grow during a step:
/// when one is full the step drops work and reports it (see
/// [`StepStats`](crate::StepStats)). The defaults are Jolt's PerformanceTest
/// values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capacities {
    /// Bodies that may exist at once (created, added or not), `1..=MAX_BODIES`.
    pub max_bodies: usize,
    /// Candidate pairs from the broad phase per collision step,
    /// `1..=MAX_BODY_PAIRS`. The incremental broad phases keep twice this
    /// many persistent overlaps (also sleeping and static ones).
    pub max_body_pairs: usize,
    /// Contact manifolds (each up to 4 points) per collision step,
    /// `1..=MAX_CONTACT_CONSTRAINTS`.
    pub max_contact_constraints: usize,
    /// Joints that may exist at once, `0..=MAX_JOINTS` (default 4096). Each
    /// costs about 3.9 kB whether used or not (see
    /// [`memory_bytes`](Self::memory_bytes): the type batch's prestep and
    /// position columns, padded for every split, and the joint trees'
    /// factor blocks); a ragdoll has ~10, a chain one per link, the net
    /// scene 2,052.
    pub max_joints: usize,
}

impl Default for Capacities {
    fn default() -> Self {
        Self {
            max_bodies: 10_240,
            max_body_pairs: 65_536,
            max_contact_constraints: 20_480,
            max_joints: 4_096,
        }
    }
}

/// Candidate pairs per body that [`Capacities::for_bodies`] plans for: the
/// 4,096-body avalanche peaked at 5.2 over its first 10 s (bodies landing
/// in a heap), and this is 1.5× that, rounded up.
const PAIRS_PER_BODY: usize = 8;
/// Contact manifolds per body that [`Capacities::for_bodies`] plans for:
/// the same run peaked at 3.05; 1.5× rounded up.
const MANIFOLDS_PER_BODY: usize = 5;

impl Capacities {
    /// Capacities for a world of `bodies` bodies (static ones included)
    /// that fall and pile up, so a user need not guess: room for 8
    /// candidate pairs and 5 contact manifolds per body, 1.5× the high-water
    /// marks of the avalanche scene (boxes, spheres and capsules landing in
    /// a heap: 5.2 and 3.05 per body), and the default 4,096 joints.
    /// Clamped to the limits (`MAX_BODIES`, ...). Denser contact (tight
    /// stacks of small boxes, 4 neighbours each) needs more; `StepStats`
    /// counts what a full buffer drops.
    pub fn for_bodies(bodies: usize) -> Self {
        let bodies = bodies.clamp(1, crate::limits::MAX_BODIES);
        Self {
            max_bodies: bodies,
            max_body_pairs: (bodies * PAIRS_PER_BODY).min(crate::limits::MAX_BODY_PAIRS),
            max_contact_constraints: (bodies * MANIFOLDS_PER_BODY)
                .min(crate::limits::MAX_CONTACT_CONSTRAINTS),
            ..Self::default()
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        // Zero-sized buffers would make every step drop.
        let ok = (1..=MAX_BODIES).contains(&self.max_bodies)
            && (1..=MAX_BODY_PAIRS).contains(&self.max_body_pairs)
            && (1..=MAX_CONTACT_CONSTRAINTS).contains(&self.max_contact_constraints)
            && self.max_joints <= MAX_JOINTS;
        ok.then_some(()).ok_or(PhysicsError::InvalidSettings)
    }

    /// About how many bytes a world of these capacities allocates at
    /// creation, with the default SAP broad phase (MBP and brute force need
    /// less). Nothing grows later but a few scratch lists sized by the
    /// largest step seen. Measured on x86-64 (a test holds the estimate to
    /// within 10% of the allocator's count): ~940 B per body, ~590 B per
    /// body pair (half of it the body-pair cache's last-step slots), ~1.9
    /// kB per contact constraint (most of it the solver's bundles, with
    /// room for every split's padding), ~3.9 kB per joint, plus ~0.26 MB;
    /// the default capacities come to ~107 MB.
    pub fn memory_bytes(&self) -> usize {
        self.max_bodies
            .saturating_mul(BYTES_PER_BODY)
            .saturating_add(self.max_body_pairs.saturating_mul(BYTES_PER_PAIR))
            .saturating_add(
                self.max_contact_constraints
                    .saturating_mul(BYTES_PER_CONTACT),
            )
            .saturating_add(self.max_joints.saturating_mul(BYTES_PER_JOINT))
            .saturating_add(FIXED_BYTES)
    }
}

/// Bytes allocated per unit of each capacity, and independent of them (see
/// [`Capacities::memory_bytes`]).
const BYTES_PER_BODY: usize = 949 + crate::query::QueryTrees::bytes_per_body();
const BYTES_PER_PAIR: usize = 586;
const BYTES_PER_CONTACT: usize = 1649 + crate::events::ContactEvents::bytes_per_contact();
const BYTES_PER_JOINT: usize = 3895;
const FIXED_BYTES: usize = 262_000;

/// How the solver runs a bundle of constraints (see
/// [`PhysicsSettings::solver_width`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SolverWidth {
    /// 16 lanes at once.
    #[default]
    Wide,
    /// One lane after another: the scalar reference.
    Scalar,
}

/// Which instruction set the solver's 16-lane bundles run on (see
/// [`PhysicsSettings::simd`]). Every path gives the same bits: each lane
/// computes the same IEEE-754 operations in the same order and nothing is
/// fused, so a world's `state_hash` does not depend on the CPU's SIMD width
/// or on the flags the crate was built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum SimdPath {
    /// The widest path this CPU has (checked once at run time):
    /// `Avx512`, else `Avx2`, else `Baseline`.
    #[default]
    Auto,
    /// One 512-bit register per bundle operation, AVX-512 gathers and
    /// masked scatters of the bodies (x86-64 with AVX-512F).
    Avx512,
    /// Bundles compiled for AVX2, each solved as two halves of 8 lanes: one
    /// 256-bit register per operation (x86-64 with AVX2).
    Avx2,
    /// Bundles compiled for the build's own target (SSE2 on a default
    /// x86-64 build, NEON on aarch64, whatever `-C target-cpu` allows).
    Baseline,
}

impl SimdPath {
    /// Whether this CPU can run the path (`Auto` and `Baseline` always).
    pub fn is_available(self) -> bool {
        match self {
            Self::Auto | Self::Baseline => true,
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(not(target_arch = "x86_64"))]
            Self::Avx512 | Self::Avx2 => false,
        }
    }

    /// The path a setting runs on this CPU: `Auto` becomes the widest
    /// available one, any other path itself.
    pub fn resolve(self) -> Self {
        match self {
            Self::Auto => [Self::Avx512, Self::Avx2]
                .into_iter()
                .find(|p| p.is_available())
                .unwrap_or(Self::Baseline),
            p => p,
        }
    }

    /// Every path this CPU can run, widest first (`Auto` excluded).
    pub fn available() -> impl Iterator<Item = Self> {
        [Self::Avx512, Self::Avx2, Self::Baseline]
            .into_iter()
            .filter(|p| p.is_available())
    }
}

/// Simulation settings. Defaults follow Jolt's `PhysicsSettings` and
/// `BodyCreationSettings` defaults, which the standard scenes assume.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhysicsSettings {
    /// m/s²; each component at most [`MAX_GRAVITY`](crate::MAX_GRAVITY) in
    /// magnitude.
    pub gravity: Vec3,
    /// Sequential-impulse iterations on velocities per collision step,
    /// `1..=MAX_SOLVER_ITERATIONS`.
    pub velocity_iterations: u32,
    /// Position (Baumgarte) iterations per collision step,
    /// `0..=MAX_SOLVER_ITERATIONS`.
    pub position_iterations: u32,
    /// Fraction of the penetration removed per position iteration, `0..=1`.
    pub baumgarte: f32,
    /// Fraction of a joint's position error (anchor gap, misalignment,
    /// violated hard limit) removed per position iteration, `0..=1`, for
    /// joints solved by iteration (large islands, and joints that close a
    /// loop). Joint trees always remove all of it: their position pass is
    /// a Newton step on the whole tree. Measured on the net scene (2,000
    /// distance joints in loops, 4 t hanging from four corners): 0.2
    /// (Jolt's) stretches it 0.48 m, 0.35 0.46 m, 0.5 and more let cubes
    /// tear through.
    pub joint_baumgarte: f32,
    /// Contacts are created while shapes are up to this far apart (m), so a
    /// body approaching a surface is stopped on time (speculative contacts).
    /// Also the amount active bodies' AABBs are inflated by. This and the
    /// other contact distances below are in `0..=MAX_CONTACT_DISTANCE`.
    pub speculative_contact_distance: f32,
    /// Penetration the position solver leaves alone (m), so resting contacts
    /// stay touching (and warm-started) instead of jittering apart.
    pub penetration_slop: f32,
    /// Largest penetration corrected in one position iteration (m; Jolt:
    /// `mMaxPenetrationDistance`), so deep overlaps separate without
    /// explosive jumps.
    pub max_penetration_distance: f32,
    /// Default damping for bodies that don't set their own (1/s, finite,
    /// `>= 0`).
    pub linear_damping: f32,
    pub angular_damping: f32,
    /// Velocities are clamped to these (m/s, rad/s; `> 0` and at most
    /// [`MAX_SPEED`](crate::MAX_SPEED)) before the solver reads them and
    /// after it, keeping their direction, so a body set to 1e30 m/s moves at
    /// this speed.
    pub max_linear_velocity: f32,
    pub max_angular_velocity: f32,
    /// Restitution is applied only to approach speeds above this (m/s), so
    /// resting contacts don't bounce forever.
    pub min_velocity_for_restitution: f32,
    /// A contact point keeps last step's impulse (warm start) if it moved
    /// less than this (m) in body A's frame.
    pub contact_point_preserve_distance: f32,
    /// ... and if the normal turned less than this (cosine).
    pub contact_normal_preserve_cos: f32,
    /// Body-pair cache (Jolt's `mUseBodyPairContactCache`): a pair of
    /// bodies whose relative pose changed less than both tolerances below
    /// since its shapes were last collided reuses that collision's manifold
    /// (its points moved with the bodies, each separation measured anew)
    /// instead of colliding the shapes again. A settled stack then costs
    /// almost nothing in the narrow phase. The manifold is never more than
    /// the tolerances away from a fresh one: the pose it was found at is
    /// kept, so a pair creeping past them is collided again. Results differ
    /// with the cache on and off (manifolds differ within the tolerances);
    /// each is the same at every thread count.
    /// [`StepStats::body_pair_cache_hits`](crate::StepStats::body_pair_cache_hits)
    /// counts the pairs it served.
    pub use_body_pair_cache: bool,
    /// Largest change of B's centre, seen from A, for a cache hit (m, in
    /// `0..=MAX_CONTACT_DISTANCE`; Jolt: 1 mm).
    pub body_pair_cache_max_delta_position: f32,
    /// Largest change of B's rotation, seen from A, for a cache hit (radians,
    /// `0..=π`; Jolt: 2°).
    pub body_pair_cache_max_delta_rotation: f32,
    /// Broad phase, fixed at creation ([`set_settings`](crate::PhysicsSystem::set_settings)
    /// refuses to change it).
    pub broad_phase: BroadPhaseKind,
    /// Which object layers collide.
    pub layer_filter: LayerFilter,
    /// Global switch: no island ever sleeps when false.
    pub allow_sleeping: bool,
    /// How the velocity solve runs a bundle of 16 constraints that share no
    /// dynamic body: all lanes at once (SIMD) or lane by lane. Both give
    /// bit-identical results; `Scalar` is the reference, and the switch lets
    /// one binary compare them.
    pub solver_width: SolverWidth,
    /// Which instruction set `Wide` bundles run on. `Auto` (the default)
    /// picks the widest the CPU has at run time, so a crate built without
    /// `-C target-cpu=native` still gets AVX-512 or AVX2 in the solver; a
    /// fixed path lets one binary compare them. A path the CPU lacks is
    /// refused (`InvalidSettings`). All paths give the same bits;
    /// [`PhysicsSystem::simd_path`](crate::PhysicsSystem::simd_path) says
    /// which one runs.
    pub simd: SimdPath,
    /// Split islands of at least 128 constraints so several workers can
    /// solve one island (Jolt's `LargeIslandSplitter`). Results differ
    /// with it on and off (constraints are solved in another order), but
    /// each is the same at every thread count.
    pub use_large_island_splitter: bool,
    /// A body must be still this long (s) before its island may sleep.
    pub time_before_sleep: f32,
    /// "Still" means each of the body's three sleep test points stayed
    /// within a sphere of radius `point_velocity_sleep_threshold ×
    /// time_before_sleep` (m/s × s).
    pub point_velocity_sleep_threshold: f32,
    /// The moving bodies' query tree is refitted every step and rebuilt
    /// when its surface-area cost (what a ray pays in box tests) exceeds
    /// this factor of its cost when built; `>= 1`. Lower rebuilds more
    /// often (a rebuild of 4,096 bodies costs about as much as 10 refits),
    /// higher lets rays slow down as bodies scatter.
    pub query_tree_rebuild_factor: f32,
    /// A [`LinearCast`](crate::MotionQuality::LinearCast) body is swept
    /// in a step where it moves more than this fraction of its inner
    /// radius (the radius of a sphere, capsule or hull's nearest face from
    /// its centre of mass, a box's smallest half extent); slower, the
    /// discrete contacts cannot miss a wall. In `0..=10`; Jolt: 0.75.
    pub linear_cast_threshold: f32,
    /// How deep (a fraction of its inner radius) a swept body may sink
    /// into what it hits: it stops where it would sink this far, so the
    /// next step's contact has a little penetration to push out, and a hit
    /// the step's whole motion would sink it less than this into is left
    /// to the discrete contacts (a fast body grazing the floor is not
    /// stopped by it). In `0..=1`; Jolt: 0.25.
    pub linear_cast_max_penetration: f32,
}

impl Default for PhysicsSettings {
    fn default() -> Self {
        Self {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            velocity_iterations: 10,
            position_iterations: 2,
            baumgarte: 0.2,
            joint_baumgarte: 0.35,
            speculative_contact_distance: 0.02,
            penetration_slop: 0.02,
            max_penetration_distance: 0.2,
            linear_damping: 0.05,
            angular_damping: 0.05,
            max_linear_velocity: 500.0,
            max_angular_velocity: 0.25 * core::f32::consts::PI * 60.0,
            min_velocity_for_restitution: 1.0,
            contact_point_preserve_distance: 0.01,
            // cos(5°), Jolt's mBodyPairCacheCosMaxDeltaRotation
            contact_normal_preserve_cos: 0.996_194_7,
            use_body_pair_cache: true,
            body_pair_cache_max_delta_position: 0.001,
            body_pair_cache_max_delta_rotation: 2.0 * core::f32::consts::PI / 180.0,
            broad_phase: BroadPhaseKind::default(),
            layer_filter: LayerFilter::default(),
            allow_sleeping: true,
            solver_width: SolverWidth::Wide,
            simd: SimdPath::Auto,
            use_large_island_splitter: true,
            time_before_sleep: 0.5,
            point_velocity_sleep_threshold: 0.03,
            query_tree_rebuild_factor: 1.5,
            linear_cast_threshold: 0.75,
            linear_cast_max_penetration: 0.25,
        }
    }
}

impl PhysicsSettings {
    /// The body-pair cache's thresholds while it is on.
    pub(crate) fn pair_cache(&self) -> Option<crate::body_pair_cache::PairCacheTolerance> {
        self.use_body_pair_cache.then(|| {
            crate::body_pair_cache::PairCacheTolerance::new(
                self.body_pair_cache_max_delta_position,
                self.body_pair_cache_max_delta_rotation,
            )
        })
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let finite_nonneg = |v: f32| v.is_finite() && v >= 0.0;
        let distance = |v: f32| (0.0..=MAX_CONTACT_DISTANCE).contains(&v);
        let speed = |v: f32| v > 0.0 && v <= MAX_SPEED;
        let ok = self.gravity.is_finite()
            && self.gravity.abs().max_element() <= MAX_GRAVITY
            && (1..=MAX_SOLVER_ITERATIONS).contains(&self.velocity_iterations)
            && self.position_iterations <= MAX_SOLVER_ITERATIONS
            && (0.0..=1.0).contains(&self.baumgarte)
            && (0.0..=1.0).contains(&self.joint_baumgarte)
            && distance(self.speculative_contact_distance)
            && distance(self.penetration_slop)
            && distance(self.max_penetration_distance)
            && finite_nonneg(self.linear_damping)
            && finite_nonneg(self.angular_damping)
            && speed(self.max_linear_velocity)
            && speed(self.max_angular_velocity)
            && finite_nonneg(self.min_velocity_for_restitution)
            && distance(self.contact_point_preserve_distance)
            && (-1.0..=1.0).contains(&self.contact_normal_preserve_cos)
            && distance(self.body_pair_cache_max_delta_position)
            && (0.0..=core::f32::consts::PI).contains(&self.body_pair_cache_max_delta_rotation)
            && finite_nonneg(self.time_before_sleep)
            && finite_nonneg(self.point_velocity_sleep_threshold)
            && self.query_tree_rebuild_factor.is_finite()
            && self.query_tree_rebuild_factor >= 1.0
            && (0.0..=10.0).contains(&self.linear_cast_threshold)
            && (0.0..=1.0).contains(&self.linear_cast_max_penetration)
            && self.simd.is_available();
        ok.then_some(()).ok_or(PhysicsError::InvalidSettings)
    }
}
