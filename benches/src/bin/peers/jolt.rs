//! The scene in Jolt Physics 5.0.0 through joltc-sys 0.3.1 (JoltC), set up
//! as Jolt's own PerformanceTest does: capacities 10240 / 65536 / 20480,
//! default physics settings, two object layers (moving, non-moving), bodies
//! created in scene order (so body ids follow it), `OptimizeBroadPhase`
//! before the first step, and a `JobSystemThreadPool` of N−1 workers (the
//! calling thread is the N-th).
//!
//! Everything here is FFI: each `unsafe` block calls JoltC with pointers
//! this struct created and owns until `Drop`.

use crate::Peer;
use archipelago::{scenes, MassSpec, MotionType, Shape};
use joltc_sys::*;
use std::ffi::{c_uint, c_void};
use std::ptr;
use std::sync::Once;

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

impl Jolt {
    pub fn new(scene: &scenes::Scene, threads: usize) -> Self {
        static INIT: Once = Once::new();
        // SAFETY: JoltC's global setup, once per process, before any use.
        INIT.call_once(|| unsafe {
            JPC_RegisterDefaultAllocator();
            JPC_FactoryInit();
            JPC_RegisterTypes();
        });
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
            let mut shapes: Vec<(Shape, f32, *mut JPC_Shape)> = Vec::new();
            let mut ids = Vec::with_capacity(scene.bodies.len());
            for b in &scene.bodies {
                let is_static = b.motion_type == MotionType::Static;
                let density = match b.mass {
                    MassSpec::Density(d) => d,
                    MassSpec::Mass(m) => m / volume(b.shape),
                };
                let shape = match shapes
                    .iter()
                    .find(|(s, d, _)| *s == b.shape && *d == density)
                {
                    Some(&(_, _, s)) => s,
                    None => {
                        let s = create_shape(b.shape, density);
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

fn volume(shape: Shape) -> f32 {
    use std::f32::consts::PI;
    match shape {
        Shape::Sphere { radius: r } => 4.0 / 3.0 * PI * r * r * r,
        Shape::Box { half_extents: e } => 8.0 * e.x * e.y * e.z,
        Shape::Capsule {
            half_height: h,
            radius: r,
        } => PI * r * r * (2.0 * h) + 4.0 / 3.0 * PI * r * r * r,
        _ => unreachable!("the Jolt peer maps no hull, compound, mesh or height field yet"),
    }
}

/// # Safety
/// JoltC must be initialised.
unsafe fn create_shape(shape: Shape, density: f32) -> *mut JPC_Shape {
    let mut out: *mut JPC_Shape = ptr::null_mut();
    let mut err: *mut JPC_String = ptr::null_mut();
    // SAFETY: settings structs built from JoltC's defaults; out-pointers
    // are valid locals.
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
            _ => unreachable!("the Jolt peer maps no hull, compound, mesh or height field yet"),
        }
    };
    assert!(ok, "Jolt refused a shape: {shape:?}");
    out
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
