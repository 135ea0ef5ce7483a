//! The peers binary links Jolt (C++) through joltc-sys: it needs the C++
//! runtime, which joltc-sys does not link itself.
fn main() {
    if std::env::var_os("CARGO_FEATURE_PEERS").is_some() {
        println!("cargo:rustc-link-lib=dylib=stdc++");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
