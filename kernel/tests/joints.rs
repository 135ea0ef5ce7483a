//! Joints checked against closed forms: a pendulum's period, a spring's
//! frequency, motors, limits, welds, and chains under load. Each test
//! prints what it measured.

mod common;
use archipelago::*;
use common::*;
use core::f32::consts::PI;

/// Times of the upward zero crossings of `x` (linear interpolation).
fn crossings(xs: &[f32], dt: f32) -> Vec<f32> {
    let mut t = Vec::new();
    for k in 1..xs.len() {
        if xs[k - 1] < 0.0 && xs[k] >= 0.0 {
            let f = -xs[k - 1] / (xs[k] - xs[k - 1]);
            t.push((k as f32 - 1.0 + f) * dt);
        }
    }
    t
}

fn mean_period(t: &[f32]) -> f32 {
    (t[t.len() - 1] - t[0]) / (t.len() - 1) as f32
}

/// A sphere of radius 0.1 on a 1 m point joint to the world, released at
/// 5°: a physical pendulum, `T = 2π √(I / (m g L))` with
/// `I = (2/5) m r² + m L²` about the pivot. 1% is ~30 times the period
/// error of the small-angle formula at 5° (0.05%) and what dt = 1/60 s
/// allows (`ω dt` = 0.05).
#[test]
fn pendulum_period_matches_the_physical_pendulum() {
    let mut w = world(undamped());
    let (r, len, a0) = (0.1f32, 1.0f32, 5f32.to_radians());
    let pivot = Vec3::new(0.0, 5.0, 0.0);
    let start = pivot + Vec3::new(len * a0.sin(), -len * a0.cos(), 0.0);
    let ball = w
        .create_and_add_body(
            &BodyCreationSettings::new(Shape::sphere(r).unwrap(), start, MotionType::Dynamic)
                .with_allow_sleeping(false),
        )
        .unwrap();
    let anchor = w
        .joint_frame(Some(ball), JointFrame::at(pivot))
        .unwrap()
        .anchor;
    w.create_joint(&JointSettings::point(None, Some(ball), pivot, anchor))
        .unwrap();
    let mut xs = Vec::new();
    let mut stretch = 0f32;
    for _ in 0..(12.0 / DT) as usize {
        step(&mut w, 1);
        let p = w.position(ball).unwrap();
        xs.push(p.x - pivot.x);
        let rot = w.rotation(ball).unwrap();
        stretch = stretch.max((p + rot * anchor - pivot).length());
    }
    let t = crossings(&xs, DT);
    let measured = mean_period(&t);
    let i_over_m = 0.4 * r * r + len * len;
    let expected = 2.0 * PI * (i_over_m / (9.81 * len)).sqrt();
    let err = (measured - expected).abs() / expected;
    println!(
        "pendulum: period {measured:.4} s over {} swings, physical pendulum {expected:.4} s ({:.3}%), anchor gap <= {:.2e} m",
        t.len() - 1,
        100.0 * err,
        stretch
    );
    assert!(t.len() >= 5, "it swings");
    assert!(err < 0.01, "period {measured} vs {expected}");
}

/// Settings without gravity or damping.
fn weightless() -> PhysicsSettings {
    PhysicsSettings {
        gravity: Vec3::ZERO,
        ..undamped()
    }
}

fn dynamic(w: &mut PhysicsSystem, shape: Shape, at: Vec3) -> BodyId {
    w.create_and_add_body(
        &BodyCreationSettings::new(shape, at, MotionType::Dynamic).with_allow_sleeping(false),
    )
    .unwrap()
}

/// A sphere on a distance joint of rest length 1 m with a 2 Hz undamped
/// spring, pulled out 10 cm, weightless: it oscillates at the spring's
/// frequency (for a joint to the world the effective mass is the body's).
/// The soft constraint's implicit integration lowers the frequency by
/// `atan(ω dt)/(ω dt)`, 1.5% at 2 Hz and 60 Hz; 2% allows that.
#[test]
fn distance_spring_oscillates_at_its_frequency() {
    let mut w = world(weightless());
    let ball = dynamic(
        &mut w,
        Shape::sphere(0.1).unwrap(),
        Vec3::new(1.1, 0.0, 0.0),
    );
    let mut joint = JointSettings::distance(None, Some(ball), Vec3::ZERO, Vec3::ZERO, 1.0, 1.0);
    joint.kind = JointKind::Distance(DistanceJoint {
        min: 1.0,
        max: 1.0,
        spring: Some(Spring::new(2.0, 0.0)),
    });
    let j = w.create_joint(&joint).unwrap();
    let mut xs = Vec::new();
    for _ in 0..(5.0 / DT) as usize {
        step(&mut w, 1);
        xs.push(w.joint_coordinate(j).unwrap() - 1.0);
    }
    let t = crossings(&xs, DT);
    let f = 1.0 / mean_period(&t);
    let err = (f - 2.0).abs() / 2.0;
    let amp = xs[xs.len() - 30..].iter().fold(0f32, |m, x| m.max(x.abs()));
    println!(
        "distance spring: {f:.4} Hz over {} periods ({:.2}% from 2 Hz), amplitude 0.100 -> {amp:.3} m after 5 s",
        t.len() - 1,
        100.0 * err
    );
    assert!(t.len() >= 8);
    assert!(err < 0.02, "{f} Hz");
}

/// A door: a box 1 m wide, 2 m tall, 10 cm thick (50 kg at 250 kg/m³),
/// hinged to the world (A) about +y along its left edge; its angle is the
/// door's (B) about +y.
struct Door {
    w: PhysicsSystem,
    door: BodyId,
    hinge: JointId,
    /// Inertia about the hinge axis (kg m²).
    inertia: f32,
}

fn door(settings: PhysicsSettings, hinge: HingeJoint) -> Door {
    let mut w = world(settings);
    let h = Vec3::new(0.5, 1.0, 0.05);
    let at = Vec3::new(0.5, 2.0, 0.0);
    let door = w
        .create_and_add_body(
            &BodyCreationSettings::new(Shape::cuboid(h).unwrap(), at, MotionType::Dynamic)
                .with_density(250.0)
                .with_allow_sleeping(false),
        )
        .unwrap();
    let edge = JointFrame::new(Vec3::new(0.0, 2.0, 0.0), Vec3::Y, Vec3::X);
    let frame_b = w.joint_frame(Some(door), edge).unwrap();
    let joint = JointSettings::new(None, Some(door), edge, frame_b, JointKind::Hinge(hinge));
    let hinge = w.create_joint(&joint).unwrap();
    let m = w.mass(door).unwrap();
    let inertia = m * (4.0 * h.x * h.x + 4.0 * h.z * h.z) / 12.0 + m * h.x * h.x;
    Door {
        w,
        door,
        hinge,
        inertia,
    }
}

/// A velocity motor with torque to spare turns a free door at its target
/// speed: within 1% after 0.5 s (it gets there in a step or two).
#[test]
fn hinge_motor_reaches_its_speed() {
    let mut d = door(
        undamped(),
        HingeJoint {
            motor: JointMotor::velocity(2.0, 1.0e4),
            ..HingeJoint::default()
        },
    );
    step(&mut d.w, 30);
    let omega = d.w.angular_velocity(d.door).unwrap().y;
    let err = (omega - 2.0).abs() / 2.0;
    println!(
        "hinge motor: {omega:.4} rad/s after 0.5 s ({:.3}% from 2 rad/s)",
        100.0 * err
    );
    assert!(err < 0.01, "{omega}");
}

/// A door driven at 10 rad/s into a 45° stop halts on it: the speculative
/// limit lets it reach the stop, not pass it (a limit that acts only once
/// passed would overshoot by up to a step's travel, 9.5°).
#[test]
fn door_driven_into_its_limit_overshoots_less_than_a_degree() {
    let mut d = door(
        undamped(),
        HingeJoint {
            limits: Some([-PI, PI / 4.0]),
            motor: JointMotor::velocity(10.0, 1.0e4),
            ..HingeJoint::default()
        },
    );
    let mut most = 0f32;
    for _ in 0..60 {
        step(&mut d.w, 1);
        most = most.max(d.w.joint_coordinate(d.hinge).unwrap());
    }
    let overshoot = (most - PI / 4.0).to_degrees();
    let end = d.w.joint_coordinate(d.hinge).unwrap().to_degrees();
    println!(
        "hinge limit: widest {:.3}°, overshoot {overshoot:.4}° past the 45° stop, resting at {end:.3}°",
        most.to_degrees()
    );
    assert!(most > PI / 4.0 - 0.01, "it reached the stop");
    assert!(overshoot <= 1.0, "{overshoot}°");
}

/// A motor of limited torque accelerates the door at `τ / I` (no gravity
/// about the vertical hinge, no damping): within 2%.
#[test]
fn torque_limited_motor_accelerates_at_torque_over_inertia() {
    let tau = 5.0;
    let mut d = door(
        weightless(),
        HingeJoint {
            motor: JointMotor::velocity(100.0, tau),
            ..HingeJoint::default()
        },
    );
    step(&mut d.w, 30);
    let omega = d.w.angular_velocity(d.door).unwrap().y;
    let accel = omega / (30.0 * DT);
    let expected = tau / d.inertia;
    let err = (accel - expected).abs() / expected;
    println!(
        "torque-limited motor: {accel:.4} rad/s², tau/I = {expected:.4} ({:.3}%)",
        100.0 * err
    );
    assert!(err < 0.02);
}

/// A box on a vertical slider with limits [-0.5, 0.5] m falls 1 m from its
/// upper stop onto its lower one (4.4 m/s at the stop) and rests there: its
/// position never leaves the limits by more than 1 mm, nor its axis.
#[test]
fn slider_limits_hold_within_a_millimetre() {
    let mut w = world(undamped());
    let b = dynamic(
        &mut w,
        Shape::cuboid(Vec3::splat(0.2)).unwrap(),
        Vec3::new(0.0, 3.5, 0.0),
    );
    let rail = JointFrame::new(Vec3::new(0.0, 3.0, 0.0), Vec3::Y, Vec3::X);
    let centre = JointFrame::new(Vec3::new(0.0, 3.5, 0.0), Vec3::Y, Vec3::X);
    let joint = JointSettings::new(
        None,
        Some(b),
        rail,
        w.joint_frame(Some(b), centre).unwrap(),
        JointKind::Slider(SliderJoint {
            limits: Some([-0.5, 0.5]),
            ..SliderJoint::default()
        }),
    );
    let j = w.create_joint(&joint).unwrap();
    assert!((w.joint_coordinate(j).unwrap() - 0.5).abs() < 1e-6);
    let (mut lo, mut hi) = (f32::MAX, f32::MIN);
    let mut off_axis = 0f32;
    for _ in 0..180 {
        step(&mut w, 1);
        let x = w.joint_coordinate(j).unwrap();
        lo = lo.min(x);
        hi = hi.max(x);
        let p = w.position(b).unwrap();
        off_axis = off_axis.max(p.x.abs().max(p.z.abs()));
    }
    println!(
        "slider: travelled {lo:.5} .. {hi:.5} m against limits [-0.5, 0.5], off its axis <= {off_axis:.2e} m"
    );
    assert!(lo < -0.49, "it fell to the lower stop");
    assert!(lo >= -0.501 && hi <= 0.501, "{lo} {hi}");
    assert!(off_axis < 1e-3);
}

/// Two boxes welded side by side, dropped onto the floor at an angle:
/// after they land and settle their relative pose is the welded one within
/// 1 mm and 0.5°.
#[test]
fn welded_boxes_keep_their_relative_pose() {
    let mut w = world(PhysicsSettings::default());
    add_floor(&mut w);
    let tilt = Quat::from_rotation_z(0.3) * Quat::from_rotation_x(0.2);
    let (pa, pb) = (
        Vec3::new(0.0, 2.0, 0.0),
        Vec3::new(0.0, 2.0, 0.0) + tilt * Vec3::new(0.6, 0.0, 0.0),
    );
    let shape = Shape::cuboid(Vec3::new(0.3, 0.2, 0.25)).unwrap();
    let bs = |p: Vec3| BodyCreationSettings::new(shape, p, MotionType::Dynamic).with_rotation(tilt);
    let a = w.create_and_add_body(&bs(pa)).unwrap();
    let b = w.create_and_add_body(&bs(pb).with_density(3000.0)).unwrap();
    let mid = JointFrame::new((pa + pb) * 0.5, tilt * Vec3::X, tilt * Vec3::Y);
    let joint = JointSettings::new(
        Some(a),
        Some(b),
        w.joint_frame(Some(a), mid).unwrap(),
        w.joint_frame(Some(b), mid).unwrap(),
        JointKind::Fixed,
    );
    w.create_joint(&joint).unwrap();
    let rel0 = (
        w.rotation(a).unwrap().inverse() * (w.position(b).unwrap() - w.position(a).unwrap()),
        w.rotation(a).unwrap().inverse() * w.rotation(b).unwrap(),
    );
    let (mut worst_d, mut worst_a) = (0f32, 0f32);
    for _ in 0..180 {
        step(&mut w, 1);
        let (qa, qb) = (w.rotation(a).unwrap(), w.rotation(b).unwrap());
        let d = qa.inverse() * (w.position(b).unwrap() - w.position(a).unwrap());
        worst_d = worst_d.max((d - rel0.0).length());
        worst_a = worst_a.max((qa.inverse() * qb).angle_between(rel0.1));
    }
    let y = w.position(a).unwrap().y;
    println!(
        "weld: worst relative drift {:.3} mm, {:.3}°, resting at y {y:.3}",
        worst_d * 1e3,
        worst_a.to_degrees()
    );
    assert!(y < 1.0, "they fell and landed");
    assert!(worst_d < 1e-3 && worst_a.to_degrees() < 0.5);
}

/// Poses of every body of a scene world, in scene order.
fn poses(w: &PhysicsSystem, ids: &[BodyId]) -> Vec<(Vec3, Quat)> {
    ids.iter()
        .map(|&id| (w.position(id).unwrap(), w.rotation(id).unwrap()))
        .collect()
}

/// The chains scene: 64 chains of 20 links swing down from horizontal.
/// After 10 s no joint's anchors are more than 2 mm apart (the largest
/// stretch during the swing is printed too).
#[test]
fn chains_hold_together() {
    let scene = scenes::chains();
    let (mut w, ids) = scene.build(PhysicsSettings::default()).unwrap();
    let mut worst = 0f32;
    let mut asleep_at = None;
    for k in 0..(10.0 / DT) as u32 {
        scene.before_update(&mut w, &ids, k).unwrap();
        step(&mut w, 1);
        worst = worst.max(scene.joint_stretch(&poses(&w, &ids)));
        if asleep_at.is_none() && w.num_active_bodies() == 0 {
            asleep_at = Some(k);
        }
    }
    let end = scene.joint_stretch(&poses(&w, &ids));
    let lowest = ids
        .iter()
        .map(|&id| w.position(id).unwrap().y)
        .fold(f32::MAX, f32::min);
    println!(
        "chains: stretch after 10 s {:.4} mm (largest during the swing {:.4} mm), lowest link centre y {lowest:.3}, all asleep at step {asleep_at:?}",
        end * 1e3,
        worst * 1e3
    );
    assert!(end <= 2e-3, "{end}");
    assert!(lowest < 10.0 - 3.5, "the chains hang down");
}

/// A 10 kg box hanging from a chain of ten 0.1 kg links (mass ratio 100,
/// the case Gauss–Seidel cannot hold at 10 iterations: it sagged 0.52 m
/// before joint trees), hanging still for a second and then pushed
/// sideways at 3 m/s, so that it swings through ±40° on the chain for
/// 5 s: the chain's total stretch stays under 1 cm and nothing explodes.
#[test]
fn heavy_box_on_light_chain() {
    let mut w = world(PhysicsSettings::default());
    let link = Shape::capsule(0.1, 0.05).unwrap();
    let cube = Shape::cuboid(Vec3::splat(0.1)).unwrap();
    let mut prev = None;
    let mut bodies = Vec::new();
    let mut anchors = Vec::new();
    for k in 0..11 {
        let at = Vec3::new(0.0, 10.0 - 0.2 * k as f32, 0.0);
        let c = at - Vec3::new(0.0, 0.1, 0.0);
        let settings = if k < 10 {
            BodyCreationSettings::new(link, c, MotionType::Dynamic).with_mass(0.1)
        } else {
            BodyCreationSettings::new(cube, c, MotionType::Dynamic).with_mass(10.0)
        };
        let b = w
            .create_and_add_body(&settings.with_allow_sleeping(false))
            .unwrap();
        let fa = w.joint_frame(prev, JointFrame::at(at)).unwrap();
        let fb = w.joint_frame(Some(b), JointFrame::at(at)).unwrap();
        w.create_joint(&JointSettings::new(prev, Some(b), fa, fb, JointKind::Point))
            .unwrap();
        anchors.push((prev, fa.anchor, b, fb.anchor));
        prev = Some(b);
        bodies.push(b);
    }
    let world_point = |w: &PhysicsSystem, body: Option<BodyId>, local: Vec3| match body {
        Some(b) => w.position(b).unwrap() + w.rotation(b).unwrap() * local,
        None => local,
    };
    let box_id = bodies[10];
    let (mut worst, mut fastest, mut widest) = (0f32, 0f32, 0f32);
    for k in 0..(6.0 / DT) as usize {
        if k == 60 {
            w.set_linear_velocity(box_id, Vec3::new(3.0, 0.0, 0.0))
                .unwrap();
        }
        step(&mut w, 1);
        let total: f32 = anchors
            .iter()
            .map(|&(a, la, b, lb)| (world_point(&w, Some(b), lb) - world_point(&w, a, la)).length())
            .sum();
        worst = worst.max(total);
        fastest = fastest.max(w.linear_velocity(box_id).unwrap().length());
        let p = w.position(box_id).unwrap();
        widest = widest.max(p.x.atan2(10.0 - p.y));
    }
    println!(
        "heavy chain: largest total stretch {:.4} mm over 6 s, swinging to {:.1}°, box fastest {fastest:.2} m/s",
        worst * 1e3,
        widest.to_degrees()
    );
    assert!(widest.to_degrees() > 30.0, "it swings");
    assert!(worst < 0.01, "{worst}");
    assert!(fastest < 5.0, "no explosion: {fastest}");
}
