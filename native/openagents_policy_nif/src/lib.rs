//! The NIF for `OpenAgentsPolicy.Native`: typed terms in, the core's answer
//! out. Every decision is `openagents_policy`'s (the document and the diff
//! `openagents_policy_decisions`'); this crate only converts, through
//! rustler's own API, and loads only beside its package's rules
//! ([`document::load`]). How terms cross, which NIFs run dirty, and why there
//! is no `upgrade` callback: guides/rust.md, "The NIF boundary".

#![deny(unsafe_code)]

mod decode;
mod diff;
mod disclosure;
mod document;
mod error;
mod target;
mod text;
mod word;

rustler::init!("Elixir.OpenAgentsPolicy.Native", load = document::load);
