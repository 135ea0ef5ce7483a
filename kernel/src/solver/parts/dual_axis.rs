//! The slider's two linear rows perpendicular to its axis (Jolt's
//! `DualAxisConstraintPart`): `C_i = u · n_i`, with `u = p_b − p_a` and
//! `n_1`, `n_2` body A's frame axes perpendicular to the slide, so B's
//! anchor stays on A's axis. A's lever arm reaches B's anchor (`r_a + u`),
//! since the axes turn with A.

use super::block2::Jacobian;
use archipelago_simd::{Real, V3};

/// The rows' Jacobians at lever arms `ra`, `rb` with `u = p_b − p_a`.
#[inline(always)]
pub(crate) fn jacobians<R: Real>(
    ra: V3<R>,
    rb: V3<R>,
    u: V3<R>,
    n1: V3<R>,
    n2: V3<R>,
) -> [Jacobian<R>; 2] {
    let ra_u = ra + u;
    [n1, n2].map(|n| Jacobian {
        n,
        ja: ra_u.cross(n),
        jb: rb.cross(n),
    })
}
