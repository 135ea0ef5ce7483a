//! `update` allocates nothing in steady state: every buffer is sized at
//! creation (or grows during warm-up and then stays). A counting global
//! allocator proves it over 100 steps of the pyramid (SAP broad phase) and
//! of the rain scene (bodies falling asleep and waking).

use archipelago::{scenes, PhysicsSettings};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; the only
// addition is a relaxed counter increment, which cannot affect the memory
// returned.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_in_steady_state(scene: scenes::Scene, warmup: usize, steps: usize) -> usize {
    let (mut w, _) = scene.build(PhysicsSettings::default()).unwrap();
    for _ in 0..warmup {
        w.update(scenes::DT, 1).unwrap();
    }
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    for _ in 0..steps {
        w.update(scenes::DT, 1).unwrap();
    }
    COUNTING.store(false, Ordering::Relaxed);
    ALLOCATIONS.load(Ordering::Relaxed)
}

// One test function: the counter is global, so the scenes run one after
// the other rather than in parallel test threads.
#[test]
fn update_does_not_allocate_in_steady_state() {
    // the counter works: a step of a freshly built world does allocate
    // (buffers growing to their working size)
    let (mut fresh, _) = scenes::rain().build(PhysicsSettings::default()).unwrap();
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let v: Vec<u64> = Vec::with_capacity(16);
    fresh.update(scenes::DT, 1).unwrap();
    COUNTING.store(false, Ordering::Relaxed);
    drop(v);
    assert!(
        ALLOCATIONS.load(Ordering::Relaxed) > 0,
        "the counting allocator must count"
    );

    assert_eq!(
        allocations_in_steady_state(scenes::pyramid(), 10, 100),
        0,
        "pyramid"
    );
    assert_eq!(
        allocations_in_steady_state(scenes::towers(), 10, 100),
        0,
        "towers"
    );
}
