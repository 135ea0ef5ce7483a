//! The C API from C: the committed header is cbindgen's output, and
//! `examples/falling.c`, compiled with the system C compiler against the
//! static library and run, prints the poses and state hash that the same
//! scene gives through the Rust API, to the last bit.

use archipelago::{
    BodyCreationSettings, Capacities, MotionType, PhysicsSettings, PhysicsSystem, SerialExecutor,
    Shape, Vec3,
};
use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn the_committed_header_is_cbindgens() {
    let generated =
        std::fs::read_to_string(Path::new(env!("OUT_DIR")).join("archipelago.h")).unwrap();
    let committed =
        std::fs::read_to_string(Path::new(MANIFEST).join("include/archipelago.h")).unwrap();
    assert!(
        generated == committed,
        "capi/include/archipelago.h is stale: copy {}/archipelago.h over it",
        env!("OUT_DIR")
    );
    for name in [
        "arch_world_create",
        "arch_world_update",
        "arch_copy_poses",
        "ARCH_INVALID_BODY_ID",
    ] {
        assert!(committed.contains(name), "{name}");
    }
}

/// The static library next to this test's binary (`target/<profile>/`
/// or its `deps/`): the newer of the two, since `cargo test` rebuilds the
/// one in `deps/` and leaves an older `cargo build`'s copy beside it.
fn static_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    [profile_dir.to_path_buf(), profile_dir.join("deps")]
        .into_iter()
        .map(|dir| dir.join("libarchipelago_capi.a"))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("no libarchipelago_capi.a in {}", profile_dir.display()))
}

/// The C example's scene through the Rust API: (positions, state hash).
fn rust_side() -> (Vec<Vec3>, u64) {
    let mut w = PhysicsSystem::new(Capacities::default(), PhysicsSettings::default()).unwrap();
    let floor = Shape::cuboid(Vec3::new(50.0, 1.0, 50.0)).unwrap();
    let make = |shape: Shape, p: Vec3, motion| {
        BodyCreationSettings::new(shape, p, motion)
            .with_density(1000.0)
            .with_friction(0.2)
            .with_restitution(0.0)
            .with_allow_sleeping(true)
    };
    w.create_and_add_body(&make(floor, Vec3::new(0.0, -1.0, 0.0), MotionType::Static))
        .unwrap();
    let mut ids = Vec::new();
    for i in 0..4 {
        let b = make(
            Shape::cuboid(Vec3::splat(0.5)).unwrap(),
            Vec3::new(0.0, 0.5 + i as f32, 0.0),
            MotionType::Dynamic,
        );
        ids.push(w.create_and_add_body(&b).unwrap());
    }
    let ball = make(
        Shape::sphere(0.25).unwrap(),
        Vec3::new(-5.0, 1.5, 0.0),
        MotionType::Dynamic,
    )
    .with_linear_velocity(Vec3::new(8.0, 0.0, 0.0))
    .with_density(7800.0);
    ids.push(w.create_and_add_body(&ball).unwrap());
    for _ in 0..120 {
        w.update(1.0 / 60.0, 1, &SerialExecutor).unwrap();
    }
    let positions = ids.iter().map(|&id| w.position(id).unwrap()).collect();
    (positions, w.state_hash())
}

#[test]
fn the_c_example_prints_what_rust_computes() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out_dir = std::env::temp_dir().join(format!("archipelago-capi-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join("falling");
    let status = Command::new(&cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg("-I")
        .arg(Path::new(MANIFEST).join("include"))
        .arg(Path::new(MANIFEST).join("examples/falling.c"))
        .arg(static_lib())
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("the system C compiler `{cc}` did not start: {e}"));
    assert!(status.success(), "{cc} failed to build examples/falling.c");
    let out = Command::new(&exe).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    print!("{stdout}");
    assert!(
        out.status.success(),
        "falling exited {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );

    let (positions, hash) = rust_side();
    for (k, p) in positions.iter().enumerate() {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("body {k} ")))
            .unwrap_or_else(|| panic!("no line for body {k}"));
        let got: Vec<u32> = line
            .split_whitespace()
            .skip(2)
            .take(3)
            .map(|h| u32::from_str_radix(h, 16).unwrap())
            .collect();
        assert_eq!(
            got,
            p.to_array().map(f32::to_bits),
            "body {k}: C printed {line}, Rust has {p}"
        );
    }
    assert!(
        stdout.contains(&format!("state_hash {hash:016x}")),
        "Rust's hash is {hash:016x}"
    );
    // Not a trivial scene: the ball rolled 4.5 m into the stack and pushed
    // its bottom box aside, and the stack still stands (each box within
    // 5 cm of its starting height).
    assert!(positions[4].x > -1.0, "the ball: {}", positions[4]);
    assert!(
        positions[0].x > 0.1,
        "the bottom box was pushed: {}",
        positions[0]
    );
    for (i, p) in positions[..4].iter().enumerate() {
        assert!((p.y - (0.5 + i as f32)).abs() < 0.05, "box {i} at {p}");
    }
    assert!(
        stdout.contains("-byte snapshot, same state_hash"),
        "the C rollback did not reproduce the state"
    );
    for refused in [
        "corrupted snapshot: the snapshot is truncated, corrupted or malformed",
        "stale id: unknown or stale body id",
        "null output: a required pointer is NULL",
    ] {
        assert!(stdout.contains(refused), "{refused}");
    }
    std::fs::remove_dir_all(&out_dir).unwrap();
}
