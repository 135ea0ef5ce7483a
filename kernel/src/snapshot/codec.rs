//! The byte codec snapshots are written in: a writer that appends to the
//! caller's buffer, a bounds-checked reader, and [`Snap`], implemented once
//! per saved type (fields one by one, never a struct's raw bytes: structs
//! have padding, and glam's `Quat` is 16-byte aligned on x86).
//!
//! Every read is checked: a value past the end, a length above its
//! capacity, a body slot at or past `max_bodies`, an enum tag or `bool`
//! byte out of range are all [`PhysicsError::InvalidSnapshot`], never a
//! panic. Plain-old-data columns are copied as their native bytes (the
//! header records the byte order, so a snapshot is refused on a machine of
//! the other one).

use crate::error::{PhysicsError, Result};
use crate::math::{Quat, Vec3};
use archipelago_layout::Column;
use bytemuck::Pod;

/// Appends to the caller's buffer.
pub(crate) struct Writer<'a> {
    pub out: &'a mut Vec<u8>,
}

impl Writer<'_> {
    #[inline]
    pub fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    #[inline]
    pub fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    #[inline]
    pub fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    #[inline]
    pub fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }
    pub fn put<T: Snap>(&mut self, v: &T) {
        v.put(self);
    }
    /// A length, then the items.
    pub fn items<T: Snap>(&mut self, items: &[T]) {
        self.u32(items.len() as u32);
        for v in items {
            v.put(self);
        }
    }
    /// A length, then the items' native bytes in one copy.
    pub fn pod<T: Pod>(&mut self, items: &[T]) {
        self.u32(items.len() as u32);
        self.out.extend_from_slice(bytemuck::cast_slice(items));
    }
}

/// Reads what a [`Writer`] wrote, refusing anything malformed.
#[derive(Clone)]
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Body slots read with [`slot`](Self::slot) are below this.
    pub max_bodies: u32,
}

fn bad<T>() -> Result<T> {
    Err(PhysicsError::InvalidSnapshot)
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8], max_bodies: u32) -> Self {
        Self {
            bytes,
            at: 0,
            max_bodies,
        }
    }

    pub fn at_end(&self) -> bool {
        self.at == self.bytes.len()
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .ok_or(PhysicsError::InvalidSnapshot)?;
        let s = self
            .bytes
            .get(self.at..end)
            .ok_or(PhysicsError::InvalidSnapshot)?;
        self.at = end;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("took N bytes"))
    }
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_bits(self.u32()?))
    }
    pub fn bool(&mut self) -> Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => bad(),
        }
    }
    /// A body slot below `max_bodies`.
    pub fn slot(&mut self) -> Result<u32> {
        let s = self.u32()?;
        if s < self.max_bodies {
            Ok(s)
        } else {
            bad()
        }
    }
    /// A length of at most `max`.
    pub fn len(&mut self, max: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n <= max {
            Ok(n)
        } else {
            bad()
        }
    }
    pub fn get<T: Snap>(&mut self) -> Result<T> {
        T::get(self)
    }

    /// Up to `max` items into `dst` (cleared first; `None`: only checked).
    /// `dst` holds `max` without growing, so nothing is allocated.
    pub fn items_into<T: Snap>(&mut self, max: usize, dst: Option<&mut Vec<T>>) -> Result<()> {
        let n = self.len(max)?;
        match dst {
            Some(v) => {
                v.clear();
                for _ in 0..n {
                    v.push(T::get(self)?);
                }
            }
            None => {
                for _ in 0..n {
                    T::get(self)?;
                }
            }
        }
        Ok(())
    }

    /// Up to `max` plain items, as a new vector.
    pub fn pod_vec<T: Pod>(&mut self, max: usize) -> Result<Vec<T>> {
        let n = self.len(max)?;
        let size = core::mem::size_of::<T>();
        let bytes = self.take(n * size)?;
        Ok(bytes
            .chunks_exact(size)
            .map(bytemuck::pod_read_unaligned)
            .collect())
    }

    /// The native bytes of exactly `n` items (`check` sees each one).
    pub fn pod_bytes<T: Pod>(&mut self, n: usize, check: impl Fn(&T) -> bool) -> Result<&'a [u8]> {
        if self.len(n)? != n {
            return bad();
        }
        let size = core::mem::size_of::<T>();
        let bytes = self.take(n.checked_mul(size).ok_or(PhysicsError::InvalidSnapshot)?)?;
        let all_ok = bytes
            .chunks_exact(size)
            .all(|c| check(&bytemuck::pod_read_unaligned(c)));
        if all_ok {
            Ok(bytes)
        } else {
            bad()
        }
    }

    /// Exactly `n` items into the front of `dst` (`None`: only checked).
    pub fn pod_into<T: Pod>(
        &mut self,
        n: usize,
        dst: Option<&mut [T]>,
        check: impl Fn(&T) -> bool,
    ) -> Result<()> {
        let bytes = self.pod_bytes::<T>(n, check)?;
        if let Some(dst) = dst {
            bytemuck::cast_slice_mut::<T, u8>(&mut dst[..n]).copy_from_slice(bytes);
        }
        Ok(())
    }

    /// Slots `0..n` of a column; the slots from `n` to `clear_to` (what
    /// the world held beyond the snapshot's slots) go back to neutral.
    pub fn column_into<T: Pod>(
        &mut self,
        n: usize,
        clear_to: usize,
        dst: Option<&mut Column<T>>,
        check: impl Fn(&T) -> bool,
    ) -> Result<()> {
        let bytes = self.pod_bytes::<T>(n, check)?;
        if let Some(c) = dst {
            let neutral = c.neutral();
            let s = c.as_mut_slice();
            bytemuck::cast_slice_mut::<T, u8>(&mut s[..n]).copy_from_slice(bytes);
            s[n..clear_to].fill(neutral);
        }
        Ok(())
    }
}

/// A slot allocator as saved: its generations and free list, and which
/// slots below the high-water mark are live.
pub(crate) struct SlotsRead {
    pub generation: Vec<u32>,
    pub free: Vec<u32>,
    pub live: Vec<bool>,
}

impl Writer<'_> {
    /// A slot allocator: generations, then the free list.
    pub fn slots(&mut self, s: &archipelago_layout::SlotAllocator) {
        self.pod(s.generations());
        self.pod(s.free_list());
    }
}

impl Reader<'_> {
    /// [`Writer::slots`]'s allocator of at most `max` slots; a free slot at
    /// or past the high-water mark, or listed twice, is refused.
    pub fn slots(&mut self, max: usize) -> Result<SlotsRead> {
        let generation: Vec<u32> = self.pod_vec(max)?;
        let n = generation.len();
        let free: Vec<u32> = self.pod_vec(n)?;
        let mut live = vec![true; n];
        for &f in &free {
            let f = f as usize;
            if f >= n || !core::mem::replace(&mut live[f], false) {
                return bad();
            }
        }
        Ok(SlotsRead {
            generation,
            free,
            live,
        })
    }
}

/// A value saved field by field.
pub(crate) trait Snap: Sized {
    fn put(&self, w: &mut Writer);
    fn get(r: &mut Reader) -> Result<Self>;
}

impl Snap for u32 {
    fn put(&self, w: &mut Writer) {
        w.u32(*self)
    }
    fn get(r: &mut Reader) -> Result<Self> {
        r.u32()
    }
}
impl Snap for u64 {
    fn put(&self, w: &mut Writer) {
        w.u64(*self)
    }
    fn get(r: &mut Reader) -> Result<Self> {
        r.u64()
    }
}
impl Snap for f32 {
    fn put(&self, w: &mut Writer) {
        w.f32(*self)
    }
    fn get(r: &mut Reader) -> Result<Self> {
        r.f32()
    }
}
impl Snap for bool {
    fn put(&self, w: &mut Writer) {
        w.u8(*self as u8)
    }
    fn get(r: &mut Reader) -> Result<Self> {
        r.bool()
    }
}
impl<T: Snap + Copy + Default, const N: usize> Snap for [T; N] {
    fn put(&self, w: &mut Writer) {
        for v in self {
            v.put(w);
        }
    }
    fn get(r: &mut Reader) -> Result<Self> {
        let mut a = [T::default(); N];
        for v in &mut a {
            *v = T::get(r)?;
        }
        Ok(a)
    }
}
impl Snap for Vec3 {
    fn put(&self, w: &mut Writer) {
        self.to_array().put(w)
    }
    fn get(r: &mut Reader) -> Result<Self> {
        Ok(Vec3::from_array(r.get()?))
    }
}
impl Snap for Quat {
    fn put(&self, w: &mut Writer) {
        self.to_array().put(w)
    }
    fn get(r: &mut Reader) -> Result<Self> {
        Ok(Quat::from_array(r.get()?))
    }
}
impl<T: Snap> Snap for Option<T> {
    fn put(&self, w: &mut Writer) {
        match self {
            None => w.u8(0),
            Some(v) => {
                w.u8(1);
                v.put(w);
            }
        }
    }
    fn get(r: &mut Reader) -> Result<Self> {
        Ok(if r.bool()? { Some(T::get(r)?) } else { None })
    }
}

/// The first `count` entries of a fixed array of contact points (the
/// rest hold whatever an earlier manifold left there: never read, never
/// saved, so equal states save equal bytes).
pub(crate) fn put_first<T: Snap>(w: &mut Writer, items: &[T], count: u32) {
    // (a count past the array is written as the whole array; reading it
    // back refuses the count)
    for v in &items[..(count as usize).min(items.len())] {
        v.put(w);
    }
}

/// Reads [`put_first`]'s entries; the rest are `T::default()`.
pub(crate) fn get_first<T: Snap + Copy + Default, const N: usize>(
    r: &mut Reader,
    count: u32,
) -> Result<[T; N]> {
    let mut a = [T::default(); N];
    for v in a.iter_mut().take(count as usize) {
        *v = T::get(r)?;
    }
    Ok(a)
}

/// A contact point count: at most `max`.
pub(crate) fn get_count(r: &mut Reader, max: usize) -> Result<u32> {
    let n = r.u32()?;
    if n as usize <= max {
        Ok(n)
    } else {
        bad()
    }
}

/// Implements [`Snap`] for a struct by its fields, in the order given
/// (every field must be named: a field left out would not compile).
macro_rules! snap_fields {
    ($ty:ty { $($field:ident),* $(,)? }) => {
        impl $crate::snapshot::codec::Snap for $ty {
            fn put(&self, w: &mut $crate::snapshot::codec::Writer) {
                let Self { $($field),* } = self;
                $( $crate::snapshot::codec::Snap::put($field, w); )*
            }
            fn get(r: &mut $crate::snapshot::codec::Reader) -> $crate::error::Result<Self> {
                Ok(Self { $($field: r.get()?),* })
            }
        }
    };
}
pub(crate) use snap_fields;

/// A 64-bit checksum of `bytes`: four lanes of multiply–xorshift over
/// 8-byte words, folded together with the length. Each lane step is a
/// bijection of the lane for a fixed word, so a change confined to one
/// word is always detected; other changes escape with probability ~2⁻⁶⁴.
/// (A few GB/s: the state it guards is mostly columns.)
pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    const K: [u64; 4] = [
        0x9e37_79b9_7f4a_7c15,
        0xc2b2_ae3d_27d4_eb4f,
        0x1656_67b1_9e37_79f9,
        0xd6e8_feb8_6659_fd93,
    ];
    let mix = |h: u64, w: u64, k: u64| {
        let x = (h ^ w).wrapping_mul(k);
        x ^ (x >> 29)
    };
    let mut lanes = K;
    let mut chunks = bytes.chunks_exact(32);
    for c in &mut chunks {
        for (l, (lane, k)) in lanes.iter_mut().zip(K).enumerate() {
            let w = u64::from_le_bytes(c[8 * l..8 * l + 8].try_into().expect("8 bytes"));
            *lane = mix(*lane, w, k);
        }
    }
    let mut h = bytes.len() as u64;
    for (lane, k) in lanes.iter().zip(K) {
        h = mix(h, *lane, k);
    }
    for c in chunks.remainder().chunks(8) {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        h = mix(h, u64::from_le_bytes(w), K[0]);
    }
    mix(h, h >> 32, K[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_sees_every_single_bit_flip() {
        let bytes: Vec<u8> = (0..203u32).map(|i| (i * 37 % 251) as u8).collect();
        let h = checksum(&bytes);
        for bit in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            assert_ne!(checksum(&b), h, "bit {bit}");
        }
        assert_ne!(checksum(&bytes[..202]), h);
    }

    #[test]
    fn reader_refuses_short_input_and_bad_tags() {
        let mut out = Vec::new();
        let mut w = Writer { out: &mut out };
        w.u32(7);
        w.u8(2);
        let mut r = Reader::new(&out, 4);
        assert_eq!(r.slot(), Err(PhysicsError::InvalidSnapshot));
        assert_eq!(r.bool(), Err(PhysicsError::InvalidSnapshot));
        assert_eq!(r.u8(), Err(PhysicsError::InvalidSnapshot));
    }
}
