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
//! # The entry
//!
//! `rustler::init!` (in the `openagents_policy_nif_entry` crate) builds the
//! library's entry, but leaves its `upgrade` callback out, and the VM refuses
//! to load a library into a new version of a module while the old version
//! still holds one when there is no `upgrade`. That is exactly what a code
//! reloader does (purge, delete, load: the old code still holds the library)
//! and what a release's hot upgrade does (load the new version over the
//! current one: a release's relup, from the new version's directory). So the
//! `nif_init` the VM calls is [`nif_init`] below: rustler's entry, copied,
//! with `upgrade` set. The library keeps no state of its own across loads
//! (no resources; its atoms are made on first use), so upgrading is loading;
//! the VM unloads the old library once the old code is purged. The one state
//! it keeps is a mark in `priv_data` ([`load`]), by which [`upgrade`]
//! refuses to "upgrade" onto the very library already loaded (the same path
//! loaded again, which the VM would silently serve from the old file).
//!
//! Those two callbacks are the entry's only change: the function table is
//! rustler's own, so every NIF is entered through its `#[rustler::nif]`
//! wrapper (typed decoding, each error raised as rustler encodes it, panics
//! caught). The copy, and with it the `openagents_policy_nif_entry` crate,
//! stays only as long as hot upgrades need an `upgrade` callback that
//! `rustler::init!` does not emit (none up to 0.39 does); once the rustler
//! this crate builds with emits one, both go and `rustler::init!` moves here.

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

use std::ffi::c_int;
use std::mem::{self, MaybeUninit};
use std::ptr::{self, addr_of, addr_of_mut};
use std::sync::atomic::{AtomicPtr, Ordering};

use rustler::sys::{c_void, ErlNifEntry, ErlNifEnv};

// Links the crate whose `rustler::init!` builds the entry.
extern crate openagents_policy_nif_entry;

extern "C" {
    /// rustler's generated entry point (`<crate>_nif_init`): resolves the
    /// `enif_*` symbols and returns the entry, which lives as long as the
    /// library.
    fn openagents_policy_nif_entry_nif_init() -> *const ErlNifEntry;
}

/// The mark this library leaves in `priv_data` when it loads: the address of
/// a static of its own, so each loaded library has its own.
static MARK: u8 = 0;

fn mark() -> *mut c_void {
    addr_of!(MARK).cast_mut().cast()
}

/// rustler's `load` callback, kept by [`nif_init`] for [`load`] to call.
static RUSTLER_LOAD: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());

/// The VM's `load` callback: rustler's (which registers resource types and
/// runs the `load` hook; this library has neither), then the mark in
/// `priv_data` that [`upgrade`] reads.
///
/// Generic in the type of `load_info`, a term this function only passes on:
/// rustler's `sys` calls the raw term type `ERL_NIF_TERM` in 0.37 and 0.38
/// and `ErlNifTerm` in 0.39, all in the workspace's range, and the entry's
/// field names whichever the build has.
extern "C" fn load<LoadInfo>(
    env: *mut ErlNifEnv,
    priv_data: *mut *mut c_void,
    load_info: LoadInfo,
) -> c_int {
    let rustler_load = RUSTLER_LOAD.load(Ordering::Acquire);
    let status = if rustler_load.is_null() {
        0
    } else {
        // SAFETY: `RUSTLER_LOAD` holds only the `load` field of rustler's
        // entry (see `nif_init`), a function of exactly this signature:
        // `LoadInfo` is inferred from that same field's type.
        unsafe {
            let rustler_load: extern "C" fn(*mut ErlNifEnv, *mut *mut c_void, LoadInfo) -> c_int =
                mem::transmute::<*mut (), _>(rustler_load);
            rustler_load(env, priv_data, load_info)
        }
    };
    if status == 0 {
        // SAFETY: the VM passes a valid pointer to the library's priv_data.
        unsafe { *priv_data = mark() };
    }
    status
}

/// The VM's `upgrade` callback, run when the library is loaded into a new
/// version of the module while the old version holds its own. rustler's
/// `load` registers the library's resource types and runs its `load` hook;
/// this library has neither (`rustler::init!` is given no `load`, and no type
/// is a resource), so an upgrade has nothing to carry over or set up. Should
/// either ever be added, this must do what `load` does.
///
/// One upgrade is refused: onto this very library. A path the VM has loaded
/// already is not read again (the loader hands back the library it holds),
/// so a rebuild installed under the same name and loaded while the old code
/// still holds the library would silently keep answering with the old one.
/// The old library's mark is then this library's own, and the load fails
/// (`{:error, {:upgrade, ~c"Library upgrade-call unsuccessful (1)."}}`)
/// instead. A relup loads a new path (`lib/<app>-<vsn>/priv/native/...`), a
/// library with a mark of its own, and is let through.
extern "C" fn upgrade<LoadInfo>(
    _env: *mut ErlNifEnv,
    priv_data: *mut *mut c_void,
    old_priv_data: *mut *mut c_void,
    _load_info: LoadInfo,
) -> c_int {
    // SAFETY: the VM passes valid pointers to both libraries' priv_data.
    unsafe {
        if *old_priv_data == mark() {
            return 1;
        }
        *priv_data = mark();
    }
    0
}

/// The entry the VM reads: rustler's, with [`load`] and [`upgrade`].
/// Written by [`nif_init`], which the VM calls once per load of the library,
/// on one thread, and reads the entry only after that call returns.
static mut ENTRY: MaybeUninit<ErlNifEntry> = MaybeUninit::uninit();

/// The symbol the VM looks up in a NIF library.
#[no_mangle]
extern "C" fn nif_init() -> *const ErlNifEntry {
    // SAFETY: rustler's entry is a static of this library, valid for reads;
    // it is copied bit for bit (its fields are pointers to statics and
    // functions of the library). `ENTRY` is written only here, before the VM
    // that called this function reads it.
    unsafe {
        let rustler = ptr::read(openagents_policy_nif_entry_nif_init());
        let rustler_load = rustler.load.map_or(ptr::null_mut(), |f| f as *mut ());
        RUSTLER_LOAD.store(rustler_load, Ordering::Release);
        let entry = addr_of_mut!(ENTRY).cast::<ErlNifEntry>();
        entry.write(ErlNifEntry {
            load: Some(load),
            upgrade: Some(upgrade),
            ..rustler
        });
        entry
    }
}
