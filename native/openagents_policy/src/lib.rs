//! The decisions of two OpenAgents modules, as plain Rust.
//!
//! * [`target`]: the delegation target seam: custody, runtime class, the
//!   lifecycle projected from four substrate vocabularies, and what a caller
//!   may do to a target now, with the reason when it is nothing.
//! * [`disclosure`] and [`ladder`]: the field-by-field disclosure schedule
//!   for work in progress, and the tier ladder (`dark < pulse < ledger <
//!   glass`) it decides through.
//!
//! This crate is the one home of those decisions and holds only them: the
//! decision document and its diff are `openagents_policy_decisions`, and the
//! Elixir library serves both through a NIF crate that only converts terms.
//! Nothing here knows of Erlang, persists anything, or reads a clock. Every
//! vocabulary is a closed enum (`ALL`, `as_str`, and `parse`, which refuses
//! a stranger with a typed [`Refusal`]); a substrate word that may outgrow
//! its vocabulary is read as a [`Reading`], which can say `Unrecognized`.
//!
//! # Example
//!
//! A Rust service answering the two questions the Phoenix app asks: what may
//! this caller do to a target, and which fields of a record may this reader
//! see.
//!
//! ```
//! use openagents_policy::disclosure::{Family, Relationship};
//! use openagents_policy::ladder::Viewer;
//! use openagents_policy::target::{BoxState, Capability, Kind, Reach, Seam};
//!
//! // An idle Box is active; its owner may start work on it.
//! let seam = Seam::new(Kind::Box, BoxState::read("idle").lifecycle(), Reach::Authorized);
//! assert_eq!(seam.capabilities(), [Capability::Start]);
//!
//! // A signed-in stranger reads a work job at `pulse`: no report, no budget.
//! let stranger: Viewer = Relationship::Stranger.viewer(Some("acct-7")).into();
//! let fields: Vec<&str> = Family::WorkJob.fields_at(&stranger).fields().map(|f| f.name()).collect();
//! assert_eq!(fields, ["completed_at", "id", "kind", "started_at", "status"]);
//! ```
//!
//! The Elixir library's guide "The Rust API" runs its examples as doctests
//! of `openagents_policy_decisions`.

#![forbid(unsafe_code)]

pub mod disclosure;
pub mod ladder;
pub mod target;
mod vocabulary;

pub use vocabulary::{Reading, Refusal, Vocabulary};
