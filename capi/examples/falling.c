/* The archipelago C API from C: a floor, a stack of four boxes and a steel
 * ball thrown at it, 120 steps on a 2-worker pinned pool, then the poses
 * read back in one call (after a rollback to a snapshot of step 60). Prints each body's position as raw float bits
 * (so a Rust test can check them to the last bit) and the state hash.
 *
 *   cc -std=c99 -I capi/include capi/examples/falling.c \
 *      target/release/libarchipelago_capi.a -lpthread -ldl -lm -o falling
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archipelago.h"

#define CHECK(call)                                                        \
    do {                                                                   \
        ArchResult r_ = (call);                                            \
        if (r_ != ARCH_OK) {                                               \
            fprintf(stderr, "%s: %s\n", #call, arch_result_message(r_));   \
            return 1;                                                      \
        }                                                                  \
    } while (0)

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

int main(void) {
    ArchWorld *world = NULL;
    ArchPool *pool = NULL;
    CHECK(arch_world_create(NULL, &world));
    CHECK(arch_pool_create(2, &pool));

    ArchBodySettings floor = arch_body_settings_default();
    floor.shape = ARCH_SHAPE_BOX;
    floor.a = 50.0f, floor.b = 1.0f, floor.c = 50.0f;
    floor.position.y = -1.0f;
    floor.motion = ARCH_STATIC;
    ArchBodyId floor_id;
    CHECK(arch_body_create(world, &floor, &floor_id));

    ArchBodyId ids[5];
    for (int i = 0; i < 4; i++) {
        ArchBodySettings box = arch_body_settings_default();
        box.shape = ARCH_SHAPE_BOX;
        box.a = box.b = box.c = 0.5f;
        box.position.y = 0.5f + (float)i;
        CHECK(arch_body_create(world, &box, &ids[i]));
    }
    ArchBodySettings ball = arch_body_settings_default();
    ball.a = 0.25f;
    ball.position.x = -5.0f, ball.position.y = 1.5f;
    ball.linear_velocity.x = 8.0f;
    ball.density = 7800.0f;
    CHECK(arch_body_create(world, &ball, &ids[4]));

    /* 60 steps, a snapshot, 60 more; then roll back to the snapshot and
     * step the 60 again: the same state, to the last bit. */
    ArchStepStats stats;
    for (int s = 0; s < 60; s++) {
        CHECK(arch_world_update(world, 1.0f / 60.0f, 1, pool, &stats));
    }
    size_t snapshot_len = 0;
    if (arch_world_save_state(world, NULL, 0, &snapshot_len) != ARCH_BUFFER_TOO_SMALL) return 1;
    unsigned char *snapshot = malloc(snapshot_len);
    if (snapshot == NULL) return 1;
    CHECK(arch_world_save_state(world, snapshot, snapshot_len, &snapshot_len));
    for (int s = 60; s < 120; s++) {
        CHECK(arch_world_update(world, 1.0f / 60.0f, 1, pool, &stats));
    }
    uint64_t first = arch_world_state_hash(world);
    CHECK(arch_world_restore_state(world, snapshot, snapshot_len));
    for (int s = 60; s < 120; s++) {
        CHECK(arch_world_update(world, 1.0f / 60.0f, 1, pool, &stats));
    }
    printf("rollback: %zu-byte snapshot, %s\n", snapshot_len,
           arch_world_state_hash(world) == first ? "same state_hash" : "DIFFERENT state_hash");
    snapshot[snapshot_len / 2] ^= 1;
    ArchResult corrupt = arch_world_restore_state(world, snapshot, snapshot_len);
    printf("corrupted snapshot: %s\n", arch_result_message(corrupt));
    if (corrupt != ARCH_INVALID_SNAPSHOT) return 1;
    free(snapshot);
    ArchPose poses[5];
    CHECK(arch_copy_poses(world, ids, 5, poses));
    for (int k = 0; k < 5; k++) {
        printf("body %d %08" PRIx32 " %08" PRIx32 " %08" PRIx32 "  (%.4f, %.4f, %.4f)\n", k,
               bits(poses[k].position.x), bits(poses[k].position.y), bits(poses[k].position.z),
               poses[k].position.x, poses[k].position.y, poses[k].position.z);
    }
    printf("state_hash %016" PRIx64 "\n", arch_world_state_hash(world));
    printf("active %u islands %u manifolds %u\n", stats.active_bodies, stats.islands, stats.manifolds);

    /* Refused calls: a stale id, a NULL pointer, a bad shape. */
    CHECK(arch_body_destroy(world, ids[4]));
    ArchVec3 p;
    ArchResult r = arch_body_position(world, ids[4], &p);
    printf("stale id: %s\n", arch_result_message(r));
    if (r != ARCH_INVALID_BODY_ID) return 1;
    r = arch_body_position(world, ids[0], NULL);
    printf("null output: %s\n", arch_result_message(r));
    if (r != ARCH_NULL_POINTER) return 1;
    ArchBodySettings bad = arch_body_settings_default();
    bad.shape = 77;
    ArchBodyId unused;
    r = arch_body_create(world, &bad, &unused);
    printf("unknown shape: %s\n", arch_result_message(r));
    if (r != ARCH_INVALID_ARGUMENT) return 1;
    bad.shape = ARCH_SHAPE_SPHERE;
    bad.a = -1.0f;
    r = arch_body_create(world, &bad, &unused);
    printf("negative radius: %s\n", arch_result_message(r));
    if (r != ARCH_INVALID_SHAPE) return 1;

    arch_pool_destroy(pool);
    arch_world_destroy(world);
    return 0;
}
