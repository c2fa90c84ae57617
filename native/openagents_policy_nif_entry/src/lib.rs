//! rustler's entry for `OpenAgentsPolicy.Native`: the NIFs that
//! `openagents_policy_nif` registers with `#[rustler::nif]`, gathered by
//! `rustler::init!`.
//!
//! The macro always emits `openagents_policy_nif_entry_nif_init`, and emits
//! the library's `nif_init` only when cargo builds this crate as a primary
//! package, which it never does: the crate is excluded from the workspace. The
//! `nif_init` the VM calls is `openagents_policy_nif`'s, which takes this
//! entry and adds the `upgrade` callback rustler leaves out.
//!
//! This crate exists only for that callback, which hot upgrades and code
//! reloading need: when the rustler in the project's range emits `upgrade`
//! itself, `rustler::init!` moves into `openagents_policy_nif` and this crate
//! goes.

rustler::init!("Elixir.OpenAgentsPolicy.Native");
