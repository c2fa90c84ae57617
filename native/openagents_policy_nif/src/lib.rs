//! The NIF for `OpenAgentsPolicy.Native`: terms in, the core's answer out.
//!
//! Every decision is made by the `openagents_policy` crate. This crate reads
//! the shapes of Erlang terms into the core's plain types (`decode`), calls
//! the core, and writes its answers back as terms. Each NIF is a
//! `#[rustler::nif]` function, so rustler decodes its typed arguments (a bad
//! one raises `badarg`) and catches any panic (raised as `nif_panicked`, never
//! allowed to take the VM down). No call does more work than a handful of map
//! lookups, whatever its input, except `classify` and the decision diff (each
//! on a dirty scheduler) and
//! comparisons of account ids too large for a normal scheduler, which the
//! `*_normal` NIFs decline so that `OpenAgentsPolicy.Native` makes the same
//! call on their `*_dirty` variants (`on_either_scheduler!`).
//!
//! The entry is `rustler::init!`'s, as every rustler library has it: no
//! `upgrade` callback, so a new build reaches a VM by a restart (a release
//! by rolling replacement), never by loading it over the code that holds the
//! old one.

#![deny(unsafe_code)]

/// A NIF on a normal scheduler and its `_dirty` NIF, the same function on a dirty CPU
/// scheduler. Reading a binary argument can copy it before its size is known
/// (one that starts part-way through a byte), so `OpenAgentsPolicy.Native`
/// sends a call whose arguments hold a large binary to the `_dirty` NIF without the
/// normal NIF reading it at all (see `OpenAgentsPolicy.Scheduler`).
///
/// - `fn name_normal / name_dirty(args) -> T { body }`: both run `body`.
/// - `fn name_normal / name_dirty<'a>(env, args) -> T = decide;`: both call
///   `decide(env, args)`.
/// - `fn name_normal / name_dirty<'a>(env, args) -> T = decide(.., dirty);`:
///   the normal NIF calls `decide(env, args, false)`, which refuses (answers
///   `:dirty`) to compare account ids too large for a normal scheduler, and
///   the `_dirty` NIF calls `decide(env, args, true)`, which compares them (see
///   `decode::unless_dirty`).
///
/// The `env` of the last two is written here, not by the caller: rustler's
/// `nif` attribute names the `Env` argument where it is expanded, and a name
/// from the caller's side of `macro_rules!` hygiene would not be that one.
macro_rules! on_either_scheduler {
    ($(fn $normal:ident / $dirty:ident <$lt:lifetime>
        (env, $($arg:ident: $ty:ident $(<$ty_lt:lifetime>)?),+ $(,)?) -> $ret:ty
        = $decide:ident;)+) => {$(
        #[rustler::nif]
        fn $normal<$lt>(env: rustler::Env<$lt>, $($arg: $ty $(<$ty_lt>)?),+) -> $ret {
            $decide(env, $($arg),+)
        }

        #[rustler::nif(schedule = "DirtyCpu")]
        fn $dirty<$lt>(env: rustler::Env<$lt>, $($arg: $ty $(<$ty_lt>)?),+) -> $ret {
            $decide(env, $($arg),+)
        }
    )+};
    ($(fn $normal:ident / $dirty:ident <$lt:lifetime>
        (env, $($arg:ident: $ty:ident $(<$ty_lt:lifetime>)?),+ $(,)?) -> $ret:ty
        = $decide:ident(.., dirty);)+) => {$(
        #[rustler::nif]
        fn $normal<$lt>(env: rustler::Env<$lt>, $($arg: $ty $(<$ty_lt>)?),+) -> $ret {
            $decide(env, $($arg),+, false)
        }

        #[rustler::nif(schedule = "DirtyCpu")]
        fn $dirty<$lt>(env: rustler::Env<$lt>, $($arg: $ty $(<$ty_lt>)?),+) -> $ret {
            $decide(env, $($arg),+, true)
        }
    )+};
    ($(#[$attr:meta])* fn $normal:ident / $dirty:ident $($signature_and_body:tt)*) => {
        $(#[$attr])*
        #[rustler::nif]
        fn $normal $($signature_and_body)*

        $(#[$attr])*
        #[rustler::nif(schedule = "DirtyCpu")]
        fn $dirty $($signature_and_body)*
    };
}

mod decode;
mod diff;
mod disclosure;
mod fingerprint;
mod target;
mod text;
mod words;

rustler::init!("Elixir.OpenAgentsPolicy.Native");
