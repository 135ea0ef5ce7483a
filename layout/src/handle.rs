/// Why a handle was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleError {
    /// The index is past the allocator's capacity (a foreign or forged handle).
    OutOfRange,
    /// The slot was freed (and maybe reused) since the handle was issued.
    Stale,
    /// Every slot is in use.
    Full,
}

/// Fixed-capacity allocator of generational slots.
///
/// A handle is `(index, generation)`. Freeing a slot bumps its generation, so
/// every handle issued before the free is recognised as stale, even after the
/// slot is reused. Free slots are reused lowest-index-first (a sorted free
/// list would cost a heap; a LIFO stack is enough for determinism, since the
/// order depends only on the sequence of API calls, never on timing).
#[derive(Clone)]
pub struct SlotAllocator {
    generation: Vec<u32>,
    live: Vec<bool>,
    free: Vec<u32>,
    high_water: u32,
}

impl SlotAllocator {
    pub fn new(capacity: usize) -> Self {
        Self {
            generation: vec![0; capacity],
            live: vec![false; capacity],
            free: Vec::with_capacity(capacity),
            high_water: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.generation.len()
    }

    /// One past the highest index ever handed out: loops over slots stop here.
    pub fn high_water(&self) -> usize {
        self.high_water as usize
    }

    pub fn live_count(&self) -> usize {
        self.high_water as usize - self.free.len()
    }

    /// Claims a slot, returning `(index, generation)`.
    pub fn alloc(&mut self) -> Result<(u32, u32), HandleError> {
        let index = if let Some(i) = self.free.pop() {
            i
        } else if (self.high_water as usize) < self.generation.len() {
            self.high_water += 1;
            self.high_water - 1
        } else {
            return Err(HandleError::Full);
        };
        self.live[index as usize] = true;
        Ok((index, self.generation[index as usize]))
    }

    /// Checks that `(index, generation)` names a live slot.
    pub fn validate(&self, index: u32, generation: u32) -> Result<(), HandleError> {
        let i = index as usize;
        if i >= self.generation.len() {
            return Err(HandleError::OutOfRange);
        }
        if !self.live[i] || self.generation[i] != generation {
            return Err(HandleError::Stale);
        }
        Ok(())
    }

    /// Frees a live slot; its generation moves on so old handles go stale.
    pub fn free(&mut self, index: u32, generation: u32) -> Result<(), HandleError> {
        self.validate(index, generation)?;
        let i = index as usize;
        self.live[i] = false;
        self.generation[i] = self.generation[i].wrapping_add(1);
        self.free.push(index);
        Ok(())
    }

    /// Current generation of slot `index` (the one a live handle carries).
    pub fn generation(&self, index: usize) -> u32 {
        self.generation[index]
    }

    pub fn is_live(&self, index: usize) -> bool {
        self.live.get(index).copied().unwrap_or(false)
    }

    /// Generations of the slots below the high-water mark (with
    /// [`free_list`](Self::free_list), what [`restore`](Self::restore)
    /// needs to rebuild this allocator).
    pub fn generations(&self) -> &[u32] {
        &self.generation[..self.high_water as usize]
    }

    /// Freed slots, reused last first.
    pub fn free_list(&self) -> &[u32] {
        &self.free
    }

    /// Puts the allocator in the state whose [`generations`](Self::generations)
    /// and [`free_list`](Self::free_list) are given (a snapshot): the high-water
    /// mark is `generations.len()`, and every slot below it not in `free`
    /// is live. Refused, changing nothing: more generations than the
    /// capacity, or a free index at or past the high-water mark, or listed
    /// twice (`OutOfRange`).
    pub fn restore(&mut self, generations: &[u32], free: &[u32]) -> Result<(), HandleError> {
        let high = generations.len();
        if high > self.capacity() {
            return Err(HandleError::OutOfRange);
        }
        let mut is_free = vec![false; high];
        for &f in free {
            let f = f as usize;
            if f >= high || core::mem::replace(&mut is_free[f], true) {
                return Err(HandleError::OutOfRange);
            }
        }
        self.generation[..high].copy_from_slice(generations);
        self.generation[high..].fill(0);
        for (live, free) in self
            .live
            .iter_mut()
            .zip(is_free.iter().chain(core::iter::repeat(&true)))
        {
            *live = !free;
        }
        self.free.clear();
        self.free.extend_from_slice(free);
        self.high_water = high as u32;
        Ok(())
    }
}

/// Declares a typed generational handle (`index + generation`) that cannot be
/// mixed up with another kind of handle.
///
/// ```
/// archipelago_layout::typed_handle!(
///     /// A thing.
///     ThingId
/// );
/// let id = ThingId::new(3, 1);
/// assert_eq!(id.index(), 3);
/// assert_eq!(id.generation(), 1);
/// ```
#[macro_export]
macro_rules! typed_handle {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name {
            index: u32,
            generation: u32,
        }

        impl $name {
            pub const fn new(index: u32, generation: u32) -> Self {
                Self { index, generation }
            }
            /// Slot index (stable for the handle's life).
            pub const fn index(self) -> u32 {
                self.index
            }
            pub const fn generation(self) -> u32 {
                self.generation
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_reproduces_the_allocator() {
        let mut a = SlotAllocator::new(8);
        let ids: Vec<_> = (0..5).map(|_| a.alloc().unwrap()).collect();
        a.free(ids[3].0, ids[3].1).unwrap();
        a.free(ids[1].0, ids[1].1).unwrap();
        let mut b = SlotAllocator::new(8);
        b.alloc().unwrap();
        b.restore(a.generations(), a.free_list()).unwrap();
        assert_eq!(b.live_count(), 3);
        assert_eq!(b.validate(ids[1].0, ids[1].1), Err(HandleError::Stale));
        assert_eq!(b.validate(ids[4].0, ids[4].1), Ok(()));
        for _ in 0..4 {
            assert_eq!(a.alloc(), b.alloc());
        }
        // refused: a free slot past the high-water mark, or twice
        let before = b.generations().to_vec();
        assert_eq!(b.restore(&[0, 0], &[2]), Err(HandleError::OutOfRange));
        assert_eq!(b.restore(&[0, 0], &[1, 1]), Err(HandleError::OutOfRange));
        assert_eq!(b.restore(&[0; 9], &[]), Err(HandleError::OutOfRange));
        assert_eq!(b.generations(), &before[..]);
    }

    #[test]
    fn stale_handles_are_refused_after_reuse() {
        let mut a = SlotAllocator::new(2);
        let (i0, g0) = a.alloc().unwrap();
        let (i1, _) = a.alloc().unwrap();
        assert_ne!(i0, i1);
        assert_eq!(a.alloc(), Err(HandleError::Full));
        a.free(i0, g0).unwrap();
        assert_eq!(a.validate(i0, g0), Err(HandleError::Stale));
        let (i2, g2) = a.alloc().unwrap();
        assert_eq!(i2, i0);
        assert_ne!(g2, g0);
        assert_eq!(a.validate(i0, g0), Err(HandleError::Stale));
        assert!(a.validate(i2, g2).is_ok());
        assert_eq!(a.validate(99, 0), Err(HandleError::OutOfRange));
        assert_eq!(a.free(i0, g0), Err(HandleError::Stale));
        assert_eq!(a.live_count(), 2);
    }
}
