//! Setup (prepare) of a bundle of contact constraints, written once over
//! [`Lane`] like the velocity rows: lever arms, effective masses and the
//! target normal velocities (restitution or the speculative bias, from the
//! velocities before any warm start), the friction rows at the centre of
//! the points, the twist row, and the face block of a face manifold.
//!
//! [`gather`] copies each lane's inputs (the two bodies' poses, masses,
//! inertias, materials and solver velocities, and the manifold) into rows;
//! [`prepare`] computes the bundle from them. Every expression follows the
//! scalar solver it replaced operation for operation (glam's `Vec3`,
//! `Mat3` and SSE `Quat * Vec3` orders, including the fused product in the
//! SSE cross), so wide and scalar setups agree bit for bit, and with the
//! state hashes of before.

use super::batch::{
    BundleBodies, ContactImpulses, ContactPrestep, PositionPrestep, Row, Row3, POINTS,
};
use crate::body::{Bodies, MotionType};
use crate::narrowphase::Manifold;
use crate::settings::PhysicsSettings;
use crate::solver::bodies::BodyVelocity;
use crate::solver::layout::PADDING;
use crate::solver::parts::{load_m3, store_m3};
use crate::solver::poses::load_q;
use archipelago_simd::{Lane, Real, LANES, M3, V3};

/// A face block is used only where the targets are affine over the face
/// (always true for resting and planar speculative contacts): worst misfit
/// allowed, in m/s.
const BLOCK_TARGET_FIT: f32 = 1e-4;

/// One bundle's inputs, a row per value.
///
/// The inputs the position solve also reads (the poses and the manifolds'
/// local points) are gathered straight into the bundle's
/// [`PositionPrestep`] instead, which setup then reads: copying them there
/// afterwards was 3.7 KB a bundle.
pub(crate) struct SetupRows {
    pub(crate) ima: Row,
    pub(crate) imb: Row,
    /// World inverse inertias by columns.
    pub(crate) ia: [Row3; 3],
    pub(crate) ib: [Row3; 3],
    pub(crate) friction_a: Row,
    pub(crate) friction_b: Row,
    pub(crate) restitution_a: Row,
    pub(crate) restitution_b: Row,
    pub(crate) va: Row3,
    pub(crate) wa: Row3,
    pub(crate) vb: Row3,
    pub(crate) wb: Row3,
    pub(crate) normal: Row3,
    pub(crate) count: Row,
    pub(crate) separation: [Row; POINTS],
    pub(crate) normal_impulse: [Row; POINTS],
    pub(crate) friction_impulse: [Row; 3],
}

impl SetupRows {
    pub fn new() -> Self {
        let z = [0.0; LANES];
        let z3 = [z; 3];
        Self {
            ima: z,
            imb: z,
            ia: [z3; 3],
            ib: [z3; 3],
            friction_a: z,
            friction_b: z,
            restitution_a: z,
            restitution_b: z,
            va: z3,
            wa: z3,
            vb: z3,
            wb: z3,
            normal: z3,
            count: z,
            separation: [z; POINTS],
            normal_impulse: [z; POINTS],
            friction_impulse: [z; 3],
        }
    }
}

fn put3(row: &mut Row3, lane: usize, v: [f32; 3]) {
    row[0][lane] = v[0];
    row[1][lane] = v[1];
    row[2][lane] = v[2];
}

/// Copies the inputs of the manifolds in `slots` (one bundle; [`PADDING`]
/// for a padding lane) into `rows` and `pos` (what the position solve
/// reads too), and their bodies' solver slots into `refs` (static bodies
/// and padding at `zero`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather(
    slots: &[u32; LANES],
    bodies: &Bodies,
    manifolds: &[Manifold],
    vel: &[BodyVelocity],
    zero: usize,
    rows: &mut SetupRows,
    pos: &mut PositionPrestep,
    refs: &mut BundleBodies,
) {
    let st = &mut pos.statics;
    for (lane, &mi) in slots.iter().enumerate() {
        if mi == PADDING {
            // No points, no mass; a unit normal and rotation and zero
            // points, so nothing computed for the lane is NaN (the buffer
            // holds whatever an earlier step left in it).
            refs.a[lane] = zero as u32;
            refs.b[lane] = zero as u32;
            rows.count[lane] = 0.0;
            st.static_a[lane] = 0.0;
            st.static_b[lane] = 0.0;
            rows.ima[lane] = 0.0;
            rows.imb[lane] = 0.0;
            put3(&mut rows.normal, lane, [0.0, 1.0, 0.0]);
            put3(&mut st.xa, lane, [0.0; 3]);
            put3(&mut st.xb, lane, [0.0; 3]);
            for q in [&mut st.qa, &mut st.qb] {
                for (c, v) in q.iter_mut().zip([0.0, 0.0, 0.0, 1.0]) {
                    c[lane] = v;
                }
            }
            for c in 0..3 {
                put3(&mut rows.ia[c], lane, [0.0; 3]);
                put3(&mut rows.ib[c], lane, [0.0; 3]);
            }
            for k in 0..POINTS {
                put3(&mut pos.local_a[k], lane, [0.0; 3]);
                put3(&mut pos.local_b[k], lane, [0.0; 3]);
            }
            continue;
        }
        let m = &manifolds[mi as usize];
        let (a, b) = (m.pair.a as usize, m.pair.b as usize);
        let slot = |i: usize| {
            if bodies.motion(i) == MotionType::Static {
                zero
            } else {
                i
            }
        };
        let (sa, sb) = (slot(a), slot(b));
        refs.a[lane] = sa as u32;
        refs.b[lane] = sb as u32;
        st.static_a[lane] = (sa == zero) as u32 as f32;
        st.static_b[lane] = (sb == zero) as u32 as f32;
        put3(&mut st.xa, lane, bodies.position.get(a));
        put3(&mut st.xb, lane, bodies.position.get(b));
        for (c, (&qa, &qb)) in bodies.rotation[a]
            .iter()
            .zip(&bodies.rotation[b])
            .enumerate()
        {
            st.qa[c][lane] = qa;
            st.qb[c][lane] = qb;
        }
        rows.ima[lane] = bodies.inv_mass[a];
        rows.imb[lane] = bodies.inv_mass[b];
        let (ia, ib) = (&bodies.inv_inertia_world[a], &bodies.inv_inertia_world[b]);
        for c in 0..3 {
            put3(
                &mut rows.ia[c],
                lane,
                [ia[3 * c], ia[3 * c + 1], ia[3 * c + 2]],
            );
            put3(
                &mut rows.ib[c],
                lane,
                [ib[3 * c], ib[3 * c + 1], ib[3 * c + 2]],
            );
        }
        rows.friction_a[lane] = bodies.friction[a];
        rows.friction_b[lane] = bodies.friction[b];
        rows.restitution_a[lane] = bodies.restitution[a];
        rows.restitution_b[lane] = bodies.restitution[b];
        let (va, vb) = (&vel[sa], &vel[sb]);
        put3(&mut rows.va, lane, va.lin.to_array());
        put3(&mut rows.wa, lane, va.ang.to_array());
        put3(&mut rows.vb, lane, vb.lin.to_array());
        put3(&mut rows.wb, lane, vb.ang.to_array());
        put3(&mut rows.normal, lane, m.normal.to_array());
        rows.count[lane] = m.count as f32;
        for k in 0..POINTS {
            put3(&mut pos.local_a[k], lane, m.local_a[k].to_array());
            put3(&mut pos.local_b[k], lane, m.local_b[k].to_array());
            rows.separation[k][lane] = m.separation[k];
            rows.normal_impulse[k][lane] = m.normal_impulse[k];
        }
        for (r, &f) in rows.friction_impulse.iter_mut().zip(&m.friction_impulse) {
            r[lane] = f;
        }
    }
}

/// A constraint row along `axis` at lever arms `ra`, `rb`: `r × axis` on
/// both sides, the same times the world inverse inertias, and
/// `1 / (J M⁻¹ Jᵀ)` (0 where that is not positive).
pub(crate) struct AxisRow<R> {
    pub ra_x: V3<R>,
    pub rb_x: V3<R>,
    pub ia_ra_x: V3<R>,
    pub ib_rb_x: V3<R>,
    pub mass: R,
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn axis_row<R: Real>(
    ra: V3<R>,
    rb: V3<R>,
    axis: V3<R>,
    ima: R,
    imb: R,
    ia: &M3<R>,
    ib: &M3<R>,
) -> AxisRow<R> {
    let ra_x = ra.cross(axis);
    let rb_x = rb.cross(axis);
    let ia_ra_x = ia.mul_vec(ra_x);
    let ib_rb_x = ib.mul_vec(rb_x);
    let k = ima + imb + ia_ra_x.dot(ra_x) + ib_rb_x.dot(rb_x);
    let zero = R::zero();
    AxisRow {
        ra_x,
        rb_x,
        ia_ra_x,
        ib_rb_x,
        mass: R::select(k.gt(zero), R::splat(1.0) / k, zero),
    }
}

/// A unit vector perpendicular to the unit `n` (`math::perpendicular`).
#[inline(always)]
fn perpendicular<R: Real>(n: V3<R>) -> V3<R> {
    let zero = R::zero();
    let by_x = V3::new(n.z, zero, -n.x).div_by((n.x * n.x + n.z * n.z).sqrt());
    let by_y = V3::new(zero, n.z, -n.y).div_by((n.y * n.y + n.z * n.z).sqrt());
    V3::select(n.x.abs().gt(n.y.abs()), by_x, by_y)
}

/// The reduced normal block of a face manifold (see `batch.rs` and the
/// solve): valid where the points span a plane, the targets are affine
/// over it and `K3` is well conditioned.
pub(crate) struct FaceBlock<R: Real> {
    pub valid: R::Mask,
    pub ra_x: V3<R>,
    pub rb_x: V3<R>,
    pub k3_inv: M3<R>,
    pub u_target: V3<R>,
    pub a_cols: [V3<R>; POINTS],
    pub p: [V3<R>; POINTS],
}

/// The face block's three directions (the normal at the centre, the turns
/// about `t2` and `t1`) through each body's world inverse inertia. Setup
/// builds `K3` from them and each iteration applies the block's impulse
/// through them: the same products both times, so the same bits.
pub(crate) struct BlockArms<R> {
    pub ia_ra_x: V3<R>,
    pub ia_t1: V3<R>,
    pub ia_t2: V3<R>,
    pub ib_rb_x: V3<R>,
    pub ib_t1: V3<R>,
    pub ib_t2: V3<R>,
}

#[inline(always)]
pub(crate) fn block_arms<R: Real>(
    ia: &M3<R>,
    ib: &M3<R>,
    ra_x: V3<R>,
    rb_x: V3<R>,
    t1: V3<R>,
    t2: V3<R>,
) -> BlockArms<R> {
    BlockArms {
        ia_ra_x: ia.mul_vec(ra_x),
        ia_t1: ia.mul_vec(t1),
        ia_t2: ia.mul_vec(t2),
        ib_rb_x: ib.mul_vec(rb_x),
        ib_t1: ib.mul_vec(t1),
        ib_t2: ib.mul_vec(t2),
    }
}

/// Whether point `k` exists in the lane.
#[inline(always)]
fn has_point<R: Real>(count: R, k: usize) -> R::Mask {
    count.gt(R::splat(k as f32))
}

/// Builds the face block (see [`FaceBlock`]); `mids` are the points'
/// midpoints, `targets` their target normal velocities.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn face_block<R: Real>(
    count: R,
    mids: &[V3<R>; POINTS],
    targets: &[R; POINTS],
    centre: V3<R>,
    ra: V3<R>,
    rb: V3<R>,
    n: V3<R>,
    t1: V3<R>,
    t2: V3<R>,
    ima: R,
    imb: R,
    ia: &M3<R>,
    ib: &M3<R>,
) -> FaceBlock<R> {
    let zero = R::zero();
    let one = R::splat(1.0);
    // A = rows (1, d1_k, d2_k); with d measured from the centroid.
    let mut a_cols = [V3::zero(); POINTS];
    for (k, c) in a_cols.iter_mut().enumerate() {
        let d = mids[k] - centre;
        *c = V3::select(
            has_point(count, k),
            V3::new(one, d.dot(t1), d.dot(t2)),
            V3::zero(),
        );
    }
    let mut aat = M3 {
        x_axis: V3::zero(),
        y_axis: V3::zero(),
        z_axis: V3::zero(),
    };
    for (k, &c) in a_cols.iter().enumerate() {
        let next = aat.add(&M3::outer(c, c));
        let has = has_point(count, k);
        aat = M3 {
            x_axis: V3::select(has, next.x_axis, aat.x_axis),
            y_axis: V3::select(has, next.y_axis, aat.y_axis),
            z_axis: V3::select(has, next.z_axis, aat.z_axis),
        };
    }
    // Collinear points: the face has no second in-plane direction.
    let spread = aat.y_axis.y * aat.z_axis.z - aat.z_axis.y * aat.y_axis.z;
    let mut valid = R::and(count.ge(R::splat(3.0)), spread.gt(R::splat(1e-8)));
    let g = aat.inverse();
    let mut p = [V3::zero(); POINTS];
    for (k, pk) in p.iter_mut().enumerate() {
        *pk = V3::select(has_point(count, k), g.mul_vec(a_cols[k]), V3::zero());
    }
    // Affine fit of the point targets: u_t = G A t.
    let mut at = V3::zero();
    for (k, &c) in a_cols.iter().enumerate() {
        at = V3::select(has_point(count, k), at + c.scale(targets[k]), at);
    }
    let u_target = g.mul_vec(at);
    let mut misfit = zero;
    for (k, &c) in a_cols.iter().enumerate() {
        let x = (c.dot(u_target) - targets[k]).abs();
        // `f32::max(misfit, x)`: a NaN `x` leaves the misfit as it was
        let bigger = R::and(has_point(count, k), x.gt(misfit));
        misfit = R::select(bigger, x, misfit);
    }
    valid = R::and(valid, R::not(misfit.gt(R::splat(BLOCK_TARGET_FIT))));
    let ra_x = ra.cross(n);
    let rb_x = rb.cross(n);
    let BlockArms {
        ia_ra_x,
        ia_t1,
        ia_t2,
        ib_rb_x,
        ib_t1,
        ib_t2,
    } = block_arms(ia, ib, ra_x, rb_x, t1, t2);
    let kcc = ima + imb + ia_ra_x.dot(ra_x) + ib_rb_x.dot(rb_x);
    let kc1 = -(ia_ra_x + ib_rb_x).dot(t2);
    let kc2 = (ia_ra_x + ib_rb_x).dot(t1);
    let k11 = (ia_t2 + ib_t2).dot(t2);
    let k22 = (ia_t1 + ib_t1).dot(t1);
    let k12 = -(ia_t1 + ib_t1).dot(t2);
    let k3 = M3 {
        x_axis: V3::new(kcc, kc1, kc2),
        y_axis: V3::new(kc1, k11, k12),
        z_axis: V3::new(kc2, k12, k22),
    };
    // Relative to its scale, a singular K3 means a body pair that cannot
    // rotate (infinite inertia on both sides): leave it to Gauss–Seidel.
    // So does a determinant below the normal floats (a 1e6 m box has
    // inverse inertias near 1e-22, and their product underflows): its
    // inverse would overflow.
    let det = k3.determinant();
    let tiny = R::splat(1e-30);
    let scale = R::splat(1e-12) * kcc * k11.max(tiny) * k22.max(tiny);
    let conditioned = R::and(det.finite(), det.gt(scale));
    valid = R::and(valid, conditioned);
    valid = R::and(valid, R::not(det.lt(R::splat(f32::MIN_POSITIVE))));
    valid = R::and(valid, R::and(k11.gt(zero), k22.gt(zero)));
    let k3_inv = k3.inverse();
    valid = R::and(valid, k3_inv.finite());
    FaceBlock {
        valid,
        ra_x,
        rb_x,
        k3_inv,
        u_target,
        a_cols,
        p,
    }
}

/// Computes a bundle's (or one lane's) constraints from its input rows
/// (`rows`, and the poses, inertias and local points in `pos`) into its
/// prestep and, from the manifolds' warm-start impulses, its impulses.
// Inlined whole into each stage's loop per instruction set (`dispatch.rs`).
// In the unit-test build, one out-of-line copy per lane type instead, which
// the property tests then share with the step rather than compiling their
// own (those copies were a third of that build; the bits are the same).
#[cfg_attr(not(test), inline(always))]
#[cfg_attr(test, inline(never))]
pub(crate) fn prepare<L: Lane>(
    l: L,
    rows: &SetupRows,
    pos: &PositionPrestep,
    s: &PhysicsSettings,
    dt: f32,
    p: &mut ContactPrestep,
    imp: &mut ContactImpulses,
) {
    let zero = L::R::zero();
    let (xa, xb) = (l.load3(&pos.statics.xa), l.load3(&pos.statics.xb));
    let (qa, qb) = (load_q(l, &pos.statics.qa), load_q(l, &pos.statics.qb));
    let (ima, imb) = (l.load(&rows.ima), l.load(&rows.imb));
    let (ia, ib) = (load_m3(l, &rows.ia), load_m3(l, &rows.ib));
    let n = l.load3(&rows.normal);
    let t1 = perpendicular(n);
    let t2 = n.cross(t1);
    // Jolt's combination rules: geometric mean friction, max restitution.
    let friction = (l.load(&rows.friction_a) * l.load(&rows.friction_b)).sqrt();
    let restitution = l.load(&rows.restitution_a).max(l.load(&rows.restitution_b));
    let count = l.load(&rows.count);
    let (va, wa, vb, wb) = (
        l.load3(&rows.va),
        l.load3(&rows.wa),
        l.load3(&rows.vb),
        l.load3(&rows.wb),
    );
    let half = L::R::splat(0.5);
    let bounce = L::R::splat(-s.min_velocity_for_restitution);
    let dt = L::R::splat(dt);
    let mut mids = [V3::zero(); POINTS];
    let mut targets = [zero; POINTS];
    for k in 0..POINTS {
        let has = has_point(count, k);
        // Lever arms to the midpoint between the two surfaces (Jolt).
        let mid = ((xa + qa.rotate(l.load3(&pos.local_a[k])))
            + (xb + qb.rotate(l.load3(&pos.local_b[k]))))
        .scale(half);
        let row = axis_row(mid - xa, mid - xb, n, ima, imb, &ia, &ib);
        let vn = n.dot(vb - va) + row.rb_x.dot(wb) - row.ra_x.dot(wa);
        let sep = l.load(&rows.separation[k]);
        let restitute = L::R::and(restitution.gt(zero), vn.lt(bounce));
        // Speculative contact: may close the gap this step, no more.
        let target = L::R::select(restitute, -restitution * vn, -sep.max(zero) / dt);
        mids[k] = V3::select(has, mid, V3::zero());
        targets[k] = L::R::select(has, target, zero);
        let pr = &mut p.points[k];
        l.store3(&mut pr.ra_x, V3::select(has, row.ra_x, V3::zero()));
        l.store3(&mut pr.rb_x, V3::select(has, row.rb_x, V3::zero()));
        l.store(&mut pr.mass, L::R::select(has, row.mass, zero));
        l.store(&mut pr.target, targets[k]);
        l.store(
            &mut imp.normal[k],
            L::R::select(has, l.load(&rows.normal_impulse[k]), zero),
        );
    }
    // The centre of the points (glam's `Vec3` sum from zero) and their
    // mean distance from it (`f32` sum from -0).
    let divisor = count.max(L::R::splat(1.0));
    let mut sum = V3::zero();
    for (k, &m) in mids.iter().enumerate() {
        sum = V3::select(has_point(count, k), sum + m, sum);
    }
    let centre = sum.div_by(divisor);
    let mut radius = L::R::splat(-0.0);
    for (k, &m) in mids.iter().enumerate() {
        let d = (m - centre).length_squared().sqrt();
        radius = L::R::select(has_point(count, k), radius + d, radius);
    }
    let twist_radius = radius / divisor;
    let (ra, rb) = (centre - xa, centre - xb);
    for (r, t) in [(0, t1), (1, t2)] {
        let row = axis_row(ra, rb, t, ima, imb, &ia, &ib);
        let fr = &mut p.friction_rows[r];
        l.store3(&mut fr.ra_x, row.ra_x);
        l.store3(&mut fr.rb_x, row.rb_x);
        l.store(&mut fr.mass, row.mass);
        l.store(&mut imp.friction[r], l.load(&rows.friction_impulse[r]));
    }
    let (ia_n, ib_n) = (ia.mul_vec(n), ib.mul_vec(n));
    let k_twist = ia_n.dot(n) + ib_n.dot(n);
    store_m3(l, &mut p.ia, ia);
    store_m3(l, &mut p.ib, ib);
    l.store(
        &mut p.twist_mass,
        L::R::select(k_twist.gt(zero), L::R::splat(1.0) / k_twist, zero),
    );
    l.store(&mut p.twist_radius, twist_radius);
    l.store(&mut imp.twist, l.load(&rows.friction_impulse[2]));
    l.store3(&mut p.normal, n);
    l.store3(&mut p.tangent1, t1);
    l.store3(&mut p.tangent2, t2);
    l.store(&mut p.inv_mass_a, ima);
    l.store(&mut p.inv_mass_b, imb);
    l.store(&mut p.friction, friction);
    l.store(&mut p.count, count);

    let fb = face_block(
        count, &mids, &targets, centre, ra, rb, n, t1, t2, ima, imb, &ia, &ib,
    );
    let v = fb.valid;
    let keep = |x: V3<L::R>| V3::select(v, x, V3::zero());
    let b = &mut p.block;
    l.store(&mut b.has, L::R::select(v, L::R::splat(1.0), zero));
    l.store3(&mut b.ra_x, keep(fb.ra_x));
    l.store3(&mut b.rb_x, keep(fb.rb_x));
    l.store3(&mut b.k3_inv[0], keep(fb.k3_inv.x_axis));
    l.store3(&mut b.k3_inv[1], keep(fb.k3_inv.y_axis));
    l.store3(&mut b.k3_inv[2], keep(fb.k3_inv.z_axis));
    l.store3(&mut b.u_target, keep(fb.u_target));
    // Warm-started point impulses as a reduced impulse `A λ`.
    let mut f = V3::zero();
    for k in 0..POINTS {
        l.store3(&mut b.p[k], keep(fb.p[k]));
        l.store3(&mut p.block_a_cols[k], keep(fb.a_cols[k]));
        let next = f + fb.a_cols[k].scale(l.load(&imp.normal[k]));
        f = V3::select(has_point(count, k), next, f);
    }
    l.store3(&mut imp.block_f, keep(f));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{perpendicular as perpendicular_glam, world_inverse_inertia, Quat, Vec3};

    fn v(g: Vec3) -> V3<f32> {
        V3::new(g.x, g.y, g.z)
    }

    fn m(g: crate::math::Mat3) -> M3<f32> {
        M3 {
            x_axis: v(g.x_axis),
            y_axis: v(g.y_axis),
            z_axis: v(g.z_axis),
        }
    }

    fn glam(x: V3<f32>) -> Vec3 {
        Vec3::new(x.x, x.y, x.z)
    }

    /// The reduced coordinates are exact: every point's normal velocity is
    /// `A_kᵀ u`, and a reduced impulse `f` moves the bodies exactly as the
    /// per-point impulses `λ_k = P_k · f` would through their rows.
    #[test]
    fn face_block_reduced_coordinates_match_point_rows() {
        let n = Vec3::new(0.1, 1.0, -0.2).normalize();
        let t1 = perpendicular_glam(n);
        let t2 = n.cross(t1);
        assert_eq!(glam(perpendicular(v(n))), t1);
        let (xa, xb) = (Vec3::new(0.3, -0.6, 0.1), Vec3::new(-0.2, 0.55, 0.25));
        let rot = Quat::from_rotation_x(0.4) * Quat::from_rotation_y(-0.7);
        let ia = world_inverse_inertia(rot, Vec3::new(0.006, 0.004, 0.005));
        let ib = world_inverse_inertia(rot.inverse(), Vec3::new(0.01, 0.02, 0.015));
        let (ima, imb) = (0.001, 0.002);
        // four points of a skewed quad in the contact plane (plus a little
        // normal offset, which must not matter)
        let centre0 = Vec3::new(0.05, 0.0, 0.1);
        let mids: [Vec3; 4] = [(0.5, 0.4), (-0.45, 0.5), (-0.5, -0.35), (0.4, -0.5)]
            .iter()
            .enumerate()
            .map(|(k, &(a, b))| centre0 + t1 * a + t2 * b + n * (0.001 * k as f32))
            .collect::<Vec<_>>()
            .try_into()
            .unwrap();
        let centre = mids.iter().copied().sum::<Vec3>() / 4.0;
        let rows: Vec<AxisRow<f32>> = mids
            .iter()
            .map(|&p| axis_row(v(p - xa), v(p - xb), v(n), ima, imb, &m(ia), &m(ib)))
            .collect();
        let block = face_block(
            4.0,
            &mids.map(v),
            &[0.0; 4],
            v(centre),
            v(centre - xa),
            v(centre - xb),
            v(n),
            v(t1),
            v(t2),
            ima,
            imb,
            &m(ia),
            &m(ib),
        );
        assert!(block.valid, "a quad face has a block");
        let (va, wa, vb, wb) = (
            Vec3::new(0.3, -1.0, 0.2),
            Vec3::new(0.5, 0.1, -0.3),
            Vec3::new(-0.2, 0.4, 0.1),
            Vec3::new(-0.1, 0.7, 0.2),
        );
        let dw = wb - wa;
        let u = Vec3::new(
            n.dot(vb - va) + glam(block.rb_x).dot(wb) - glam(block.ra_x).dot(wa),
            -t2.dot(dw),
            t1.dot(dw),
        );
        for (k, r) in rows.iter().enumerate() {
            let direct = n.dot(vb - va) + glam(r.rb_x).dot(wb) - glam(r.ra_x).dot(wa);
            assert!(
                (direct - glam(block.a_cols[k]).dot(u)).abs() < 1e-4,
                "point {k}"
            );
        }
        // apply a reduced impulse both ways
        let df = Vec3::new(3.0, 0.4, -0.7);
        let g = |x| glam(x);
        let arms = block_arms(&m(ia), &m(ib), block.ra_x, block.rb_x, v(t1), v(t2));
        let wa_block = wa + g(arms.ia_t2) * df.y - g(arms.ia_t1) * df.z - g(arms.ia_ra_x) * df.x;
        let wb_block = wb + g(arms.ib_rb_x) * df.x - g(arms.ib_t2) * df.y + g(arms.ib_t1) * df.z;
        let (mut wa_rows, mut wb_rows, mut va_rows) = (wa, wb, va);
        let mut total = 0.0;
        for (k, r) in rows.iter().enumerate() {
            let l = g(block.p[k]).dot(df);
            total += l;
            va_rows -= n * (l * ima);
            wa_rows -= g(r.ia_ra_x) * l;
            wb_rows += g(r.ib_rb_x) * l;
        }
        assert!((total - df.x).abs() < 1e-4);
        assert!((va_rows - (va - n * (df.x * ima))).length() < 1e-5);
        assert!(
            (wa_rows - wa_block).length() < 1e-4,
            "{wa_rows} vs {wa_block}"
        );
        assert!(
            (wb_rows - wb_block).length() < 1e-4,
            "{wb_rows} vs {wb_block}"
        );
        // a block step lands every point on its target at once
        let k3_inv = crate::math::Mat3::from_cols(
            g(block.k3_inv.x_axis),
            g(block.k3_inv.y_axis),
            g(block.k3_inv.z_axis),
        );
        let f = k3_inv * (g(block.u_target) - u);
        let (mut va2, mut wa2, mut vb2, mut wb2) = (va, wa, vb, wb);
        va2 -= n * (f.x * ima);
        vb2 += n * (f.x * imb);
        wa2 += g(arms.ia_t2) * f.y - g(arms.ia_t1) * f.z - g(arms.ia_ra_x) * f.x;
        wb2 += g(arms.ib_rb_x) * f.x - g(arms.ib_t2) * f.y + g(arms.ib_t1) * f.z;
        for r in &rows {
            let vel = n.dot(vb2 - va2) + g(r.rb_x).dot(wb2) - g(r.ra_x).dot(wa2);
            assert!(vel.abs() < 1e-4);
        }
    }

    #[test]
    fn collinear_points_have_no_block() {
        let n = Vec3::Y;
        let (t1, t2) = (perpendicular_glam(n), n.cross(perpendicular_glam(n)));
        let mids = [
            Vec3::new(-0.5, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
        ];
        let ia = crate::math::Mat3::from_diagonal(Vec3::splat(0.1));
        let centre = Vec3::new(0.25, 0.0, 0.0);
        let block = face_block(
            4.0,
            &mids.map(v),
            &[0.0; 4],
            v(centre),
            v(centre),
            v(centre - Vec3::Y),
            v(n),
            v(t1),
            v(t2),
            1.0,
            1.0,
            &m(ia),
            &m(ia),
        );
        assert!(!block.valid);
    }
}
