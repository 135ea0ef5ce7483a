//! `ShapeStore`: the shapes of a world too large to copy into every body
//! (hulls, triangle meshes, height fields), stored once and named by id
//! from a [`Shape`](crate::Shape), which so stays a small `Copy` value
//! (bepu's `Shapes` collection). Append-only: a shape lives as long as its
//! world, so an id is never stale and never reused.

use crate::compound::CompoundShape;
use crate::heightfield::HeightField;
use crate::hull_shape::HullStore;
use crate::mesh::TriangleMesh;

/// A triangle mesh of a world's [`ShapeStore`]. Means something only in
/// the world that issued it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MeshId(pub(crate) u32);

/// A height field of a world's [`ShapeStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HeightFieldId(pub(crate) u32);

/// A compound shape of a world's [`ShapeStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CompoundId(pub(crate) u32);

impl CompoundId {
    pub fn index(self) -> u32 {
        self.0
    }
}

impl MeshId {
    pub fn index(self) -> u32 {
        self.0
    }
}

impl HeightFieldId {
    pub fn index(self) -> u32 {
        self.0
    }
}

/// Most meshes, most height fields, and most compounds one world holds (bounds what a
/// snapshot may ask to allocate).
pub const MAX_SURFACES: usize = 1 << 16;

/// Every stored shape of a world, by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShapeStore {
    pub(crate) hulls: HullStore,
    pub(crate) meshes: Vec<TriangleMesh>,
    pub(crate) heightfields: Vec<HeightField>,
    pub(crate) compounds: Vec<CompoundShape>,
}

impl ShapeStore {
    pub const fn new() -> Self {
        Self {
            hulls: HullStore::new(),
            meshes: Vec::new(),
            heightfields: Vec::new(),
            compounds: Vec::new(),
        }
    }

    pub fn hulls(&self) -> &HullStore {
        &self.hulls
    }

    /// The mesh `id`, if this store issued it.
    pub fn mesh(&self, id: MeshId) -> Option<&TriangleMesh> {
        self.meshes.get(id.0 as usize)
    }

    /// The height field `id`, if this store issued it.
    pub fn heightfield(&self, id: HeightFieldId) -> Option<&HeightField> {
        self.heightfields.get(id.0 as usize)
    }

    /// The compound `id`, if this store issued it.
    pub fn compound(&self, id: CompoundId) -> Option<&CompoundShape> {
        self.compounds.get(id.0 as usize)
    }

    pub fn num_compounds(&self) -> usize {
        self.compounds.len()
    }

    pub fn num_meshes(&self) -> usize {
        self.meshes.len()
    }

    pub fn num_heightfields(&self) -> usize {
        self.heightfields.len()
    }

    /// Bytes the meshes, height fields and compounds hold (hulls are
    /// small).
    pub fn surface_bytes(&self) -> usize {
        self.meshes.iter().map(|m| m.memory_bytes()).sum::<usize>()
            + self
                .compounds
                .iter()
                .map(|c| c.memory_bytes())
                .sum::<usize>()
            + self
                .heightfields
                .iter()
                .map(|h| h.memory_bytes())
                .sum::<usize>()
    }

    /// Adds a mesh; `None` when the store holds [`MAX_SURFACES`].
    pub(crate) fn push_mesh(&mut self, m: TriangleMesh) -> Option<MeshId> {
        (self.meshes.len() < MAX_SURFACES).then(|| {
            self.meshes.push(m);
            MeshId(self.meshes.len() as u32 - 1)
        })
    }

    /// Adds a compound; `None` when the store holds [`MAX_SURFACES`].
    pub(crate) fn push_compound(&mut self, c: CompoundShape) -> Option<CompoundId> {
        (self.compounds.len() < MAX_SURFACES).then(|| {
            self.compounds.push(c);
            CompoundId(self.compounds.len() as u32 - 1)
        })
    }

    /// Adds a height field; `None` when the store holds [`MAX_SURFACES`].
    pub(crate) fn push_heightfield(&mut self, h: HeightField) -> Option<HeightFieldId> {
        (self.heightfields.len() < MAX_SURFACES).then(|| {
            self.heightfields.push(h);
            HeightFieldId(self.heightfields.len() as u32 - 1)
        })
    }
}

/// The store of a world without stored shapes (tests and the
/// primitive-only paths).
pub(crate) static NO_SHAPES: ShapeStore = ShapeStore::new();
