//! `OpenAgents.Transparency.WorkDisclosure`'s and the ladder's decisions,
//! their words crossing as atoms of the core's ([`crate::word`]).

use std::collections::HashMap;

use openagents_policy::disclosure::{self, Family, Field, PrincipalReading, Relationship};
use openagents_policy::ladder::{self, Tier};
use rustler::{Atom, Binary, Encoder, Env, NifMap, NifResult, Term};

use crate::decode::{RecordTerm, SubjectTerm, ViewerTerm};
use crate::error::{self, raise};
use crate::word::{atom, atoms, AccessTerm, Text, TierTerm, Word};

mod keys {
    rustler::atoms! { id, account_id, tier, admin }
}

words!(atoms families: Family, tiers: Tier, relationships: Relationship);

/// `%{family => %{field => tier}}`.
#[rustler::nif]
fn schedule(env: Env<'_>) -> NifResult<Term<'_>> {
    let fields = |family: Family| {
        let names = atoms(env, family.fields().iter().map(|field| field.name))?;
        let tiers = atoms(env, family.fields().iter().map(|field| field.rung.tier()))?;
        Term::map_from_arrays(env, &names, &tiers)
    };
    let schedules =
        Family::ALL.iter().map(|&family| fields(family)).collect::<NifResult<Vec<_>>>()?;
    Term::map_from_arrays(env, &atoms(env, Family::ALL)?, &schedules)
}

/// The schedule's JSON, as the core serializes it.
#[rustler::nif]
fn schedule_json() -> NifResult<String> {
    serde_json::to_string(&disclosure::schedule()).map_err(raise)
}

#[rustler::nif]
fn never(env: Env<'_>, family: Word<Family>) -> NifResult<Vec<Atom>> {
    atoms(env, family.0.never())
}

/// `[{name, rung | :never, reason}]`: each scheduled field of `family` in
/// field-name order, then each never-listed column, with its reason.
#[rustler::nif]
fn reasons(env: Env<'_>, family: Word<Family>) -> NifResult<Vec<(Atom, Atom, Text<'static>)>> {
    let row = |name, rung, reason| {
        Ok((Atom::from_str(env, name)?, Atom::from_str(env, rung)?, Text(reason)))
    };
    let fields = family.0.fields().iter().map(|f| row(f.name, f.rung.as_str(), f.reason));
    let never = family.0.never_listed().iter().map(|n| row(n.column, "never", n.reason));
    fields.chain(never).collect()
}

#[rustler::nif]
fn source_columns(env: Env<'_>, family: Word<Family>) -> NifResult<Vec<Atom>> {
    atoms(env, family.0.source_columns())
}

/// The tier that first shows `field` (an atom), or `nil` when none does.
#[rustler::nif]
fn tier_for(env: Env<'_>, family: Word<Family>, field: Term) -> NifResult<Option<Atom>> {
    let field = field.atom_to_string().ok().and_then(|name| family.0.field(&name));
    field.map(|field| atom(env, field.rung.tier())).transpose()
}

/// The fields of `family` that `viewer` (a viewer's class: a tier word is
/// `{:word, tier}`) admits, in field-name order.
#[rustler::nif]
fn fields_at(env: Env<'_>, family: Word<Family>, viewer: ViewerTerm) -> NifResult<Vec<Atom>> {
    atoms(env, family.0.fields_at(&viewer.viewer()).fields().map(|field| field.name))
}

/// The tier `viewer` reads a record at: through its loaded link, or its
/// tier column.
#[rustler::nif]
fn effective_tier(env: Env<'_>, record: RecordTerm, viewer: ViewerTerm) -> NifResult<Atom> {
    atom(env, disclosure::effective_tier(&record.record(), &viewer.viewer()))
}

/// A reader's descriptor: `%{account_id: _, tier: _}`, with `admin: true`
/// for an operator.
#[rustler::nif]
fn viewer<'a>(
    env: Env<'a>,
    relationship: Word<Relationship>,
    account: Option<Term<'a>>,
) -> NifResult<Term<'a>> {
    let descriptor = relationship.0.viewer(account);
    let values = [descriptor.account_id.encode(env), atom(env, descriptor.tier)?.encode(env)];
    let map = Term::map_from_arrays(env, &[keys::account_id(), keys::tier()], &values)?;
    if descriptor.admin {
        map.map_put(keys::admin(), true)
    } else {
        Ok(map)
    }
}

/// The attributes `link_for_attempt/3` hands the host's changeset: the core's
/// link, the host's terms handed back as they were.
#[derive(NifMap)]
#[rustler(encode)]
struct LinkAttrs<'a> {
    account_id: Term<'a>,
    artifact_ref: Text<'static>,
    artifact_type: Text<'static>,
    authority_snapshot: Term<'a>,
    /// Keyed by a binary, as the seeds write it.
    consent: HashMap<&'static str, &'static str>,
    repository_id: Term<'a>,
    tier: Text<'static>,
}

/// The link's attributes, or the core's sentence for why the attempt gets
/// none. `kind` is the principal's `"type"` (a binary of at most 64 bytes, or
/// `nil`), `id` its `"id"`, handed back as it is and counted only as a binary.
#[rustler::nif]
fn link_for_attempt<'a>(
    repository: Term<'a>,
    kind: Option<Binary<'a>>,
    id: Term<'a>,
    authority: Term<'a>,
) -> Result<LinkAttrs<'a>, error::Error> {
    let reading = PrincipalReading {
        kind: kind.as_ref().map(Binary::as_slice),
        id: Some(id).filter(|id| id.is_binary()),
    };
    let repository_id = repository.map_get(keys::id()).ok();
    let link = disclosure::link_for_attempt(repository_id, reading, authority)?;
    Ok(LinkAttrs {
        account_id: link.account_id,
        artifact_ref: Text(link.artifact_ref),
        artifact_type: Text(link.artifact_type),
        authority_snapshot: link.authority_snapshot,
        consent: HashMap::from([("granted_by", link.consent.granted_by)]),
        repository_id: link.repository_id,
        tier: Text(link.tier.as_str()),
    })
}

/// The core's `Classification` of the columns given (binaries), as a map.
#[derive(NifMap)]
#[rustler(encode)]
struct Classified {
    unclassified: Vec<String>,
    doubly_classified: Vec<String>,
}

/// [`Classified`]: its work grows with its input, so it runs on a dirty
/// scheduler. A name that is not UTF-8 is a bad argument.
#[rustler::nif(schedule = "DirtyCpu")]
#[allow(clippy::needless_pass_by_value)] // rustler hands its arguments over by value
fn classify(family: Word<Family>, columns: Vec<String>) -> Classified {
    let check = family.0.classify(columns.iter().map(String::as_str));
    Classified { unclassified: check.unclassified, doubly_classified: check.doubly_classified }
}

/// `[{field, column}]` in field-name order: the column each scheduled field of
/// `family` is read from.
#[rustler::nif]
fn field_columns(env: Env<'_>, family: Word<Family>) -> NifResult<Vec<(Atom, Atom)>> {
    let pair = |field: &Field| Ok((atom(env, field.name)?, atom(env, field.column)?));
    family.0.fields().iter().map(pair).collect()
}

// ── the ladder (`OpenAgents.Transparency.Ladder`) ───────────────────────

#[rustler::nif]
fn ladder_name(env: Env<'_>, tier: TierTerm) -> NifResult<Atom> {
    atom(env, tier.0.named())
}

#[rustler::nif]
fn ladder_rank(tier: TierTerm) -> u8 {
    tier.0.named().rank()
}

#[rustler::nif]
fn ladder_viewer_tier(env: Env<'_>, viewer: ViewerTerm) -> NifResult<Option<Atom>> {
    viewer.viewer().tier().map(|tier| atom(env, tier)).transpose()
}

#[rustler::nif]
fn ladder_clamp(env: Env<'_>, tier: TierTerm, viewer: ViewerTerm) -> NifResult<Atom> {
    atom(env, viewer.viewer().clamp(tier.0.named()))
}

#[rustler::nif]
fn ladder_effective_tier(
    env: Env<'_>,
    subject: SubjectTerm,
    viewer: ViewerTerm,
) -> NifResult<Atom> {
    atom(env, ladder::effective_tier(&subject.subject(), &viewer.viewer()))
}

#[rustler::nif]
fn ladder_allows(subject: SubjectTerm, access: AccessTerm, viewer: ViewerTerm) -> bool {
    ladder::allows(&subject.subject(), access.0, &viewer.viewer())
}
