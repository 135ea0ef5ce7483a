//! Contact cache: last step's manifolds, kept for warm starting.
//!
//! Manifolds come out of the narrow phase sorted by body pair, and the cache
//! keeps them in that order, so each job of manifolds finds last step's by
//! one binary search and a forward walk (in parallel) and storing writes a sorted union in parallel: no
//! hash table, no allocation, and an order that depends on body indices
//! alone. A pair may have several manifolds (a body on a mesh touching
//! two walls); each takes the cached one of its pair whose normal is
//! nearest its own. If the pair's normal turned
//! less than `contact_normal_preserve_cos`, the manifold keeps its friction
//! impulse, and each new point takes the normal impulse of the old point
//! nearest to it in body A's frame within `contact_point_preserve_distance`
//! (as Jolt matches points).

use crate::body::Bodies;
use crate::collide::MAX_POINTS;
use crate::disjoint::Disjoint;
use crate::jobs::StepCtx;
use crate::math::Vec3;
use crate::narrowphase::Manifold;

/// Manifolds matched (or stored) per job.
const MANIFOLDS_PER_JOB: usize = 128;
/// Entries checked per job of the store's scans.
const CHECKS_PER_JOB: usize = 2048;

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

impl crate::snapshot::codec::Snap for CachedManifold {
    fn put(&self, w: &mut crate::snapshot::codec::Writer) {
        use crate::snapshot::codec::put_first;
        w.u64(self.key);
        w.put(&self.normal);
        w.u32(self.count);
        put_first(w, &self.local_a, self.count);
        put_first(w, &self.normal_impulse, self.count);
        w.put(&self.friction_impulse);
    }
    fn get(r: &mut crate::snapshot::codec::Reader) -> crate::error::Result<Self> {
        use crate::snapshot::codec::{get_count, get_first};
        let key = r.u64()?;
        let normal = r.get()?;
        let count = get_count(r, MAX_POINTS)?;
        Ok(Self {
            key,
            normal,
            count,
            local_a: get_first(r, count)?,
            normal_impulse: get_first(r, count)?,
            friction_impulse: r.get()?,
        })
    }
}

pub(crate) struct ContactCache {
    previous: Vec<CachedManifold>,
    next: Vec<CachedManifold>,
    /// Entries of `previous` kept by the last store (sleeping pairs).
    kept: Vec<CachedManifold>,
    /// Output offset of each chunk when gathering `kept`.
    chunk_start: Vec<u32>,
}

impl ContactCache {
    pub fn new(max_contact_constraints: usize) -> Self {
        Self {
            previous: Vec::with_capacity(max_contact_constraints),
            next: Vec::with_capacity(max_contact_constraints),
            kept: Vec::with_capacity(max_contact_constraints),
            chunk_start: Vec::with_capacity(max_contact_constraints / CHECKS_PER_JOB + 2),
        }
    }

    /// Snapshot section: last step's cached manifolds (the warm start of
    /// the next one, sleeping pairs' included).
    pub fn save_state(&self, w: &mut crate::snapshot::codec::Writer) {
        w.items(&self.previous);
    }

    /// Reads [`save_state`](Self::save_state)'s section, into `dst` if
    /// given: keys sorted, both slots below `max_bodies`.
    pub fn restore_state(
        r: &mut crate::snapshot::codec::Reader,
        dst: Option<&mut Self>,
        max_contact_constraints: usize,
    ) -> crate::error::Result<()> {
        let mut check = r.clone();
        let n = check.len(max_contact_constraints)?;
        let mut last = None;
        for _ in 0..n {
            let c: CachedManifold = check.get()?;
            let (a, b) = (c.key >> 32, c.key & u64::from(u32::MAX));
            if a >= b
                || b >= u64::from(check.max_bodies)
                || c.count as usize > MAX_POINTS
                || last.is_some_and(|l| l > c.key)
            {
                return Err(crate::error::PhysicsError::InvalidSnapshot);
            }
            last = Some(c.key);
        }
        r.items_into(max_contact_constraints, dst.map(|c| &mut c.previous))
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
            // Both lists are pair-sorted: one binary search places the
            // chunk, then a forward walk reads `previous` in order (a
            // binary search per manifold missed the cache on most probes).
            let mut j = chunk
                .first()
                .map_or(0, |m| previous.partition_point(|c| c.key < m.pair.key()));
            for m in chunk {
                m.normal_impulse = [0.0; MAX_POINTS];
                m.friction_impulse = [0.0; 3];
                let key = m.pair.key();
                while j < previous.len() && previous[j].key < key {
                    j += 1;
                }
                // a pair touching a mesh may have several manifolds: the
                // cached one of the pair nearest in normal
                let old = previous[j..]
                    .iter()
                    .take_while(|c| c.key == key)
                    .map(|c| (c.normal.dot(m.normal), c))
                    .fold(None, |best: Option<(f32, &CachedManifold)>, x| {
                        if best.is_none_or(|b| x.0 > b.0) {
                            Some(x)
                        } else {
                            best
                        }
                    });
                let Some((cos, old)) = old else {
                    continue;
                };
                if cos < normal_cos {
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
    /// lists are pair-sorted and share no pair, so the new cache is their
    /// sorted union.
    ///
    /// In parallel: the kept entries are gathered (count per chunk, prefix
    /// sum, copy), then every manifold and every kept entry is written at
    /// its place in the union, found by binary search in the other list.
    /// With a sensor's manifold (not cached) or more than fits, the serial
    /// merge walk decides instead.
    pub fn store(&mut self, ctx: &StepCtx, manifolds: &[Manifold], bodies: &Bodies) {
        let cap = self.next.capacity();
        let current = |key: u64| {
            manifolds
                .binary_search_by_key(&key, |m| m.pair.key())
                .is_ok()
        };
        // A pair whose bodies fell asleep this step is still among this
        // step's manifolds: that copy is the one to keep.
        let keep = |c: &CachedManifold| {
            let (a, b) = ((c.key >> 32) as usize, c.key as u32 as usize);
            (bodies.is_sleeping(a) || bodies.is_sleeping(b))
                && !bodies.is_active(a)
                && !bodies.is_active(b)
                && !current(c.key)
        };
        if manifolds.len() > cap
            || ctx.par_any("find sensors", manifolds, CHECKS_PER_JOB, |m| m.sensor)
        {
            ctx.serial("merge cache", || self.merge(manifolds, keep));
            return;
        }
        // Only pairs with a sleeping body are kept: none while nothing sleeps.
        if bodies.sleeping_islands > 0 {
            self.gather_kept(ctx, keep);
        } else {
            self.kept.clear();
        }
        if manifolds.len() + self.kept.len() > cap {
            ctx.serial("merge cache", || self.merge(manifolds, keep));
            return;
        }
        self.next
            .resize(manifolds.len() + self.kept.len(), CachedManifold::EMPTY);
        let out = Disjoint::new(&mut self.next);
        let kept = &self.kept;
        ctx.par_for("store cache", manifolds.len(), MANIFOLDS_PER_JOB, |range| {
            let mut k = kept.partition_point(|c| c.key < manifolds[range.start].pair.key());
            for i in range {
                let key = manifolds[i].pair.key();
                while k < kept.len() && kept[k].key < key {
                    k += 1;
                }
                // SAFETY: the union's positions are distinct: manifold `i`
                // goes after `i` manifolds and the `k` kept entries below it.
                unsafe { out.set(i + k, CachedManifold::of(&manifolds[i])) };
            }
        });
        ctx.par_for("store kept", kept.len(), MANIFOLDS_PER_JOB, |range| {
            let mut i = manifolds.partition_point(|m| m.pair.key() < kept[range.start].key);
            for k in range {
                while i < manifolds.len() && manifolds[i].pair.key() < kept[k].key {
                    i += 1;
                }
                // SAFETY: as above, from the kept entry's side.
                unsafe { out.set(i + k, kept[k]) };
            }
        });
        core::mem::swap(&mut self.previous, &mut self.next);
    }

    /// `kept` = the entries of `previous` that pass `keep`, in order.
    fn gather_kept(&mut self, ctx: &StepCtx, keep: impl Fn(&CachedManifold) -> bool + Sync) {
        let previous = &self.previous;
        let chunks = previous.len().div_ceil(CHECKS_PER_JOB);
        let range = |c: usize| c * CHECKS_PER_JOB..((c + 1) * CHECKS_PER_JOB).min(previous.len());
        self.chunk_start.clear();
        self.chunk_start.resize(chunks + 1, 0);
        ctx.par_chunks_mut("check cache", &mut self.chunk_start[1..], 1, |c, n| {
            n[0] = previous[range(c)].iter().filter(|e| keep(e)).count() as u32;
            0
        });
        for c in 0..chunks {
            self.chunk_start[c + 1] += self.chunk_start[c];
        }
        self.kept
            .resize(self.chunk_start[chunks] as usize, CachedManifold::EMPTY);
        let out = Disjoint::new(&mut self.kept);
        let starts = &self.chunk_start;
        ctx.par_for("gather kept", chunks, 1, |cs| {
            for c in cs {
                // SAFETY: the prefix sums give every chunk its own range.
                let dst = unsafe { out.slice_mut(starts[c] as usize, starts[c + 1] as usize) };
                for (d, e) in dst
                    .iter_mut()
                    .zip(previous[range(c)].iter().filter(|e| keep(e)))
                {
                    *d = *e;
                }
            }
        });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{BodyCreationSettings, MotionType};
    use crate::broadphase::BodyPair;
    use crate::settings::{Capacities, PhysicsSettings};
    use crate::shape::Shape;
    use crate::system::PhysicsSystem;
    use crate::test_rng::TestRng;

    /// The parallel sorted union equals the serial merge walk, entry for
    /// entry, with sleeping pairs kept, pairs that fell asleep this step
    /// (in both lists) stored once, and awake pairs replaced.
    #[test]
    fn parallel_store_equals_the_merge_walk() {
        let mut w = PhysicsSystem::new(Capacities::default(), PhysicsSettings::default()).unwrap();
        let ids: Vec<_> = (0..60)
            .map(|k| {
                let p = Vec3::new(3.0 * k as f32, 0.0, 0.0);
                w.create_and_add_body(&BodyCreationSettings::new(
                    Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                    p,
                    MotionType::Dynamic,
                ))
                .unwrap()
            })
            .collect();
        for &id in &ids[..25] {
            w.deactivate_body(id).unwrap();
        }
        let slots: Vec<u32> = ids.iter().map(|id| id.index()).collect();
        let bodies = &w.bodies;
        let mut rng = TestRng(11);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let ctx = StepCtx {
            exec: &pool,
            threads: 3,
            ..StepCtx::untraced()
        };
        for round in 0..200 {
            let mut all = Vec::new();
            for i in 0..slots.len() {
                for j in i + 1..slots.len() {
                    if rng.below(20) == 0 {
                        all.push(BodyPair {
                            a: slots[i].min(slots[j]),
                            b: slots[i].max(slots[j]),
                        });
                    }
                }
            }
            all.sort();
            let awake =
                |p: &BodyPair| bodies.is_active(p.a as usize) || bodies.is_active(p.b as usize);
            // this step's manifolds: pairs with an awake body, plus some
            // with both asleep (they fell asleep this step)
            let mut manifolds = Vec::new();
            let mut previous = Vec::new();
            for &pair in &all {
                if (awake(&pair) || rng.below(4) == 0) && rng.below(3) != 0 {
                    manifolds.push(Manifold {
                        pair,
                        normal_impulse: [rng.below(1000) as f32; MAX_POINTS],
                        ..Manifold::EMPTY
                    });
                }
                if rng.below(2) == 0 {
                    previous.push(CachedManifold {
                        key: pair.key(),
                        count: 1 + rng.below(4) as u32,
                        ..CachedManifold::EMPTY
                    });
                }
            }
            let mut parallel = ContactCache::new(4096);
            parallel.previous.extend_from_slice(&previous);
            pool.install(|| parallel.store(&ctx, &manifolds, bodies));
            let mut serial = ContactCache::new(4096);
            serial.previous.extend_from_slice(&previous);
            let current = |key: u64| {
                manifolds
                    .binary_search_by_key(&key, |m| m.pair.key())
                    .is_ok()
            };
            serial.merge(&manifolds, |c: &CachedManifold| {
                let (a, b) = ((c.key >> 32) as usize, c.key as u32 as usize);
                (bodies.is_sleeping(a) || bodies.is_sleeping(b))
                    && !bodies.is_active(a)
                    && !bodies.is_active(b)
                    && !current(c.key)
            });
            let view = |c: &ContactCache| -> Vec<(u64, u32, f32)> {
                c.previous
                    .iter()
                    .map(|e| (e.key, e.count, e.normal_impulse[0]))
                    .collect()
            };
            assert_eq!(view(&parallel), view(&serial), "round {round}");
            assert!(parallel.previous.windows(2).all(|p| p[0].key < p[1].key));
        }
    }
}
