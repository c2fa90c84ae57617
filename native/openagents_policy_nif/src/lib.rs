//! The NIF for `OpenAgentsPolicy.Native`: typed terms in, the core's answer
//! out. Every decision is `openagents_policy`'s (the document and the diff
//! `openagents_policy_decisions`'); this crate only converts, through
//! rustler's own API, and loads only beside its package's rules
//! ([`document::load`]). How terms cross, which NIFs run dirty, and why there
//! is no `upgrade` callback: guides/rust.md, "The NIF boundary".

#![deny(unsafe_code)]

/// One NIF per vocabulary an Elixir module compiles in: its words in the
/// core's order, as binaries or as atoms.
macro_rules! words {
    (binaries $($nif:ident: $vocabulary:ident),+) => {$(
        #[rustler::nif]
        fn $nif() -> Vec<&'static str> {
            $vocabulary::words()
        }
    )+};
    (atoms $($nif:ident: $vocabulary:ident),+) => {$(
        #[rustler::nif]
        fn $nif(env: rustler::Env<'_>) -> rustler::NifResult<Vec<rustler::Atom>> {
            crate::word::atoms(env, $vocabulary::ALL)
        }
    )+};
}

mod decode;
mod diff;
mod disclosure;
mod document;
mod error;
mod target;
mod word;

rustler::init!("Elixir.OpenAgentsPolicy.Native", load = document::load);
