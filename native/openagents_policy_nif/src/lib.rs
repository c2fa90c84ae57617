//! The NIF for `OpenAgentsPolicy.Native`: typed terms in, the core's answer
//! out. Every decision is `openagents_policy`'s (the document and the diff
//! are `openagents_policy_decisions`'); this crate only converts, through
//! rustler's own API: words decode into the core's types and encode from
//! them ([`word`]), a NIF returns its value, or a `Result` whose error is
//! the one [`error::Error`] (rustler writes the `{:ok, _}`/`{:error, _}`).
//! A bad argument raises `badarg`, a panic `nif_panicked`, never taking the
//! VM down. All run on a normal scheduler but `classify` and the diff
//! (`DirtyCpu`). The library loads only beside its own package's rules
//! ([`document::load`]). No `upgrade` callback: a new build reaches a VM by
//! restart, never by reload.

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
