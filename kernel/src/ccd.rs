//! Continuous collision for [`MotionQuality::LinearCast`] bodies (Jolt's
//! linear cast): between the velocity solve and the position integration,
//! each such dynamic body that would move more than
//! `linear_cast_threshold` of its inner radius this step sweeps its shape
//! along the step's motion against the static bodies; where a hit would
//! sink it deeper than `linear_cast_max_penetration` of its inner radius,
//! the body is moved only up to that depth. Its velocity is kept: the next
//! step's narrow phase finds the contact (the body now overlaps what it
//! hit) and the solver stops or bounces it there, with friction and
//! restitution as for any contact.
//!
//! The sweep reads only poses from before the integration and writes one
//! slot per active body, so its result does not depend on the number of
//! workers; the positions it decides are written after the integration, in
//! active order.
//!
//! [`MotionQuality::LinearCast`]: crate::MotionQuality::LinearCast

use crate::body::{Bodies, MotionType};
use crate::broadphase::BodyPair;
use crate::collide::{collide_in, Placed};
use crate::jobs::StepCtx;
use crate::math::Vec3;
use crate::quarantine::clamp_length;
use crate::query::sweep::cast_placed;
use crate::query::QueryTrees;
use crate::settings::PhysicsSettings;

/// Active bodies per job of the flag test and of the sweeps (a sweep costs
/// microseconds, a flag test nanoseconds; both lists are short next to the
/// integration's).
const BODIES_PER_JOB: usize = 256;

/// The sweep's per-step lists (kept between steps: no allocation once
/// they reached the largest active list).
#[derive(Default)]
pub(crate) struct LinearCasts {
    /// Per active body: where the sweep stopped it, if it did.
    stop: Vec<Option<Vec3>>,
    /// `(slot, position)` of the stopped bodies, in active order.
    moves: Vec<(u32, Vec3)>,
}

/// Whether body `i` is swept when it moves fast.
fn swept(b: &Bodies, i: usize) -> bool {
    b.is_linear_cast(i) && b.motion(i) == MotionType::Dynamic && !b.is_sensor(i)
}

impl LinearCasts {
    /// Sweeps the fast linear-cast bodies; returns how many were swept.
    /// [`apply`](Self::apply) then moves the stopped ones (`hits()` of
    /// them) after the integration. `no_contact` (sorted) are the pairs a
    /// joint keeps from colliding: the sweep ignores them as the narrow
    /// phase does.
    pub fn find(
        &mut self,
        ctx: &StepCtx,
        b: &Bodies,
        queries: &QueryTrees,
        no_contact: &[BodyPair],
        s: &PhysicsSettings,
        dt: f32,
    ) -> u32 {
        self.moves.clear();
        if b.linear_cast_bodies == 0 {
            return 0;
        }
        if !ctx.par_any("find linear casts", &b.active, BODIES_PER_JOB, |&i| {
            swept(b, i as usize)
        }) {
            return 0;
        }
        self.stop.clear();
        self.stop.resize(b.active.len(), None);
        let casts = ctx.par_chunks_mut(
            "linear cast",
            &mut self.stop,
            BODIES_PER_JOB,
            |first, chunk| {
                let mut casts = 0;
                for (stop, &i) in chunk.iter_mut().zip(&b.active[first..]) {
                    let i = i as usize;
                    let v = b.lin_vel(i);
                    if !swept(b, i) || !v.is_finite() {
                        continue;
                    }
                    // the velocity the integration will move it by
                    let motion = clamp_length(v, s.max_linear_velocity) * dt;
                    let inner = b.shape[i].inner_radius(&b.shapes);
                    if motion.length() <= s.linear_cast_threshold * inner {
                        continue;
                    }
                    casts += 1;
                    *stop = first_stop(b, queries, no_contact, s, i, motion, inner)
                        .map(|f| b.pos(i) + motion * f);
                }
                casts
            },
        );
        ctx.serial("linear cast stops", || {
            for (&slot, stop) in b.active.iter().zip(&self.stop) {
                if let Some(p) = *stop {
                    self.moves.push((slot, p));
                }
            }
        });
        casts
    }

    /// Bodies the last [`find`](Self::find) stopped short.
    pub fn hits(&self) -> u32 {
        self.moves.len() as u32
    }

    /// Puts the stopped bodies where their sweeps stopped them (after the
    /// integration moved every body by its whole velocity).
    pub fn apply(&self, b: &mut Bodies) {
        for &(slot, p) in &self.moves {
            b.position.set(slot as usize, p.to_array());
        }
    }
}

/// The fraction of `motion` body `i` may move before it sinks
/// `linear_cast_max_penetration` of `inner` into a static body, or `None`
/// when nothing stops it within the step (Jolt's `mFractionPlusSlop`).
fn first_stop(
    b: &Bodies,
    queries: &QueryTrees,
    no_contact: &[BodyPair],
    s: &PhysicsSettings,
    i: usize,
    motion: Vec3,
    inner: f32,
) -> Option<f32> {
    let (pos, rot, shape) = (b.pos(i), b.rot(i), b.shape[i]);
    let len = motion.length();
    let dir = motion / len;
    let me = Placed { shape, pos, rot };
    let (lo, hi) = shape.world_aabb(pos, rot, &b.shapes);
    let allowed = s.linear_cast_max_penetration * inner;
    let layer = b.object_layer[i];
    let mut best = 1.0f32;
    let mut limit = len;
    queries.statics_along(
        b,
        0.5 * (lo + hi),
        dir,
        0.5 * (hi - lo),
        &mut limit,
        |slot, limit| {
            let o = slot as usize;
            if b.is_sensor(o) || !s.layer_filter.collides(layer, b.object_layer[o]) {
                return;
            }
            let pair = BodyPair {
                a: slot.min(i as u32),
                b: slot.max(i as u32),
            };
            if !no_contact.is_empty() && no_contact.binary_search(&pair).is_ok() {
                return;
            }
            let other = Placed {
                shape: b.shape[o],
                pos: b.pos(o),
                rot: b.rot(o),
            };
            let found = cast_placed(&me, dir, *limit, &other, &b.shapes).map(|h| h.0);
            let Some(hit) = found else {
                return;
            };
            // Touching or overlapping already (a body the last sweep stopped
            // sinks `allowed` deep, and may have turned since): the sweep's
            // normal means nothing where the cores overlap, the narrow phase's
            // (least penetration, as EPA's) does.
            let normal = if hit.distance <= 0.0 {
                let placed = |k: usize| Placed {
                    shape: b.shape[k],
                    pos: b.pos(k),
                    rot: b.rot(k),
                };
                match collide_in(&placed(i), &placed(o), 0.0, &b.shapes) {
                    Some(c) if c.count > 0 => -c.normal,
                    _ => hit.normal,
                }
            } else {
                hit.normal
            };
            // How deep the whole step's motion would carry it past the
            // surface: a grazing hit (a fast body skimming the floor, or
            // sliding on it) sinks less than allowed and is left to the
            // discrete contacts.
            let sink = -normal.dot(motion);
            if sink <= allowed {
                return;
            }
            let f = hit.distance / len + allowed / sink;
            if f < best {
                best = f;
                // a farther hit cannot stop it sooner
                *limit = limit.min(best * len);
            }
        },
    );
    (best < 1.0).then_some(best)
}
