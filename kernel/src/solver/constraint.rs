//! What the velocity stage needs of a constraint type: its prestep and
//! impulse columns and its two kernels, each written once over the lane
//! type. The bundle loop (`bundles.rs`), the lane-by-lane loop (`mod.rs`)
//! and the schedule are then written once for contacts and joints alike.

use super::bodies::{BodyLanes, PairVelocity, Velocities};
use super::contact::batch::{BundleBodies, ContactImpulses, ContactPrestep};
use super::joint::batch::{JointImpulses, JointPrestep};
use archipelago_simd::{Lane, LANES};

pub(crate) trait VelocityConstraint {
    type Prestep;
    type Impulses;
    /// Applies last step's impulses (iteration 0).
    fn warm_start<L: Lane>(
        l: L,
        p: &Self::Prestep,
        imp: &Self::Impulses,
        v: &mut PairVelocity<L::R>,
    );
    /// One Gauss–Seidel iteration, accumulating into `imp`.
    fn solve<L: Lane>(
        l: L,
        p: &Self::Prestep,
        imp: &mut Self::Impulses,
        v: &mut PairVelocity<L::R>,
    );
    /// The lanes' inverse masses of sides A and B (0 for static and padding
    /// lanes, whose velocities are not written back).
    fn inv_masses(p: &Self::Prestep) -> (&[f32; LANES], &[f32; LANES]);
}

/// The contact type batch.
pub(crate) struct Contacts;

impl VelocityConstraint for Contacts {
    type Prestep = ContactPrestep;
    type Impulses = ContactImpulses;
    #[inline(always)]
    fn warm_start<L: Lane>(
        l: L,
        p: &ContactPrestep,
        imp: &ContactImpulses,
        v: &mut PairVelocity<L::R>,
    ) {
        super::contact::solve::warm_start(l, p, imp, v);
    }
    #[inline(always)]
    fn solve<L: Lane>(
        l: L,
        p: &ContactPrestep,
        imp: &mut ContactImpulses,
        v: &mut PairVelocity<L::R>,
    ) {
        super::contact::solve::solve(l, p, imp, v);
    }
    #[inline(always)]
    fn inv_masses(p: &ContactPrestep) -> (&[f32; LANES], &[f32; LANES]) {
        (&p.inv_mass_a, &p.inv_mass_b)
    }
}

/// The joint type batch (its Gauss–Seidel rows).
pub(crate) struct Joints;

impl VelocityConstraint for Joints {
    type Prestep = JointPrestep;
    type Impulses = JointImpulses;
    #[inline(always)]
    fn warm_start<L: Lane>(
        l: L,
        p: &JointPrestep,
        imp: &JointImpulses,
        v: &mut PairVelocity<L::R>,
    ) {
        super::joint::solve::warm_start(l, p, imp, v);
    }
    #[inline(always)]
    fn solve<L: Lane>(l: L, p: &JointPrestep, imp: &mut JointImpulses, v: &mut PairVelocity<L::R>) {
        super::joint::solve::solve(l, p, imp, v);
    }
    #[inline(always)]
    fn inv_masses(p: &JointPrestep) -> (&[f32; LANES], &[f32; LANES]) {
        (&p.masses.inv_mass_a, &p.masses.inv_mass_b)
    }
}

/// Warm start (`warm`) or one velocity iteration of one bundle's lanes
/// `l` (all 16, or one): gather the bodies, run the kernel, scatter.
///
/// # Safety
/// The bundle's lanes' dynamic bodies are the caller's alone (one split or
/// colour on one worker: the schedule), and body slots are in bounds.
#[inline(always)]
pub(crate) unsafe fn iterate<C: VelocityConstraint, L: BodyLanes>(
    l: L,
    warm: bool,
    r: &BundleBodies,
    p: &C::Prestep,
    imp: &mut C::Impulses,
    vel: &Velocities,
) {
    // SAFETY: forwarded to the caller.
    let mut v = unsafe { l.gather(vel, &r.a, &r.b) };
    if warm {
        C::warm_start(l, p, imp, &mut v);
    } else {
        C::solve(l, p, imp, &mut v);
    }
    let (ia, ib) = C::inv_masses(p);
    // SAFETY: as above.
    unsafe { l.scatter(vel, &r.a, &r.b, ia, ib, v) };
}
