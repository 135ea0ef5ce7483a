use crate::F32s;
use crate::{load, LANES};

/// One axis-aligned box, as min and max corners.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AabbRef {
    pub min: [f32; 3],
    pub max: [f32; 3],
}

/// Boxes stored as six `f32` columns (min x/y/z, max x/y/z), padded so that a
/// lane load never runs past the end. Padding boxes are empty (min = +inf,
/// max = -inf) and overlap nothing.
#[derive(Clone, Copy)]
pub struct AabbLanes<'a> {
    pub min_x: &'a [f32],
    pub min_y: &'a [f32],
    pub min_z: &'a [f32],
    pub max_x: &'a [f32],
    pub max_y: &'a [f32],
    pub max_z: &'a [f32],
}

/// Bit `k` is set when `one` overlaps box `start + k` (k in 0..LANES). Touching
/// boxes (shared face) count as overlapping, like PhysX's `intersects`.
#[inline]
pub fn overlap_mask(one: &AabbRef, lanes: &AabbLanes, start: usize) -> u32 {
    let ok = load(lanes.min_x, start).simd_le(F32s::splat(one.max[0]))
        & load(lanes.max_x, start).simd_ge(F32s::splat(one.min[0]))
        & load(lanes.min_y, start).simd_le(F32s::splat(one.max[1]))
        & load(lanes.max_y, start).simd_ge(F32s::splat(one.min[1]))
        & load(lanes.min_z, start).simd_le(F32s::splat(one.max[2]))
        & load(lanes.max_z, start).simd_ge(F32s::splat(one.min[2]));
    ok.to_bitmask()
}

/// Scalar twin of [`overlap_mask`].
pub fn overlap_mask_scalar(one: &AabbRef, lanes: &AabbLanes, start: usize) -> u32 {
    let mut mask = 0;
    for k in 0..LANES {
        let j = start + k;
        let hit = lanes.min_x[j] <= one.max[0]
            && lanes.max_x[j] >= one.min[0]
            && lanes.min_y[j] <= one.max[1]
            && lanes.max_y[j] >= one.min[1]
            && lanes.min_z[j] <= one.max[2]
            && lanes.max_z[j] >= one.min[2];
        mask |= (hit as u32) << k;
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testrng::Rng;

    #[test]
    fn overlap_mask_matches_scalar_on_random_boxes() {
        let mut rng = Rng(3);
        let n = 64;
        for _ in 0..10_000 / LANES {
            // Small world so overlaps are common; some degenerate (zero-thickness)
            // boxes and shared faces are included on purpose.
            let mut cols: Vec<Vec<f32>> = (0..6).map(|_| Vec::with_capacity(n)).collect();
            for _ in 0..n {
                for a in 0..3 {
                    let lo = (rng.range(0.0, 8.0) * 4.0).round() / 4.0;
                    let size = if rng.range(0.0, 1.0) < 0.1 {
                        0.0
                    } else {
                        rng.range(0.0, 3.0)
                    };
                    cols[a].push(lo);
                    cols[3 + a].push(lo + size);
                }
            }
            let lanes = AabbLanes {
                min_x: &cols[0],
                min_y: &cols[1],
                min_z: &cols[2],
                max_x: &cols[3],
                max_y: &cols[4],
                max_z: &cols[5],
            };
            let lo = [
                rng.range(0.0, 8.0),
                rng.range(0.0, 8.0),
                rng.range(0.0, 8.0),
            ];
            let one = AabbRef {
                min: lo,
                max: [lo[0] + 1.0, lo[1] + 1.0, lo[2] + 1.0],
            };
            for start in (0..n).step_by(LANES) {
                assert_eq!(
                    overlap_mask(&one, &lanes, start),
                    overlap_mask_scalar(&one, &lanes, start)
                );
            }
        }
    }

    #[test]
    fn empty_padding_box_overlaps_nothing() {
        let inf = [f32::INFINITY; LANES];
        let ninf = [f32::NEG_INFINITY; LANES];
        let lanes = AabbLanes {
            min_x: &inf,
            min_y: &inf,
            min_z: &inf,
            max_x: &ninf,
            max_y: &ninf,
            max_z: &ninf,
        };
        let one = AabbRef {
            min: [-1e30; 3],
            max: [1e30; 3],
        };
        assert_eq!(overlap_mask(&one, &lanes, 0), 0);
        assert_eq!(overlap_mask_scalar(&one, &lanes, 0), 0);
    }
}
