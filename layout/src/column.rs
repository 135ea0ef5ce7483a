use aligned_vec::{AVec, ConstAlign};
use bytemuck::Pod;

/// Column lengths are padded to a multiple of this many elements: the widest
/// SIMD lane we use is 16 × f32 (AVX-512), so a loop over a column in steps of
/// 8 or 16 never needs scalar tail code.
pub const LANE_PAD: usize = 16;

/// Alignment of every column: one cache line, so the first lane of a column
/// never straddles two lines and two columns never share one.
const CACHE_LINE: usize = 64;

/// `n` rounded up to a multiple of [`LANE_PAD`] (at least one full lane).
pub const fn padded_len(n: usize) -> usize {
    let n = if n == 0 { 1 } else { n };
    n.div_ceil(LANE_PAD) * LANE_PAD
}

/// A fixed-capacity column of plain-old-data, 64-byte aligned.
///
/// The column is allocated once, at its padded length, and never grows: the
/// engine's capacities are fixed at creation (like Jolt's `maxBodies`), so a
/// step never reallocates. Slots that hold no live element, and the padding
/// lanes past the logical capacity, hold the `neutral` value given at
/// creation (zero velocity, zero inverse mass, an empty box...), so SIMD loops
/// may run over them and change nothing.
#[derive(Clone)]
pub struct Column<T: Pod> {
    data: AVec<T, ConstAlign<CACHE_LINE>>,
    capacity: usize,
    neutral: T,
}

impl<T: Pod> Column<T> {
    /// A column for `capacity` elements, every slot (and padding lane) set to
    /// `neutral`.
    pub fn new(capacity: usize, neutral: T) -> Self {
        let len = padded_len(capacity);
        let mut data = AVec::with_capacity(CACHE_LINE, len);
        data.resize(len, neutral);
        Self {
            data,
            capacity,
            neutral,
        }
    }

    /// Logical capacity (not counting padding).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Padded length: the number of lanes SIMD loops may read.
    pub fn padded_len(&self) -> usize {
        self.data.len()
    }

    pub fn neutral(&self) -> T {
        self.neutral
    }

    /// Resets slot `i` to the neutral value.
    pub fn clear(&mut self, i: usize) {
        self.data[i] = self.neutral;
    }

    /// All lanes including padding.
    pub fn as_slice(&self) -> &[T] {
        self.data.as_slice()
    }

    /// All lanes including padding. Writers must leave padding lanes neutral.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.data.as_mut_slice()
    }
}

impl<T: Pod> core::ops::Index<usize> for Column<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        &self.data[i]
    }
}

impl<T: Pod> core::ops::IndexMut<usize> for Column<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.data[i]
    }
}

/// Three `f32` columns holding the x, y and z of one vector quantity, so SIMD
/// loops load 8 or 16 x's, then y's, then z's from contiguous memory.
#[derive(Clone)]
pub struct Vec3Column {
    pub x: Column<f32>,
    pub y: Column<f32>,
    pub z: Column<f32>,
}

impl Vec3Column {
    pub fn new(capacity: usize, neutral: [f32; 3]) -> Self {
        Self {
            x: Column::new(capacity, neutral[0]),
            y: Column::new(capacity, neutral[1]),
            z: Column::new(capacity, neutral[2]),
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> [f32; 3] {
        [self.x[i], self.y[i], self.z[i]]
    }

    #[inline]
    pub fn set(&mut self, i: usize, v: [f32; 3]) {
        self.x[i] = v[0];
        self.y[i] = v[1];
        self.z[i] = v[2];
    }

    pub fn clear(&mut self, i: usize) {
        self.x.clear(i);
        self.y.clear(i);
        self.z.clear(i);
    }

    pub fn padded_len(&self) -> usize {
        self.x.padded_len()
    }

    /// Mutable x, y and z slices at once (disjoint borrows for SIMD loops).
    pub fn slices_mut(&mut self) -> (&mut [f32], &mut [f32], &mut [f32]) {
        (
            self.x.as_mut_slice(),
            self.y.as_mut_slice(),
            self.z.as_mut_slice(),
        )
    }

    pub fn slices(&self) -> (&[f32], &[f32], &[f32]) {
        (self.x.as_slice(), self.y.as_slice(), self.z.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_rounds_up_to_whole_lanes() {
        assert_eq!(padded_len(0), 16);
        assert_eq!(padded_len(1), 16);
        assert_eq!(padded_len(16), 16);
        assert_eq!(padded_len(17), 32);
        assert_eq!(padded_len(1240), 1248);
    }

    #[test]
    fn columns_are_cache_line_aligned_and_neutral() {
        for cap in [0usize, 1, 5, 16, 33, 1000] {
            let c = Column::<f32>::new(cap, 7.5);
            assert_eq!(c.as_slice().as_ptr() as usize % 64, 0);
            assert_eq!(c.padded_len() % LANE_PAD, 0);
            assert!(c.padded_len() >= cap.max(1));
            assert!(c.as_slice().iter().all(|&v| v == 7.5));
            assert_eq!(c.capacity(), cap);
        }
    }

    #[test]
    fn clear_restores_neutral() {
        let mut c = Vec3Column::new(3, [0.0, 1.0, 2.0]);
        c.set(1, [5.0, 6.0, 7.0]);
        assert_eq!(c.get(1), [5.0, 6.0, 7.0]);
        c.clear(1);
        assert_eq!(c.get(1), [0.0, 1.0, 2.0]);
    }
}
