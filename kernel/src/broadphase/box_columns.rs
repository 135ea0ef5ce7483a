//! Boxes copied, in a sorted order, into structure-of-arrays columns for
//! the SIMD overlap test (`overlap_mask` reads 16 boxes a load). Both the
//! sweep (`sweep.rs`) and each MBP region (`mbp.rs`) keep their sorted
//! boxes this way.

use crate::body::Bodies;
use archipelago_simd::{AabbLanes, AabbRef, LANES};

/// Sorted boxes as six columns, padded with `LANES` empty boxes after the
/// last one so a 16-lane load starting at any box stays in bounds.
#[derive(Default)]
pub(crate) struct BoxColumns {
    pub min: [Vec<f32>; 3],
    pub max: [Vec<f32>; 3],
}

impl BoxColumns {
    /// Room for `boxes` boxes and the padding, so that filling never
    /// allocates.
    pub fn with_capacity(boxes: usize) -> Self {
        let column = || Vec::with_capacity(boxes + LANES);
        Self {
            min: [column(), column(), column()],
            max: [column(), column(), column()],
        }
    }

    pub fn clear(&mut self) {
        for a in 0..3 {
            self.min[a].clear();
            self.max[a].clear();
        }
    }

    /// Appends body `slot`'s box.
    #[inline]
    pub fn push(&mut self, bodies: &Bodies, slot: usize) {
        let (lo, hi) = (bodies.aabb_min.get(slot), bodies.aabb_max.get(slot));
        for a in 0..3 {
            self.min[a].push(lo[a]);
            self.max[a].push(hi[a]);
        }
    }

    /// Appends the padding: inverted boxes (min +inf, max -inf) that
    /// overlap nothing.
    pub fn pad(&mut self) {
        for _ in 0..LANES {
            for a in 0..3 {
                self.min[a].push(f32::INFINITY);
                self.max[a].push(f32::NEG_INFINITY);
            }
        }
    }

    pub fn lanes(&self) -> AabbLanes<'_> {
        AabbLanes {
            min_x: &self.min[0],
            min_y: &self.min[1],
            min_z: &self.min[2],
            max_x: &self.max[0],
            max_y: &self.max[1],
            max_z: &self.max[2],
        }
    }

    #[inline]
    pub fn aabb(&self, i: usize) -> AabbRef {
        AabbRef {
            min: [self.min[0][i], self.min[1][i], self.min[2][i]],
            max: [self.max[0][i], self.max[1][i], self.max[2][i]],
        }
    }
}
