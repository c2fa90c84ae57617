//! The NIF for `OpenAgentsPolicy.Native`: terms in, the core's answer out.
//!
//! Every decision is made by the `openagents_policy` crate. This crate reads
//! the shapes of Erlang terms into the core's plain types (`decode`), calls
//! the core, and writes its answers back as terms. No call does more work than
//! a handful of map lookups, whatever its input, so every NIF runs on a normal
//! scheduler; a panic is caught by rustler and raised, never allowed to take
//! the VM down.

mod decode;
mod disclosure;
mod init;
mod target;
mod words;
