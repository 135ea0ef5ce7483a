use core::ops::{Deref, DerefMut};

/// A value alone on its 64-byte cache line.
///
/// Counters and cursors that several worker threads write would otherwise
/// share a line with their neighbours and bounce it between cores (false
/// sharing), as Jolt's `BodyPairQueue` avoids with `JPH_CACHE_LINE_SIZE`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct CachePadded<T>(pub T);

impl<T> CachePadded<T> {
    pub const fn new(value: T) -> Self {
        Self(value)
    }

    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for CachePadded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for CachePadded<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn padded_values_sit_on_their_own_line() {
        assert_eq!(core::mem::align_of::<CachePadded<AtomicU32>>(), 64);
        assert_eq!(core::mem::size_of::<CachePadded<AtomicU32>>(), 64);
        let pair = [CachePadded::new(1u32), CachePadded::new(2u32)];
        let a = &pair[0] as *const _ as usize;
        let b = &pair[1] as *const _ as usize;
        assert_eq!(b - a, 64);
        assert_eq!(a % 64, 0);
        assert_eq!(*pair[1], 2);
    }
}
