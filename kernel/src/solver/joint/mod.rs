//! Joints as a constraint type: their type batch (`batch.rs`), setup
//! (`prepare.rs`: gather, then the parts each lane uses), velocity
//! iterations (`solve.rs`) and position iterations (`position.rs`), all
//! built from the rows in `solver/parts/`.

pub(crate) mod batch;
pub(crate) mod position;
pub(crate) mod prepare;
#[cfg(test)]
mod property_tests;
pub(crate) mod solve;
