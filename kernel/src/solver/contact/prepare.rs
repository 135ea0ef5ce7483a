//! Setup of one contact constraint: lever arms, effective masses and the
//! target normal velocities (restitution or the speculative bias, from the
//! velocities before any warm start), the friction rows at the centre of
//! the points, the twist row, and the face block of a face manifold; then
//! written into its lane of a bundle ([`write_lane`]).

use super::batch::{BundleBodies, ContactImpulses, ContactPrestep, Row, Row3};
use crate::body::{Bodies, MotionType};
use crate::collide::MAX_POINTS;
use crate::math::{perpendicular, Mat3, Vec3};
use crate::narrowphase::Manifold;
use crate::settings::PhysicsSettings;
use crate::solver::bodies::BodyVelocity;

/// One linear constraint row between two bodies along `axis` at lever arms
/// `ra`, `rb`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Axis {
    /// `r_a × axis` and `r_b × axis`, and the same premultiplied by the
    /// bodies' world inverse inertia.
    pub(crate) ra_x: Vec3,
    pub(crate) rb_x: Vec3,
    pub(crate) inv_i_ra_x: Vec3,
    pub(crate) inv_i_rb_x: Vec3,
    /// 1 / (J M⁻¹ Jᵀ)
    pub(crate) mass: f32,
    pub(crate) impulse: f32,
}

impl Axis {
    pub(crate) fn new(
        ra: Vec3,
        rb: Vec3,
        axis: Vec3,
        ima: f32,
        imb: f32,
        ia: &Mat3,
        ib: &Mat3,
    ) -> Self {
        let ra_x = ra.cross(axis);
        let rb_x = rb.cross(axis);
        let inv_i_ra_x = *ia * ra_x;
        let inv_i_rb_x = *ib * rb_x;
        let k = ima + imb + inv_i_ra_x.dot(ra_x) + inv_i_rb_x.dot(rb_x);
        Self {
            ra_x,
            rb_x,
            inv_i_ra_x,
            inv_i_rb_x,
            mass: if k > 0.0 { 1.0 / k } else { 0.0 },
            impulse: 0.0,
        }
    }

    /// Relative velocity of B with respect to A along the axis.
    #[inline]
    pub(crate) fn velocity(&self, axis: Vec3, va: Vec3, wa: Vec3, vb: Vec3, wb: Vec3) -> f32 {
        axis.dot(vb - va) + self.rb_x.dot(wb) - self.ra_x.dot(wa)
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PointConstraint {
    pub(crate) normal: Axis,
    /// Normal velocity the solver keeps the point at or above.
    pub(crate) target_velocity: f32,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct ContactConstraint {
    pub(crate) a: u32,
    pub(crate) b: u32,
    pub(crate) inv_mass_a: f32,
    pub(crate) inv_mass_b: f32,
    pub(crate) normal: Vec3,
    pub(crate) tangent: [Vec3; 2],
    pub(crate) friction: f32,
    pub(crate) count: u32,
    pub(crate) points: [PointConstraint; MAX_POINTS],
    /// Tangent rows at the centre of the points.
    pub(crate) friction_rows: [Axis; 2],
    /// Twist row: angular only, about the normal. `ra_x`/`rb_x` hold the
    /// normal, `inv_i_*` the inertia-weighted normal.
    pub(crate) twist: Axis,
    /// Mean distance of the points from their centre: the twist impulse is
    /// clamped to μ · Σλn · radius.
    pub(crate) twist_radius: f32,
    /// Reduced-coordinate normal block for face manifolds (3–4 points).
    pub(crate) block: Option<FaceBlock>,
}

/// Block solver for the normal rows of a face manifold.
///
/// The normal rows of points lying in one contact plane are affine in the
/// points' in-plane offsets `(d1, d2)` from their centre: row k is
/// `J_c + d1_k J_1 + d2_k J_2`, where `J_c` is a normal row at the centre and
/// `J_1`, `J_2` are angular rows (tilt about the two tangents). So the block
/// has three degrees of freedom, `u = (J_c, J_1, J_2) · V`, moved by a
/// reduced impulse `f = (Σλ, Σλ d1, Σλ d2)` through the 3×3 matrix `K3`.
/// One block step solves `u = u_target` exactly (every point at its target
/// velocity at once) and maps `f` back to per-point impulses with the
/// minimum-norm distribution; if that would make a point pull (λ < 0), the
/// face is partly lifting and the step falls back to a Gauss–Seidel pass.
///
/// Why: point-by-point Gauss–Seidel on four coplanar points leaves an
/// order-dependent torque after each iteration; at 10 iterations a 10-cube
/// tower accumulated those torques into a centimetre-scale sway. Solving the
/// face as a block removes the bias and costs about as much as the four rows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FaceBlock {
    /// Centre normal row lever arms (`r × n`).
    pub(crate) ra_x: Vec3,
    pub(crate) rb_x: Vec3,
    /// World inverse inertia times `ra_x`, `t1`, `t2` (A) and `rb_x`, `t1`,
    /// `t2` (B): what applying a reduced impulse needs.
    pub(crate) ia_ra_x: Vec3,
    pub(crate) ia_t1: Vec3,
    pub(crate) ia_t2: Vec3,
    pub(crate) ib_rb_x: Vec3,
    pub(crate) ib_t1: Vec3,
    pub(crate) ib_t2: Vec3,
    pub(crate) k3_inv: Mat3,
    /// Fitted target of `u`.
    pub(crate) u_target: Vec3,
    /// Columns of A: `(1, d1_k, d2_k)`.
    pub(crate) a_cols: [Vec3; MAX_POINTS],
    /// λ_k = P_k · f, with P = Aᵀ (A Aᵀ)⁻¹ (minimum-norm distribution).
    pub(crate) p: [Vec3; MAX_POINTS],
    /// Accumulated reduced impulse `A λ`.
    pub(crate) f: Vec3,
}

/// A face block is used only where the targets are affine over the face
/// (always true for resting and planar speculative contacts): worst misfit
/// allowed, in m/s.
const BLOCK_TARGET_FIT: f32 = 1e-4;

const EMPTY_AXIS: Axis = Axis {
    ra_x: Vec3::ZERO,
    rb_x: Vec3::ZERO,
    inv_i_ra_x: Vec3::ZERO,
    inv_i_rb_x: Vec3::ZERO,
    mass: 0.0,
    impulse: 0.0,
};

const EMPTY_CONSTRAINT: ContactConstraint = ContactConstraint {
    a: 0,
    b: 0,
    inv_mass_a: 0.0,
    inv_mass_b: 0.0,
    normal: Vec3::ZERO,
    tangent: [Vec3::ZERO; 2],
    friction: 0.0,
    count: 0,
    points: [PointConstraint {
        normal: EMPTY_AXIS,
        target_velocity: 0.0,
    }; MAX_POINTS],
    friction_rows: [EMPTY_AXIS; 2],
    twist: EMPTY_AXIS,
    twist_radius: 0.0,
    block: None,
};

/// Builds one manifold's constraint. `vel` are the solver's velocity slots
/// (`zero` is the static bodies' slot).
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_constraint(
    bodies: &Bodies,
    vel: &[BodyVelocity],
    zero: usize,
    m: &Manifold,
    settings: &PhysicsSettings,
    dt: f32,
) -> ContactConstraint {
    let (a, b) = (m.pair.a as usize, m.pair.b as usize);
    let slot = |i: usize| {
        if bodies.motion(i) == MotionType::Static {
            zero
        } else {
            i
        }
    };
    let (sa, sb) = (slot(a), slot(b));
    let (xa, xb) = (bodies.pos(a), bodies.pos(b));
    let (qa, qb) = (bodies.rot(a), bodies.rot(b));
    let (ima, imb) = (bodies.inv_mass[a], bodies.inv_mass[b]);
    let (ia, ib) = (bodies.inv_inertia(a), bodies.inv_inertia(b));
    let n = m.normal;
    let t1 = perpendicular(n);
    let t2 = n.cross(t1);
    // Jolt's combination rules: geometric mean friction, max restitution.
    let friction = (bodies.friction[a] * bodies.friction[b]).sqrt();
    let restitution = bodies.restitution[a].max(bodies.restitution[b]);
    let count = m.count as usize;
    let mut points = [PointConstraint::default(); MAX_POINTS];
    let mut mids = [Vec3::ZERO; MAX_POINTS];
    for k in 0..count {
        // Lever arms to the midpoint between the two surfaces (Jolt).
        let mid = 0.5 * ((xa + qa * m.local_a[k]) + (xb + qb * m.local_b[k]));
        mids[k] = mid;
        let normal = Axis {
            impulse: m.normal_impulse[k],
            ..Axis::new(mid - xa, mid - xb, n, ima, imb, &ia, &ib)
        };
        let (va, vb) = (vel[sa], vel[sb]);
        let vn = normal.velocity(n, va.lin, va.ang, vb.lin, vb.ang);
        let sep = m.separation[k];
        let target_velocity = if restitution > 0.0 && vn < -settings.min_velocity_for_restitution {
            -restitution * vn
        } else {
            // Speculative contact: may close the gap this step, no more.
            -sep.max(0.0) / dt
        };
        points[k] = PointConstraint {
            normal,
            target_velocity,
        };
    }
    let centre = mids[..count].iter().copied().sum::<Vec3>() / count.max(1) as f32;
    let twist_radius = mids[..count]
        .iter()
        .map(|&p| (p - centre).length())
        .sum::<f32>()
        / count.max(1) as f32;
    let (ra, rb) = (centre - xa, centre - xb);
    let [f1, f2, ft] = m.friction_impulse;
    let friction_rows = [
        Axis {
            impulse: f1,
            ..Axis::new(ra, rb, t1, ima, imb, &ia, &ib)
        },
        Axis {
            impulse: f2,
            ..Axis::new(ra, rb, t2, ima, imb, &ia, &ib)
        },
    ];
    let (ia_n, ib_n) = (ia * n, ib * n);
    let k_twist = ia_n.dot(n) + ib_n.dot(n);
    let twist = Axis {
        ra_x: n,
        rb_x: n,
        inv_i_ra_x: ia_n,
        inv_i_rb_x: ib_n,
        mass: if k_twist > 0.0 { 1.0 / k_twist } else { 0.0 },
        impulse: ft,
    };
    let block = if count >= 3 {
        face_block(
            &points[..count],
            &mids[..count],
            centre,
            ra,
            rb,
            n,
            t1,
            t2,
            ima,
            imb,
            &ia,
            &ib,
        )
    } else {
        None
    };
    ContactConstraint {
        a: sa as u32,
        b: sb as u32,
        inv_mass_a: ima,
        inv_mass_b: imb,
        normal: n,
        tangent: [t1, t2],
        friction,
        count: m.count,
        points,
        friction_rows,
        twist,
        twist_radius,
        block,
    }
}

/// `A λ`: total normal impulse and its first moments about the centre.
fn reduced_impulse(points: &[PointConstraint], a_cols: &[Vec3; MAX_POINTS]) -> Vec3 {
    points
        .iter()
        .zip(a_cols)
        .fold(Vec3::ZERO, |acc, (pt, &c)| acc + c * pt.normal.impulse)
}

fn outer(a: Vec3, b: Vec3) -> Mat3 {
    Mat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// Builds the reduced normal block of a face manifold, or `None` when the
/// points are (nearly) collinear, the bodies cannot rotate, or the targets
/// are not affine over the face.
#[allow(clippy::too_many_arguments)]
fn face_block(
    points: &[PointConstraint],
    mids: &[Vec3],
    centre: Vec3,
    ra: Vec3,
    rb: Vec3,
    n: Vec3,
    t1: Vec3,
    t2: Vec3,
    ima: f32,
    imb: f32,
    ia: &Mat3,
    ib: &Mat3,
) -> Option<FaceBlock> {
    // A = rows (1, d1_k, d2_k); with d measured from the centroid.
    let a_cols: [Vec3; MAX_POINTS] = core::array::from_fn(|k| {
        mids.get(k)
            .map(|&m| Vec3::new(1.0, (m - centre).dot(t1), (m - centre).dot(t2)))
            .unwrap_or(Vec3::ZERO)
    });
    let cols = &a_cols[..points.len()];
    let aat = cols.iter().fold(Mat3::ZERO, |acc, &c| acc + outer(c, c));
    // Collinear points: the face has no second in-plane direction.
    let spread = aat.y_axis.y * aat.z_axis.z - aat.z_axis.y * aat.y_axis.z;
    if spread <= 1e-8 {
        return None;
    }
    let g = aat.inverse();
    let mut p = [Vec3::ZERO; MAX_POINTS];
    for (k, &c) in cols.iter().enumerate() {
        p[k] = g * c;
    }
    // Affine fit of the point targets: u_t = G A t.
    let at = cols
        .iter()
        .zip(points)
        .fold(Vec3::ZERO, |acc, (&c, pt)| acc + c * pt.target_velocity);
    let u_target = g * at;
    let misfit = cols
        .iter()
        .zip(points)
        .map(|(&c, pt)| (c.dot(u_target) - pt.target_velocity).abs())
        .fold(0.0, f32::max);
    if misfit > BLOCK_TARGET_FIT {
        return None;
    }
    let ra_x = ra.cross(n);
    let rb_x = rb.cross(n);
    let (ia_ra_x, ib_rb_x) = (*ia * ra_x, *ib * rb_x);
    let (ia_t1, ia_t2, ib_t1, ib_t2) = (*ia * t1, *ia * t2, *ib * t1, *ib * t2);
    let kcc = ima + imb + ia_ra_x.dot(ra_x) + ib_rb_x.dot(rb_x);
    let kc1 = -(ia_ra_x + ib_rb_x).dot(t2);
    let kc2 = (ia_ra_x + ib_rb_x).dot(t1);
    let k11 = (ia_t2 + ib_t2).dot(t2);
    let k22 = (ia_t1 + ib_t1).dot(t1);
    let k12 = -(ia_t1 + ib_t1).dot(t2);
    let k3 = Mat3::from_cols(
        Vec3::new(kcc, kc1, kc2),
        Vec3::new(kc1, k11, k12),
        Vec3::new(kc2, k12, k22),
    );
    // Relative to its scale, a singular K3 means a body pair that cannot
    // rotate (infinite inertia on both sides): leave it to Gauss–Seidel.
    // So does a determinant below the normal floats (a 1e6 m box has
    // inverse inertias near 1e-22, and their product underflows): its
    // inverse would overflow.
    let det = k3.determinant();
    if !(det.is_finite() && det > 1e-12 * kcc * k11.max(1e-30) * k22.max(1e-30))
        || det < f32::MIN_POSITIVE
        || k11 <= 0.0
        || k22 <= 0.0
    {
        return None;
    }
    let k3_inv = k3.inverse();
    if !k3_inv.is_finite() {
        return None;
    }
    let mut block = FaceBlock {
        ra_x,
        rb_x,
        ia_ra_x,
        ia_t1,
        ia_t2,
        ib_rb_x,
        ib_t1,
        ib_t2,
        k3_inv,
        u_target,
        a_cols,
        p,
        f: Vec3::ZERO,
    };
    // Warm-started point impulses as a reduced impulse.
    block.f = reduced_impulse(points, &block.a_cols);
    Some(block)
}

fn put(row: &mut Row, lane: usize, v: f32) {
    row[lane] = v;
}

fn put3(row: &mut Row3, lane: usize, v: Vec3) {
    row[0][lane] = v.x;
    row[1][lane] = v.y;
    row[2][lane] = v.z;
}

/// Writes a built constraint into lane `lane` of a bundle, with its
/// warm-start impulses.
pub(crate) fn write_lane(
    c: &ContactConstraint,
    lane: usize,
    refs: &mut BundleBodies,
    p: &mut ContactPrestep,
    imp: &mut ContactImpulses,
) {
    refs.a[lane] = c.a;
    refs.b[lane] = c.b;
    put3(&mut p.normal, lane, c.normal);
    put3(&mut p.tangent1, lane, c.tangent[0]);
    put3(&mut p.tangent2, lane, c.tangent[1]);
    put(&mut p.inv_mass_a, lane, c.inv_mass_a);
    put(&mut p.inv_mass_b, lane, c.inv_mass_b);
    put(&mut p.friction, lane, c.friction);
    put(&mut p.count, lane, c.count as f32);
    for (k, pt) in c.points.iter().enumerate() {
        let row = &mut p.points[k];
        put3(&mut row.ra_x, lane, pt.normal.ra_x);
        put3(&mut row.rb_x, lane, pt.normal.rb_x);
        put3(&mut row.ia_ra_x, lane, pt.normal.inv_i_ra_x);
        put3(&mut row.ib_rb_x, lane, pt.normal.inv_i_rb_x);
        put(&mut row.mass, lane, pt.normal.mass);
        put(&mut row.target, lane, pt.target_velocity);
        put(&mut imp.normal[k], lane, pt.normal.impulse);
    }
    for (r, fr) in c.friction_rows.iter().enumerate() {
        let row = &mut p.friction_rows[r];
        put3(&mut row.ra_x, lane, fr.ra_x);
        put3(&mut row.rb_x, lane, fr.rb_x);
        put3(&mut row.ia_ra_x, lane, fr.inv_i_ra_x);
        put3(&mut row.ib_rb_x, lane, fr.inv_i_rb_x);
        put(&mut row.mass, lane, fr.mass);
        put(&mut imp.friction[r], lane, fr.impulse);
    }
    put3(&mut p.twist_ia, lane, c.twist.inv_i_ra_x);
    put3(&mut p.twist_ib, lane, c.twist.inv_i_rb_x);
    put(&mut p.twist_mass, lane, c.twist.mass);
    put(&mut p.twist_radius, lane, c.twist_radius);
    put(&mut imp.twist, lane, c.twist.impulse);
    let b = &mut p.block;
    match &c.block {
        Some(fb) => {
            put(&mut b.has, lane, 1.0);
            put3(&mut b.ra_x, lane, fb.ra_x);
            put3(&mut b.rb_x, lane, fb.rb_x);
            put3(&mut b.ia_ra_x, lane, fb.ia_ra_x);
            put3(&mut b.ia_t1, lane, fb.ia_t1);
            put3(&mut b.ia_t2, lane, fb.ia_t2);
            put3(&mut b.ib_rb_x, lane, fb.ib_rb_x);
            put3(&mut b.ib_t1, lane, fb.ib_t1);
            put3(&mut b.ib_t2, lane, fb.ib_t2);
            put3(&mut b.k3_inv[0], lane, fb.k3_inv.x_axis);
            put3(&mut b.k3_inv[1], lane, fb.k3_inv.y_axis);
            put3(&mut b.k3_inv[2], lane, fb.k3_inv.z_axis);
            put3(&mut b.u_target, lane, fb.u_target);
            for k in 0..MAX_POINTS {
                put3(&mut b.a_cols[k], lane, fb.a_cols[k]);
                put3(&mut b.p[k], lane, fb.p[k]);
            }
            put3(&mut imp.block_f, lane, fb.f);
        }
        None => {
            put(&mut b.has, lane, 0.0);
            put3(&mut imp.block_f, lane, Vec3::ZERO);
        }
    }
}

/// Makes lane `lane` of a bundle a padding lane: no points, no mass, both
/// bodies at the zero slot, so every row of it is a no-op.
pub(crate) fn pad_lane(
    zero: u32,
    lane: usize,
    refs: &mut BundleBodies,
    p: &mut ContactPrestep,
    imp: &mut ContactImpulses,
) {
    let mut c = EMPTY_CONSTRAINT;
    c.a = zero;
    c.b = zero;
    write_lane(&c, lane, refs, p, imp);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Quat;

    /// The reduced coordinates are exact: every point's normal velocity is
    /// `A_kᵀ u`, and a reduced impulse `f` moves the bodies exactly as the
    /// per-point impulses `λ_k = P_k · f` would through their rows.
    #[test]
    fn face_block_reduced_coordinates_match_point_rows() {
        let n = Vec3::new(0.1, 1.0, -0.2).normalize();
        let t1 = perpendicular(n);
        let t2 = n.cross(t1);
        let (xa, xb) = (Vec3::new(0.3, -0.6, 0.1), Vec3::new(-0.2, 0.55, 0.25));
        let rot = Quat::from_rotation_x(0.4) * Quat::from_rotation_y(-0.7);
        let ia = crate::math::world_inverse_inertia(rot, Vec3::new(0.006, 0.004, 0.005));
        let ib = crate::math::world_inverse_inertia(rot.inverse(), Vec3::new(0.01, 0.02, 0.015));
        let (ima, imb) = (0.001, 0.002);
        // four points of a skewed quad in the contact plane (plus a little
        // normal offset, which must not matter)
        let centre0 = Vec3::new(0.05, 0.0, 0.1);
        let mids: Vec<Vec3> = [(0.5, 0.4), (-0.45, 0.5), (-0.5, -0.35), (0.4, -0.5)]
            .iter()
            .enumerate()
            .map(|(k, &(a, b))| centre0 + t1 * a + t2 * b + n * (0.001 * k as f32))
            .collect();
        let centre = mids.iter().copied().sum::<Vec3>() / 4.0;
        let points: Vec<PointConstraint> = mids
            .iter()
            .map(|&m| PointConstraint {
                normal: Axis::new(m - xa, m - xb, n, ima, imb, &ia, &ib),
                target_velocity: 0.0,
            })
            .collect();
        let block = face_block(
            &points,
            &mids,
            centre,
            centre - xa,
            centre - xb,
            n,
            t1,
            t2,
            ima,
            imb,
            &ia,
            &ib,
        )
        .expect("a quad face has a block");
        let (va, wa, vb, wb) = (
            Vec3::new(0.3, -1.0, 0.2),
            Vec3::new(0.5, 0.1, -0.3),
            Vec3::new(-0.2, 0.4, 0.1),
            Vec3::new(-0.1, 0.7, 0.2),
        );
        let dw = wb - wa;
        let u = Vec3::new(
            n.dot(vb - va) + block.rb_x.dot(wb) - block.ra_x.dot(wa),
            -t2.dot(dw),
            t1.dot(dw),
        );
        for (k, p) in points.iter().enumerate() {
            let direct = p.normal.velocity(n, va, wa, vb, wb);
            assert!((direct - block.a_cols[k].dot(u)).abs() < 1e-4, "point {k}");
        }
        // apply a reduced impulse both ways
        let df = Vec3::new(3.0, 0.4, -0.7);
        let wa_block = wa + block.ia_t2 * df.y - block.ia_t1 * df.z - block.ia_ra_x * df.x;
        let wb_block = wb + block.ib_rb_x * df.x - block.ib_t2 * df.y + block.ib_t1 * df.z;
        let (mut wa_rows, mut wb_rows, mut va_rows) = (wa, wb, va);
        let mut total = 0.0;
        for (k, p) in points.iter().enumerate() {
            let l = block.p[k].dot(df);
            total += l;
            va_rows -= n * (l * ima);
            wa_rows -= p.normal.inv_i_ra_x * l;
            wb_rows += p.normal.inv_i_rb_x * l;
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
        let f = block.k3_inv * (block.u_target - u);
        let (mut va2, mut wa2, mut vb2, mut wb2) = (va, wa, vb, wb);
        va2 -= n * (f.x * ima);
        vb2 += n * (f.x * imb);
        wa2 += block.ia_t2 * f.y - block.ia_t1 * f.z - block.ia_ra_x * f.x;
        wb2 += block.ib_rb_x * f.x - block.ib_t2 * f.y + block.ib_t1 * f.z;
        for p in &points {
            assert!(p.normal.velocity(n, va2, wa2, vb2, wb2).abs() < 1e-4);
        }
    }

    #[test]
    fn collinear_points_have_no_block() {
        let n = Vec3::Y;
        let (t1, t2) = (perpendicular(n), n.cross(perpendicular(n)));
        let mids = [
            Vec3::new(-0.5, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.5, 0.0, 0.0),
        ];
        let ia = Mat3::from_diagonal(Vec3::splat(0.01));
        let points: Vec<PointConstraint> = mids
            .iter()
            .map(|&m| PointConstraint {
                normal: Axis::new(m, m - Vec3::Y, n, 0.1, 0.1, &ia, &ia),
                target_velocity: 0.0,
            })
            .collect();
        assert!(face_block(
            &points,
            &mids,
            Vec3::ZERO,
            Vec3::ZERO,
            -Vec3::Y,
            n,
            t1,
            t2,
            0.1,
            0.1,
            &ia,
            &ia
        )
        .is_none());
    }
}
