//! What travels from the simulation to the page, and into a recording: the
//! body table (a JSON text message, sent when bodies are added or removed)
//! and frames (binary, little endian), which carry only the bodies whose
//! record changed since the frame the receiver saw last: awake bodies every
//! step, a body that fell asleep once.
//!
//! Frame layout (`FRAME_TAG` first):
//!
//! | field | type |
//! |---|---|
//! | tag | `u8` = 1 |
//! | step of the scene | `u32` |
//! | table version | `u32` |
//! | body records | `u32` count, then `BODY_RECORD_BYTES` each |
//! | contact points | `u32` count, then `CONTACT_RECORD_BYTES` each |
//! | boxes (AABBs) | `u32` count, then `AABB_RECORD_BYTES` each |
//!
//! A body record is its table index `u32`, position `3 × f32`, rotation
//! `4 × f32` (x, y, z, w), state `u8` (see [`BodyState`]), split `u8`
//! ([`NO_SPLIT`] when its island was not split), 2 bytes of padding and
//! island `u32` ([`NO_ISLAND`]). Poses are the kernel's `f32`s bit for bit:
//! at 40 bytes a body, a pyramid frame is 50 KB, 3 MB/s at 60 frames/s,
//! which a loopback or an SSH tunnel carries without quantising.

use archipelago::{MotionType, Quat, Shape, ShapeStore, Vec3};

pub const FRAME_TAG: u8 = 1;
pub const BODY_RECORD_BYTES: usize = 40;
pub const CONTACT_RECORD_BYTES: usize = 28;
pub const AABB_RECORD_BYTES: usize = 28;
pub const NO_SPLIT: u8 = u8::MAX;
pub const NO_ISLAND: u32 = u32::MAX;

/// A body's state in a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum BodyState {
    /// Static or kinematic: never simulated.
    Fixed = 0,
    Awake = 1,
    Sleeping = 2,
}

impl BodyState {
    fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => Self::Fixed,
            1 => Self::Awake,
            2 => Self::Sleeping,
            _ => return None,
        })
    }
}

/// One body in a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyRecord {
    /// Index in the body table.
    pub index: u32,
    pub position: Vec3,
    pub rotation: Quat,
    pub state: BodyState,
    /// The highest split among the body's constraints in the last step
    /// (the greedy colouring gives a body's constraints the lowest free
    /// splits in turn, so this is how far up they had to go; 31 when one
    /// landed in the non-parallel split), when its island was split; else
    /// [`NO_SPLIT`]. Each contact's own split is in its [`ContactRecord`].
    pub split: u8,
    /// Its island in the last step; [`NO_ISLAND`] when it touched nothing
    /// or sleeps.
    pub island: u32,
}

impl BodyRecord {
    /// Bit-exact equality (what "changed" means for a delta frame).
    pub fn same_bits(&self, o: &Self) -> bool {
        let bits = |r: &Self| {
            let p = r.position.to_array().map(f32::to_bits);
            let q = r.rotation.to_array().map(f32::to_bits);
            (p, q, r.state as u8, r.split, r.island)
        };
        bits(self) == bits(o)
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.index.to_le_bytes());
        for v in self
            .position
            .to_array()
            .into_iter()
            .chain(self.rotation.to_array())
        {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&[self.state as u8, self.split, 0, 0]);
        out.extend_from_slice(&self.island.to_le_bytes());
    }

    pub fn read(r: &mut Reader) -> Option<Self> {
        let index = r.u32()?;
        let mut f = [0f32; 7];
        for v in &mut f {
            *v = r.f32()?;
        }
        let head = r.bytes(4)?;
        let (state, split) = (BodyState::from_u8(head[0])?, head[1]);
        let island = r.u32()?;
        Some(Self {
            index,
            position: Vec3::new(f[0], f[1], f[2]),
            rotation: Quat::from_xyzw(f[3], f[4], f[5], f[6]),
            state,
            split,
            island,
        })
    }
}

/// A contact point to draw: where, the manifold's normal, and the split of
/// its manifold ([`NO_SPLIT`] if none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactRecord {
    pub position: Vec3,
    pub normal: Vec3,
    pub split: u8,
}

/// A body's world box, to draw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AabbRecord {
    pub index: u32,
    pub min: Vec3,
    pub max: Vec3,
}

/// A decoded frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frame {
    pub step: u32,
    pub table_version: u32,
    pub bodies: Vec<BodyRecord>,
    pub contacts: Vec<ContactRecord>,
    pub aabbs: Vec<AabbRecord>,
}

fn put_vec3(out: &mut Vec<u8>, v: Vec3) {
    for x in v.to_array() {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// Encodes a frame of `bodies` (already chosen: all, or the changed ones).
pub fn encode_frame<'a>(
    step: u32,
    table_version: u32,
    bodies: impl ExactSizeIterator<Item = &'a BodyRecord>,
    contacts: &[ContactRecord],
    aabbs: &[AabbRecord],
    out: &mut Vec<u8>,
) {
    out.clear();
    out.reserve(
        13 + bodies.len() * BODY_RECORD_BYTES
            + 4
            + contacts.len() * CONTACT_RECORD_BYTES
            + 4
            + aabbs.len() * AABB_RECORD_BYTES,
    );
    out.push(FRAME_TAG);
    out.extend_from_slice(&step.to_le_bytes());
    out.extend_from_slice(&table_version.to_le_bytes());
    out.extend_from_slice(&(bodies.len() as u32).to_le_bytes());
    for b in bodies {
        b.write(out);
    }
    out.extend_from_slice(&(contacts.len() as u32).to_le_bytes());
    for c in contacts {
        put_vec3(out, c.position);
        put_vec3(out, c.normal);
        out.extend_from_slice(&[c.split, 0, 0, 0]);
    }
    out.extend_from_slice(&(aabbs.len() as u32).to_le_bytes());
    for a in aabbs {
        out.extend_from_slice(&a.index.to_le_bytes());
        put_vec3(out, a.min);
        put_vec3(out, a.max);
    }
}

/// Decodes a frame; `None` for anything malformed or truncated.
pub fn decode_frame(bytes: &[u8]) -> Option<Frame> {
    let mut r = Reader { bytes, at: 0 };
    if r.bytes(1)?[0] != FRAME_TAG {
        return None;
    }
    let step = r.u32()?;
    let table_version = r.u32()?;
    let n = r.count(BODY_RECORD_BYTES)?;
    let bodies = (0..n)
        .map(|_| BodyRecord::read(&mut r))
        .collect::<Option<_>>()?;
    let n = r.count(CONTACT_RECORD_BYTES)?;
    let contacts = (0..n)
        .map(|_| {
            let (position, normal) = (r.vec3()?, r.vec3()?);
            let split = r.bytes(4)?[0];
            Some(ContactRecord {
                position,
                normal,
                split,
            })
        })
        .collect::<Option<_>>()?;
    let n = r.count(AABB_RECORD_BYTES)?;
    let aabbs = (0..n)
        .map(|_| {
            Some(AabbRecord {
                index: r.u32()?,
                min: r.vec3()?,
                max: r.vec3()?,
            })
        })
        .collect::<Option<_>>()?;
    (r.at == bytes.len()).then_some(Frame {
        step,
        table_version,
        bodies,
        contacts,
        aabbs,
    })
}

/// A little-endian cursor that answers `None` past the end.
pub struct Reader<'a> {
    pub bytes: &'a [u8],
    pub at: usize,
}

impl<'a> Reader<'a> {
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }
    pub fn f32(&mut self) -> Option<f32> {
        Some(f32::from_bits(self.u32()?))
    }
    fn vec3(&mut self) -> Option<Vec3> {
        Some(Vec3::new(self.f32()?, self.f32()?, self.f32()?))
    }
    /// A count of records of `size` bytes that the rest can hold.
    fn count(&mut self, size: usize) -> Option<usize> {
        let n = self.u32()? as usize;
        (n.checked_mul(size)? <= self.bytes.len() - self.at).then_some(n)
    }
}

/// One entry of the body table: what the page needs to build its mesh.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TableEntry {
    pub shape: Shape,
    pub motion: MotionType,
}

/// The body table as the JSON text message the page reads:
/// `{"type":"table","version":v,"scene":name,"bodies":[entry or null]}`,
/// an entry `["box",hx,hy,hz,motion]`, `["sphere",r,motion]`,
/// `["capsule",half_height,r,motion]`, `["hull",id,[x,y,z,...],motion]`
/// (the hull's faces as triangles, its principal frame),
/// `["mesh",id,[x,y,z,...],[i,j,k,...],motion]` (vertices and kept
/// triangles), `["heightfield",id,nx,nz,sx,sz,[heights],motion]` (the
/// page splits each cell as the kernel does, from sample (i, j) to
/// (i+1, j+1)) or `["compound",id,[[child,[x,y,z],[qx,qy,qz,qw]],...],
/// motion]` (each child an entry without a motion, at its pose in the
/// compound's principal frame); motion `"static"`, `"kinematic"` or `"dynamic"`; `null`
/// for a removed body. Stored shapes' geometry comes from `shapes`.
pub fn table_json(
    version: u32,
    scene: &str,
    bodies: &[Option<TableEntry>],
    shapes: &ShapeStore,
) -> String {
    let entries: Vec<serde_json::Value> = bodies
        .iter()
        .map(|e| match e {
            None => serde_json::Value::Null,
            Some(e) => {
                let motion = match e.motion {
                    MotionType::Static => "static",
                    MotionType::Kinematic => "kinematic",
                    MotionType::Dynamic => "dynamic",
                };
                let mut entry = shape_json(e.shape, shapes);
                entry.push(motion.into());
                serde_json::Value::Array(entry)
            }
        })
        .collect();
    serde_json::json!({"type": "table", "version": version, "scene": scene, "bodies": entries})
        .to_string()
}

/// A table entry without its motion (a compound's children are entries
/// of this form).
fn shape_json(shape: Shape, shapes: &ShapeStore) -> Vec<serde_json::Value> {
    let flat = |v: &mut Vec<f32>, p: Vec3| v.extend_from_slice(&p.to_array());
    let array = |v: serde_json::Value| match v {
        serde_json::Value::Array(a) => a,
        _ => unreachable!("json! of a list"),
    };
    match shape {
        Shape::Box { half_extents: h } => array(serde_json::json!(["box", h.x, h.y, h.z])),
        Shape::Sphere { radius } => array(serde_json::json!(["sphere", radius])),
        Shape::Capsule {
            half_height,
            radius,
        } => array(serde_json::json!(["capsule", half_height, radius])),
        Shape::Hull(id) => {
            let mut tris = Vec::new();
            if let Some(h) = shapes.hulls().get(id) {
                for f in 0..h.num_faces() {
                    let (ring, _) = h.face(f);
                    for k in 1..ring.len().saturating_sub(1) {
                        for i in [ring[0], ring[k], ring[k + 1]] {
                            flat(&mut tris, h.vertices()[i as usize]);
                        }
                    }
                }
            }
            array(serde_json::json!(["hull", id.index(), tris]))
        }
        Shape::Compound(id) => {
            let children: Vec<serde_json::Value> = shapes
                .compound(id)
                .map(|c| c.children())
                .unwrap_or(&[])
                .iter()
                .map(|ch| {
                    let (p, q) = (ch.position, ch.rotation);
                    serde_json::json!([
                        shape_json(ch.shape, shapes),
                        [p.x, p.y, p.z],
                        [q.x, q.y, q.z, q.w]
                    ])
                })
                .collect();
            array(serde_json::json!(["compound", id.index(), children]))
        }
        Shape::Mesh(id) => {
            let (mut v, mut idx) = (Vec::new(), Vec::new());
            if let Some(m) = shapes.mesh(id) {
                for k in 0..m.num_triangles() {
                    let (c, _) = m.triangle(k);
                    for p in c {
                        idx.push(v.len() as u32 / 3);
                        flat(&mut v, p);
                    }
                }
            }
            array(serde_json::json!(["mesh", id.index(), v, idx]))
        }
        Shape::HeightField(id) => match shapes.heightfield(id) {
            Some(f) => {
                let ((nx, nz), (sx, sz)) = (f.samples(), f.cell_size());
                let h: Vec<f32> = (0..nx * nz).map(|k| f.height(k % nx, k / nx)).collect();
                array(serde_json::json!([
                    "heightfield",
                    id.index(),
                    nx,
                    nz,
                    sx,
                    sz,
                    h
                ]))
            }
            None => array(serde_json::json!([
                "heightfield",
                id.index(),
                0,
                0,
                0,
                0,
                []
            ])),
        },
    }
}

/// What a receiver knows after applying frames in order: the latest record
/// of every body (the page keeps the same).
#[derive(Debug, Clone, Default)]
pub struct ReceivedState {
    pub step: u32,
    pub table_version: u32,
    pub bodies: Vec<Option<BodyRecord>>,
}

impl ReceivedState {
    pub fn apply(&mut self, frame: &Frame) {
        if frame.table_version != self.table_version {
            // A new table: the frame that comes with it is complete.
            self.bodies.clear();
            self.table_version = frame.table_version;
        }
        self.step = frame.step;
        for b in &frame.bodies {
            let i = b.index as usize;
            if self.bodies.len() <= i {
                self.bodies.resize(i + 1, None);
            }
            self.bodies[i] = Some(*b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(index: u32) -> BodyRecord {
        BodyRecord {
            index,
            position: Vec3::new(1.0, -2.5, f32::MIN_POSITIVE),
            rotation: Quat::from_xyzw(0.0, 0.6, 0.0, 0.8),
            state: BodyState::Sleeping,
            split: 7,
            island: 3,
        }
    }

    #[test]
    fn frames_round_trip_and_refuse_truncation() {
        let bodies = [record(0), record(41)];
        let contacts = [ContactRecord {
            position: Vec3::X,
            normal: Vec3::Y,
            split: NO_SPLIT,
        }];
        let aabbs = [AabbRecord {
            index: 41,
            min: Vec3::NEG_ONE,
            max: Vec3::ONE,
        }];
        let mut out = Vec::new();
        encode_frame(9, 2, bodies.iter(), &contacts, &aabbs, &mut out);
        assert_eq!(
            out.len(),
            13 + 2 * BODY_RECORD_BYTES + 4 + CONTACT_RECORD_BYTES + 4 + AABB_RECORD_BYTES
        );
        let f = decode_frame(&out).unwrap();
        assert_eq!((f.step, f.table_version), (9, 2));
        assert_eq!(f.bodies, bodies);
        assert_eq!(f.contacts, contacts);
        assert_eq!(f.aabbs, aabbs);
        for cut in 0..out.len() {
            assert!(decode_frame(&out[..cut]).is_none(), "cut at {cut}");
        }
        out.push(0);
        assert!(decode_frame(&out).is_none());
    }

    #[test]
    fn the_table_names_every_shape() {
        let mut world = archipelago::PhysicsSystem::new(
            archipelago::Capacities::default(),
            archipelago::PhysicsSettings::default(),
        )
        .unwrap();
        // exact in f32, so the JSON numbers compare equal
        let heights = [0.0, 0.25, 0.5, 0.75, 1.0, 1.25];
        let field = world
            .add_heightfield(archipelago::HeightField::new(2, 3, (0.5, 1.0), &heights).unwrap())
            .unwrap();
        // two spheres 1 m either side of the centre along x: the principal
        // frame is the given one, so the children come back as given
        let ball = Shape::sphere(0.5).unwrap();
        let kids = [
            archipelago::CompoundChild::new(ball, Vec3::new(-1.0, 0.0, 0.0)),
            archipelago::CompoundChild::new(ball, Vec3::new(1.0, 0.0, 0.0)),
        ];
        let c = archipelago::CompoundShape::new(&kids, world.shapes()).unwrap();
        let bell = world.add_compound(c).unwrap();
        let t = table_json(
            3,
            "x",
            &[
                Some(TableEntry {
                    shape: Shape::cuboid(Vec3::new(1.0, 2.0, 3.0)).unwrap(),
                    motion: MotionType::Static,
                }),
                None,
                Some(TableEntry {
                    shape: Shape::capsule(0.5, 0.25).unwrap(),
                    motion: MotionType::Dynamic,
                }),
                Some(TableEntry {
                    shape: field,
                    motion: MotionType::Static,
                }),
                Some(TableEntry {
                    shape: bell,
                    motion: MotionType::Dynamic,
                }),
            ],
            world.shapes(),
        );
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert_eq!(
            v["bodies"][3],
            serde_json::json!([
                "heightfield",
                0,
                2,
                3,
                0.5,
                1.0,
                [0.0, 0.25, 0.5, 0.75, 1.0, 1.25],
                "static"
            ])
        );
        let child =
            |x: f32| serde_json::json!([["sphere", 0.5], [x, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]);
        assert_eq!(
            v["bodies"][4],
            serde_json::json!(["compound", 0, [child(-1.0), child(1.0)], "dynamic"])
        );
        assert_eq!(v["version"], 3);
        assert_eq!(
            v["bodies"][0],
            serde_json::json!(["box", 1.0, 2.0, 3.0, "static"])
        );
        assert!(v["bodies"][1].is_null());
        assert_eq!(
            v["bodies"][2],
            serde_json::json!(["capsule", 0.5, 0.25, "dynamic"])
        );
    }
}
