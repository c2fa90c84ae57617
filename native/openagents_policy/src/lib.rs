//! The decisions of two OpenAgents modules, as plain Rust: [`target`], the
//! delegation target seam, and [`disclosure`], the field-by-field disclosure
//! schedule for work in progress, with the tier [`ladder`] it decides through.
//!
//! This crate is the one home of those decisions and holds only them (the
//! decision document and its diff are `openagents_policy_decisions`; the
//! Elixir library serves both through a NIF crate that only converts terms).
//! Nothing here knows of Erlang, persists anything, or reads a clock. A
//! vocabulary's `parse` refuses a stranger with a typed [`Refusal`]; a
//! substrate word that may outgrow its vocabulary is read as a [`Reading`].
//! The Elixir library's guide "The Rust API" (guides/rust.md) shows the
//! crate asked both questions; its examples run as doctests of
//! `openagents_policy_decisions`.

#![forbid(unsafe_code)]

pub mod disclosure;
pub mod ladder;
pub mod target;
mod vocabulary;

pub use vocabulary::{Reading, Refusal, Vocabulary};
