//! The scene in Rapier 0.36.1 (`parallel` feature), stepped inside a rayon
//! pool of the run's thread count. Choices are listed in `main.rs`.

use crate::Peer;
use archipelago::{scenes, MassSpec, MotionType, Shape, ThreadPool};
use rapier3d::prelude::*;

pub struct Rapier {
    world: PhysicsWorld,
    handles: Vec<RigidBodyHandle>,
    pool: &'static ThreadPool,
}

/// The world default of archipelago (and Jolt) where a body sets none.
const DEFAULT_DAMPING: f32 = 0.05;

impl Rapier {
    pub fn new(scene: &scenes::Scene, pool: &'static ThreadPool) -> Self {
        let mut world = PhysicsWorld::new();
        world.gravity = Vector::new(0.0, -9.81, 0.0);
        world.integration_parameters.dt = scenes::DT;
        let mut handles = Vec::with_capacity(scene.bodies.len());
        for b in &scene.bodies {
            let builder = match b.motion_type {
                MotionType::Dynamic => RigidBodyBuilder::dynamic(),
                MotionType::Kinematic => RigidBodyBuilder::kinematic_velocity_based(),
                MotionType::Static => RigidBodyBuilder::fixed(),
            };
            let (axis, angle) = b.rotation.to_axis_angle();
            let scaled = axis * angle;
            let body = builder
                .translation(Vector::new(b.position.x, b.position.y, b.position.z))
                .rotation(AngVector::new(scaled.x, scaled.y, scaled.z))
                .linvel(Vector::new(
                    b.linear_velocity.x,
                    b.linear_velocity.y,
                    b.linear_velocity.z,
                ))
                .angvel(AngVector::new(
                    b.angular_velocity.x,
                    b.angular_velocity.y,
                    b.angular_velocity.z,
                ))
                .linear_damping(b.linear_damping.unwrap_or(DEFAULT_DAMPING))
                .angular_damping(b.angular_damping.unwrap_or(DEFAULT_DAMPING))
                .gravity_scale(b.gravity_factor)
                .can_sleep(b.allow_sleeping)
                .build();
            let h = world.bodies.insert(body);
            let collider = match b.shape {
                Shape::Sphere { radius } => ColliderBuilder::ball(radius),
                Shape::Box { half_extents: e } => ColliderBuilder::cuboid(e.x, e.y, e.z),
                Shape::Capsule {
                    half_height,
                    radius,
                } => ColliderBuilder::capsule_y(half_height, radius),
            };
            let collider = match b.mass {
                MassSpec::Density(d) => collider.density(d),
                MassSpec::Mass(m) => collider.mass(m),
            }
            .friction(b.friction)
            .restitution(b.restitution)
            .sensor(b.is_sensor)
            .build();
            world
                .colliders
                .insert_with_parent(collider, h, &mut world.bodies);
            handles.push(h);
        }
        Self {
            world,
            handles,
            pool,
        }
    }
}

impl Peer for Rapier {
    fn step(&mut self) {
        let world = &mut self.world;
        self.pool.install(|| world.step());
    }

    fn poses(&self) -> Vec<([f32; 3], [f32; 4])> {
        self.handles
            .iter()
            .map(|&h| {
                let b = &self.world.bodies[h];
                let p = b.translation();
                let q = b.rotation();
                ([p.x, p.y, p.z], [q.x, q.y, q.z, q.w])
            })
            .collect()
    }
}
