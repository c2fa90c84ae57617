//! `OpenAgents.Transparency.WorkDisclosure`'s and the ladder's decisions.
//!
//! Each NIF takes its arguments as terms (the `nifs!` table in `init` says
//! which function serves which NIF) and builds its answer from the atoms
//! cached at load, on the stack.

use std::collections::HashSet;
use std::sync::OnceLock;

use openagents_policy::disclosure::{self, attempt_link as mint, Family, PrincipalReading, Record};
use openagents_policy::ladder::{self, Tier};
use rustler::types::atom;
use rustler::types::ListIterator;
use rustler::{Atom, Binary, Encoder, Env, Error, NifResult, Term};

use crate::decode::{self, get, is_nil, is_struct, unless_heavy, ErlEq};
use crate::make::{self, raw, Terms};
use crate::nif::on_dirty_scheduler;
use crate::words::{self, position, words};

fn tier_atom(tier: Tier) -> Atom {
    words().tiers[position(Tier::ALL, tier)]
}

fn family_index(family: Family) -> usize {
    position(Family::ALL, family)
}

pub fn families(env: Env<'_>) -> Term<'_> {
    make::list(env, raw(&words().families))
}

pub fn tiers(env: Env<'_>) -> Term<'_> {
    make::list(env, raw(&words().tiers))
}

/// `%{family => %{field => tier}}`.
pub fn schedule(env: Env<'_>) -> NifResult<Term<'_>> {
    let words = words();
    let mut families = Terms::new();
    for at in 0..Family::ALL.len() {
        let fields = make::map(env, raw(&words.fields[at]), raw(&words.field_tiers[at]))?;
        families.push(fields.as_c_arg());
    }
    make::map(env, raw(&words.families), families.as_slice())
}

/// The schedule's JSON, as the core serializes it (or why serde could not).
/// The schedule is constant, so it is written once, on first use.
pub fn schedule_json(env: Env<'_>) -> Term<'_> {
    static JSON: OnceLock<Result<String, String>> = OnceLock::new();
    let json = JSON.get_or_init(|| {
        serde_json::to_string(&disclosure::schedule()).map_err(|error| error.to_string())
    });
    match json {
        Ok(json) => make::binary(env, json.as_bytes()),
        Err(why) => make::error(env, make::binary(env, why.as_bytes())),
    }
}

pub fn never<'a>(env: Env<'a>, family: Term<'a>) -> NifResult<Term<'a>> {
    let family = decode::family(family)?;
    Ok(make::list(env, raw(&words().never[family_index(family)])))
}

pub fn source_columns<'a>(env: Env<'a>, family: Term<'a>) -> NifResult<Term<'a>> {
    let family = decode::family(family)?;
    Ok(make::list(env, raw(&words().sources[family_index(family)])))
}

pub fn tier_for<'a>(env: Env<'a>, family: Term<'a>, field: Term<'a>) -> NifResult<Term<'a>> {
    let at = family_index(decode::family(family)?);
    let words = words();
    Ok(words.fields[at]
        .iter()
        .position(|name| decode::is(field, *name))
        .map(|field| words.field_tiers[at][field])
        .encode(env))
}

pub fn fields_at<'a>(
    env: Env<'a>,
    family: Term<'a>,
    tier: Term<'a>,
    user_admin: Term<'a>,
) -> NifResult<Term<'a>> {
    let family = decode::family(family)?;
    let names = raw(&words().fields[family_index(family)]);
    let admitted = family.admitted(&decode::viewer(tier, user_admin));
    Ok(admitted
        .positions()
        .map(|at| names[at])
        .collect::<Terms>()
        .list(env))
}

/// The projection of `source`: each admitted field taken by its name, `nil`
/// when absent; `nil` itself when nothing is admitted, without reading the
/// source. Looks up at most one key per scheduled field, whatever the size of
/// the source.
pub fn project<'a>(
    env: Env<'a>,
    family: Term<'a>,
    source: Term<'a>,
    tier: Term<'a>,
    user_admin: Term<'a>,
) -> NifResult<Term<'a>> {
    let family = decode::family(family)?;
    let admitted = family.admitted(&decode::viewer(tier, user_admin));
    if admitted.is_empty() {
        return Ok(atom::nil().to_term(env));
    }
    if !source.is_map() {
        return Err(Error::BadArg);
    }
    let names = &words().fields[family_index(family)];
    let nil = atom::nil().to_term(env);
    let mut keys = Terms::new();
    let mut values = Terms::new();
    for at in admitted.positions() {
        let key = names[at];
        keys.push(key.as_c_arg());
        values.push(source.map_get(key).unwrap_or(nil).as_c_arg());
    }
    make::map(env, keys.as_slice(), values.as_slice())
}

/// A record's effective tier, from its two fields the Elixir side read:
/// through `link` when it is a link struct, otherwise through `tier`, the
/// record's tier column (`nil` when absent).
fn record_tier<'a>(env: Env<'a>, args: [Term<'a>; 4], dirty: bool) -> Term<'a> {
    let [link, tier, viewer, user_admin] = args;
    let record = if is_struct(link, words::link_struct()) {
        Record::Linked(decode::link(link))
    } else {
        Record::Unlinked(decode::subject(tier))
    };
    let decided = decide_record(&record, viewer, user_admin, dirty);
    decided.map_or_else(
        || on_dirty_scheduler(env, c"effective_tier", dirty::effective_tier, &args),
        |tier| tier_atom(tier).to_term(env),
    )
}

/// The effective tier of a record whose loaded link the Elixir side matched
/// whole: the link's owner, tier and `revoked_at`, read there.
fn link_fields_tier<'a>(env: Env<'a>, args: [Term<'a>; 5], dirty: bool) -> Term<'a> {
    let [owner, tier, revoked_at, viewer, user_admin] = args;
    let record = Record::Linked(decode::link_of(Some(owner), Some(tier), Some(revoked_at)));
    let decided = decide_record(&record, viewer, user_admin, dirty);
    decided.map_or_else(
        || on_dirty_scheduler(env, c"linked_tier", dirty::linked_tier, &args),
        |tier| tier_atom(tier).to_term(env),
    )
}

/// The core's tier for `record` and the viewer, or `None` when that meant
/// comparing ids too large for this (normal) scheduler. A link the core reads
/// alike for every viewer (a revoked one) is answered without reading the
/// viewer.
fn decide_record<'a>(
    record: &Record<ErlEq<'a>>,
    viewer: Term<'a>,
    user_admin: Term<'a>,
    dirty: bool,
) -> Option<Tier> {
    if let Record::Linked(link) = record {
        if let Some(tier) = link.tier_for_anyone() {
            return Some(tier);
        }
    }
    let viewer = decode::viewer(viewer, user_admin);
    unless_heavy(dirty, || disclosure::record_tier(record, &viewer))
}

/// NIFs that may move to a dirty scheduler ([`decode::unless_heavy`]): for
/// each `name(args) => inner`, the NIF `name` (in the `nifs!` table), which
/// calls `inner(env, [args], false)` on the normal scheduler, and its twin
/// `dirty::name`, the entry point the VM calls on a dirty one, which calls
/// `inner(env, [args], true)`.
macro_rules! reschedulable {
    ($( $name:ident($($arg:ident),*) => $inner:ident; )+) => {
        $(
            pub fn $name<'a>(env: Env<'a>, $($arg: Term<'a>),*) -> Term<'a> {
                $inner(env, [$($arg),*], false)
            }
        )+

        /// The dirty twins.
        mod dirty {
            use rustler::codegen_runtime::{c_int, ErlNifEnv, ErlNifTerm};
            use rustler::{Env, Error, NifResult, Term};

            use crate::nif::call;

            $(
                pub unsafe extern "C" fn $name(
                    env: *mut ErlNifEnv,
                    argc: c_int,
                    argv: *const ErlNifTerm,
                ) -> ErlNifTerm {
                    fn nif<'a>(env: Env<'a>, args: &[Term<'a>]) -> NifResult<Term<'a>> {
                        match *args {
                            [$($arg),*] => Ok(super::$inner(env, [$($arg),*], true)),
                            _ => Err(Error::BadArg),
                        }
                    }
                    // SAFETY: the VM calls this with the env and the arguments
                    // `on_dirty_scheduler` handed it, as many as the NIF takes.
                    unsafe { call::<{ [$(stringify!($arg)),*].len() }, _>(env, argc, argv, nif) }
                }
            )+
        }
    };
}

reschedulable! {
    effective_tier(link, tier, viewer, user_admin) => record_tier;
    linked_tier(owner, tier, revoked_at, viewer, user_admin) => link_fields_tier;
    ladder_effective_tier(subject, viewer, user_admin) => subject_tier;
    ladder_allows(subject, access, viewer, user_admin) => allows;
}

/// `%{account_id: _, tier: _}`, plus `admin: true` for an operator.
pub fn viewer<'a>(env: Env<'a>, relationship: Term<'a>, account: Term<'a>) -> NifResult<Term<'a>> {
    let account = (!is_nil(account)).then_some(account);
    let descriptor = decode::relationship(relationship)?.viewer(account);
    let account_id = descriptor
        .account_id
        .map_or_else(|| atom::nil().as_c_arg(), |account| account.as_c_arg());
    let tier = tier_atom(descriptor.tier).as_c_arg();
    // The keys in term order (the VM's own), so it sorts nothing.
    if descriptor.admin {
        let keys = [words::account_id(), words::admin(), words::tier()];
        make::map(
            env,
            raw(&keys),
            &[account_id, atom::true_().as_c_arg(), tier],
        )
    } else {
        let keys = [words::account_id(), words::tier()];
        make::map(env, raw(&keys), &[account_id, tier])
    }
}

/// The relationships `viewer/2` reads, as atoms, in the core's order.
pub fn relationships(env: Env<'_>) -> Term<'_> {
    make::list(env, raw(&words().relationships))
}

/// `{:ok, attrs}` for the host's `ArtifactLink.changeset/2`, or
/// `{:error, why}` when the attempt gets no link, `why` being the core's
/// sentence for it. `kind` and `id` are the principal's `"type"` and `"id"`
/// as the Elixir side read them (`nil` when absent); only binaries count.
pub fn attempt_link<'a>(
    env: Env<'a>,
    repository: Term<'a>,
    kind: Term<'a>,
    id: Term<'a>,
    authority: Term<'a>,
) -> NifResult<Term<'a>> {
    let repository_id = get(repository, words::id());
    let kind = Binary::from_term(kind).ok();
    let reading = PrincipalReading {
        kind: kind.as_ref().map(Binary::as_slice),
        id: Some(id).filter(|id| id.is_binary()),
    };
    match mint(repository_id, reading, authority) {
        Ok(link) => {
            let consent = make::map(
                env,
                &["granted_by".encode(env).as_c_arg()],
                &[link.consent().granted_by.encode(env).as_c_arg()],
            )?;
            // The keys in term order (the VM's own), so it sorts nothing.
            let keys = [
                words::account_id(),
                words::artifact_ref(),
                words::artifact_type(),
                words::authority_snapshot(),
                words::consent(),
                words::repository_id(),
                words::tier(),
            ];
            let values = [
                *link.account_id(),
                link.artifact_ref().encode(env),
                link.artifact_type().encode(env),
                *link.authority_snapshot(),
                consent,
                *link.repository_id(),
                link.tier().as_str().encode(env),
            ]
            .map(|value| value.as_c_arg());
            Ok((atom::ok(), make::map(env, raw(&keys), &values)?).encode(env))
        }
        Err(why) => Ok(make::error(
            env,
            make::binary(env, why.message().as_bytes()),
        )),
    }
}

/// `{unclassified, doubly_classified}`: the positions, in the given list of
/// column names, of the columns the schedule of `family` does not classify
/// and of those it classifies twice. Positions rather than names, so the
/// Elixir side hands back the very atoms it was given. The one call whose work
/// grows with its input, so it runs on a dirty scheduler.
pub fn classify<'a>(env: Env<'a>, family: Term<'a>, columns: Term<'a>) -> NifResult<Term<'a>> {
    // In rustler's order: the list of binaries is read first (a bad element
    // is a bad argument, an improper list a panic), then the family, then
    // whether every name is UTF-8.
    let mut names: Vec<&str> = Vec::new();
    let mut utf8 = true;
    for column in columns.decode::<ListIterator>()? {
        let column: Binary = column.decode()?;
        match std::str::from_utf8(column.as_slice()) {
            Ok(name) => names.push(name),
            Err(_) => utf8 = false,
        }
    }
    let family = decode::family(family)?;
    if !utf8 {
        return Err(Error::BadArg);
    }
    let check = family.classify(names.iter().copied());
    Ok((
        positions(env, &names, &check.unclassified),
        positions(env, &names, &check.doubly_classified),
    )
        .encode(env))
}

/// The positions in `names` of the names in `found`, ascending, as a list.
/// Linear in `names`: `found` is a set once it is more than a handful.
fn positions<'a>(env: Env<'a>, names: &[&str], found: &[String]) -> Term<'a> {
    let at = |(position, _): (usize, &&str)| position.encode(env).as_c_arg();
    if found.len() <= 8 {
        names
            .iter()
            .enumerate()
            .filter(|(_, name)| found.iter().any(|column| column == *name))
            .map(at)
            .collect::<Terms>()
            .list(env)
    } else {
        let found: HashSet<&str> = found.iter().map(String::as_str).collect();
        names
            .iter()
            .enumerate()
            .filter(|(_, name)| found.contains(*name))
            .map(at)
            .collect::<Terms>()
            .list(env)
    }
}

// ── the ladder ──────────────────────────────────────────────────────────

pub fn ladder_name<'a>(env: Env<'a>, tier: Term<'a>) -> Term<'a> {
    tier_atom(decode::tier(tier).named()).to_term(env)
}

pub fn ladder_rank<'a>(env: Env<'a>, tier: Term<'a>) -> Term<'a> {
    decode::tier(tier).named().rank().encode(env)
}

pub fn ladder_viewer_tier<'a>(env: Env<'a>, viewer: Term<'a>, user_admin: Term<'a>) -> Term<'a> {
    decode::viewer(viewer, user_admin)
        .tier()
        .map(tier_atom)
        .encode(env)
}

pub fn ladder_clamp<'a>(
    env: Env<'a>,
    tier: Term<'a>,
    viewer: Term<'a>,
    user_admin: Term<'a>,
) -> Term<'a> {
    let tier = decode::tier(tier).named();
    tier_atom(decode::viewer(viewer, user_admin).clamp(tier)).to_term(env)
}

fn subject_tier<'a>(env: Env<'a>, args: [Term<'a>; 3], dirty: bool) -> Term<'a> {
    let [subject, viewer, user_admin] = args;
    let (subject, viewer) = (decode::subject(subject), decode::viewer(viewer, user_admin));
    let decide = || ladder::effective_tier(&subject, &viewer);
    match unless_heavy(dirty, decide) {
        Some(tier) => tier_atom(tier).to_term(env),
        None => on_dirty_scheduler(
            env,
            c"ladder_effective_tier",
            dirty::ladder_effective_tier,
            &args,
        ),
    }
}

fn allows<'a>(env: Env<'a>, args: [Term<'a>; 4], dirty: bool) -> Term<'a> {
    let [subject, access, viewer, user_admin] = args;
    let (subject, viewer) = (decode::subject(subject), decode::viewer(viewer, user_admin));
    let decide = || ladder::allows(&subject, decode::access(access), &viewer);
    match unless_heavy(dirty, decide) {
        Some(allowed) => allowed.encode(env),
        None => on_dirty_scheduler(env, c"ladder_allows", dirty::ladder_allows, &args),
    }
}

/// `[{field, column}]` in field-name order: the column each scheduled field of
/// `family` is read from.
pub fn field_columns<'a>(env: Env<'a>, family: Term<'a>) -> NifResult<Term<'a>> {
    let at = family_index(decode::family(family)?);
    let words = words();
    Ok(words.fields[at]
        .iter()
        .zip(&words.columns[at])
        .map(|(field, column)| (*field, *column).encode(env).as_c_arg())
        .collect::<Terms>()
        .list(env))
}
