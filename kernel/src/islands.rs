//! Islands: connected components of the contact and joint graph over the
//! awake dynamic bodies, rebuilt from scratch every step (Jolt's
//! `IslandBuilder`).
//!
//! 1. [`IslandBuilder::init`]: one `AtomicU32` link per active body, each
//!    pointing at itself.
//! 2. [`IslandBuilder::link`]: lock-free union: find the lowest root of each
//!    chain, point the higher root at the lower with `compare_exchange_weak`
//!    (retry if another thread re-parented it first), then pull both bodies'
//!    links down with `fetch_min`. Links only ever point to lower indices, so
//!    chains cannot cycle, and every island's root is its lowest index, so
//!    the result does not depend on the order (or threads) of the calls.
//! 3. [`IslandBuilder::finalize`]: number the islands (a self-linked body
//!    starts one), gather each island's bodies and contacts into contiguous
//!    ranges, and sort islands biggest first (contacts + constraints), ties
//!    broken by their lowest body slot, so the biggest job starts first.
//!
//! Only awake dynamic bodies are nodes: static, kinematic and sleeping bodies
//! never join an island (a box on the floor does not join the floor's
//! island), and sensors never link.

use crate::body::{Bodies, MotionType};
use crate::disjoint::Disjoint;
use crate::jobs::StepCtx;
use crate::joint::store::{Joints, WORLD};
use crate::narrowphase::Manifold;
use std::sync::atomic::{AtomicU32, Ordering};

/// Island id of a body that is in no island (kinematic).
pub(crate) const NO_ISLAND: u32 = u32::MAX;

pub(crate) struct IslandBuilder {
    /// Per active index: a lower (or equal) active index in the same island.
    link_to: Vec<AtomicU32>,
    num_active: usize,
    /// Per active index: whether it is an island node (awake dynamic).
    is_node: Vec<bool>,
    // ---- finalize output ----
    /// Per active index: its island (after sorting), or `NO_ISLAND`.
    body_island: Vec<u32>,
    /// Active indices grouped by island; island `i` owns
    /// `bodies[body_start[i]..body_start[i + 1]]`, ascending within it.
    bodies: Vec<u32>,
    body_start: Vec<u32>,
    /// Contact (manifold) indices grouped by island, in manifold order
    /// within an island; island `i` owns `contacts[contact_start[i]..contact_start[i + 1]]`.
    contacts: Vec<u32>,
    contact_start: Vec<u32>,
    num_islands: usize,
    // scratch for finalize (preallocated)
    /// Per active index: its root, or `NO_ISLAND` for non-nodes.
    root: Vec<u32>,
    unsorted_island: Vec<u32>,
    /// Per contact: its island (unsorted numbering, then sorted).
    contact_island: Vec<u32>,
    island_size: Vec<u32>,
    island_min_slot: Vec<u32>,
    order: Vec<u32>,
    rank: Vec<u32>,
    cursor: Vec<u32>,
    /// Per chunk and island: the parallel counting sort's histogram.
    histogram: Vec<u32>,
}

impl IslandBuilder {
    pub fn new(max_bodies: usize, max_contacts: usize) -> Self {
        Self {
            link_to: (0..max_bodies).map(|_| AtomicU32::new(0)).collect(),
            num_active: 0,
            is_node: vec![false; max_bodies],
            body_island: vec![NO_ISLAND; max_bodies],
            bodies: Vec::with_capacity(max_bodies),
            body_start: Vec::with_capacity(max_bodies + 1),
            contacts: Vec::with_capacity(max_contacts),
            contact_start: Vec::with_capacity(max_bodies + 1),
            num_islands: 0,
            root: vec![NO_ISLAND; max_bodies],
            unsorted_island: vec![NO_ISLAND; max_bodies],
            contact_island: vec![NO_ISLAND; max_contacts],
            island_size: Vec::with_capacity(max_bodies),
            island_min_slot: Vec::with_capacity(max_bodies),
            order: Vec::with_capacity(max_bodies),
            rank: Vec::with_capacity(max_bodies),
            cursor: Vec::with_capacity(max_bodies + 1),
            histogram: Vec::with_capacity(MAX_HISTOGRAM),
        }
    }

    /// Starts a build over `is_node.len()` active bodies; `is_node[i]` says
    /// whether active body `i` may join an island.
    pub fn init(&mut self, is_node: impl ExactSizeIterator<Item = bool>) {
        self.num_active = is_node.len();
        for (i, node) in is_node.enumerate() {
            self.link_to[i].store(i as u32, Ordering::Relaxed);
            self.is_node[i] = node;
        }
        self.num_islands = 0;
    }

    /// Follows the chain from `i` to its current root (a self-linked index).
    fn lowest(&self, i: u32) -> u32 {
        lowest(&self.link_to, i)
    }

    /// Puts active bodies `a` and `b` in the same island. Safe to call from
    /// many threads at once (`&self`); ignores non-nodes.
    pub fn link(&self, a: u32, b: u32) {
        if a == b || !self.is_node[a as usize] || !self.is_node[b as usize] {
            return;
        }
        let (mut ra, mut rb) = (a, b);
        loop {
            ra = self.lowest(ra);
            rb = self.lowest(rb);
            if ra != rb {
                // Always point the higher root at the lower. The higher one
                // must still be a root; if another thread re-parented it,
                // start again from where it points now.
                let (hi, lo) = if ra > rb { (ra, rb) } else { (rb, ra) };
                if self.link_to[hi as usize]
                    .compare_exchange_weak(hi, lo, Ordering::AcqRel, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
            }
            let lowest = ra.min(rb);
            // Path compression: both bodies now point (at most) at the root.
            // Only where that changes something: an atomic min is a write
            // even when it keeps the value, and on a big island every other
            // worker's links read these lines (measured: link islands took
            // 3.5x the 1-thread work on 2 threads with unconditional mins).
            for x in [a, b] {
                let slot = &self.link_to[x as usize];
                if slot.load(Ordering::Relaxed) > lowest {
                    slot.fetch_min(lowest, Ordering::Relaxed);
                }
            }
            return;
        }
    }

    /// Numbers the islands, groups bodies and contacts per island and sorts
    /// islands biggest first.
    ///
    /// `contact_body(k)` gives the active index of a node body of contact
    /// `k` (or `None` if the contact has no node body, e.g. sensor or
    /// kinematic-only); `slot(i)` gives the body slot of active index `i`
    /// (for the deterministic tie-break).
    ///
    /// The per-body and per-contact lookups (chasing links to the root,
    /// reading the contact's bodies) run as parallel loops that write their
    /// own entries; what stays serial are sequential passes over those
    /// arrays (numbering, counting, the counting sorts), which are cheap.
    pub fn finalize(
        &mut self,
        ctx: &StepCtx,
        num_contacts: usize,
        contact_body: impl Fn(usize) -> Option<u32> + Sync,
        slot: impl Fn(u32) -> u32,
    ) {
        let n = self.num_active;
        // 1. every node's root (its lowest linked index), in parallel
        {
            let (link_to, is_node) = (&self.link_to, &self.is_node);
            ctx.par_chunks_mut(
                "island roots",
                &mut self.root[..n],
                FINALIZE_CHUNK,
                |first, c| {
                    for (j, r) in c.iter_mut().enumerate() {
                        let i = first + j;
                        *r = if is_node[i] {
                            lowest(link_to, i as u32)
                        } else {
                            NO_ISLAND
                        };
                    }
                    0
                },
            );
        }
        // 2. number islands in order of their root index
        let m = ctx.serial("number islands", || {
            self.island_size.clear();
            self.island_min_slot.clear();
            for i in 0..n {
                let root = self.root[i];
                let island = if root == NO_ISLAND {
                    NO_ISLAND
                } else if root as usize == i {
                    self.island_size.push(0);
                    self.island_min_slot.push(slot(i as u32));
                    (self.island_size.len() - 1) as u32
                } else {
                    // roots are lower indices, so already numbered
                    let isl = self.unsorted_island[root as usize];
                    let min = &mut self.island_min_slot[isl as usize];
                    *min = (*min).min(slot(i as u32));
                    isl
                };
                self.unsorted_island[i] = island;
            }
            self.island_size.len()
        });
        self.num_islands = m;
        // 3. each contact's island, in parallel
        {
            let unsorted = &self.unsorted_island;
            ctx.par_chunks_mut(
                "contact islands",
                &mut self.contact_island[..num_contacts],
                FINALIZE_CHUNK,
                |first, c| {
                    for (j, isl) in c.iter_mut().enumerate() {
                        *isl = contact_body(first + j).map_or(NO_ISLAND, |b| unsorted[b as usize]);
                    }
                    0
                },
            );
        }
        ctx.serial("sort islands", || {
            // sizes: constraints (contacts and joints) per island,
            // counted in runs: contacts of one island mostly follow each
            // other, and a register count avoids a chain of increments
            // through memory
            let (mut current, mut run) = (NO_ISLAND, 0);
            for &isl in &self.contact_island[..num_contacts] {
                if isl != current {
                    if current != NO_ISLAND {
                        self.island_size[current as usize] += run;
                    }
                    (current, run) = (isl, 0);
                }
                run += 1;
            }
            if current != NO_ISLAND {
                self.island_size[current as usize] += run;
            }
            // biggest first, then lowest body slot
            self.order.clear();
            self.order.extend(0..m as u32);
            let (size, min_slot) = (&self.island_size, &self.island_min_slot);
            self.order.sort_unstable_by(|&x, &y| {
                size[y as usize]
                    .cmp(&size[x as usize])
                    .then(min_slot[x as usize].cmp(&min_slot[y as usize]))
            });
            self.rank.clear();
            self.rank.resize(m, 0);
            for (r, &isl) in self.order.iter().enumerate() {
                self.rank[isl as usize] = r as u32;
            }
        });
        // renumber bodies and contacts by rank, in parallel
        let rank = &self.rank;
        let sorted = |u: &mut u32| {
            if *u != NO_ISLAND {
                *u = rank[*u as usize];
            }
        };
        self.body_island[..n].copy_from_slice(&self.unsorted_island[..n]);
        for (name, list) in [
            ("rank bodies", &mut self.body_island[..n]),
            ("rank contacts", &mut self.contact_island[..num_contacts]),
        ] {
            ctx.par_chunks_mut(name, list, FINALIZE_CHUNK, |_, c| {
                c.iter_mut().for_each(sorted);
                0
            });
        }
        // counting sorts of bodies (ascending index within an island) and
        // contacts (manifold order within an island)
        let mut sorter = CountingSort {
            histogram: &mut self.histogram,
            cursor: &mut self.cursor,
        };
        sorter.sort(
            ctx,
            &self.body_island[..n],
            m,
            &mut self.body_start,
            &mut self.bodies,
        );
        sorter.sort(
            ctx,
            &self.contact_island[..num_contacts],
            m,
            &mut self.contact_start,
            &mut self.contacts,
        );
    }

    pub fn num_islands(&self) -> usize {
        self.num_islands
    }

    /// Active indices of the bodies in island `i` (Jolt's `GetBodiesInIsland`).
    #[cfg(test)]
    pub fn bodies_in_island(&self, i: usize) -> &[u32] {
        &self.bodies[self.body_range(i)]
    }

    /// Every island's bodies (active indices), island after island.
    pub fn all_bodies(&self) -> &[u32] {
        &self.bodies
    }

    /// `all_bodies()[range]` of island `i`.
    pub fn body_range(&self, i: usize) -> std::ops::Range<usize> {
        self.body_start[i] as usize..self.body_start[i + 1] as usize
    }

    /// Manifold indices of the contacts in island `i` (`GetContactsInIsland`).
    #[cfg(test)]
    pub fn contacts_in_island(&self, i: usize) -> &[u32] {
        &self.contacts[self.contact_start[i] as usize..self.contact_start[i + 1] as usize]
    }

    /// Every island's contacts, island after island.
    pub fn all_contacts(&self) -> &[u32] {
        &self.contacts
    }

    /// `all_contacts()[start..end]` of island `i`.
    pub fn contact_range(&self, i: usize) -> (u32, u32) {
        (self.contact_start[i], self.contact_start[i + 1])
    }

    /// Island of active body `i`, or `NO_ISLAND`.
    #[cfg(test)]
    pub fn island_of(&self, i: u32) -> u32 {
        self.body_island[i as usize]
    }
}

/// Follows the chain from `i` to its current root (a self-linked index).
fn lowest(link_to: &[AtomicU32], mut i: u32) -> u32 {
    loop {
        let next = link_to[i as usize].load(Ordering::Relaxed);
        if next == i {
            return i;
        }
        i = next;
    }
}

/// Bodies or contacts per parallel finalize job.
const FINALIZE_CHUNK: usize = 1024;

/// Items per job of the parallel counting sort.
const SORT_CHUNK: usize = 2048;
/// Largest chunks × keys histogram the parallel counting sort uses (256 KB);
/// beyond that (tens of thousands of islands) one serial pass is cheaper
/// than the prefix sum over the histogram.
const MAX_HISTOGRAM: usize = 1 << 16;

/// Stable counting sort of the indices `i` with `keys[i] != NO_ISLAND` by
/// key into `out`, with `start[k]..start[k + 1]` the range of key `k`.
/// In parallel: every chunk of items counts its keys into its own
/// histogram row, a prefix sum over (key, chunk) gives every chunk its own
/// output range per key, and the chunks scatter; order within a key is
/// index order either way.
struct CountingSort<'a> {
    histogram: &'a mut Vec<u32>,
    cursor: &'a mut Vec<u32>,
}

impl CountingSort<'_> {
    fn sort(
        &mut self,
        ctx: &StepCtx,
        keys: &[u32],
        num_keys: usize,
        start: &mut Vec<u32>,
        out: &mut Vec<u32>,
    ) {
        start.clear();
        start.resize(num_keys + 1, 0);
        let chunks = keys.len().div_ceil(SORT_CHUNK);
        if chunks <= 1 || num_keys == 0 || chunks * num_keys > MAX_HISTOGRAM {
            ctx.serial("counting sort", || {
                Self::sort_serial(keys, num_keys, self.cursor, start, out)
            });
            return;
        }
        let range = |c: usize| c * SORT_CHUNK..((c + 1) * SORT_CHUNK).min(keys.len());
        self.histogram.clear();
        self.histogram.resize(chunks * num_keys, 0);
        ctx.par_chunks_mut("count keys", self.histogram, num_keys, |first, row| {
            for &k in &keys[range(first / num_keys)] {
                if k != NO_ISLAND {
                    row[k as usize] += 1;
                }
            }
            0
        });
        let total = ctx.serial("prefix keys", || {
            let mut total = 0;
            for (k, first) in start[..num_keys].iter_mut().enumerate() {
                *first = total;
                for c in 0..chunks {
                    let h = &mut self.histogram[c * num_keys + k];
                    let n = *h;
                    *h = total;
                    total += n;
                }
            }
            start[num_keys] = total;
            total
        });
        out.clear();
        out.resize(total as usize, 0);
        let dst = Disjoint::new(out);
        ctx.par_chunks_mut("scatter keys", self.histogram, num_keys, |first, cursor| {
            let c = first / num_keys;
            let r = range(c);
            for (i, &k) in keys[r.clone()].iter().enumerate() {
                if k != NO_ISLAND {
                    let at = &mut cursor[k as usize];
                    // SAFETY: the prefix sum gave this chunk's items of key
                    // `k` their own output range; `at` walks only it.
                    unsafe { dst.set(*at as usize, (r.start + i) as u32) };
                    *at += 1;
                }
            }
            0
        });
    }

    fn sort_serial(
        keys: &[u32],
        num_keys: usize,
        cursor: &mut Vec<u32>,
        start: &mut [u32],
        out: &mut Vec<u32>,
    ) {
        let mut total = 0usize;
        for &k in keys {
            if k != NO_ISLAND {
                start[k as usize + 1] += 1;
                total += 1;
            }
        }
        for k in 0..num_keys {
            start[k + 1] += start[k];
        }
        cursor.clear();
        cursor.extend_from_slice(&start[..num_keys]);
        out.clear();
        out.resize(total, 0);
        for (i, &k) in keys.iter().enumerate() {
            if k != NO_ISLAND {
                out[cursor[k as usize] as usize] = i as u32;
                cursor[k as usize] += 1;
            }
        }
    }
}

/// Links every solvable contact and every active joint between two awake
/// dynamic bodies (Jolt's `LinkContact`, `LinkConstraint`) and finalizes
/// the islands. Items are the manifolds, then the active joints (item
/// `manifolds.len() + j` is active joint `j`), and an island's constraints
/// are both.
pub(crate) fn build_islands(
    ctx: &StepCtx,
    islands: &mut IslandBuilder,
    bodies: &Bodies,
    manifolds: &[Manifold],
    joints: &Joints,
) {
    ctx.serial("init islands", || {
        islands.init(
            bodies
                .active
                .iter()
                .map(|&i| bodies.motion(i as usize) == MotionType::Dynamic),
        )
    });
    let node = |i: u32| -> Option<u32> {
        let i = i as usize;
        (bodies.motion(i) == MotionType::Dynamic && bodies.is_active(i))
            .then(|| bodies.active_pos[i])
    };
    // Lock-free links: the result does not depend on the order of the calls.
    let builder: &IslandBuilder = islands;
    ctx.par_for("link islands", manifolds.len(), LINKS_PER_JOB, |range| {
        for m in manifolds[range].iter().filter(|m| !m.sensor) {
            if let (Some(a), Some(b)) = (node(m.pair.a), node(m.pair.b)) {
                builder.link(a, b);
            }
        }
    });
    // A joint's body B may be the world, which is never a node.
    let joint_node = |i: u32| if i == WORLD { None } else { node(i) };
    let joint_ends = |k: usize| {
        let d = &joints.data[joints.active[k] as usize];
        (joint_node(d.body_a), joint_node(d.body_b))
    };
    ctx.par_for("link joints", joints.active.len(), LINKS_PER_JOB, |range| {
        for k in range {
            if let (Some(a), Some(b)) = joint_ends(k) {
                builder.link(a, b);
            }
        }
    });
    let m = manifolds.len();
    islands.finalize(
        ctx,
        m + joints.active.len(),
        |k| {
            if k >= m {
                let (a, b) = joint_ends(k - m);
                return a.or(b);
            }
            let c = &manifolds[k];
            if c.sensor {
                return None;
            }
            node(c.pair.a).or_else(|| node(c.pair.b))
        },
        |i| bodies.active[i as usize],
    );
}

/// Contacts linked per island-building job.
const LINKS_PER_JOB: usize = 512;

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_rng::TestRng as Rng;

    /// A random contact graph: `n` active bodies (a fraction of them
    /// kinematic, i.e. not nodes) and contacts between them; `None` ends are
    /// static or sleeping bodies (not in the active list at all), and
    /// `sensor` contacts never link.
    struct Graph {
        is_node: Vec<bool>,
        contacts: Vec<(Option<u32>, Option<u32>, bool)>,
    }

    fn random_graph(rng: &mut Rng, n: usize) -> Graph {
        let is_node: Vec<bool> = (0..n).map(|_| rng.below(10) != 0).collect();
        let m = rng.below(2 * n + 1);
        let end = |rng: &mut Rng| (rng.below(8) != 0).then(|| rng.below(n) as u32);
        let contacts = (0..m)
            .map(|_| (end(rng), end(rng), rng.below(20) == 0))
            .collect();
        Graph { is_node, contacts }
    }

    /// The contact's island body, as the pipeline picks it.
    fn contact_body(g: &Graph, k: usize) -> Option<u32> {
        let (a, b, sensor) = g.contacts[k];
        if sensor {
            return None;
        }
        let node = |x: Option<u32>| x.filter(|&i| g.is_node[i as usize]);
        node(a).or_else(|| node(b))
    }

    fn links(g: &Graph) -> Vec<(u32, u32)> {
        g.contacts
            .iter()
            .filter_map(|&(a, b, sensor)| match (a, b, sensor) {
                (Some(a), Some(b), false) => Some((a, b)),
                _ => None,
            })
            .collect()
    }

    fn build(g: &Graph, order: &[(u32, u32)], threads: usize) -> IslandBuilder {
        let n = g.is_node.len();
        let mut ib = IslandBuilder::new(n, g.contacts.len());
        ib.init(g.is_node.iter().copied());
        if threads <= 1 {
            for &(a, b) in order {
                ib.link(a, b);
            }
        } else {
            let chunk = order.len().div_ceil(threads).max(1);
            let ib_ref = &ib;
            std::thread::scope(|s| {
                for part in order.chunks(chunk) {
                    s.spawn(move || {
                        for &(a, b) in part {
                            ib_ref.link(a, b);
                        }
                    });
                }
            });
        }
        // slot(i) = a permutation, to exercise the tie-break
        ib.finalize(
            &StepCtx::untraced(),
            g.contacts.len(),
            |k| contact_body(g, k),
            |i| (n as u32 - 1) - i,
        );
        ib
    }

    /// Components by a plain sequential union-find, as the reference.
    fn reference_components(g: &Graph) -> Vec<usize> {
        let n = g.is_node.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for (a, b) in links(g) {
            let (a, b) = (a as usize, b as usize);
            if g.is_node[a] && g.is_node[b] {
                let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
        (0..n).map(|i| find(&mut parent, i)).collect()
    }

    fn snapshot(ib: &IslandBuilder) -> (Vec<u32>, Vec<Vec<u32>>, Vec<Vec<u32>>) {
        let n = ib.num_active;
        let islands: Vec<u32> = (0..n as u32).map(|i| ib.island_of(i)).collect();
        let bodies = (0..ib.num_islands())
            .map(|i| ib.bodies_in_island(i).to_vec())
            .collect();
        let contacts = (0..ib.num_islands())
            .map(|i| ib.contacts_in_island(i).to_vec())
            .collect();
        (islands, bodies, contacts)
    }

    fn check_invariants(g: &Graph, ib: &IslandBuilder) {
        let n = g.is_node.len();
        let reference = reference_components(g);
        // every node in exactly one island, non-nodes in none
        let mut seen = vec![0; n];
        for i in 0..ib.num_islands() {
            for &b in ib.bodies_in_island(i) {
                seen[b as usize] += 1;
                assert_eq!(ib.island_of(b), i as u32);
            }
            assert!(ib.bodies_in_island(i).windows(2).all(|w| w[0] < w[1]));
        }
        for (i, (&node, &count)) in g.is_node.iter().zip(&seen).enumerate() {
            if node {
                assert_eq!(count, 1, "node {i}");
            } else {
                assert_eq!(count, 0, "non-node {i}");
                assert_eq!(ib.island_of(i as u32), NO_ISLAND);
            }
        }
        // same partition as the reference union-find
        for i in 0..n {
            for j in [0, i / 2, n - 1] {
                if g.is_node[i] && g.is_node[j] {
                    assert_eq!(
                        ib.island_of(i as u32) == ib.island_of(j as u32),
                        reference[i] == reference[j]
                    );
                }
            }
        }
        // both ends of every linked contact share an island
        for (a, b) in links(g) {
            if g.is_node[a as usize] && g.is_node[b as usize] {
                assert_eq!(ib.island_of(a), ib.island_of(b));
            }
        }
        // contacts: each non-sensor contact with a node is in its island once
        let mut total = 0;
        for i in 0..ib.num_islands() {
            for &k in ib.contacts_in_island(i) {
                let b = contact_body(g, k as usize).expect("only node contacts");
                assert_eq!(ib.island_of(b), i as u32);
                total += 1;
            }
            assert!(ib.contacts_in_island(i).windows(2).all(|w| w[0] < w[1]));
        }
        assert_eq!(
            total,
            (0..g.contacts.len())
                .filter(|&k| contact_body(g, k).is_some())
                .count()
        );
        // sorted biggest first
        let sizes: Vec<usize> = (0..ib.num_islands())
            .map(|i| ib.contacts_in_island(i).len())
            .collect();
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]));
    }

    #[test]
    fn random_graphs_give_correct_islands_in_any_link_order() {
        let mut rng = Rng(42);
        for seed in 0..3000 {
            let n = if seed % 500 == 0 {
                10_000
            } else {
                1 + rng.below(200)
            };
            let g = random_graph(&mut rng, n);
            let order = links(&g);
            let ib = build(&g, &order, 1);
            check_invariants(&g, &ib);
            let expected = snapshot(&ib);
            // shuffled order, and reversed pair ends
            let mut shuffled: Vec<(u32, u32)> = order.iter().map(|&(a, b)| (b, a)).collect();
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, rng.below(i + 1));
            }
            assert_eq!(
                snapshot(&build(&g, &shuffled, 1)),
                expected,
                "seed {seed}: shuffled"
            );
            if seed % 10 == 0 {
                assert_eq!(
                    snapshot(&build(&g, &shuffled, 2)),
                    expected,
                    "seed {seed}: 2 threads"
                );
            }
        }
    }

    #[test]
    fn two_threads_hammering_one_chain_agree() {
        // one long chain linked from both ends at once: maximal contention
        let n = 10_000;
        let g = Graph {
            is_node: vec![true; n],
            contacts: (0..n as u32 - 1)
                .map(|i| (Some(i), Some(i + 1), false))
                .collect(),
        };
        let mut order = links(&g);
        let expected = snapshot(&build(&g, &order, 1));
        assert_eq!(expected.1.len(), 1, "one island");
        order.reverse();
        for _ in 0..5 {
            assert_eq!(snapshot(&build(&g, &order, 2)), expected);
        }
    }
}
