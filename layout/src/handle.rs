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
