//! Data layout primitives for archipelago.
//!
//! - [`Column`]: a fixed-capacity, 64-byte-aligned column of plain-old-data
//!   whose length is padded to a multiple of [`LANE_PAD`] so SIMD loops need no
//!   tail code; padding lanes hold a caller-chosen neutral value.
//! - [`Vec3Column`]: three `f32` columns (x, y, z) for vectors that SIMD loops
//!   read lane-wise.
//! - [`SlotAllocator`] and the [`typed_handle!`] macro: generational handles
//!   (index + generation) so a stale handle is an error, never a hit on the
//!   body that reused its slot.
//! - [`CachePadded`]: a value alone on its cache line, for anything several
//!   threads write.
//! - [`CountingAlloc`]: a global allocator that counts live bytes and
//!   allocations, for the tests and binaries that prove memory stays flat.

mod cache_padded;
mod column;
mod counting_alloc;
mod handle;

pub use bytemuck::{Pod, Zeroable};
pub use cache_padded::CachePadded;
pub use column::{padded_len, Column, Vec3Column, LANE_PAD};
pub use counting_alloc::CountingAlloc;
pub use handle::{HandleError, SlotAllocator};
