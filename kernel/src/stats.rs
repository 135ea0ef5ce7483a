//! What a step reports: per-phase times, counts, drops and warnings
//! ([`StepStats`]), filled in by `pipeline.rs`.

use crate::thread_pool::Pinning;
use std::time::Duration;

/// Problems a step worked around (Jolt's `EPhysicsUpdateError`): the step
/// still completed, but dropped work.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct UpdateWarnings(u8);

impl UpdateWarnings {
    /// More candidate pairs than `max_body_pairs`: the extra pairs (highest
    /// body indices) got no contacts this step.
    pub const BODY_PAIRS_FULL: Self = Self(1);
    /// More touching manifolds than `max_contact_constraints`: the
    /// shallowest were dropped.
    pub const CONTACT_CONSTRAINTS_FULL: Self = Self(2);
    /// A body's state became non-finite and the body was taken out of the
    /// simulation (see [`StepStats::bodies_faulted`]).
    pub const BODIES_FAULTED: Self = Self(4);
    /// Some contact events did not fit (`contact_events_dropped`).
    pub const CONTACT_EVENTS_FULL: Self = Self(8);

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
    pub(crate) fn insert(&mut self, other: Self) {
        self.0 |= other.0;
    }
}

/// Wall-clock time of each phase, summed over the collision steps.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct PhaseTimes {
    /// Pair search plus waking sleeping islands touched by awake bodies.
    pub broad_phase: Duration,
    pub apply_forces: Duration,
    pub narrow_phase: Duration,
    pub islands: Duration,
    /// Large-island splitting and the solver's constraint order and
    /// schedules.
    pub split: Duration,
    pub setup: Duration,
    pub velocity_solve: Duration,
    pub integrate: Duration,
    pub position_solve: Duration,
    pub sleep: Duration,
    pub update_bounds: Duration,
    /// Refit (or rebuild) of the scene-query trees.
    pub query_tree: Duration,
}

impl PhaseTimes {
    /// `(name, time)` of every phase, in step order.
    pub fn named(&self) -> [(&'static str, Duration); 12] {
        [
            ("broad_phase", self.broad_phase),
            ("apply_forces", self.apply_forces),
            ("narrow_phase", self.narrow_phase),
            ("islands", self.islands),
            ("split", self.split),
            ("setup", self.setup),
            ("velocity_solve", self.velocity_solve),
            ("integrate", self.integrate),
            ("position_solve", self.position_solve),
            ("sleep", self.sleep),
            ("update_bounds", self.update_bounds),
            ("query_tree", self.query_tree),
        ]
    }

    /// Adds another step's times.
    pub fn accumulate(&mut self, other: &PhaseTimes) {
        self.broad_phase += other.broad_phase;
        self.apply_forces += other.apply_forces;
        self.narrow_phase += other.narrow_phase;
        self.islands += other.islands;
        self.split += other.split;
        self.setup += other.setup;
        self.velocity_solve += other.velocity_solve;
        self.integrate += other.integrate;
        self.position_solve += other.position_solve;
        self.sleep += other.sleep;
        self.update_bounds += other.update_bounds;
        self.query_tree += other.query_tree;
    }
}

/// What one `update` did. Counts are those of the last collision step (and
/// of the world after it); times, drops and sleep transitions are summed
/// over all of them.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct StepStats {
    pub times: PhaseTimes,
    pub total: Duration,
    /// Awake non-static bodies after the step.
    pub active_bodies: u32,
    /// Awake islands this step.
    pub islands: u32,
    /// Sleeping islands after the step.
    pub sleeping_islands: u32,
    pub bodies_put_to_sleep: u32,
    /// Bodies woken during the step by awake bodies touching them (calls
    /// such as `add_impulse` wake bodies between steps and are not counted).
    pub bodies_woken: u32,
    pub body_pairs: u32,
    /// Touching manifolds (including sensor ones).
    pub manifolds: u32,
    pub contact_points: u32,
    /// Candidate pairs whose manifold the body-pair cache rebuilt
    /// ([`PhysicsSettings::use_body_pair_cache`](crate::PhysicsSettings::use_body_pair_cache)),
    /// and pairs whose shapes were collided; summed over collision steps.
    pub body_pair_cache_hits: u32,
    pub body_pair_cache_misses: u32,
    /// Candidate pairs whose bounding spheres were farther apart than the
    /// speculative contact distance: neither collided nor looked up (their
    /// bounding boxes overlap, which rotated boxes' do from afar). With the
    /// two above, the pairs the narrow phase saw.
    pub body_pairs_apart_by_bounds: u32,
    /// Candidate pairs a joint keeps from colliding (its
    /// `collide_connected` is off); summed over collision steps.
    pub body_pairs_jointed: u32,
    /// [`LinearCast`](crate::MotionQuality::LinearCast) bodies swept
    /// (they moved past the cast threshold), and of those the ones a hit
    /// stopped short; summed over collision steps.
    pub linear_casts: u32,
    pub linear_cast_hits: u32,
    /// Joints solved in the last collision step (both sides in the
    /// simulation, one an awake dynamic body).
    pub active_joints: u32,
    /// Of those, the joints whose point, rotation and 2×2 rows a joint
    /// tree solved exactly (small islands whose joints form a tree; the
    /// others iterate, as contacts do).
    pub joints_in_trees: u32,
    /// Whether that step's joint trees kept the previous step's structure
    /// (the same tree joints, bodies and packs: only their factorization
    /// was redone) instead of building it again (a joint, a body's motion
    /// type or an island's members changed).
    pub joint_trees_reused: bool,
    /// Points that started from last step's impulses.
    pub warm_started_points: u32,
    /// Manifolds involving a sensor (reported, not solved).
    pub sensor_manifolds: u32,
    /// Contact events of this update (`contact_events()`), and those that
    /// did not fit (never expected: see `events.rs`).
    pub contact_events: u32,
    pub contact_events_dropped: u32,
    /// Pairs that did not fit (`max_body_pairs`; for SAP and MBP also their
    /// persistent pair sets, twice that size, which then rebuild).
    pub body_pairs_dropped: u32,
    pub manifolds_dropped: u32,
    /// Overlaps the incremental broad phase (SAP) started and ended (net,
    /// per update).
    pub pairs_created: u32,
    pub pairs_deleted: u32,
    /// Bodies whose pose or velocity became non-finite in the step (a bug,
    /// or memory written behind the kernel's back: no accepted input can
    /// cause it). Each was stopped at its last finite pose with zero
    /// velocity and taken out of the simulation before it could spread NaN
    /// to the bodies it touches; [`PhysicsSystem::faulted_bodies`] lists
    /// them and they can be added again.
    pub bodies_faulted: u32,
    /// Bodies outside every MBP region (see
    /// [`PhysicsSystem::out_of_bounds_bodies`](crate::PhysicsSystem::out_of_bounds_bodies)).
    pub out_of_bounds: u32,
    pub warnings: UpdateWarnings,
    /// Workers in the pool the step ran on.
    pub threads: u32,
    /// How the workers that ran the step were tied to cores.
    pub pinning: Pinning,
    /// Islands big enough to split (last collision step).
    pub large_islands: u32,
    /// Non-empty splits over all large islands (last collision step).
    pub splits: u32,
    /// Constraints per split, summed over the large islands; index 31 is
    /// the non-parallel split (last collision step).
    pub split_items: [u32; crate::solver::splitter::NUM_SPLITS],
    /// Constraints (contacts and joints) solved 16 lanes wide (bundles of a
    /// parallel split or of a small-island pack's colour; last collision
    /// step).
    pub constraints_wide: u32,
    /// Constraints (contacts and joints) solved one lane at a time
    /// (non-parallel split, overflow colours; last collision step).
    pub constraints_scalar: u32,
}

impl StepStats {
    /// Awake plus sleeping islands.
    pub fn total_islands(&self) -> u32 {
        self.islands + self.sleeping_islands
    }
}
