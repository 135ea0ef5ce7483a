// Jolt's height field and triangle mesh shapes for the `peers` binary.
//
// JoltC (joltc-sys 0.3.1) wraps Jolt 5.0.0's convex and compound shapes
// but not `HeightFieldShape` or `MeshShape`, so these two are built here,
// against the same Jolt headers and static library joltc-sys builds
// (benches/build.rs compiles this file with the defines and instruction
// flags of that build). A `JPC_Shape*` is a `JPH::Shape*` (JoltC casts
// one to the other), so what these return goes straight into
// `JPC_BodyCreationSettings::Shape`.
//
// Each function returns null where Jolt refuses the input or where this
// file was compiled with other defines than the library (Jolt's own
// `VerifyJoltVersionID`, which hashes the defines that change its ABI), so
// a mismatch is a clean "n/a" in peers, not a crash.

#include <Jolt/Jolt.h>
#include <Jolt/RegisterTypes.h>
#include <Jolt/Physics/Collision/Shape/HeightFieldShape.h>
#include <Jolt/Physics/Collision/Shape/MeshShape.h>

#include <cstdint>
#include <vector>

using namespace JPH;

namespace {

const Shape *keep(const ShapeSettings::ShapeResult &result) {
    if (result.HasError()) {
        return nullptr;
    }
    const Shape *shape = result.Get().GetPtr();
    // the body creation settings take their own reference; this one keeps
    // the shape alive until the peer's world is gone (never released: the
    // binary builds a handful of worlds)
    shape->AddRef();
    return shape;
}

} // namespace

extern "C" {

// Whether this file was compiled with the library's own ABI-relevant
// defines (what Jolt's `RegisterTypes` checks for its own callers).
bool arch_jolt_abi_matches() { return VerifyJoltVersionID(); }

// A height field of `n` × `n` samples (`samples[z * n + x]`, m), sample
// (x, z) at `offset + scale * (x, h, z)`. Samples equal to FLT_MAX are
// holes (Jolt's `cNoCollisionValue`), which pads a non-square grid.
// Jolt's defaults otherwise: blocks of 2 × 2, 8 bits per sample.
const void *arch_jolt_height_field(const float *samples, uint32_t n, float offset_x,
                                   float offset_y, float offset_z, float scale_x,
                                   float scale_y, float scale_z) {
    if (!VerifyJoltVersionID() || samples == nullptr) {
        return nullptr;
    }
    HeightFieldShapeSettings settings(samples, Vec3(offset_x, offset_y, offset_z),
                                      Vec3(scale_x, scale_y, scale_z), n);
    return keep(settings.Create());
}

// A static triangle mesh: `vertex_count` vertices (x, y, z, m) and
// `triangle_count` triangles of three vertex indices each. Jolt's defaults:
// active edges at 5°, its own bounding-volume tree.
const void *arch_jolt_mesh(const float *vertices, uint32_t vertex_count,
                           const uint32_t *triangles, uint32_t triangle_count) {
    if (!VerifyJoltVersionID() || vertices == nullptr || triangles == nullptr) {
        return nullptr;
    }
    VertexList points;
    points.reserve(vertex_count);
    for (uint32_t k = 0; k < vertex_count; ++k) {
        points.push_back(Float3(vertices[3 * k], vertices[3 * k + 1], vertices[3 * k + 2]));
    }
    IndexedTriangleList tris;
    tris.reserve(triangle_count);
    for (uint32_t k = 0; k < triangle_count; ++k) {
        tris.push_back(IndexedTriangle(triangles[3 * k], triangles[3 * k + 1],
                                       triangles[3 * k + 2], 0));
    }
    MeshShapeSettings settings(points, tris);
    return keep(settings.Create());
}

} // extern "C"
