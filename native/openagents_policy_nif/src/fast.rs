//! The NIFs a host calls once per record, entered without rustler's per-call
//! wrapper.
//!
//! `#[rustler::nif]`'s wrapper collects a call's arguments into a `Vec`
//! before it decodes them: an allocation and a free on every call, which
//! took a bare NIF call here from about 15 ns to about 34 ns. Most of this
//! library's calls never reach the NIF at run time (their answers are
//! compiled into the Elixir modules), but a page of records makes one
//! `effective_tier/2` call per record, and each reaches the NIF. So for the
//! four NIFs below, and only for them, the VM's function table holds an
//! entry point of this module's ([`patched`]) instead of rustler's: it puts
//! the arguments in an array on the stack, calls the same decision the
//! `#[rustler::nif]` function calls, and treats a panic as rustler does
//! (`:nif_panicked` raised, the panic's message withheld). The rows of
//! `make bench` that pay the difference are named beside each.
//!
//! This is the crate's second `unsafe` code, and written against rustler
//! 0.37 and 0.38, whose raw term type is `sys::ERL_NIF_TERM`.

use std::ffi::{c_int, c_uint, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use rustler::sys::{enif_make_badarg, enif_raise_exception, ErlNifEnv, ErlNifFunc, ERL_NIF_TERM};
use rustler::types::atom;
use rustler::{Env, NifResult, Term};

use crate::disclosure;

/// A NIF of `N` term arguments, entered through [`enter`].
trait Fast<const N: usize> {
    /// The NIF's name, as rustler registers it.
    const NAME: &'static CStr;

    /// The decision, as the `#[rustler::nif]` function of that name makes it.
    fn decide<'a>(env: Env<'a>, args: [Term<'a>; N]) -> NifResult<Term<'a>>;
}

/// The VM's entry point for `F`: rustler's wrapper, without the `Vec`.
///
/// # Safety
///
/// Called by the VM only, for the function registered as `F::NAME` with
/// arity `N`, so `argv` holds `N` terms of `env`.
unsafe extern "C" fn enter<F: Fast<N>, const N: usize>(
    env: *mut ErlNifEnv,
    _argc: c_int,
    argv: *const ERL_NIF_TERM,
) -> ERL_NIF_TERM {
    let lifetime = ();
    // SAFETY: `env` is the calling process's environment for this call, and
    // the only `Env` made of it; `argv` holds `N` of its terms (above).
    let env = unsafe { Env::new(&lifetime, env) };
    let terms = std::array::from_fn(|at| unsafe { Term::new(env, *argv.add(at)) });
    match catch_unwind(AssertUnwindSafe(|| F::decide(env, terms))) {
        Ok(Ok(term)) => term.as_c_arg(),
        // The decisions below fail only as a bad argument (a term that does
        // not decode, a map rustler could not make), raised as rustler raises it.
        // SAFETY: both calls take the call's own environment.
        Ok(Err(_)) => unsafe { enif_make_badarg(env.as_c_arg()) },
        Err(_) => unsafe { enif_raise_exception(env.as_c_arg(), atom::nif_panicked().as_c_arg()) },
    }
}

/// `linked_tier_normal/5`: one call per record with a loaded link. Rows:
/// "effective_tier/2 live link", "effective_tier/2 revoked link", "page of
/// 200 attempts".
struct LinkedTier;

impl Fast<5> for LinkedTier {
    const NAME: &'static CStr = c"linked_tier_normal";

    fn decide<'a>(env: Env<'a>, args: [Term<'a>; 5]) -> NifResult<Term<'a>> {
        let [owner, tier, revoked_at, viewer, user_admin] = args;
        Ok(disclosure::linked_tier(
            env, owner, tier, revoked_at, viewer, user_admin, false,
        ))
    }
}

/// `effective_tier_normal/4`: one call per record without a loaded link.
/// Rows: "effective_tier/2 no link", "page of 200 attempts".
struct EffectiveTier;

impl Fast<4> for EffectiveTier {
    const NAME: &'static CStr = c"effective_tier_normal";

    fn decide<'a>(env: Env<'a>, args: [Term<'a>; 4]) -> NifResult<Term<'a>> {
        let [link, tier, viewer, user_admin] = args;
        Ok(disclosure::effective_tier(
            env, link, tier, viewer, user_admin, false,
        ))
    }
}

/// `link_for_attempt_normal/4`: one call per attempt created. Rows:
/// "link_for_attempt/3 user principal", "link_for_attempt/3 agent principal".
struct LinkForAttempt;

impl Fast<4> for LinkForAttempt {
    const NAME: &'static CStr = c"link_for_attempt_normal";

    fn decide<'a>(env: Env<'a>, args: [Term<'a>; 4]) -> NifResult<Term<'a>> {
        let [repository, kind, id, authority] = args;
        disclosure::link_for_attempt(env, repository, kind, id, authority)
    }
}

/// `fields_at_normal/3`: a tier that is not a tier word (a viewer, a user, an
/// unknown word), which `fields_at/2` and `project/3` cannot answer from
/// their compiled clauses. Row: "fields_at/2 "ledger", nil, :bogus, viewer
/// map".
struct FieldsAt;

impl Fast<3> for FieldsAt {
    const NAME: &'static CStr = c"fields_at_normal";

    fn decide<'a>(env: Env<'a>, args: [Term<'a>; 3]) -> NifResult<Term<'a>> {
        let [family, tier, user_admin] = args;
        Ok(disclosure::fields_at(
            env,
            family.decode()?,
            tier,
            user_admin,
        ))
    }
}

/// The entry point for a function rustler registered as `name`/`arity`: this
/// module's where it has one, else rustler's own.
fn entry_point(name: &CStr, arity: c_uint, rustler: EntryPoint) -> EntryPoint {
    let ours: [(&CStr, c_uint, EntryPoint); 4] = [
        (LinkedTier::NAME, 5, enter::<LinkedTier, 5>),
        (EffectiveTier::NAME, 4, enter::<EffectiveTier, 4>),
        (LinkForAttempt::NAME, 4, enter::<LinkForAttempt, 4>),
        (FieldsAt::NAME, 3, enter::<FieldsAt, 3>),
    ];
    ours.iter()
        .find(|(ours, ours_arity, _)| *ours == name && *ours_arity == arity)
        .map_or(rustler, |&(_, _, entry)| entry)
}

/// A NIF's entry point, as the VM's function table holds it.
type EntryPoint = unsafe extern "C" fn(*mut ErlNifEnv, c_int, *const ERL_NIF_TERM) -> ERL_NIF_TERM;

/// rustler's function table with this module's entry points in it. Made
/// once per load of the library (by `nif_init`) and kept for as long as the
/// library is: the VM reads it while it holds the library. A count that is
/// not a length gives rustler's table back untouched.
///
/// # Safety
///
/// `funcs` must point to `count` valid entries (rustler's table).
pub unsafe fn patched(funcs: *const ErlNifFunc, count: c_int) -> *const ErlNifFunc {
    let Ok(count) = usize::try_from(count) else {
        return funcs;
    };
    // SAFETY: rustler's table, as the caller promises.
    let funcs = unsafe { std::slice::from_raw_parts(funcs, count) };
    let table: Box<[ErlNifFunc]> = funcs
        .iter()
        .map(|func| ErlNifFunc {
            name: func.name,
            arity: func.arity,
            // SAFETY: rustler's names are NUL-terminated static strings.
            function: entry_point(
                unsafe { CStr::from_ptr(func.name) },
                func.arity,
                func.function,
            ),
            flags: func.flags,
        })
        .collect();
    Box::leak(table).as_ptr()
}
