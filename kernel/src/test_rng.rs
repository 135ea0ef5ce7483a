//! The unit tests' random numbers: a splitmix64 counter (the generator
//! SCENES.md defines, `scenes::splitmix64`), so every test's inputs are
//! reproducible from its seed.

use crate::scenes::splitmix64;

pub(crate) struct TestRng(pub u64);

impl TestRng {
    pub fn next(&mut self) -> u64 {
        let r = splitmix64(self.0);
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        r
    }

    /// Uniform in `lo..hi`.
    pub fn f(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }

    /// A unit quaternion from four uniform components (identity for the
    /// rare draw too short to normalise well).
    pub fn quat(&mut self) -> crate::math::Quat {
        let v = [
            self.f(0.0, 1.0),
            self.f(0.0, 1.0),
            self.f(0.0, 1.0),
            self.f(0.0, 1.0),
        ]
        .map(|x| 2.0 * x - 1.0);
        let q = crate::math::Quat::from_xyzw(v[0], v[1], v[2], v[3]);
        if q.length() < 0.1 {
            crate::math::Quat::IDENTITY
        } else {
            q.normalize()
        }
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
