//! The solver's loops over whole bundles, one per stage, as
//! [`BundleKernel`]s: `dispatch.rs` compiles each once per instruction set
//! and runs the one the settings resolve to. The lane-by-lane loops (the
//! non-parallel split, pack overflows, `SolverWidth::Scalar`) stay in
//! `mod.rs`: one lane at a time has nothing to gain from wider registers.

use super::bodies::Velocities;
use super::constraint::{iterate, VelocityConstraint};
use super::contact::batch::{BundleBodies, ContactImpulses, ContactPrestep, PositionPrestep};
use super::contact::position::solve_position;
use super::contact::prepare::{prepare, SetupRows};
use super::dispatch::{BundleKernel, BundleLane};
use super::joint::batch::{JointBodyRows, JointDef, JointImpulses, JointPrestep};
use super::joint::{position as joint_position, prepare as joint_prepare};
use super::poses::Poses;
use crate::disjoint::Disjoint;
use crate::settings::PhysicsSettings;
use std::ops::Range;

/// Warm start (iteration 0) or one velocity iteration of bundles `range`
/// of one type batch (contacts or joints).
pub(crate) struct VelocityBundles<'s, 'v, C: VelocityConstraint> {
    pub range: Range<usize>,
    pub warm: bool,
    pub refs: &'s [BundleBodies],
    pub prestep: &'s [C::Prestep],
    pub impulses: &'s Disjoint<'v, C::Impulses>,
    pub vel: &'s Velocities<'v>,
}

impl<C: VelocityConstraint> BundleKernel for VelocityBundles<'_, '_, C> {
    #[inline(always)]
    fn run<L: BundleLane>(self, l: L) {
        for b in self.range {
            for part in 0..L::PARTS {
                // SAFETY: the bundle and its lanes' dynamic bodies
                // (distinct: one split or colour) are this worker's alone
                // (the caller's schedule).
                unsafe {
                    let imp = &mut self.impulses.slice_mut(b, b + 1)[0];
                    let (r, p) = (&self.refs[b], &self.prestep[b]);
                    iterate::<C, L>(l.part(part), self.warm, r, p, imp, self.vel);
                }
            }
        }
    }
}

/// One position iteration of bundles `range`.
pub(crate) struct PositionBundles<'s, 'v> {
    pub range: Range<usize>,
    pub refs: &'s [BundleBodies],
    pub prestep: &'s [ContactPrestep],
    pub positions: &'s [PositionPrestep],
    pub poses: &'s Poses<'v>,
    pub settings: &'s PhysicsSettings,
}

impl BundleKernel for PositionBundles<'_, '_> {
    #[inline(always)]
    fn run<L: BundleLane>(self, l: L) {
        for b in self.range {
            let (r, p, pp) = (&self.refs[b], &self.prestep[b], &self.positions[b]);
            for part in 0..L::PARTS {
                let l = l.part(part);
                // SAFETY: the bundle's lanes' dynamic bodies (distinct: one
                // split or colour) are this worker's alone (the caller's
                // schedule).
                unsafe {
                    let mut pose = l.gather_poses(self.poses, &r.a, &r.b, &pp.statics);
                    solve_position(l, p, pp, &mut pose, self.settings);
                    l.scatter_poses(self.poses, &r.a, &r.b, &p.inv_mass_a, &p.inv_mass_b, pose);
                }
            }
        }
    }
}

/// One bundle's setup from its gathered rows.
pub(crate) struct PrepareBundle<'s> {
    pub rows: &'s SetupRows,
    pub positions: &'s PositionPrestep,
    pub settings: &'s PhysicsSettings,
    pub dt: f32,
    pub prestep: &'s mut ContactPrestep,
    pub impulses: &'s mut ContactImpulses,
}

impl BundleKernel for PrepareBundle<'_> {
    #[inline(always)]
    fn run<L: BundleLane>(self, l: L) {
        for part in 0..L::PARTS {
            let l = l.part(part);
            prepare(
                l,
                self.rows,
                self.positions,
                self.settings,
                self.dt,
                self.prestep,
                self.impulses,
            );
        }
    }
}

/// One position iteration of joint bundles `range`.
pub(crate) struct JointPositionBundles<'s, 'v> {
    pub range: Range<usize>,
    pub refs: &'s [BundleBodies],
    pub defs: &'s [JointDef],
    pub prestep: &'s [JointPrestep],
    pub poses: &'s Poses<'v>,
    pub baumgarte: f32,
}

impl BundleKernel for JointPositionBundles<'_, '_> {
    #[inline(always)]
    fn run<L: BundleLane>(self, l: L) {
        for b in self.range {
            let (r, def, p) = (&self.refs[b], &self.defs[b], &self.prestep[b]);
            for part in 0..L::PARTS {
                let l = l.part(part);
                // SAFETY: the bundle's lanes' dynamic bodies (distinct: one
                // split or colour) are this worker's alone (the caller's
                // schedule).
                unsafe {
                    let mut pose = l.gather_poses(self.poses, &r.a, &r.b, &def.statics);
                    joint_position::solve_position(l, def, p, &mut pose, self.baumgarte);
                    let m = &p.masses;
                    l.scatter_poses(self.poses, &r.a, &r.b, &m.inv_mass_a, &m.inv_mass_b, pose);
                }
            }
        }
    }
}

/// One joint bundle's setup from its gathered rows.
pub(crate) struct JointPrepareBundle<'s> {
    pub def: &'s JointDef,
    pub rows: &'s JointBodyRows,
    pub dt: f32,
    pub prestep: &'s mut JointPrestep,
    pub impulses: &'s mut JointImpulses,
}

impl BundleKernel for JointPrepareBundle<'_> {
    #[inline(always)]
    fn run<L: BundleLane>(self, l: L) {
        for part in 0..L::PARTS {
            let l = l.part(part);
            joint_prepare::prepare(l, self.def, self.rows, self.dt, self.prestep, self.impulses);
        }
    }
}
