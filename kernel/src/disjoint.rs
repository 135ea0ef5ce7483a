//! `Disjoint`: a slice that several workers read and write at the same time,
//! each at indices no other worker touches.
//!
//! The solver needs this because its jobs claim batches of constraints
//! dynamically (an atomic counter, not a static partition), so the borrow
//! checker cannot see which worker owns which body. Ownership comes from the
//! schedule instead: two constraints of one split share no dynamic body
//! (the splitter's invariant, unit-tested in `splitter.rs`), two islands
//! share no dynamic body (by construction), and a barrier (release/acquire
//! counter) separates consecutive splits. Static and kinematic bodies are
//! only ever read.
//!
//! The safe alternative, one `par_chunks_mut` fork-join per split and
//! iteration, needs the constraints of each split contiguous and a full
//! rayon join at each of the ~170 barriers of a pyramid step; the atomic
//! claim loop in `jobs.rs` lets idle workers take small islands instead.

use archipelago_layout::Vec3Column;
use std::marker::PhantomData;

pub(crate) struct Disjoint<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: a `Disjoint` is an exclusive borrow of the slice handed out to
// several threads; `T: Send` lets values move between them. Every access
// goes through the `unsafe` methods below, whose callers promise that no two
// threads touch the same index without a happens-before edge between them.
unsafe impl<T: Send> Sync for Disjoint<'_, T> {}
unsafe impl<T: Send> Send for Disjoint<'_, T> {}

impl<'a, T> Disjoint<'a, T> {
    pub fn new(slice: &'a mut [T]) -> Self {
        Self {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _borrow: PhantomData,
        }
    }

    /// The first element, for SIMD gathers and scatters (which must stay
    /// below [`len`](Self::len) and keep the `get`/`set` contracts).
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The elements `start..end` as an exclusive slice.
    ///
    /// # Safety
    /// No other thread touches any of `start..end` while the slice lives.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice_mut(&self, start: usize, end: usize) -> &mut [T] {
        assert!(start <= end && end <= self.len);
        // SAFETY: in bounds (checked); exclusive for the slice's life (caller).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), end - start) }
    }
}

impl<T: Copy> Disjoint<'_, T> {
    /// Writes element `i`.
    ///
    /// # Safety
    /// No other thread reads or writes `i` concurrently.
    #[inline(always)]
    pub unsafe fn set(&self, i: usize, value: T) {
        assert!(i < self.len);
        // SAFETY: in bounds (checked); exclusive access to `i` (caller).
        unsafe { *self.ptr.add(i) = value }
    }
}

/// A [`Vec3Column`] written by several workers at once, each at its own
/// slots (per-body write-backs over the active list: active slots are
/// distinct).
pub(crate) struct Vec3Disjoint<'a> {
    x: Disjoint<'a, f32>,
    y: Disjoint<'a, f32>,
    z: Disjoint<'a, f32>,
}

impl<'a> Vec3Disjoint<'a> {
    pub fn new(column: &'a mut Vec3Column) -> Self {
        let (x, y, z) = column.slices_mut();
        Self {
            x: Disjoint::new(x),
            y: Disjoint::new(y),
            z: Disjoint::new(z),
        }
    }

    /// Writes slot `i`.
    ///
    /// # Safety
    /// No other thread reads or writes slot `i` concurrently.
    #[inline(always)]
    pub unsafe fn set(&self, i: usize, v: [f32; 3]) {
        // SAFETY: exclusive access to slot `i` (caller).
        unsafe {
            self.x.set(i, v[0]);
            self.y.set(i, v[1]);
            self.z.set(i, v[2]);
        }
    }

    /// Slots `start..end` of the three components as exclusive slices.
    ///
    /// # Safety
    /// No other thread touches any of `start..end` while the slices live.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slices_mut(&self, start: usize, end: usize) -> [&mut [f32]; 3] {
        // SAFETY: exclusive for the slices' life (caller).
        unsafe {
            [
                self.x.slice_mut(start, end),
                self.y.slice_mut(start, end),
                self.z.slice_mut(start, end),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn disjoint_writes_from_many_threads_land() {
        let mut v = vec![0u64; 10_000];
        {
            let d = Disjoint::new(&mut v);
            (0..10_000usize).into_par_iter().for_each(|i| {
                // SAFETY: each index is written by exactly one iteration.
                unsafe { d.set(i, i as u64 * 3) };
            });
        }
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
    }

    #[test]
    #[should_panic]
    fn out_of_bounds_is_caught() {
        let mut v = vec![0u8; 4];
        let d = Disjoint::new(&mut v);
        // SAFETY: single-threaded; the bounds check panics before any access.
        unsafe { d.set(4, 1) };
    }
}
