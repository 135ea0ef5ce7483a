//! The stepping thread: a live world (or a recording played back) driven
//! by the page's commands, publishing one [`Snapshot`] per tick for every
//! connection to send from.

use crate::protocol::{
    self, AabbRecord, BodyRecord, BodyState, ContactRecord, TableEntry, NO_ISLAND, NO_SPLIT,
};
use crate::record::{Recorder, Recording};
use archipelago::{
    scenes, BodyCreationSettings, BodyId, MotionType, PhysicsSettings, PhysicsSystem, QueryFilter,
    Ray, Shape, StepStats, Vec3,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The page's clock: one tick per display frame at 60 Hz; at speed 1 a
/// tick is one step of the scenes' 1/60 s, i.e. real time.
const TICK: Duration = Duration::from_micros(16_667);
/// Balls shot from the camera kept at once; the oldest goes when another
/// is shot (the world is created with room for them).
pub const MAX_SHOTS: usize = 64;
const SHOT_RADIUS: f32 = 0.3;
/// m/s along the camera ray.
const SHOT_SPEED: f32 = 30.0;
/// kg/m³: steel, so a ball knocks cubes of water density over.
const SHOT_DENSITY: f32 = 7800.0;
const PICK_DISTANCE: f32 = 1000.0;

/// What a page can ask for (parsed from its JSON text messages).
#[derive(Debug)]
pub enum Command {
    Play,
    Pause,
    /// Steps `n` more, then pauses.
    Step(u32),
    /// Steps per tick (0.25 = a step every 4 ticks).
    Speed(f32),
    /// Plays until the scene's step count reaches this, then pauses.
    RunTo(u32),
    Scene(String),
    Reset,
    Shoot {
        origin: Vec3,
        direction: Vec3,
    },
    /// Answered on `reply` with a JSON `pick` message.
    Pick {
        origin: Vec3,
        direction: Vec3,
        reply: Sender<String>,
    },
    /// What frames carry besides poses.
    Draw {
        contacts: bool,
        aabbs: bool,
    },
}

impl Command {
    /// Parses `{"cmd": ...}`; `Err` says why not (sent back to the page).
    pub fn parse(text: &str, reply: &Sender<String>) -> Result<Self, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let vec3 = |key: &str| -> Result<Vec3, String> {
            let a = v[key].as_array().filter(|a| a.len() == 3);
            let a = a.ok_or_else(|| format!("`{key}` must be [x, y, z]"))?;
            let f = |k: usize| a[k].as_f64().map(|x| x as f32);
            match (f(0), f(1), f(2)) {
                (Some(x), Some(y), Some(z)) => Ok(Vec3::new(x, y, z)),
                _ => Err(format!("`{key}` must be numbers")),
            }
        };
        let num = |key: &str| {
            v[key]
                .as_f64()
                .ok_or_else(|| format!("`{key}` must be a number"))
        };
        Ok(match v["cmd"].as_str().unwrap_or("") {
            "play" => Self::Play,
            "pause" => Self::Pause,
            "step" => Self::Step(v["n"].as_u64().unwrap_or(1).min(10_000) as u32),
            "speed" => Self::Speed(num("value")?.clamp(0.01, 16.0) as f32),
            "run_to" => Self::RunTo(num("step")?.clamp(0.0, u32::MAX as f64) as u32),
            "scene" => Self::Scene(v["name"].as_str().unwrap_or("").to_string()),
            "reset" => Self::Reset,
            "shoot" => Self::Shoot {
                origin: vec3("origin")?,
                direction: vec3("direction")?,
            },
            "pick" => Self::Pick {
                origin: vec3("origin")?,
                direction: vec3("direction")?,
                reply: reply.clone(),
            },
            "draw" => Self::Draw {
                contacts: v["contacts"].as_bool().unwrap_or(false),
                aabbs: v["aabbs"].as_bool().unwrap_or(false),
            },
            other => return Err(format!("unknown command `{other}`")),
        })
    }
}

/// The latest state, shared with the connections.
#[derive(Default)]
pub struct Snapshot {
    /// Bumped at every publish.
    pub serial: u64,
    pub table_version: u32,
    /// The body table message (see `protocol::table_json`).
    pub table: Arc<String>,
    pub step: u32,
    /// Per table index; `None` for a body not in the world.
    pub records: Vec<Option<BodyRecord>>,
    /// Per table index: the serial at which its record last changed.
    pub changed_at: Vec<u64>,
    pub contacts: Vec<ContactRecord>,
    pub aabbs: Vec<AabbRecord>,
    /// The stats message (JSON text).
    pub stats: Arc<String>,
}

pub struct Shared {
    pub snapshot: Mutex<Snapshot>,
    pub published: Condvar,
    pub stop: AtomicBool,
}

impl Shared {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            snapshot: Mutex::new(Snapshot::default()),
            published: Condvar::new(),
            stop: AtomicBool::new(false),
        })
    }

    /// Publishes a new state: records that differ from the last published
    /// ones are marked changed (all of them when the table changed).
    fn publish(&self, state: &Published, stats: String) {
        let mut s = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        let serial = s.serial + 1;
        let new_table = s.table_version != state.table_version || s.serial == 0;
        s.records.resize(state.records.len(), None);
        s.changed_at.resize(state.records.len(), serial);
        for (i, r) in state.records.iter().enumerate() {
            let same = match (&s.records[i], r) {
                (Some(a), Some(b)) => a.same_bits(b),
                (None, None) => true,
                _ => false,
            };
            if new_table || !same {
                s.records[i] = *r;
                s.changed_at[i] = serial;
            }
        }
        s.serial = serial;
        s.table_version = state.table_version;
        s.table = state.table.clone();
        s.step = state.step;
        s.contacts.clone_from(&state.contacts);
        s.aabbs.clone_from(&state.aabbs);
        s.stats = Arc::new(stats);
        drop(s);
        self.published.notify_all();
    }
}

/// What a source publishes.
#[derive(Default)]
struct Published {
    table_version: u32,
    table: Arc<String>,
    step: u32,
    records: Vec<Option<BodyRecord>>,
    contacts: Vec<ContactRecord>,
    aabbs: Vec<AabbRecord>,
}

/// Bodies of the viewer's avalanche (`scenes::avalanche` takes any count;
/// this one steps at interactive rates on a few cores).
pub const AVALANCHE_BODIES: usize = 4096;

/// The scenes the viewer offers: `scenes::NAMES` and the avalanche.
pub fn scene_names() -> Vec<&'static str> {
    let mut names = scenes::NAMES.to_vec();
    names.push("avalanche");
    names
}

/// A standard scene as the viewer builds it: its capacities grown by room
/// for [`MAX_SHOTS`] balls (which changes no step: capacities bound
/// buffers, they do not order anything).
pub fn viewer_scene(name: &str) -> Option<scenes::Scene> {
    let mut scene = match name {
        "avalanche" => scenes::avalanche(AVALANCHE_BODIES),
        name => scenes::by_name(name)?,
    };
    let c = &mut scene.capacities;
    c.max_bodies += MAX_SHOTS;
    // A ball in a pile touches a dozen bodies; pairs have their margin.
    c.max_body_pairs += MAX_SHOTS * 32;
    c.max_contact_constraints += MAX_SHOTS * 16;
    Some(scene)
}

/// The viewer's scene `name` and its world.
fn build(name: &str) -> Result<(scenes::Scene, PhysicsSystem, Vec<BodyId>), String> {
    let scene = viewer_scene(name)
        .ok_or_else(|| format!("no scene `{name}` (scenes: {})", scene_names().join(", ")))?;
    let (world, ids) = scene
        .build(PhysicsSettings::default())
        .map_err(|e| e.to_string())?;
    Ok((scene, world, ids))
}

/// A scene being simulated.
pub struct Live {
    scene: scenes::Scene,
    world: PhysicsSystem,
    /// Per table index: the body (stale once removed).
    ids: Vec<BodyId>,
    index_of: HashMap<BodyId, u32>,
    table: Vec<Option<TableEntry>>,
    /// Table indices of the shot balls, oldest first.
    shots: std::collections::VecDeque<u32>,
    pool: archipelago::ThreadPool,
    threads: usize,
    draw: (bool, bool),
    out: Published,
    stats: StepStats,
    recorder: Option<Recorder>,
}

impl Live {
    pub fn new(
        scene_name: &str,
        threads: Option<usize>,
        record: Option<Recorder>,
    ) -> Result<Self, String> {
        let pinned = archipelago::build_pinned_pool(threads).map_err(|e| e.to_string())?;
        let threads = pinned.pool.current_num_threads();
        let (scene, world, ids) = build(scene_name)?;
        let mut live = Self {
            scene,
            world,
            ids,
            index_of: HashMap::new(),
            table: Vec::new(),
            shots: Default::default(),
            pool: pinned.pool,
            threads,
            draw: (false, false),
            out: Published::default(),
            stats: StepStats::default(),
            recorder: record,
        };
        live.start();
        Ok(live)
    }

    /// Builds `name`'s world afresh, with room for the shot balls.
    fn load(&mut self, name: &str) -> Result<(), String> {
        (self.scene, self.world, self.ids) = build(name)?;
        self.start();
        Ok(())
    }

    /// The bookkeeping of a freshly built world: its table, step 0.
    fn start(&mut self) {
        self.table = self
            .scene
            .bodies
            .iter()
            .map(|b| {
                Some(TableEntry {
                    shape: b.shape,
                    motion: b.motion_type,
                })
            })
            .collect();
        self.index_of = self
            .ids
            .iter()
            .enumerate()
            .map(|(k, &id)| (id, k as u32))
            .collect();
        self.shots.clear();
        self.stats = StepStats::default();
        self.out.step = 0;
        self.table_changed();
        self.gather();
        if let Some(r) = &mut self.recorder {
            r.frame(0, self.out.table_version, &self.out.records);
        }
    }

    fn table_changed(&mut self) {
        self.out.table_version += 1;
        self.out.table = Arc::new(protocol::table_json(
            self.out.table_version,
            self.scene.name,
            &self.table,
            self.world.shapes(),
        ));
        if let Some(r) = &mut self.recorder {
            r.table(&self.out.table);
        }
    }

    pub fn world(&self) -> &PhysicsSystem {
        &self.world
    }

    pub fn ids(&self) -> &[BodyId] {
        &self.ids
    }

    fn step(&mut self) {
        let done = self.out.step;
        // A scene's own script (late bodies) cannot fail on a world it built.
        let _ = self.scene.before_update(&mut self.world, &self.ids, done);
        match self.world.update(scenes::DT, 1, &self.pool) {
            Ok(stats) => self.stats = stats,
            Err(e) => eprintln!("viewer: update refused: {e}"),
        }
        self.out.step = done + 1;
        self.gather();
        if let Some(r) = &mut self.recorder {
            r.frame(self.out.step, self.out.table_version, &self.out.records);
        }
    }

    /// Reads the world into `out`: every body's record, with its island and
    /// split from the solver's view of the last step.
    fn gather(&mut self) {
        let w = &self.world;
        let mut placed: HashMap<u32, (u32, u8)> = HashMap::new();
        let mut pair_split: HashMap<(BodyId, BodyId), u8> = HashMap::new();
        for c in w.solver_constraints() {
            let split = c.split.unwrap_or(NO_SPLIT);
            for b in [c.body_a, c.body_b].into_iter().flatten() {
                if let Some(&i) = self.index_of.get(&b) {
                    // A body's constraints share its island, and are all
                    // split or none is.
                    let e = placed.entry(i).or_insert((c.island, split));
                    e.1 = e.1.max(split);
                }
            }
            if let (Some(a), Some(b), None) = (c.body_a, c.body_b, c.joint) {
                if self.draw.0 {
                    pair_split.insert((a, b), split);
                }
            }
        }
        let records = self.ids.iter().enumerate().map(|(k, &id)| {
            if self.table[k].is_none() || !w.is_added(id).unwrap_or(false) {
                return None;
            }
            let state = match (w.motion_type(id).ok()?, w.is_sleeping(id).ok()?) {
                (MotionType::Dynamic, false) => BodyState::Awake,
                (MotionType::Dynamic, true) => BodyState::Sleeping,
                _ => BodyState::Fixed,
            };
            let (island, split) = match state {
                BodyState::Awake => placed
                    .get(&(k as u32))
                    .copied()
                    .unwrap_or((NO_ISLAND, NO_SPLIT)),
                _ => (NO_ISLAND, NO_SPLIT),
            };
            Some(BodyRecord {
                index: k as u32,
                position: w.position(id).ok()?,
                rotation: w.rotation(id).ok()?,
                state,
                split,
                island,
            })
        });
        self.out.records.clear();
        self.out.records.extend(records);
        self.out.contacts.clear();
        if self.draw.0 {
            for c in w.contacts() {
                let split = pair_split
                    .get(&(c.body_a, c.body_b))
                    .copied()
                    .unwrap_or(NO_SPLIT);
                for p in c.points() {
                    self.out.contacts.push(ContactRecord {
                        position: p.position,
                        normal: c.normal,
                        split,
                    });
                }
            }
        }
        self.out.aabbs.clear();
        if self.draw.1 {
            for (k, r) in self.out.records.iter().enumerate() {
                if r.is_some() {
                    if let Ok((min, max)) = w.world_aabb(self.ids[k]) {
                        self.out.aabbs.push(AabbRecord {
                            index: k as u32,
                            min,
                            max,
                        });
                    }
                }
            }
        }
    }

    fn shoot(&mut self, origin: Vec3, direction: Vec3) -> Result<(), String> {
        let dir = direction.normalize_or_zero();
        if dir == Vec3::ZERO || !origin.is_finite() {
            return Err("shoot: no direction".into());
        }
        if self.shots.len() >= MAX_SHOTS {
            let oldest = self.shots.pop_front().unwrap_or(0);
            let id = self.ids[oldest as usize];
            let _ = self.world.destroy_body(id);
            self.index_of.remove(&id);
            self.table[oldest as usize] = None;
        }
        let shape = Shape::sphere(SHOT_RADIUS).map_err(|e| e.to_string())?;
        let ball = BodyCreationSettings::new(shape, origin, MotionType::Dynamic)
            .with_density(SHOT_DENSITY)
            .with_linear_velocity(dir * SHOT_SPEED);
        let id = self
            .world
            .create_and_add_body(&ball)
            .map_err(|e| format!("shoot: {e}"))?;
        let k = self.ids.len() as u32;
        self.ids.push(id);
        self.index_of.insert(id, k);
        self.table.push(Some(TableEntry {
            shape,
            motion: MotionType::Dynamic,
        }));
        self.shots.push_back(k);
        self.table_changed();
        self.gather();
        Ok(())
    }

    fn pick(&self, origin: Vec3, direction: Vec3) -> String {
        let w = &self.world;
        let hit = Ray::new(origin, direction, PICK_DISTANCE)
            .ok()
            .and_then(|ray| w.cast_ray(&ray, &QueryFilter::default()));
        let Some(hit) = hit else {
            return serde_json::json!({"type": "pick", "hit": false}).to_string();
        };
        let id = hit.body;
        let k = self.index_of.get(&id).copied();
        let record = k.and_then(|k| self.out.records.get(k as usize).copied().flatten());
        let v = w.linear_velocity(id).unwrap_or(Vec3::ZERO);
        let av = w.angular_velocity(id).unwrap_or(Vec3::ZERO);
        serde_json::json!({
            "type": "pick",
            "hit": true,
            "index": k,
            "id": format!("{id:?}"),
            "point": hit.point.to_array(),
            "distance": hit.distance,
            "velocity": v.to_array(),
            "angular_velocity": av.to_array(),
            "mass": w.mass(id).ok().filter(|m| m.is_finite()),
            "island": record.map(|r| r.island).filter(|&i| i != NO_ISLAND),
            "split": record.map(|r| r.split).filter(|&s| s != NO_SPLIT),
            "state": record.map(|r| format!("{:?}", r.state)),
        })
        .to_string()
    }

    fn stats_json(&self, playing: bool, speed: f32) -> String {
        let s = &self.stats;
        let phases: Vec<_> = s
            .times
            .named()
            .iter()
            .map(|(name, d)| serde_json::json!([name, d.as_secs_f64() * 1e3]))
            .collect();
        serde_json::json!({
            "type": "stats",
            "mode": "live",
            "scene": self.scene.name,
            "scenes": scene_names(),
            "step": self.out.step,
            "playing": playing,
            "speed": speed,
            "threads": self.threads,
            "simd": format!("{:?}", self.world.simd_path()),
            "bodies": self.world.num_bodies(),
            "active": s.active_bodies,
            "islands": s.islands,
            "large_islands": s.large_islands,
            "sleeping_islands": s.sleeping_islands,
            "contacts": s.manifolds,
            "contact_points": s.contact_points,
            "joints": self.world.num_joints(),
            "ms": s.total.as_secs_f64() * 1e3,
            "phases": phases,
            "hash": format!("{:016x}", self.world.state_hash()),
        })
        .to_string()
    }
}

/// A recording played back: the same snapshots the live run published.
pub struct Replay {
    recording: Recording,
    /// Next chunk to apply.
    next: usize,
    out: Published,
    scene: String,
}

impl Replay {
    pub fn new(recording: Recording) -> Self {
        let mut r = Self {
            recording,
            next: 0,
            out: Published::default(),
            scene: String::new(),
        };
        r.rewind();
        r
    }

    fn rewind(&mut self) {
        self.next = 0;
        self.out = Published::default();
        // The first frame (step 0) and the table before it.
        self.advance();
    }

    /// Applies chunks up to and including the next frame; false at the end.
    fn advance(&mut self) -> bool {
        use crate::record::Chunk;
        while let Some(chunk) = self.recording.chunks.get(self.next) {
            self.next += 1;
            match chunk {
                Chunk::Table(json) => {
                    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
                    self.scene = v["scene"].as_str().unwrap_or("").to_string();
                    self.out.table_version = v["version"].as_u64().unwrap_or(0) as u32;
                    self.out.table = Arc::new(json.clone());
                }
                Chunk::Frame(f) => {
                    if f.table_version != self.out.table_version {
                        self.out.records.clear();
                    }
                    self.out.step = f.step;
                    for b in &f.bodies {
                        let i = b.index as usize;
                        if self.out.records.len() <= i {
                            self.out.records.resize(i + 1, None);
                        }
                        self.out.records[i] = Some(*b);
                    }
                    return true;
                }
            }
        }
        false
    }

    fn stats_json(&self, playing: bool, speed: f32) -> String {
        let live = self
            .out
            .records
            .iter()
            .flatten()
            .filter(|r| r.state == BodyState::Awake)
            .count();
        serde_json::json!({
            "type": "stats",
            "mode": "replay",
            "scene": self.scene,
            "scenes": [],
            "step": self.out.step,
            "steps": self.recording.frames(),
            "playing": playing,
            "speed": speed,
            "bodies": self.out.records.iter().flatten().count(),
            "active": live,
        })
        .to_string()
    }
}

pub enum Source {
    Live(Box<Live>),
    Replay(Box<Replay>),
}

impl Source {
    fn published(&self) -> &Published {
        match self {
            Source::Live(l) => &l.out,
            Source::Replay(r) => &r.out,
        }
    }

    /// One step; false when there is nothing more to play.
    fn step(&mut self) -> bool {
        match self {
            Source::Live(l) => {
                l.step();
                true
            }
            Source::Replay(r) => r.advance(),
        }
    }

    fn stats_json(&self, playing: bool, speed: f32) -> String {
        match self {
            Source::Live(l) => l.stats_json(playing, speed),
            Source::Replay(r) => r.stats_json(playing, speed),
        }
    }

    pub fn flush(&mut self) {
        if let Source::Live(l) = self {
            if let Some(r) = &mut l.recorder {
                r.flush();
            }
        }
    }
}

/// The stepping loop: runs until `shared.stop` is set.
pub fn run(shared: Arc<Shared>, commands: Receiver<Command>, mut source: Source, playing: bool) {
    let mut playing = playing;
    let mut speed = 1.0f32;
    let mut owed = 0.0f32;
    let mut to_step = 0u32;
    let mut run_to: Option<u32> = None;
    shared.publish(source.published(), source.stats_json(playing, speed));
    let mut next_tick = Instant::now() + TICK;
    while !shared.stop.load(Ordering::Relaxed) {
        let mut dirty = false;
        loop {
            let wait = next_tick.saturating_duration_since(Instant::now());
            let cmd = match commands.recv_timeout(wait) {
                Ok(c) => c,
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(wait);
                    break;
                }
            };
            dirty = true;
            match cmd {
                Command::Play => (playing, run_to) = (true, None),
                Command::Pause => (playing, to_step, run_to) = (false, 0, None),
                Command::Step(n) => (playing, to_step) = (false, to_step.saturating_add(n)),
                Command::Speed(s) => speed = s,
                Command::RunTo(step) => (playing, run_to) = (true, Some(step)),
                Command::Reset | Command::Scene(_) => {
                    let name = match (&cmd, &source) {
                        (Command::Scene(n), _) => Some(n.clone()),
                        (_, Source::Live(l)) => Some(l.scene.name.to_string()),
                        _ => None,
                    };
                    match (&mut source, name) {
                        (Source::Live(l), Some(name)) => {
                            if let Err(e) = l.load(&name) {
                                eprintln!("viewer: {e}");
                            }
                        }
                        (Source::Replay(r), _) => r.rewind(),
                        _ => {}
                    }
                    (to_step, owed) = (0, 0.0);
                }
                Command::Shoot { origin, direction } => {
                    if let Source::Live(l) = &mut source {
                        if let Err(e) = l.shoot(origin, direction) {
                            eprintln!("viewer: {e}");
                        }
                    }
                }
                Command::Pick {
                    origin,
                    direction,
                    reply,
                } => {
                    let answer = match &source {
                        Source::Live(l) => l.pick(origin, direction),
                        Source::Replay(_) => {
                            serde_json::json!({"type": "pick", "hit": false, "replay": true})
                                .to_string()
                        }
                    };
                    let _ = reply.send(answer);
                }
                Command::Draw { contacts, aabbs } => {
                    if let Source::Live(l) = &mut source {
                        l.draw = (contacts, aabbs);
                        l.gather();
                    }
                }
            }
        }
        next_tick += TICK;
        let now = Instant::now();
        if next_tick < now {
            // Steps take longer than a tick: do not try to catch up.
            next_tick = now + TICK;
        }
        let mut steps = std::mem::take(&mut to_step);
        if playing {
            owed += speed;
            steps += owed as u32;
            owed -= (owed as u32) as f32;
        }
        for _ in 0..steps {
            if run_to.is_some_and(|t| source.published().step >= t) {
                (playing, run_to) = (false, None);
                break;
            }
            if !source.step() {
                playing = false;
                break;
            }
            dirty = true;
        }
        if run_to.is_some_and(|t| source.published().step >= t) {
            (playing, run_to) = (false, None);
            dirty = true;
        }
        if dirty {
            shared.publish(source.published(), source.stats_json(playing, speed));
        }
    }
    source.flush();
}
