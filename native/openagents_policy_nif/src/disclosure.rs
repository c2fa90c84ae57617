//! `OpenAgents.Transparency.WorkDisclosure`'s and the ladder's decisions.
//!
//! Answers are built from the atoms `words` made once, so the field, family
//! and tier names come from the core, never restated here.

use std::collections::HashSet;
use std::sync::OnceLock;

use openagents_policy::disclosure::{self, Family, PrincipalReading, Record};
use openagents_policy::ladder::{self, Tier};
use rustler::types::atom;
use rustler::{Atom, Binary, Encoder, Env, Error, NifResult, Term};

use crate::decode::{
    self, get, is_nil, is_struct, unless_dirty, ErlEq, FamilyWord, RelationshipWord, TierWord,
};
use crate::text::Text;
use crate::words::{self, position, words};

fn tier_atom(tier: Tier) -> Atom {
    words().tiers[position(Tier::ALL, tier)]
}

fn family_index(family: Family) -> usize {
    position(Family::ALL, family)
}

#[rustler::nif]
fn families() -> &'static [Atom] {
    &words().families
}

#[rustler::nif]
fn tiers() -> &'static [Atom] {
    &words().tiers
}

/// `%{family => %{field => tier}}`.
#[rustler::nif]
fn schedule(env: Env<'_>) -> NifResult<Term<'_>> {
    let words = words();
    let families = (0..Family::ALL.len())
        .map(|at| Term::map_from_arrays(env, &words.fields[at], &words.field_tiers[at]))
        .collect::<NifResult<Vec<_>>>()?;
    Term::map_from_arrays(env, &words.families, &families)
}

/// The schedule's JSON, as the core serializes it (or why serde could not).
/// The schedule is constant, so it is written once, on first use.
#[rustler::nif]
fn schedule_json(env: Env<'_>) -> Term<'_> {
    static JSON: OnceLock<Result<String, String>> = OnceLock::new();
    let json = JSON.get_or_init(|| {
        serde_json::to_string(&disclosure::schedule()).map_err(|error| error.to_string())
    });
    match json {
        Ok(json) => Text(json).encode(env),
        Err(why) => (atom::error(), Text(why)).encode(env),
    }
}

#[rustler::nif]
fn never(family: FamilyWord) -> &'static [Atom] {
    &words().never[family_index(family.0)]
}

#[rustler::nif]
fn source_columns(family: FamilyWord) -> &'static [Atom] {
    &words().sources[family_index(family.0)]
}

#[rustler::nif]
fn tier_for(family: FamilyWord, field: Term) -> Option<Atom> {
    let at = family_index(family.0);
    let words = words();
    words.fields[at]
        .iter()
        .position(|name| decode::is(field, *name))
        .map(|field| words.field_tiers[at][field])
}

/// The fields of `family` that `tier` (a tier word or a viewer) admits, as a
/// list of atoms in field-name order, built cell by cell from the last.
pub(crate) fn fields_at<'a>(
    env: Env<'a>,
    family: FamilyWord,
    tier: Term<'a>,
    user_admin: Term<'a>,
) -> Term<'a> {
    let names = &words().fields[family_index(family.0)];
    let admitted = family.0.fields_at(&decode::viewer(tier, user_admin));
    let mut list = Term::list_new_empty(env);
    for at in admitted.positions().rev() {
        list = list.list_prepend(names[at]);
    }
    list
}

/// The projection of `source`: each admitted field taken by its name, `nil`
/// when absent; `nil` itself when nothing is admitted, without reading the
/// source. Looks up at most one key per scheduled field, whatever the size of
/// the source.
fn project<'a>(
    env: Env<'a>,
    family: FamilyWord,
    source: Term<'a>,
    tier: Term<'a>,
    user_admin: Term<'a>,
) -> NifResult<Term<'a>> {
    let admitted = family.0.fields_at(&decode::viewer(tier, user_admin));
    if admitted.is_empty() {
        return Ok(atom::nil().to_term(env));
    }
    if !source.is_map() {
        return Err(Error::BadArg);
    }
    let names = &words().fields[family_index(family.0)];
    let nil = atom::nil().to_term(env);
    let (keys, values): (Vec<Term>, Vec<Term>) = admitted
        .positions()
        .map(|at| {
            let key = names[at];
            (key.to_term(env), source.map_get(key).unwrap_or(nil))
        })
        .unzip();
    Term::map_from_term_arrays(env, &keys, &values)
}

/// The core's tier for `record` and the viewer, or `None` when that meant
/// comparing ids too large for a normal scheduler (`dirty` is false). A link
/// the core reads alike for every viewer (a revoked one) is answered without
/// reading the viewer.
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
    unless_dirty(dirty, || disclosure::effective_tier(record, &viewer))
}

/// A tier, or `:dirty` when the call must be made again on a dirty scheduler.
fn tier_or_dirty(env: Env<'_>, tier: Option<Tier>) -> Term<'_> {
    tier.map_or_else(words::dirty, tier_atom).to_term(env)
}

/// A record's effective tier, from its two fields the Elixir side read:
/// through `link` when it is a link struct, otherwise through `tier`, the
/// record's tier column (`nil` when absent).
pub(crate) fn effective_tier<'a>(
    env: Env<'a>,
    link: Term<'a>,
    tier: Term<'a>,
    viewer: Term<'a>,
    user_admin: Term<'a>,
    dirty: bool,
) -> Term<'a> {
    let record = if is_struct(link, words::link_struct()) {
        Record::Linked(decode::link(link))
    } else {
        Record::Unlinked(decode::subject(tier))
    };
    tier_or_dirty(env, decide_record(&record, viewer, user_admin, dirty))
}

/// The effective tier of a record whose loaded link the Elixir side matched
/// whole: the link's owner, tier and `revoked_at`, read there.
pub(crate) fn linked_tier<'a>(
    env: Env<'a>,
    owner: Term<'a>,
    tier: Term<'a>,
    revoked_at: Term<'a>,
    viewer: Term<'a>,
    user_admin: Term<'a>,
    dirty: bool,
) -> Term<'a> {
    let record = Record::Linked(decode::link_of(Some(owner), Some(tier), Some(revoked_at)));
    tier_or_dirty(env, decide_record(&record, viewer, user_admin, dirty))
}

/// `%{account_id: _, tier: _}`, plus `admin: true` for an operator.
#[rustler::nif]
fn viewer<'a>(
    env: Env<'a>,
    relationship: RelationshipWord,
    account: Term<'a>,
) -> NifResult<Term<'a>> {
    let account = (!is_nil(account)).then_some(account);
    let descriptor = relationship.0.viewer(account);
    let account_id = descriptor
        .account_id
        .unwrap_or_else(|| atom::nil().to_term(env));
    let tier = tier_atom(descriptor.tier).to_term(env);
    if descriptor.admin {
        let keys = [words::account_id(), words::admin(), words::tier()].map(|key| key.to_term(env));
        Term::map_from_term_arrays(env, &keys, &[account_id, atom::true_().to_term(env), tier])
    } else {
        let keys = [words::account_id(), words::tier()].map(|key| key.to_term(env));
        Term::map_from_term_arrays(env, &keys, &[account_id, tier])
    }
}

/// The relationships `viewer/2` reads, as atoms, in the core's order.
#[rustler::nif]
fn relationships() -> &'static [Atom] {
    &words().relationships
}

/// `{:ok, attrs}` for the host's `ArtifactLink.changeset/2`, or
/// `{:error, why}` when the attempt gets no link, `why` being the core's
/// sentence for it. `kind` and `id` are the principal's `"type"` and `"id"`
/// as the Elixir side read them (`nil` when absent); only binaries count.
pub(crate) fn link_for_attempt<'a>(
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
    match disclosure::link_for_attempt(repository_id, reading, authority) {
        Ok(link) => {
            let consent = Term::map_from_arrays(
                env,
                &[Text("granted_by")],
                &[Text(link.consent().granted_by)],
            )?;
            let keys = [
                words::account_id(),
                words::artifact_ref(),
                words::artifact_type(),
                words::authority_snapshot(),
                words::consent(),
                words::repository_id(),
                words::tier(),
            ]
            .map(|key| key.to_term(env));
            let values = [
                *link.account_id(),
                Text(link.artifact_ref()).encode(env),
                Text(link.artifact_type()).encode(env),
                *link.authority_snapshot(),
                consent,
                *link.repository_id(),
                Text(link.tier().as_str()).encode(env),
            ];
            Ok((atom::ok(), Term::map_from_term_arrays(env, &keys, &values)?).encode(env))
        }
        Err(why) => Ok((atom::error(), Text(why.message())).encode(env)),
    }
}

/// `{unclassified, doubly_classified}`: the positions, in the given list of
/// column names, of the columns the schedule of `family` does not classify
/// and of those it classifies twice. Positions rather than names, so the
/// Elixir side hands back the very atoms it was given. Its work grows with
/// its input, so it runs on a dirty scheduler. A name that is not UTF-8 is a
/// bad argument.
#[rustler::nif(schedule = "DirtyCpu")]
#[allow(clippy::needless_pass_by_value)] // rustler hands its arguments over by value
fn classify(family: FamilyWord, columns: Vec<Binary>) -> NifResult<(Vec<usize>, Vec<usize>)> {
    let names = columns
        .iter()
        .map(|column| std::str::from_utf8(column.as_slice()).map_err(|_| Error::BadArg))
        .collect::<NifResult<Vec<&str>>>()?;
    let check = family.0.classify(names.iter().copied());
    Ok((
        positions(&names, &check.unclassified),
        positions(&names, &check.doubly_classified),
    ))
}

/// The positions in `names` of the names in `found`, ascending. Linear in
/// `names`: `found` is a set once it is more than a handful.
fn positions(names: &[&str], found: &[String]) -> Vec<usize> {
    let hits = |hit: &dyn Fn(&str) -> bool| {
        names
            .iter()
            .enumerate()
            .filter(|(_, name)| hit(name))
            .map(|(position, _)| position)
            .collect()
    };
    if found.len() <= 8 {
        hits(&|name| found.iter().any(|column| column == name))
    } else {
        let found: HashSet<&str> = found.iter().map(String::as_str).collect();
        hits(&|name| found.contains(name))
    }
}

/// `[{field, column}]` in field-name order: the column each scheduled field of
/// `family` is read from.
#[rustler::nif]
fn field_columns(family: FamilyWord) -> Vec<(Atom, Atom)> {
    let at = family_index(family.0);
    let words = words();
    words.fields[at]
        .iter()
        .copied()
        .zip(words.columns[at].iter().copied())
        .collect()
}

// ── the ladder (`OpenAgents.Transparency.Ladder`) ───────────────────────

on_either_scheduler! {
    fn ladder_name_normal / ladder_name_dirty    (tier: TierWord) -> Atom {
        tier_atom(tier.0.named())
    }
}

on_either_scheduler! {
    fn ladder_rank_normal / ladder_rank_dirty    (tier: TierWord) -> u8 {
        tier.0.named().rank()
    }
}

on_either_scheduler! {
    fn ladder_viewer_tier_normal / ladder_viewer_tier_dirty    <'a>(viewer: Term<'a>, user_admin: Term<'a>) -> Option<Atom> {
        decode::viewer(viewer, user_admin).tier().map(tier_atom)
    }
}

on_either_scheduler! {
    fn ladder_clamp_normal / ladder_clamp_dirty    <'a>(tier: TierWord, viewer: Term<'a>, user_admin: Term<'a>) -> Atom {
        tier_atom(decode::viewer(viewer, user_admin).clamp(tier.0.named()))
    }
}

fn ladder_effective_tier<'a>(
    env: Env<'a>,
    subject: Term<'a>,
    viewer: Term<'a>,
    user_admin: Term<'a>,
    dirty: bool,
) -> Term<'a> {
    let (subject, viewer) = (decode::subject(subject), decode::viewer(viewer, user_admin));
    tier_or_dirty(
        env,
        unless_dirty(dirty, || ladder::effective_tier(&subject, &viewer)),
    )
}

/// `true` or `false`, or `:dirty` when the call must be made again on a dirty
/// scheduler.
fn ladder_allows<'a>(
    env: Env<'a>,
    subject: Term<'a>,
    access: Term<'a>,
    viewer: Term<'a>,
    user_admin: Term<'a>,
    dirty: bool,
) -> Term<'a> {
    let access = decode::access(access);
    let (subject, viewer) = (decode::subject(subject), decode::viewer(viewer, user_admin));
    match unless_dirty(dirty, || ladder::allows(&subject, access, &viewer)) {
        Some(allowed) => allowed.encode(env),
        None => words::dirty().encode(env),
    }
}

// The `_normal` / `_dirty` pairs, one line each: the calls that read a binary argument, then the
// account-id comparisons, each declining on a normal scheduler what only a
// dirty one should compare.
#[rustfmt::skip]
on_either_scheduler! {
    fn fields_at_normal / fields_at_dirty<'a>(env, family: FamilyWord, tier: Term<'a>, user_admin: Term<'a>) -> Term<'a> = fields_at;
    fn project_normal / project_dirty<'a>(env, family: FamilyWord, source: Term<'a>, tier: Term<'a>, user_admin: Term<'a>) -> NifResult<Term<'a>> = project;
    fn link_for_attempt_normal / link_for_attempt_dirty<'a>(env, repository: Term<'a>, kind: Term<'a>, id: Term<'a>, authority: Term<'a>) -> NifResult<Term<'a>> = link_for_attempt;
}

#[rustfmt::skip]
on_either_scheduler! {
    fn effective_tier_normal / effective_tier_dirty<'a>(env, link: Term<'a>, tier: Term<'a>, viewer: Term<'a>, user_admin: Term<'a>) -> Term<'a> = effective_tier(.., dirty);
    fn linked_tier_normal / linked_tier_dirty<'a>(env, owner: Term<'a>, tier: Term<'a>, revoked_at: Term<'a>, viewer: Term<'a>, user_admin: Term<'a>) -> Term<'a> = linked_tier(.., dirty);
    fn ladder_effective_tier_normal / ladder_effective_tier_dirty<'a>(env, subject: Term<'a>, viewer: Term<'a>, user_admin: Term<'a>) -> Term<'a> = ladder_effective_tier(.., dirty);
    fn ladder_allows_normal / ladder_allows_dirty<'a>(env, subject: Term<'a>, access: Term<'a>, viewer: Term<'a>, user_admin: Term<'a>) -> Term<'a> = ladder_allows(.., dirty);
}
