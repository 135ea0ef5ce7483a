//! Scene queries: rays (one, all hits, or a batch in parallel on the
//! pool), boxes and points, over two [`QueryTree`]s, one of static bodies
//! and one of moving ones (Jolt keeps a tree per layer for the same
//! reason: a level's thousands of static bodies are built once, not
//! refitted every step).
//!
//! Keeping the trees true:
//! - the step's last phase (`query_tree`) refits the moving tree from the
//!   bodies' boxes, and rebuilds it when its surface-area cost grew past
//!   [`PhysicsSettings::query_tree_rebuild_factor`] times its build cost,
//!   or either tree when bodies were added since it was built;
//! - between steps, a body added waits in a short list every query tests
//!   one by one, a body removed leaves its lane, and a body teleported
//!   (`set_position`, `set_rotation`) grows the boxes above it, so a query
//!   between steps sees exactly the world as it is, never a stale box.
//!
//! Every query answers in a deterministic order (closest first with ties
//! to the lower body index; sets by body index), the same on any thread
//! count: a batch of rays gives, ray for ray, the bits single rays give.
//!
//! [`PhysicsSettings::query_tree_rebuild_factor`]: crate::PhysicsSettings::query_tree_rebuild_factor

#[cfg(test)]
mod property_tests;
mod shape_tests;
pub(crate) mod sweep;
pub(crate) mod tree;

use crate::body::{BodyId, MotionType};
use crate::error::{PhysicsError, Result};
use crate::math::Vec3;
use crate::system::PhysicsSystem;
use rayon::prelude::*;
use tree::{LeafRef, QueryTree, Stack, EMPTY, LEAF, WIDTH};
use wide::f32x8;

/// A ray: `origin + t · direction` for `0 <= t <= max_distance`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ray {
    origin: Vec3,
    direction: Vec3,
    max_distance: f32,
}

impl Ray {
    /// A ray from `origin` along `direction` (any non-zero length; it is
    /// normalised) up to `max_distance` m (`f32::INFINITY` for no limit).
    /// Refused (`InvalidRay`): a non-finite origin or direction, a
    /// direction shorter than 1e-6, a NaN or negative distance.
    pub fn new(origin: Vec3, direction: Vec3, max_distance: f32) -> Result<Self> {
        let len = direction.length();
        let valid =
            origin.is_finite() && direction.is_finite() && len >= 1e-6 && max_distance >= 0.0; // NaN fails both compares
        if !valid {
            return Err(PhysicsError::InvalidRay);
        }
        Ok(Self {
            origin,
            direction: direction / len,
            max_distance,
        })
    }

    pub fn origin(&self) -> Vec3 {
        self.origin
    }

    /// Unit length.
    pub fn direction(&self) -> Vec3 {
        self.direction
    }

    /// m.
    pub fn max_distance(&self) -> f32 {
        self.max_distance
    }
}

/// Where a ray meets a body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RayHit {
    pub body: BodyId,
    /// Along the ray (m); 0 for a ray that starts inside the body.
    pub distance: f32,
    /// `origin + distance · direction`.
    pub point: Vec3,
    /// The body's outward surface normal at `point` (unit); against the
    /// ray's direction for a ray that starts inside.
    pub normal: Vec3,
    /// The triangle hit on a mesh (its index among the kept triangles,
    /// see [`TriangleMesh::source_index`](crate::TriangleMesh::source_index))
    /// or a height field (`2 · (j · (samples_x - 1) + i) + half` for cell
    /// `(i, j)`); 0 for other shapes.
    pub sub_shape: u32,
}

/// Which bodies a query sees. `Default`: every layer, sensors included,
/// nothing excluded.
#[derive(Clone, Copy)]
pub struct QueryFilter<'a> {
    /// Bit `l` lets bodies of object layer `l` through.
    pub layer_mask: u32,
    /// One body to skip (the shooter, the character casting).
    pub exclude: Option<BodyId>,
    pub include_sensors: bool,
    /// A last word per body that passed the rest; must be `Sync`, since a
    /// batch of rays calls it from every worker.
    pub predicate: Option<&'a (dyn Fn(BodyId) -> bool + Sync)>,
}

impl Default for QueryFilter<'_> {
    fn default() -> Self {
        Self {
            layer_mask: u32::MAX,
            exclude: None,
            include_sensors: true,
            predicate: None,
        }
    }
}

impl<'a> QueryFilter<'a> {
    pub fn with_layer_mask(mut self, mask: u32) -> Self {
        self.layer_mask = mask;
        self
    }

    pub fn excluding(mut self, body: BodyId) -> Self {
        self.exclude = Some(body);
        self
    }

    pub fn without_sensors(mut self) -> Self {
        self.include_sensors = false;
        self
    }

    pub fn with_predicate(mut self, p: &'a (dyn Fn(BodyId) -> bool + Sync)) -> Self {
        self.predicate = Some(p);
        self
    }

    /// Every body passes (the default filter).
    #[inline(always)]
    pub(crate) fn passes_all(&self) -> bool {
        self.layer_mask == u32::MAX
            && self.include_sensors
            && self.exclude.is_none()
            && self.predicate.is_none()
    }
}

/// Rays one job of a batch casts (enough to amortise a claim, few enough
/// that 100k rays make hundreds of jobs to balance).
const RAYS_PER_JOB: usize = 256;

/// The two trees and what keeps them true between steps.
pub(crate) struct QueryTrees {
    statics: QueryTree,
    moving: QueryTree,
    /// Per body slot: its leaf, with [`MOVING`] set in the moving tree;
    /// `NO_LEAF` when in neither (not added, or waiting in `loose`).
    leaf_of: Vec<LeafRef>,
    /// Bodies added since the trees were built (tested one by one).
    loose: Vec<u32>,
    /// Scratch for a rebuild's body lists.
    slots: Vec<u32>,
    /// Scratch for `activate_bodies_in_aabb`'s candidates.
    pub found: Vec<u32>,
    statics_dirty: bool,
    moving_dirty: bool,
}

/// Bodies added since a tree was built wait in a list each query tests one
/// by one; past this many of a kind the step rebuilds that tree. A world
/// that adds a few bodies a step (spawned debris, bullets) then refits
/// instead of rebuilding every step.
const LOOSE_BEFORE_REBUILD: usize = 32;

const MOVING: u32 = 1 << 31;
const NO_LEAF: u32 = u32::MAX;

impl QueryTrees {
    pub fn new(max_bodies: usize) -> Self {
        Self {
            statics: QueryTree::new(max_bodies),
            moving: QueryTree::new(max_bodies),
            leaf_of: vec![NO_LEAF; max_bodies],
            loose: Vec::with_capacity(max_bodies),
            slots: Vec::with_capacity(max_bodies),
            found: Vec::with_capacity(max_bodies),
            statics_dirty: false,
            moving_dirty: false,
        }
    }

    /// Bytes per body of capacity (both trees could hold every body).
    pub const fn bytes_per_body() -> usize {
        2 * QueryTree::bytes_per_body() + 4 * 4
    }

    /// Body `slot` was added to the world.
    pub fn added(&mut self, slot: u32, motion: MotionType) {
        self.loose.push(slot);
        if motion == MotionType::Static {
            self.statics_dirty = true;
        } else {
            self.moving_dirty = true;
        }
    }

    /// Forgets every body and builds both trees over the world's added
    /// bodies (after a snapshot is restored).
    pub fn reset(&mut self, bodies: &crate::body::Bodies) {
        self.leaf_of.fill(NO_LEAF);
        self.loose.clear();
        self.rebuild(bodies, false);
        self.rebuild(bodies, true);
    }

    /// Body `slot` was taken out of the world.
    pub fn removed(&mut self, slot: u32) {
        let leaf = std::mem::replace(&mut self.leaf_of[slot as usize], NO_LEAF);
        if leaf != NO_LEAF {
            self.tree_mut(leaf).remove(leaf & !MOVING);
        } else if let Some(k) = self.loose.iter().position(|&s| s == slot) {
            self.loose.swap_remove(k);
        }
    }

    /// Body `slot`'s box changed between steps.
    pub fn moved(&mut self, slot: u32, bodies: &crate::body::Bodies) {
        let leaf = self.leaf_of[slot as usize];
        if leaf != NO_LEAF {
            self.tree_mut(leaf).enlarge(leaf & !MOVING, bodies);
        }
    }

    fn tree_mut(&mut self, leaf: LeafRef) -> &mut QueryTree {
        if leaf & MOVING != 0 {
            &mut self.moving
        } else {
            &mut self.statics
        }
    }

    /// The step's `query_tree` phase: refit the moving tree, and rebuild
    /// a tree when refitting wore it or more than [`LOOSE_BEFORE_REBUILD`]
    /// bodies of its kind wait in the added list.
    pub fn update(
        &mut self,
        ctx: &crate::jobs::StepCtx,
        bodies: &crate::body::Bodies,
        rebuild_factor: f32,
    ) {
        let moving = self
            .loose
            .iter()
            .filter(|&&s| bodies.motion(s as usize) != MotionType::Static)
            .count();
        let statics = self.loose.len() - moving;
        if self.statics_dirty && (statics > LOOSE_BEFORE_REBUILD || self.statics.is_empty()) {
            self.rebuild(bodies, false);
        }
        if self.moving_dirty && (moving > LOOSE_BEFORE_REBUILD || self.moving.is_empty()) {
            self.rebuild(bodies, true);
        } else if !self.moving.is_empty() {
            self.moving.refit(ctx, bodies);
            if self.moving.cost() > rebuild_factor * self.moving.built_cost {
                self.rebuild(bodies, true);
            }
        }
    }

    fn rebuild(&mut self, bodies: &crate::body::Bodies, moving: bool) {
        self.slots.clear();
        self.slots.extend(
            bodies
                .added
                .iter()
                .copied()
                .filter(|&s| (bodies.motion(s as usize) != MotionType::Static) == moving),
        );
        // the slots in slot order: the build sees the same list however
        // the bodies were added
        self.slots.sort_unstable();
        let tree = if moving {
            &mut self.moving
        } else {
            &mut self.statics
        };
        tree.build(&self.slots, bodies, &mut self.leaf_of);
        if moving {
            for &s in &self.slots {
                self.leaf_of[s as usize] |= MOVING;
            }
            self.moving_dirty = false;
        } else {
            self.statics_dirty = false;
        }
        self.loose
            .retain(|&s| (bodies.motion(s as usize) != MotionType::Static) != moving);
    }

    /// Sleeping bodies of a layer in `layer_mask` whose broad-phase box
    /// overlaps `[min, max]`, into `out` (cleared first; static bodies
    /// never sleep, so only the moving tree and the added list are seen).
    pub fn sleepers_in(
        &self,
        bodies: &crate::body::Bodies,
        min: Vec3,
        max: Vec3,
        layer_mask: u32,
        out: &mut Vec<u32>,
    ) {
        out.clear();
        let take = |slot: u32| {
            let i = slot as usize;
            let lo = Vec3::from_array(bodies.aabb_min.get(i));
            let hi = Vec3::from_array(bodies.aabb_max.get(i));
            if bodies.is_sleeping(i)
                && layer_mask & (1u32 << bodies.object_layer[i]) != 0
                && lo.cmple(max).all()
                && hi.cmpge(min).all()
            {
                out.push(slot);
            }
        };
        self.in_box(&[&self.moving], min, max, take);
    }

    /// Every body of `trees` whose tree box overlaps `[min, max]`, and
    /// every body waiting in the added list: the candidates a box query
    /// tests exactly.
    fn in_box(&self, trees: &[&QueryTree], min: Vec3, max: Vec3, mut take: impl FnMut(u32)) {
        let (lo, hi) = (min.to_array(), max.to_array());
        for tree in trees {
            walk(tree, |node| tree.overlap_mask(node, lo, hi), &mut take);
        }
        self.loose.iter().for_each(|&s| take(s));
    }

    /// The bodies (`f` permitting) among the candidates in `[min, max]`
    /// for which `exact` holds, into `out` by body index.
    fn collect_in_box(
        &self,
        sys: &PhysicsSystem,
        (min, max): (Vec3, Vec3),
        f: &QueryFilter,
        out: &mut Vec<BodyId>,
        exact: impl Fn(usize) -> bool,
    ) -> usize {
        out.clear();
        self.in_box(&self.trees(), min, max, |slot| {
            let s = slot as usize;
            if sys.passes(s, f) && exact(s) {
                out.push(sys.bodies.id_of(s));
            }
        });
        out.sort_unstable();
        out.len()
    }

    fn trees(&self) -> [&QueryTree; 2] {
        [&self.statics, &self.moving]
    }
}

/// A ray prepared for box tests: reciprocal direction per axis (a zero
/// component becomes ±1e30, so a parallel ray's slab is the whole line
/// when the origin is inside it and nothing otherwise).
struct RayLanes {
    o: [f32x8; 3],
    inv: [f32x8; 3],
    /// `o * inv`: a slab distance is then one fused `lo * inv - o * inv`.
    /// Past 3.4e8 m along an axis the ray is parallel to, this overflows
    /// to an infinity that reads as a miss, which it is: no body reaches
    /// there (`MAX_COORDINATE` plus `MAX_SHAPE_SIZE`).
    oi: [f32x8; 3],
}

impl RayLanes {
    fn new(r: &Ray) -> Self {
        let inv = |d: f32| {
            if d.abs() < 1e-30 {
                1e30f32.copysign(d)
            } else {
                1.0 / d
            }
        };
        let (o, d) = (r.origin.to_array(), r.direction.to_array());
        let i = d.map(inv);
        Self {
            o: o.map(f32x8::splat),
            inv: i.map(f32x8::splat),
            oi: [0, 1, 2].map(|a| f32x8::splat(o[a] * i[a])),
        }
    }

    /// Per lane of `node`: the entry distance, and the lanes the ray
    /// enters before `limit` as bits.
    #[inline(always)]
    fn enter(&self, tree: &QueryTree, node: usize, limit: f32) -> ([f32; WIDTH], u32) {
        let (lo, hi) = tree.nodes[node].lanes();
        let mut near = f32x8::splat(0.0);
        let mut far = f32x8::splat(limit);
        // No NaN can arise (finite origin and reciprocals; an empty
        // lane's infinities stay infinities), so the plain min/max
        // instructions do: `min`/`max` would add a NaN test and a blend
        // to each of these twelve.
        for a in 0..3 {
            let t0 = lo[a].mul_sub(self.inv[a], self.oi[a]);
            let t1 = hi[a].mul_sub(self.inv[a], self.oi[a]);
            near = near.fast_max(t0.fast_min(t1));
            far = far.fast_min(t0.fast_max(t1));
        }
        // empty lanes have lo > hi
        let mask = near.simd_le(far) & lo[0].simd_le(hi[0]);
        (near.to_array(), mask.to_bitmask())
    }
}

impl RayLanes {
    /// [`enter`](Self::enter) for a box of half size `ext` moving along
    /// the ray: each child's box grown by `ext` (their Minkowski sum).
    #[inline(always)]
    fn enter_grown(
        &self,
        tree: &QueryTree,
        node: usize,
        limit: f32,
        ext: &[f32x8; 3],
    ) -> ([f32; WIDTH], u32) {
        let (lo, hi) = tree.nodes[node].lanes();
        let mut near = f32x8::splat(0.0);
        let mut far = f32x8::splat(limit);
        for a in 0..3 {
            let t0 = (lo[a] - ext[a] - self.o[a]) * self.inv[a];
            let t1 = (hi[a] + ext[a] - self.o[a]) * self.inv[a];
            near = near.fast_max(t0.fast_min(t1));
            far = far.fast_min(t0.fast_max(t1));
        }
        let mask = near.simd_le(far) & lo[0].simd_le(hi[0]);
        (near.to_array(), mask.to_bitmask())
    }
}

/// Where a swept shape first touches a body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapeCastHit {
    pub body: BodyId,
    /// How far the shape moved along the path (m) before touching: at most
    /// 0.1 mm short of the exact contact, never past it; 0 when it starts
    /// touching or overlapping the body.
    pub distance: f32,
    /// The contact point, on the body's surface.
    pub point: Vec3,
    /// The body's outward surface normal there (unit); against the path's
    /// direction when the shape starts deep inside the body.
    pub normal: Vec3,
    /// The triangle touched on a mesh or height field (as
    /// [`RayHit::sub_shape`]); 0 for other shapes.
    pub sub_shape: u32,
}

impl PhysicsSystem {
    /// Whether body `slot` passes `f`.
    #[inline(always)]
    fn passes(&self, slot: usize, f: &QueryFilter) -> bool {
        let b = &self.bodies;
        if f.passes_all() {
            // the default filter: nothing of the body to read
            return true;
        }
        if f.layer_mask & (1u32 << b.object_layer[slot]) == 0
            || (!f.include_sensors && b.is_sensor(slot))
        {
            return false;
        }
        if f.exclude.is_none() && f.predicate.is_none() {
            return true;
        }
        let id = b.id_of(slot);
        f.exclude != Some(id) && f.predicate.is_none_or(|p| p(id))
    }

    #[inline(always)]
    fn ray_body(&self, slot: usize, ray: &Ray, max: f32) -> Option<(f32, Vec3, u32)> {
        let b = &self.bodies;
        shape_tests::cast_ray_in(
            &b.shape[slot],
            &b.shapes,
            b.pos(slot),
            b.rot(slot),
            ray.origin,
            ray.direction,
            max,
        )
    }

    /// The closest hit along `ray` among bodies `f` lets through (ties go
    /// to the lower body index).
    pub fn cast_ray(&self, ray: &Ray, f: &QueryFilter) -> Option<RayHit> {
        let lanes = RayLanes::new(ray);
        let mut best: Option<(f32, u32, Vec3, u32)> = None;
        let mut limit = ray.max_distance;
        let open = f.passes_all();
        let mut consider = |slot: u32, sys: &Self, limit: &mut f32| {
            let s = slot as usize;
            if !open && !sys.passes(s, f) {
                return;
            }
            if let Some((t, n, sub)) = sys.ray_body(s, ray, *limit) {
                let better = match best {
                    None => true,
                    Some((bt, bs, _, _)) => t < bt || (t == bt && slot < bs),
                };
                if better {
                    best = Some((t, slot, n, sub));
                    *limit = t;
                }
            }
        };
        // The tree whose root the ray enters first goes first: a hit there
        // (a body on the floor) shortens the ray before the other tree's
        // walk (the floor's), which its limit then prunes near the root.
        // The answer is the same in either order (ties go by body index).
        // The lanes of each root the ray enters are kept for its walk.
        let root = |tree: &QueryTree| -> Option<(f32, Entry)> {
            if tree.is_empty() {
                return None;
            }
            // the nearest root lane the ray enters; none: nothing to walk
            let (t, mask) = lanes.enter(tree, 0, limit);
            let mut near = None;
            let mut m = mask;
            while m != 0 {
                let x = t[m.trailing_zeros() as usize];
                near = Some(near.map_or(x, |n: f32| n.min(x)));
                m &= m - 1;
            }
            near.map(|n| (n, (t, mask)))
        };
        let [first, second] = self.queries.trees();
        let (root_first, root_second) = (root(first), root(second));
        let key = |r: &Option<(f32, Entry)>| r.as_ref().map_or(f32::INFINITY, |r| r.0);
        let order = if key(&root_second) < key(&root_first) {
            [(second, root_second), (first, root_first)]
        } else {
            [(first, root_first), (second, root_second)]
        };
        for (tree, root) in order {
            let Some((root_near, entry)) = root else {
                continue;
            };
            if root_near > limit {
                continue;
            }
            walk_nearest(
                tree,
                entry,
                &mut limit,
                |node, limit| lanes.enter(tree, node, limit),
                |slot, limit| consider(slot, self, limit),
            );
        }
        for &slot in &self.queries.loose {
            consider(slot, self, &mut limit);
        }
        best.map(|(t, slot, n, sub_shape)| RayHit {
            body: self.bodies.id_of(slot as usize),
            distance: t,
            point: ray.origin + ray.direction * t,
            normal: n,
            sub_shape,
        })
    }

    /// Every body `ray` meets (`f` permitting) into `hits`, cleared first,
    /// nearest first (ties by body index). Returns how many.
    pub fn cast_ray_all(&self, ray: &Ray, f: &QueryFilter, hits: &mut Vec<RayHit>) -> usize {
        hits.clear();
        let lanes = RayLanes::new(ray);
        let limit = ray.max_distance;
        let mut take = |slot: u32| {
            let s = slot as usize;
            if self.passes(s, f) {
                if let Some((t, n, sub_shape)) = self.ray_body(s, ray, limit) {
                    hits.push(RayHit {
                        body: self.bodies.id_of(s),
                        distance: t,
                        point: ray.origin + ray.direction * t,
                        normal: n,
                        sub_shape,
                    });
                }
            }
        };
        for tree in self.queries.trees() {
            walk(tree, |node| lanes.enter(tree, node, limit).1, &mut take);
        }
        self.queries.loose.iter().for_each(|&s| take(s));
        hits.sort_unstable_by(|a, b| {
            a.distance
                .total_cmp(&b.distance)
                .then(a.body.index().cmp(&b.body.index()))
        });
        hits.len()
    }

    /// [`cast_ray`](Self::cast_ray) for every ray of `rays` into `hits`
    /// (same length, else `QueryBufferMismatch`), in parallel on `pool`:
    /// ray for ray the bits `cast_ray` gives, on any number of workers.
    /// Nothing is allocated per ray.
    pub fn cast_rays(
        &self,
        rays: &[Ray],
        hits: &mut [Option<RayHit>],
        f: &QueryFilter,
        pool: &rayon::ThreadPool,
    ) -> Result<()> {
        if rays.len() != hits.len() {
            return Err(PhysicsError::QueryBufferMismatch);
        }
        pool.install(|| {
            hits.par_chunks_mut(RAYS_PER_JOB)
                .zip(rays.par_chunks(RAYS_PER_JOB))
                .for_each(|(out, rays)| {
                    for (h, r) in out.iter_mut().zip(rays) {
                        *h = self.cast_ray(r, f);
                    }
                });
        });
        Ok(())
    }

    /// Bodies (`f` permitting) whose shape's bounding box overlaps
    /// `[min, max]`, into `out` (cleared first) by body index. Refused
    /// (`InvalidPosition`): a non-finite corner.
    pub fn overlap_aabb(
        &self,
        min: Vec3,
        max: Vec3,
        f: &QueryFilter,
        out: &mut Vec<BodyId>,
    ) -> Result<usize> {
        if !min.is_finite() || !max.is_finite() {
            return Err(PhysicsError::InvalidPosition);
        }
        Ok(self.queries.collect_in_box(self, (min, max), f, out, |s| {
            let (a, b) = self.bodies.aabb_of(s, 0.0);
            a.cmple(max).all() && b.cmpge(min).all()
        }))
    }

    /// Bodies (`f` permitting) whose shape holds `point` (surface
    /// included), into `out` (cleared first) by body index. Refused
    /// (`InvalidPosition`): a non-finite point.
    pub fn overlap_point(
        &self,
        point: Vec3,
        f: &QueryFilter,
        out: &mut Vec<BodyId>,
    ) -> Result<usize> {
        if !point.is_finite() {
            return Err(PhysicsError::InvalidPosition);
        }
        let b = &self.bodies;
        Ok(self
            .queries
            .collect_in_box(self, (point, point), f, out, |s| {
                shape_tests::contains_point_in(&b.shape[s], &b.shapes, b.pos(s), b.rot(s), point)
            }))
    }

    /// Bodies (`f` permitting) whose shape touches or overlaps `shape`
    /// placed at `position`, `rotation`, into `out` (cleared first) by body
    /// index: the narrow phase's exact test (SAT for boxes, distances for
    /// spheres and capsules) at zero separation. Refused: an invalid shape
    /// (`InvalidShape`), position (`InvalidPosition`) or rotation
    /// (`InvalidRotation`).
    pub fn overlap_shape(
        &self,
        shape: &crate::shape::Shape,
        position: Vec3,
        rotation: crate::math::Quat,
        f: &QueryFilter,
        out: &mut Vec<BodyId>,
    ) -> Result<usize> {
        shape.validate_in(&self.bodies.shapes)?;
        let position = crate::body::checked_position(position)?;
        let rotation = crate::body::checked_rotation(rotation)?;
        let me = crate::collide::Placed {
            shape: *shape,
            pos: position,
            rot: rotation,
        };
        let bounds = shape.world_aabb(position, rotation, &self.bodies.shapes);
        Ok(self
            .queries
            .collect_in_box(self, bounds, f, out, |s| self.shape_overlaps(&me, s)))
    }

    fn shape_overlaps(&self, me: &crate::collide::Placed, s: usize) -> bool {
        let b = &self.bodies;
        let body = crate::collide::Placed {
            shape: b.shape[s],
            pos: b.pos(s),
            rot: b.rot(s),
        };
        crate::collide::collide_in(me, &body, 0.0, &b.shapes).is_some_and(|c| c.count > 0)
    }

    /// The first body (`f` permitting) that `shape`, turned by `rotation`
    /// and moved without turning from `path`'s origin along its direction,
    /// touches within `path`'s maximum distance (Jolt's `CastShape`,
    /// Rapier's `cast_shape`): conservative advancement on the GJK
    /// distance, exact to [`ShapeCastHit::distance`]'s tolerance for every
    /// pair of shapes. Ties go to the lower body index. A character
    /// controller casts its capsule along its motion this way. Refused: an
    /// invalid shape (`InvalidShape`), rotation (`InvalidRotation`) or
    /// start beyond `MAX_COORDINATE` (`InvalidPosition`).
    pub fn cast_shape(
        &self,
        shape: &crate::shape::Shape,
        rotation: crate::math::Quat,
        path: &Ray,
        f: &QueryFilter,
    ) -> Result<Option<ShapeCastHit>> {
        shape.validate_in(&self.bodies.shapes)?;
        if shape.is_surface() {
            return Err(PhysicsError::InvalidShape);
        }
        let rotation = crate::body::checked_rotation(rotation)?;
        crate::body::checked_position(path.origin)?;
        let me = crate::collide::Placed {
            shape: *shape,
            pos: path.origin,
            rot: rotation,
        };
        let (lo, hi) = shape.world_aabb(path.origin, rotation, &self.bodies.shapes);
        let half = (0.5 * (hi - lo)).to_array();
        let ext = half.map(f32x8::splat);
        // the box's centre travels the ray (a hull's box is not centred on
        // its centre of mass)
        let lanes = RayLanes::new(&Ray {
            origin: 0.5 * (lo + hi),
            ..*path
        });
        let mut best: Option<(sweep::Impact, u32, u32)> = None;
        let mut limit = path.max_distance;
        let mut consider = |slot: u32, limit: &mut f32| {
            let s = slot as usize;
            if !self.passes(s, f) {
                return;
            }
            let b = &self.bodies;
            let other = crate::collide::Placed {
                shape: b.shape[s],
                pos: b.pos(s),
                rot: b.rot(s),
            };
            let found = sweep::cast_placed(&me, path.direction, *limit, &other, &b.shapes);
            if let Some((hit, sub)) = found {
                let better = match &best {
                    None => true,
                    Some((h, bs, _)) => {
                        hit.distance < h.distance || (hit.distance == h.distance && slot < *bs)
                    }
                };
                if better {
                    *limit = hit.distance;
                    best = Some((hit, slot, sub));
                }
            }
        };
        // Nearest first, as `cast_ray` walks: a near hit prunes the
        // farther candidates before their sweeps (each a few GJK runs).
        for tree in self.queries.trees() {
            if tree.is_empty() {
                continue;
            }
            let enter = |node, limit| lanes.enter_grown(tree, node, limit, &ext);
            let root = enter(0, limit);
            walk_nearest(tree, root, &mut limit, enter, &mut consider);
        }
        for &slot in &self.queries.loose {
            consider(slot, &mut limit);
        }
        Ok(best.map(|(h, slot, sub_shape)| ShapeCastHit {
            body: self.bodies.id_of(slot as usize),
            distance: h.distance,
            point: h.point,
            normal: h.normal,
            sub_shape,
        }))
    }

    /// Rebuilds both query trees now (as the next step would), so queries
    /// before it need not test bodies added since the last one by one.
    pub fn optimize_query_trees(&mut self) {
        self.queries.rebuild(&self.bodies, false);
        self.queries.rebuild(&self.bodies, true);
    }
}

/// Visits every body leaf whose box (grown by `ext`,
/// the half size of a box moving along `lanes`' ray) the ray enters before
/// `limit`; `consider` may shorten `limit` (a closer hit prunes what
/// remains).
fn walk_swept(
    tree: &QueryTree,
    lanes: &RayLanes,
    ext: &[f32x8; 3],
    limit: &mut f32,
    consider: &mut impl FnMut(u32, &mut f32),
) {
    if tree.is_empty() {
        return;
    }
    let mut stack = Stack::with((0u32, 0.0f32));
    while let Some((node, near)) = stack.pop() {
        if near > *limit {
            continue;
        }
        let (t, mut mask) = lanes.enter_grown(tree, node as usize, *limit, ext);
        let children = tree.nodes[node as usize].child;
        while mask != 0 {
            let l = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let c = children[l];
            if c & LEAF != 0 {
                if t[l] <= *limit {
                    consider(c & !LEAF, limit);
                }
            } else {
                stack.push((c, t[l]));
            }
        }
    }
}

impl QueryTrees {
    /// The static bodies whose boxes a box of half size `half`, moved from
    /// `origin` along unit `dir`, enters within `*limit` m, into `consider`
    /// (which may shorten `*limit`); bodies added since the tree was built
    /// included. The continuous-collision sweep's broad phase: the static
    /// tree is exact during a step (static bodies do not move in one),
    /// where the moving tree is a step behind.
    pub(crate) fn statics_along(
        &self,
        bodies: &crate::body::Bodies,
        origin: Vec3,
        dir: Vec3,
        half: Vec3,
        limit: &mut f32,
        mut consider: impl FnMut(u32, &mut f32),
    ) {
        let ray = Ray {
            origin,
            direction: dir,
            max_distance: *limit,
        };
        let ext = half.to_array().map(f32x8::splat);
        walk_swept(
            &self.statics,
            &RayLanes::new(&ray),
            &ext,
            limit,
            &mut consider,
        );
        for &slot in &self.loose {
            if bodies.motion(slot as usize) == MotionType::Static {
                consider(slot, limit);
            }
        }
    }
}

/// A node's lanes as a ray enters them: each lane's entry distance, and
/// the lanes entered before the limit as bits.
type Entry = ([f32; WIDTH], u32);

/// The lanes of `children` that are bodies, as bits (`LEAF` is the sign
/// bit, which one `movmskps` gathers; the bits of empty lanes are set too,
/// and a ray never enters those).
#[inline(always)]
fn leaf_bits(children: &[u32; WIDTH]) -> u32 {
    f32x8::new(children.map(f32::from_bits)).to_bitmask()
}

/// The closest-hit walk of one tree: from the root (entered as `root`
/// says), `consider(slot, limit)` gets every body whose box the ray
/// enters before `limit`, which a hit shortens; `enter(node, limit)`
/// tests a node's lanes (a ray's slabs, or a swept box's grown ones).
///
/// At each node the bodies entered go first, nearest first, so a hit
/// prunes the farther ones; then the walk descends into the nearest child
/// node still before the limit and leaves the others on the stack, the
/// nearer on top. Which bodies are considered depends on this order, the
/// answer does not (`cast_ray` and `cast_shape` break ties by body index).
#[inline(always)]
fn walk_nearest(
    tree: &QueryTree,
    root: Entry,
    limit: &mut f32,
    enter: impl Fn(usize, f32) -> Entry,
    mut consider: impl FnMut(u32, &mut f32),
) {
    let mut stack: Stack<(u32, f32)> = Stack::new();
    let (mut t, mut mask) = root;
    let mut node = 0usize;
    loop {
        let children = &tree.nodes[node].child;
        let leaves = mask & leaf_bits(children);
        if leaves != 0 {
            if leaves.is_power_of_two() {
                // (the root's mask may predate a limit the other tree set)
                let l = leaves.trailing_zeros() as usize;
                if t[l] <= *limit {
                    consider(children[l] & !LEAF, limit);
                }
            } else {
                // nearest first (an insertion sort of the few entered)
                let mut order = [(0.0f32, 0u32); WIDTH];
                let (mut m, mut n) = (leaves, 0);
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let mut k = n;
                    while k > 0 && order[k - 1].0 > t[l] {
                        order[k] = order[k - 1];
                        k -= 1;
                    }
                    order[k] = (t[l], children[l]);
                    n += 1;
                }
                for &(near, c) in &order[..n] {
                    if near > *limit {
                        break;
                    }
                    consider(c & !LEAF, limit);
                }
            }
        }
        // The child nodes still before the (maybe shortened) limit: the
        // nearest is walked next, the others wait on the stack sorted so
        // that the nearer pops first.
        let mut inner = mask & !leaves;
        let mut next: Option<(u32, f32)> = None;
        let base = stack.len();
        while inner != 0 {
            let l = inner.trailing_zeros() as usize;
            inner &= inner - 1;
            let near = t[l];
            if near > *limit {
                continue;
            }
            let mut entry = (children[l], near);
            if let Some(best) = next {
                if near < best.1 {
                    next = Some(entry);
                    entry = best;
                }
                stack.push_sorted(base, entry);
            } else {
                next = Some(entry);
            }
        }
        let next = match next {
            Some((c, _)) => c,
            None => loop {
                let Some((c, near)) = stack.pop() else {
                    return;
                };
                if near <= *limit {
                    break c;
                }
            },
        };
        node = next as usize;
        (t, mask) = enter(node, *limit);
    }
}

/// Visits every body leaf under the lanes `mask(node)` selects.
#[inline(always)]
fn walk(tree: &QueryTree, mask: impl FnMut(usize) -> u32, leaf: impl FnMut(u32)) {
    walk_nodes(&tree.nodes, mask, leaf)
}

/// The nearest item of a wide tree (a mesh's triangles, a compound's
/// children) the ray `o + t·d` (`d` unit, `t` in `[0, max]`) meets:
/// `hit(item, limit)` tests one item whose box the ray crosses and gives
/// its `(t, normal)`; a hit shortens the walk. Ties go to the lower item,
/// so the answer does not depend on the tree's order.
pub(crate) fn cast_ray_nodes(
    nodes: &[tree::Node],
    o: Vec3,
    d: Vec3,
    max: f32,
    mut hit: impl FnMut(u32, f32) -> Option<(f32, Vec3)>,
) -> Option<(f32, Vec3, u32)> {
    if nodes.is_empty() {
        return None;
    }
    let mut best: Option<(f32, Vec3, u32)> = None;
    let mut limit = max;
    let inv = d.map(|c| {
        if c.abs() < 1e-30 {
            1e30f32.copysign(c)
        } else {
            1.0 / c
        }
    });
    let mut stack = Stack::with(0u32);
    while let Some(node) = stack.pop() {
        let node = &nodes[node as usize];
        for l in 0..WIDTH {
            let c = node.child[l];
            if c == EMPTY {
                continue;
            }
            let (mut near, mut far) = (0.0f32, limit);
            for a in 0..3 {
                let t0 = (node.lo[a][l] - o[a]) * inv[a];
                let t1 = (node.hi[a][l] - o[a]) * inv[a];
                near = near.max(t0.min(t1));
                far = far.min(t0.max(t1));
            }
            if near > far {
                continue;
            }
            if c & LEAF == 0 {
                stack.push(c);
                continue;
            }
            let k = c & !LEAF;
            if let Some((t, n)) = hit(k, limit) {
                let better = match best {
                    None => t <= limit,
                    Some((bt, _, bk)) => t < bt || (t == bt && k < bk),
                };
                if better {
                    best = Some((t, n, k));
                    limit = t;
                }
            }
        }
    }
    best
}

/// [`walk`] over any wide nodes (a mesh's triangle tree too): the lanes
/// `mask` picks, depth first; `leaf` gets each picked item's id.
pub(crate) fn walk_nodes(
    nodes: &[tree::Node],
    mut mask: impl FnMut(usize) -> u32,
    mut leaf: impl FnMut(u32),
) {
    if nodes.is_empty() {
        return;
    }
    let mut stack = Stack::with(0u32);
    while let Some(node) = stack.pop() {
        let node = node as usize;
        let mut m = mask(node);
        let children = nodes[node].child;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let c = children[l];
            debug_assert_ne!(c, EMPTY);
            if c & LEAF != 0 {
                leaf(c & !LEAF);
            } else {
                stack.push(c);
            }
        }
    }
}
