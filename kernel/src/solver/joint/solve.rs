//! A joint bundle's velocity iterations, written once over the lane type:
//! iteration 0 applies last step's impulses (warm start), every later one
//! solves each part once. Per joint the order is Jolt's: the motor (or
//! the twist limit) first, then the parts that hold the joint together,
//! the limit last, so the rows solved last hold best.

use super::batch::{JointImpulses, JointPrestep};
use crate::solver::bodies::PairVelocity;
use crate::solver::parts::{axis_row, block2, point, rotation, Masses};
use archipelago_simd::Lane;

/// Applies the accumulated impulses.
// Inlined whole into each stage's loop per instruction set (`dispatch.rs`).
// In the unit-test build, one out-of-line copy per lane type instead, which
// the property tests then share with the step rather than compiling their
// own (those copies were a third of that build; the bits are the same).
#[cfg_attr(not(test), inline(always))]
#[cfg_attr(test, inline(never))]
pub(crate) fn warm_start<L: Lane>(
    l: L,
    p: &JointPrestep,
    imp: &JointImpulses,
    v: &mut PairVelocity<L::R>,
) {
    let m = Masses::load(l, &p.masses);
    axis_row::warm_start(l, &p.rows[1], &m, l.load(&imp.rows[1]), v);
    point::warm_start(l, &p.point, &m, l.load3(&imp.point), v);
    let block = [l.load(&imp.block[0]), l.load(&imp.block[1])];
    block2::warm_start(l, &p.block, &m, block, v);
    rotation::warm_start(l, &p.rotation, &m, l.load3(&imp.rotation), v);
    axis_row::warm_start(l, &p.rows[0], &m, l.load(&imp.rows[0]), v);
}

/// One Gauss–Seidel pass over the bundle's (or one lane's) parts.
// Inlined whole into each stage's loop per instruction set (`dispatch.rs`).
// In the unit-test build, one out-of-line copy per lane type instead, which
// the property tests then share with the step rather than compiling their
// own (those copies were a third of that build; the bits are the same).
#[cfg_attr(not(test), inline(always))]
#[cfg_attr(test, inline(never))]
pub(crate) fn solve<L: Lane>(
    l: L,
    p: &JointPrestep,
    imp: &mut JointImpulses,
    v: &mut PairVelocity<L::R>,
) {
    let m = Masses::load(l, &p.masses);
    let mut motor = l.load(&imp.rows[1]);
    axis_row::solve(l, &p.rows[1], &m, &mut motor, v);
    l.store(&mut imp.rows[1], motor);

    let mut lp = l.load3(&imp.point);
    point::solve(l, &p.point, &m, &mut lp, v);
    l.store3(&mut imp.point, lp);

    let mut block = [l.load(&imp.block[0]), l.load(&imp.block[1])];
    block2::solve(l, &p.block, &m, &mut block, v);
    l.store(&mut imp.block[0], block[0]);
    l.store(&mut imp.block[1], block[1]);

    let mut lr = l.load3(&imp.rotation);
    rotation::solve(l, &p.rotation, &m, &mut lr, v);
    l.store3(&mut imp.rotation, lr);

    let mut limit = l.load(&imp.rows[0]);
    axis_row::solve(l, &p.rows[0], &m, &mut limit, v);
    l.store(&mut imp.rows[0], limit);
}
