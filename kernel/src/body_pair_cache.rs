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
//! pile's near misses cost as little as its contacts.

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

    /// Whether `self` is within `tol` of the `cached` pose. The dot product
    /// of two unit quaternions is the cosine of half the angle between the
    /// rotations (either sign: `q` and `-q` are one rotation).
    #[inline]
    pub fn near(&self, cached: &RelativePose, tol: &PairCacheTolerance) -> bool {
        let (p, q) = (self.rotation, cached.rotation);
        // Written out, never glam's SIMD dot: the same bits on every build.
        let dot = p.x * q.x + p.y * q.y + p.z * q.z + p.w * q.w;
        (self.position - cached.position).length_squared() <= tol.max_delta_position_sq
            && dot.abs() >= tol.cos_max_delta_rotation_div2
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
}

impl SlotManifold {
    pub const EMPTY: SlotManifold = SlotManifold {
        normal: Vec3::ZERO,
        count: 0,
        sensor: false,
        local_a: [Vec3::ZERO; MAX_POINTS],
        local_b: [Vec3::ZERO; MAX_POINTS],
        separation: [0.0; MAX_POINTS],
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
            ..Manifold::EMPTY
        }
    }

    /// The smallest separation of its points.
    pub fn deepest(&self) -> f32 {
        self.separation[..self.count as usize]
            .iter()
            .copied()
            .fold(f32::INFINITY, f32::min)
    }
}

/// One candidate pair's collision result as the next step's cache reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PairSlot {
    /// The manifold found (count 0: the shapes did not touch), points in
    /// each body's frame.
    pub manifold: SlotManifold,
    /// The relative pose the shapes were collided at.
    pub pose: RelativePose,
    /// The manifold's normal in A's frame.
    pub normal_a: Vec3,
    /// Generations of A's and B's slots when collided: a body destroyed and
    /// another created in its slot is not the same pair.
    pub generation: [u32; 2],
}

impl PairSlot {
    pub const EMPTY: PairSlot = PairSlot {
        manifold: SlotManifold::EMPTY,
        pose: RelativePose {
            position: Vec3::ZERO,
            rotation: Quat::IDENTITY,
        },
        normal_a: Vec3::ZERO,
        generation: [0; 2],
    };
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
            p.generation = [bodies.slots.generation(ia), bodies.slots.generation(ib)];
        }
        p
    }
}

/// Moves `slot` (this pair's result of the last step) to this step's
/// poses; `false` (and `slot` left as it was) when the bodies changed or
/// moved too far relative to each other since it was collided.
///
/// A point's separation is measured in A's frame, where the normal `n` and
/// A's point `a` are the cached ones and B's point is carried by the
/// relative pose `(p, q)`: `(p + q·b - a)·n = p·n + b·(q⁻¹·n) - a·n`, two
/// rotations per manifold and two dot products per point.
#[inline]
pub(crate) fn refresh(
    slot: &mut PairSlot,
    poses: &PairPoses,
    tol: &PairCacheTolerance,
    sensor: bool,
) -> bool {
    let relative = poses.relative;
    if slot.generation != poses.generation || !relative.near(&slot.pose, tol) {
        return false;
    }
    let n = slot.normal_a;
    let m = &mut slot.manifold;
    if m.count > 0 {
        m.normal = rotate(poses.rot_a, n);
        m.sensor = sensor;
        let n_b = rotate(relative.rotation.conjugate(), n);
        let base = relative.position.dot(n);
        for k in 0..m.count as usize {
            m.separation[k] = base + m.local_b[k].dot(n_b) - m.local_a[k].dot(n);
        }
    }
    true
}
