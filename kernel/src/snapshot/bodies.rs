//! The body table in a snapshot: every column up to the slot high-water
//! mark as native bytes, the allocator's generations and free list, the
//! shapes, and the added and active lists in their order (the order the
//! step walks them in, so it is state, not a detail). The lists' inverse
//! indices, the active ids and the sleeping-island count are derived.

use super::codec::{Reader, SlotsRead, Snap, Writer};
use crate::body::{flags, Bodies, BodyId, NOT_LISTED, PLACEHOLDER_SHAPE};
use crate::compound::{CompoundChild, CompoundShape, MAX_COMPOUND_CHILDREN};
use crate::error::{PhysicsError, Result};
use crate::heightfield::HeightField;
use crate::hull::MAX_HULL_VERTICES;
use crate::hull_shape::{HullId, HullShape, HullStore, MAX_HULLS};
use crate::math::Vec3;
use crate::mesh::{TriangleMesh, MAX_MESH_TRIANGLES};
use crate::shape::Shape;
use crate::shape_store::{HeightFieldId, MeshId, ShapeStore, MAX_SURFACES, NO_SHAPES};
use archipelago_layout::{Column, Vec3Column};

/// What later sections check body slots against: the snapshot's slots,
/// whether each is live, and their generations.
pub(crate) struct View {
    generation: Vec<u32>,
    live: Vec<bool>,
    dynamic: Vec<bool>,
}

impl View {
    pub fn high_water(&self) -> usize {
        self.generation.len()
    }
    pub fn is_live(&self, slot: u32) -> bool {
        self.live.get(slot as usize).copied().unwrap_or(false)
    }
    pub fn is_dynamic(&self, slot: u32) -> bool {
        self.dynamic.get(slot as usize).copied().unwrap_or(false)
    }
    /// The id of the body in `slot` as the restored world names it.
    pub fn id(&self, slot: u32, world: u32) -> BodyId {
        let generation = self.generation.get(slot as usize).copied().unwrap_or(0);
        BodyId::new(slot, generation, world)
    }
}

impl Snap for Shape {
    fn put(&self, w: &mut Writer) {
        match *self {
            Shape::Sphere { radius } => {
                w.u8(0);
                w.f32(radius);
            }
            Shape::Box { half_extents } => {
                w.u8(1);
                w.put(&half_extents);
            }
            Shape::Capsule {
                half_height,
                radius,
            } => {
                w.u8(2);
                w.f32(half_height);
                w.f32(radius);
            }
            Shape::Hull(id) => {
                w.u8(3);
                w.u32(id.index());
            }
            Shape::Mesh(id) => {
                w.u8(4);
                w.u32(id.index());
            }
            Shape::HeightField(id) => {
                w.u8(5);
                w.u32(id.index());
            }
            Shape::Compound(id) => {
                w.u8(6);
                w.u32(id.index());
            }
        }
    }
    fn get(r: &mut Reader) -> Result<Self> {
        let s = match r.u8()? {
            0 => Shape::Sphere { radius: r.f32()? },
            1 => Shape::Box {
                half_extents: r.get()?,
            },
            2 => Shape::Capsule {
                half_height: r.f32()?,
                radius: r.f32()?,
            },
            // ids are checked against the snapshot's tables by `restore`
            3 => Shape::Hull(HullId(r.u32()?)),
            4 => Shape::Mesh(MeshId(r.u32()?)),
            5 => Shape::HeightField(HeightFieldId(r.u32()?)),
            6 => Shape::Compound(crate::shape_store::CompoundId(r.u32()?)),
            _ => return Err(PhysicsError::InvalidSnapshot),
        };
        s.validate().map_err(|_| PhysicsError::InvalidSnapshot)?;
        Ok(s)
    }
}

/// The world's hulls, every derived table as stored (a restored world
/// collides bit for bit as the saved one did; nothing is rebuilt).
fn put_hulls(w: &mut Writer, hulls: &HullStore) {
    w.u32(hulls.len() as u32);
    for h in hulls.iter() {
        w.items(&h.vertices);
        w.items(&h.face_normal);
        w.pod(&h.face_offset);
        w.pod(&h.face_first);
        w.pod(&h.face_vertex);
        w.pod(&h.edge_vertex);
        w.pod(&h.edge_face);
        w.f32(h.volume);
        w.put(&h.unit_inertia);
        w.put(&h.local_min);
        w.put(&h.local_max);
        w.f32(h.bounding_radius);
        w.put(&h.frame_origin);
        w.put(&h.frame_rotation);
    }
}

/// Reads [`put_hulls`]' tables, refusing any index out of range or
/// non-finite value (the collision code indexes them unchecked).
fn get_hulls(r: &mut Reader) -> Result<HullStore> {
    let bad = || PhysicsError::InvalidSnapshot;
    let count = r.len(MAX_HULLS)?;
    // every face has 3 edges or more and every edge 2 faces: F <= 2V - 4
    let max_faces = 2 * MAX_HULL_VERTICES;
    let max_loop = 3 * max_faces;
    let mut hulls = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let mut vertices = Vec::new();
        r.items_into(MAX_HULL_VERTICES, Some(&mut vertices))?;
        let mut face_normal = Vec::new();
        r.items_into(max_faces, Some(&mut face_normal))?;
        let face_offset: Vec<f32> = r.pod_vec(max_faces)?;
        let face_first: Vec<u32> = r.pod_vec(max_faces + 1)?;
        let face_vertex: Vec<u32> = r.pod_vec(max_loop)?;
        let edge_vertex: Vec<[u32; 2]> = r.pod_vec(max_loop)?;
        let edge_face: Vec<[u32; 2]> = r.pod_vec(max_loop)?;
        let h = HullShape {
            vertices,
            face_normal,
            face_offset,
            face_first,
            face_vertex,
            edge_vertex,
            edge_face,
            volume: r.f32()?,
            unit_inertia: r.get()?,
            local_min: r.get()?,
            local_max: r.get()?,
            bounding_radius: r.f32()?,
            frame_origin: r.get()?,
            frame_rotation: r.get()?,
        };
        let (nv, nf) = (h.vertices.len() as u32, h.face_normal.len() as u32);
        let firsts_ok = h.face_first.len() == nf as usize + 1
            && h.face_first[0] == 0
            && h.face_first.windows(2).all(|w| w[0] + 3 <= w[1])
            && h.face_first[nf as usize] as usize == h.face_vertex.len();
        let ok = nv >= 4
            && nf >= 4
            && h.face_offset.len() == nf as usize
            && firsts_ok
            && h.face_vertex.iter().all(|&v| v < nv)
            && h.edge_vertex.len() == h.edge_face.len()
            && h.edge_vertex.iter().flatten().all(|&v| v < nv)
            && h.edge_face.iter().flatten().all(|&f| f < nf)
            && h.vertices.iter().all(|v| v.is_finite())
            && h.face_normal.iter().all(|n| n.is_finite())
            && h.face_offset.iter().all(|o| o.is_finite())
            && h.volume.is_finite()
            && h.volume > 0.0
            && h.unit_inertia.is_finite()
            && h.unit_inertia.min_element() > 0.0
            && h.local_min.is_finite()
            && h.local_max.is_finite()
            && h.bounding_radius.is_finite()
            && h.frame_origin.is_finite()
            && h.frame_rotation.is_finite();
        if !ok {
            return Err(bad());
        }
        hulls.push(h);
    }
    Ok(HullStore::from_hulls(hulls))
}

/// The world's meshes and height fields as they were built from: a
/// mesh's vertices and kept triangles (with their input indices and the
/// dropped count), a field's sample grid. Their trees, normals and edge
/// flags are derived, and the build is deterministic, so a restore
/// rebuilds them, or keeps the target world's own when they are equal
/// (a rollback into the world that saved: nothing is rebuilt).
fn put_surfaces(w: &mut Writer, store: &ShapeStore) {
    w.u32(store.meshes.len() as u32);
    for m in &store.meshes {
        w.items(&m.vertices);
        w.pod(&m.triangles);
        w.pod(&m.source);
        w.u32(m.dropped);
    }
    w.u32(store.heightfields.len() as u32);
    for h in &store.heightfields {
        w.u32(h.nx as u32);
        w.u32(h.nz as u32);
        w.f32(h.sx);
        w.f32(h.sz);
        w.pod(&h.heights);
    }
}

/// Reads [`put_surfaces`]' tables: validated on the first pass (the
/// builds' own checks, plus the saved triangles must all be kept), built
/// on the second (`build`), each equal one taken from `existing` instead.
#[allow(clippy::type_complexity)]
fn get_surfaces(
    r: &mut Reader,
    build: bool,
    existing: &ShapeStore,
) -> Result<(Vec<TriangleMesh>, Vec<HeightField>, (usize, usize))> {
    let bad = || PhysicsError::InvalidSnapshot;
    let count = r.len(MAX_SURFACES)?;
    let mesh_count = count;
    let mut meshes = Vec::new();
    for k in 0..count {
        let mut vertices: Vec<Vec3> = Vec::new();
        r.items_into(3 * MAX_MESH_TRIANGLES, Some(&mut vertices))?;
        let triangles: Vec<[u32; 3]> = r.pod_vec(MAX_MESH_TRIANGLES)?;
        let source: Vec<u32> = r.pod_vec(MAX_MESH_TRIANGLES)?;
        let dropped = r.u32()?;
        let same = existing.meshes.get(k).is_some_and(|m| {
            m.vertices == vertices
                && m.triangles == triangles
                && m.source == source
                && m.dropped == dropped
        });
        let limit = crate::limits::MAX_SHAPE_SIZE;
        let ok = source.len() == triangles.len()
            && vertices
                .iter()
                .all(|v| v.is_finite() && v.abs().max_element() <= limit)
            && triangles
                .iter()
                .flatten()
                .all(|&i| (i as usize) < vertices.len());
        if !ok {
            return Err(bad());
        }
        if build || !same {
            let mut m = if same {
                existing.meshes[k].clone()
            } else {
                TriangleMesh::new(&vertices, &triangles).map_err(|_| bad())?
            };
            if m.num_triangles() != triangles.len() {
                return Err(bad()); // a saved triangle the build drops
            }
            m.source = source;
            m.dropped = dropped;
            if build {
                meshes.push(m);
            }
        }
    }
    let count = r.len(MAX_SURFACES)?;
    let mut fields = Vec::new();
    for k in 0..count {
        let (nx, nz) = (r.u32()? as usize, r.u32()? as usize);
        let (sx, sz) = (r.f32()?, r.f32()?);
        let heights: Vec<f32> = r.pod_vec(crate::heightfield::MAX_HEIGHTFIELD_SAMPLES)?;
        let same = existing.heightfields.get(k).is_some_and(|h| {
            (h.nx, h.nz, h.sx.to_bits(), h.sz.to_bits()) == (nx, nz, sx.to_bits(), sz.to_bits())
                && h.heights == heights
        });
        if same {
            if build {
                fields.push(existing.heightfields[k].clone());
            }
            continue;
        }
        let h = HeightField::new(nx, nz, (sx, sz), &heights).map_err(|_| bad())?;
        if build {
            fields.push(h);
        }
    }
    Ok((meshes, fields, (mesh_count, count)))
}

/// The world's compounds, each as its children were given (rebuilding
/// from them gives the same compound bit for bit: the build is
/// deterministic).
fn put_compounds(w: &mut Writer, store: &ShapeStore) {
    w.u32(store.compounds.len() as u32);
    for c in &store.compounds {
        w.u32(c.source.len() as u32);
        for ch in &c.source {
            w.put(&ch.shape);
            w.put(&ch.position);
            w.put(&ch.rotation);
        }
    }
}

/// Reads [`put_compounds`]' tables and builds them against `store` (the
/// restored hulls), which validates every child.
fn get_compounds(r: &mut Reader, store: &ShapeStore) -> Result<Vec<CompoundShape>> {
    let bad = || PhysicsError::InvalidSnapshot;
    let count = r.len(MAX_SURFACES)?;
    let mut compounds = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let n = r.len(MAX_COMPOUND_CHILDREN)?;
        let mut children = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            children.push(CompoundChild {
                shape: r.get()?,
                position: r.get()?,
                rotation: r.get()?,
            });
        }
        compounds.push(CompoundShape::new(&children, store).map_err(|_| bad())?);
    }
    Ok(compounds)
}

fn put_vec3(w: &mut Writer, c: &Vec3Column, n: usize) {
    let (x, y, z) = c.slices();
    for s in [x, y, z] {
        w.pod(&s[..n]);
    }
}

fn vec3_into(
    r: &mut Reader,
    n: usize,
    clear_to: usize,
    dst: Option<&mut Vec3Column>,
) -> Result<()> {
    let any = |_: &f32| true;
    let bytes = [
        r.pod_bytes::<f32>(n, any)?,
        r.pod_bytes::<f32>(n, any)?,
        r.pod_bytes::<f32>(n, any)?,
    ];
    if let Some(c) = dst {
        let (x, y, z) = c.slices_mut();
        for (s, b) in [x, y, z].into_iter().zip(bytes) {
            bytemuck::cast_slice_mut::<f32, u8>(&mut s[..n]).copy_from_slice(b);
        }
        for i in n..clear_to {
            c.clear(i);
        }
    }
    Ok(())
}

pub(crate) fn save(b: &Bodies, w: &mut Writer) {
    let n = b.slots.high_water();
    w.slots(&b.slots);
    put_vec3(w, &b.position, n);
    w.pod(&b.rotation.as_slice()[..n]);
    put_vec3(w, &b.linear_velocity, n);
    put_vec3(w, &b.angular_velocity, n);
    w.pod(&b.inv_mass.as_slice()[..n]);
    w.pod(&b.inv_inertia_local.as_slice()[..n]);
    w.pod(&b.inv_inertia_world.as_slice()[..n]);
    w.pod(&b.gravity_scale.as_slice()[..n]);
    w.pod(&b.move_scale.as_slice()[..n]);
    w.pod(&b.force.as_slice()[..n]);
    w.pod(&b.torque.as_slice()[..n]);
    w.pod(&b.gravity_factor.as_slice()[..n]);
    w.pod(&b.sleep_timer.as_slice()[..n]);
    w.pod(&b.sleep_spheres.as_slice()[..n]);
    w.pod(&b.sleep_next[..n]);
    put_vec3(w, &b.aabb_min, n);
    put_vec3(w, &b.aabb_max, n);
    w.pod(&b.motion_type.as_slice()[..n]);
    w.pod(&b.flags.as_slice()[..n]);
    w.pod(&b.friction.as_slice()[..n]);
    w.pod(&b.restitution.as_slice()[..n]);
    w.pod(&b.linear_damping.as_slice()[..n]);
    w.pod(&b.angular_damping.as_slice()[..n]);
    w.pod(&b.user_data.as_slice()[..n]);
    w.pod(&b.object_layer.as_slice()[..n]);
    w.pod(&b.bounding_radius[..n]);
    put_hulls(w, &b.shapes.hulls);
    put_surfaces(w, &b.shapes);
    put_compounds(w, &b.shapes);
    for s in &b.shape[..n] {
        w.put(s);
    }
    w.pod(&b.added);
    w.pod(&b.active);
}

/// A column of plain values, slots `0..n`, neutral beyond up to `clear_to`.
fn column<T: bytemuck::Pod>(
    r: &mut Reader,
    n: usize,
    clear_to: usize,
    dst: Option<&mut Column<T>>,
) -> Result<()> {
    r.column_into(n, clear_to, dst, |_| true)
}

/// Reads the body table, into `dst` if given (else only checks it).
pub(crate) fn restore(r: &mut Reader, mut dst: Option<&mut Bodies>) -> Result<View> {
    let bad = || PhysicsError::InvalidSnapshot;
    let SlotsRead {
        generation,
        free,
        live,
    } = r.slots(r.max_bodies as usize)?;
    let n = generation.len();
    // slots the world used beyond the snapshot's go back to empty
    let clear_to = dst.as_ref().map_or(n, |b| b.slots.high_water().max(n));
    if let Some(b) = dst.as_deref_mut() {
        b.slots.restore(&generation, &free).map_err(|_| bad())?;
    }
    macro_rules! col {
        ($field:ident) => {
            column(r, n, clear_to, dst.as_deref_mut().map(|b| &mut b.$field))?
        };
    }
    macro_rules! vec3 {
        ($field:ident) => {
            vec3_into(r, n, clear_to, dst.as_deref_mut().map(|b| &mut b.$field))?
        };
    }
    vec3!(position);
    col!(rotation);
    vec3!(linear_velocity);
    vec3!(angular_velocity);
    col!(inv_mass);
    col!(inv_inertia_local);
    col!(inv_inertia_world);
    col!(gravity_scale);
    col!(move_scale);
    col!(force);
    col!(torque);
    col!(gravity_factor);
    col!(sleep_timer);
    col!(sleep_spheres);
    let sleep_next: Vec<u32> = r.pod_vec(n)?;
    if sleep_next.len() != n {
        return Err(bad());
    }
    let sleeping_islands = count_rings(&sleep_next).ok_or_else(bad)?;
    vec3!(aabb_min);
    vec3!(aabb_max);
    let motion = r.pod_bytes::<u8>(n, |&m| m <= 2)?;
    let dynamic: Vec<bool> = motion.iter().map(|&m| m == 2).collect();
    let fixed: Vec<bool> = motion
        .iter()
        .map(|&m| m == crate::body::MotionType::Static as u8)
        .collect();
    if let Some(b) = dst.as_deref_mut() {
        let c = b.motion_type.as_mut_slice();
        c[..n].copy_from_slice(motion);
        c[n..clear_to].fill(crate::body::MotionType::Static as u8);
    }
    r.column_into(
        n,
        clear_to,
        dst.as_deref_mut().map(|b| &mut b.flags),
        |&f| f < flags::END,
    )?;
    col!(friction);
    col!(restitution);
    col!(linear_damping);
    col!(angular_damping);
    col!(user_data);
    r.column_into(
        n,
        clear_to,
        dst.as_deref_mut().map(|b| &mut b.object_layer),
        |&l| l < crate::body::MAX_OBJECT_LAYERS,
    )?;
    r.pod_into(
        n,
        dst.as_deref_mut().map(|b| &mut b.bounding_radius[..]),
        |_| true,
    )?;
    let hulls = get_hulls(r)?;
    let (meshes, heightfields, surface_counts) = {
        let existing = dst.as_deref().map_or(&NO_SHAPES, |b| &b.shapes);
        get_surfaces(r, dst.is_some(), existing)?
    };
    // the ids are checked against the tables' sizes (on the first pass
    // the surfaces are not kept, so by count)
    let mut store = ShapeStore {
        hulls,
        meshes,
        heightfields,
        compounds: Vec::new(),
    };
    store.compounds = get_compounds(r, &store)?;
    for (i, &fixed) in fixed.iter().enumerate() {
        let s: Shape = r.get()?;
        s.validate().map_err(|_| bad())?;
        let known = match s {
            Shape::Hull(id) => store.hulls.get(id).is_some(),
            Shape::Mesh(id) => (id.index() as usize) < surface_counts.0,
            Shape::HeightField(id) => (id.index() as usize) < surface_counts.1,
            Shape::Compound(id) => store.compound(id).is_some(),
            _ => true,
        };
        if !known || (s.is_surface() && !fixed) {
            return Err(bad());
        }
        if let Some(b) = dst.as_deref_mut() {
            b.shape[i] = s;
        }
    }
    if let Some(b) = dst.as_deref_mut() {
        b.shapes = store;
    }
    let added: Vec<u32> = r.pod_vec(n)?;
    let active: Vec<u32> = r.pod_vec(n)?;
    for list in [&added, &active] {
        let mut seen = vec![false; n];
        for &s in list.iter() {
            let s = s as usize;
            if s >= n || !live[s] || core::mem::replace(&mut seen[s], true) {
                return Err(bad());
            }
        }
    }
    let view = View {
        generation,
        live,
        dynamic,
    };
    if let Some(b) = dst {
        b.sleep_next[..n].copy_from_slice(&sleep_next);
        b.sleep_next[n..clear_to].fill(NOT_LISTED);
        b.sleeping_islands = sleeping_islands;
        b.faulted[..clear_to].fill(false);
        b.bounding_radius[n..clear_to].fill(0.0);
        b.shape[n..clear_to].fill(PLACEHOLDER_SHAPE);
        b.added_pos[..clear_to].fill(NOT_LISTED);
        b.active_pos[..clear_to].fill(NOT_LISTED);
        b.added.clear();
        b.added.extend_from_slice(&added);
        for (k, &s) in added.iter().enumerate() {
            b.added_pos[s as usize] = k as u32;
        }
        b.active.clear();
        b.active.extend_from_slice(&active);
        b.active_ids.clear();
        for (k, &s) in active.iter().enumerate() {
            b.active_pos[s as usize] = k as u32;
            b.active_ids.push(view.id(s, b.world));
        }
    }
    Ok(view)
}

/// The number of sleep rings, if `next` links its listed slots into rings
/// (every link to a listed slot, none twice: a permutation, so the links
/// close into cycles).
fn count_rings(next: &[u32]) -> Option<usize> {
    let n = next.len();
    let mut linked = vec![false; n];
    for &t in next {
        if t == NOT_LISTED {
            continue;
        }
        let t = t as usize;
        if t >= n || next[t] == NOT_LISTED || core::mem::replace(&mut linked[t], true) {
            return None;
        }
    }
    let mut rings = 0;
    let mut seen = vec![false; n];
    for start in 0..n {
        if next[start] == NOT_LISTED || seen[start] {
            continue;
        }
        rings += 1;
        let mut i = start;
        while !seen[i] {
            seen[i] = true;
            i = next[i] as usize;
        }
    }
    Some(rings)
}
