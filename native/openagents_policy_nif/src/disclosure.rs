//! `OpenAgents.Transparency.WorkDisclosure`'s and the ladder's decisions.
//!
//! Answers are built from the atoms `words` made once, so the field, family
//! and tier names come from the core, never restated here.

use std::collections::HashSet;
use std::sync::OnceLock;

use openagents_policy::disclosure::{self, Family, PrincipalReading};
use openagents_policy::ladder::{self, Tier};
use rustler::types::atom;
use rustler::{Atom, Binary, Encoder, Env, Error, NifMap, NifResult, Term};

use crate::decode::{
    self, AccessTerm, FamilyWord, RecordTerm, RelationshipWord, SubjectTerm, TierTerm, ViewerTerm,
};
use crate::text::Text;
use crate::words::{self, words};

fn tier_atom(tier: Tier) -> Atom {
    words().tiers[tier.index()]
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
    &words().never[family.0.index()]
}

/// `[{name, rung | :never, reason}]`: each scheduled field of `family` in
/// field-name order, then each never-listed column, with its reason.
#[rustler::nif]
fn reasons(env: Env<'_>, family: FamilyWord) -> NifResult<Vec<(Atom, Atom, Text<'static>)>> {
    let row = |name, rung, reason| {
        Ok((Atom::from_str(env, name)?, Atom::from_str(env, rung)?, Text(reason)))
    };
    let fields = family.0.fields().iter().map(|f| row(f.name(), f.rung().as_str(), f.reason()));
    fields.chain(family.0.never_listed().iter().map(|n| row(n.column, "never", n.reason))).collect()
}

#[rustler::nif]
fn source_columns(family: FamilyWord) -> &'static [Atom] {
    &words().sources[family.0.index()]
}

#[rustler::nif]
fn tier_for(family: FamilyWord, field: Term) -> Option<Atom> {
    let at = family.0.index();
    let words = words();
    words.fields[at]
        .iter()
        .position(|name| decode::is(field, *name))
        .map(|field| words.field_tiers[at][field])
}

/// The fields of `family` that `viewer` (a viewer's class: a tier word is
/// `{:word, tier}`) admits, as a list of atoms in field-name order.
#[rustler::nif]
fn fields_at(family: FamilyWord, viewer: ViewerTerm) -> Vec<Atom> {
    let names = &words().fields[family.0.index()];
    family.0.fields_at(&viewer.viewer()).positions().map(|at| names[at]).collect()
}

/// The tier `viewer` reads a record at: through its loaded link, or its
/// tier column.
#[rustler::nif]
fn effective_tier(record: RecordTerm, viewer: ViewerTerm) -> Atom {
    tier_atom(disclosure::effective_tier(&record.record(), &viewer.viewer()))
}

/// `%{account_id: _, tier: _}`, plus `admin: true` for an operator.
#[rustler::nif]
fn viewer<'a>(
    env: Env<'a>,
    relationship: RelationshipWord,
    account: Term<'a>,
) -> NifResult<Term<'a>> {
    let account = (!decode::is(account, atom::nil())).then_some(account);
    let descriptor = relationship.0.viewer(account);
    let account_id = descriptor.account_id.unwrap_or_else(|| atom::nil().to_term(env));
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
/// as the Elixir side read them: `kind` a binary of at most 64 bytes or
/// `nil` (anything else), `id` handed back as it is, and counted only when it
/// is a binary.
#[rustler::nif]
fn link_for_attempt<'a>(
    env: Env<'a>,
    repository: Term<'a>,
    kind: Option<Binary<'a>>,
    id: Term<'a>,
    authority: Term<'a>,
) -> NifResult<Term<'a>> {
    let repository_id = repository.map_get(words::id()).ok();
    let reading = PrincipalReading {
        kind: kind.as_ref().map(Binary::as_slice),
        id: Some(id).filter(|id| id.is_binary()),
    };
    match disclosure::link_for_attempt(repository_id, reading, authority) {
        Ok(link) => {
            let attrs = LinkAttrs {
                account_id: *link.account_id(),
                artifact_ref: Text(link.artifact_ref()),
                artifact_type: Text(link.artifact_type()),
                authority_snapshot: *link.authority_snapshot(),
                // Keyed by a binary, as the seeds write it.
                consent: Term::map_from_arrays(
                    env,
                    &[Text("granted_by")],
                    &[Text(link.consent().granted_by)],
                )?,
                repository_id: *link.repository_id(),
                tier: Text(link.tier().as_str()),
            };
            Ok((atom::ok(), attrs).encode(env))
        }
        Err(why) => Ok((atom::error(), Text(why.message())).encode(env)),
    }
}

/// The attributes `link_for_attempt/3` hands the host's
/// `ArtifactLink.changeset/2`: the core's link, the host's terms it was given
/// handed back as they were.
#[derive(NifMap)]
#[rustler(encode)]
struct LinkAttrs<'a> {
    account_id: Term<'a>,
    artifact_ref: Text<'static>,
    artifact_type: Text<'static>,
    authority_snapshot: Term<'a>,
    consent: Term<'a>,
    repository_id: Term<'a>,
    tier: Text<'static>,
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
    Ok((positions(&names, &check.unclassified), positions(&names, &check.doubly_classified)))
}

/// The positions in `names` of the names in `found`, ascending: linear in
/// `names`, whatever the size of `found`.
fn positions(names: &[&str], found: &[String]) -> Vec<usize> {
    let found: HashSet<&str> = found.iter().map(String::as_str).collect();
    (0..names.len()).filter(|&at| found.contains(names[at])).collect()
}

/// `[{field, column}]` in field-name order: the column each scheduled field of
/// `family` is read from.
#[rustler::nif]
fn field_columns(family: FamilyWord) -> Vec<(Atom, Atom)> {
    let at = family.0.index();
    let words = words();
    words.fields[at].iter().copied().zip(words.columns[at].iter().copied()).collect()
}

// ── the ladder (`OpenAgents.Transparency.Ladder`) ───────────────────────

#[rustler::nif]
fn ladder_name(tier: TierTerm) -> Atom {
    tier_atom(tier.0.named())
}

#[rustler::nif]
fn ladder_rank(tier: TierTerm) -> u8 {
    tier.0.named().rank()
}

#[rustler::nif]
fn ladder_viewer_tier(viewer: ViewerTerm) -> Option<Atom> {
    viewer.viewer().tier().map(tier_atom)
}

#[rustler::nif]
fn ladder_clamp(tier: TierTerm, viewer: ViewerTerm) -> Atom {
    tier_atom(viewer.viewer().clamp(tier.0.named()))
}

#[rustler::nif]
fn ladder_effective_tier(subject: SubjectTerm, viewer: ViewerTerm) -> Atom {
    tier_atom(ladder::effective_tier(&subject.subject(), &viewer.viewer()))
}

#[rustler::nif]
fn ladder_allows(subject: SubjectTerm, access: AccessTerm, viewer: ViewerTerm) -> bool {
    ladder::allows(&subject.subject(), access.0, &viewer.viewer())
}
