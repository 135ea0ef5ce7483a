//! The scene in Rapier 0.36.1 (`parallel` feature), stepped inside a rayon
//! pool of the run's thread count. Choices are listed in `main.rs`.

use crate::Peer;
use archipelago::{
    scenes, HeightField, HullShape, JointFrame, JointKind, MassSpec, Mat3, MotionType,
    PhysicsSettings, Shape, ThreadPool, TriangleMesh,
};
use rapier3d::prelude::*;

pub struct Rapier {
    world: PhysicsWorld,
    handles: Vec<RigidBodyHandle>,
    pool: &'static ThreadPool,
    /// The scene's late bodies: created disabled, enabled before this
    /// step (as archipelago adds them).
    late: Option<scenes::LateBodies>,
}

/// The world default of archipelago (and Jolt) where a body sets none.
const DEFAULT_DAMPING: f32 = 0.05;

impl Rapier {
    pub fn new(scene: &scenes::Scene, pool: &'static ThreadPool) -> Self {
        let mut world = PhysicsWorld::new();
        world.gravity = Vector::new(0.0, -9.81, 0.0);
        world.integration_parameters.dt = scenes::DT;
        let mut handles = Vec::with_capacity(scene.bodies.len());
        // the scene's world, built once if it has compounds (their
        // children in the principal frame come from there)
        let mut built: Option<archipelago::PhysicsSystem> = None;
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
                .enabled(scene.late.is_none_or(|l| handles.len() < l.first))
                .build();
            let h = world.bodies.insert(body);
            let collider = match b.shape {
                Shape::Sphere { .. } | Shape::Box { .. } | Shape::Capsule { .. } => {
                    ColliderBuilder::new(convex(b.shape, scene))
                }
                Shape::Hull(_) => ColliderBuilder::new(convex(b.shape, scene)),
                Shape::Compound(id) => {
                    // the children as archipelago keeps them: in the
                    // compound's principal frame (the body's)
                    let built = built.get_or_insert_with(|| {
                        scene
                            .build(PhysicsSettings::default())
                            .expect("the scene")
                            .0
                    });
                    let c = built.shapes().compound(id).expect("a compound");
                    let children = c
                        .children()
                        .iter()
                        .map(|k| {
                            let (axis, angle) = k.rotation.to_axis_angle();
                            let turn = axis * angle;
                            let pose = Pose::new(
                                Vector::new(k.position.x, k.position.y, k.position.z),
                                AngVector::new(turn.x, turn.y, turn.z),
                            );
                            (pose, convex(k.shape, scene))
                        })
                        .collect();
                    ColliderBuilder::compound(children)
                }
                Shape::Mesh(id) => {
                    let m = &scene.shapes.meshes[id.index() as usize];
                    let (vertices, indices) = mesh_buffers(m);
                    ColliderBuilder::trimesh_with_flags(
                        vertices,
                        indices,
                        TriMeshFlags::FIX_INTERNAL_EDGES,
                    )
                    .expect("a mesh")
                }
                Shape::HeightField(id) => {
                    heightfield(&scene.shapes.heightfields[id.index() as usize])
                }
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
        add_joints(&mut world, scene, &handles);
        Self {
            world,
            handles,
            pool,
            late: scene.late,
        }
    }
}

/// A convex shape (a compound's child, or a body's own) as Rapier's.
fn convex(shape: Shape, scene: &scenes::Scene) -> SharedShape {
    match shape {
        Shape::Sphere { radius } => SharedShape::ball(radius),
        Shape::Box { half_extents: e } => SharedShape::cuboid(e.x, e.y, e.z),
        Shape::Capsule {
            half_height,
            radius,
        } => SharedShape::capsule_y(half_height, radius),
        Shape::Hull(id) => {
            // the hull as archipelago keeps it: in its principal frame
            // (centre of mass at the body's position)
            let hull = HullShape::new(&scene.shapes.hulls[id.index() as usize]);
            let points: Vec<Vector> = hull
                .vertices()
                .iter()
                .map(|v| Vector::new(v.x, v.y, v.z))
                .collect();
            SharedShape::convex_hull(&points).expect("a hull")
        }
        _ => unreachable!("not a convex shape: {shape:?}"),
    }
}

/// A mesh's vertices and kept triangles as Rapier's buffers.
fn mesh_buffers(m: &TriangleMesh) -> (Vec<Vector>, Vec<[u32; 3]>) {
    let mut vertices = Vec::with_capacity(3 * m.num_triangles());
    let mut indices = Vec::with_capacity(m.num_triangles());
    for k in 0..m.num_triangles() {
        let (c, _) = m.triangle(k);
        let first = vertices.len() as u32;
        vertices.extend(c.iter().map(|v| Vector::new(v.x, v.y, v.z)));
        indices.push([first, first + 1, first + 2]);
    }
    (vertices, indices)
}

/// The same surface as Rapier's height field: its grid is centred as
/// archipelago's and spans `scale`; its heights are column-major with
/// rows along z; every cell split along the same diagonal (parry's
/// "zigzag" cells: (i, j)–(i+1, j+1)), internal edges fixed (parry's
/// counterpart of active edges).
fn heightfield(f: &HeightField) -> ColliderBuilder {
    let (nx, nz) = f.samples();
    let (sx, sz) = f.cell_size();
    let mut data = vec![0.0; nx * nz];
    for iz in 0..nz {
        for ix in 0..nx {
            data[iz + ix * nz] = f.height(ix, iz);
        }
    }
    let scale = Vector::new((nx - 1) as f32 * sx, 1.0, (nz - 1) as f32 * sz);
    let mut field = rapier3d::parry::shape::HeightField::with_flags(
        Array2::new(nz, nx, data),
        scale,
        HeightFieldFlags::FIX_INTERNAL_EDGES,
    );
    for i in 0..nz - 1 {
        for j in 0..nx - 1 {
            field.set_cell_status(i, j, HeightFieldCellStatus::ZIGZAG_SUBDIVISION);
        }
    }
    ColliderBuilder::new(SharedShape::new(field))
}

/// A joint frame as a Rapier pose: its x axis the joint's axis, y the
/// normal (Rapier's joints act about and along their frames' x axes).
fn pose(f: &JointFrame) -> Pose {
    let (x, y) = (f.axis, f.normal);
    let q = archipelago::Quat::from_mat3(&Mat3::from_cols(x, y, x.cross(y)));
    Pose::from_parts(
        Vector::new(f.anchor.x, f.anchor.y, f.anchor.z),
        Rotation::from_xyzw(q.x, q.y, q.z, q.w),
    )
}

/// The scene's joints as Rapier impulse joints (contacts between jointed
/// bodies off, as archipelago's `collide_connected = false`). The world
/// side is one fixed body at the origin. Mapping: fixed, point (spherical),
/// hinge (revolute, AngX limits), slider (prismatic, LinX limits) as the
/// same constraints; swing-twist as a spherical joint whose AngY and AngZ
/// are coupled into a cone about x (Rapier's `limit_angular_coupled`) with
/// AngX limited to the twist; a rigid distance joint as Rapier's only
/// distance joint, the rope (coupled linear axes limited to [0, max]: its
/// minimum is not enforced, "FIXME: handle min limit too" in
/// `joint_constraint_helper.rs`), which under tension (the net) is the
/// same constraint. Motors and springs, which no standard scene uses, are
/// not mapped (the scene is refused).
fn add_joints(world: &mut PhysicsWorld, scene: &scenes::Scene, handles: &[RigidBodyHandle]) {
    if scene.joints.is_empty() {
        return;
    }
    let ground = world.bodies.insert(RigidBodyBuilder::fixed().build());
    let side = |k: Option<usize>| k.map_or(ground, |k| handles[k]);
    for j in &scene.joints {
        let locked = match j.kind {
            JointKind::Fixed => JointAxesMask::LOCKED_FIXED_AXES,
            JointKind::Point | JointKind::SwingTwist(_) => JointAxesMask::LOCKED_SPHERICAL_AXES,
            JointKind::Hinge(_) => JointAxesMask::LOCKED_REVOLUTE_AXES,
            JointKind::Slider(_) => JointAxesMask::LOCKED_PRISMATIC_AXES,
            JointKind::Distance(_) => JointAxesMask::empty(),
        };
        let mut b = GenericJointBuilder::new(locked)
            .local_frame1(pose(&j.frame_a))
            .local_frame2(pose(&j.frame_b))
            .contacts_enabled(false);
        let unmapped = |what: &str| panic!("{}: {what} has no Rapier mapping here", scene.name);
        match j.kind {
            JointKind::Fixed | JointKind::Point => {}
            JointKind::Hinge(h) => {
                if h.motor != archipelago::JointMotor::default() || h.max_friction > 0.0 {
                    unmapped("a hinge motor or friction");
                }
                if let Some(l) = h.limits {
                    b = b.limits(JointAxis::AngX, l);
                }
            }
            JointKind::Slider(s) => {
                if s.motor != archipelago::JointMotor::default() || s.max_friction > 0.0 {
                    unmapped("a slider motor or friction");
                }
                if let Some(l) = s.limits {
                    b = b.limits(JointAxis::LinX, l);
                }
            }
            JointKind::SwingTwist(st) => {
                b = b
                    .coupled_axes(JointAxesMask::ANG_Y | JointAxesMask::ANG_Z)
                    .limits(JointAxis::AngY, [0.0, st.swing])
                    .limits(JointAxis::AngX, st.twist);
            }
            JointKind::Distance(d) => {
                if d.spring.is_some() || d.min != d.max {
                    unmapped("a soft or ranged distance joint");
                }
                b = b
                    .coupled_axes(JointAxesMask::LIN_AXES)
                    .limits(JointAxis::LinX, [0.0, d.max]);
            }
        }
        world
            .impulse_joints
            .insert(side(j.a), side(j.b), b.build(), true);
    }
}

impl Peer for Rapier {
    fn before_step(&mut self, steps_done: u32) {
        let Some(late) = self.late.filter(|l| l.step == steps_done) else {
            return;
        };
        for &h in &self.handles[late.first..] {
            self.world.bodies[h].set_enabled(true);
        }
    }

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
