//! Generates the C header from `src/lib.rs` with cbindgen into `OUT_DIR`
//! (`tests/c_example.rs` checks that `include/archipelago.h`, the copy
//! users include, is equal to it).

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("archipelago.h");
    let config = cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).unwrap();
    cbindgen::Builder::new()
        .with_src(format!("{dir}/src/lib.rs"))
        .with_config(config)
        .generate()
        .expect("cbindgen could not generate the header")
        .write_to_file(out);
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");
}
