//! [`F32x16`]: the solver's 16 lanes as a plain array, with every operation
//! written lane by lane.
//!
//! Why not `wide::f32x16`: `wide` picks its instructions when it is compiled
//! (`cfg(target_feature)`), so a crate built without `-C target-cpu=native`
//! runs it as four SSE halves even on an AVX-512 machine, and calling it from
//! a `#[target_feature(enable = "avx512f")]` function changes nothing. Plain
//! per-lane arithmetic on a 64-byte-aligned `[f32; 16]` is vectorized by
//! LLVM at the width of whatever function it is inlined into: one zmm
//! register per operation inside an AVX-512 function, two ymm inside an AVX2
//! one, four xmm in the baseline. The solver compiles its hot loops once per
//! instruction set and picks one at run time (`archipelago`'s
//! `solver/dispatch.rs`). Every operation is one IEEE-754 operation per
//! lane and nothing is fused, so every instruction set gives the same bits.

use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Not, Sub, SubAssign};

/// Lanes in a bundle.
pub const BUNDLE: usize = 16;

/// 16 `f32` lanes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(64))]
pub struct F32x16(pub [f32; BUNDLE]);

/// A condition per lane: all ones where it holds, zero where it does not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct M32x16(pub [u32; BUNDLE]);

// Plain indexed loops over a filled array: `core::array::from_fn` goes
// through `try_from_fn`, which LLVM did not always inline (3.9% of a pyramid
// step spent in calls to it), and nothing vectorizes across a call.
#[inline(always)]
fn map<T: Copy, U: Copy + Default>(a: [T; BUNDLE], f: impl Fn(T) -> U) -> [U; BUNDLE] {
    let mut r = [U::default(); BUNDLE];
    for (r, &a) in r.iter_mut().zip(&a) {
        *r = f(a);
    }
    r
}

#[inline(always)]
fn zip<T: Copy, U: Copy + Default>(
    a: [T; BUNDLE],
    b: [T; BUNDLE],
    f: impl Fn(T, T) -> U,
) -> [U; BUNDLE] {
    let mut r = [U::default(); BUNDLE];
    for ((r, &a), &b) in r.iter_mut().zip(&a).zip(&b) {
        *r = f(a, b);
    }
    r
}

#[inline(always)]
fn mask(c: bool) -> u32 {
    if c {
        u32::MAX
    } else {
        0
    }
}

impl F32x16 {
    #[inline(always)]
    pub fn new(v: [f32; BUNDLE]) -> Self {
        Self(v)
    }
    #[inline(always)]
    pub fn splat(v: f32) -> Self {
        Self([v; BUNDLE])
    }
    #[inline(always)]
    pub fn to_array(self) -> [f32; BUNDLE] {
        self.0
    }
    #[inline(always)]
    pub fn sqrt(self) -> Self {
        Self(map(self.0, f32::sqrt))
    }
    #[inline(always)]
    pub fn abs(self) -> Self {
        Self(map(self.0, f32::abs))
    }
    #[inline(always)]
    pub fn gt(self, o: Self) -> M32x16 {
        M32x16(zip(self.0, o.0, |a, b| mask(a > b)))
    }
    #[inline(always)]
    pub fn lt(self, o: Self) -> M32x16 {
        M32x16(zip(self.0, o.0, |a, b| mask(a < b)))
    }
    #[inline(always)]
    pub fn ge(self, o: Self) -> M32x16 {
        M32x16(zip(self.0, o.0, |a, b| mask(a >= b)))
    }
    #[inline(always)]
    pub fn le(self, o: Self) -> M32x16 {
        M32x16(zip(self.0, o.0, |a, b| mask(a <= b)))
    }
    /// Lanes that are neither infinite nor NaN (exponent bits not all set).
    #[inline(always)]
    pub fn finite(self) -> M32x16 {
        M32x16(map(self.0, |x| {
            mask(x.to_bits() & 0x7f80_0000 != 0x7f80_0000)
        }))
    }
    /// `t` where `m` holds, else `f`.
    #[inline(always)]
    pub fn select(m: M32x16, t: Self, f: Self) -> Self {
        let mut r = [0.0; BUNDLE];
        for (i, r) in r.iter_mut().enumerate() {
            *r = f32::from_bits((m.0[i] & t.0[i].to_bits()) | (!m.0[i] & f.0[i].to_bits()));
        }
        Self(r)
    }
}

impl M32x16 {
    #[inline(always)]
    pub fn and(self, o: Self) -> Self {
        Self(zip(self.0, o.0, |a, b| a & b))
    }
    #[inline(always)]
    pub fn or(self, o: Self) -> Self {
        Self(zip(self.0, o.0, |a, b| a | b))
    }
    /// Whether any lane holds (an OR over the lanes, no early exit, so it
    /// vectorizes).
    #[inline(always)]
    pub fn any(self) -> bool {
        self.0.iter().fold(0, |a, &b| a | b) != 0
    }
    /// Whether every lane holds.
    #[inline(always)]
    pub fn all(self) -> bool {
        self.0.iter().fold(u32::MAX, |a, &b| a & b) == u32::MAX
    }
}

impl Not for M32x16 {
    type Output = Self;
    #[inline(always)]
    fn not(self) -> Self {
        Self(map(self.0, |a| !a))
    }
}

macro_rules! binary {
    ($tr:ident, $f:ident, $op:tt, $tra:ident, $fa:ident) => {
        impl $tr for F32x16 {
            type Output = Self;
            #[inline(always)]
            fn $f(self, o: Self) -> Self {
                Self(zip(self.0, o.0, |a, b| a $op b))
            }
        }
        impl $tra for F32x16 {
            #[inline(always)]
            fn $fa(&mut self, o: Self) {
                *self = *self $op o;
            }
        }
    };
}
binary!(Add, add, +, AddAssign, add_assign);
binary!(Sub, sub, -, SubAssign, sub_assign);
binary!(Mul, mul, *, MulAssign, mul_assign);
binary!(Div, div, /, DivAssign, div_assign);

impl Neg for F32x16 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self(map(self.0, |a| -a))
    }
}
