//! Scalar and wide are one source: on random bundles (static, kinematic
//! and dynamic sides, mass ratios up to 1000, 1–4 points, face manifolds,
//! friction at its clamp, restitution, speculative points) the wide setup,
//! velocity iterations and position pushes give, lane by lane, the bits
//! the scalar path gives for that lane alone, on every wide lane type the
//! CPU runs (the portable bundle, the bundle as two halves of 8 lanes as
//! the AVX2 and baseline paths run it, and the AVX-512 one where present).

use super::batch::{ContactImpulses, ContactPrestep, PositionPrestep};
use super::position::solve_position;
use super::prepare::{prepare, SetupRows};
use super::solve::{solve, warm_start};
use crate::math::{perpendicular, world_inverse_inertia, Quat, Vec3};
use crate::settings::PhysicsSettings;
use crate::solver::bodies::PairVelocity;
use crate::solver::poses::PairPose;
use crate::test_rng::TestRng;
use archipelago_simd::{Half, Lane, One, Wide, HALF_BUNDLE, LANES, Q4, V3};
use bytemuck::{Pod, Zeroable};

fn unit_quat(r: &mut TestRng) -> Quat {
    Quat::from_xyzw(
        r.f(-1.0, 1.0),
        r.f(-1.0, 1.0),
        r.f(-1.0, 1.0),
        r.f(-1.0, 1.0),
    )
    .normalize()
}

fn unit_vec(r: &mut TestRng) -> Vec3 {
    Vec3::new(r.f(-1.0, 1.0), r.f(-1.0, 1.0), r.f(-1.0, 1.0)).normalize()
}

fn put3(row: &mut [[f32; LANES]; 3], l: usize, v: Vec3) {
    row[0][l] = v.x;
    row[1][l] = v.y;
    row[2][l] = v.z;
}

/// What kind of body a side is.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Static,
    Kinematic,
    Dynamic,
}

/// A random bundle of contact inputs: the rows, and the poses, inertias
/// and local points (which setup gathers into the position prestep).
fn random_rows(r: &mut TestRng) -> (SetupRows, PositionPrestep) {
    let mut rows = SetupRows::new();
    let mut pos = PositionPrestep::zeroed();
    for l in 0..LANES {
        let kind = |r: &mut TestRng| match r.below(5) {
            0 => Kind::Static,
            1 => Kind::Kinematic,
            _ => Kind::Dynamic,
        };
        let ka = kind(r);
        let kb = if ka == Kind::Dynamic {
            kind(r)
        } else {
            Kind::Dynamic
        };
        let (qa, qb) = (unit_quat(r), unit_quat(r));
        let xa = Vec3::new(r.f(-5.0, 5.0), r.f(0.0, 5.0), r.f(-5.0, 5.0));
        let n = unit_vec(r);
        let xb = xa + n * r.f(0.5, 1.5) + unit_vec(r) * 0.2;
        for (kind, q, x, ima, ia, v, w, st, rx, rq) in [
            (
                ka,
                qa,
                xa,
                &mut rows.ima,
                &mut rows.ia,
                &mut rows.va,
                &mut rows.wa,
                &mut pos.statics.static_a,
                &mut pos.statics.xa,
                &mut pos.statics.qa,
            ),
            (
                kb,
                qb,
                xb,
                &mut rows.imb,
                &mut rows.ib,
                &mut rows.vb,
                &mut rows.wb,
                &mut pos.statics.static_b,
                &mut pos.statics.xb,
                &mut pos.statics.qb,
            ),
        ] {
            put3(rx, l, x);
            for (c, value) in q.to_array().into_iter().enumerate() {
                rq[c][l] = value;
            }
            st[l] = (kind == Kind::Static) as u32 as f32;
            let inertia = if kind == Kind::Dynamic {
                // mass from 1 to 1000 kg, so ratios up to 1000
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
            let moving = kind != Kind::Static;
            put3(
                v,
                l,
                if moving {
                    unit_vec(r) * r.f(0.0, 5.0)
                } else {
                    Vec3::ZERO
                },
            );
            put3(
                w,
                l,
                if moving {
                    unit_vec(r) * r.f(0.0, 3.0)
                } else {
                    Vec3::ZERO
                },
            );
        }
        put3(&mut rows.normal, l, n);
        let count = 1 + r.below(4);
        rows.count[l] = count as f32;
        // a face (points on a plane across the normal) or scattered points
        let face = count >= 3 && r.below(3) != 0;
        let (t1, t2) = (perpendicular(n), n.cross(perpendicular(n)));
        let centre = (xa + xb) * 0.5;
        for k in 0..4 {
            let p = if face {
                centre + t1 * r.f(-0.5, 0.5) + t2 * r.f(-0.5, 0.5)
            } else {
                centre + unit_vec(r) * r.f(0.0, 0.5)
            };
            let sep = r.f(-0.05, 0.03);
            put3(
                &mut pos.local_a[k],
                l,
                qa.inverse() * (p - n * (0.5 * sep) - xa),
            );
            put3(
                &mut pos.local_b[k],
                l,
                qb.inverse() * (p + n * (0.5 * sep) - xb),
            );
            rows.separation[k][l] = sep;
            rows.normal_impulse[k][l] = if r.below(4) == 0 { 0.0 } else { r.f(0.0, 10.0) };
        }
        rows.friction_a[l] = r.f(0.0, 1.5);
        rows.friction_b[l] = r.f(0.0, 1.5);
        rows.restitution_a[l] = if r.below(2) == 0 { 0.0 } else { r.f(0.0, 1.0) };
        rows.restitution_b[l] = r.f(0.0, 0.5);
        // large warm friction impulses, so the clamp acts
        for f in rows.friction_impulse.iter_mut() {
            f[l] = r.f(-20.0, 20.0);
        }
    }
    (rows, pos)
}

fn pair<L: Lane>(l: L, rows: &SetupRows) -> PairVelocity<L::R> {
    PairVelocity {
        va: l.load3(&rows.va),
        wa: l.load3(&rows.wa),
        vb: l.load3(&rows.vb),
        wb: l.load3(&rows.wb),
    }
}

/// A bundle's results from one wide lane type, stored back to lane arrays.
struct WideOut {
    prestep: ContactPrestep,
    impulses: ContactImpulses,
    /// va, wa, vb, wb after the warm start and 10 iterations.
    vel: [[[f32; LANES]; 3]; 4],
    /// xa, xb, then qa, qb (x, y, z, w) after 2 position pushes.
    pos: [[[f32; LANES]; 3]; 2],
    rot: [[[f32; LANES]; 4]; 2],
}

/// Setup, warm start, 10 velocity iterations and 2 position pushes of one
/// bundle, all lanes at once on lane type `l`.
fn run_wide<L: Lane>(
    l: L,
    (rows, pp): &(SetupRows, PositionPrestep),
    s: &PhysicsSettings,
    dt: f32,
) -> WideOut {
    let (mut pw, mut iw) = (ContactPrestep::zeroed(), ContactImpulses::zeroed());
    prepare(l, rows, pp, s, dt, &mut pw, &mut iw);
    let mut v = pair(l, rows);
    warm_start(l, &pw, &iw, &mut v);
    for _ in 0..10 {
        solve(l, &pw, &mut iw, &mut v);
    }
    let q = |f: &[[f32; LANES]; 4]| Q4 {
        x: l.load(&f[0]),
        y: l.load(&f[1]),
        z: l.load(&f[2]),
        w: l.load(&f[3]),
    };
    let st = &pp.statics;
    let mut x = PairPose {
        xa: l.load3(&st.xa),
        qa: q(&st.qa),
        xb: l.load3(&st.xb),
        qb: q(&st.qb),
    };
    for _ in 0..2 {
        solve_position(l, &pw, pp, &mut x, s);
    }
    let mut out = WideOut {
        prestep: pw,
        impulses: iw,
        vel: [[[0.0; LANES]; 3]; 4],
        pos: [[[0.0; LANES]; 3]; 2],
        rot: [[[0.0; LANES]; 4]; 2],
    };
    for (k, side) in [v.va, v.wa, v.vb, v.wb].into_iter().enumerate() {
        l.store3(&mut out.vel[k], side);
    }
    l.store3(&mut out.pos[0], x.xa);
    l.store3(&mut out.pos[1], x.xb);
    for (k, r) in [x.qa, x.qb].into_iter().enumerate() {
        for (c, v) in [r.x, r.y, r.z, r.w].into_iter().enumerate() {
            l.store(&mut out.rot[k][c], v);
        }
    }
    out
}

/// Lanes `0..8` of every 16-lane row from `lo`, lanes `8..16` from `hi`:
/// a bundle solved as two halves, put together. `T` is made of rows
/// (`[f32; LANES]`) only.
pub(crate) fn merge_halves<T: Pod>(lo: &T, hi: &T) -> T {
    let mut out = *lo;
    let rows: &mut [[f32; LANES]] = bytemuck::cast_slice_mut(bytemuck::bytes_of_mut(&mut out));
    let his: &[[f32; LANES]] = bytemuck::cast_slice(bytemuck::bytes_of(hi));
    for (row, hi) in rows.iter_mut().zip(his) {
        row[HALF_BUNDLE..].copy_from_slice(&hi[HALF_BUNDLE..]);
    }
    out
}

/// The bundle as two halves of 8 lanes, one after the other (the AVX2 and
/// baseline paths' `Half` lanes).
fn run_halves(rows: &(SetupRows, PositionPrestep), s: &PhysicsSettings, dt: f32) -> WideOut {
    let (lo, hi) = (
        run_wide(Half(0), rows, s, dt),
        run_wide(Half(1), rows, s, dt),
    );
    WideOut {
        prestep: merge_halves(&lo.prestep, &hi.prestep),
        impulses: merge_halves(&lo.impulses, &hi.impulses),
        vel: merge_halves(&lo.vel, &hi.vel),
        pos: merge_halves(&lo.pos, &hi.pos),
        rot: merge_halves(&lo.rot, &hi.rot),
    }
}

/// The wide lane types this CPU runs: the portable bundle, its halves and,
/// with AVX-512F, the `zmm` one.
fn wide_outputs(
    rows: &(SetupRows, PositionPrestep),
    s: &PhysicsSettings,
    dt: f32,
) -> Vec<(&'static str, WideOut)> {
    #[allow(unused_mut)]
    let mut outs = vec![
        ("portable", run_wide(Wide, rows, s, dt)),
        ("halves", run_halves(rows, s, dt)),
    ];
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        outs.push(("avx512", run_wide(crate::solver::zmm::WideZmm, rows, s, dt)));
    }
    outs
}

fn bits(v: V3<f32>) -> [u32; 3] {
    [v.x, v.y, v.z].map(f32::to_bits)
}

fn lane_bits(f: &[[f32; LANES]; 3], l: usize) -> [u32; 3] {
    [f[0][l], f[1][l], f[2][l]].map(f32::to_bits)
}

#[test]
fn wide_and_scalar_are_bit_identical_lane_by_lane() {
    let s = PhysicsSettings::default();
    let dt = 1.0 / 60.0;
    let mut r = TestRng(2024);
    let (mut blocks, mut clamped, mut bounced) = (0, 0, 0);
    for _ in 0..300 {
        let input = random_rows(&mut r);
        let (rows, pp) = &input;
        let (mut ps, mut is) = (ContactPrestep::zeroed(), ContactImpulses::zeroed());
        for l in 0..LANES {
            prepare(One(l), rows, pp, &s, dt, &mut ps, &mut is);
        }
        let wides = wide_outputs(&input, &s, dt);
        let pw = &wides[0].1.prestep;
        blocks += pw.block.has.iter().filter(|&&h| h > 0.0).count();
        bounced += (0..LANES)
            .filter(|&l| (0..4).any(|k| pw.points[k].target[l] > 0.5))
            .count();
        // setup: the warm impulses before any iteration
        let (mut p0, mut i0) = (ContactPrestep::zeroed(), ContactImpulses::zeroed());
        prepare(Wide, rows, pp, &s, dt, &mut p0, &mut i0);
        assert_eq!(
            bytemuck::bytes_of(&i0),
            bytemuck::bytes_of(&is),
            "warm impulses"
        );
        for l in 0..LANES {
            // one lane: warm start, 10 iterations, 2 pushes
            let o = One(l);
            let mut vs = pair(o, rows);
            let mut imp = is;
            warm_start(o, &ps, &imp, &mut vs);
            for _ in 0..10 {
                solve(o, &ps, &mut imp, &mut vs);
            }
            let q = |f: &[[f32; LANES]; 4]| Q4 {
                x: o.load(&f[0]),
                y: o.load(&f[1]),
                z: o.load(&f[2]),
                w: o.load(&f[3]),
            };
            let st = &pp.statics;
            let mut xs = PairPose {
                xa: o.load3(&st.xa),
                qa: q(&st.qa),
                xb: o.load3(&st.xb),
                qb: q(&st.qb),
            };
            for _ in 0..2 {
                solve_position(o, &ps, pp, &mut xs, &s);
            }
            for (name, w) in &wides {
                assert_eq!(
                    bytemuck::bytes_of(&w.prestep),
                    bytemuck::bytes_of(&ps),
                    "{name}: prestep"
                );
                for (k, side) in [vs.va, vs.wa, vs.vb, vs.wb].into_iter().enumerate() {
                    assert_eq!(
                        lane_bits(&w.vel[k], l),
                        bits(side),
                        "{name}: lane {l} velocity {k}"
                    );
                }
                for k in 0..4 {
                    assert_eq!(
                        w.impulses.normal[k][l].to_bits(),
                        imp.normal[k][l].to_bits(),
                        "{name}: lane {l} point {k}"
                    );
                }
                for f in 0..2 {
                    assert_eq!(
                        w.impulses.friction[f][l].to_bits(),
                        imp.friction[f][l].to_bits()
                    );
                }
                assert_eq!(w.impulses.twist[l].to_bits(), imp.twist[l].to_bits());
                assert_eq!(
                    lane_bits(&w.pos[0], l),
                    bits(xs.xa),
                    "{name}: lane {l} position a"
                );
                assert_eq!(
                    lane_bits(&w.pos[1], l),
                    bits(xs.xb),
                    "{name}: lane {l} position b"
                );
                for (k, r) in [xs.qa, xs.qb].into_iter().enumerate() {
                    assert_eq!(
                        w.rot[k].map(|c| c[l].to_bits()),
                        [r.x, r.y, r.z, r.w].map(f32::to_bits),
                        "{name}: lane {l} rotation {k}"
                    );
                }
            }
            let sum: f32 = (0..4).map(|k| imp.normal[k][l]).sum();
            let f = (imp.friction[0][l].powi(2) + imp.friction[1][l].powi(2)).sqrt();
            if f > 0.0 && (f - ps.friction[l] * sum).abs() < 1e-3 * f.max(1.0) {
                clamped += 1;
            }
        }
    }
    // the random bundles reached every path the test is about
    assert!(blocks > 300, "face blocks: {blocks}");
    assert!(clamped > 100, "friction at its clamp: {clamped}");
    assert!(bounced > 100, "restitution targets: {bounced}");
}
