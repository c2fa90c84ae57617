//! The NIF for `OpenAgentsPolicy.Native`: terms in, the core's answer out.
//!
//! Every decision is made by the `openagents_policy` crate; the decision
//! document and the diff are `openagents_policy_decisions`'. This crate reads
//! typed terms into the core's plain types (`decode`: the viewer's class, a
//! link's state, tier and ownership, each reduced once by
//! `OpenAgentsPolicy.Host` before the call), calls the core, and writes its
//! answers back as terms. Each NIF is a `#[rustler::nif]` function, so
//! rustler decodes its typed arguments (a bad one raises `badarg`) and
//! catches any panic (raised as `nif_panicked`, never allowed to take the VM
//! down). Every NIF reads bounded terms and runs on a normal scheduler,
//! except the three whose work grows with their input or is computed once:
//! `classify`, the decision diff and the decision document, which are
//! `schedule = "DirtyCpu"`.
//!
//! The entry is `rustler::init!`'s, as every rustler library has it: no
//! `upgrade` callback, so a new build reaches a VM by a restart (a release
//! by rolling replacement), never by loading it over the code that holds the
//! old one.

#![deny(unsafe_code)]

mod decode;
mod diff;
mod disclosure;
mod fingerprint;
mod target;
mod text;
mod words;

rustler::init!("Elixir.OpenAgentsPolicy.Native");
