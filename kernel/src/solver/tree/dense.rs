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

/// `a b` for `a` of `n × k` and `b` of `k × m` (the rest zero).
#[inline]
pub(crate) fn mul(a: &Mat, b: &Mat, n: usize, k: usize, m: usize) -> Mat {
    let mut r = ZERO;
    for i in 0..n {
        for j in 0..m {
            let mut s = 0.0;
            for x in 0..k {
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
    for i in 0..n {
        for j in 0..m {
            let mut s = 0.0;
            for x in 0..k {
                s += a[x][i] * b[x][j];
            }
            into[i][j] -= s;
        }
    }
}

/// `a v` for `a` of `n × k`.
#[inline]
pub(crate) fn mul_vec(a: &Mat, v: &Vector, n: usize, k: usize) -> Vector {
    let mut r = [0.0; DIM];
    for i in 0..n {
        let mut s = 0.0;
        for x in 0..k {
            s += a[i][x] * v[x];
        }
        r[i] = s;
    }
    r
}

/// `aᵀ v` for `a` of `k × n`.
#[inline]
pub(crate) fn mul_tvec(a: &Mat, v: &Vector, k: usize, n: usize) -> Vector {
    let mut r = [0.0; DIM];
    for x in 0..k {
        for i in 0..n {
            r[i] += a[x][i] * v[x];
        }
    }
    r
}

/// The inverse of the symmetric positive definite top-left `n × n` of `a`
/// (Cholesky, then the inverse from the factor), zero elsewhere; `None`
/// if a pivot is not positive (`a` not definite to `f32` precision).
pub(crate) fn inverse_spd(a: &Mat, n: usize) -> Option<Mat> {
    // a = L Lᵀ
    let mut l = ZERO;
    for j in 0..n {
        let mut d = a[j][j];
        for k in 0..j {
            d -= l[j][k] * l[j][k];
        }
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        let d = d.sqrt();
        l[j][j] = d;
        for i in j + 1..n {
            let mut s = a[i][j];
            for k in 0..j {
                s -= l[i][k] * l[j][k];
            }
            l[i][j] = s / d;
        }
    }
    // L⁻¹ by forward substitution, then a⁻¹ = L⁻ᵀ L⁻¹
    let mut li = ZERO;
    for c in 0..n {
        for i in c..n {
            let mut s = if i == c { 1.0 } else { 0.0 };
            for k in c..i {
                s -= l[i][k] * li[k][c];
            }
            li[i][c] = s / l[i][i];
        }
    }
    let mut inv = ZERO;
    for i in 0..n {
        for j in 0..n {
            let mut s = 0.0;
            for k in i.max(j)..n {
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
