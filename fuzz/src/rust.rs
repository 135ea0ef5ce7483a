//! A case as a Rust test: the shrunk calls, ready to paste into
//! `kernel/tests/` as a regression test (floats written by their bits, so
//! the replay is exact; each call's result printed).

use crate::ops::{Case, Op, Query, Target, POOL_SIZES};
use archipelago::*;
use std::fmt::Write;

fn f(x: f32) -> String {
    if x.is_nan() {
        "f32::NAN".into()
    } else if x == f32::INFINITY {
        "f32::INFINITY".into()
    } else if x == f32::NEG_INFINITY {
        "f32::NEG_INFINITY".into()
    } else {
        // `Debug` writes the shortest text that reads back to the same bits
        format!("{x:?}")
    }
}

fn v3(v: Vec3) -> String {
    format!("Vec3::new({}, {}, {})", f(v.x), f(v.y), f(v.z))
}

fn quat(q: Quat) -> String {
    format!(
        "Quat::from_xyzw({}, {}, {}, {})",
        f(q.x),
        f(q.y),
        f(q.z),
        f(q.w)
    )
}

fn shape(s: Shape) -> String {
    match s {
        Shape::Sphere { radius } => format!("Shape::Sphere {{ radius: {} }}", f(radius)),
        Shape::Box { half_extents } => {
            format!("Shape::Box {{ half_extents: {} }}", v3(half_extents))
        }
        Shape::Capsule {
            half_height,
            radius,
        } => format!(
            "Shape::Capsule {{ half_height: {}, radius: {} }}",
            f(half_height),
            f(radius)
        ),
        // the fuzzer's ops make no hulls yet, so no reproducer names one
        Shape::Hull(h) => format!("unimplemented!(\"hull {} in a reproducer\")", h.index()),
        Shape::Mesh(m) => format!("unimplemented!(\"mesh {} in a reproducer\")", m.index()),
        Shape::HeightField(h) => {
            format!(
                "unimplemented!(\"height field {} in a reproducer\")",
                h.index()
            )
        }
        Shape::Compound(c) => {
            format!("unimplemented!(\"compound {} in a reproducer\")", c.index())
        }
    }
}

fn opt(x: Option<f32>) -> String {
    x.map_or("None".into(), |x| format!("Some({})", f(x)))
}

fn body(s: &BodyCreationSettings) -> String {
    let mass = match s.mass {
        MassSpec::Density(d) => format!("MassSpec::Density({})", f(d)),
        MassSpec::Mass(m) => format!("MassSpec::Mass({})", f(m)),
    };
    format!(
        "BodyCreationSettings {{ shape: {}, position: {}, rotation: {}, linear_velocity: {}, \
         angular_velocity: {}, motion_type: MotionType::{:?}, mass: {mass}, friction: {}, \
         restitution: {}, linear_damping: {}, angular_damping: {}, gravity_factor: {}, \
         allow_sleeping: {}, motion_quality: MotionQuality::{:?}, is_sensor: {}, contact_events: {}, \
         object_layer: {}, user_data: {} }}",
        shape(s.shape),
        v3(s.position),
        quat(s.rotation),
        v3(s.linear_velocity),
        v3(s.angular_velocity),
        s.motion_type,
        f(s.friction),
        f(s.restitution),
        opt(s.linear_damping),
        opt(s.angular_damping),
        f(s.gravity_factor),
        s.allow_sleeping,
        s.motion_quality,
        s.is_sensor,
        s.contact_events,
        s.object_layer,
        s.user_data
    )
}

fn broad_phase(b: &BroadPhaseKind) -> String {
    match b {
        BroadPhaseKind::Sap => "BroadPhaseKind::Sap".into(),
        BroadPhaseKind::BruteForce => "BroadPhaseKind::BruteForce".into(),
        BroadPhaseKind::Auto => "BroadPhaseKind::Auto".into(),
        BroadPhaseKind::MbpFitted { subdivisions } => {
            format!("BroadPhaseKind::MbpFitted {{ subdivisions: {subdivisions} }}")
        }
        BroadPhaseKind::Mbp(m) => format!(
            "BroadPhaseKind::Mbp(MbpSettings {{ world_min: {}, world_max: {}, subdivisions: {} }})",
            v3(m.world_min),
            v3(m.world_max),
            m.subdivisions
        ),
    }
}

fn settings(s: &PhysicsSettings) -> String {
    format!(
        "PhysicsSettings {{ gravity: {}, velocity_iterations: {}, position_iterations: {}, \
         baumgarte: {}, speculative_contact_distance: {}, penetration_slop: {}, \
         max_penetration_distance: {}, linear_damping: {}, angular_damping: {}, \
         max_linear_velocity: {}, max_angular_velocity: {}, min_velocity_for_restitution: {}, \
         contact_point_preserve_distance: {}, contact_normal_preserve_cos: {}, broad_phase: {}, \
         layer_filter: LayerFilter::from_rows({:?}).unwrap(), allow_sleeping: {}, \
         use_large_island_splitter: {}, time_before_sleep: {}, point_velocity_sleep_threshold: {}, \
         use_body_pair_cache: {}, body_pair_cache_max_delta_position: {}, \
         body_pair_cache_max_delta_rotation: {}, ..PhysicsSettings::default() }}",
        v3(s.gravity),
        s.velocity_iterations,
        s.position_iterations,
        f(s.baumgarte),
        f(s.speculative_contact_distance),
        f(s.penetration_slop),
        f(s.max_penetration_distance),
        f(s.linear_damping),
        f(s.angular_damping),
        f(s.max_linear_velocity),
        f(s.max_angular_velocity),
        f(s.min_velocity_for_restitution),
        f(s.contact_point_preserve_distance),
        f(s.contact_normal_preserve_cos),
        broad_phase(&s.broad_phase),
        s.layer_filter.rows(),
        s.allow_sleeping,
        s.use_large_island_splitter,
        f(s.time_before_sleep),
        f(s.point_velocity_sleep_threshold),
        s.use_body_pair_cache,
        f(s.body_pair_cache_max_delta_position),
        f(s.body_pair_cache_max_delta_rotation),
    )
}

fn target(t: Target) -> String {
    match t {
        Target::Issued(k) => format!("pick(&ids, {k})"),
        Target::Latest => "latest(&ids)".into(),
        Target::Foreign(k) => format!("foreign[{}]", k % 8),
        Target::Forged([a, b, c]) => format!("BodyId::from_raw([{a}, {b}, {c}])"),
    }
}

fn frame(j: &JointFrame) -> String {
    format!(
        "JointFrame::new({}, {}, {})",
        v3(j.anchor),
        v3(j.axis),
        v3(j.normal)
    )
}

fn spring(s: Spring) -> String {
    format!("Spring::new({}, {})", f(s.frequency), f(s.damping))
}

fn motor(m: JointMotor) -> String {
    let mode = match m.mode {
        MotorMode::Off => "MotorMode::Off".into(),
        MotorMode::Velocity(v) => format!("MotorMode::Velocity({})", f(v)),
        MotorMode::Position { target, spring: s } => format!(
            "MotorMode::Position {{ target: {}, spring: {} }}",
            f(target),
            spring(s)
        ),
    };
    format!(
        "JointMotor {{ mode: {mode}, max_force: {} }}",
        f(m.max_force)
    )
}

fn limits(l: Option<[f32; 2]>) -> String {
    l.map_or("None".into(), |[a, b]| {
        format!("Some([{}, {}])", f(a), f(b))
    })
}

fn joint_kind(k: JointKind) -> String {
    match k {
        JointKind::Fixed => "JointKind::Fixed".into(),
        JointKind::Point => "JointKind::Point".into(),
        JointKind::Distance(d) => format!(
            "JointKind::Distance(DistanceJoint {{ min: {}, max: {}, spring: {} }})",
            f(d.min),
            f(d.max),
            d.spring
                .map_or("None".into(), |s| format!("Some({})", spring(s)))
        ),
        JointKind::Hinge(h) => format!(
            "JointKind::Hinge(HingeJoint {{ limits: {}, motor: {}, max_friction: {} }})",
            limits(h.limits),
            motor(h.motor),
            f(h.max_friction)
        ),
        JointKind::Slider(h) => format!(
            "JointKind::Slider(SliderJoint {{ limits: {}, motor: {}, max_friction: {} }})",
            limits(h.limits),
            motor(h.motor),
            f(h.max_friction)
        ),
        JointKind::SwingTwist(st) => format!(
            "JointKind::SwingTwist(SwingTwistJoint {{ swing: {}, twist: [{}, {}] }})",
            f(st.swing),
            f(st.twist[0]),
            f(st.twist[1])
        ),
    }
}

fn joint_target(k: u32) -> String {
    format!("joints[{k} as usize % joints.len().max(1)]")
}

fn call(op: &Op) -> String {
    match *op {
        Op::CreateJoint { a, b, settings } => {
            let side = |t: Option<Target>| t.map_or("None".into(), |t| format!("Some({})", target(t)));
            format!(
                "w.create_joint(&JointSettings::new({}, {}, {}, {}, {}).with_collide_connected({})).inspect(|&j| joints.push(j))",
                side(a),
                side(b),
                frame(&settings.frame_a),
                frame(&settings.frame_b),
                joint_kind(settings.kind),
                settings.collide_connected
            )
        }
        // (with no joint issued yet the fuzzer makes no call: indexing an
        // empty list here panics instead, so guard as it does)
        Op::RemoveJoint(k) => format!(
            "if joints.is_empty() {{ Ok(()) }} else {{ w.remove_joint({}) }}",
            joint_target(k)
        ),
        Op::SetJointMotor(k, m) => format!(
            "if joints.is_empty() {{ Ok(()) }} else {{ w.set_joint_motor({}, {}) }}",
            joint_target(k),
            motor(m)
        ),
        Op::SetJointLimits(k, l) => format!(
            "if joints.is_empty() {{ Ok(()) }} else {{ w.set_joint_limits({}, {}) }}",
            joint_target(k),
            limits(l)
        ),
        Op::GetJoint(k) => format!(
            "if joints.is_empty() {{ Ok(JointImpulse::default()) }} else {{ w.joint(joints[{k} as usize % joints.len()]).and_then(|_| w.joint_impulse(joints[{k} as usize % joints.len()])) }}"
        ),
        Op::Create { settings, add } => {
            let method = if add {
                "create_and_add_body"
            } else {
                "create_body"
            };
            format!(
                "w.{method}(&{}).inspect(|&id| ids.push(id))",
                body(&settings)
            )
        }
        Op::Add(t) => format!("w.add_body({})", target(t)),
        Op::Remove(t) => format!("w.remove_body({})", target(t)),
        Op::Destroy(t) => format!("w.destroy_body({})", target(t)),
        Op::SetPosition(t, p) => format!("w.set_position({}, {})", target(t), v3(p)),
        Op::SetRotation(t, q) => format!("w.set_rotation({}, {})", target(t), quat(q)),
        Op::SetLinearVelocity(t, v) => format!("w.set_linear_velocity({}, {})", target(t), v3(v)),
        Op::SetAngularVelocity(t, v) => {
            format!("w.set_angular_velocity({}, {})", target(t), v3(v))
        }
        Op::AddForce(t, v) => format!("w.add_force({}, {})", target(t), v3(v)),
        Op::AddTorque(t, v) => format!("w.add_torque({}, {})", target(t), v3(v)),
        Op::AddImpulse(t, v) => format!("w.add_impulse({}, {})", target(t), v3(v)),
        Op::AddImpulseAt(t, v, p) => format!(
            "w.add_impulse_at({}, {}, {})",
            target(t),
            v3(v),
            p.map_or("None".into(), |p| format!("Some({})", v3(p)))
        ),
        Op::AddAngularImpulse(t, v) => format!("w.add_angular_impulse({}, {})", target(t), v3(v)),
        Op::MoveKinematic(t, p, q, dt) => format!(
            "w.move_kinematic({}, {}, {}, {})",
            target(t),
            v3(p),
            quat(q),
            f(dt)
        ),
        Op::Activate(t) => format!("w.activate_body({})", target(t)),
        Op::Deactivate(t) => format!("w.deactivate_body({})", target(t)),
        Op::ActivateInAabb(lo, hi, mask) => {
            format!(
                "w.activate_bodies_in_aabb({}, {}, {mask:#x})",
                v3(lo),
                v3(hi)
            )
        }
        Op::Get(t, q) => {
            let m = match q {
                Query::Position => "position",
                Query::Rotation => "rotation",
                Query::LinearVelocity => "linear_velocity",
                Query::AngularVelocity => "angular_velocity",
                Query::MotionType => "motion_type",
                Query::Shape => "shape",
                Query::UserData => "user_data",
                Query::Mass => "mass",
                Query::WorldAabb => "world_aabb",
                Query::IsAdded => "is_added",
                Query::IsActive => "is_active",
                Query::IsSleeping => "is_sleeping",
            };
            format!("w.{m}({})", target(t))
        }
        Op::ReadAll => {
            "(w.contacts().count(), w.body_ids().len(), w.check_sleep_invariants())".into()
        }
        Op::SetSettings {
            settings: s,
            keep_broad_phase,
        } => {
            if keep_broad_phase {
                format!(
                    "w.set_settings(PhysicsSettings {{ broad_phase: w.settings().broad_phase, ..{} }})",
                    settings(&s)
                )
            } else {
                format!("w.set_settings({})", settings(&s))
            }
        }
        Op::AddRegion(lo, hi) => format!("w.add_broad_phase_region({}, {})", v3(lo), v3(hi)),
        Op::RemoveRegion(r) => format!("w.remove_broad_phase_region({r})"),
        Op::UpdateBroadPhase => "w.update_broad_phase()".into(),
        Op::SceneQuery {
            origin,
            direction,
            max,
            mask,
            ..
        } => format!(
            "Ray::new({}, {}, {}).map(|r| w.cast_ray(&r, &QueryFilter::default().with_layer_mask({mask:#x})))",
            v3(origin),
            v3(direction),
            f(max)
        ),
        Op::Update { dt, steps, pool } => format!(
            "w.update({}, {steps}, &pools[{}]).map(|s| (s.bodies_faulted, s.warnings))",
            f(dt),
            pool % POOL_SIZES.len()
        ),
        Op::RecordTrace => "w.record_trace()".into(),
        Op::TakeTrace => "w.take_trace().is_some()".into(),
        Op::InjectPanic { job, nth } => format!("w.inject_job_panic({job:?}, {nth})"),
    }
}

/// The case as the body of a `#[test]` function (shadow worlds left out:
/// to check a divergence, run it twice on other pools and compare
/// `state_hash()`).
pub fn to_rust(case: &Case) -> String {
    let mut s = String::new();
    let c = &case.capacities;
    s += "#[test]\nfn fuzz_repro() {\n    use archipelago::*;\n";
    s += "    #[allow(unused)]\n    fn pick(ids: &[BodyId], k: u32) -> BodyId {\n        if ids.is_empty() { BodyId::from_raw([k % 64, 0, 0]) } else { ids[k as usize % ids.len()] }\n    }\n";
    s += "    #[allow(unused)]\n    fn latest(ids: &[BodyId]) -> BodyId {\n        ids.last().copied().unwrap_or(BodyId::from_raw([0, 0, 0]))\n    }\n";
    let _ = writeln!(
        s,
        "    let pools: Vec<ThreadPool> = {POOL_SIZES:?}.iter().map(|&n| build_pinned_pool(Some(n)).unwrap().pool).collect();"
    );
    s += "    let mut other = PhysicsSystem::new(Capacities { max_bodies: 8, max_body_pairs: 8, max_contact_constraints: 8, max_joints: 8, }, PhysicsSettings::default()).unwrap();\n";
    s += "    let foreign: Vec<BodyId> = (0..8).map(|k| other.create_body(&scenes::cube(0.5, Vec3::new(3.0 * k as f32, 0.5, 0.0))).unwrap()).collect();\n";
    let _ = writeln!(
        s,
        "    let mut w = PhysicsSystem::new(Capacities {{ max_bodies: {}, max_body_pairs: {}, max_contact_constraints: {}, max_joints: {} }}, {}).unwrap();",
        c.max_bodies,
        c.max_body_pairs,
        c.max_contact_constraints,
        c.max_joints,
        settings(&case.settings)
    );
    s += "    let mut ids: Vec<BodyId> = Vec::new();\n";
    s += "    let mut joints: Vec<JointId> = Vec::new();\n";
    for (k, op) in case.ops.iter().enumerate() {
        let _ = writeln!(
            s,
            "    let r = {};\n    println!(\"{k}: {{r:?}}\");",
            call(op)
        );
    }
    s += "    let _ = (&mut ids, &mut joints, &foreign);\n}\n";
    s
}
