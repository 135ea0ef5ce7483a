//! Contact solver: sequential impulses (Box2D/Jolt style).
//!
//! Stages, in the order the pipeline calls them:
//! 1. [`ContactSolver::setup`]: per point, lever arms, effective masses and
//!    the target normal velocity (restitution or speculative bias); then warm
//!    start by applying last step's impulses.
//! 2. [`ContactSolver::solve_velocities`]: `velocity_iterations` passes; per
//!    manifold friction first (two tangents, clamped together to the friction
//!    cone) then the non-penetration impulses (accumulated, clamped ≥ 0).
//! 3. [`ContactSolver::solve_positions`] (after integration): Baumgarte
//!    pushes that remove `baumgarte` of the penetration beyond the slop each
//!    iteration, moving positions and rotations, never velocities.
//!
//! Body velocities are gathered into dense solver arrays for the duration of
//! the velocity solve and scattered back after it.

use crate::body::{Bodies, MotionType};
use crate::collide::MAX_POINTS;
use crate::math::{perpendicular, Mat3, Quat, Vec3};
use crate::narrowphase::Manifold;
use crate::settings::PhysicsSettings;

#[derive(Debug, Clone, Copy, Default)]
struct Axis {
    /// `r_a × axis` premultiplied by A's world inverse inertia, same for B.
    inv_i_ra_x: Vec3,
    inv_i_rb_x: Vec3,
    ra_x: Vec3,
    rb_x: Vec3,
    /// 1 / (J M⁻¹ Jᵀ)
    mass: f32,
    impulse: f32,
}

impl Axis {
    fn new(ra: Vec3, rb: Vec3, axis: Vec3, ima: f32, imb: f32, ia: &Mat3, ib: &Mat3) -> Self {
        let ra_x = ra.cross(axis);
        let rb_x = rb.cross(axis);
        let inv_i_ra_x = *ia * ra_x;
        let inv_i_rb_x = *ib * rb_x;
        let k = ima + imb + inv_i_ra_x.dot(ra_x) + inv_i_rb_x.dot(rb_x);
        Self {
            inv_i_ra_x,
            inv_i_rb_x,
            ra_x,
            rb_x,
            mass: if k > 0.0 { 1.0 / k } else { 0.0 },
            impulse: 0.0,
        }
    }

    /// Relative velocity of B with respect to A along the axis.
    #[inline]
    fn velocity(&self, axis: Vec3, va: Vec3, wa: Vec3, vb: Vec3, wb: Vec3) -> f32 {
        axis.dot(vb - va) + self.rb_x.dot(wb) - self.ra_x.dot(wa)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct PointConstraint {
    normal: Axis,
    tangent: [Axis; 2],
    /// Normal velocity the solver drives towards (≥ it, not =).
    target_velocity: f32,
}

#[derive(Debug, Clone, Copy)]
struct ContactConstraint {
    a: u32,
    b: u32,
    inv_mass_a: f32,
    inv_mass_b: f32,
    normal: Vec3,
    tangent: [Vec3; 2],
    friction: f32,
    count: u32,
    manifold: u32,
    points: [PointConstraint; MAX_POINTS],
}

/// Preallocated solver state.
pub(crate) struct ContactSolver {
    constraints: Vec<ContactConstraint>,
    lin: Vec<Vec3>,
    ang: Vec<Vec3>,
}

impl ContactSolver {
    pub fn new(max_bodies: usize, max_contact_constraints: usize) -> Self {
        Self {
            constraints: Vec::with_capacity(max_contact_constraints),
            lin: vec![Vec3::ZERO; max_bodies],
            ang: vec![Vec3::ZERO; max_bodies],
        }
    }

    /// Builds constraints for the non-sensor manifolds and warm-starts them.
    pub fn setup(&mut self, bodies: &Bodies, manifolds: &[Manifold], settings: &PhysicsSettings, dt: f32) {
        self.constraints.clear();
        for &i in &bodies.active {
            let i = i as usize;
            self.lin[i] = bodies.lin_vel(i);
            self.ang[i] = bodies.ang_vel(i);
        }
        for (mi, m) in manifolds.iter().enumerate() {
            if m.sensor {
                continue;
            }
            let (a, b) = (m.pair.a as usize, m.pair.b as usize);
            // Static bodies are not in the active list: give them their
            // (zero) velocity here so a reused slot never leaks a stale one.
            for i in [a, b] {
                if bodies.motion(i) == MotionType::Static {
                    self.lin[i] = Vec3::ZERO;
                    self.ang[i] = Vec3::ZERO;
                }
            }
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
            let mut c = ContactConstraint {
                a: a as u32,
                b: b as u32,
                inv_mass_a: ima,
                inv_mass_b: imb,
                normal: n,
                tangent: [t1, t2],
                friction,
                count: m.count,
                manifold: mi as u32,
                points: [PointConstraint::default(); MAX_POINTS],
            };
            for k in 0..m.count as usize {
                let mid = 0.5 * ((xa + qa * m.local_a[k]) + (xb + qb * m.local_b[k]));
                let (ra, rb) = (mid - xa, mid - xb);
                let mut p = PointConstraint {
                    normal: Axis::new(ra, rb, n, ima, imb, &ia, &ib),
                    tangent: [
                        Axis::new(ra, rb, t1, ima, imb, &ia, &ib),
                        Axis::new(ra, rb, t2, ima, imb, &ia, &ib),
                    ],
                    target_velocity: 0.0,
                };
                let vn = p
                    .normal
                    .velocity(n, self.lin[a], self.ang[a], self.lin[b], self.ang[b]);
                let sep = m.separation[k];
                p.target_velocity = if restitution > 0.0 && vn < -settings.min_velocity_for_restitution {
                    -restitution * vn
                } else {
                    // Speculative contact: may close the gap this step, no more.
                    -sep.max(0.0) / dt
                };
                let [jn, jt1, jt2] = m.impulse[k];
                p.normal.impulse = jn;
                p.tangent[0].impulse = jt1;
                p.tangent[1].impulse = jt2;
                c.points[k] = p;
            }
            // Warm start: apply last step's impulses.
            for k in 0..c.count as usize {
                let p = c.points[k];
                self.apply(&c, &p.normal, n, p.normal.impulse);
                self.apply(&c, &p.tangent[0], t1, p.tangent[0].impulse);
                self.apply(&c, &p.tangent[1], t2, p.tangent[1].impulse);
            }
            self.constraints.push(c);
        }
    }

    #[inline]
    fn apply(&mut self, c: &ContactConstraint, axis: &Axis, dir: Vec3, lambda: f32) {
        let (a, b) = (c.a as usize, c.b as usize);
        self.lin[a] -= dir * (lambda * c.inv_mass_a);
        self.ang[a] -= axis.inv_i_ra_x * lambda;
        self.lin[b] += dir * (lambda * c.inv_mass_b);
        self.ang[b] += axis.inv_i_rb_x * lambda;
    }

    pub fn solve_velocities(&mut self, iterations: u32) {
        let mut constraints = core::mem::take(&mut self.constraints);
        for _ in 0..iterations {
            for c in constraints.iter_mut() {
                self.solve_constraint(c);
            }
        }
        self.constraints = constraints;
    }

    fn solve_constraint(&mut self, c: &mut ContactConstraint) {
        let (a, b) = (c.a as usize, c.b as usize);
        let n = c.normal;
        let [t1, t2] = c.tangent;
        // Friction first (Jolt's order): the normal impulses solved last are
        // the ones that must hold exactly.
        for k in 0..c.count as usize {
            let p = c.points[k];
            let (va, wa, vb, wb) = (self.lin[a], self.ang[a], self.lin[b], self.ang[b]);
            let max = c.friction * p.normal.impulse;
            let l1 = p.tangent[0].impulse - p.tangent[0].mass * p.tangent[0].velocity(t1, va, wa, vb, wb);
            let l2 = p.tangent[1].impulse - p.tangent[1].mass * p.tangent[1].velocity(t2, va, wa, vb, wb);
            let len2 = l1 * l1 + l2 * l2;
            let (l1, l2) = if len2 > max * max {
                let s = if len2 > 0.0 { max / len2.sqrt() } else { 0.0 };
                (l1 * s, l2 * s)
            } else {
                (l1, l2)
            };
            let (d1, d2) = (l1 - p.tangent[0].impulse, l2 - p.tangent[1].impulse);
            c.points[k].tangent[0].impulse = l1;
            c.points[k].tangent[1].impulse = l2;
            self.apply(c, &p.tangent[0], t1, d1);
            self.apply(c, &p.tangent[1], t2, d2);
        }
        for k in 0..c.count as usize {
            let p = c.points[k];
            let vn = p
                .normal
                .velocity(n, self.lin[a], self.ang[a], self.lin[b], self.ang[b]);
            let total = (p.normal.impulse + p.normal.mass * (p.target_velocity - vn)).max(0.0);
            let delta = total - p.normal.impulse;
            c.points[k].normal.impulse = total;
            self.apply(c, &p.normal, n, delta);
        }
    }

    /// Writes the solved velocities back to the moving bodies and the
    /// accumulated impulses back to the manifolds (for the cache and users).
    pub fn finish_velocities(&self, bodies: &mut Bodies, manifolds: &mut [Manifold]) {
        for &i in &bodies.active {
            let i = i as usize;
            if bodies.motion(i) == MotionType::Dynamic {
                bodies.linear_velocity.set(i, self.lin[i].to_array());
                bodies.angular_velocity.set(i, self.ang[i].to_array());
            }
        }
        for c in &self.constraints {
            let m = &mut manifolds[c.manifold as usize];
            for k in 0..c.count as usize {
                let p = &c.points[k];
                m.impulse[k] = [p.normal.impulse, p.tangent[0].impulse, p.tangent[1].impulse];
            }
        }
    }

    /// Position iterations (after integration), on the manifolds' local points.
    pub fn solve_positions(&self, bodies: &mut Bodies, manifolds: &[Manifold], settings: &PhysicsSettings) {
        for _ in 0..settings.position_iterations {
            for c in &self.constraints {
                let m = &manifolds[c.manifold as usize];
                for k in 0..c.count as usize {
                    solve_position_point(bodies, c, m, k, settings);
                }
            }
        }
    }
}

fn solve_position_point(bodies: &mut Bodies, c: &ContactConstraint, m: &Manifold, k: usize, s: &PhysicsSettings) {
    let (a, b) = (c.a as usize, c.b as usize);
    let (xa, xb) = (bodies.pos(a), bodies.pos(b));
    let (qa, qb) = (bodies.rot(a), bodies.rot(b));
    let pa = xa + qa * m.local_a[k];
    let pb = xb + qb * m.local_b[k];
    let n = c.normal;
    let separation = (pb - pa).dot(n) + s.penetration_slop;
    if separation >= 0.0 {
        return;
    }
    let error = separation.max(-s.max_penetration_distance);
    let mid = 0.5 * (pa + pb);
    let (ia, ib) = (bodies.inv_inertia(a), bodies.inv_inertia(b));
    let axis = Axis::new(mid - xa, mid - xb, n, c.inv_mass_a, c.inv_mass_b, &ia, &ib);
    let lambda = -s.baumgarte * error * axis.mass;
    if c.inv_mass_a > 0.0 {
        let p = xa - n * (lambda * c.inv_mass_a);
        let q = Quat::from_scaled_axis(-axis.inv_i_ra_x * lambda) * qa;
        bodies.position.set(a, p.to_array());
        bodies.rotation[a] = q.normalize().to_array();
    }
    if c.inv_mass_b > 0.0 {
        let p = xb + n * (lambda * c.inv_mass_b);
        let q = Quat::from_scaled_axis(axis.inv_i_rb_x * lambda) * qb;
        bodies.position.set(b, p.to_array());
        bodies.rotation[b] = q.normalize().to_array();
    }
}
