//! Whole-column sweeps: the integrator's `v += g·dt·s` and `p += v·dt·s`
//! over every slot, where the per-slot scale `s` is zero for bodies that must
//! not move (static, removed, padding). Multiplying by an exact zero adds an
//! exact zero, so those slots keep their bits.

use crate::F32s;
use crate::{load, store, LANES};

/// `dst[i] = src[i] * (k * scale[i]) + dst[i]` for every lane.
pub fn add_scaled_columns(dst: &mut [f32], src: &[f32], scale: &[f32], k: f32) {
    debug_assert!(
        dst.len().is_multiple_of(LANES) && src.len() >= dst.len() && scale.len() >= dst.len()
    );
    let kk = F32s::splat(k);
    for i in (0..dst.len()).step_by(LANES) {
        let s = load(scale, i) * kk;
        let v = load(src, i) * s + load(dst, i);
        store(dst, i, v);
    }
}

/// Scalar twin of [`add_scaled_columns`].
pub fn add_scaled_columns_scalar(dst: &mut [f32], src: &[f32], scale: &[f32], k: f32) {
    for i in 0..dst.len() {
        dst[i] += src[i] * (scale[i] * k);
    }
}

/// `dst[i] = k * scale[i] + dst[i]`: a uniform value (gravity·dt) added with a
/// per-slot scale (gravity factor, zero for non-dynamic slots).
pub fn add_scaled_uniform(dst: &mut [f32], scale: &[f32], k: f32) {
    debug_assert!(dst.len().is_multiple_of(LANES) && scale.len() >= dst.len());
    let kk = F32s::splat(k);
    for i in (0..dst.len()).step_by(LANES) {
        let v = load(scale, i) * kk + load(dst, i);
        store(dst, i, v);
    }
}

/// Scalar twin of [`add_scaled_uniform`].
pub fn add_scaled_uniform_scalar(dst: &mut [f32], scale: &[f32], k: f32) {
    for i in 0..dst.len() {
        dst[i] += scale[i] * k;
    }
}

/// Whether every value is finite (not NaN, not infinite). `x * 0` is zero
/// for a finite `x` and NaN otherwise, and a sum with a NaN stays NaN, so
/// one multiply and add per lane and a compare at the end decide a column.
pub fn all_finite(s: &[f32]) -> bool {
    debug_assert!(s.len().is_multiple_of(LANES));
    let zero = F32s::ZERO;
    let mut acc = zero;
    for i in (0..s.len()).step_by(LANES) {
        acc += load(s, i) * zero;
    }
    acc.to_array().iter().all(|&x| x == 0.0)
}

/// Scalar twin of [`all_finite`].
pub fn all_finite_scalar(s: &[f32]) -> bool {
    s.iter().all(|x| x.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testrng::Rng;

    #[test]
    fn column_sweeps_match_scalar_bit_for_bit() {
        let mut rng = Rng(4);
        let n = 10_000 / LANES * LANES + LANES;
        let src: Vec<f32> = (0..n).map(|_| rng.range(-50.0, 50.0)).collect();
        let scale: Vec<f32> = (0..n)
            .map(|i| if i % 7 == 0 { 0.0 } else { rng.range(0.0, 2.0) })
            .collect();
        let base: Vec<f32> = (0..n).map(|_| rng.range(-1e3, 1e3)).collect();
        let k = 1.0 / 60.0;

        let (mut a, mut b) = (base.clone(), base.clone());
        add_scaled_columns(&mut a, &src, &scale, k);
        add_scaled_columns_scalar(&mut b, &src, &scale, k);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        // zero scale leaves the slot's bits untouched
        for i in (0..n).step_by(7) {
            assert_eq!(a[i].to_bits(), base[i].to_bits());
        }

        let (mut a, mut b) = (base.clone(), base.clone());
        add_scaled_uniform(&mut a, &scale, -9.81 * k);
        add_scaled_uniform_scalar(&mut b, &scale, -9.81 * k);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    }

    #[test]
    fn all_finite_finds_any_non_finite_value() {
        let mut rng = Rng(9);
        let n = 40 * LANES;
        let mut v: Vec<f32> = (0..n).map(|_| rng.range(-1e38, 1e38)).collect();
        v[3] = -0.0;
        v[5] = f32::MAX;
        v[7] = -f32::MAX;
        v[6] = f32::MIN_POSITIVE / 4.0;
        assert!(all_finite(&v) && all_finite_scalar(&v));
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            for at in [0, 17, n - 1] {
                let mut w = v.clone();
                w[at] = bad;
                assert!(!all_finite(&w) && !all_finite_scalar(&w), "{bad} at {at}");
            }
        }
    }
}
