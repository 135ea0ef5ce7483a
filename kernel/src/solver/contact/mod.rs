//! Contacts as a constraint type: a type batch of bundles (`batch.rs`),
//! their setup (`prepare.rs`), the velocity rows written once for one lane
//! and for all lanes (`solve.rs`), and the position pushes
//! (`position.rs`).

pub(crate) mod batch;
pub(crate) mod position;
pub(crate) mod prepare;
#[cfg(test)]
pub(crate) mod property_tests;
pub(crate) mod solve;
