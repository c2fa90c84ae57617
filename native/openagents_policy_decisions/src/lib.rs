//! The decisions of `openagents_policy` written out, and compared.
//!
//! [`document`] writes every independent finite-domain decision of the rules
//! as one document, and its digest to compare a cluster's nodes by; [`diff`]
//! says what changes between two, and for whom, to review, announce and roll
//! out a rule change by.
//!
//! The rules are the crate `openagents_policy`, which knows nothing of this
//! one. The maintainer's tool (`examples/decisions.rs`) writes
//! `priv/decisions.json`, diffs it against the last release's, and holds a
//! release to announcing its changes.

#![forbid(unsafe_code)]

pub mod diff;
pub mod document;

// The Rust guide's examples, run as doctests of this crate, which depends on
// the rules, so the guide cannot drift from either.
#[cfg(doctest)]
#[doc = include_str!("../../../guides/rust.md")]
mod rust_guide {}
