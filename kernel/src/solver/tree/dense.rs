//! The tree solver's blocks: dense 6×6 `f32` matrices (row major) and
//! 6-vectors, of which a node of dimension `n` uses the top-left `n × n`
//! (a body is 6: linear and angular velocity; a joint 1–6: its equality
//! rows). Unused entries stay zero, so the full 6×6 products need no
//! special cases. Plain `f32` operations in a fixed order, nothing fused:
//! every build gives the same bits.

// Matrix code indexes as the formulas do (several arrays by one index).
#![allow(clippy::needless_range_loop)]

/// Largest node dimension.
pub(crate) const DIM: usize = 6;

pub(crate) type Mat = [[f32; DIM]; DIM];
pub(crate) type Vector = [f32; DIM];

pub(crate) const ZERO: Mat = [[0.0; DIM]; DIM];

/// Calls `$f::<N>(args)` with `N` the run-time dimension `$n` (1 to
/// [`DIM`]): each kernel's innermost loop runs to a constant, so it is
/// unrolled and its indices need no bounds checks (the tree solver's hot
/// spots; a chain's step spent a third of its time in the 6×6 inverse with
/// run-time bounds). The arithmetic, and its order, is the run-time loops'.
macro_rules! with_dim {
    ($n:expr, $f:ident($($arg:expr),*)) => {
        match $n {
            0 => $f::<0>($($arg),*),
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            4 => $f::<4>($($arg),*),
            5 => $f::<5>($($arg),*),
            _ => $f::<6>($($arg),*),
        }
    };
}

/// `a b` for `a` of `n × k` and `b` of `k × m` (the rest zero).
#[inline]
pub(crate) fn mul(a: &Mat, b: &Mat, n: usize, k: usize, m: usize) -> Mat {
    debug_assert!(n <= DIM && k <= DIM && m <= DIM);
    with_dim!(k, mul_k(a, b, n.min(DIM), m.min(DIM)))
}

fn mul_k<const K: usize>(a: &Mat, b: &Mat, n: usize, m: usize) -> Mat {
    let mut r = ZERO;
    for i in 0..n {
        for j in 0..m {
            let mut s = 0.0;
            for x in 0..K {
                s += a[i][x] * b[x][j];
            }
            r[i][j] = s;
        }
    }
    r
}

/// `aᵀ b` for `a` of `k × n` and `b` of `k × m`, subtracted from `into`.
#[inline]
pub(crate) fn sub_mul_tn(into: &mut Mat, a: &Mat, b: &Mat, k: usize, n: usize, m: usize) {
    debug_assert!(n <= DIM && k <= DIM && m <= DIM);
    with_dim!(k, sub_mul_tn_k(into, a, b, n.min(DIM), m.min(DIM)))
}

fn sub_mul_tn_k<const K: usize>(into: &mut Mat, a: &Mat, b: &Mat, n: usize, m: usize) {
    for i in 0..n {
        for j in 0..m {
            let mut s = 0.0;
            for x in 0..K {
                s += a[x][i] * b[x][j];
            }
            into[i][j] -= s;
        }
    }
}

/// `a v` for `a` of `n × k`.
#[inline]
pub(crate) fn mul_vec(a: &Mat, v: &Vector, n: usize, k: usize) -> Vector {
    debug_assert!(n <= DIM && k <= DIM);
    with_dim!(k, mul_vec_k(a, v, n.min(DIM)))
}

fn mul_vec_k<const K: usize>(a: &Mat, v: &Vector, n: usize) -> Vector {
    let mut r = [0.0; DIM];
    for i in 0..n {
        let mut s = 0.0;
        for x in 0..K {
            s += a[i][x] * v[x];
        }
        r[i] = s;
    }
    r
}

/// `aᵀ v` for `a` of `k × n`.
#[inline]
pub(crate) fn mul_tvec(a: &Mat, v: &Vector, k: usize, n: usize) -> Vector {
    debug_assert!(n <= DIM && k <= DIM);
    with_dim!(n, mul_tvec_n(a, v, k.min(DIM)))
}

fn mul_tvec_n<const N: usize>(a: &Mat, v: &Vector, k: usize) -> Vector {
    let mut r = [0.0; DIM];
    for x in 0..k {
        for i in 0..N {
            r[i] += a[x][i] * v[x];
        }
    }
    r
}

/// The inverse of the symmetric positive definite top-left `n × n` of `a`
/// (Cholesky, then the inverse from the factor), zero elsewhere; `None`
/// if a pivot is not positive (`a` not definite to `f32` precision).
pub(crate) fn inverse_spd(a: &Mat, n: usize) -> Option<Mat> {
    debug_assert!(n <= DIM);
    with_dim!(n, inverse_spd_n(a))
}

fn inverse_spd_n<const N: usize>(a: &Mat) -> Option<Mat> {
    // a = L Lᵀ
    let mut l = ZERO;
    for j in 0..N {
        let mut d = a[j][j];
        for k in 0..j {
            d -= l[j][k] * l[j][k];
        }
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        let d = d.sqrt();
        l[j][j] = d;
        for i in j + 1..N {
            let mut s = a[i][j];
            for k in 0..j {
                s -= l[i][k] * l[j][k];
            }
            l[i][j] = s / d;
        }
    }
    // L⁻¹ by forward substitution, then a⁻¹ = L⁻ᵀ L⁻¹
    let mut li = ZERO;
    for c in 0..N {
        for i in c..N {
            let mut s = if i == c { 1.0 } else { 0.0 };
            for k in c..i {
                s -= l[i][k] * li[k][c];
            }
            li[i][c] = s / l[i][i];
        }
    }
    let mut inv = ZERO;
    for i in 0..N {
        for j in 0..N {
            let mut s = 0.0;
            for k in i.max(j)..N {
                s += li[k][i] * li[k][j];
            }
            inv[i][j] = s;
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::TestRng;

    #[test]
    fn inverse_spd_inverts() {
        let mut r = TestRng(99);
        for n in 1..=DIM {
            for _ in 0..200 {
                // a = bᵀ b + small diagonal: symmetric positive definite
                let mut b = ZERO;
                for row in b.iter_mut().take(n) {
                    for x in row.iter_mut().take(n) {
                        *x = r.f(-1.0, 1.0);
                    }
                }
                let mut a = ZERO;
                sub_mul_tn(&mut a, &b, &b, n, n, n);
                for row in a.iter_mut() {
                    for x in row.iter_mut() {
                        *x = -*x;
                    }
                }
                for (i, row) in a.iter_mut().enumerate().take(n) {
                    row[i] += 0.1;
                }
                let inv = inverse_spd(&a, n).expect("definite");
                let id = mul(&a, &inv, DIM, DIM, DIM);
                for (i, row) in id.iter().enumerate() {
                    for (j, &x) in row.iter().enumerate() {
                        let want = if i == j && i < n { 1.0 } else { 0.0 };
                        assert!((x - want).abs() < 2e-3, "n {n}: ({i},{j}) = {x}");
                    }
                }
            }
        }
        let mut singular = ZERO;
        singular[0][0] = 1.0;
        assert!(inverse_spd(&singular, 2).is_none());
    }
}
