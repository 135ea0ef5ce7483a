//! Body-pair cache (Jolt's `mUseBodyPairContactCache`): a pair whose
//! relative pose barely changed since its shapes were last collided gets
//! that collision's manifold back, moved with the bodies, instead of a new
//! collision.
//!
//! A manifold depends only on the two shapes and on B's pose relative to A.
//! Every candidate pair therefore records, when it is collided, that
//! relative pose (B's centre and rotation in A's frame), the manifold's
//! normal in A's frame (its points already live in each body's frame), and
//! the generations of both body slots. The next step, a pair whose bodies
//! are the same (generations; a body's shape never changes) and whose
//! relative pose is within [`PairCacheTolerance`] of the recorded one
//! rebuilds its manifold from the record: the normal and the points are
//! carried to world space with the bodies, and each point's separation is
//! measured anew along the normal. The recorded pose is carried over
//! unchanged on a hit, so a pair that creeps is collided again once it has
//! crept past the tolerance (Jolt does the same): the manifold is never
//! more than the tolerance away from a fresh one.
//!
//! A pair that did not touch is cached too (an empty manifold): a settled
//! pile's near misses cost as little as its contacts. Beyond Jolt, a pair
//! of boxes that did not touch also keeps how far apart its best face axes
//! held the boxes ([`Apart`]): until the bodies have moved relative to each
//! other by more than that gap could absorb (a bound, not a tolerance), the
//! pair is still apart and is not collided, however far it has moved. Bodies
//! that fall, tumble or jostle side by side (rain) keep most of their near
//! misses out of the separating-axis test this way.

use crate::body::Bodies;
use crate::broadphase::BodyPair;
use crate::collide::MAX_POINTS;
use crate::math::{quat_mul, rotate, Quat, Vec3};
use crate::narrowphase::Manifold;

/// The thresholds of a hit, from the settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PairCacheTolerance {
    /// Largest squared change (m²) of B's centre in A's frame.
    pub max_delta_position_sq: f32,
    /// Smallest `|q · q_cached|` of the relative rotations: the cosine of
    /// half the largest rotation between them.
    pub cos_max_delta_rotation_div2: f32,
}

impl PairCacheTolerance {
    /// From a distance (m) and an angle (radians).
    pub fn new(max_delta_position: f32, max_delta_rotation: f32) -> Self {
        Self {
            max_delta_position_sq: max_delta_position * max_delta_position,
            cos_max_delta_rotation_div2: (0.5 * max_delta_rotation).cos(),
        }
    }
}

/// B's pose in A's frame, and what else a hit must match.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RelativePose {
    /// B's centre in A's frame (m).
    pub position: Vec3,
    /// `A⁻¹·B`.
    pub rotation: Quat,
}

impl RelativePose {
    #[inline]
    pub fn of(pos_a: Vec3, inv_rot_a: Quat, pos_b: Vec3, rot_b: Quat) -> Self {
        Self {
            position: rotate(inv_rot_a, pos_b - pos_a),
            rotation: quat_mul(inv_rot_a, rot_b),
        }
    }

    /// How far `self` has moved from the `cached` pose.
    #[inline]
    pub fn motion(&self, cached: &RelativePose) -> Motion {
        let (p, q) = (self.rotation, cached.rotation);
        // Written out, never glam's SIMD dot: the same bits on every build.
        let dot = p.x * q.x + p.y * q.y + p.z * q.z + p.w * q.w;
        Motion {
            distance_sq: (self.position - cached.position).length_squared(),
            cos_half_angle: dot.abs(),
        }
    }
}

/// The change of a relative pose: how far B's centre moved in A's frame,
/// and the rotation between the two relative rotations. The dot product of
/// two unit quaternions is the cosine of half the angle between the
/// rotations (either sign: `q` and `-q` are one rotation).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Motion {
    /// Squared distance B's centre moved in A's frame (m²).
    pub distance_sq: f32,
    /// `cos(θ/2)` of the angle `θ` the relative rotation turned by.
    pub cos_half_angle: f32,
}

impl Motion {
    /// Within Jolt's thresholds.
    #[inline]
    pub fn near(&self, tol: &PairCacheTolerance) -> bool {
        self.distance_sq <= tol.max_delta_position_sq
            && self.cos_half_angle >= tol.cos_max_delta_rotation_div2
    }
}

/// Slack (m) added to the bound of [`Apart::holds`] for the rounding of
/// f32 poses and separations: ~10 ulps of coordinates up to ~100 m (an ulp
/// is 7.6 µm there). Farther out the separating-axis test's own rounding
/// is of this size, and a verdict within 0.1 mm of the 2 cm contact
/// distance changes no contact that matters.
const APART_ROUNDING: f32 = 1e-4;
/// Slack added to `1 − cos²(θ/2)` before its square root: the dot product
/// of two f32 unit quaternions is off by a few 1e-7, which near `cos = 1`
/// would hide a turn of up to ~0.1°.
const APART_ANGLE_ROUNDING: f32 = 2e-6;

/// How far apart a box pair that did not touch was, along the best face
/// axis of either box, and what bounds how fast that gap can close.
///
/// Along an axis fixed in A's frame, the gap shrinks by at most the
/// distance B's centre moved in A's frame plus what B's turn moves its
/// support point: `2 sin(θ/2)` times B's farthest point from its centre.
/// Along an axis fixed in B's frame, A's centre as seen from B also swings
/// with the turn, by `2 sin(θ/2)` times the distance between the centres.
/// While either gap beats its bound, the separating-axis test would find
/// that axis still separating by more than the contact distance: the pair's
/// verdict is "apart", exactly (to [`APART_ROUNDING`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Apart {
    /// Separation along A's best face axis beyond the contact distance (m).
    pub slack_a: f32,
    /// B's farthest point from its centre (m).
    pub reach_b: f32,
    /// Separation along B's best face axis beyond the contact distance (m).
    pub slack_b: f32,
    /// A's farthest point from its centre plus the distance between the
    /// centres (m).
    pub reach_a: f32,
}

impl Apart {
    /// No gap known: never holds.
    pub const UNKNOWN: Apart = Apart {
        slack_a: f32::NEG_INFINITY,
        reach_b: 0.0,
        slack_b: f32::NEG_INFINITY,
        reach_a: 0.0,
    };

    /// From the separations along the best face axes of A and of B, the
    /// boxes' half extents, and B's centre in A's frame.
    pub fn of_boxes(
        face_a: f32,
        face_b: f32,
        max_separation: f32,
        ha: Vec3,
        hb: Vec3,
        b_in_a: Vec3,
    ) -> Self {
        Self {
            slack_a: face_a - max_separation,
            reach_b: hb.length(),
            slack_b: face_b - max_separation,
            reach_a: ha.length() + b_in_a.length(),
        }
    }

    /// Whether the pair is still apart after `motion`.
    #[inline]
    pub fn holds(&self, motion: &Motion) -> bool {
        let c = motion.cos_half_angle;
        let turn = 2.0 * (1.0 - c * c + APART_ANGLE_ROUNDING).max(0.0).sqrt();
        let moved = motion.distance_sq.sqrt() + APART_ROUNDING;
        moved + turn * self.reach_b < self.slack_a || moved + turn * self.reach_a < self.slack_b
    }
}

/// A manifold as a pair's slot keeps it: a [`Manifold`] without its pair
/// (the slot's place says it) and without impulses (warm starting fills
/// them after compaction), so the slots the cache streams through every
/// step are smaller.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotManifold {
    /// World-space normal from A to B.
    pub normal: Vec3,
    pub count: u32,
    pub sensor: bool,
    pub local_a: [Vec3; MAX_POINTS],
    pub local_b: [Vec3; MAX_POINTS],
    pub separation: [f32; MAX_POINTS],
    /// The parts of A and of B the manifold's first contact came from (a
    /// compound's child, a surface's triangle; 0 for a whole shape).
    pub sub: [u32; 2],
}

impl SlotManifold {
    pub const EMPTY: SlotManifold = SlotManifold {
        normal: Vec3::ZERO,
        count: 0,
        sensor: false,
        local_a: [Vec3::ZERO; MAX_POINTS],
        local_b: [Vec3::ZERO; MAX_POINTS],
        separation: [0.0; MAX_POINTS],
        sub: [0; 2],
    };

    /// The solver's manifold of `pair`, impulses zero.
    #[inline]
    pub fn manifold_of(&self, pair: BodyPair) -> Manifold {
        Manifold {
            pair,
            normal: self.normal,
            count: self.count,
            local_a: self.local_a,
            local_b: self.local_b,
            separation: self.separation,
            sensor: self.sensor,
            sub: self.sub,
            ..Manifold::EMPTY
        }
    }
}

use crate::snapshot::codec::{get_count, get_first, put_first, Reader, Snap, Writer};

crate::snapshot::codec::snap_fields!(RelativePose { position, rotation });
crate::snapshot::codec::snap_fields!(Apart {
    slack_a,
    reach_b,
    slack_b,
    reach_a
});
impl Snap for SlotManifold {
    fn put(&self, w: &mut Writer) {
        w.u32(self.count);
        if self.count > 0 {
            w.put(&self.normal);
            w.put(&self.sensor);
            put_first(w, &self.local_a, self.count);
            put_first(w, &self.local_b, self.count);
            put_first(w, &self.separation, self.count);
            w.put(&self.sub);
        }
    }
    fn get(r: &mut Reader) -> crate::error::Result<Self> {
        let count = get_count(r, MAX_POINTS)?;
        if count == 0 {
            return Ok(SlotManifold::EMPTY);
        }
        Ok(SlotManifold {
            normal: r.get()?,
            count,
            sensor: r.get()?,
            local_a: get_first(r, count)?,
            local_b: get_first(r, count)?,
            separation: get_first(r, count)?,
            sub: r.get()?,
        })
    }
}

/// What a slot's readers look at: a record's pose, generations and gap;
/// the manifold; the normal in A's frame of a touching record.
impl Snap for PairSlot {
    fn put(&self, w: &mut Writer) {
        w.put(&self.recorded);
        if self.recorded {
            w.put(&self.pose);
            w.put(&self.generation);
            w.put(&self.apart);
        }
        w.put(&self.manifold);
        if self.manifold.count > 0 {
            w.put(&self.normal_a);
        }
    }
    fn get(r: &mut Reader) -> crate::error::Result<Self> {
        let mut s = PairSlot::EMPTY;
        s.recorded = r.get()?;
        if s.recorded {
            s.pose = r.get()?;
            s.generation = r.get()?;
            s.apart = r.get()?;
        }
        s.manifold = r.get()?;
        if s.manifold.count > 0 {
            s.normal_a = r.get()?;
        }
        Ok(s)
    }
}

/// One candidate pair's collision result as the next step's cache reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PairSlot {
    /// The relative pose the shapes were collided at.
    pub pose: RelativePose,
    /// Generations of A's and B's slots when collided: a body destroyed and
    /// another created in its slot is not the same pair.
    pub generation: [u32; 2],
    /// The pair was collided and this is its record (not a pair whose
    /// bounding spheres were apart, or one collided with the cache off).
    pub recorded: bool,
    /// For a pair that did not touch, how far apart it was.
    pub apart: Apart,
    /// The manifold's normal in A's frame.
    pub normal_a: Vec3,
    /// The manifold found (count 0: the shapes did not touch; the rest of
    /// it is then unused), points in each body's frame.
    pub manifold: SlotManifold,
    /// This step's manifolds beyond `manifold`, waiting in the job's
    /// extra list (a shape–surface pair touches with several; such pairs
    /// are never recorded, so a slot that serves has none).
    pub extra: u8,
}

impl PairSlot {
    pub const EMPTY: PairSlot = PairSlot {
        pose: RelativePose {
            position: Vec3::ZERO,
            rotation: Quat::IDENTITY,
        },
        generation: [0; 2],
        recorded: false,
        apart: Apart::UNKNOWN,
        normal_a: Vec3::ZERO,
        manifold: SlotManifold::EMPTY,
        extra: 0,
    };

    /// Whether this record (of the last step) serves the pair at `poses`:
    /// the same bodies, and either within the tolerance of the pose it was
    /// collided at or, for a pair that did not touch, still surely apart.
    #[inline]
    pub fn serves(&self, poses: &PairPoses, tol: &PairCacheTolerance) -> bool {
        if !self.recorded || self.generation != poses.generation {
            return false;
        }
        let motion = poses.relative.motion(&self.pose);
        motion.near(tol) || (self.manifold.count == 0 && self.apart.holds(&motion))
    }

    /// A pair that was not collided: no contact, and no record for the
    /// cache.
    #[inline]
    pub fn not_collided(&mut self) {
        self.recorded = false;
        self.manifold.count = 0;
        self.extra = 0;
    }

    /// Takes over `from` (another slot's record). A pair that did not touch
    /// copies only what says so, not the unused manifold.
    #[inline]
    pub fn copy_from(&mut self, from: &PairSlot) {
        if from.manifold.count == 0 {
            self.pose = from.pose;
            self.generation = from.generation;
            self.recorded = from.recorded;
            self.apart = from.apart;
            self.manifold.count = 0;
        } else {
            *self = *from;
        }
        self.extra = 0;
    }
}

/// Both bodies' poses, read once per pair.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PairPoses {
    pub pos_a: Vec3,
    pub rot_a: Quat,
    pub inv_rot_a: Quat,
    pub pos_b: Vec3,
    pub rot_b: Quat,
    pub generation: [u32; 2],
    /// B's pose in A's frame, when the cache is on (read with
    /// `relative: true`).
    pub relative: RelativePose,
}

impl PairPoses {
    pub const ZERO: PairPoses = PairPoses {
        pos_a: Vec3::ZERO,
        rot_a: Quat::IDENTITY,
        inv_rot_a: Quat::IDENTITY,
        pos_b: Vec3::ZERO,
        rot_b: Quat::IDENTITY,
        generation: [0; 2],
        relative: RelativePose {
            position: Vec3::ZERO,
            rotation: Quat::IDENTITY,
        },
    };

    /// Both bodies' poses; with `relative`, also B's pose in A's frame and
    /// the slots' generations (what the cache compares).
    #[inline]
    pub fn read(bodies: &Bodies, pair: BodyPair, relative: bool) -> Self {
        let (ia, ib) = (pair.a as usize, pair.b as usize);
        let rot_a = bodies.rot(ia);
        let mut p = Self {
            pos_a: bodies.pos(ia),
            rot_a,
            inv_rot_a: rot_a.conjugate(),
            pos_b: bodies.pos(ib),
            rot_b: bodies.rot(ib),
            ..Self::ZERO
        };
        if relative {
            p.relative = RelativePose::of(p.pos_a, p.inv_rot_a, p.pos_b, p.rot_b);
            // Both generations in one 8-byte store: `serves` compares them
            // as one 8-byte load, which two 4-byte stores cannot forward
            // to (a store-forwarding stall on every looked-up pair; see
            // `perf-reports/instructions.md`, stop 55).
            let (ga, gb) = (bodies.slots.generation(ia), bodies.slots.generation(ib));
            let mut bytes = [0u8; 8];
            bytes[..4].copy_from_slice(&ga.to_ne_bytes());
            bytes[4..].copy_from_slice(&gb.to_ne_bytes());
            p.generation = bytemuck::cast(u64::from_ne_bytes(bytes));
        }
        p
    }
}

/// Moves a record that [serves](PairSlot::serves) the pair to this step's
/// poses: the normal is carried to world space with A, and each point's
/// separation is measured again.
///
/// A point's separation is measured in A's frame, where the normal `n` and
/// A's point `a` are the cached ones and B's point is carried by the
/// relative pose `(p, q)`: `(p + q·b - a)·n = p·n + b·(q⁻¹·n) - a·n`, two
/// rotations per manifold and two dot products per point.
#[inline]
pub(crate) fn carry(slot: &mut PairSlot, poses: &PairPoses, sensor: bool) {
    let n = slot.normal_a;
    let m = &mut slot.manifold;
    if m.count > 0 {
        let relative = poses.relative;
        m.normal = rotate(poses.rot_a, n);
        m.sensor = sensor;
        let n_b = rotate(relative.rotation.conjugate(), n);
        let base = relative.position.dot(n);
        for k in 0..m.count as usize {
            m.separation[k] = base + m.local_b[k].dot(n_b) - m.local_a[k].dot(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::box_box_sat::{sat_of_boxes, Verdict};
    use crate::collide::Obb;
    use crate::test_rng::TestRng;

    /// The bound is a guarantee: box pairs that were apart, moved and
    /// turned at random (B and A both, from 0.1 mm to 30 cm and up to
    /// 40°), are still apart by the separating-axis test whenever the
    /// record says they are; and the record says so often (it is no
    /// bound that never holds).
    #[test]
    fn apart_holds_only_while_the_boxes_are_apart() {
        let mut rng = TestRng(29);
        let m = 0.02;
        let (mut held, mut tried) = (0, 0);
        for _ in 0..20_000 {
            let h =
                |rng: &mut TestRng| Vec3::new(rng.f(0.05, 1.0), rng.f(0.05, 1.0), rng.f(0.05, 1.0));
            let (ha, hb) = (h(&mut rng), h(&mut rng));
            let (pa, qa) = (Vec3::new(rng.f(-5.0, 5.0), 0.0, 0.0), rng.quat());
            let dir = Vec3::new(rng.f(-1.0, 1.0), rng.f(-1.0, 1.0), rng.f(-1.0, 1.0));
            let dist = ha.length() + hb.length() * rng.f(0.3, 1.2);
            let pb = pa + dir.normalize_or(Vec3::X) * dist;
            let qb = rng.quat();
            let before = sat_of_boxes(&Obb::new(pa, qa, ha), &Obb::new(pb, qb, hb), m);
            if before.verdict() != Verdict::Separated {
                continue;
            }
            let (face_a, face_b) = before.face_separations();
            let rel = RelativePose::of(pa, qa.conjugate(), pb, qb);
            let apart = Apart::of_boxes(face_a, face_b, m, ha, hb, rel.position);
            // Move both bodies.
            let scale = [1e-4, 1e-3, 1e-2, 0.1, 0.3][rng.below(5)];
            let angle = [0.0, 0.01, 0.05, 0.2, 0.7][rng.below(5)];
            let jiggle = |rng: &mut TestRng| {
                Vec3::new(rng.f(-1.0, 1.0), rng.f(-1.0, 1.0), rng.f(-1.0, 1.0)) * scale
            };
            let turn = |rng: &mut TestRng| {
                let axis = Vec3::new(rng.f(-1.0, 1.0), rng.f(-1.0, 1.0), rng.f(-1.0, 1.0));
                Quat::from_axis_angle(axis.normalize_or(Vec3::Y), rng.f(-angle, angle))
            };
            let (pa2, pb2) = (pa + jiggle(&mut rng), pb + jiggle(&mut rng));
            let (qa2, qb2) = (
                (turn(&mut rng) * qa).normalize(),
                (turn(&mut rng) * qb).normalize(),
            );
            let motion = RelativePose::of(pa2, qa2.conjugate(), pb2, qb2).motion(&rel);
            tried += 1;
            if apart.holds(&motion) {
                held += 1;
                let after = sat_of_boxes(&Obb::new(pa2, qa2, ha), &Obb::new(pb2, qb2, hb), m);
                assert_eq!(
                    after.verdict(),
                    Verdict::Separated,
                    "scale {scale} angle {angle}"
                );
            }
        }
        assert!(tried > 5_000 && held > tried / 5, "held {held} of {tried}");
    }
}
