//! `QueryTree`: a bounding volume hierarchy of bodies whose nodes hold
//! their eight children's boxes as structure-of-arrays lanes, so one
//! `f32x8` compare tests a ray or a box against every child at once
//! (Embree's BVH8 layout; Jolt's quad tree is the same idea four wide).
//!
//! Build is top-down and wide (Embree's BVH8 build): a node over more
//! than eight bodies starts as one child and splits a child in two until
//! it has eight, each split the binned surface-area split of Wald (the
//! plane between 16 bins of the centres, on any axis, that minimises
//! area × bodies on both sides), always splitting the child of the
//! largest area. A ray pays for every box it enters, so this is what a
//! ray's cost follows: a floor or terrain far larger than the bodies on
//! it goes into the root's lanes and not down the path to every leaf, as
//! a packed (sort-tile-recursive) cut of the centres would put it, and
//! each node's lanes fit the bodies' clusters. Below [`SAH_DEPTH`] levels
//! the splits fall back to object medians, which bounds the depth for
//! any input. Each split orders bodies by centre and then by slot (a
//! total order), and the slots arrive sorted: the same bodies give the
//! same tree whatever order they were added in, and nothing depends on
//! thread timing.
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
/// accepts: [`SAH_DEPTH`] levels of surface-area splits, then median
/// levels each holding at most an eighth (rounded up) of their parent's
/// bodies, 7 of them for [`MAX_BODIES`](crate::limits::MAX_BODIES) = 2^23,
/// and one of margin. Traversal stacks are sized from it.
pub(crate) const MAX_DEPTH: usize = SAH_DEPTH + 8;

/// Traversal stack entries: each level pushes at most 7 siblings beside
/// the child it descends into.
pub(crate) const STACK: usize = MAX_DEPTH * (WIDTH - 1) + 1;

/// A depth-first traversal's stack of [`STACK`] entries, left
/// uninitialised: an entry is read only after it was pushed. Zeroing it
/// per query (1.4 KB for a ray's `(node, distance)` entries) was a memset
/// per ray that cost more than a leaf test (`perf-reports/queries.md`).
pub(crate) struct Stack<T: Copy> {
    buf: [core::mem::MaybeUninit<T>; STACK],
    top: usize,
}

impl<T: Copy> Stack<T> {
    /// An empty stack holding `root`.
    #[inline(always)]
    pub fn with(root: T) -> Self {
        let mut s = Self::new();
        s.push(root);
        s
    }

    /// An empty stack.
    #[inline(always)]
    pub fn new() -> Self {
        Self {
            buf: [const { core::mem::MaybeUninit::uninit() }; STACK],
            top: 0,
        }
    }

    /// Entries on the stack.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.top
    }

    /// Panics past [`STACK`] entries, which no tree of [`MAX_DEPTH`]
    /// levels reaches.
    #[inline(always)]
    pub fn push(&mut self, v: T) {
        self.buf[self.top].write(v);
        self.top += 1;
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<T> {
        if self.top == 0 {
            return None;
        }
        self.top -= 1;
        // SAFETY: every entry below `top` was written by `push` (the only
        // way `top` grows), and `T: Copy` has no drop to double.
        Some(unsafe { self.buf[self.top].assume_init() })
    }
}

impl Stack<(u32, f32)> {
    /// Pushes `v` among the entries from `base` up, which stay sorted by
    /// distance (`.1`), farthest lowest: the nearest of them pops first.
    #[inline(always)]
    pub fn push_sorted(&mut self, base: usize, v: (u32, f32)) {
        let mut k = self.top;
        while k > base {
            // SAFETY: `base <= k - 1 < top`: an entry `push` wrote.
            let below = unsafe { self.buf[k - 1].assume_init() };
            if below.1 >= v.1 {
                break;
            }
            self.buf[k].write(below);
            k -= 1;
        }
        self.buf[k].write(v);
        self.top += 1;
    }
}

/// Eight children's boxes as lanes (an empty lane has `lo > hi`).
#[derive(Clone, Copy, Debug, PartialEq)]
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
    lo: [f32; 3],
    hi: [f32; 3],
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

    /// Nodes a tree of `n` bodies can need. Every node over more than 8
    /// bodies has 8 children and every other node has only bodies, so a
    /// subtree of `m >= 2` bodies has at most `(4m - 1) / 7` nodes (by
    /// induction: one plus its children's, a lone body counting as
    /// 3/7); rounding up also covers the single-body tree (checked
    /// over 0..5,000 bodies in the tests).
    pub fn max_nodes(n: usize) -> usize {
        (4 * n).div_ceil(7)
    }

    pub const fn bytes_per_body() -> usize {
        // nodes and parents (four sevenths per body) and the build's items
        (std::mem::size_of::<Node>() + 4) * 4 / 7 + 1 + std::mem::size_of::<Item>()
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
        self.build_to(slots, bodies, leaf_of, SAH_DEPTH);
    }

    /// [`build`](Self::build) with surface-area splits above depth
    /// `sah_depth` only (the tests take the median levels alone).
    pub(crate) fn build_to(
        &mut self,
        slots: &[u32],
        bodies: &Bodies,
        leaf_of: &mut [LeafRef],
        sah_depth: usize,
    ) {
        let boxes = slots.iter().map(|&slot| (slot, body_box(bodies, slot)));
        self.build_boxes(boxes, leaf_of, sah_depth);
    }

    /// Rebuilds the tree over any boxes, each named by an id below `2^31`
    /// (`leaf_of[id]` is set for each): bodies here, a mesh's triangles
    /// in `mesh.rs`.
    pub(crate) fn build_boxes(
        &mut self,
        boxes: impl Iterator<Item = (u32, Bounds)>,
        leaf_of: &mut [LeafRef],
        sah_depth: usize,
    ) {
        self.nodes.clear();
        self.parent.clear();
        self.items.clear();
        self.items.extend(boxes.map(|(slot, (lo, hi))| Item {
            slot,
            centre: [
                0.5 * (lo[0] + hi[0]),
                0.5 * (lo[1] + hi[1]),
                0.5 * (lo[2] + hi[2]),
            ],
            lo,
            hi,
        }));
        if !self.items.is_empty() {
            let mut items = std::mem::take(&mut self.items);
            self.build_node(&mut items, EMPTY, leaf_of, 1, sah_depth.min(SAH_DEPTH));
            self.items = items;
        }
        self.built_cost = self.cost();
    }

    fn build_node(
        &mut self,
        items: &mut [Item],
        parent: u32,
        leaf_of: &mut [LeafRef],
        depth: usize,
        sah_depth: usize,
    ) -> u32 {
        let at = self.nodes.len() as u32;
        self.nodes.push(Node::EMPTY);
        self.parent.push(parent);
        let n = items.len();
        if n <= WIDTH {
            for (lane, it) in items.iter().enumerate() {
                self.nodes[at as usize].set(lane, LEAF | it.slot, (it.lo, it.hi));
                leaf_of[it.slot as usize] = at * WIDTH as u32 + lane as u32;
            }
            return at;
        }
        debug_assert!(depth < MAX_DEPTH, "see MAX_DEPTH");
        let sah = depth < sah_depth;
        // Children as item ranges with their boxes: start with one and
        // split a child until there are eight (Embree's wide build). The
        // surface-area build splits the child of the largest area (where a
        // ray is likeliest to pay), the fallback the most populous one.
        let mut ranges = [(0usize, 0usize, bounds_of(items)); WIDTH];
        ranges[0].1 = n;
        for count in 1..WIDTH {
            let key = |&(a, b, bx): &(usize, usize, Bounds)| {
                if b - a < 2 {
                    -1.0
                } else if sah {
                    half_area(bx)
                } else {
                    (b - a) as f32
                }
            };
            // the first of equal keys: no order but the items' decides
            let mut pick = 0;
            for k in 1..count {
                if key(&ranges[k]) > key(&ranges[pick]) {
                    pick = k;
                }
            }
            let (a, b, _) = ranges[pick];
            let mid = a + split(&mut items[a..b], sah);
            ranges[pick] = (a, mid, bounds_of(&items[a..mid]));
            ranges[count] = (mid, b, bounds_of(&items[mid..b]));
        }
        // lanes in item order, so the subtrees follow each other in
        // pre-order as the lanes do
        ranges.sort_unstable_by_key(|r| r.0);
        for (lane, &(a, b, bx)) in ranges.iter().enumerate() {
            let group = &mut items[a..b];
            if group.len() == 1 {
                let slot = group[0].slot;
                self.nodes[at as usize].set(lane, LEAF | slot, bx);
                leaf_of[slot as usize] = at * WIDTH as u32 + lane as u32;
            } else {
                let child = self.build_node(group, at, leaf_of, depth + 1, sah_depth);
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
        self.nodes[node].overlap_mask(lo, hi)
    }

    /// The built nodes, handed over (a mesh keeps only these).
    pub(crate) fn into_nodes(self) -> Vec<Node> {
        self.nodes
    }
}

impl Node {
    /// The lanes whose boxes overlap `[lo, hi]`, as bits.
    #[inline(always)]
    pub fn overlap_mask(&self, lo: [f32; 3], hi: [f32; 3]) -> u32 {
        let (nlo, nhi) = self.lanes();
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

/// Bins per axis of a surface-area split (Wald's binned SAH; more bins
/// change the cost of the trees here by well under a percent).
const SAH_BINS: usize = 16;

/// Nodes this deep or deeper split by object median instead of surface
/// area. Surface area alone can chain a tree as deep as the bodies are
/// many (sizes or positions growing geometrically); from here on each
/// node's children hold at most an eighth of its bodies (rounded up),
/// which bounds the depth (see [`MAX_DEPTH`]).
pub(crate) const SAH_DEPTH: usize = 16;

pub(crate) type Bounds = ([f32; 3], [f32; 3]);

const NO_BOUNDS: Bounds = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);

/// The box around the bodies' boxes.
fn bounds_of(items: &[Item]) -> Bounds {
    items
        .iter()
        .fold(NO_BOUNDS, |b, it| union(b, (it.lo, it.hi)))
}

/// The box around the bodies' centres.
fn centre_bounds(items: &[Item]) -> Bounds {
    items
        .iter()
        .fold(NO_BOUNDS, |b, it| union(b, (it.centre, it.centre)))
}

/// The bin of centre coordinate `c` on an axis whose centres start at
/// `lo`, `scale` bins per metre.
#[inline(always)]
fn bin(c: f32, lo: f32, scale: f32) -> usize {
    // `as` saturates: a negative rounding goes to bin 0
    (((c - lo) * scale) as usize).min(SAH_BINS - 1)
}

/// Reorders `items` (two or more) into a left and a right part and
/// returns the left part's length, both parts non-empty: the binned
/// surface-area split (the plane between bins, over all three axes,
/// minimising area × bodies summed over both sides; the first of equal
/// costs), or when `sah` is off or every centre coincides, the object
/// median along the longest axis of the centres (by centre, then slot).
fn split(items: &mut [Item], sah: bool) -> usize {
    let (clo, chi) = centre_bounds(items);
    if sah {
        if let Some((axis, plane, scale)) = best_plane(items, clo, chi) {
            let goes_left = |it: &Item| bin(it.centre[axis], clo[axis], scale) < plane;
            let (mut i, mut j) = (0, items.len());
            while i < j {
                if goes_left(&items[i]) {
                    i += 1;
                } else {
                    j -= 1;
                    items.swap(i, j);
                }
            }
            return i;
        }
    }
    let ext = [chi[0] - clo[0], chi[1] - clo[1], chi[2] - clo[2]];
    let axis = if ext[0] >= ext[1] && ext[0] >= ext[2] {
        0
    } else if ext[1] >= ext[2] {
        1
    } else {
        2
    };
    let mid = items.len() / 2;
    items.select_nth_unstable_by(mid, |a, b| {
        a.centre[axis]
            .total_cmp(&b.centre[axis])
            .then(a.slot.cmp(&b.slot))
    });
    mid
}

/// The cheapest plane of a binned surface-area split: (axis, first bin
/// of the right side, bins per metre), or `None` when no axis has two
/// distinct centres.
fn best_plane(items: &[Item], clo: [f32; 3], chi: [f32; 3]) -> Option<(usize, usize, f32)> {
    let mut best: Option<(f32, usize, usize, f32)> = None;
    for axis in 0..3 {
        let ext = chi[axis] - clo[axis];
        let scale = SAH_BINS as f32 / ext;
        if !(ext > 0.0 && scale.is_finite()) {
            continue;
        }
        let mut count = [0u32; SAH_BINS];
        let mut boxes = [NO_BOUNDS; SAH_BINS];
        for it in items {
            let k = bin(it.centre[axis], clo[axis], scale);
            count[k] += 1;
            boxes[k] = union(boxes[k], (it.lo, it.hi));
        }
        // right-side costs for planes 1..SAH_BINS, then sweep from the left
        let mut right = [(0.0f32, 0u32); SAH_BINS];
        let (mut acc, mut n) = (NO_BOUNDS, 0u32);
        for k in (1..SAH_BINS).rev() {
            acc = union(acc, boxes[k]);
            n += count[k];
            right[k] = (half_area(acc) * n as f32, n);
        }
        let (mut acc, mut n) = (NO_BOUNDS, 0u32);
        for k in 1..SAH_BINS {
            acc = union(acc, boxes[k - 1]);
            n += count[k - 1];
            let cost = half_area(acc) * n as f32 + right[k].0;
            // both sides must hold a body
            if n > 0 && right[k].1 > 0 && best.is_none_or(|b| cost < b.0) {
                best = Some((cost, axis, k, scale));
            }
        }
    }
    best.map(|(_, axis, plane, scale)| (axis, plane, scale))
}

fn union(a: Bounds, b: Bounds) -> Bounds {
    let mut r = a;
    for k in 0..3 {
        r.0[k] = r.0[k].min(b.0[k]);
        r.1[k] = r.1[k].max(b.1[k]);
    }
    r
}

#[cfg(test)]
mod stack_tests {
    use super::*;

    /// Last in, first out, to the full [`STACK`] entries and back to empty.
    #[test]
    fn stack_pops_what_was_pushed_in_reverse() {
        let mut s = Stack::with(u32::MAX);
        for k in 0..STACK as u32 - 1 {
            s.push(k);
        }
        for k in (0..STACK as u32 - 1).rev() {
            assert_eq!(s.pop(), Some(k));
        }
        assert_eq!(s.pop(), Some(u32::MAX));
        assert_eq!(s.pop(), None);
    }

    /// Siblings pushed sorted pop nearest first, ties in push order
    /// reversed, and never sort into the entries below their base.
    #[test]
    fn sorted_siblings_pop_nearest_first() {
        let mut s: Stack<(u32, f32)> = Stack::new();
        s.push((100, 0.5)); // an earlier level's entry, nearer than all
        let base = s.len();
        for (k, d) in [3.0, 1.0, 7.0, 1.0, 2.0, 9.0, 0.0].into_iter().enumerate() {
            s.push_sorted(base, (k as u32, d));
        }
        let order: Vec<(u32, f32)> = core::iter::from_fn(|| s.pop()).collect();
        assert_eq!(
            order,
            [
                (6, 0.0),
                (3, 1.0),
                (1, 1.0),
                (4, 2.0),
                (0, 3.0),
                (2, 7.0),
                (5, 9.0),
                (100, 0.5)
            ]
        );
    }
}
