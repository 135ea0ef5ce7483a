//! The viewer's server end to end: the page and its scripts are served,
//! streamed poses are the kernel's own bits after the same steps, frames
//! carry only what changed, commands answer, and a recording plays back
//! the poses it recorded.

mod common;

use archipelago::{scenes, BodyId, PhysicsSettings, PhysicsSystem};
use archipelago_viewer::protocol::{BodyState, ReceivedState};
use archipelago_viewer::record::{Chunk, Recording};
use archipelago_viewer::{sim, Options, Viewer};
use common::{get, Client};
use serde_json::json;

fn paused(scene: &str) -> Options {
    Options {
        scene: scene.into(),
        threads: Some(2),
        paused: true,
        ..Options::default()
    }
}

/// The scene as the viewer builds it, stepped here on a pool of our own.
struct Reference {
    scene: scenes::Scene,
    world: PhysicsSystem,
    ids: Vec<BodyId>,
    pool: archipelago::ThreadPool,
    steps: u32,
}

impl Reference {
    fn new(name: &str) -> Self {
        let scene = sim::viewer_scene(name).unwrap();
        let (world, ids) = scene.build(PhysicsSettings::default()).unwrap();
        let pool = archipelago::build_pinned_pool(Some(1)).unwrap().pool;
        Self {
            scene,
            world,
            ids,
            pool,
            steps: 0,
        }
    }

    fn step_to(&mut self, n: u32) {
        while self.steps < n {
            self.scene
                .before_update(&mut self.world, &self.ids, self.steps)
                .unwrap();
            self.world.update(scenes::DT, 1, &self.pool).unwrap();
            self.steps += 1;
        }
    }

    /// Every body in the world has a record with its exact pose and state;
    /// the others have none. Returns how many bodies were compared.
    fn assert_matches(&self, got: &ReceivedState) -> usize {
        let mut compared = 0;
        for (k, &id) in self.ids.iter().enumerate() {
            let rec = got.bodies.get(k).copied().flatten();
            if !self.world.is_added(id).unwrap() {
                assert!(rec.is_none(), "body {k} is not in the world");
                continue;
            }
            let rec = rec.unwrap_or_else(|| panic!("no record of body {k}"));
            let (p, q) = (
                self.world.position(id).unwrap(),
                self.world.rotation(id).unwrap(),
            );
            assert_eq!(
                rec.position.to_array().map(f32::to_bits),
                p.to_array().map(f32::to_bits),
                "body {k} position at step {}",
                self.steps
            );
            assert_eq!(
                rec.rotation.to_array().map(f32::to_bits),
                q.to_array().map(f32::to_bits),
                "body {k} rotation at step {}",
                self.steps
            );
            let sleeping = self.world.is_sleeping(id).unwrap();
            if rec.state != BodyState::Fixed {
                assert_eq!(rec.state == BodyState::Sleeping, sleeping, "body {k} state");
            }
            compared += 1;
        }
        compared
    }
}

#[test]
fn serves_the_page_and_its_scripts() {
    let v = Viewer::start(&paused("pyramid")).unwrap();
    assert_ne!(v.port, 0);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/static/");
    for (path, file) in [
        ("/", "index.html"),
        ("/viewer.js", "viewer.js"),
        ("/vendor/three.module.min.js", "vendor/three.module.min.js"),
        ("/vendor/OrbitControls.js", "vendor/OrbitControls.js"),
        ("/vendor/LICENSE-three.txt", "vendor/LICENSE-three.txt"),
    ] {
        let (status, body) = get(v.port, path);
        assert_eq!(status, 200, "{path}");
        assert_eq!(
            body,
            std::fs::read(format!("{dir}{file}")).unwrap(),
            "{path}"
        );
    }
    let (_, page) = get(v.port, "/");
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("/vendor/three.module.min.js") && page.contains("/viewer.js"));
    assert_eq!(get(v.port, "/nothing-here").0, 404);
}

#[test]
fn streamed_poses_are_the_kernels_after_the_same_steps() {
    let v = Viewer::start(&paused("pyramid")).unwrap();
    let mut c = Client::connect(v.port);
    let table = c.until_text("table");
    assert_eq!(table["scene"], "pyramid");
    assert_eq!(table["bodies"].as_array().unwrap().len(), 1241);
    let first = c.until_frame(|f| f.step == 0);
    assert_eq!(first.bodies.len(), 1241, "the first frame is whole");
    let mut reference = Reference::new("pyramid");
    assert_eq!(reference.assert_matches(&c.state), 1241);
    for target in [1, 10, 45] {
        let n = target - reference.steps;
        c.send(json!({"cmd": "step", "n": n}));
        let f = c.until_frame(|f| f.step == target);
        // Only what moved comes again: never the static floor, nor the
        // bottom layer once it rests on it (its poses keep their bits);
        // the rest is checked by the poses matching after the deltas.
        assert!(
            f.bodies.iter().all(|r| r.index != 0),
            "step {target}: the floor resent"
        );
        assert!(
            f.bodies.len() < 1241 && !f.bodies.is_empty(),
            "step {target}: {}",
            f.bodies.len()
        );
        reference.step_to(target);
        assert_eq!(reference.assert_matches(&c.state), 1241);
        let stats = c.until_text("stats");
        assert_eq!(stats["step"], target);
        assert_eq!(
            stats["hash"],
            format!("{:016x}", reference.world.state_hash()),
            "the page shows the state hash of the same state"
        );
    }
    let stats = c.texts.iter().rev().find(|t| t["type"] == "stats").unwrap();
    assert_eq!(stats["bodies"], 1241);
    assert_eq!(stats["threads"], 2);
    assert_eq!(stats["phases"].as_array().unwrap().len(), 12);
    // The landed pyramid is one island, split: the records say so.
    let awake: Vec<_> = c
        .state
        .bodies
        .iter()
        .flatten()
        .filter(|r| r.state == BodyState::Awake)
        .collect();
    assert_eq!(awake.len(), 1240);
    assert!(awake
        .iter()
        .any(|r| r.split != archipelago_viewer::protocol::NO_SPLIT));
}

#[test]
fn commands_answer_and_bad_ones_say_why() {
    let v = Viewer::start(&paused("pyramid")).unwrap();
    let mut c = Client::connect(v.port);
    c.until_frame(|f| f.step == 0);
    c.send(json!({"cmd": "warp"}));
    let e = c.until_text("error");
    assert!(e["message"].as_str().unwrap().contains("warp"), "{e}");
    c.send(json!({"cmd": "shoot", "origin": [0, 1]}));
    c.until_text("error");
    // Straight down onto the pyramid's top cube (centre (-1, 36, -1)).
    c.send(json!({"cmd": "pick", "origin": [-1.0, 60.0, -1.0], "direction": [0.0, -1.0, 0.0]}));
    let p = c.until_text("pick");
    assert_eq!(p["hit"], true, "{p}");
    assert!((p["distance"].as_f64().unwrap() - 23.0).abs() < 1e-3, "{p}");
    assert_eq!(p["index"], 1240, "the last cube is the top one: {p}");
    c.send(json!({"cmd": "pick", "origin": [0.0, 60.0, 0.0], "direction": [0.0, 1.0, 0.0]}));
    assert_eq!(c.until_text("pick")["hit"], false);
    // A shot adds a body (a new table), which then moves.
    c.send(json!({"cmd": "shoot", "origin": [0.0, 50.0, 40.0], "direction": [0.0, 0.0, -1.0]}));
    let t = c.until_text("table");
    assert_eq!(t["bodies"].as_array().unwrap().len(), 1242);
    assert_eq!(
        t["bodies"][1241],
        json!(["sphere", 0.3f32 as f64, "dynamic"])
    );
    c.send(json!({"cmd": "step", "n": 3}));
    c.until_frame(|f| f.step == 3);
    let ball = c.state.bodies[1241].unwrap();
    assert!(ball.position.z < 40.0 - 1.0, "{:?}", ball.position);
    // A scene by name, and the stats say so.
    c.send(json!({"cmd": "scene", "name": "towers"}));
    let t = c.until_text("table");
    assert_eq!(t["scene"], "towers");
    let stats = c.until_text("stats");
    let offered = stats["scenes"].as_array().unwrap().clone();
    assert_eq!(offered.len(), archipelago::scenes::NAMES.len() + 1);
    c.send(json!({"cmd": "scene", "name": "avalanche"}));
    let t = c.until_text("table");
    assert_eq!(t["scene"], "avalanche");
    assert_eq!(t["bodies"].as_array().unwrap().len(), 4097);
    assert!(offered.contains(&json!("avalanche")));
}

#[test]
fn a_recording_plays_back_the_poses_it_recorded() {
    let dir = std::env::temp_dir().join(format!("archipelago-viewer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sleep_tower.rec");
    const STEPS: u32 = 150;
    {
        let v = Viewer::start(&Options {
            record: Some(file.clone()),
            ..paused("sleep_tower")
        })
        .unwrap();
        let mut c = Client::connect(v.port);
        c.send(json!({"cmd": "step", "n": STEPS}));
        c.until_frame(|f| f.step == STEPS);
    } // dropping the viewer ends the stepping thread, which flushes the file
    let rec = Recording::open(&file).unwrap();
    assert_eq!(
        rec.frames(),
        STEPS as usize + 1,
        "step 0 and every step after"
    );
    // Applied in order, the frames are the kernel's poses at every step.
    let mut reference = Reference::new("sleep_tower");
    let mut state = ReceivedState::default();
    let mut last_len = usize::MAX;
    for chunk in &rec.chunks {
        let Chunk::Frame(f) = chunk else { continue };
        state.apply(f);
        reference.step_to(f.step);
        reference.assert_matches(&state);
        last_len = f.bodies.len();
    }
    assert_eq!(reference.steps, STEPS);
    // The tower fell asleep within the run: its last frames are empty.
    assert!(reference.world.num_active_bodies() == 0, "the tower sleeps");
    assert_eq!(last_len, 0, "a sleeping scene records nothing per step");

    // Played by the viewer, the page gets the same poses.
    let v = Viewer::start(&Options {
        replay: Some(file.clone()),
        paused: true,
        ..Options::default()
    })
    .unwrap();
    let mut c = Client::connect(v.port);
    c.until_frame(|f| f.step == 0);
    c.send(json!({"cmd": "step", "n": 40}));
    c.until_frame(|f| f.step == 40);
    let mut at40 = Reference::new("sleep_tower");
    at40.step_to(40);
    at40.assert_matches(&c.state);
    c.send(json!({"cmd": "step", "n": 1000}));
    c.until_frame(|f| f.step == STEPS);
    reference.assert_matches(&c.state);
    let stats = c.until_text("stats");
    assert_eq!(stats["mode"], "replay");
    drop(v);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_recording_that_is_not_one_is_refused() {
    assert!(Recording::parse(b"hello").is_err());
    let mut bytes = archipelago_viewer::record::MAGIC.to_vec();
    bytes.extend_from_slice(&1u32.to_le_bytes());
    assert_eq!(Recording::parse(&bytes).unwrap().frames(), 0);
    bytes.extend_from_slice(&[b'F', 200, 0, 0, 0, 1]);
    assert!(Recording::parse(&bytes).unwrap_err().contains("truncated"));
    let missing = Viewer::start(&Options {
        replay: Some("/nonexistent/run.rec".into()),
        ..Options::default()
    });
    assert!(missing.is_err());
}
