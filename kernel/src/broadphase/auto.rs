//! [`BroadPhaseKind::Auto`](super::BroadPhaseKind::Auto): SAP while few
//! bodies move, MBP over a fitted grid when many do.
//!
//! Measured (`scaling --broadphase sap|mbp`, 1 thread, this 2-core
//! machine; broad phase ms per step): the rain, 4,095 boxes falling apart,
//! SAP 1.00 against MBP 1.56; the avalanche of 4,096 bodies landing in a
//! heap SAP 1.31, MBP 0.81; of 10,000 SAP 8.0, MBP 1.96; of 32,768 SAP 79,
//! MBP 11.4 (12% of the step). SAP's cost grows with the endpoint swaps of
//! every moving body through dense axes, MBP's with the bodies per region:
//! past ~8k moving bodies MBP wins in every scene tried, below ~4k SAP
//! wins or loses little. So: MBP from [`MBP_FROM_MOVING`] awake bodies,
//! back to SAP below [`SAP_BELOW_MOVING`] (the gap keeps a world near the
//! line from switching back and forth).
//!
//! The choice is made at the start of a collision step's broad phase from
//! the number of awake bodies, a count that does not depend on timing, so
//! it is the same on every run and thread count. Switching moves every
//! body into the other structure (one batch insertion, as for a loaded
//! level); both report exactly the overlapping pairs, sorted, so the pairs
//! and the simulation are the same whichever is in use.

use super::mbp::Mbp;
use super::sap::Sap;
use super::{BodyPair, BroadPhase, LayerFilter, PairSearch};
use crate::body::Bodies;
use crate::error::Result;
use crate::jobs::StepCtx;

/// Awake bodies from which `Auto` uses MBP.
pub const MBP_FROM_MOVING: usize = 8192;
/// Awake bodies below which `Auto` goes back to SAP.
pub const SAP_BELOW_MOVING: usize = 4096;
/// The fitted grid `Auto`'s MBP uses: 8 × 8 columns, as the measurements
/// above (and PhysX's default advice for a level).
const AUTO_SUBDIVISIONS: u32 = 8;

pub(crate) struct AutoBroadPhase {
    sap: Sap,
    mbp: Mbp,
    on_mbp: bool,
    /// [`MBP_FROM_MOVING`] and [`SAP_BELOW_MOVING`] (tests set others to
    /// switch small worlds).
    pub mbp_from: usize,
    pub sap_below: usize,
    /// Times the structure in use changed.
    pub switches: u32,
}

impl AutoBroadPhase {
    pub fn new(max_bodies: usize, max_pairs: usize) -> Result<Self> {
        Ok(Self {
            sap: Sap::new(max_bodies, max_pairs),
            mbp: Mbp::fitted(AUTO_SUBDIVISIONS, max_bodies, max_pairs)?,
            on_mbp: false,
            mbp_from: MBP_FROM_MOVING,
            sap_below: SAP_BELOW_MOVING,
            switches: 0,
        })
    }

    /// Whether MBP is in use.
    pub fn on_mbp(&self) -> bool {
        self.on_mbp
    }

    pub fn mbp(&self) -> &Mbp {
        &self.mbp
    }

    fn active(&mut self) -> &mut dyn BroadPhase {
        if self.on_mbp {
            &mut self.mbp
        } else {
            &mut self.sap
        }
    }

    /// Switches structure when the awake count crossed its line: every
    /// added body leaves the one in use (queued, applied if it is used
    /// again) and enters the other.
    fn choose(&mut self, bodies: &Bodies) {
        let moving = bodies.active.len();
        let want_mbp = if self.on_mbp {
            moving >= self.sap_below
        } else {
            moving >= self.mbp_from
        };
        if want_mbp == self.on_mbp {
            return;
        }
        for &s in &bodies.added {
            self.active().remove(s);
        }
        self.on_mbp = want_mbp;
        for &s in &bodies.added {
            self.active().add(s);
        }
        self.switches += 1;
    }
}

impl BroadPhase for AutoBroadPhase {
    fn add(&mut self, slot: u32) {
        self.active().add(slot)
    }
    fn remove(&mut self, slot: u32) {
        self.active().remove(slot)
    }
    fn moved(&mut self, slot: u32) {
        self.active().moved(slot)
    }
    fn update(&mut self, ctx: &StepCtx, bodies: &Bodies) -> PairSearch {
        self.choose(bodies);
        self.active().update(ctx, bodies)
    }
    fn has_pending(&self) -> bool {
        if self.on_mbp {
            self.mbp.has_pending()
        } else {
            self.sap.has_pending()
        }
    }
    fn report(
        &mut self,
        ctx: &StepCtx,
        bodies: &Bodies,
        filter: &LayerFilter,
        out: &mut Vec<BodyPair>,
        max_pairs: usize,
    ) -> PairSearch {
        self.active().report(ctx, bodies, filter, out, max_pairs)
    }
}
