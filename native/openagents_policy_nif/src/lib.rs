//! The NIF for `OpenAgentsPolicy.Native`: terms in, the core's answer out.
//!
//! Every decision is made by the `openagents_policy` crate. This crate reads
//! the shapes of Erlang terms into the core's plain types (`decode`), calls
//! the core, and writes its answers back as terms. No call does more work than
//! a handful of map lookups, whatever its input, so every NIF but `classify`
//! runs on a normal scheduler; a panic is caught and raised, never allowed to
//! take the VM down (`nif`). Answers are built from atoms cached at load and
//! stack arrays (`make`), so the common calls touch no heap of their own.

mod decode;
mod disclosure;
mod init;
mod make;
mod nif;
mod target;
mod words;
