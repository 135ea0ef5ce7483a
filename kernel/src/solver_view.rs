//! What the last step's solver made of the world, for debug draw and
//! viewers: every constraint it solved (contact manifold or joint) with its
//! island and, in a split island, its split (the large-island splitter's
//! colour). Read-only; costs nothing unless called.

use crate::body::BodyId;
use crate::joint::store::WORLD;
use crate::joint::JointId;
use crate::system::{since_step, PhysicsSystem};

/// One constraint of the last step, as the solver placed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SolverConstraint {
    /// Its bodies; `None` is the world (a joint to the world). For a
    /// contact, the pair as [`contacts`](PhysicsSystem::contacts) gives it.
    pub body_a: Option<BodyId>,
    pub body_b: Option<BodyId>,
    /// The joint, or `None` for a contact manifold.
    pub joint: Option<JointId>,
    /// Its island in the last step; islands are numbered biggest first
    /// (by constraint count), as the solver orders them.
    pub island: u32,
    /// Its split, when its island was large enough to be split
    /// ([`PhysicsSettings::use_large_island_splitter`](crate::PhysicsSettings)):
    /// 0–30 are the parallel splits (no two constraints of one split share
    /// a dynamic body), 31 the split one worker solves after them. `None`
    /// in islands solved whole by one worker.
    pub split: Option<u8>,
}

impl PhysicsSystem {
    /// The constraints the last step solved, island after island (biggest
    /// first) and, inside a split island, split after split. Constraints of
    /// bodies or joints removed since are left out. Empty before the first
    /// step and while every body sleeps.
    pub fn solver_constraints(&self) -> impl Iterator<Item = SolverConstraint> + '_ {
        let manifolds = &self.narrow.manifolds;
        let m = manifolds.len() as u32;
        let world = self.bodies.world;
        let id = move |slot: u32| (slot != WORLD).then(|| self.bodies.id_of(slot as usize));
        self.solver
            .placed_items()
            .filter_map(move |(item, island, split)| {
                let (a, b, joint) = if item < m {
                    let pair = manifolds.get(item as usize)?.pair;
                    let taken_out = (self.since_step[pair.a as usize]
                        | self.since_step[pair.b as usize])
                        & since_step::TAKEN_OUT;
                    if taken_out != 0 {
                        return None;
                    }
                    (pair.a, pair.b, None)
                } else {
                    let slot = *self.joints.active.get((item - m) as usize)? as usize;
                    if !self.joints.slots.is_live(slot) {
                        return None;
                    }
                    let d = &self.joints.data[slot];
                    (d.body_a, d.body_b, Some(self.joints.id_of(slot, world)))
                };
                Some(SolverConstraint {
                    body_a: id(a),
                    body_b: id(b),
                    joint,
                    island,
                    split,
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use crate::body::MotionType;
    use crate::scenes;
    use crate::settings::PhysicsSettings;
    use std::collections::{BTreeMap, BTreeSet};

    /// The pyramid after it has landed (one island of every cube), and the
    /// same with the splitter off.
    fn placed(split: bool) -> (crate::PhysicsSystem, Vec<super::SolverConstraint>) {
        let settings = PhysicsSettings {
            use_large_island_splitter: split,
            ..Default::default()
        };
        let (mut world, _) = scenes::pyramid().build(settings).unwrap();
        let pool = crate::build_pinned_pool(Some(2)).unwrap().pool;
        // Its layers start 0.5 m apart: all touch after ~0.35 s.
        for _ in 0..60 {
            world.update(scenes::DT, 1, &pool).unwrap();
        }
        let placed = world.solver_constraints().collect();
        (world, placed)
    }

    #[test]
    fn every_contact_once_and_splits_share_no_dynamic_body() {
        let (world, placed) = placed(true);
        let contacts: BTreeSet<_> = world
            .contacts()
            .filter(|c| !c.is_sensor)
            .map(|c| (c.body_a, c.body_b))
            .collect();
        let placed_contacts: Vec<_> = placed
            .iter()
            .map(|c| (c.body_a.unwrap(), c.body_b.unwrap()))
            .collect();
        let unique: BTreeSet<_> = placed_contacts.iter().copied().collect();
        assert_eq!(
            unique.len(),
            placed_contacts.len(),
            "a contact placed twice"
        );
        assert_eq!(unique, contacts);
        // Islands come in order and share no dynamic body; the split ones
        // are as many as the step counted.
        let stats = world.last_stats();
        assert!(placed.windows(2).all(|w| w[0].island <= w[1].island));
        let mut island_of = BTreeMap::new();
        for c in &placed {
            for b in [c.body_a, c.body_b].into_iter().flatten() {
                if world.motion_type(b).unwrap() == MotionType::Dynamic {
                    assert_eq!(*island_of.entry(b).or_insert(c.island), c.island);
                }
            }
        }
        let split_islands: BTreeSet<_> = placed
            .iter()
            .filter(|c| c.split.is_some())
            .map(|c| c.island)
            .collect();
        assert!(stats.large_islands >= 1);
        assert_eq!(split_islands.len() as u32, stats.large_islands);
        let placed: Vec<_> = placed.into_iter().filter(|c| c.split.is_some()).collect();
        let mut per_split: BTreeMap<u8, Vec<_>> = BTreeMap::new();
        for c in &placed {
            per_split.entry(c.split.unwrap()).or_default().push(*c);
        }
        assert!(per_split.len() > 1, "{} splits", per_split.len());
        for (&split, items) in &per_split {
            assert_eq!(items.len() as u32, stats.split_items[split as usize]);
            if split as usize == crate::solver::splitter::NON_PARALLEL_SPLIT {
                continue;
            }
            let mut seen = BTreeSet::new();
            for c in items {
                for b in [c.body_a, c.body_b].into_iter().flatten() {
                    if world.motion_type(b).unwrap() == MotionType::Dynamic {
                        assert!(seen.insert(b), "split {split} has {b:?} twice");
                    }
                }
            }
        }
        // Splits come in order.
        let order: Vec<u8> = placed.iter().map(|c| c.split.unwrap()).collect();
        assert!(order.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn unsplit_islands_have_no_split_and_removed_bodies_drop_out() {
        let (mut world, placed) = placed(false);
        assert!(!placed.is_empty());
        assert!(placed.iter().all(|c| c.split.is_none()));
        let victim = placed[0].body_b.unwrap();
        let touching = placed
            .iter()
            .filter(|c| c.body_a == Some(victim) || c.body_b == Some(victim))
            .count();
        assert!(touching > 0);
        world.remove_body(victim).unwrap();
        let after: Vec<_> = world.solver_constraints().collect();
        assert_eq!(after.len(), placed.len() - touching);
        assert!(after
            .iter()
            .all(|c| c.body_a != Some(victim) && c.body_b != Some(victim)));
    }
}
