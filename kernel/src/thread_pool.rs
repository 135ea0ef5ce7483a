//! Building the worker pool the step runs on: one worker per physical core,
//! each pinned to its core with `core_affinity`.
//!
//! The kernel never starts threads itself; `update` runs on whatever
//! `rayon::ThreadPool` the caller passes. [`build_pinned_pool`] is the
//! recommended one: hyperthread siblings share a core's caches and SIMD
//! units, so a second worker per core mostly adds contention, and an
//! unpinned worker that migrates loses its cache. Where pinning is refused
//! (containers, some CI sandboxes) or the topology cannot be read, the pool
//! still works and the refusal is reported in [`Pinning`] and in
//! [`StepStats::pinning`](crate::StepStats::pinning).

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// How the workers that ran a step are tied to cores.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Pinning {
    /// Every worker seen is pinned to its own physical core.
    Pinned,
    /// Workers run where the OS puts them (a pool not built by
    /// [`build_pinned_pool`], or pinning not asked for).
    #[default]
    NotPinned,
    /// Pinning was asked for and the OS refused it for some worker.
    Refused,
}

/// Per-thread pin state, set by [`build_pinned_pool`]'s start handler.
const PIN_NONE: u8 = 0;
const PIN_OK: u8 = 1;
const PIN_REFUSED: u8 = 2;

thread_local! {
    static PIN_STATE: Cell<u8> = const { Cell::new(PIN_NONE) };
}

/// Bit set of the pin states seen by the workers of a step.
pub(crate) fn pin_state_bit() -> u32 {
    1 << PIN_STATE.with(|s| s.get())
}

pub(crate) fn pinning_from_bits(bits: u32) -> Pinning {
    if bits & (1 << PIN_REFUSED) != 0 {
        Pinning::Refused
    } else if bits == 1 << PIN_OK {
        Pinning::Pinned
    } else {
        Pinning::NotPinned
    }
}

/// Cores of the machine, as far as this process may use them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreTopology {
    /// Logical CPUs this process may run on.
    pub logical: usize,
    /// One logical CPU id per physical core (the lowest of its siblings).
    pub physical_cpu_ids: Vec<usize>,
    /// Whether the physical cores were read from the OS (Linux sysfs) or
    /// assumed equal to the logical CPUs.
    pub from_os: bool,
}

impl CoreTopology {
    pub fn physical(&self) -> usize {
        self.physical_cpu_ids.len()
    }
}

/// Reads which logical CPUs share a physical core (Linux:
/// `/sys/devices/system/cpu/cpuN/topology/{physical_package_id,core_id}`).
/// Elsewhere, or if sysfs is unreadable, every allowed CPU counts as a core.
pub fn detect_cores() -> CoreTopology {
    let allowed: Vec<usize> = core_affinity::get_core_ids()
        .map(|ids| ids.into_iter().map(|c| c.id).collect())
        .unwrap_or_else(|| {
            (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
        });
    let read = |cpu: usize, what: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{what}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let mut seen: Vec<(u64, u64)> = Vec::new();
    let mut physical = Vec::new();
    let mut from_os = !allowed.is_empty();
    for &cpu in &allowed {
        match (read(cpu, "physical_package_id"), read(cpu, "core_id")) {
            (Some(pkg), Some(core)) => {
                if !seen.contains(&(pkg, core)) {
                    seen.push((pkg, core));
                    physical.push(cpu);
                }
            }
            _ => {
                from_os = false;
                break;
            }
        }
    }
    if !from_os {
        physical = allowed.clone();
    }
    CoreTopology {
        logical: allowed.len().max(1),
        physical_cpu_ids: if physical.is_empty() {
            vec![0]
        } else {
            physical
        },
        from_os,
    }
}

/// A pool built by [`build_pinned_pool`] and what pinning achieved.
pub struct PinnedPool {
    pub pool: rayon::ThreadPool,
    pub pinning: Pinning,
    /// Workers that the OS pinned.
    pub pinned_workers: usize,
    pub topology: CoreTopology,
}

/// Builds a pool of `threads` workers (default: one per physical core),
/// worker `k` pinned to physical core `k mod cores`, so asking for more
/// workers than cores (to test determinism, say) doubles up round-robin.
pub fn build_pinned_pool(
    threads: Option<usize>,
) -> Result<PinnedPool, rayon::ThreadPoolBuildError> {
    let topology = detect_cores();
    let n = threads.unwrap_or(topology.physical()).max(1);
    let cores = Arc::new(topology.physical_cpu_ids.clone());
    let pinned = Arc::new(AtomicU32::new(0));
    let started = Arc::new(AtomicU32::new(0));
    let (c, p, s) = (cores.clone(), pinned.clone(), started.clone());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|k| format!("archipelago-{k}"))
        .start_handler(move |k| {
            let id = c[k % c.len()];
            let ok = core_affinity::set_for_current(core_affinity::CoreId { id });
            PIN_STATE.with(|st| st.set(if ok { PIN_OK } else { PIN_REFUSED }));
            if ok {
                p.fetch_add(1, Ordering::Relaxed);
            }
            s.fetch_add(1, Ordering::Release);
        })
        .build()?;
    // Workers start asynchronously: wait until every start handler ran, so
    // the report is complete.
    pool.broadcast(|_| ());
    while started.load(Ordering::Acquire) < n as u32 {
        std::thread::yield_now();
    }
    let pinned_workers = pinned.load(Ordering::Relaxed) as usize;
    Ok(PinnedPool {
        pool,
        pinning: if pinned_workers == n {
            Pinning::Pinned
        } else {
            Pinning::Refused
        },
        pinned_workers,
        topology,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topology_is_sane() {
        let t = detect_cores();
        assert!(t.physical() >= 1);
        assert!(t.physical() <= t.logical);
    }

    #[test]
    fn pinned_pool_reports_its_workers() {
        let p = build_pinned_pool(Some(3)).unwrap();
        assert_eq!(p.pool.current_num_threads(), 3);
        // every worker reports the state its start handler recorded
        let bits = p
            .pool
            .broadcast(|_| pin_state_bit())
            .into_iter()
            .fold(0, |a, b| a | b);
        assert_eq!(pinning_from_bits(bits), p.pinning);
        assert!(p.pinned_workers <= 3);
    }
}
