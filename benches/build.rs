//! The peers binary links Jolt (C++) through joltc-sys: it needs the C++
//! runtime, which joltc-sys does not link itself, and Jolt's height field
//! and mesh shapes, which JoltC does not wrap (`src/bin/peers/
//! jolt_surfaces.cpp`, compiled here against the Jolt sources joltc-sys
//! ships and builds).
#[cfg(feature = "jolt")]
use std::path::{Path, PathBuf};

/// The crate whose Jolt build the shim must match, byte for byte in its
/// ABI (checked at run time by Jolt's `VerifyJoltVersionID`).
#[cfg(feature = "jolt")]
const JOLTC_SYS: &str = "joltc-sys-0.3.1+Jolt-5.0.0";

/// The defines joltc-sys's CMake build of Jolt compiles the library with
/// (`JoltPhysics/Build/CMakeLists.txt`, Release configuration, its default
/// options: debug renderer and profiler on, AVX2 and friends; read from
/// that build's `flags.make`).
#[cfg(feature = "jolt")]
const JOLT_DEFINES: [&str; 11] = [
    "NDEBUG",
    "JPH_DEBUG_RENDERER",
    "JPH_PROFILE_ENABLED",
    "JPH_USE_AVX",
    "JPH_USE_AVX2",
    "JPH_USE_F16C",
    "JPH_USE_FMADD",
    "JPH_USE_LZCNT",
    "JPH_USE_SSE4_1",
    "JPH_USE_SSE4_2",
    "JPH_USE_TZCNT",
];

/// The code-generation flags of the same build.
#[cfg(feature = "jolt")]
const JOLT_FLAGS: [&str; 9] = [
    "-ffp-contract=off",
    "-mavx2",
    "-mbmi",
    "-mpopcnt",
    "-mlzcnt",
    "-mf16c",
    "-mfma",
    "-mfpmath=sse",
    "-std=c++17",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_JOLT").is_some() {
        build_jolt_surfaces();
        println!("cargo:rustc-link-lib=dylib=stdc++");
    }
}

#[cfg(feature = "jolt")]
fn build_jolt_surfaces() {
    let shim = "src/bin/peers/jolt_surfaces.cpp";
    println!("cargo:rerun-if-changed={shim}");
    println!("cargo:rerun-if-env-changed=JOLTC_SYS_DIR");
    let root = joltc_sys_dir().unwrap_or_else(|| {
        panic!("{JOLTC_SYS} not found: set JOLTC_SYS_DIR to its unpacked source (the folder holding JoltC/)")
    });
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .file(shim)
        .include(root.join("JoltC/JoltPhysics"))
        .opt_level(3)
        .warnings(false);
    for d in JOLT_DEFINES {
        match d.split_once('=') {
            Some((k, v)) => build.define(k, v),
            None => build.define(d, None),
        };
    }
    for f in JOLT_FLAGS {
        build.flag(f);
    }
    build.compile("jolt_surfaces");
}

#[cfg(not(feature = "jolt"))]
fn build_jolt_surfaces() {}

/// joltc-sys's unpacked source: `JOLTC_SYS_DIR`, else cargo's registry
/// cache (`$CARGO_HOME/registry/src/<index>/joltc-sys-…`).
#[cfg(feature = "jolt")]
fn joltc_sys_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("JOLTC_SYS_DIR") {
        return Some(PathBuf::from(dir));
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("registry/src"))
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join(JOLTC_SYS))
        .filter(|p| p.join("JoltC/JoltPhysics/Jolt/Jolt.h").is_file())
        .collect();
    found.sort();
    found.pop()
}
