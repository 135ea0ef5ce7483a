//! # archipelago
//!
//! A data-oriented rigid-body physics kernel. Bodies live in cache-line
//! aligned structure-of-arrays columns; a step runs named phases (see
//! [`pipeline`](crate::PhysicsSystem::update)): forces, broad phase, narrow
//! phase, solver setup, velocity solve, integration, position solve.
//! Contacts and joints ([`JointSettings`]: fixed, point, distance, hinge,
//! slider, swing-twist) are solved together, 16 lanes wide.
//!
//! ```
//! use archipelago::{BodyCreationSettings, Capacities, MotionType, PhysicsSettings, PhysicsSystem, Shape, Vec3};
//! let pool = archipelago::build_pinned_pool(Some(2)).unwrap().pool;
//! let mut world = PhysicsSystem::new(Capacities::default(), PhysicsSettings::default()).unwrap();
//! let floor = Shape::cuboid(Vec3::new(50.0, 1.0, 50.0)).unwrap();
//! world.create_and_add_body(&BodyCreationSettings::new(floor, Vec3::new(0.0, -1.0, 0.0), MotionType::Static)).unwrap();
//! let ball = world
//!     .create_and_add_body(&BodyCreationSettings::new(Shape::sphere(0.5).unwrap(), Vec3::new(0.0, 2.0, 0.0), MotionType::Dynamic))
//!     .unwrap();
//! for _ in 0..120 {
//!     world.update(1.0 / 60.0, 1, &pool).unwrap();
//! }
//! assert!((world.position(ball).unwrap().y - 0.5).abs() < 0.03);
//! ```

mod body;
mod body_pair_cache;
mod broadphase;
mod bulk;
mod ccd;
mod collide;
mod compound;
mod contact_cache;
mod debug_draw;
mod disjoint;
mod error;
mod events;
mod executor;
mod heightfield;
mod hull;
mod hull_shape;
mod integrate;
mod islands;
mod jobs;
mod joint;
mod limits;
mod math;
mod mesh;
mod narrowphase;
mod pipeline;
mod quarantine;
mod query;
pub mod scenes;
mod settings;
mod shape;
mod shape_store;
mod sleep;
mod snapshot;
mod solver;
mod solver_view;
mod stats;
mod system;
#[cfg(test)]
mod test_rng;
mod thread_pool;
mod trace;

pub use body::{
    BodyCreationSettings, BodyId, MassSpec, MotionQuality, MotionType, MAX_OBJECT_LAYERS,
    ROTATION_NORM_TOLERANCE,
};
pub use broadphase::auto::{MBP_FROM_MOVING, SAP_BELOW_MOVING};
pub use broadphase::mbp::{MbpSettings, MAX_REGIONS};
pub use broadphase::{BroadPhaseKind, LayerFilter};
pub use bulk::{KinematicTarget, Pose};
pub use compound::{CompoundChild, CompoundError, CompoundShape, MAX_COMPOUND_CHILDREN};
pub use debug_draw::{Colour, DebugColouring, DebugDrawSettings, DebugSink};
pub use error::{PhysicsError, Result};
pub use events::{ContactEvent, ContactEventKind, RemovalReason};
pub use executor::{Executor, SerialExecutor};
pub use heightfield::{
    HeightField, HeightFieldError, BLOCK as HEIGHTFIELD_BLOCK, MAX_HEIGHTFIELD_SAMPLES,
};
pub use hull::{
    ConvexHull, HullError, HullFace, HullMassProperties, MAX_HULL_VERTICES, WELD_DISTANCE,
};
pub use hull_shape::{HullId, HullShape, HullStore, MAX_HULLS};
pub use joint::{
    DistanceJoint, HingeJoint, JointFrame, JointId, JointImpulse, JointKind, JointMotor,
    JointSettings, MotorMode, SliderJoint, Spring, SwingTwistJoint, JOINT_AXIS_TOLERANCE,
    MAX_SPRING_DAMPING, MAX_SPRING_FREQUENCY,
};
pub use limits::{
    MAX_BODIES, MAX_BODY_PAIRS, MAX_COLLISION_STEPS, MAX_CONTACT_CONSTRAINTS, MAX_CONTACT_DISTANCE,
    MAX_COORDINATE, MAX_FRICTION, MAX_GRAVITY, MAX_GRAVITY_FACTOR, MAX_JOINTS, MAX_MASS,
    MAX_SHAPE_SIZE, MAX_SOLVER_ITERATIONS, MAX_SPEED, MAX_TIME_STEP, MIN_MASS, MIN_SHAPE_SIZE,
    MIN_TIME_STEP,
};
pub use math::{Mat3, Quat, Vec3};
pub use mesh::{MeshError, TriangleMesh, ACTIVE_EDGE_COS, MAX_MESH_TRIANGLES};
/// The pool type `update` runs on.
pub use query::{QueryFilter, Ray, RayHit, ShapeCastHit};
pub use rayon::ThreadPool;
pub use settings::{Capacities, PhysicsSettings, SimdPath, SolverWidth};
pub use shape::Shape;
pub use shape_store::{CompoundId, HeightFieldId, MeshId, ShapeStore, MAX_SURFACES};
pub use snapshot::{SNAPSHOT_MAGIC, SNAPSHOT_VERSION};
pub use solver_view::SolverConstraint;
pub use stats::{PhaseTimes, StepStats, UpdateWarnings};
pub use system::{Contact, ContactPoint, PhysicsSystem};
pub use thread_pool::{build_pinned_pool, detect_cores, CoreTopology, PinnedPool, Pinning};
pub use trace::{
    Migration, Replay, ReplayCosts, SectionKind, SectionReplay, SliceKind, StepTrace, TraceEvent,
    WorkSpan,
};
