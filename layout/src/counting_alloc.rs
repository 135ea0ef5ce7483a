/// A global allocator that forwards every call to the system allocator and
/// counts what passes: the live heap bytes always, and the number of
/// allocations (and reallocations) while counting is switched on. For the
/// tests and soak binaries that prove "nothing allocated per step" and
/// "memory flat"; install it with
/// `#[global_allocator] static HEAP: CountingAlloc = CountingAlloc::new();`.
pub struct CountingAlloc {
    live: AtomicI64,
    allocations: AtomicUsize,
    counting: AtomicBool,
}

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};

impl CountingAlloc {
    pub const fn new() -> Self {
        Self {
            live: AtomicI64::new(0),
            allocations: AtomicUsize::new(0),
            counting: AtomicBool::new(false),
        }
    }

    /// Bytes allocated and not yet freed, by everything in the process.
    pub fn live_bytes(&self) -> i64 {
        self.live.load(Ordering::Relaxed)
    }

    /// Zeroes the allocation count and starts counting.
    pub fn start_counting(&self) {
        self.allocations.store(0, Ordering::Relaxed);
        self.counting.store(true, Ordering::Relaxed);
    }

    /// Stops counting; returns the allocations since `start_counting`.
    pub fn stop_counting(&self) -> usize {
        self.counting.store(false, Ordering::Relaxed);
        self.allocations.load(Ordering::Relaxed)
    }

    #[inline]
    fn count(&self) {
        if self.counting.load(Ordering::Relaxed) {
            self.allocations.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Default for CountingAlloc {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// only additions are relaxed counter updates, which cannot affect the
// memory returned.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.count();
        self.live.fetch_add(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.live.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.count();
        self.live
            .fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
