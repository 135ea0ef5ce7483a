//! Scalar and wide are one source for joints too: on random bundles that
//! mix every joint type (static, kinematic and dynamic sides, mass ratios
//! up to 1000, limits on either side or locked or violated, soft limits,
//! velocity and position motors at and below their force bounds, friction,
//! warm-start impulses outside the new bounds) the wide setup, velocity
//! iterations and position pushes give, lane by lane, the bits the scalar
//! path gives for that lane alone, on every wide lane type the CPU runs.

use super::batch::{JointBodyRows, JointDef, JointImpulses, JointPrestep};
use super::position::solve_position;
use super::prepare::prepare;
use super::solve::{solve, warm_start};
use crate::joint::store::{frame_rotation, kind};
use crate::math::{world_inverse_inertia, Quat, Vec3};
use crate::solver::bodies::PairVelocity;
use crate::solver::contact::property_tests::merge_halves;
use crate::solver::poses::PairPose;
use crate::test_rng::TestRng;
use archipelago_simd::{Half, Lane, One, Wide, LANES, Q4, V3};
use bytemuck::Zeroable;
use core::f32::consts::PI;

type Row3 = [[f32; LANES]; 3];

fn put3(row: &mut Row3, l: usize, v: Vec3) {
    row[0][l] = v.x;
    row[1][l] = v.y;
    row[2][l] = v.z;
}

fn put4(row: &mut [[f32; LANES]; 4], l: usize, q: Quat) {
    for (c, v) in q.to_array().into_iter().enumerate() {
        row[c][l] = v;
    }
}

fn unit_vec(r: &mut TestRng) -> Vec3 {
    Vec3::new(r.f(-1.0, 1.0), r.f(-1.0, 1.0), r.f(-1.0, 1.0)).normalize()
}

/// A random bundle: definitions, bodies and velocities, warm impulses.
struct Bundle {
    def: JointDef,
    rows: JointBodyRows,
    vel: [Row3; 4],
    imp: JointImpulses,
}

fn random_bundle(r: &mut TestRng) -> Bundle {
    let mut b = Bundle {
        def: JointDef::zeroed(),
        rows: JointBodyRows::zeroed(),
        vel: [[[0.0; LANES]; 3]; 4],
        imp: JointImpulses::zeroed(),
    };
    for l in 0..LANES {
        let d = &mut b.def;
        let k = r.below(6) as u32;
        d.used[l] = 1.0;
        d.kind[l] = k as f32;
        let on = |x: bool| x as u32 as f32;
        d.point[l] = on(matches!(
            k,
            kind::FIXED | kind::POINT | kind::HINGE | kind::SWING_TWIST
        ));
        d.dual[l] = on(k == kind::SLIDER);
        d.hinge[l] = on(k == kind::HINGE);
        d.rotation[l] = on(matches!(k, kind::FIXED | kind::SLIDER));
        let limited = match k {
            kind::DISTANCE | kind::SWING_TWIST => true,
            kind::HINGE | kind::SLIDER => r.below(4) != 0,
            _ => false,
        };
        d.limit[l] = on(limited);
        d.soft_limit[l] = on(k == kind::DISTANCE && r.below(2) == 0);
        // limits: on either side of where the joint is, locked, or wide
        let (lo, hi) = match (k, r.below(4)) {
            (kind::HINGE | kind::SWING_TWIST, 0) => (0.2, 0.2),
            (kind::HINGE | kind::SWING_TWIST, _) => {
                let lo = r.f(-PI, 0.5);
                (lo, r.f(lo, PI))
            }
            (kind::DISTANCE, 0) => (0.8, 0.8),
            (_, _) => {
                let lo = r.f(-0.5, 1.0);
                (lo, lo + r.f(0.0, 1.0))
            }
        };
        d.limits[0][l] = lo;
        d.limits[1][l] = hi;
        d.swing_cos[l] = r.f(0.0, PI).cos();
        d.limit_spring[0][l] = r.f(0.5, 10.0);
        d.limit_spring[1][l] = r.f(0.0, 2.0);
        let motor = if matches!(k, kind::HINGE | kind::SLIDER) {
            r.below(3)
        } else {
            0
        };
        d.motor_velocity[l] = on(motor == 1);
        d.motor_position[l] = on(motor == 2);
        d.motor_target[l] = r.f(-2.0, 2.0);
        // forces from tiny (the bound acts) to large
        d.motor_max[l] = if r.below(2) == 0 {
            r.f(0.0, 2.0)
        } else {
            r.f(10.0, 1e4)
        };
        d.motor_spring[0][l] = r.f(0.5, 10.0);
        d.motor_spring[1][l] = r.f(0.0, 2.0);
        d.friction[l] = if r.below(2) == 0 { 0.0 } else { r.f(0.0, 50.0) };
        let axis = unit_vec(r);
        let normal = axis.cross(unit_vec(r)).normalize();
        let fa = frame_rotation(axis, normal);
        let fb = if r.below(3) == 0 {
            fa
        } else {
            frame_rotation(
                unit_vec(r),
                Vec3::new(0.3, 1.0, 0.1)
                    .normalize()
                    .cross(Vec3::X)
                    .normalize(),
            )
        };
        put4(&mut d.frame_a, l, fa);
        put4(&mut d.frame_b, l, fb);
        put3(&mut d.local_a, l, unit_vec(r) * r.f(0.0, 0.8));
        put3(&mut d.local_b, l, unit_vec(r) * r.f(0.0, 0.8));
        // sides: a static or kinematic one at most
        let side = r.below(5);
        let (qa, qb) = (r.quat(), r.quat());
        let xa = Vec3::new(r.f(-5.0, 5.0), r.f(0.0, 5.0), r.f(-5.0, 5.0));
        let xb = xa + unit_vec(r) * r.f(0.0, 1.5);
        for (s, (x, q)) in [(xa, qa), (xb, qb)].into_iter().enumerate() {
            // side 0/1: A/B static; 2/3: A/B kinematic; 4: both dynamic
            let moving = side != s;
            let dynamic = moving && side != 2 + s;
            let (rows, st) = (&mut b.rows, &mut b.def.statics);
            let (rx, rq, ima, ia, sx, sq, stat) = if s == 0 {
                (
                    &mut rows.xa,
                    &mut rows.qa,
                    &mut rows.masses.inv_mass_a,
                    &mut rows.masses.ia,
                    &mut st.xa,
                    &mut st.qa,
                    &mut st.static_a,
                )
            } else {
                (
                    &mut rows.xb,
                    &mut rows.qb,
                    &mut rows.masses.inv_mass_b,
                    &mut rows.masses.ib,
                    &mut st.xb,
                    &mut st.qb,
                    &mut st.static_b,
                )
            };
            put3(rx, l, x);
            put4(rq, l, q);
            put3(sx, l, x);
            put4(sq, l, q);
            stat[l] = on(!moving);
            let inertia = if dynamic {
                ima[l] = 1.0 / r.f(1.0, 1000.0);
                let local =
                    Vec3::new(r.f(0.05, 1.0), r.f(0.05, 1.0), r.f(0.05, 1.0)) * ima[l] * 6.0;
                world_inverse_inertia(q, local)
            } else {
                ima[l] = 0.0;
                crate::math::Mat3::ZERO
            };
            put3(&mut ia[0], l, inertia.x_axis);
            put3(&mut ia[1], l, inertia.y_axis);
            put3(&mut ia[2], l, inertia.z_axis);
            if moving {
                put3(&mut b.vel[2 * s], l, unit_vec(r) * r.f(0.0, 5.0));
                put3(&mut b.vel[2 * s + 1], l, unit_vec(r) * r.f(0.0, 3.0));
            }
        }
        // warm impulses, some far outside what the rows allow now
        let imp = &mut b.imp;
        put3(&mut imp.point, l, unit_vec(r) * r.f(0.0, 20.0));
        put3(&mut imp.rotation, l, unit_vec(r) * r.f(0.0, 20.0));
        for x in imp.block.iter_mut().chain(imp.rows.iter_mut()) {
            x[l] = r.f(-30.0, 30.0);
        }
    }
    b
}

fn velocity<L: Lane>(l: L, v: &[Row3; 4]) -> PairVelocity<L::R> {
    PairVelocity {
        va: l.load3(&v[0]),
        wa: l.load3(&v[1]),
        vb: l.load3(&v[2]),
        wb: l.load3(&v[3]),
    }
}

fn pose<L: Lane>(l: L, rows: &JointBodyRows) -> PairPose<L::R> {
    let q = |f: &[[f32; LANES]; 4]| Q4 {
        x: l.load(&f[0]),
        y: l.load(&f[1]),
        z: l.load(&f[2]),
        w: l.load(&f[3]),
    };
    PairPose {
        xa: l.load3(&rows.xa),
        qa: q(&rows.qa),
        xb: l.load3(&rows.xb),
        qb: q(&rows.qb),
    }
}

/// Everything a bundle produces, stored back to lane arrays.
struct Out {
    prestep: JointPrestep,
    impulses: JointImpulses,
    vel: [Row3; 4],
    pos: [Row3; 2],
    rot: [[[f32; LANES]; 4]; 2],
}

/// Setup, warm start, 10 iterations and 2 position pushes on lane type
/// `l` over the lanes `l` covers (all, or one).
fn run<L: Lane>(l: L, b: &Bundle, out: &mut Out) {
    let dt = 1.0 / 60.0;
    out.prestep.masses = b.rows.masses;
    out.impulses = b.imp;
    prepare(l, &b.def, &b.rows, dt, &mut out.prestep, &mut out.impulses);
    let mut v = velocity(l, &b.vel);
    warm_start(l, &out.prestep, &out.impulses, &mut v);
    for _ in 0..10 {
        solve(l, &out.prestep, &mut out.impulses, &mut v);
    }
    for (k, side) in [v.va, v.wa, v.vb, v.wb].into_iter().enumerate() {
        l.store3(&mut out.vel[k], side);
    }
    let mut x = pose(l, &b.rows);
    for _ in 0..2 {
        solve_position(l, &b.def, &out.prestep, &mut x, 0.8);
    }
    l.store3(&mut out.pos[0], x.xa);
    l.store3(&mut out.pos[1], x.xb);
    for (k, q) in [x.qa, x.qb].into_iter().enumerate() {
        for (c, v) in [q.x, q.y, q.z, q.w].into_iter().enumerate() {
            l.store(&mut out.rot[k][c], v);
        }
    }
}

fn fresh() -> Out {
    Out {
        prestep: JointPrestep::zeroed(),
        impulses: JointImpulses::zeroed(),
        vel: [[[0.0; LANES]; 3]; 4],
        pos: [[[0.0; LANES]; 3]; 2],
        rot: [[[0.0; LANES]; 4]; 2],
    }
}

fn lane_bits(f: &Row3, l: usize) -> [u32; 3] {
    [f[0][l], f[1][l], f[2][l]].map(f32::to_bits)
}

#[test]
fn wide_and_scalar_joints_are_bit_identical_lane_by_lane() {
    let mut r = TestRng(1414);
    let (mut at_bound, mut soft, mut limit_on, mut kinds) = (0, 0, 0, [0usize; 6]);
    for _ in 0..400 {
        let b = random_bundle(&mut r);
        let halves = {
            let (mut lo, mut hi) = (fresh(), fresh());
            run(Half(0), &b, &mut lo);
            run(Half(1), &b, &mut hi);
            Out {
                prestep: merge_halves(&lo.prestep, &hi.prestep),
                impulses: merge_halves(&lo.impulses, &hi.impulses),
                vel: merge_halves(&lo.vel, &hi.vel),
                pos: merge_halves(&lo.pos, &hi.pos),
                rot: merge_halves(&lo.rot, &hi.rot),
            }
        };
        #[allow(unused_mut)]
        let mut wides = vec![
            ("portable", {
                let mut o = fresh();
                run(Wide, &b, &mut o);
                o
            }),
            ("halves", halves),
        ];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            let mut o = fresh();
            run(crate::solver::zmm::WideZmm, &b, &mut o);
            wides.push(("avx512", o));
        }
        for l in 0..LANES {
            let mut one = fresh();
            run(One(l), &b, &mut one);
            for (name, w) in &wides {
                for (k, (wv, ov)) in w.vel.iter().zip(&one.vel).enumerate() {
                    assert_eq!(
                        lane_bits(wv, l),
                        lane_bits(ov, l),
                        "{name}: lane {l} velocity {k}"
                    );
                }
                for (k, (wp, op)) in w.pos.iter().zip(&one.pos).enumerate() {
                    assert_eq!(
                        lane_bits(wp, l),
                        lane_bits(op, l),
                        "{name}: lane {l} position {k}"
                    );
                }
                for (k, (wq, oq)) in w.rot.iter().zip(&one.rot).enumerate() {
                    assert_eq!(
                        wq.map(|c| c[l].to_bits()),
                        oq.map(|c| c[l].to_bits()),
                        "{name}: lane {l} rotation {k}"
                    );
                }
                let wi: &[f32] = bytemuck::cast_slice(bytemuck::bytes_of(&w.impulses));
                let oi: &[f32] = bytemuck::cast_slice(bytemuck::bytes_of(&one.impulses));
                for (row, (a, o)) in wi.chunks(LANES).zip(oi.chunks(LANES)).enumerate() {
                    assert_eq!(
                        a[l].to_bits(),
                        o[l].to_bits(),
                        "{name}: lane {l} impulse row {row}"
                    );
                }
                let wp: &[f32] = bytemuck::cast_slice(bytemuck::bytes_of(&w.prestep));
                let op: &[f32] = bytemuck::cast_slice(bytemuck::bytes_of(&one.prestep));
                for (row, (a, o)) in wp.chunks(LANES).zip(op.chunks(LANES)).enumerate() {
                    assert_eq!(
                        a[l].to_bits(),
                        o[l].to_bits(),
                        "{name}: lane {l} prestep row {row}"
                    );
                }
            }
            kinds[b.def.kind[l] as usize] += 1;
            for (k, row) in one.prestep.rows.iter().enumerate() {
                let lambda = one.impulses.rows[k][l];
                if row.mass[l] > 0.0 {
                    limit_on += 1;
                    if lambda != 0.0 && (lambda == row.lo[l] || lambda == row.hi[l]) {
                        at_bound += 1;
                    }
                    if row.softness[l] > 0.0 {
                        soft += 1;
                    }
                }
            }
        }
    }
    println!("kinds {kinds:?}, rows in use {limit_on}, at a bound {at_bound}, soft {soft}");
    assert!(kinds.iter().all(|&n| n > 500), "every kind: {kinds:?}");
    assert!(at_bound > 200, "rows held at their bounds: {at_bound}");
    assert!(soft > 200, "soft rows: {soft}");
}

/// The setup's parts are what they say: the point block's `K⁻¹` inverts
/// the three rows' `J M⁻¹ Jᵀ`, and a solved bundle leaves every hard
/// equality part (no rows in use) with zero relative velocity.
#[test]
fn one_pass_stops_a_lone_point_joint() {
    let mut r = TestRng(7);
    for _ in 0..50 {
        let mut b = random_bundle(&mut r);
        for l in 0..LANES {
            b.def.kind[l] = kind::POINT as f32;
            b.def.point[l] = 1.0;
            b.def.dual[l] = 0.0;
            b.def.hinge[l] = 0.0;
            b.def.rotation[l] = 0.0;
            b.def.limit[l] = 0.0;
            b.def.motor_velocity[l] = 0.0;
            b.def.motor_position[l] = 0.0;
            b.def.friction[l] = 0.0;
        }
        let mut o = fresh();
        o.prestep.masses = b.rows.masses;
        o.impulses = b.imp;
        prepare(
            Wide,
            &b.def,
            &b.rows,
            1.0 / 60.0,
            &mut o.prestep,
            &mut o.impulses,
        );
        let mut v = velocity(Wide, &b.vel);
        solve(Wide, &o.prestep, &mut o.impulses, &mut v);
        let (ra, rb) = (
            Wide.load3(&o.prestep.point.ra),
            Wide.load3(&o.prestep.point.rb),
        );
        let rel: V3<_> = (v.vb + v.wb.cross(rb)) - (v.va + v.wa.cross(ra));
        for l in 0..LANES {
            let e = Vec3::new(rel.x.0[l], rel.y.0[l], rel.z.0[l]).length();
            let scale = Vec3::new(b.vel[0][0][l], b.vel[0][1][l], b.vel[0][2][l]).length() + 10.0;
            assert!(e < 1e-4 * scale, "lane {l}: relative anchor velocity {e}");
        }
    }
}
