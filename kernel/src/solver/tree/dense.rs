//! The tree solver's blocks: dense 6×6 `f32` matrices (row major, each row
//! padded to [`LANES`] floats) and vectors of [`LANES`], of which a node of
//! dimension `n` uses the top-left `n × n` (a body is 6: linear and angular
//! velocity; a joint 1–6: its equality rows).
//!
//! The matrix kernels work on whole rows: a row update `a_i −= c · b_k` is
//! eight independent lanes, which the compiler emits as one 256-bit
//! multiply and one subtract (the factorization was latency-bound on
//! scalar loops, one multiply-subtract chain per entry). Padding lanes and
//! entries outside the top-left block may hold anything; no kernel reads
//! them into the block. Plain `f32` operations in a fixed order, nothing
//! fused: a lane computes the same bits whether the compiler vectorizes it
//! or not, so every build gives the same results.

// Matrix code indexes as the formulas do (several arrays by one index).
#![allow(clippy::needless_range_loop)]

/// Largest node dimension.
pub(crate) const DIM: usize = 6;

/// Floats per stored row: [`DIM`] padded to a 256-bit vector.
pub(crate) const LANES: usize = 8;

pub(crate) type Row = [f32; LANES];
pub(crate) type Mat = [Row; DIM];
pub(crate) type Vector = [f32; DIM];

pub(crate) const ZERO: Mat = [[0.0; LANES]; DIM];
pub(crate) const ZERO_ROW: Row = [0.0; LANES];

/// Calls `$f::<N>(args)` with `N` the run-time dimension `$n` (1 to
/// [`DIM`]): each kernel's loops run to constants, so they are unrolled
/// and their indices need no bounds checks (the tree solver's hot spots).
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

/// `row −= c · x`, lane by lane.
#[inline(always)]
fn sub_scaled(row: &mut Row, c: f32, x: &Row) {
    for l in 0..LANES {
        row[l] -= c * x[l];
    }
}

/// `row *= c`, lane by lane.
#[inline(always)]
fn scale(row: &mut Row, c: f32) {
    for l in 0..LANES {
        row[l] *= c;
    }
}

/// Factors the symmetric positive definite top-left `n × n` of `a` in
/// place, reading its upper triangle: `a = Uᵀ U` (`U = Cᵀ`, `C` the
/// Cholesky factor), row by row (right-looking: row `j` of `U` is row `j`
/// of what is left, scaled, and every later row loses its multiple of
/// it). On return `a` holds `U` strictly above its diagonal (the diagonal
/// and below hold leftovers of the elimination, which no solve reads:
/// clearing them cost a store-forwarding stall per row) and `rp` the
/// reciprocals of `U`'s diagonal, so the solves multiply where they would
/// divide. `false` if a pivot is not
/// positive (`a` not definite to `f32` precision, or not finite: every
/// entry of the block reaches a later pivot, so a NaN or an infinity
/// anywhere shows there).
pub(crate) fn cholesky(a: &mut Mat, rp: &mut Row, n: usize) -> bool {
    debug_assert!(n <= DIM);
    with_dim!(n, cholesky_n(a, rp))
}

fn cholesky_n<const N: usize>(a: &mut Mat, rp: &mut Row) -> bool {
    for j in 0..N {
        let d = a[j][j];
        if d.is_nan() || d <= 0.0 {
            return false;
        }
        let r = 1.0 / d.sqrt();
        rp[j] = r;
        let mut u = a[j];
        scale(&mut u, r);
        a[j] = u;
        for i in j + 1..N {
            let c = u[i];
            sub_scaled(&mut a[i], c, &u);
        }
    }
    true
}

/// `sign · (Uᵀ U)⁻¹ = sign · U⁻¹ U⁻ᵀ` for a factor of [`cholesky`] of
/// dimension `n`, as `sign · Vᵀ V` with `V = U⁻ᵀ` (the identity's forward
/// solve): exactly symmetric, zero outside the block.
pub(crate) fn inverse(u: &Mat, rp: &Row, n: usize, sign: f32) -> Mat {
    debug_assert!(n <= DIM);
    with_dim!(n, inverse_n(u, rp, sign))
}

fn inverse_n<const N: usize>(u: &Mat, rp: &Row, sign: f32) -> Mat {
    let mut id = ZERO;
    for (i, row) in id.iter_mut().enumerate().take(N) {
        row[i] = 1.0;
    }
    let v = forward_rows::<N>(u, rp, &id);
    // `V` is lower triangular (row `x` is zero, exactly `+0`, past lane
    // `x`), so row `i` of `Vᵀ V` sums over rows `x ≥ i` only: 21 row
    // operations of the 36 at N = 6. The terms left out would each subtract
    // a zero from a `+0` start, which changes no bit.
    let mut inv = ZERO;
    for (i, row) in inv.iter_mut().enumerate().take(N) {
        for x in i..N {
            sub_scaled(row, -sign * v[x][i], &v[x]);
        }
    }
    inv
}

/// `W = C⁻¹ h` and `X = C⁻ᵀ C⁻¹ h` for a factor of [`cholesky`] of
/// dimension `n` and `h` of `n` rows: both triangular solves on whole rows
/// (every column of `h` at once).
#[inline]
pub(crate) fn solve_rows(u: &Mat, rp: &Row, h: &Mat, n: usize) -> (Mat, Mat) {
    debug_assert!(n <= DIM);
    with_dim!(n, solve_rows_n(u, rp, h))
}

fn forward_rows<const N: usize>(u: &Mat, rp: &Row, h: &Mat) -> Mat {
    let mut w = ZERO;
    for i in 0..N {
        let mut row = h[i];
        for k in 0..i {
            sub_scaled(&mut row, u[k][i], &w[k]);
        }
        scale(&mut row, rp[i]);
        w[i] = row;
    }
    w
}

fn solve_rows_n<const N: usize>(u: &Mat, rp: &Row, h: &Mat) -> (Mat, Mat) {
    let w = forward_rows::<N>(u, rp, h);
    let mut x = ZERO;
    for i in (0..N).rev() {
        let mut row = w[i];
        for k in i + 1..N {
            sub_scaled(&mut row, u[i][k], &x[k]);
        }
        scale(&mut row, rp[i]);
        x[i] = row;
    }
    (w, x)
}

/// Adds `sign · wᵀ w` (`w` of `k` rows) to the first `n` rows of `into`
/// (every lane; the result is exactly symmetric: entry `(i, j)` adds the
/// same products as `(j, i)`, in the same order).
#[inline]
pub(crate) fn add_gram(into: &mut Mat, w: &Mat, k: usize, n: usize, sign: f32) {
    debug_assert!(n <= DIM && k <= DIM);
    with_dim!(k, add_gram_k(into, w, n.min(DIM), sign))
}

fn add_gram_k<const K: usize>(into: &mut Mat, w: &Mat, n: usize, sign: f32) {
    for (i, row) in into.iter_mut().enumerate().take(n) {
        for x in 0..K {
            sub_scaled(row, -sign * w[x][i], &w[x]);
        }
    }
}

/// `a v` for `a` of `n × k`.
#[inline]
pub(crate) fn mul_vec(a: &Mat, v: &Row, n: usize, k: usize) -> Row {
    debug_assert!(n <= DIM && k <= DIM);
    with_dim!(k, mul_vec_k(a, v, n.min(DIM)))
}

fn mul_vec_k<const K: usize>(a: &Mat, v: &Row, n: usize) -> Row {
    let mut r = ZERO_ROW;
    for i in 0..n {
        let mut s = 0.0;
        for x in 0..K {
            s += a[i][x] * v[x];
        }
        r[i] = s;
    }
    r
}

/// `aᵀ v` for `a` of `k` rows (every lane).
#[inline]
pub(crate) fn mul_tvec(a: &Mat, v: &Row, k: usize) -> Row {
    debug_assert!(k <= DIM);
    with_dim!(k, mul_tvec_k(a, v))
}

fn mul_tvec_k<const K: usize>(a: &Mat, v: &Row) -> Row {
    let mut r = ZERO_ROW;
    for x in 0..K {
        sub_scaled(&mut r, -v[x], &a[x]);
    }
    r
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
    /// the diagonal), zero elsewhere.
    fn spd(r: &mut TestRng, n: usize) -> Mat {
        let mut b = ZERO;
        for row in b.iter_mut().take(n) {
            for x in row.iter_mut().take(n) {
                *x = r.f(-1.0, 1.0);
            }
        }
        let mut a = ZERO;
        add_gram(&mut a, &b, n, n, 1.0);
        for i in 0..n {
            for j in 0..i {
                assert_eq!(a[i][j].to_bits(), a[j][i].to_bits(), "gram symmetric");
            }
            a[i][i] += 0.1;
        }
        a
    }

    fn assert_identity(id: &Mat, n: usize, tol: f32) {
        for (i, row) in id.iter().enumerate() {
            for (j, &x) in row.iter().enumerate().take(DIM) {
                let want = if i == j && i < n { 1.0 } else { 0.0 };
                assert!((x - want).abs() < tol, "n {n}: ({i},{j}) = {x}");
            }
        }
    }

    /// `C⁻ᵀ C⁻¹` applied to the identity (the row solves) is the inverse,
    /// and so are the Gram update and the explicit (signed) inverse; only
    /// the upper triangle is read, and padding lanes do not leak into the
    /// block.
    #[test]
    fn cholesky_solves_invert() {
        let mut r = TestRng(7);
        for n in 1..=DIM {
            for _ in 0..200 {
                let a = spd(&mut r, n);
                let mut upper = a;
                for i in 0..DIM {
                    for j in 0..LANES {
                        if j < i || j >= n || i >= n {
                            upper[i][j] = f32::NAN;
                        }
                    }
                }
                let mut rp = ZERO_ROW;
                assert!(cholesky(&mut upper, &mut rp, n), "definite");
                let mut id = ZERO;
                for (i, row) in id.iter_mut().enumerate().take(n) {
                    row[i] = 1.0;
                }
                let (w, inv) = solve_rows(&upper, &rp, &id, n);
                let mut inv_block = ZERO;
                for i in 0..n {
                    inv_block[i][..n].copy_from_slice(&inv[i][..n]);
                }
                assert_identity(&mul(&a, &inv_block), n, 2e-3);
                // wᵀ w = C⁻ᵀ C⁻¹ too: the Gram update gives the inverse
                let mut gram = ZERO;
                add_gram(&mut gram, &w, n, n, 1.0);
                for i in 0..n {
                    for j in 0..n {
                        assert!((gram[i][j] - inv[i][j]).abs() < 1e-3 * inv[i][i].abs().max(1.0));
                    }
                }
                let explicit = inverse(&upper, &rp, n, -1.0);
                for i in 0..n {
                    for j in 0..n {
                        let want = -inv[i][j];
                        let tol = 1e-3 * want.abs().max(1.0);
                        assert!((explicit[i][j] - want).abs() < tol, "n {n}");
                        assert_eq!(explicit[i][j].to_bits(), explicit[j][i].to_bits());
                    }
                }
            }
        }
        let mut rp = ZERO_ROW;
        let mut indefinite = ZERO;
        indefinite[0][0] = 1.0;
        indefinite[1][1] = -1.0;
        assert!(!cholesky(&mut indefinite, &mut rp, 2));
        let mut nan = [[f32::NAN; LANES]; DIM];
        assert!(!cholesky(&mut nan, &mut rp, 1));
        let mut inf = ZERO;
        inf[0][0] = 1.0;
        inf[0][1] = f32::INFINITY;
        inf[1][1] = 1.0;
        assert!(!cholesky(&mut inf, &mut rp, 2), "an infinite entry");
    }

    /// `aᵀ v` and `a v` by rows against the plain sums.
    #[test]
    fn products_match_sums() {
        let mut r = TestRng(3);
        let mut a = ZERO;
        for row in a.iter_mut() {
            for x in row.iter_mut().take(DIM) {
                *x = r.f(-1.0, 1.0);
            }
        }
        let v: Row = core::array::from_fn(|i| if i < DIM { r.f(-1.0, 1.0) } else { 0.0 });
        let (t, m) = (mul_tvec(&a, &v, DIM), mul_vec(&a, &v, DIM, DIM));
        for i in 0..DIM {
            let want_t: f32 = (0..DIM).map(|x| a[x][i] * v[x]).sum();
            let want_m: f32 = (0..DIM).map(|x| a[i][x] * v[x]).sum();
            assert!((t[i] - want_t).abs() < 1e-5 && (m[i] - want_m).abs() < 1e-5);
        }
    }
}
