//! Setup of a bundle of joints: [`gather`] copies each lane's joint and
//! bodies into rows, [`prepare`] (written once over the lane type) sets up
//! the parts each lane uses at the step's start poses, with last step's
//! impulses as the warm start. The geometry both setup and the position
//! solve measure (frames in world space, lever arms, the rows' Jacobians
//! and coordinates) is here too, so the two measure the same things.

use super::batch::{JointBodyRows, JointDef, JointImpulses, JointPrestep};
use crate::body::{Bodies, MotionType};
use crate::joint::store::{flag, kind, JointData, Joints, WORLD};
use crate::solver::contact::batch::BundleBodies;
use crate::solver::layout::PADDING;
use crate::solver::parts::axis_row::{self, RowSetup};
use crate::solver::parts::block2::{self, Jacobian};
use crate::solver::parts::{dual_axis, hinge_rotation, point, rotation, Masses, Row, Row3};
use crate::solver::poses::{load_q, PairPose};
use archipelago_simd::{atan2, Lane, Real, LANES, Q4, V3};

/// Which kind each lane is.
#[derive(Clone, Copy)]
pub(crate) struct Kinds<R: Real> {
    pub distance: R::Mask,
    pub hinge: R::Mask,
    pub slider: R::Mask,
    pub swing_twist: R::Mask,
}

impl<R: Real> Kinds<R> {
    #[inline(always)]
    pub fn load<L: Lane<R = R>>(l: L, def: &JointDef) -> Self {
        let k = l.load(&def.kind);
        let is = |code: u32| (k - R::splat(code as f32)).abs().lt(R::splat(0.5));
        Kinds {
            distance: is(kind::DISTANCE),
            hinge: is(kind::HINGE),
            slider: is(kind::SLIDER),
            swing_twist: is(kind::SWING_TWIST),
        }
    }
}

#[inline(always)]
fn mask<L: Lane>(l: L, row: &Row) -> <L::R as Real>::Mask {
    l.load(row).gt(L::R::zero())
}

/// The joint's geometry at a pair of poses.
#[derive(Clone, Copy)]
pub(crate) struct Geometry<R: Real> {
    /// The joint frames in world space.
    pub wa: Q4<R>,
    pub wb: Q4<R>,
    /// Lever arms to the anchors, and anchor B minus anchor A.
    pub ra: V3<R>,
    pub rb: V3<R>,
    pub u: V3<R>,
}

impl<R: Real> Geometry<R> {
    #[inline(always)]
    pub fn at<L: Lane<R = R>>(l: L, def: &JointDef, pose: &PairPose<R>) -> Self {
        let (fa, fb) = (load_q(l, &def.frame_a), load_q(l, &def.frame_b));
        Self::new(l.load3(&def.local_a), l.load3(&def.local_b), fa, fb, pose)
    }

    /// At `pose`, for anchors `la`, `lb` and frames `fa`, `fb` in the
    /// bodies' local spaces.
    #[inline(always)]
    pub fn new(la: V3<R>, lb: V3<R>, fa: Q4<R>, fb: Q4<R>, pose: &PairPose<R>) -> Self {
        let ra = pose.qa.rotate(la);
        let rb = pose.qb.rotate(lb);
        Geometry {
            wa: pose.qa * fa,
            wb: pose.qb * fb,
            ra,
            rb,
            u: (pose.xb + rb) - (pose.xa + ra),
        }
    }

    /// Frame B's rotation about frame A's axis (the hinge angle, and the
    /// swing-twist's twist): the twist of `W_a⁻¹ W_b`, `2 atan2(x, w)`.
    #[inline(always)]
    pub fn twist_angle(&self) -> R {
        let r = self.wa.conj() * self.wb;
        let r = r.negate_unless(r.w.ge(R::zero()));
        R::splat(2.0) * atan2(r.x, r.w)
    }

    /// The 2×2 block's rows: the slider's perpendicular axes where `dual`,
    /// else the hinge's rotation rows; and their errors.
    #[inline(always)]
    pub fn block(&self, dual: R::Mask) -> ([Jacobian<R>; 2], [R; 2]) {
        let (n1, n2) = (self.wa.axis_y(), self.wa.axis_z());
        let d = dual_axis::jacobians(self.ra, self.rb, self.u, n1, n2);
        let (a1, b2, c2) = (self.wa.axis_x(), self.wb.axis_y(), self.wb.axis_z());
        let h = hinge_rotation::jacobians(a1, b2, c2);
        let he = hinge_rotation::errors(a1, b2, c2);
        let pick = |i: usize| Jacobian {
            n: V3::select(dual, d[i].n, h[i].n),
            ja: V3::select(dual, d[i].ja, h[i].ja),
            jb: V3::select(dual, d[i].jb, h[i].jb),
        };
        let e = [
            R::select(dual, self.u.dot(n1), he[0]),
            R::select(dual, self.u.dot(n2), he[1]),
        ];
        ([pick(0), pick(1)], e)
    }

    /// Rows 0 and 1: Jacobians and coordinates. Row 0 is the distance
    /// (along `u`), the hinge angle, the slider position (along A's axis)
    /// or the swing cone's cosine `x_a · x_b`; row 1 the hinge or slider
    /// coordinate again (for the motor), or the twist.
    #[inline(always)]
    pub fn rows(&self, k: &Kinds<R>) -> ([Jacobian<R>; 2], [R; 2]) {
        let zero = R::zero();
        let (xa, xb) = (self.wa.axis_x(), self.wb.axis_x());
        let angle = if R::any(R::or(k.hinge, k.swing_twist)) {
            self.twist_angle()
        } else {
            zero
        };
        let len = self.u.length_squared().sqrt();
        let along = V3::select(
            len.gt(R::splat(1e-9)),
            self.u.div_by(len),
            V3::new(zero, R::splat(1.0), zero),
        );
        let n = V3::select(k.distance, along, V3::select(k.slider, xa, V3::zero()));
        let linear = R::or(k.distance, k.slider);
        let ra = V3::select(k.slider, self.ra + self.u, self.ra);
        let cone = xb.cross(xa);
        let ang = V3::select(k.hinge, xa, cone);
        let row0 = Jacobian {
            n,
            ja: V3::select(linear, ra.cross(n), ang),
            jb: V3::select(linear, self.rb.cross(n), ang),
        };
        let x0 = R::select(
            k.distance,
            len,
            R::select(
                k.slider,
                self.u.dot(xa),
                R::select(k.hinge, angle, xa.dot(xb)),
            ),
        );
        let row1 = Jacobian {
            n: V3::select(k.swing_twist, V3::zero(), row0.n),
            ja: V3::select(k.swing_twist, xb, row0.ja),
            jb: V3::select(k.swing_twist, xb, row0.jb),
        };
        let x1 = R::select(k.swing_twist, angle, x0);
        ([row0, row1], [x0, x1])
    }
}

/// Row 0's limits: the swing cone's (`cos`, unbounded) or the kind's.
#[inline(always)]
pub(crate) fn row0_limits<L: Lane>(l: L, def: &JointDef, k: &Kinds<L::R>) -> (L::R, L::R) {
    let big = L::R::splat(f32::MAX);
    (
        L::R::select(
            k.swing_twist,
            l.load(&def.swing_cos),
            l.load(&def.limits[0]),
        ),
        L::R::select(k.swing_twist, big, l.load(&def.limits[1])),
    )
}

fn put3(row: &mut Row3, lane: usize, v: [f32; 3]) {
    row[0][lane] = v[0];
    row[1][lane] = v[1];
    row[2][lane] = v[2];
}

fn put4(row: &mut [Row; 4], lane: usize, v: [f32; 4]) {
    for (c, x) in row.iter_mut().zip(v) {
        c[lane] = x;
    }
}

fn flag_row(row: &mut Row, lane: usize, on: bool) {
    row[lane] = on as u32 as f32;
}

/// Copies the joints in `slots` (one bundle of indices into
/// `joints.active`; [`PADDING`] for a padding lane) and their bodies into
/// rows, their bodies' solver slots into `refs` (static bodies, the world
/// and padding at `zero`) and their accumulated impulses into `imp`. A
/// joint `in_tree` keeps only its rows here: a joint tree solves its
/// equality parts (`solver/tree/`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather(
    slots: &[u32; LANES],
    joints: &Joints,
    in_tree: &[bool],
    bodies: &Bodies,
    zero: usize,
    def: &mut JointDef,
    rows: &mut JointBodyRows,
    refs: &mut BundleBodies,
    imp: &mut JointImpulses,
) {
    const IDENTITY: [f32; 4] = [0.0, 0.0, 0.0, 1.0];
    for (lane, &s) in slots.iter().enumerate() {
        let (j, d) = if s == PADDING {
            (None, JointData::default())
        } else {
            let j = joints.active[s as usize] as usize;
            (Some(j), joints.data[j])
        };
        // one side: solver slot, static flag, pose, inverse mass, inertia
        let side = |i: u32| {
            if j.is_none() || i == WORLD {
                return (zero, true, [0.0; 3], IDENTITY, 0.0, [0.0; 9]);
            }
            let i = i as usize;
            let stat = bodies.motion(i) == MotionType::Static;
            (
                if stat { zero } else { i },
                stat,
                bodies.position.get(i),
                bodies.rotation[i],
                bodies.inv_mass[i],
                bodies.inv_inertia_world[i],
            )
        };
        let (sa, static_a, xa, qa, ima, ia) = side(d.body_a);
        let (sb, static_b, xb, qb, imb, ib) = side(d.body_b);
        refs.a[lane] = sa as u32;
        refs.b[lane] = sb as u32;
        put3(&mut rows.xa, lane, xa);
        put4(&mut rows.qa, lane, qa);
        put3(&mut rows.xb, lane, xb);
        put4(&mut rows.qb, lane, qb);
        rows.masses.inv_mass_a[lane] = ima;
        rows.masses.inv_mass_b[lane] = imb;
        for c in 0..3 {
            put3(
                &mut rows.masses.ia[c],
                lane,
                [ia[3 * c], ia[3 * c + 1], ia[3 * c + 2]],
            );
            put3(
                &mut rows.masses.ib[c],
                lane,
                [ib[3 * c], ib[3 * c + 1], ib[3 * c + 2]],
            );
        }
        let st = &mut def.statics;
        flag_row(&mut st.static_a, lane, static_a);
        flag_row(&mut st.static_b, lane, static_b);
        put3(&mut st.xa, lane, xa);
        put4(&mut st.qa, lane, qa);
        put3(&mut st.xb, lane, xb);
        put4(&mut st.qb, lane, qb);
        let live = j.is_some();
        flag_row(&mut def.used, lane, live);
        let parts = live && !in_tree[s as usize];
        let k = d.kind;
        def.kind[lane] = k as f32;
        flag_row(
            &mut def.point,
            lane,
            parts
                && matches!(
                    k,
                    kind::FIXED | kind::POINT | kind::HINGE | kind::SWING_TWIST
                ),
        );
        flag_row(&mut def.dual, lane, parts && k == kind::SLIDER);
        flag_row(&mut def.hinge, lane, parts && k == kind::HINGE);
        flag_row(
            &mut def.rotation,
            lane,
            parts && matches!(k, kind::FIXED | kind::SLIDER),
        );
        let has = |f: u32| live && d.flags & f != 0;
        flag_row(&mut def.limit, lane, has(flag::LIMITS));
        flag_row(&mut def.soft_limit, lane, has(flag::SOFT_LIMITS));
        flag_row(&mut def.motor_velocity, lane, has(flag::MOTOR_VELOCITY));
        flag_row(&mut def.motor_position, lane, has(flag::MOTOR_POSITION));
        put3(&mut def.local_a, lane, d.anchor_a);
        put3(&mut def.local_b, lane, d.anchor_b);
        put4(
            &mut def.frame_a,
            lane,
            if live { d.frame_a } else { IDENTITY },
        );
        put4(
            &mut def.frame_b,
            lane,
            if live { d.frame_b } else { IDENTITY },
        );
        def.limits[0][lane] = d.limits[0];
        def.limits[1][lane] = d.limits[1];
        def.swing_cos[lane] = d.swing_cos;
        def.limit_spring[0][lane] = d.limit_spring[0];
        def.limit_spring[1][lane] = d.limit_spring[1];
        def.motor_target[lane] = d.motor_target;
        def.motor_max[lane] = d.motor_max;
        def.motor_spring[0][lane] = d.motor_spring[0];
        def.motor_spring[1][lane] = d.motor_spring[1];
        def.friction[lane] = d.friction;
        let i = j.map_or([0.0; crate::joint::store::JOINT_IMPULSES], |j| {
            joints.impulses[j]
        });
        put3(&mut imp.point, lane, [i[0], i[1], i[2]]);
        imp.block[0][lane] = i[3];
        imp.block[1][lane] = i[4];
        put3(&mut imp.rotation, lane, [i[5], i[6], i[7]]);
        imp.rows[0][lane] = i[8];
        imp.rows[1][lane] = i[9];
    }
}

/// Sets up a bundle's (or one lane's) parts from its gathered rows; the
/// masses were copied into `p.masses` already. Impulses of parts a lane
/// does not use become 0, the others are kept (rows: clamped to their new
/// bounds).
// Inlined whole into each stage's loop per instruction set (`dispatch.rs`).
// In the unit-test build, one out-of-line copy per lane type instead, which
// the property tests then share with the step rather than compiling their
// own (those copies were a third of that build; the bits are the same).
#[cfg_attr(not(test), inline(always))]
#[cfg_attr(test, inline(never))]
pub(crate) fn prepare<L: Lane>(
    l: L,
    def: &JointDef,
    rows: &JointBodyRows,
    dt: f32,
    p: &mut JointPrestep,
    imp: &mut JointImpulses,
) {
    let zero = L::R::zero();
    let m = Masses::load(l, &p.masses);
    let pose = PairPose {
        xa: l.load3(&rows.xa),
        qa: load_q(l, &rows.qa),
        xb: l.load3(&rows.xb),
        qb: load_q(l, &rows.qb),
    };
    let g = Geometry::at(l, def, &pose);
    let k = Kinds::load(l, def);
    let dt = L::R::splat(dt);

    let on = point::prepare(l, &m, g.ra, g.rb, mask(l, &def.point), &mut p.point);
    let lp = l.load3(&imp.point);
    l.store3(&mut imp.point, V3::select(on, lp, V3::zero()));

    let dual = mask(l, &def.dual);
    let (jac, _) = g.block(dual);
    let on = block2::prepare(
        l,
        &m,
        &jac,
        L::R::or(dual, mask(l, &def.hinge)),
        &mut p.block,
    );
    for r in &mut imp.block {
        let x = l.load(r);
        l.store(r, L::R::select(on, x, zero));
    }

    let on = rotation::prepare(l, &m, mask(l, &def.rotation), &mut p.rotation);
    let lr = l.load3(&imp.rotation);
    l.store3(&mut imp.rotation, V3::select(on, lr, V3::zero()));

    let (jac, x) = g.rows(&k);
    let kr = [
        axis_row::inverse_mass(&m, &jac[0]),
        axis_row::inverse_mass(&m, &jac[1]),
    ];
    let (lo, hi) = row0_limits(l, def, &k);
    let spring = |s: &[Row; 2]| (l.load(&s[0]), l.load(&s[1]));
    let (limit, _) = axis_row::limit(
        x[0],
        lo,
        hi,
        k.hinge,
        mask(l, &def.soft_limit),
        spring(&def.limit_spring),
        kr[0],
        dt,
        mask(l, &def.limit),
    );
    let driven = L::R::or(k.hinge, k.slider);
    let motor = axis_row::motor(
        x[1],
        k.hinge,
        mask(l, &def.motor_velocity),
        mask(l, &def.motor_position),
        l.load(&def.motor_target),
        spring(&def.motor_spring),
        l.load(&def.motor_max),
        l.load(&def.friction),
        kr[1],
        dt,
        driven,
    );
    let (twist, _) = axis_row::limit(
        x[1],
        l.load(&def.limits[0]),
        l.load(&def.limits[1]),
        k.swing_twist,
        zero.gt(zero),
        (zero, zero),
        kr[1],
        dt,
        k.swing_twist,
    );
    let st = k.swing_twist;
    let row1 = RowSetup {
        on: L::R::or(L::R::and(st, twist.on), L::R::and(L::R::not(st), motor.on)),
        target: L::R::select(st, twist.target, motor.target),
        softness: L::R::select(st, twist.softness, motor.softness),
        lo: L::R::select(st, twist.lo, motor.lo),
        hi: L::R::select(st, twist.hi, motor.hi),
    };
    for (i, setup) in [limit, row1].iter().enumerate() {
        let mut lambda = l.load(&imp.rows[i]);
        axis_row::prepare(l, &m, &jac[i], kr[i], setup, &mut p.rows[i], &mut lambda);
        l.store(&mut imp.rows[i], lambda);
    }
}
