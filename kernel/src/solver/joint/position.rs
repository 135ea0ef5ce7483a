//! A joint bundle's position iterations (after integration), written once
//! over the lane type: each part pushes the poses by a fraction
//! `baumgarte` of its error, measured anew at the current poses (Jolt's
//! `SolvePositionConstraint`): the anchors' gap, the block's and the
//! rotation's misalignment, and a hard limit's violation (row 0, and the
//! swing-twist's twist). Motors and springs only act on velocities.

use super::batch::{JointDef, JointPrestep};
use super::prepare::{row0_limits, Geometry, Kinds};
use crate::solver::parts::axis_row::{self, LimitSide};
use crate::solver::parts::{block2, point, rotation, Masses};
use crate::solver::poses::PairPose;
use archipelago_simd::{Lane, Real};

#[inline(always)]
fn mask<L: Lane>(l: L, row: &[f32; archipelago_simd::LANES]) -> <L::R as Real>::Mask {
    l.load(row).gt(L::R::zero())
}

/// One position iteration of a bundle (or one lane).
// Inlined whole into each stage's loop per instruction set (`dispatch.rs`).
// In the unit-test build, one out-of-line copy per lane type instead, which
// the property tests then share with the step rather than compiling their
// own (those copies were a third of that build; the bits are the same).
#[cfg_attr(not(test), inline(always))]
#[cfg_attr(test, inline(never))]
pub(crate) fn solve_position<L: Lane>(
    l: L,
    def: &JointDef,
    p: &JointPrestep,
    pose: &mut PairPose<L::R>,
    baumgarte: f32,
) {
    let beta = L::R::splat(baumgarte);
    let m = Masses::load(l, &p.masses);

    let on = mask(l, &def.point);
    if L::R::any(on) {
        let (la, lb) = (l.load3(&def.local_a), l.load3(&def.local_b));
        point::solve_position(pose, &m, la, lb, beta, on);
    }

    let dual = mask(l, &def.dual);
    let on = L::R::or(dual, mask(l, &def.hinge));
    if L::R::any(on) {
        let (jac, c) = Geometry::at(l, def, pose).block(dual);
        block2::solve_position(pose, &m, &jac, c, beta, on);
    }

    let on = mask(l, &def.rotation);
    if L::R::any(on) {
        let g = Geometry::at(l, def, pose);
        rotation::solve_position(pose, &m, g.wa, g.wb, beta, on);
    }

    let k = Kinds::load(l, def);
    let hard = L::R::and(mask(l, &def.limit), L::R::not(mask(l, &def.soft_limit)));
    if L::R::any(hard) {
        let (jac, x) = Geometry::at(l, def, pose).rows(&k);
        let (lo, hi) = row0_limits(l, def, &k);
        let error = LimitSide::of(x[0], lo, hi, k.hinge).error();
        axis_row::solve_position(pose, &m, &jac[0], error, beta, hard);
    }

    if L::R::any(k.swing_twist) {
        let (jac, x) = Geometry::at(l, def, pose).rows(&k);
        let (lo, hi) = (l.load(&def.limits[0]), l.load(&def.limits[1]));
        let error = LimitSide::of(x[1], lo, hi, k.swing_twist).error();
        axis_row::solve_position(pose, &m, &jac[1], error, beta, k.swing_twist);
    }
}
