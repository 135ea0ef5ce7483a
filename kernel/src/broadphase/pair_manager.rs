//! Persistent overlap pairs (PhysX's pair manager): an open-addressing hash
//! set of `(lower slot, higher slot)` keys over a dense array, with the pairs
//! created and deleted since the last [`PairManager::begin_step`].
//!
//! Linear probing with backward-shift deletion (no tombstones), fixed
//! capacity: a full table refuses the pair and says so, and the owner
//! rebuilds its pairs from scratch rather than silently lose one.

use super::BodyPair;

const EMPTY: u32 = u32::MAX;

pub(crate) struct PairManager {
    /// Hash slots: index into `pairs`, or `EMPTY`.
    table: Vec<u32>,
    mask: usize,
    pub pairs: Vec<u64>,
    /// Per pair (parallel to `pairs`): found by the sweep in progress
    /// ([`PairManager::mark`], [`PairManager::drop_unmarked`]); false
    /// between sweeps.
    marked: Vec<bool>,
    capacity: usize,
    pub created: u32,
    pub deleted: u32,
}

#[inline]
fn hash(key: u64) -> usize {
    // Thomas Wang's 64-bit mix: adjacent body indices land far apart.
    let mut k = key;
    k = (!k).wrapping_add(k << 21);
    k ^= k >> 24;
    k = k.wrapping_add(k << 3).wrapping_add(k << 8);
    k ^= k >> 14;
    k = k.wrapping_add(k << 2).wrapping_add(k << 4);
    k ^= k >> 28;
    k = k.wrapping_add(k << 31);
    k as usize
}

pub(crate) fn pair_key(a: u32, b: u32) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    ((lo as u64) << 32) | hi as u64
}

impl PairManager {
    /// A set for up to `capacity` pairs (the table is kept at most half full).
    pub fn new(capacity: usize) -> Self {
        let slots = (2 * capacity.max(8)).next_power_of_two();
        Self {
            table: vec![EMPTY; slots],
            mask: slots - 1,
            pairs: Vec::with_capacity(capacity),
            marked: Vec::with_capacity(capacity),
            capacity,
            created: 0,
            deleted: 0,
        }
    }

    pub fn begin_step(&mut self) {
        self.created = 0;
        self.deleted = 0;
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    fn find_slot(&self, key: u64) -> (usize, bool) {
        let mut s = hash(key) & self.mask;
        loop {
            let e = self.table[s];
            if e == EMPTY {
                return (s, false);
            }
            if self.pairs[e as usize] == key {
                return (s, true);
            }
            s = (s + 1) & self.mask;
        }
    }

    #[cfg(test)]
    pub fn contains(&self, a: u32, b: u32) -> bool {
        self.find_slot(pair_key(a, b)).1
    }

    /// Adds the pair; `Ok(true)` if new, `Ok(false)` if present, `Err(())`
    /// if the set is full.
    #[allow(clippy::result_unit_err)]
    pub fn add(&mut self, a: u32, b: u32) -> Result<bool, ()> {
        let key = pair_key(a, b);
        let (s, found) = self.find_slot(key);
        if found {
            return Ok(false);
        }
        if self.pairs.len() >= self.capacity {
            return Err(());
        }
        self.table[s] = self.pairs.len() as u32;
        self.pairs.push(key);
        self.marked.push(false);
        self.created += 1;
        Ok(true)
    }

    /// Adds the pair if absent, and marks it found by this sweep;
    /// `Err(())` if it is absent and the set is full.
    #[allow(clippy::result_unit_err)]
    pub fn mark(&mut self, a: u32, b: u32) -> Result<(), ()> {
        let (s, found) = self.find_slot(pair_key(a, b));
        if !found {
            self.add(a, b)?;
            if let Some(m) = self.marked.last_mut() {
                *m = true; // the pair just added
            }
        } else {
            self.marked[self.table[s] as usize] = true;
        }
        Ok(())
    }

    /// Ends a sweep: removes every unmarked pair for which `swept(a, b)`
    /// (a pair the sweep would have found, had it still overlapped), and
    /// clears the marks.
    pub fn drop_unmarked(&mut self, swept: impl Fn(u32, u32) -> bool) {
        let mut k = 0;
        while k < self.pairs.len() {
            let key = self.pairs[k];
            let (a, b) = ((key >> 32) as u32, key as u32);
            if !self.marked[k] && swept(a, b) {
                // the last pair moves into `k`: look at it next
                self.remove(a, b);
            } else {
                self.marked[k] = false;
                k += 1;
            }
        }
    }

    /// Removes the pair if present.
    pub fn remove(&mut self, a: u32, b: u32) -> bool {
        let key = pair_key(a, b);
        let (s, found) = self.find_slot(key);
        if !found {
            return false;
        }
        let idx = self.table[s] as usize;
        self.delete_slot(s);
        // Move the last dense entry into the hole and repoint its slot.
        let last = self.pairs.len() - 1;
        if idx != last {
            let moved = self.pairs[last];
            let (ms, _) = self.find_slot(moved);
            self.table[ms] = idx as u32;
            self.pairs[idx] = moved;
            self.marked[idx] = self.marked[last];
        }
        self.pairs.pop();
        self.marked.pop();
        self.deleted += 1;
        true
    }

    /// Backward-shift deletion of hash slot `s`.
    fn delete_slot(&mut self, mut s: usize) {
        self.table[s] = EMPTY;
        let mut next = (s + 1) & self.mask;
        while self.table[next] != EMPTY {
            let e = self.table[next];
            let home = hash(self.pairs[e as usize]) & self.mask;
            // Move the entry back if its home is not in (s, next].
            let dist_next = next.wrapping_sub(home) & self.mask;
            let dist_hole = next.wrapping_sub(s) & self.mask;
            if dist_next >= dist_hole {
                self.table[s] = e;
                self.table[next] = EMPTY;
                s = next;
            }
            next = (next + 1) & self.mask;
        }
    }

    /// Removes every pair for which `drop(pair)` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(BodyPair) -> bool) {
        let mut k = 0;
        while k < self.pairs.len() {
            let key = self.pairs[k];
            let p = BodyPair {
                a: (key >> 32) as u32,
                b: key as u32,
            };
            if keep(p) {
                k += 1;
            } else {
                self.remove(p.a, p.b);
            }
        }
    }

    pub fn clear(&mut self) {
        self.table.fill(EMPTY);
        self.pairs.clear();
        self.marked.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn matches_a_reference_set_under_random_churn() {
        let mut pm = PairManager::new(20_000);
        let mut reference = BTreeSet::new();
        let mut x = 12345u64;
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let a = ((x >> 33) % 200) as u32;
            let b = ((x >> 13) % 200) as u32;
            if a == b {
                continue;
            }
            if (x >> 60) & 1 == 0 {
                let added = pm.add(a, b).expect("capacity suffices");
                assert_eq!(added, reference.insert(pair_key(a, b)));
            } else {
                assert_eq!(pm.remove(a, b), reference.remove(&pair_key(a, b)));
            }
            assert_eq!(pm.len(), reference.len());
        }
        let mut got: Vec<u64> = pm.pairs.clone();
        got.sort_unstable();
        assert_eq!(got, reference.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn full_set_refuses_instead_of_losing_pairs() {
        let mut pm = PairManager::new(2);
        assert_eq!(pm.add(0, 1), Ok(true));
        assert_eq!(pm.add(0, 2), Ok(true));
        assert_eq!(pm.add(0, 3), Err(()));
        assert!(pm.contains(0, 1) && pm.contains(2, 0));
    }
}
