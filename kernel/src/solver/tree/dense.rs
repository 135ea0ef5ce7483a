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

/// The Cholesky factor `C` (lower triangular, `a = C Cᵀ`) of the symmetric
/// positive definite top-left `n × n` of `a`, read from its lower triangle,
/// with the reciprocals of its pivots stored on the diagonal (the solves
/// then multiply where they would divide); `None` if a pivot is not
/// positive (`a` not definite to `f32` precision).
pub(crate) fn cholesky(a: &Mat, n: usize) -> Option<Mat> {
    debug_assert!(n <= DIM);
    with_dim!(n, cholesky_n(a))
}

fn cholesky_n<const N: usize>(a: &Mat) -> Option<Mat> {
    let mut c = ZERO;
    for j in 0..N {
        let mut d = a[j][j];
        for k in 0..j {
            d -= c[j][k] * c[j][k];
        }
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        let r = 1.0 / d.sqrt();
        c[j][j] = r;
        for i in j + 1..N {
            let mut s = a[i][j];
            for k in 0..j {
                s -= c[i][k] * c[j][k];
            }
            c[i][j] = s * r;
        }
    }
    Some(c)
}

/// `C⁻¹ v` for a factor of [`cholesky`] (forward substitution).
#[inline]
pub(crate) fn solve_lower(c: &Mat, v: &Vector, n: usize) -> Vector {
    debug_assert!(n <= DIM);
    with_dim!(n, solve_lower_n(c, v))
}

fn solve_lower_n<const N: usize>(c: &Mat, v: &Vector) -> Vector {
    let mut t = [0.0; DIM];
    for i in 0..N {
        let mut s = v[i];
        for k in 0..i {
            s -= c[i][k] * t[k];
        }
        t[i] = s * c[i][i];
    }
    t
}

/// `C⁻ᵀ v` for a factor of [`cholesky`] (back substitution).
#[inline]
pub(crate) fn solve_upper_t(c: &Mat, v: &Vector, n: usize) -> Vector {
    debug_assert!(n <= DIM);
    with_dim!(n, solve_upper_t_n(c, v))
}

fn solve_upper_t_n<const N: usize>(c: &Mat, v: &Vector) -> Vector {
    let mut z = [0.0; DIM];
    for i in (0..N).rev() {
        let mut s = v[i];
        for k in i + 1..N {
            s -= c[k][i] * z[k];
        }
        z[i] = s * c[i][i];
    }
    z
}

/// `C⁻¹ h` and `C⁻ᵀ C⁻¹ h` for a factor of [`cholesky`] of dimension `n`
/// and `h` of `n × m`: the two triangular solves, column by column.
#[inline]
pub(crate) fn solve_columns(c: &Mat, h: &Mat, n: usize, m: usize) -> (Mat, Mat) {
    debug_assert!(n <= DIM && m <= DIM);
    with_dim!(n, solve_columns_n(c, h, m.min(DIM)))
}

fn solve_columns_n<const N: usize>(c: &Mat, h: &Mat, m: usize) -> (Mat, Mat) {
    let (mut w, mut x) = (ZERO, ZERO);
    for j in 0..m {
        let mut col = [0.0; DIM];
        for i in 0..N {
            col[i] = h[i][j];
        }
        let t = solve_lower_n::<N>(c, &col);
        let z = solve_upper_t_n::<N>(c, &t);
        for i in 0..N {
            w[i][j] = t[i];
            x[i][j] = z[i];
        }
    }
    (w, x)
}

/// Adds `sign · wᵀ w` (`w` of `k × n`) to the lower triangle of `into`
/// (the upper triangle is left as it was: [`cholesky`] reads the lower).
#[inline]
pub(crate) fn add_gram_lower(into: &mut Mat, w: &Mat, k: usize, n: usize, sign: f32) {
    debug_assert!(n <= DIM && k <= DIM);
    with_dim!(k, add_gram_lower_k(into, w, n.min(DIM), sign))
}

fn add_gram_lower_k<const K: usize>(into: &mut Mat, w: &Mat, n: usize, sign: f32) {
    for i in 0..n {
        for j in 0..=i {
            let mut s = 0.0;
            for x in 0..K {
                s += w[x][i] * w[x][j];
            }
            into[i][j] += sign * s;
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

    /// The full 6×6 product (the test's reference).
    fn mul(a: &Mat, b: &Mat) -> Mat {
        let mut r = ZERO;
        for i in 0..DIM {
            for j in 0..DIM {
                for x in 0..DIM {
                    r[i][j] += a[i][x] * b[x][j];
                }
            }
        }
        r
    }

    /// A random symmetric positive definite `n × n` (`bᵀ b` plus 0.1 on
    /// the diagonal, built with `add_gram_lower` and mirrored), zero
    /// elsewhere.
    fn spd(r: &mut TestRng, n: usize) -> Mat {
        let mut b = ZERO;
        for row in b.iter_mut().take(n) {
            for x in row.iter_mut().take(n) {
                *x = r.f(-1.0, 1.0);
            }
        }
        let mut a = ZERO;
        add_gram_lower(&mut a, &b, n, n, 1.0);
        for i in 0..n {
            for j in 0..i {
                a[j][i] = a[i][j];
            }
            a[i][i] += 0.1;
        }
        a
    }

    fn assert_identity(id: &Mat, n: usize, tol: f32) {
        for (i, row) in id.iter().enumerate() {
            for (j, &x) in row.iter().enumerate() {
                let want = if i == j && i < n { 1.0 } else { 0.0 };
                assert!((x - want).abs() < tol, "n {n}: ({i},{j}) = {x}");
            }
        }
    }

    #[test]
    fn inverse_spd_inverts() {
        let mut r = TestRng(99);
        for n in 1..=DIM {
            for _ in 0..200 {
                let a = spd(&mut r, n);
                let inv = inverse_spd(&a, n).expect("definite");
                assert_identity(&mul(&a, &inv), n, 2e-3);
            }
        }
        let mut singular = ZERO;
        singular[0][0] = 1.0;
        assert!(inverse_spd(&singular, 2).is_none());
    }

    /// `C⁻ᵀ C⁻¹` applied column by column (through both the vector and the
    /// matrix solves) is the inverse; only the lower triangle is read.
    #[test]
    fn cholesky_solves_invert() {
        let mut r = TestRng(7);
        for n in 1..=DIM {
            for _ in 0..200 {
                let a = spd(&mut r, n);
                let mut lower = a;
                for i in 0..n {
                    for j in i + 1..n {
                        lower[i][j] = f32::NAN;
                    }
                }
                let c = cholesky(&lower, n).expect("definite");
                let mut id = ZERO;
                for (i, row) in id.iter_mut().enumerate().take(n) {
                    row[i] = 1.0;
                }
                let (w, inv) = solve_columns(&c, &id, n, n);
                assert_identity(&mul(&a, &inv), n, 2e-3);
                // wᵀ w = C⁻ᵀ C⁻¹ too: the Gram update gives the inverse
                let mut gram = ZERO;
                add_gram_lower(&mut gram, &w, n, n, 1.0);
                for i in 0..n {
                    for j in 0..=i {
                        assert!((gram[i][j] - inv[i][j]).abs() < 1e-3 * inv[i][i].abs().max(1.0));
                    }
                    let mut e = [0.0; DIM];
                    e[i] = 1.0;
                    let col = solve_upper_t(&c, &solve_lower(&c, &e, n), n);
                    for j in 0..n {
                        assert_eq!(col[j].to_bits(), inv[j][i].to_bits(), "n {n}");
                    }
                }
            }
        }
        let mut indefinite = ZERO;
        indefinite[0][0] = 1.0;
        indefinite[1][1] = -1.0;
        assert!(cholesky(&indefinite, 2).is_none());
        assert!(cholesky(&[[f32::NAN; DIM]; DIM], 1).is_none());
    }
}
