//! The hinge's two angular rows (Jolt's `HingeRotationConstraintPart`,
//! Chappuis §2.4.1): `C = (a_1 · b_2, a_1 · c_2)` with `a_1` the hinge axis
//! on A and `b_2`, `c_2` the two axes of B's frame perpendicular to B's
//! hinge axis; both vanish when the axes are aligned.
//! `dC/dt = (ω_b − ω_a) · (b_2 × a_1, c_2 × a_1)`.

use super::block2::Jacobian;
use archipelago_simd::{Real, V3};

/// The rows' Jacobians.
#[inline(always)]
pub(crate) fn jacobians<R: Real>(a1: V3<R>, b2: V3<R>, c2: V3<R>) -> [Jacobian<R>; 2] {
    [b2, c2].map(|x| {
        let g = x.cross(a1);
        Jacobian {
            n: V3::zero(),
            ja: g,
            jb: g,
        }
    })
}

/// The errors `(a_1 · b_2, a_1 · c_2)`.
#[inline(always)]
pub(crate) fn errors<R: Real>(a1: V3<R>, b2: V3<R>, c2: V3<R>) -> [R; 2] {
    [a1.dot(b2), a1.dot(c2)]
}
