//! Joint trees: the equality rows of a small island's joints, solved
//! exactly when the joints form a forest over the island's dynamic bodies
//! (Baraff, "Linear-Time Dynamics using Lagrange Multipliers", 1996).
//!
//! Why: projected Gauss–Seidel converges on a chain at a rate set by the
//! mass ratio times the chain's length squared, so a 10 kg box on ten
//! 0.1 kg links, or a 20-link chain swinging, stretches by centimetres to
//! decimetres at 10 iterations (measured: 0.5 m and 27 mm). A tree's
//! constraint system is sparse along the tree, and an `LDLᵀ` factorization
//! of its KKT matrix `H = [[M, Jᵀ], [J, 0]]` in leaves-to-root order has no
//! fill: the solve is linear in the tree's size and exact.
//!
//! How it fits the solver: a joint of a tree keeps its bundle slot for its
//! rows (limits, motors, friction: inequalities, still Gauss–Seidel), but
//! its point, 2×2 and rotation parts are off there and solved here instead,
//! once per iteration of its pack, after the pack's colours and overflow
//! (block Gauss–Seidel with the whole tree as one block: exact in one pass
//! when the island has no contacts or active rows). The factorization is
//! built at setup from the step's start poses; each position iteration
//! takes a chord step on the constraints' errors at the current poses with
//! that factorization, or, where a body of the pack turned more than
//! 0.1 rad in the step ([`COS_HALF_CHORD_TURN`]), refactors there and
//! takes a full Newton step. Large islands (split by the splitter) and
//! islands whose joints close a loop (the net) stay on Gauss–Seidel.
//!
//! Nodes are bodies (dimension 6: linear and angular velocity) and joints
//! (dimension `m` ≤ 6: their equality rows), each tree rooted at a body,
//! stored in elimination order (every node after its children).

// Matrix code indexes as the formulas do (several arrays by one index).
#![allow(clippy::needless_range_loop)]

mod dense;

use crate::body::{Bodies, MotionType};
use crate::disjoint::Disjoint;
use crate::jobs::StepCtx;
use crate::joint::store::{kind, JointData, Joints, JOINT_IMPULSES, WORLD};
use crate::joint::JointImpulse;
use crate::math::{Quat, Vec3};
use crate::solver::bodies::BodyVelocity;
use crate::solver::joint::prepare::Geometry;
use crate::solver::parts::block2::Jacobian;
use crate::solver::parts::{dual_axis, hinge_rotation, rotation};
use crate::solver::poses::{turn, BodyPose, PairPose};
use archipelago_simd::{Q4, V3};
use dense::{
    add_gram, cholesky, inverse, mul_tvec, mul_vec, solve_rows, Mat, Row, Vector, DIM, ZERO,
    ZERO_ROW,
};

const NONE: u32 = u32::MAX;

/// Most entries a joint adds to the structure signature: its active
/// index and two sides, and its island's index and joint count.
const SIGNATURE_PER_JOINT: usize = 5;

/// Relative regularization of a pivot (for a joint, a soft constraint of
/// compliance 1e-5 of its stiffness: dependent rows, such as two joints
/// between the same bodies on one axis, stay solvable at no visible cost).
const REGULARIZATION: f32 = 1e-5;

/// A position pass reuses the setup's factorization (a chord step) while
/// no body of its pack turned more than 0.1 rad since the step began, and
/// refactors at the current poses (a Newton step) otherwise. Kept as the
/// cosine of half that angle, `cos(0.05)`, which the quaternions give
/// directly (a literal: a `cos` at run time could round differently from
/// one build to another). Measured on the chains scene: at 0.25 rad the
/// largest stretch while they whip was 1.29 mm, at 0.1 rad 0.62 mm, for
/// the same time per step.
const COS_HALF_CHORD_TURN: f32 = 0.998_750_27;

/// A node in elimination order.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// A body slot, or an active joint index.
    id: u32,
    joint: bool,
    /// Index of the parent within the node's pack, [`NONE`] for a tree's
    /// root.
    parent: u32,
}

/// A joint node's equality rows: `m` Jacobians (point, then the 2×2 block,
/// then rotation, as the kind has them), its two sides' velocity slots
/// (the zero slot for static bodies and the world), and the accumulated
/// impulses.
#[derive(Clone, Copy)]
struct Rows {
    jac: [Jacobian<f32>; DIM],
    m: usize,
    point: bool,
    block: bool,
    rotation: bool,
    slot: [u32; 2],
    dynamic: [bool; 2],
    /// World lever arms from each side's centre of mass to its anchor.
    lever: [V3<f32>; 2],
    /// Impulses accumulated this step, and the point rows' impulse of the
    /// last step (what the joint's tension was).
    lambda: Vector,
    tension: f32,
}

const NO_ROWS: Rows = Rows {
    jac: [Jacobian {
        n: V3 {
            x: 0.0,
            y: 0.0,
            z: 0.0,
        },
        ja: V3 {
            x: 0.0,
            y: 0.0,
            z: 0.0,
        },
        jb: V3 {
            x: 0.0,
            y: 0.0,
            z: 0.0,
        },
    }; DIM],
    m: 0,
    point: false,
    block: false,
    rotation: false,
    slot: [0; 2],
    dynamic: [false; 2],
    lever: [V3 {
        x: 0.0,
        y: 0.0,
        z: 0.0,
    }; 2],
    lambda: [0.0; DIM],
    tension: 0.0,
};

/// Per node: its factorization and solve scratch.
#[derive(Clone, Copy)]
struct Factor {
    /// The node's dimension (6 for a body, its rows for a joint).
    dim: usize,
    /// The pivot `D_k` while the children are eliminated into it, then
    /// its inverse `D_k⁻¹`. The elimination factors `±D_k` (`D_k` for a
    /// body, `−D_k`, positive definite, for a joint) by Cholesky and
    /// solves with the factor; the substitutions, three per step, multiply
    /// by the explicit inverse instead: a product is `dim` independent row
    /// operations, where two triangular solves were a chain of dependent
    /// scalar steps.
    pivot: Mat,
    /// `L_k = D_k⁻¹ H_{k,parent}`.
    l: Mat,
    y: Row,
    x: Row,
}

const NO_FACTOR: Factor = Factor {
    dim: 0,
    pivot: ZERO,
    l: ZERO,
    y: ZERO_ROW,
    x: ZERO_ROW,
};

/// Preallocated joint trees of one step.
pub(crate) struct JointTrees {
    nodes: Vec<Node>,
    rows: Vec<Rows>,
    factor: Vec<Factor>,
    /// Per pack: its nodes `[start, end)`.
    pub pack_nodes: Vec<(u32, u32)>,
    /// Per active joint: whether a tree solves its equality parts.
    pub in_tree: Vec<bool>,
    /// Joints solved by trees this step.
    pub joints: u32,
    // build scratch: per body slot a union-find parent, adjacency offset
    // and count, and a visit mark; per active joint a visit mark
    uf: Vec<u32>,
    touched: Vec<u32>,
    adj_offset: Vec<u32>,
    adj_count: Vec<u32>,
    adjacency: Vec<u32>,
    island_joints: Vec<u32>,
    visited: Vec<bool>,
    joint_visited: Vec<bool>,
    // interleave scratch: the pack's trees' first nodes, the reordered
    // nodes and each node's new position
    tree_starts: Vec<u32>,
    live: Vec<u32>,
    reorder: Vec<Node>,
    new_index: Vec<u32>,
    // The structure cache: what the trees were built from (see
    // `classify`), this step's and the last build's.
    signature: Vec<u32>,
    built_signature: Vec<u32>,
    packs: Vec<(u32, u32)>,
    built_packs: Vec<(u32, u32)>,
    /// Whether `nodes` and `pack_nodes` hold the trees of
    /// `built_signature` and `built_packs`.
    built: bool,
    /// Whether this step's `classify` found last step's signature.
    same_islands: bool,
    /// Whether this step's `build` kept the last one's trees.
    pub reused: bool,
}

/// The Jacobian of `j` seen from side `s` (0: A, 1: B) as a row of `H`:
/// A's is `[−n, −j_a]`, B's `[n, j_b]`.
fn side_row(j: &Jacobian<f32>, s: usize) -> Vector {
    if s == 0 {
        [-j.n.x, -j.n.y, -j.n.z, -j.ja.x, -j.ja.y, -j.ja.z]
    } else {
        [j.n.x, j.n.y, j.n.z, j.jb.x, j.jb.y, j.jb.z]
    }
}

fn v3(v: [f32; 3]) -> V3<f32> {
    V3::new(v[0], v[1], v[2])
}

fn q4(q: [f32; 4]) -> Q4<f32> {
    Q4 {
        x: q[0],
        y: q[1],
        z: q[2],
        w: q[3],
    }
}

/// Whether a joint kind has equality parts a tree can solve.
fn has_equality_parts(k: u32) -> bool {
    k != kind::DISTANCE
}

impl JointTrees {
    pub fn new(max_bodies: usize, max_joints: usize) -> Self {
        // a forest of J joints has at most 2J body nodes
        let nodes = 3 * max_joints;
        Self {
            nodes: Vec::with_capacity(nodes),
            rows: Vec::with_capacity(nodes),
            factor: Vec::with_capacity(nodes),
            pack_nodes: Vec::with_capacity(max_joints + 1),
            in_tree: vec![false; max_joints],
            joints: 0,
            uf: vec![NONE; max_bodies],
            touched: Vec::with_capacity(2 * max_joints),
            adj_offset: vec![0; max_bodies],
            adj_count: vec![0; max_bodies],
            adjacency: Vec::with_capacity(2 * max_joints),
            island_joints: Vec::with_capacity(max_joints),
            visited: vec![false; max_bodies],
            joint_visited: vec![false; max_joints],
            tree_starts: Vec::with_capacity(nodes + 1),
            live: Vec::with_capacity(nodes),
            reorder: Vec::with_capacity(nodes),
            new_index: Vec::with_capacity(nodes),
            signature: Vec::with_capacity(SIGNATURE_PER_JOINT * max_joints + 1),
            built_signature: Vec::with_capacity(SIGNATURE_PER_JOINT * max_joints + 1),
            packs: Vec::with_capacity(max_joints + 1),
            built_packs: Vec::with_capacity(max_joints + 1),
            built: false,
            same_islands: false,
            reused: false,
        }
    }

    fn find(&mut self, mut i: u32) -> u32 {
        while self.uf[i as usize] != i {
            let up = self.uf[self.uf[i as usize] as usize];
            self.uf[i as usize] = up;
            i = up;
        }
        i
    }

    /// Marks the joints of every small island (`islands`: ranges of
    /// `order`, whose items are manifolds, then active joints at
    /// `manifolds + j`) that joint trees will solve: the island's joints
    /// with equality parts form trees (see [`is_forest`](Self::is_forest)).
    /// `dynamic(slot)` says whether a body is dynamic. Call before laying
    /// out the constraints: a tree joint without rows needs no slot.
    ///
    /// The marks and the trees are a function of each small island's joints
    /// with equality parts (their active indices and dynamic sides, in
    /// order) and of the island's index, which this step's signature lists;
    /// where it equals the last build's (a chain that swings, a pile whose
    /// contacts join no new island), the marks and trees stand and neither
    /// is worked out again (the forest test, the adjacency, the
    /// breadth-first walks and the interleaving were ~8% of the chains
    /// scene's step). The signature depends on the world's state only, so
    /// every run and thread count takes the same path.
    pub fn classify(
        &mut self,
        islands: &[(u32, u32)],
        order: &[u32],
        manifolds: u32,
        joints: &Joints,
        dynamic: impl Fn(u32) -> bool,
    ) {
        let sides = |j: u32| {
            let d = &joints.data[joints.active[j as usize] as usize];
            [d.body_a, d.body_b].map(|b| if b != WORLD && dynamic(b) { b } else { NONE })
        };
        self.signature.clear();
        self.signature.push(joints.active.len() as u32);
        for (i, &(a, b)) in islands.iter().enumerate() {
            self.collect(&order[a as usize..b as usize], manifolds, joints);
            if self.island_joints.is_empty() {
                continue;
            }
            self.signature
                .extend([i as u32, self.island_joints.len() as u32]);
            for k in 0..self.island_joints.len() {
                let j = self.island_joints[k];
                let [x, y] = sides(j);
                self.signature.extend([j, x, y]);
            }
        }
        self.same_islands = self.built && self.signature == self.built_signature;
        if self.same_islands {
            return;
        }
        self.built = false;
        core::mem::swap(&mut self.signature, &mut self.built_signature);
        self.joints = 0;
        self.in_tree[..joints.active.len()].fill(false);
        // the islands with joints, read back from the signature (each: its
        // index, its joint count, then per joint its index and two sides)
        let mut at = 1;
        while at < self.built_signature.len() {
            let count = self.built_signature[at + 1] as usize;
            let first = at + 2;
            at = first + 3 * count;
            self.island_joints.clear();
            for k in 0..count {
                let j = self.built_signature[first + 3 * k];
                self.island_joints.push(j);
            }
            if self.is_forest(&sides) {
                for k in 0..count {
                    self.in_tree[self.island_joints[k] as usize] = true;
                }
                self.joints += count as u32;
            }
        }
    }

    /// The joints with equality parts among `items` into `island_joints`.
    fn collect(&mut self, items: &[u32], manifolds: u32, joints: &Joints) {
        self.island_joints.clear();
        self.island_joints.extend(
            items
                .iter()
                .filter(|&&i| i >= manifolds)
                .map(|&i| i - manifolds)
                .filter(|&j| {
                    has_equality_parts(joints.data[joints.active[j as usize] as usize].kind)
                }),
        );
    }

    /// Builds the trees of every pack (`packs[k]`: the range of `islands`
    /// it holds) from the joints [`classify`](Self::classify) marked.
    pub fn build(
        &mut self,
        packs: impl Iterator<Item = (u32, u32)>,
        islands: &[(u32, u32)],
        order: &[u32],
        manifolds: u32,
        joints: &Joints,
        dynamic: impl Fn(u32) -> bool,
    ) {
        self.packs.clear();
        self.packs.extend(packs);
        self.reused = self.same_islands && self.packs == self.built_packs;
        if self.reused {
            return;
        }
        core::mem::swap(&mut self.packs, &mut self.built_packs);
        self.nodes.clear();
        self.pack_nodes.clear();
        let sides = |j: u32| {
            let d = &joints.data[joints.active[j as usize] as usize];
            [d.body_a, d.body_b].map(|b| if b != WORLD && dynamic(b) { b } else { NONE })
        };
        for p in 0..self.built_packs.len() {
            let (first, last) = self.built_packs[p];
            let start = self.nodes.len() as u32;
            self.tree_starts.clear();
            for &(a, b) in &islands[first as usize..last as usize] {
                self.collect(&order[a as usize..b as usize], manifolds, joints);
                if self
                    .island_joints
                    .first()
                    .is_some_and(|&j| self.in_tree[j as usize])
                {
                    self.add_island(&sides, start as usize);
                }
            }
            self.interleave(start as usize);
            self.pack_nodes.push((start, self.nodes.len() as u32));
        }
        self.rows.resize(self.nodes.len(), NO_ROWS);
        self.factor.resize(self.nodes.len(), NO_FACTOR);
        self.built = true;
    }

    /// Whether the island's joints (`island_joints`) can be solved as
    /// trees: they close no loop over its dynamic bodies (two joints between
    /// the same bodies are a loop), and each tree has at most one joint with
    /// a single dynamic body (to the world, a static or a kinematic body).
    /// Such a joint must be its tree's root: as a leaf its pivot in the
    /// elimination would be zero (nothing below it), so a tree held at two
    /// places (a bridge) stays on Gauss–Seidel.
    fn is_forest(&mut self, sides: &impl Fn(u32) -> [u32; 2]) -> bool {
        self.touched.clear();
        let mut forest = true;
        for k in 0..self.island_joints.len() {
            let [a, b] = sides(self.island_joints[k]);
            for x in [a, b] {
                if x != NONE && self.uf[x as usize] == NONE {
                    self.uf[x as usize] = x;
                    self.touched.push(x);
                }
            }
            if a != NONE && b != NONE {
                let (ra, rb) = (self.find(a), self.find(b));
                if ra == rb {
                    forest = false;
                    break;
                }
                self.uf[ra.max(rb) as usize] = ra.min(rb);
            }
        }
        // one held joint per tree at most (`adj_count` of a tree's root
        // counts them; it is zero everywhere outside `add_island`)
        if forest {
            for k in 0..self.island_joints.len() {
                let [a, b] = sides(self.island_joints[k]);
                if (a == NONE) != (b == NONE) {
                    let root = self.find(if a == NONE { b } else { a });
                    self.adj_count[root as usize] += 1;
                    forest &= self.adj_count[root as usize] == 1;
                }
            }
        }
        for &x in &self.touched {
            self.uf[x as usize] = NONE;
            self.adj_count[x as usize] = 0;
        }
        forest
    }

    /// Appends one island's trees (its joints form a forest) to the pack
    /// that starts at node `pack_start`, each in elimination order: a
    /// breadth-first walk from a body, reversed.
    fn add_island(&mut self, sides: &impl Fn(u32) -> [u32; 2], pack_start: usize) {
        // adjacency, body -> its joints: counts, offsets, fill
        self.touched.clear();
        for &j in &self.island_joints {
            for x in sides(j) {
                if x != NONE {
                    if self.adj_count[x as usize] == 0 {
                        self.touched.push(x);
                    }
                    self.adj_count[x as usize] += 1;
                }
            }
        }
        let mut total = 0;
        for &x in &self.touched {
            self.adj_offset[x as usize] = total;
            total += self.adj_count[x as usize];
            self.adj_count[x as usize] = 0;
        }
        self.adjacency.clear();
        self.adjacency.resize(total as usize, 0);
        for k in 0..self.island_joints.len() {
            let j = self.island_joints[k];
            self.joint_visited[j as usize] = false;
            for x in sides(j) {
                if x != NONE {
                    let at = self.adj_offset[x as usize] + self.adj_count[x as usize];
                    self.adjacency[at as usize] = j;
                    self.adj_count[x as usize] += 1;
                }
            }
        }
        // roots: the held joints first (each tree has at most one), then
        // any body not reached from them
        let held = self.island_joints.len();
        for t in 0..held + self.touched.len() {
            let root = if t < held {
                let j = self.island_joints[t];
                let [a, b] = sides(j);
                if (a == NONE) == (b == NONE) {
                    continue;
                }
                self.joint_visited[j as usize] = true;
                Node {
                    id: j,
                    joint: true,
                    parent: NONE,
                }
            } else {
                let x = self.touched[t - held];
                if self.visited[x as usize] {
                    continue;
                }
                self.visited[x as usize] = true;
                Node {
                    id: x,
                    joint: false,
                    parent: NONE,
                }
            };
            // breadth first; parents as absolute node positions for now
            let base = self.nodes.len();
            self.tree_starts.push(base as u32);
            self.nodes.push(root);
            let mut head = base;
            while head < self.nodes.len() {
                let n = self.nodes[head];
                if n.joint {
                    for x in sides(n.id) {
                        if x != NONE && !self.visited[x as usize] {
                            self.visited[x as usize] = true;
                            self.nodes.push(Node {
                                id: x,
                                joint: false,
                                parent: head as u32,
                            });
                        }
                    }
                } else {
                    let (s, c) = (
                        self.adj_offset[n.id as usize],
                        self.adj_count[n.id as usize],
                    );
                    for at in s..s + c {
                        let j = self.adjacency[at as usize];
                        if !self.joint_visited[j as usize] {
                            self.joint_visited[j as usize] = true;
                            self.nodes.push(Node {
                                id: j,
                                joint: true,
                                parent: head as u32,
                            });
                        }
                    }
                }
                head += 1;
            }
            // reversed: children first; parents remapped to the reversed
            // positions, relative to the pack
            let end = self.nodes.len();
            self.nodes[base..end].reverse();
            for k in base..end {
                let p = self.nodes[k].parent;
                if p != NONE {
                    self.nodes[k].parent = (base + end - 1 - p as usize - pack_start) as u32;
                }
            }
        }
        for &x in &self.touched {
            self.visited[x as usize] = false;
            self.adj_count[x as usize] = 0;
        }
    }

    /// Interleaves the trees of the pack that starts at node `pack_start`
    /// (each in elimination order from its `tree_starts` entry on): their
    /// first nodes, then their second nodes, and so on, each tree's nodes
    /// in their order. Why: a tree's elimination and substitutions are one
    /// dependency chain (a node's pivot waits for its children's, each a
    /// Cholesky with a square root and a division per column), so one tree
    /// after another leaves the core waiting on latency; with the trees'
    /// nodes side by side the core overlaps independent trees. Each tree's
    /// arithmetic, and so every result bit, is the same in either order.
    fn interleave(&mut self, pack_start: usize) {
        let end = self.nodes.len();
        if self.tree_starts.len() < 2 {
            return;
        }
        self.tree_starts.push(end as u32);
        self.reorder.clear();
        self.new_index.clear();
        self.new_index.resize(end - pack_start, NONE);
        self.live.clear();
        self.live.extend(0..self.tree_starts.len() as u32 - 1);
        let mut depth = 0;
        while !self.live.is_empty() {
            let mut kept = 0;
            for i in 0..self.live.len() {
                let t = self.live[i] as usize;
                let at = self.tree_starts[t] as usize + depth;
                if at < self.tree_starts[t + 1] as usize {
                    self.new_index[at - pack_start] = self.reorder.len() as u32;
                    self.reorder.push(self.nodes[at]);
                    self.live[kept] = t as u32;
                    kept += 1;
                }
            }
            self.live.truncate(kept);
            depth += 1;
        }
        for (k, n) in self.reorder.iter().enumerate() {
            let mut n = *n;
            if n.parent != NONE {
                n.parent = self.new_index[n.parent as usize];
            }
            self.nodes[pack_start + k] = n;
        }
    }

    /// Factors every pack's trees (in parallel, by pack) at the step's
    /// start poses, and loads each tree joint's warm-start impulses.
    pub fn factor(&mut self, ctx: &StepCtx, bodies: &Bodies, joints: &Joints, zero: u32, dt: f32) {
        if self.nodes.is_empty() {
            return;
        }
        let nodes = &self.nodes;
        let rows = Disjoint::new(&mut self.rows);
        let factor = Disjoint::new(&mut self.factor);
        let packs = &self.pack_nodes;
        ctx.par_for("factor trees", packs.len(), 1, |range| {
            for p in range {
                let (a, b) = (packs[p].0 as usize, packs[p].1 as usize);
                if a == b {
                    continue;
                }
                // SAFETY: a pack's nodes are this job's alone.
                let (rows, factor) = unsafe { (rows.slice_mut(a, b), factor.slice_mut(a, b)) };
                let at_start = |b: u32| {
                    let i = b as usize;
                    (v3(bodies.pos(i).to_array()), q4(bodies.rot(i).to_array()))
                };
                let active = &joints.active;
                factor_pack(
                    &nodes[a..b],
                    rows,
                    factor,
                    bodies,
                    joints,
                    active,
                    zero,
                    at_start,
                    true,
                    dt,
                );
            }
        });
    }

    /// One velocity pass over pack `p`'s trees: the exact solve of the
    /// equality rows at the current velocities (also in the warm-start
    /// iteration).
    ///
    /// # Safety
    /// The pack's bodies and nodes are the caller's alone (its pack job).
    pub unsafe fn solve_velocities(nodes: &TreeView, p: usize, vel: &Disjoint<BodyVelocity>) {
        let (a, b) = (nodes.packs[p].0 as usize, nodes.packs[p].1 as usize);
        if a == b {
            return;
        }
        // SAFETY: the pack's nodes are this job's (caller).
        let (rows, factor) = unsafe { (nodes.rows.slice_mut(a, b), nodes.factor.slice_mut(a, b)) };
        let nodes = &nodes.nodes[a..b];
        let read = |s: u32| -> [f32; 6] {
            // SAFETY: a tree joint's sides are the pack's bodies, or
            // static/kinematic ones nobody writes during the solve.
            let v = unsafe { vel.slice_mut(s as usize, s as usize + 1)[0] };
            [v.lin.x, v.lin.y, v.lin.z, v.ang.x, v.ang.y, v.ang.z]
        };
        let add = |s: u32, dv: &Row| {
            // SAFETY: a dynamic side of the pack: this job's alone.
            let v = unsafe { &mut vel.slice_mut(s as usize, s as usize + 1)[0] };
            v.lin += Vec3::new(dv[0], dv[1], dv[2]);
            v.ang += Vec3::new(dv[3], dv[4], dv[5]);
        };
        // The warm start solves too (this runs in it like any iteration):
        // one pass of a tree is exact, and replaying last step's impulses
        // would apply them through the bodies' own inertia, not the
        // stiffened one the solve uses.
        // right-hand side: −J v at the joints, 0 at the bodies
        for (n, (r, f)) in nodes.iter().zip(rows.iter().zip(factor.iter_mut())) {
            f.y = ZERO_ROW;
            if n.joint {
                let (va, vb) = (read(r.slot[0]), read(r.slot[1]));
                for k in 0..r.m {
                    let (ra, rb) = (side_row(&r.jac[k], 0), side_row(&r.jac[k], 1));
                    let jv = dot(&ra, &va) + dot(&rb, &vb);
                    f.y[k] = -jv;
                }
            }
        }
        substitute(nodes, factor);
        for (n, (r, f)) in nodes.iter().zip(rows.iter_mut().zip(factor.iter())) {
            if n.joint {
                for k in 0..r.m {
                    r.lambda[k] -= f.x[k];
                }
            } else {
                add(n.id, &f.x);
            }
        }
    }

    /// One position pass over pack `p`'s trees: the Newton step on the
    /// equality rows' errors at the current poses (all of them: the step is
    /// exact for the linearized rows, so a fraction would only slow it).
    ///
    /// # Safety
    /// The pack's bodies and nodes are the caller's alone (its pack job).
    pub unsafe fn solve_positions(
        nodes: &TreeView,
        p: usize,
        poses: &Disjoint<BodyPose>,
        bodies: &Bodies,
        joints: &Joints,
        dt: f32,
    ) {
        let (a, b) = (nodes.packs[p].0 as usize, nodes.packs[p].1 as usize);
        if a == b {
            return;
        }
        // SAFETY: the pack's nodes are this job's (caller).
        let (rows, factor) = unsafe { (nodes.rows.slice_mut(a, b), nodes.factor.slice_mut(a, b)) };
        let active = nodes.active;
        let zero = nodes.zero;
        let nodes = &nodes.nodes[a..b];
        let pose_of = |body: u32| -> (V3<f32>, Q4<f32>) {
            if body == WORLD {
                return (V3::zero(), q4([0.0, 0.0, 0.0, 1.0]));
            }
            if bodies.motion(body as usize) == MotionType::Static {
                let (x, q) = (bodies.pos(body as usize), bodies.rot(body as usize));
                return (v3(x.to_array()), q4(q.to_array()));
            }
            // SAFETY: the pack's bodies or kinematic ones (not written).
            let p = unsafe { poses.slice_mut(body as usize, body as usize + 1)[0] };
            (v3(p.pos.to_array()), q4(p.rot.to_array()))
        };
        // A chord step where it converges: the factorization of the setup
        // (the step's start poses, which the velocity passes used) with the
        // errors at the current poses. Refactoring at the current poses
        // (a full Newton step) costs as much as the setup's factorization,
        // twice a step, and buys nothing unless a body turned far: the
        // Jacobians' lever arms turn with the bodies, so the chord step
        // contracts the error by about the angle turned (0.1 rad: to 1/100
        // in the step's two position passes), where Newton's would square
        // it. A pack with a body that turned more is refactored.
        let turned_far = nodes.iter().any(|n| {
            if n.joint || bodies.motion(n.id as usize) != MotionType::Dynamic {
                return false;
            }
            let start = bodies.rot(n.id as usize);
            let (_, now) = pose_of(n.id);
            let cos_half =
                (start.x * now.x + start.y * now.y + start.z * now.z + start.w * now.w).abs();
            cos_half < COS_HALF_CHORD_TURN
        });
        if turned_far {
            factor_pack(
                nodes, rows, factor, bodies, joints, active, zero, pose_of, false, dt,
            );
        }
        for (n, (r, f)) in nodes.iter().zip(rows.iter().zip(factor.iter_mut())) {
            f.y = ZERO_ROW;
            if n.joint {
                let d = &joints.data[active[n.id as usize] as usize];
                let (xa, qa) = pose_of(d.body_a);
                let (xb, qb) = pose_of(d.body_b);
                let pose = PairPose { xa, qa, xb, qb };
                let c = errors(d, &pose);
                for k in 0..r.m {
                    f.y[k] = -c[k];
                }
            }
        }
        substitute(nodes, factor);
        for (n, f) in nodes.iter().zip(factor.iter()) {
            if n.joint {
                continue;
            }
            // SAFETY: a dynamic body of the pack: this job's alone.
            let p = unsafe { &mut poses.slice_mut(n.id as usize, n.id as usize + 1)[0] };
            let x = &f.x;
            p.pos += Vec3::new(x[0], x[1], x[2]);
            let q = turn(q4(p.rot.to_array()), V3::new(x[3], x[4], x[5]));
            p.rot = Quat::from_xyzw(q.x, q.y, q.z, q.w);
        }
    }

    /// A view the pack jobs share (nodes read-only, rows and factors by
    /// pack).
    pub fn view<'a>(&'a mut self, active: &'a [u32], zero: u32) -> TreeView<'a> {
        TreeView {
            nodes: &self.nodes,
            packs: &self.pack_nodes,
            rows: Disjoint::new(&mut self.rows),
            factor: Disjoint::new(&mut self.factor),
            active,
            zero,
        }
    }

    /// Writes the tree joints' impulses into the joint table (their point,
    /// block and rotation entries) and adds their magnitudes to the rows'.
    pub fn write_impulses(&self, joints: &mut Joints) {
        for (n, r) in self.nodes.iter().zip(&self.rows) {
            if !n.joint {
                continue;
            }
            let j = joints.active[n.id as usize] as usize;
            let d = joints.data[j];
            let stored = &mut joints.impulses[j];
            let mut k = 0;
            let (mut linear, mut angular) = (0.0f32, 0.0f32);
            if r.point {
                stored[0..3].copy_from_slice(&r.lambda[0..3]);
                linear += r.lambda[0..3].iter().map(|x| x * x).sum::<f32>();
                k = 3;
            }
            if r.block {
                stored[3..5].copy_from_slice(&r.lambda[k..k + 2]);
                let s = r.lambda[k] * r.lambda[k] + r.lambda[k + 1] * r.lambda[k + 1];
                if d.kind == kind::SLIDER {
                    linear += s;
                } else {
                    angular += s;
                }
                k += 2;
            }
            if r.rotation {
                stored[5..8].copy_from_slice(&r.lambda[k..k + 3]);
                angular += r.lambda[k..k + 3].iter().map(|x| x * x).sum::<f32>();
            }
            let last = &mut joints.last_impulse[j];
            *last = JointImpulse {
                linear: (last.linear * last.linear + linear).sqrt(),
                angular: (last.angular * last.angular + angular).sqrt(),
            };
        }
    }
}

/// What the pack jobs read and write of the trees.
pub(crate) struct TreeView<'a> {
    nodes: &'a [Node],
    packs: &'a [(u32, u32)],
    rows: Disjoint<'a, Rows>,
    factor: Disjoint<'a, Factor>,
    active: &'a [u32],
    zero: u32,
}

fn dot(a: &Vector, b: &Vector) -> f32 {
    let mut s = 0.0;
    for k in 0..DIM {
        s += a[k] * b[k];
    }
    s
}

/// Which equality parts a joint kind has: the point (3 rows), the 2×2
/// block (a slider's perpendicular axes, a hinge's rotation rows) and the
/// rotation (3 rows), in that row order.
fn parts(k: u32) -> (bool, bool, bool) {
    (
        matches!(
            k,
            kind::FIXED | kind::POINT | kind::HINGE | kind::SWING_TWIST
        ),
        matches!(k, kind::HINGE | kind::SLIDER),
        matches!(k, kind::FIXED | kind::SLIDER),
    )
}

/// The joint's geometry at `pose`; its world frames `wa`, `wb` only where
/// `frames` (a kind with block or rotation rows), else left as the
/// identity, unused: a point joint's rows and errors need only the lever
/// arms, and the two quaternion products were a tenth of a chain's
/// position pass. The arms and `u` are [`Geometry::new`]'s, bit for bit.
fn geometry(d: &JointData, pose: &PairPose<f32>, frames: bool) -> Geometry<f32> {
    if frames {
        return Geometry::new(
            v3(d.anchor_a),
            v3(d.anchor_b),
            q4(d.frame_a),
            q4(d.frame_b),
            pose,
        );
    }
    let ra = pose.qa.rotate(v3(d.anchor_a));
    let rb = pose.qb.rotate(v3(d.anchor_b));
    let identity = q4([0.0, 0.0, 0.0, 1.0]);
    Geometry {
        wa: identity,
        wb: identity,
        ra,
        rb,
        u: (pose.xb + rb) - (pose.xa + ra),
    }
}

/// The joint's equality rows at `pose`: their Jacobians (point, 2×2
/// block, rotation, as its kind has them) and lever arms.
fn equality_rows(d: &JointData, pose: &PairPose<f32>, rows: &mut Rows) {
    let (point, block, rot) = parts(d.kind);
    let g = geometry(d, pose, block || rot);
    let mut jac = [NO_ROWS.jac[0]; DIM];
    let mut m = 0;
    if point {
        let e = [
            V3::new(1.0, 0.0, 0.0),
            V3::new(0.0, 1.0, 0.0),
            V3::new(0.0, 0.0, 1.0),
        ];
        for n in e {
            jac[m] = Jacobian {
                n,
                ja: g.ra.cross(n),
                jb: g.rb.cross(n),
            };
            m += 1;
        }
    }
    if block {
        let j = if d.kind == kind::SLIDER {
            dual_axis::jacobians(g.ra, g.rb, g.u, g.wa.axis_y(), g.wa.axis_z())
        } else {
            hinge_rotation::jacobians(g.wa.axis_x(), g.wb.axis_y(), g.wb.axis_z())
        };
        jac[m..m + 2].copy_from_slice(&j);
        m += 2;
    }
    if rot {
        for k in 0..3 {
            let mut axis = [0.0; 3];
            axis[k] = 1.0;
            let axis = v3(axis);
            jac[m] = Jacobian {
                n: V3::zero(),
                ja: axis,
                jb: axis,
            };
            m += 1;
        }
    }
    rows.jac = jac;
    rows.lever = [g.ra, g.rb];
    rows.m = m;
    rows.point = point;
    rows.block = block;
    rows.rotation = rot;
}

/// The position errors of a joint's equality rows at `pose`, in the order
/// of [`equality_rows`] (a position pass keeps the factorization's
/// Jacobians and needs only these).
fn errors(d: &JointData, pose: &PairPose<f32>) -> Vector {
    let (point, block, rot) = parts(d.kind);
    let g = geometry(d, pose, block || rot);
    let mut err = [0.0; DIM];
    let mut m = 0;
    if point {
        err[0..3].copy_from_slice(&[g.u.x, g.u.y, g.u.z]);
        m = 3;
    }
    if block {
        let e = if d.kind == kind::SLIDER {
            [g.u.dot(g.wa.axis_y()), g.u.dot(g.wa.axis_z())]
        } else {
            hinge_rotation::errors(g.wa.axis_x(), g.wb.axis_y(), g.wb.axis_z())
        };
        err[m..m + 2].copy_from_slice(&e);
        m += 2;
    }
    if rot {
        let e = rotation::error(g.wa, g.wb);
        err[m..m + 3].copy_from_slice(&[e.x, e.y, e.z]);
    }
    err
}

/// Sets up and factors one pack's nodes, with the bodies' poses from
/// `pose_of` (the step's start for the velocity solve, the current ones
/// for a position iteration); `warm` loads the joints' accumulated
/// impulses (setup only: a position iteration keeps them).
#[allow(clippy::too_many_arguments)]
fn factor_pack(
    nodes: &[Node],
    rows: &mut [Rows],
    factor: &mut [Factor],
    bodies: &Bodies,
    joints: &Joints,
    active: &[u32],
    zero: u32,
    pose_of: impl Fn(u32) -> (V3<f32>, Q4<f32>),
    warm: bool,
    dt: f32,
) {
    let side = |b: u32| -> (u32, bool, V3<f32>, Q4<f32>) {
        if b == WORLD {
            return (zero, false, V3::zero(), q4([0.0, 0.0, 0.0, 1.0]));
        }
        let i = b as usize;
        let (x, q) = pose_of(b);
        let slot = if bodies.motion(i) == MotionType::Static {
            zero
        } else {
            b
        };
        (slot, bodies.motion(i) == MotionType::Dynamic, x, q)
    };
    // the diagonal blocks: M for bodies, 0 for joints (plus what the
    // children subtract below)
    for (n, (r, f)) in nodes.iter().zip(rows.iter_mut().zip(factor.iter_mut())) {
        f.pivot = ZERO;
        if n.joint {
            let j = active[n.id as usize] as usize;
            let d = &joints.data[j];
            let (sa, da, xa, qa) = side(d.body_a);
            let (sb, db, xb, qb) = side(d.body_b);
            let pose = PairPose { xa, qa, xb, qb };
            equality_rows(d, &pose, r);
            r.slot = [sa, sb];
            r.dynamic = [da, db];
            if !warm {
                continue;
            }
            let stored = &joints.impulses[j];
            r.lambda = [0.0; DIM];
            let p = &stored[0..3];
            r.tension = if r.point {
                (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt()
            } else {
                0.0
            };
            debug_assert!(stored.len() == JOINT_IMPULSES);
        } else {
            let i = n.id as usize;
            let m = 1.0 / bodies.inv_mass[i];
            let inertia = inertia(bodies, i);
            for a in 0..3 {
                f.pivot[a][a] = m;
                for b in 0..3 {
                    f.pivot[3 + a][3 + b] = inertia[a][b];
                }
            }
        }
    }
    // Geometric stiffness (Andrews et al. 2017): a joint pulling with force
    // f at lever arm r stiffens its body's rotation by [f]×[r]×, which the
    // linearized rows do not see; under high tension a light link's
    // transverse mode outruns the step (a 10 kg box on 0.1 kg links: ~140
    // rad/s, twice what dt = 1/60 s integrates stably) and the chain flies
    // apart. Its diagonal bound h² |f| |r| = h |λ| |r| (λ: the last step's
    // impulse) is added to the body's inertia in the trees' solves, which
    // damps that mode and leaves slow motion as it was.
    for k in 0..nodes.len() {
        let p = nodes[k].parent;
        if p == NONE || nodes[k].joint == nodes[p as usize].joint {
            continue;
        }
        let (j, b) = if nodes[k].joint {
            (k, p as usize)
        } else {
            (p as usize, k)
        };
        let r = &rows[j];
        let s = if r.slot[0] == nodes[b].id && r.dynamic[0] {
            0
        } else {
            1
        };
        let extra = dt * r.tension * r.lever[s].length_squared().sqrt();
        for a in 3..6 {
            factor[b].pivot[a][a] += extra;
        }
    }
    // elimination, leaves to root: `pivot` holds D until it is factored
    for k in 0..nodes.len() {
        let n = nodes[k];
        let dim = if n.joint { rows[k].m } else { 6 };
        let f = &mut factor[k];
        // a joint's D is negative definite: factor −D (regularized); a
        // body's block is its mass plus what its joints add: exact unless
        // rounding makes it indefinite
        if n.joint {
            for row in &mut f.pivot {
                for x in row {
                    *x = -*x;
                }
            }
        }
        let scale = (0..dim).map(|i| f.pivot[i][i]).sum::<f32>() / dim.max(1) as f32;
        let first = if n.joint { REGULARIZATION } else { 0.0 };
        let mut rp = ZERO_ROW;
        regularized_cholesky(&mut f.pivot, &mut rp, dim, scale, first);
        f.dim = dim;
        let inv = inverse(&f.pivot, &rp, dim, if n.joint { -1.0 } else { 1.0 });
        if n.parent == NONE {
            f.pivot = inv;
            continue;
        }
        let p = n.parent as usize;
        // H_{k,p}: a joint under its body: the joint's rows for that body;
        // a body under its joint: their transpose
        let mut h = ZERO;
        let (joint_node, body_node) = if n.joint { (k, p) } else { (p, k) };
        let r = &rows[joint_node];
        let body = nodes[body_node].id;
        let s = if r.slot[0] == body && r.dynamic[0] {
            0
        } else {
            1
        };
        for row in 0..r.m {
            let j = side_row(&r.jac[row], s);
            for c in 0..6 {
                if n.joint {
                    h[row][c] = j[c];
                } else {
                    h[c][row] = j[c];
                }
            }
        }
        let pdim = if nodes[p].joint { rows[p].m } else { 6 };
        // W = C⁻¹ H and C⁻ᵀ W = (±D)⁻¹ H; the parent's pivot loses
        // Hᵀ D⁻¹ H = ±Wᵀ W
        let f = &mut factor[k];
        let (w, mut l) = solve_rows(&f.pivot, &rp, &h, dim);
        f.pivot = inv;
        if n.joint {
            for row in &mut l {
                for x in row {
                    *x = -*x;
                }
            }
        }
        f.l = l;
        let sign = if n.joint { 1.0 } else { -1.0 };
        add_gram(&mut factor[p].pivot, &w, dim, pdim, sign);
    }
}

/// The inertia tensor (world) of body `i`, `R diag(1/inv) Rᵀ` from its
/// local inverse inertia and rotation (exactly symmetric; inverting the
/// world inverse inertia cost a Cholesky factor and two solves per body
/// per factorization). Zero where an axis has no finite inertia to invert
/// (a zero or invalid inverse inertia), as the singular inverse gave.
fn inertia(bodies: &Bodies, i: usize) -> [[f32; 3]; 3] {
    let inv = bodies.inv_inertia_local[i];
    if !inv.iter().all(|&x| x.is_finite() && x > 0.0) {
        return [[0.0; 3]; 3];
    }
    let d = inv.map(|x| 1.0 / x);
    let r = crate::math::Mat3::from_quat(bodies.rot(i));
    let (c0, c1, c2) = (r.x_axis, r.y_axis, r.z_axis);
    // row `a` of R is (c0[a], c1[a], c2[a])
    let row = |a: usize| [c0[a], c1[a], c2[a]];
    let mut t = [[0.0; 3]; 3];
    for a in 0..3 {
        let ra = row(a);
        for b in a..3 {
            let rb = row(b);
            let v = ra[0] * d[0] * rb[0] + ra[1] * d[1] * rb[1] + ra[2] * d[2] * rb[2];
            t[a][b] = v;
            t[b][a] = v;
        }
    }
    t
}

/// Solves `H x = y` in place (`factor[k].y` in, `factor[k].x` out) with
/// the factorization: forward (leaves to root) `z_k = D_k⁻¹ y_k` (the
/// explicit inverse, row by row) and `y_p −= L_kᵀ y_k`, then
/// backward (root to leaves) `x_k = z_k − L_k x_p`.
fn substitute(nodes: &[Node], factor: &mut [Factor]) {
    for k in 0..nodes.len() {
        let f = &factor[k];
        let dim = f.dim;
        factor[k].x = mul_tvec(&f.pivot, &f.y, dim);
        if nodes[k].parent != NONE {
            let up = mul_tvec(&factor[k].l, &factor[k].y, dim);
            let y = &mut factor[nodes[k].parent as usize].y;
            for (y, u) in y.iter_mut().zip(up) {
                *y -= u;
            }
        }
    }
    for k in (0..nodes.len()).rev() {
        if nodes[k].parent != NONE {
            let p = nodes[k].parent as usize;
            let (dim, pdim) = (factor[k].dim, factor[p].dim);
            let lx = mul_vec(&factor[k].l, &factor[p].x, dim, pdim);
            for (x, d) in factor[k].x.iter_mut().zip(lx).take(dim) {
                *x -= d;
            }
        }
    }
}

/// Factors a (symmetric, positive definite in exact arithmetic) pivot in
/// place ([`dense::cholesky`]), with `first` of its mean diagonal `scale`
/// added to the diagonal; where rounding leaves it indefinite (a
/// near-singular block: rows that depend on each other, a body of extreme
/// mass ratio), with [`REGULARIZATION`] and then 1000 times that, and at
/// worst a zero factor, whose solves give no correction at all rather
/// than a NaN.
fn regularized_cholesky(a: &mut Mat, rp: &mut Row, dim: usize, scale: f32, first: f32) {
    if !(scale.is_finite() && scale > 0.0) {
        *a = ZERO;
        *rp = ZERO_ROW;
        return;
    }
    // the block as it came, for a retry (the factor overwrites it)
    let orig = *a;
    for (t, factor) in [first, REGULARIZATION, 1000.0 * REGULARIZATION]
        .into_iter()
        .enumerate()
    {
        if t > 0 {
            *a = orig;
        }
        for (i, row) in a.iter_mut().enumerate().take(dim) {
            row[i] += factor * scale;
        }
        if cholesky(a, rp, dim) {
            return;
        }
    }
    *a = ZERO;
    *rp = ZERO_ROW;
}
