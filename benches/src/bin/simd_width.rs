//! Measures whether 8-wide (`f32x8`) or 16-wide (`f32x16`) lanes are faster
//! for the kernel's two SIMD loops on this machine: the broad phase's
//! one-box-against-a-lane AABB overlap mask, and the integrator's column
//! sweep `p += v · dt · s`. Prints ns per element for each width,
//! interleaving repeats so machine noise hits both equally.
//!
//! `cargo run --release -p archipelago-benches --bin simd_width`

use std::hint::black_box;
use std::time::Instant;
use wide::{f32x16, f32x8};

const N: usize = 4096; // like the rain scene's body count
const REPEATS: usize = 15;

fn data(seed: u64) -> Vec<f32> {
    (0..N as u64)
        .map(|i| archipelago::scenes::unit_random(seed * 1_000_003 + i) * 100.0)
        .collect()
}

fn overlap8(lo: &[f32; 6], cols: &[Vec<f32>]) -> u32 {
    let mut hits = 0;
    let s = |v: f32| f32x8::splat(v);
    for i in (0..N).step_by(8) {
        let l = |c: usize| f32x8::new(cols[c][i..i + 8].try_into().unwrap());
        let m = l(0).simd_le(s(lo[3]))
            & l(3).simd_ge(s(lo[0]))
            & l(1).simd_le(s(lo[4]))
            & l(4).simd_ge(s(lo[1]))
            & l(2).simd_le(s(lo[5]))
            & l(5).simd_ge(s(lo[2]));
        hits += m.to_bitmask().count_ones();
    }
    hits
}

fn overlap16(lo: &[f32; 6], cols: &[Vec<f32>]) -> u32 {
    let mut hits = 0;
    let s = |v: f32| f32x16::splat(v);
    for i in (0..N).step_by(16) {
        let l = |c: usize| f32x16::new(cols[c][i..i + 16].try_into().unwrap());
        let m = l(0).simd_le(s(lo[3]))
            & l(3).simd_ge(s(lo[0]))
            & l(1).simd_le(s(lo[4]))
            & l(4).simd_ge(s(lo[1]))
            & l(2).simd_le(s(lo[5]))
            & l(5).simd_ge(s(lo[2]));
        hits += m.to_bitmask().count_ones();
    }
    hits
}

fn sweep8(p: &mut [f32], v: &[f32], s: &[f32], dt: f32) {
    for i in (0..N).step_by(8) {
        let l = |x: &[f32]| f32x8::new(x[i..i + 8].try_into().unwrap());
        let r = l(v).mul_add(l(s) * f32x8::splat(dt), l(p));
        p[i..i + 8].copy_from_slice(&r.to_array());
    }
}

fn sweep16(p: &mut [f32], v: &[f32], s: &[f32], dt: f32) {
    for i in (0..N).step_by(16) {
        let l = |x: &[f32]| f32x16::new(x[i..i + 16].try_into().unwrap());
        let r = l(v).mul_add(l(s) * f32x16::splat(dt), l(p));
        p[i..i + 16].copy_from_slice(&r.to_array());
    }
}

fn time(f: &mut dyn FnMut()) -> f64 {
    let inner = 2000;
    let t0 = Instant::now();
    for _ in 0..inner {
        f();
    }
    t0.elapsed().as_secs_f64() * 1e9 / (inner * N) as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let cols: Vec<Vec<f32>> = (0..6)
        .map(|c| {
            let base = data(c % 3);
            if c < 3 {
                base
            } else {
                base.iter().map(|x| x + 2.0).collect()
            }
        })
        .collect();
    let one = [40.0, 40.0, 40.0, 45.0, 45.0, 45.0];
    assert_eq!(overlap8(&one, &cols), overlap16(&one, &cols));
    let v = data(7);
    let s = data(8);
    let mut p8 = data(9);
    let mut p16 = p8.clone();
    let (mut o8, mut o16, mut s8, mut s16) = (vec![], vec![], vec![], vec![]);
    for _ in 0..REPEATS {
        o8.push(time(&mut || {
            black_box(overlap8(black_box(&one), black_box(&cols)));
        }));
        o16.push(time(&mut || {
            black_box(overlap16(black_box(&one), black_box(&cols)));
        }));
        s8.push(time(&mut || sweep8(black_box(&mut p8), &v, &s, 1.0 / 60.0)));
        s16.push(time(&mut || {
            sweep16(black_box(&mut p16), &v, &s, 1.0 / 60.0)
        }));
    }
    let avx512 = cfg!(target_feature = "avx512f");
    let avx2 = cfg!(target_feature = "avx2");
    println!("target features: avx2 {avx2}, avx512f {avx512}; {N} elements, median of {REPEATS}");
    println!(
        "aabb overlap mask : f32x8 {:.3} ns/box, f32x16 {:.3} ns/box",
        median(o8),
        median(o16)
    );
    println!(
        "column sweep      : f32x8 {:.3} ns/elem, f32x16 {:.3} ns/elem",
        median(s8),
        median(s16)
    );
}
