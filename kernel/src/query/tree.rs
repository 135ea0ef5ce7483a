//! `QueryTree`: a bounding volume hierarchy of bodies whose nodes hold
//! their eight children's boxes as structure-of-arrays lanes, so one
//! `f32x8` compare tests a ray or a box against every child at once
//! (Embree's BVH8 layout; Jolt's quad tree is the same idea four wide).
//!
//! Build is top-down and packed (sort-tile-recursive): a node over `n`
//! bodies cuts them, along the longest axis of their centres, into groups
//! of `s` bodies, `s` the largest power of 8 below `n`, so every subtree
//! but the last of each node is full and a tree of `n` bodies has about
//! `n / 7` nodes and depth `ceil(log8 n)`. Cuts order bodies by centre
//! and then by slot, a total order: the same bodies give the same tree
//! whatever order they arrive in, and nothing depends on thread timing.
//!
//! Nodes are stored in pre-order (a parent before its children, each
//! subtree contiguous), so a refit is one backwards sweep, and a body's
//! leaf (node, lane) and every node's parent are kept to enlarge the path
//! above a body teleported between steps.

use crate::body::Bodies;
use crate::disjoint::Disjoint;
use crate::jobs::StepCtx;
use wide::f32x8;

/// Children per node: one `f32x8` per coordinate.
pub(crate) const WIDTH: usize = 8;

/// An unused child lane.
pub(crate) const EMPTY: u32 = u32::MAX;

/// A child that is a body: `LEAF | slot`; otherwise a node index.
pub(crate) const LEAF: u32 = 1 << 31;

/// A deeper tree than this is impossible for the body counts the kernel
/// accepts (8^10 bodies); traversal stacks are sized from it.
pub(crate) const MAX_DEPTH: usize = 10;

/// Traversal stack entries: each level pushes at most 7 siblings beside
/// the child it descends into.
pub(crate) const STACK: usize = MAX_DEPTH * (WIDTH - 1) + 1;

/// Eight children's boxes as lanes (an empty lane has `lo > hi`).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
pub(crate) struct Node {
    pub lo: [[f32; WIDTH]; 3],
    pub hi: [[f32; WIDTH]; 3],
    pub child: [u32; WIDTH],
}

impl Node {
    const EMPTY: Self = Self {
        lo: [[f32::INFINITY; WIDTH]; 3],
        hi: [[f32::NEG_INFINITY; WIDTH]; 3],
        child: [EMPTY; WIDTH],
    };

    fn set(&mut self, lane: usize, child: u32, (lo, hi): ([f32; 3], [f32; 3])) {
        self.child[lane] = child;
        for a in 0..3 {
            self.lo[a][lane] = lo[a];
            self.hi[a][lane] = hi[a];
        }
    }

    fn clear(&mut self, lane: usize) {
        self.set(lane, EMPTY, ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]));
    }

    /// The box around every lane.
    fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for a in 0..3 {
            for l in 0..WIDTH {
                lo[a] = lo[a].min(self.lo[a][l]);
                hi[a] = hi[a].max(self.hi[a][l]);
            }
        }
        (lo, hi)
    }

    #[inline(always)]
    pub fn lanes(&self) -> ([f32x8; 3], [f32x8; 3]) {
        (self.lo.map(f32x8::new), self.hi.map(f32x8::new))
    }
}

/// A body to place: its slot and the centre of its box.
#[derive(Clone, Copy)]
struct Item {
    slot: u32,
    centre: [f32; 3],
}

/// Where a body sits in a tree: `node * WIDTH + lane`.
pub(crate) type LeafRef = u32;

pub(crate) struct QueryTree {
    pub nodes: Vec<Node>,
    parent: Vec<u32>,
    items: Vec<Item>,
    /// Surface-area cost of the tree when it was built (see [`Self::cost`]).
    pub built_cost: f32,
}

/// The box of body `slot` as the tree holds it (its broad-phase box).
#[inline(always)]
fn body_box(bodies: &Bodies, slot: u32) -> ([f32; 3], [f32; 3]) {
    let i = slot as usize;
    (bodies.aabb_min.get(i), bodies.aabb_max.get(i))
}

fn half_area((lo, hi): ([f32; 3], [f32; 3])) -> f32 {
    let d = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
    if d[0] < 0.0 {
        return 0.0;
    }
    d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
}

impl QueryTree {
    /// Room for a tree of `bodies` bodies: nothing grows while it is
    /// rebuilt or refitted.
    pub fn new(bodies: usize) -> Self {
        let nodes = Self::max_nodes(bodies);
        Self {
            nodes: Vec::with_capacity(nodes),
            parent: Vec::with_capacity(nodes),
            items: Vec::with_capacity(bodies),
            built_cost: 0.0,
        }
    }

    /// Nodes a packed tree of `n` bodies can need: every node but one per
    /// level of each full subtree is full, so `n / 7` plus a node per
    /// level per partial group; `n / 4 + 2 * MAX_DEPTH` bounds it
    /// (checked over 0..5,000 bodies in the tests).
    pub fn max_nodes(n: usize) -> usize {
        n / 4 + 2 * MAX_DEPTH
    }

    pub const fn bytes_per_body() -> usize {
        // nodes and parents (a quarter per body) and the build's items
        (std::mem::size_of::<Node>() + 4) / 4 + std::mem::size_of::<Item>()
    }

    /// Levels of nodes (0 for an empty tree).
    #[cfg(test)]
    pub fn depth(&self) -> usize {
        (0..self.nodes.len())
            .map(|mut k| {
                let mut d = 1;
                while self.parent[k] != EMPTY {
                    k = self.parent[k] as usize;
                    d += 1;
                }
                d
            })
            .max()
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Rebuilds the tree over `slots`; `leaf_of[slot]` is set for each.
    pub fn build(&mut self, slots: &[u32], bodies: &Bodies, leaf_of: &mut [LeafRef]) {
        self.nodes.clear();
        self.parent.clear();
        self.items.clear();
        self.items.extend(slots.iter().map(|&slot| {
            let (lo, hi) = body_box(bodies, slot);
            Item {
                slot,
                centre: [
                    0.5 * (lo[0] + hi[0]),
                    0.5 * (lo[1] + hi[1]),
                    0.5 * (lo[2] + hi[2]),
                ],
            }
        }));
        if !self.items.is_empty() {
            let mut items = std::mem::take(&mut self.items);
            self.build_node(&mut items, bodies, EMPTY, leaf_of, 1);
            self.items = items;
        }
        self.built_cost = self.cost();
    }

    fn build_node(
        &mut self,
        items: &mut [Item],
        bodies: &Bodies,
        parent: u32,
        leaf_of: &mut [LeafRef],
        depth: usize,
    ) -> u32 {
        let at = self.nodes.len() as u32;
        self.nodes.push(Node::EMPTY);
        self.parent.push(parent);
        let n = items.len();
        if n <= WIDTH {
            for (lane, it) in items.iter().enumerate() {
                self.nodes[at as usize].set(lane, LEAF | it.slot, body_box(bodies, it.slot));
                leaf_of[it.slot as usize] = at * WIDTH as u32 + lane as u32;
            }
            return at;
        }
        debug_assert!(depth < MAX_DEPTH, "a packed tree is ceil(log8 n) deep");
        let mut s = 1;
        while s * WIDTH < n {
            s *= WIDTH;
        }
        let groups = n.div_ceil(s);
        let mut cuts = [0usize; WIDTH + 1];
        let mut count = 0;
        cut_groups(items, 0, groups, s, &mut cuts, &mut count);
        cuts[count] = n;
        for lane in 0..groups {
            let group = &mut items[cuts[lane]..cuts[lane + 1]];
            if group.len() == 1 {
                let slot = group[0].slot;
                self.nodes[at as usize].set(lane, LEAF | slot, body_box(bodies, slot));
                leaf_of[slot as usize] = at * WIDTH as u32 + lane as u32;
            } else {
                let child = self.build_node(group, bodies, at, leaf_of, depth + 1);
                let b = self.nodes[child as usize].bounds();
                self.nodes[at as usize].set(lane, child, b);
            }
        }
        at
    }

    /// Every box recomputed from the bodies' boxes, children first (one
    /// backwards sweep: pre-order puts every child after its parent). The
    /// root's subtrees are contiguous node ranges refitted as parallel
    /// jobs, then the root; each box depends on its children alone, so
    /// the result does not depend on who refits what.
    pub fn refit(&mut self, ctx: &StepCtx, bodies: &Bodies) {
        let n = self.nodes.len();
        if n < PARALLEL_REFIT_NODES {
            return refit_nodes(&mut self.nodes, 0, bodies);
        }
        let mut starts = [n; WIDTH + 1];
        let mut count = 0;
        for &c in &self.nodes[0].child {
            if c != EMPTY && c & LEAF == 0 {
                starts[count] = c as usize;
                count += 1;
            }
        }
        starts[count] = n;
        let nodes = Disjoint::new(&mut self.nodes);
        ctx.par_for("refit query tree", count, 1, |jobs| {
            for j in jobs {
                let (a, b) = (starts[j], starts[j + 1]);
                // SAFETY: the root's subtrees are disjoint node ranges
                // (pre-order), one per job, and each range's nodes point
                // only into it.
                refit_nodes(unsafe { nodes.slice_mut(a, b) }, a, bodies);
            }
        });
        refit_node(&mut self.nodes, 0, 0, bodies);
    }

    /// Grows the boxes above `leaf` to hold its body's box (a body moved
    /// between steps; the next step's refit tightens them again).
    pub fn enlarge(&mut self, leaf: LeafRef, bodies: &Bodies) {
        let (mut node, mut lane) = ((leaf as usize) / WIDTH, (leaf as usize) % WIDTH);
        let slot = self.nodes[node].child[lane] & !LEAF;
        let (lo, hi) = body_box(bodies, slot);
        loop {
            let n = &mut self.nodes[node];
            for a in 0..3 {
                n.lo[a][lane] = n.lo[a][lane].min(lo[a]);
                n.hi[a][lane] = n.hi[a][lane].max(hi[a]);
            }
            let p = self.parent[node];
            if p == EMPTY {
                return;
            }
            let up = &self.nodes[p as usize];
            lane = (0..WIDTH)
                .find(|&l| up.child[l] == node as u32)
                .expect("a node is its parent's child");
            node = p as usize;
        }
    }

    /// Takes the body at `leaf` out (its lane becomes empty; boxes above
    /// stay as they are, still holding everything left).
    pub fn remove(&mut self, leaf: LeafRef) {
        self.nodes[leaf as usize / WIDTH].clear(leaf as usize % WIDTH);
    }

    /// Surface-area cost: the summed half areas of every child box, which
    /// is what a random ray pays in box tests (relative to the root's).
    /// A refit tree whose cost grew past a setting's factor of its build
    /// cost is rebuilt.
    pub fn cost(&self) -> f32 {
        let Some(root) = self.nodes.first() else {
            return 0.0;
        };
        let total: f32 = self
            .nodes
            .iter()
            .map(|n| {
                (0..WIDTH)
                    .map(|l| {
                        half_area((
                            [n.lo[0][l], n.lo[1][l], n.lo[2][l]],
                            [n.hi[0][l], n.hi[1][l], n.hi[2][l]],
                        ))
                    })
                    .sum::<f32>()
            })
            .sum();
        total / half_area(root.bounds()).max(f32::MIN_POSITIVE)
    }

    /// The lanes of `node` whose boxes overlap `[lo, hi]`, as bits.
    #[inline(always)]
    pub fn overlap_mask(&self, node: usize, lo: [f32; 3], hi: [f32; 3]) -> u32 {
        let (nlo, nhi) = self.nodes[node].lanes();
        let axis =
            |a: usize| nlo[a].simd_le(f32x8::splat(hi[a])) & nhi[a].simd_ge(f32x8::splat(lo[a]));
        (axis(0) & axis(1) & axis(2)).to_bitmask()
    }
}

/// Trees smaller than this refit in one job (a few microseconds).
const PARALLEL_REFIT_NODES: usize = 256;

/// Refits `nodes`, the whole subtree of tree nodes `base..` (every child
/// node comes after its parent, so one backwards sweep).
fn refit_nodes(nodes: &mut [Node], base: usize, bodies: &Bodies) {
    for k in (0..nodes.len()).rev() {
        refit_node(nodes, k, base, bodies);
    }
}

/// Node `k` of `nodes` (tree nodes `base..`) from its children: nodes from
/// their lanes (already refitted), bodies from their boxes.
fn refit_node(nodes: &mut [Node], k: usize, base: usize, bodies: &Bodies) {
    for lane in 0..WIDTH {
        let c = nodes[k].child[lane];
        if c == EMPTY {
            continue;
        }
        let b = if c & LEAF != 0 {
            body_box(bodies, c & !LEAF)
        } else {
            nodes[c as usize - base].bounds()
        };
        nodes[k].set(lane, c, b);
    }
}

/// Cuts `items` into `groups` groups of `s` (the last smaller) by binary
/// cuts along the longest axis of each part's centres; writes each
/// group's start at `cuts[*count..]`.
fn cut_groups(
    items: &mut [Item],
    base: usize,
    groups: usize,
    s: usize,
    cuts: &mut [usize; WIDTH + 1],
    count: &mut usize,
) {
    if groups == 1 {
        cuts[*count] = base;
        *count += 1;
        return;
    }
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for it in items.iter() {
        for a in 0..3 {
            lo[a] = lo[a].min(it.centre[a]);
            hi[a] = hi[a].max(it.centre[a]);
        }
    }
    let ext = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
    let axis = if ext[0] >= ext[1] && ext[0] >= ext[2] {
        0
    } else if ext[1] >= ext[2] {
        1
    } else {
        2
    };
    let left = groups / 2;
    let cut = left * s;
    items.select_nth_unstable_by(cut, |a, b| {
        a.centre[axis]
            .total_cmp(&b.centre[axis])
            .then(a.slot.cmp(&b.slot))
    });
    let (l, r) = items.split_at_mut(cut);
    cut_groups(l, base, left, s, cuts, count);
    cut_groups(r, base + cut, groups - left, s, cuts, count);
}
