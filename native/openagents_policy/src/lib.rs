//! The decisions of two OpenAgents modules, as plain Rust.
//!
//! * [`target`]: the delegation target seam. Custody, runtime class, the
//!   unified lifecycle projected from four substrate vocabularies, and what a
//!   caller may do to a target now, with the reason when the answer is
//!   nothing.
//! * [`disclosure`] and [`ladder`]: the field-by-field disclosure schedule for
//!   work in progress, and the tier ladder (`dark < pulse < ledger < glass`)
//!   it decides through.
//!
//! This crate is the one home of those decisions. The Elixir library
//! `openagents_policy` serves them to a Phoenix app through a NIF crate that
//! only converts terms; a Rust service can depend on this crate alone and get
//! the same answers and the same JSON. Nothing here knows of Erlang, persists
//! anything, or reads a clock.
//!
//! Every vocabulary is a closed enum with its words in declaration order
//! (`ALL`), `as_str`, and `parse`, which refuses a stranger with a typed
//! [`Refusal`]. Substrate words that may outgrow the vocabulary are read as a
//! [`Reading`], which can say `Unrecognized` instead of guessing.

#![forbid(unsafe_code)]

pub mod disclosure;
pub mod ladder;
pub mod target;
mod vocabulary;

pub use vocabulary::{Reading, Refusal, Vocabulary};
