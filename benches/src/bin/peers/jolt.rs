//! The scene in Jolt Physics 5.0.0 through joltc-sys 0.3.1 (JoltC), set up
//! as Jolt's own PerformanceTest does: capacities 10240 / 65536 / 20480,
//! default physics settings, two object layers (moving, non-moving), bodies
//! created in scene order (so body ids follow it), `OptimizeBroadPhase`
//! before the first step, and a `JobSystemThreadPool` of N−1 workers (the
//! calling thread is the N-th).
//!
//! Shapes: boxes without convex radius (as PerformanceTest's, and as
//! archipelago's sharp boxes); spheres and capsules as they are; hulls from
//! the vertices archipelago keeps (its principal frame) with Jolt's default
//! convex radius (0.05 m, Jolt's fast GJK path: the corners round by less
//! than that); compounds as `StaticCompoundShape`s of those children, in the
//! compound's principal frame as archipelago holds it; triangle meshes as
//! `MeshShape` (vertices welded where they are equal, so Jolt's active
//! edges see the shared edges) and height fields as `HeightFieldShape`
//! (Jolt's defaults: 2 × 2 blocks, 8 bits per sample; a grid that is not
//! square is padded with holes). JoltC wraps neither of the last two:
//! `jolt_surfaces.cpp` builds them against the same Jolt.
//!
//! Everything here is FFI: each `unsafe` block calls JoltC with pointers
//! this struct created and owns until `Drop`.

use crate::Peer;
use archipelago::{
    scenes, CompoundChild, HeightField, HullShape, MassSpec, MotionType, Shape, TriangleMesh,
};
use joltc_sys::*;
use std::collections::HashMap;
use std::ffi::{c_uint, c_void};
use std::ptr;
use std::sync::Once;

// `jolt_surfaces.cpp` (compiled by build.rs): Jolt's height field and mesh
// shapes, or null where Jolt refuses them or the file's defines differ
// from the library's.
unsafe extern "C" {
    fn arch_jolt_abi_matches() -> bool;
    fn arch_jolt_height_field(
        samples: *const f32,
        n: u32,
        offset_x: f32,
        offset_y: f32,
        offset_z: f32,
        scale_x: f32,
        scale_y: f32,
        scale_z: f32,
    ) -> *const c_void;
    fn arch_jolt_mesh(
        vertices: *const f32,
        vertex_count: u32,
        triangles: *const u32,
        triangle_count: u32,
    ) -> *const c_void;
}

const OL_NON_MOVING: JPC_ObjectLayer = 0;
const OL_MOVING: JPC_ObjectLayer = 1;
const BPL_NON_MOVING: JPC_BroadPhaseLayer = 0;
const BPL_MOVING: JPC_BroadPhaseLayer = 1;
const BPL_COUNT: JPC_BroadPhaseLayer = 2;

/// PerformanceTest's capacities (Jolt's `cNumBodies` etc.).
const MAX_BODIES: c_uint = 10240;
const MAX_BODY_PAIRS: c_uint = 65536;
const MAX_CONTACT_CONSTRAINTS: c_uint = 20480;
/// PerformanceTest's temp allocator.
const TEMP_ALLOCATOR_BYTES: c_uint = 32 * 1024 * 1024;
/// PerformanceTest's boxes (floor and pyramid) have no convex radius ("to
/// force more collisions"), and archipelago's boxes are sharp too.
const BOX_CONVEX_RADIUS: f32 = 0.0;

unsafe extern "C" fn bpl_count(_this: *const c_void) -> c_uint {
    BPL_COUNT as _
}

unsafe extern "C" fn bpl_of(_this: *const c_void, layer: JPC_ObjectLayer) -> JPC_BroadPhaseLayer {
    if layer == OL_NON_MOVING {
        BPL_NON_MOVING
    } else {
        BPL_MOVING
    }
}

unsafe extern "C" fn ovb_collide(
    _this: *const c_void,
    layer: JPC_ObjectLayer,
    bpl: JPC_BroadPhaseLayer,
) -> bool {
    layer == OL_MOVING || bpl == BPL_MOVING
}

unsafe extern "C" fn ovo_collide(
    _this: *const c_void,
    a: JPC_ObjectLayer,
    b: JPC_ObjectLayer,
) -> bool {
    a == OL_MOVING || b == OL_MOVING
}

fn vec3(x: f32, y: f32, z: f32) -> JPC_Vec3 {
    JPC_Vec3 { x, y, z, _w: z }
}

fn rvec3(x: f32, y: f32, z: f32) -> JPC_RVec3 {
    JPC_RVec3 { x, y, z, _w: z }
}

pub struct Jolt {
    system: *mut JPC_PhysicsSystem,
    job_system: *mut JPC_JobSystemThreadPool,
    temp: *mut JPC_TempAllocatorImpl,
    bpl: *mut JPC_BroadPhaseLayerInterface,
    ovb: *mut JPC_ObjectVsBroadPhaseLayerFilter,
    ovo: *mut JPC_ObjectLayerPairFilter,
    ids: Vec<JPC_BodyID>,
}

/// JoltC's global setup, once per process, before any use.
fn init() {
    static INIT: Once = Once::new();
    // SAFETY: JoltC's documented start-up calls, run once.
    INIT.call_once(|| unsafe {
        JPC_RegisterDefaultAllocator();
        JPC_FactoryInit();
        JPC_RegisterTypes();
    });
}

/// Whether Jolt can build this scene's shapes here: everything but a
/// mesh or height field always; those only where `jolt_surfaces.cpp`
/// was compiled against the library's own defines (it checks).
pub fn maps(scene: &scenes::Scene) -> bool {
    let s = &scene.shapes;
    if s.meshes.is_empty() && s.heightfields.is_empty() {
        return true;
    }
    init();
    // SAFETY: a pure function of the shim's and the library's build.
    let ok = unsafe { arch_jolt_abi_matches() };
    if !ok {
        eprintln!("jolt_surfaces.cpp was built with other defines than Jolt: no Jolt meshes or height fields");
    }
    ok
}

impl Jolt {
    pub fn new(scene: &scenes::Scene, threads: usize) -> Self {
        init();
        // SAFETY: plain constructor calls; every pointer is kept and
        // released in `Drop`, the layer callbacks are 'static functions.
        unsafe {
            let temp = JPC_TempAllocatorImpl_new(TEMP_ALLOCATOR_BYTES);
            let job_system = JPC_JobSystemThreadPool_new3(
                JPC_MAX_PHYSICS_JOBS as _,
                JPC_MAX_PHYSICS_BARRIERS as _,
                threads as i32 - 1,
            );
            let bpl = JPC_BroadPhaseLayerInterface_new(
                ptr::null(),
                JPC_BroadPhaseLayerInterfaceFns {
                    GetNumBroadPhaseLayers: Some(bpl_count as _),
                    GetBroadPhaseLayer: Some(bpl_of as _),
                },
            );
            let ovb = JPC_ObjectVsBroadPhaseLayerFilter_new(
                ptr::null_mut(),
                JPC_ObjectVsBroadPhaseLayerFilterFns {
                    ShouldCollide: Some(ovb_collide as _),
                },
            );
            let ovo = JPC_ObjectLayerPairFilter_new(
                ptr::null_mut(),
                JPC_ObjectLayerPairFilterFns {
                    ShouldCollide: Some(ovo_collide as _),
                },
            );
            let system = JPC_PhysicsSystem_new();
            JPC_PhysicsSystem_Init(
                system,
                MAX_BODIES,
                0,
                MAX_BODY_PAIRS,
                MAX_CONTACT_CONSTRAINTS,
                bpl,
                ovb,
                ovo,
            );
            let bi = JPC_PhysicsSystem_GetBodyInterface(system);
            let mut shapes: Vec<(Shape, f32, *const JPC_Shape)> = Vec::new();
            let mut ids = Vec::with_capacity(scene.bodies.len());
            let compounds = compound_children(scene);
            for b in &scene.bodies {
                let is_static = b.motion_type == MotionType::Static;
                let density = match b.mass {
                    MassSpec::Density(d) => d,
                    MassSpec::Mass(m) => m / volume(b.shape, scene, &compounds),
                };
                let shape = match shapes
                    .iter()
                    .find(|(s, d, _)| *s == b.shape && *d == density)
                {
                    Some(&(_, _, s)) => s,
                    None => {
                        let s = create_shape(b.shape, density, scene, &compounds);
                        shapes.push((b.shape, density, s));
                        s
                    }
                };
                let q = b.rotation;
                let mut s = JPC_BodyCreationSettings {
                    Position: rvec3(b.position.x, b.position.y, b.position.z),
                    Rotation: JPC_Quat {
                        x: q.x,
                        y: q.y,
                        z: q.z,
                        w: q.w,
                    },
                    LinearVelocity: vec3(
                        b.linear_velocity.x,
                        b.linear_velocity.y,
                        b.linear_velocity.z,
                    ),
                    AngularVelocity: vec3(
                        b.angular_velocity.x,
                        b.angular_velocity.y,
                        b.angular_velocity.z,
                    ),
                    MotionType: match b.motion_type {
                        MotionType::Static => JPC_MOTION_TYPE_STATIC,
                        MotionType::Kinematic => JPC_MOTION_TYPE_KINEMATIC,
                        MotionType::Dynamic => JPC_MOTION_TYPE_DYNAMIC,
                    } as _,
                    ObjectLayer: if is_static { OL_NON_MOVING } else { OL_MOVING },
                    Friction: b.friction,
                    Restitution: b.restitution,
                    GravityFactor: b.gravity_factor,
                    AllowSleeping: b.allow_sleeping,
                    IsSensor: b.is_sensor,
                    Shape: shape,
                    ..Default::default()
                };
                // None: Jolt's default (0.05), which is archipelago's too.
                if let Some(d) = b.linear_damping {
                    s.LinearDamping = d;
                }
                if let Some(d) = b.angular_damping {
                    s.AngularDamping = d;
                }
                let activation = if is_static {
                    JPC_ACTIVATION_DONT_ACTIVATE
                } else {
                    JPC_ACTIVATION_ACTIVATE
                };
                ids.push(JPC_BodyInterface_CreateAndAddBody(bi, &s, activation as _));
            }
            JPC_PhysicsSystem_OptimizeBroadPhase(system);
            Self {
                system,
                job_system,
                temp,
                bpl,
                ovb,
                ovo,
                ids,
            }
        }
    }
}

/// Each compound's children in its principal frame, as archipelago keeps
/// them (the frame the body's pose is given in): from the scene's world,
/// built once when the scene has compounds.
fn compound_children(scene: &scenes::Scene) -> Vec<Vec<CompoundChild>> {
    let mut children = vec![Vec::new(); scene.shapes.compounds.len()];
    if children.is_empty() {
        return children;
    }
    let (world, _) = scene
        .build(archipelago::PhysicsSettings::default())
        .expect("the scene");
    for b in &scene.bodies {
        if let Shape::Compound(id) = b.shape {
            let c = world.shapes().compound(id).expect("a compound");
            children[id.index() as usize] = c.children().to_vec();
        }
    }
    children
}

fn volume(shape: Shape, scene: &scenes::Scene, compounds: &[Vec<CompoundChild>]) -> f32 {
    use std::f32::consts::PI;
    match shape {
        Shape::Sphere { radius: r } => 4.0 / 3.0 * PI * r * r * r,
        Shape::Box { half_extents: e } => 8.0 * e.x * e.y * e.z,
        Shape::Capsule {
            half_height: h,
            radius: r,
        } => PI * r * r * (2.0 * h) + 4.0 / 3.0 * PI * r * r * r,
        Shape::Hull(id) => {
            scene.shapes.hulls[id.index() as usize]
                .mass_properties()
                .volume
        }
        // as archipelago sums them (children may overlap)
        Shape::Compound(id) => compounds[id.index() as usize]
            .iter()
            .map(|c| volume(c.shape, scene, compounds))
            .sum(),
        // static only: Jolt gives them no mass
        Shape::Mesh(_) | Shape::HeightField(_) => 1.0,
    }
}

/// A Jolt shape for `shape`.
///
/// # Safety
/// JoltC must be initialised.
unsafe fn create_shape(
    shape: Shape,
    density: f32,
    scene: &scenes::Scene,
    compounds: &[Vec<CompoundChild>],
) -> *const JPC_Shape {
    let mut out: *mut JPC_Shape = ptr::null_mut();
    let mut err: *mut JPC_String = ptr::null_mut();
    // SAFETY: settings structs built from JoltC's defaults; out-pointers
    // are valid locals; the point and child arrays outlive the calls.
    let ok = unsafe {
        match shape {
            Shape::Box { half_extents: e } => {
                let s = JPC_BoxShapeSettings {
                    HalfExtent: vec3(e.x, e.y, e.z),
                    ConvexRadius: BOX_CONVEX_RADIUS,
                    Density: density,
                    ..Default::default()
                };
                JPC_BoxShapeSettings_Create(&s, &mut out, &mut err)
            }
            Shape::Sphere { radius } => {
                let s = JPC_SphereShapeSettings {
                    Radius: radius,
                    Density: density,
                    ..Default::default()
                };
                JPC_SphereShapeSettings_Create(&s, &mut out, &mut err)
            }
            Shape::Capsule {
                half_height,
                radius,
            } => {
                let s = JPC_CapsuleShapeSettings {
                    Radius: radius,
                    HalfHeightOfCylinder: half_height,
                    Density: density,
                    ..Default::default()
                };
                JPC_CapsuleShapeSettings_Create(&s, &mut out, &mut err)
            }
            Shape::Hull(id) => {
                // the hull as archipelago keeps it: in its principal frame
                let hull = HullShape::new(&scene.shapes.hulls[id.index() as usize]);
                let points: Vec<JPC_Vec3> = hull
                    .vertices()
                    .iter()
                    .map(|v| vec3(v.x, v.y, v.z))
                    .collect();
                let mut s = JPC_ConvexHullShapeSettings::default();
                JPC_ConvexHullShapeSettings_default(&mut s);
                s.Points = points.as_ptr();
                s.PointsLen = points.len();
                s.Density = density;
                JPC_ConvexHullShapeSettings_Create(&s, &mut out, &mut err)
            }
            Shape::Compound(id) => {
                let children = &compounds[id.index() as usize];
                let subs: Vec<JPC_SubShapeSettings> = children
                    .iter()
                    .map(|c| {
                        let q = c.rotation;
                        let mut sub = JPC_SubShapeSettings::default();
                        JPC_SubShapeSettings_default(&mut sub);
                        sub.Shape = create_shape(c.shape, density, scene, compounds);
                        sub.Position = vec3(c.position.x, c.position.y, c.position.z);
                        sub.Rotation = JPC_Quat {
                            x: q.x,
                            y: q.y,
                            z: q.z,
                            w: q.w,
                        };
                        sub
                    })
                    .collect();
                let mut s = JPC_StaticCompoundShapeSettings::default();
                JPC_StaticCompoundShapeSettings_default(&mut s);
                s.SubShapes = subs.as_ptr();
                s.SubShapesLen = subs.len();
                JPC_StaticCompoundShapeSettings_Create(&s, &mut out, &mut err)
            }
            Shape::Mesh(id) => {
                let (vertices, triangles) = mesh_buffers(&scene.shapes.meshes[id.index() as usize]);
                out = arch_jolt_mesh(
                    vertices.as_ptr(),
                    (vertices.len() / 3) as u32,
                    triangles.as_ptr(),
                    (triangles.len() / 3) as u32,
                ) as *mut JPC_Shape;
                !out.is_null()
            }
            Shape::HeightField(id) => {
                let f = &scene.shapes.heightfields[id.index() as usize];
                let (n, samples, offset, scale) = height_field(f);
                out = arch_jolt_height_field(
                    samples.as_ptr(),
                    n,
                    offset[0],
                    offset[1],
                    offset[2],
                    scale[0],
                    scale[1],
                    scale[2],
                ) as *mut JPC_Shape;
                !out.is_null()
            }
        }
    };
    assert!(ok, "Jolt refused a shape: {shape:?}");
    out
}

/// A mesh's kept triangles as Jolt's buffers: vertices welded where their
/// bits are equal (Jolt finds active edges by shared vertex indices), each
/// triangle wound so that Jolt's normal, `(v1 − v0) × (v2 − v0)`, is
/// archipelago's.
fn mesh_buffers(m: &TriangleMesh) -> (Vec<f32>, Vec<u32>) {
    let mut index: HashMap<[u32; 3], u32> = HashMap::new();
    let mut vertices = Vec::new();
    let mut triangles = Vec::with_capacity(3 * m.num_triangles());
    for k in 0..m.num_triangles() {
        let (mut c, normal) = m.triangle(k);
        if (c[1] - c[0]).cross(c[2] - c[0]).dot(normal) < 0.0 {
            c.swap(1, 2);
        }
        for v in c {
            let next = index.len() as u32;
            let i = *index
                .entry(v.to_array().map(f32::to_bits))
                .or_insert_with(|| {
                    vertices.extend_from_slice(&v.to_array());
                    next
                });
            triangles.push(i);
        }
    }
    (vertices, triangles)
}

/// A height field as Jolt's: `n × n` samples (`z · n + x`), sample
/// `(x, z)` at `offset + scale · (x, h, z)`, archipelago's grid centred as
/// it is; a grid that is not square padded with holes (`f32::MAX`,
/// Jolt's `cNoCollisionValue`). Both split each cell from sample `(x, z)`
/// to `(x + 1, z + 1)`.
fn height_field(f: &HeightField) -> (u32, Vec<f32>, [f32; 3], [f32; 3]) {
    let (nx, nz) = f.samples();
    let (sx, sz) = f.cell_size();
    let n = nx.max(nz);
    let mut samples = vec![f32::MAX; n * n];
    for z in 0..nz {
        for x in 0..nx {
            samples[z * n + x] = f.height(x, z);
        }
    }
    let offset = [
        -0.5 * (nx - 1) as f32 * sx,
        0.0,
        -0.5 * (nz - 1) as f32 * sz,
    ];
    (n as u32, samples, offset, [sx, 1.0, sz])
}

impl Peer for Jolt {
    fn step(&mut self) {
        // SAFETY: all pointers are live (owned by self).
        let errors = unsafe {
            JPC_PhysicsSystem_Update(self.system, scenes::DT, 1, self.temp, self.job_system)
        };
        assert_eq!(errors, 0, "Jolt update error flags {errors}");
    }

    fn poses(&self) -> Vec<([f32; 3], [f32; 4])> {
        // SAFETY: the system is live and the ids are its bodies.
        unsafe {
            let bi = JPC_PhysicsSystem_GetBodyInterface(self.system);
            self.ids
                .iter()
                .map(|&id| {
                    let p = JPC_BodyInterface_GetPosition(bi, id);
                    let q = JPC_BodyInterface_GetRotation(bi, id);
                    ([p.x, p.y, p.z], [q.x, q.y, q.z, q.w])
                })
                .collect()
        }
    }
}

impl Drop for Jolt {
    fn drop(&mut self) {
        // SAFETY: created in `new`, released once, bodies before the system.
        unsafe {
            let bi = JPC_PhysicsSystem_GetBodyInterface(self.system);
            for &id in &self.ids {
                JPC_BodyInterface_RemoveBody(bi, id);
                JPC_BodyInterface_DestroyBody(bi, id);
            }
            JPC_PhysicsSystem_delete(self.system);
            JPC_BroadPhaseLayerInterface_delete(self.bpl);
            JPC_ObjectVsBroadPhaseLayerFilter_delete(self.ovb);
            JPC_ObjectLayerPairFilter_delete(self.ovo);
            JPC_JobSystemThreadPool_delete(self.job_system);
            JPC_TempAllocatorImpl_delete(self.temp);
        }
    }
}
