//! Contact cache: last step's manifolds, kept for warm starting.
//!
//! Manifolds come out of the narrow phase sorted by body pair, and the cache
//! keeps them in that order, so each manifold finds last step's by binary
//! search (in parallel) and storing is one merge walk: no hash table, no
//! allocation, and an order that depends on body indices alone. If the pair's normal turned
//! less than `contact_normal_preserve_cos`, the manifold keeps its friction
//! impulse, and each new point takes the normal impulse of the old point
//! nearest to it in body A's frame within `contact_point_preserve_distance`
//! (as Jolt matches points).

use crate::body::Bodies;
use crate::collide::MAX_POINTS;
use crate::jobs::StepCtx;
use crate::math::Vec3;

/// Manifolds matched per warm-start job.
const MANIFOLDS_PER_JOB: usize = 128;
/// Entries checked per job of the store's "anything to keep?" scans.
const CHECKS_PER_JOB: usize = 2048;
use crate::narrowphase::Manifold;

#[derive(Debug, Clone, Copy)]
struct CachedManifold {
    key: u64,
    normal: Vec3,
    count: u32,
    local_a: [Vec3; MAX_POINTS],
    normal_impulse: [f32; MAX_POINTS],
    friction_impulse: [f32; 3],
}

impl CachedManifold {
    const EMPTY: CachedManifold = CachedManifold {
        key: 0,
        normal: Vec3::ZERO,
        count: 0,
        local_a: [Vec3::ZERO; MAX_POINTS],
        normal_impulse: [0.0; MAX_POINTS],
        friction_impulse: [0.0; 3],
    };

    fn of(m: &Manifold) -> Self {
        Self {
            key: m.pair.key(),
            normal: m.normal,
            count: m.count,
            local_a: m.local_a,
            normal_impulse: m.normal_impulse,
            friction_impulse: m.friction_impulse,
        }
    }
}

pub(crate) struct ContactCache {
    previous: Vec<CachedManifold>,
    next: Vec<CachedManifold>,
}

impl ContactCache {
    pub fn new(max_contact_constraints: usize) -> Self {
        Self {
            previous: Vec::with_capacity(max_contact_constraints),
            next: Vec::with_capacity(max_contact_constraints),
        }
    }

    /// Copies matching impulses from last step into `manifolds`, in
    /// parallel: each manifold finds its pair by binary search in last
    /// step's pair-sorted list. Returns how many points were warm-started.
    pub fn warm_start(
        &self,
        ctx: &StepCtx,
        manifolds: &mut [Manifold],
        preserve_distance: f32,
        normal_cos: f32,
    ) -> u32 {
        let max_d2 = preserve_distance * preserve_distance;
        let previous = &self.previous[..];
        ctx.par_chunks_mut("match cache", manifolds, MANIFOLDS_PER_JOB, |_, chunk| {
            let mut matched = 0;
            for m in chunk {
                m.normal_impulse = [0.0; MAX_POINTS];
                m.friction_impulse = [0.0; 3];
                let key = m.pair.key();
                let Ok(j) = previous.binary_search_by_key(&key, |c| c.key) else {
                    continue;
                };
                let old = &previous[j];
                if old.normal.dot(m.normal) < normal_cos {
                    continue;
                }
                m.friction_impulse = old.friction_impulse;
                for k in 0..m.count as usize {
                    let mut best = (max_d2, None);
                    for o in 0..old.count as usize {
                        let d2 = (old.local_a[o] - m.local_a[k]).length_squared();
                        if d2 <= best.0 {
                            best = (d2, Some(o));
                        }
                    }
                    if let Some(o) = best.1 {
                        m.normal_impulse[k] = old.normal_impulse[o];
                        matched += 1;
                    }
                }
            }
            matched
        })
    }

    /// Replaces the cache with this step's solved manifolds, keeping last
    /// step's entries whose pair is now asleep (a sleeping pair is not
    /// re-detected, and its impulses must survive until it wakes). Both
    /// lists are pair-sorted, so this is one merge walk.
    ///
    /// When no entry is kept and no manifold is a sensor's (the common case
    /// while things move), the new cache is this step's list itself, copied
    /// in parallel; otherwise the merge walk runs on one worker.
    pub fn store(&mut self, ctx: &StepCtx, manifolds: &[Manifold], bodies: &Bodies) {
        let cap = self.next.capacity();
        let keep = |c: &CachedManifold| {
            let (a, b) = ((c.key >> 32) as usize, c.key as u32 as usize);
            (bodies.is_sleeping(a) || bodies.is_sleeping(b))
                && !bodies.is_active(a)
                && !bodies.is_active(b)
        };
        let previous = &self.previous;
        // Only pairs with a sleeping body are kept: none while nothing sleeps.
        let anything_asleep = bodies.sleeping_islands > 0;
        let simple = manifolds.len() <= cap
            && !(anything_asleep && ctx.par_any("check cache", previous, CHECKS_PER_JOB, keep))
            && !ctx.par_any("find sensors", manifolds, CHECKS_PER_JOB, |m| m.sensor);
        if simple {
            self.next.resize(manifolds.len(), CachedManifold::EMPTY);
            ctx.par_chunks_mut(
                "store cache",
                &mut self.next,
                MANIFOLDS_PER_JOB,
                |first, chunk| {
                    for (c, m) in chunk.iter_mut().zip(&manifolds[first..]) {
                        *c = CachedManifold::of(m);
                    }
                    0
                },
            );
            core::mem::swap(&mut self.previous, &mut self.next);
            return;
        }
        ctx.serial("store cache", || self.merge(manifolds, keep));
    }

    fn merge(&mut self, manifolds: &[Manifold], keep: impl Fn(&CachedManifold) -> bool) {
        let cap = self.next.capacity();
        self.next.clear();
        let mut j = 0;
        for m in manifolds.iter().filter(|m| !m.sensor) {
            let key = m.pair.key();
            while j < self.previous.len() && self.previous[j].key <= key {
                let old = self.previous[j];
                if old.key < key && keep(&old) && self.next.len() < cap {
                    self.next.push(old);
                }
                j += 1;
            }
            if self.next.len() < cap {
                self.next.push(CachedManifold::of(m));
            }
        }
        for old in &self.previous[j..] {
            if keep(old) && self.next.len() < cap {
                self.next.push(*old);
            }
        }
        core::mem::swap(&mut self.previous, &mut self.next);
    }

    /// Forgets every cached manifold touching slot `body` (removed bodies:
    /// a new body in the same slot must not inherit impulses).
    pub fn forget_body(&mut self, body: u32) {
        self.previous
            .retain(|c| (c.key >> 32) as u32 != body && c.key as u32 != body);
    }
}
