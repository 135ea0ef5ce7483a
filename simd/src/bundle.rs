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
//! one, four xmm in the baseline. [`F32x8`], half a bundle, is the same
//! code at 8 lanes: the AVX2 path solves a bundle as two of them, one ymm
//! per operation, which spills less. The solver compiles its hot loops once per
//! instruction set and picks one at run time (`archipelago`'s
//! `solver/dispatch.rs`). Every operation is one IEEE-754 operation per
//! lane and nothing is fused, so every instruction set gives the same bits.

use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Not, Sub, SubAssign};

/// Lanes in a bundle.
pub const BUNDLE: usize = 16;

/// Lanes in half a bundle: what one 256-bit register holds, so the AVX2
/// path can solve a bundle as two halves without spilling (see
/// [`F32x8`]).
pub const HALF_BUNDLE: usize = BUNDLE / 2;

// Plain indexed loops over a filled array: `core::array::from_fn` goes
// through `try_from_fn`, which LLVM did not always inline (3.9% of a pyramid
// step spent in calls to it), and nothing vectorizes across a call.
#[inline(always)]
fn map<T: Copy, U: Copy + Default, const N: usize>(a: [T; N], f: impl Fn(T) -> U) -> [U; N] {
    let mut r = [U::default(); N];
    for (r, &a) in r.iter_mut().zip(&a) {
        *r = f(a);
    }
    r
}

#[inline(always)]
fn zip<T: Copy, U: Copy + Default, const N: usize>(
    a: [T; N],
    b: [T; N],
    f: impl Fn(T, T) -> U,
) -> [U; N] {
    let mut r = [U::default(); N];
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

/// A lane vector of `$n` `f32`s and its mask, every operation written lane
/// by lane (one definition for both widths, so they compute alike).
macro_rules! lanes {
    ($(#[$doc:meta])* $f:ident, $(#[$mdoc:meta])* $m:ident, $n:expr, $align:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        #[repr(C, align($align))]
        pub struct $f(pub [f32; $n]);

        $(#[$mdoc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        #[repr(C, align($align))]
        pub struct $m(pub [u32; $n]);

        impl $f {
            #[inline(always)]
            pub fn new(v: [f32; $n]) -> Self {
                Self(v)
            }
            #[inline(always)]
            pub fn splat(v: f32) -> Self {
                Self([v; $n])
            }
            #[inline(always)]
            pub fn to_array(self) -> [f32; $n] {
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
            pub fn gt(self, o: Self) -> $m {
                $m(zip(self.0, o.0, |a, b| mask(a > b)))
            }
            #[inline(always)]
            pub fn lt(self, o: Self) -> $m {
                $m(zip(self.0, o.0, |a, b| mask(a < b)))
            }
            #[inline(always)]
            pub fn ge(self, o: Self) -> $m {
                $m(zip(self.0, o.0, |a, b| mask(a >= b)))
            }
            #[inline(always)]
            pub fn le(self, o: Self) -> $m {
                $m(zip(self.0, o.0, |a, b| mask(a <= b)))
            }
            /// Lanes that are neither infinite nor NaN (exponent bits not all set).
            #[inline(always)]
            pub fn finite(self) -> $m {
                $m(map(self.0, |x| {
                    mask(x.to_bits() & 0x7f80_0000 != 0x7f80_0000)
                }))
            }
            /// `t` where `m` holds, else `f`.
            #[inline(always)]
            pub fn select(m: $m, t: Self, f: Self) -> Self {
                let mut r = [0.0; $n];
                for (i, r) in r.iter_mut().enumerate() {
                    *r = f32::from_bits((m.0[i] & t.0[i].to_bits()) | (!m.0[i] & f.0[i].to_bits()));
                }
                Self(r)
            }
        }

        impl $m {
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

        impl Not for $m {
            type Output = Self;
            #[inline(always)]
            fn not(self) -> Self {
                Self(map(self.0, |a| !a))
            }
        }

        binary!($f, Add, add, +, AddAssign, add_assign);
        binary!($f, Sub, sub, -, SubAssign, sub_assign);
        binary!($f, Mul, mul, *, MulAssign, mul_assign);
        binary!($f, Div, div, /, DivAssign, div_assign);

        impl Neg for $f {
            type Output = Self;
            #[inline(always)]
            fn neg(self) -> Self {
                Self(map(self.0, |a| -a))
            }
        }
    };
}

macro_rules! binary {
    ($t:ident, $tr:ident, $f:ident, $op:tt, $tra:ident, $fa:ident) => {
        impl $tr for $t {
            type Output = Self;
            #[inline(always)]
            fn $f(self, o: Self) -> Self {
                Self(zip(self.0, o.0, |a, b| a $op b))
            }
        }
        impl $tra for $t {
            #[inline(always)]
            fn $fa(&mut self, o: Self) {
                *self = *self $op o;
            }
        }
    };
}

lanes!(
    /// 16 `f32` lanes: a bundle.
    F32x16,
    /// A condition per lane: all ones where it holds, zero where it does not.
    M32x16,
    BUNDLE,
    64
);

lanes!(
    /// 8 `f32` lanes: half a bundle, one 256-bit register. On AVX2 a
    /// bundle's 16 lanes are two registers per value, and the contact
    /// solve's working set then overflows the 16 ymm registers into stack
    /// spills; solving the two halves one after the other keeps it in
    /// registers. The lanes of a bundle share no dynamic body, so halves
    /// solved in turn give each lane the same bits as the whole bundle.
    F32x8,
    /// A condition per lane of an [`F32x8`].
    M32x8,
    HALF_BUNDLE,
    32
);
