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
//! This crate is the one home of those decisions, and holds only them. The
//! decision document (every finite-domain answer as rows, and its digest)
//! and the diff of two such documents are the crate
//! `openagents_policy_decisions` beside it, which depends on this one. The
//! Elixir library `openagents_policy` serves both to a Phoenix app through a
//! NIF crate that only converts terms; a Rust service can depend on this
//! crate alone and get the same answers and the same JSON. Nothing here
//! knows of Erlang, persists anything, or reads a clock.
//!
//! Every vocabulary is a closed enum with its words in declaration order
//! (`ALL`), `as_str`, and `parse`, which refuses a stranger with a typed
//! [`Refusal`]. Substrate words that may outgrow the vocabulary are read as a
//! [`Reading`], which can say `Unrecognized` instead of guessing.
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
//! use openagents_policy::target::{box_lifecycle, Capability, Kind, Reach, Seam};
//!
//! // An idle Box is active; its owner may start work on it.
//! let seam = Seam::new(Kind::Box, box_lifecycle("idle"), Reach::Authorized);
//! assert_eq!(seam.capabilities(), [Capability::Start]);
//! assert_eq!(
//!     serde_json::to_string(&seam)?,
//!     r#"{"custody":"openagents_managed","runtime_class":null,"lifecycle":"active","capabilities":["start"],"unavailable_reason":null}"#
//! );
//!
//! // A signed-in stranger reads a work job at `pulse`: no report, no budget.
//! let stranger: Viewer<&str> = Relationship::Stranger.viewer(Some("acct-7")).into();
//! let fields: Vec<&str> = Family::WorkJob.fields_at(&stranger).fields().map(|f| f.name()).collect();
//! assert_eq!(fields, ["completed_at", "id", "kind", "started_at", "status"]);
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! The guides of the Elixir library (`mix docs`) include one for this crate,
//! "The Rust API", whose examples run as doctests of
//! `openagents_policy_decisions` (which depends on this crate and can run
//! them all).

#![forbid(unsafe_code)]

pub mod disclosure;
pub mod ladder;
pub mod target;
mod vocabulary;

pub use vocabulary::{Reading, Refusal, Vocabulary};
