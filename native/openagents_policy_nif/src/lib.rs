//! The NIF for `OpenAgentsPolicy.Native`: typed terms in, the core's answer
//! out. Every decision is `openagents_policy`'s (the document and the diff
//! are `openagents_policy_decisions`'); this crate only converts. Each NIF is
//! a `#[rustler::nif]`, so a bad argument raises `badarg` and a panic raises
//! `nif_panicked` rather than taking the VM down. All run on a normal
//! scheduler but `classify`, the diff and the document (`DirtyCpu`). No
//! `upgrade` callback: a new build reaches a VM by restart, never by reload.

#![deny(unsafe_code)]

mod decode;
mod diff;
mod disclosure;
mod fingerprint;
mod target;
mod text;
mod words;

rustler::init!("Elixir.OpenAgentsPolicy.Native");
