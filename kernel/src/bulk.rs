//! Bulk sync for renderers and engines: the awake bodies as one slice,
//! many poses copied into caller-owned buffers (structure of arrays or
//! array of structs) in one call, and many kinematic targets set in one
//! call. Each call checks everything before it writes anything: a refused
//! call leaves the buffers (or the world) as they were.

use crate::body::BodyId;
use crate::error::{PhysicsError, Result};
use crate::executor::Executor;
use crate::jobs::StepCtx;
use crate::math::{Quat, Vec3};
use crate::system::PhysicsSystem;

/// Bodies per job of [`PhysicsSystem::par_copy_poses`]: a 64 KB stretch of
/// output, long enough that a job's claim is noise.
const COPY_CHUNK: usize = 2048;

/// A body's pose as plain `f32`s, `#[repr(C)]` (28 bytes), for copying
/// straight into a host's vertex or instance buffers.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Pose {
    pub position: [f32; 3],
    /// x, y, z, w.
    pub rotation: [f32; 4],
}

/// A kinematic body's target for [`PhysicsSystem::set_kinematic_targets`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KinematicTarget {
    pub body: BodyId,
    pub position: Vec3,
    pub rotation: Quat,
}

impl PhysicsSystem {
    /// The awake, simulated bodies (dynamic or kinematic), in the order the
    /// step sweeps them; changes when bodies wake, sleep, are added or
    /// removed. A renderer that keeps poses of its own copies just these
    /// after a step ([`copy_poses`](Self::copy_poses) with this list).
    pub fn active_bodies(&self) -> &[BodyId] {
        &self.bodies.active_ids
    }

    /// Slots of `ids`, all checked (`InvalidBodyId` for any stale or
    /// foreign one), against buffers of `len` entries.
    fn check_all(&self, ids: &[BodyId], lens: &[usize]) -> Result<()> {
        if lens.iter().any(|&l| l != ids.len()) {
            return Err(PhysicsError::BufferLengthMismatch);
        }
        ids.iter()
            .try_for_each(|&id| self.bodies.check(id).map(|_| ()))
    }

    /// Copies the positions and rotations of `ids` (any bodies, added or
    /// not) into `positions[k]` and `rotations[k]`. Refused, with nothing
    /// written: buffers of another length than `ids`
    /// (`BufferLengthMismatch`), a stale or foreign id (`InvalidBodyId`).
    pub fn copy_poses(
        &self,
        ids: &[BodyId],
        positions: &mut [Vec3],
        rotations: &mut [Quat],
    ) -> Result<()> {
        self.check_all(ids, &[positions.len(), rotations.len()])?;
        self.copy_soa(ids, positions, rotations);
        Ok(())
    }

    /// The same into one array of [`Pose`]s.
    pub fn copy_poses_aos(&self, ids: &[BodyId], poses: &mut [Pose]) -> Result<()> {
        self.check_all(ids, &[poses.len()])?;
        for (pose, &id) in poses.iter_mut().zip(ids) {
            let i = id.index() as usize;
            *pose = Pose {
                position: self.bodies.position.get(i),
                rotation: self.bodies.rotation[i],
            };
        }
        Ok(())
    }

    /// [`copy_poses`](Self::copy_poses) on `executor`'s workers, in jobs of
    /// 2,048 bodies: for lists long enough that one core's copy is the
    /// bottleneck. Measured on 2 workers (`examples/bulk_copy.rs`): slower
    /// than the plain call at 16k bodies (66 against 48 µs), 1.15× faster
    /// at 64k, 1.3× at 256k.
    pub fn par_copy_poses(
        &self,
        ids: &[BodyId],
        positions: &mut [Vec3],
        rotations: &mut [Quat],
        executor: &dyn Executor,
    ) -> Result<()> {
        self.check_all(ids, &[positions.len(), rotations.len()])?;
        let ctx = StepCtx {
            exec: executor,
            threads: executor.workers().max(1),
            ..StepCtx::untraced()
        };
        let out = crate::disjoint::Disjoint::new(positions);
        let out_rot = crate::disjoint::Disjoint::new(rotations);
        executor.install(&mut || {
            ctx.run_jobs(ids.len().div_ceil(COPY_CHUNK), |k| {
                let (start, end) = (k * COPY_CHUNK, ((k + 1) * COPY_CHUNK).min(ids.len()));
                // SAFETY: job `k` runs once, and the jobs' ranges do not
                // overlap.
                let (p, r) = unsafe { (out.slice_mut(start, end), out_rot.slice_mut(start, end)) };
                self.copy_soa(&ids[start..end], p, r);
            })
        });
        Ok(())
    }

    fn copy_soa(&self, ids: &[BodyId], positions: &mut [Vec3], rotations: &mut [Quat]) {
        for ((p, q), &id) in positions.iter_mut().zip(rotations.iter_mut()).zip(ids) {
            let i = id.index() as usize;
            *p = self.bodies.pos(i);
            *q = self.bodies.rot(i);
        }
    }

    /// [`move_kinematic`](Self::move_kinematic) for many bodies: each
    /// kinematic body gets the velocities that reach its target pose in
    /// `dt`. All or nothing: refused with no body changed on the first
    /// target `move_kinematic` would refuse (its errors).
    pub fn set_kinematic_targets(&mut self, targets: &[KinematicTarget], dt: f32) -> Result<()> {
        for t in targets {
            self.kinematic_velocities(t.body, t.position, t.rotation, dt)?;
        }
        for t in targets {
            let (i, v, w) = self.kinematic_velocities(t.body, t.position, t.rotation, dt)?;
            self.bodies.linear_velocity.set(i, v.to_array());
            self.bodies.angular_velocity.set(i, w.to_array());
        }
        Ok(())
    }
}
