//! `OpenAgents.Transparency.WorkDisclosure`'s and the ladder's decisions.

use openagents_policy::disclosure::{self, attempt_link as mint, Family, PrincipalReading, Record};
use openagents_policy::ladder::{self, Tier};
use rustler::types::atom;
use rustler::{Atom, Binary, Encoder, Env, Error, NifResult, Term};

use crate::decode::{self, get, is_nil, is_struct};
use crate::words::{self, position, words};

fn tier_atom(tier: Tier) -> Atom {
    words().tiers[position(Tier::ALL, tier)]
}

fn family_index(family: Family) -> usize {
    position(Family::ALL, family)
}

#[rustler::nif]
fn families() -> Vec<Atom> {
    words().families.clone()
}

#[rustler::nif]
fn tiers() -> Vec<Atom> {
    words().tiers.clone()
}

/// `%{family => %{field => tier}}`.
#[rustler::nif]
fn schedule(env: Env) -> NifResult<Term> {
    let words = words();
    let families: Vec<Term> = Family::ALL
        .iter()
        .map(|&family| {
            let keys: Vec<Term> = words.fields[family_index(family)]
                .iter()
                .map(|a| a.to_term(env))
                .collect();
            let values: Vec<Term> = family
                .fields()
                .iter()
                .map(|field| tier_atom(field.rung().tier()).to_term(env))
                .collect();
            Term::map_from_term_arrays(env, &keys, &values)
        })
        .collect::<NifResult<_>>()?;
    Term::map_from_arrays(env, &words.families, &families)
}

#[rustler::nif]
fn schedule_json() -> NifResult<String> {
    serde_json::to_string(&disclosure::schedule())
        .map_err(|error| Error::Term(Box::new(error.to_string())))
}

#[rustler::nif]
fn never(family: Term) -> NifResult<Vec<Atom>> {
    Ok(words().never[family_index(decode::family(family)?)].clone())
}

#[rustler::nif]
fn source_columns(family: Term) -> NifResult<Vec<Atom>> {
    Ok(words().sources[family_index(decode::family(family)?)].clone())
}

#[rustler::nif]
fn tier_for<'a>(family: Term<'a>, field: Term<'a>) -> NifResult<Option<Atom>> {
    let family = decode::family(family)?;
    let names = &words().fields[family_index(family)];
    Ok(names
        .iter()
        .position(|name| decode::is(field, *name))
        .map(|at| tier_atom(family.fields()[at].rung().tier())))
}

#[rustler::nif]
fn fields_at<'a>(family: Term<'a>, tier: Term<'a>, user_admin: Term<'a>) -> NifResult<Vec<Atom>> {
    let family = decode::family(family)?;
    let names = &words().fields[family_index(family)];
    let admitted = family.admitted(&decode::viewer(tier, user_admin));
    Ok(admitted.positions().map(|at| names[at]).collect())
}

/// The projection of `source`: each admitted field taken by its name, `nil`
/// when absent; `nil` itself when nothing is admitted, without reading the
/// source. Looks up at most one key per scheduled field, whatever the size of
/// the source.
#[rustler::nif]
fn project<'a>(
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
    let mut keys = Vec::with_capacity(admitted.len());
    let mut values = Vec::with_capacity(admitted.len());
    for at in admitted.positions() {
        let key = names[at].to_term(env);
        keys.push(key);
        values.push(source.map_get(key).unwrap_or(nil));
    }
    Term::map_from_term_arrays(env, &keys, &values)
}

/// A record's effective tier: through its loaded link when its
/// `artifact_link` is a link struct, otherwise through its tier column.
#[rustler::nif]
fn effective_tier<'a>(record: Term<'a>, viewer: Term<'a>, user_admin: Term<'a>) -> NifResult<Atom> {
    if !record.is_map() {
        return Err(Error::BadArg);
    }
    let record = match get(record, words::artifact_link()) {
        Some(link) if is_struct(link, words::link_struct()) => Record::Linked(decode::link(link)),
        _ => Record::Unlinked(decode::subject(
            get(record, words::transparency_tier())
                .unwrap_or_else(|| atom::nil().to_term(record.get_env())),
        )),
    };
    Ok(tier_atom(disclosure::record_tier(
        &record,
        &decode::viewer(viewer, user_admin),
    )))
}

/// `%{account_id: _, tier: _}`, plus `admin: true` for an operator.
#[rustler::nif]
fn viewer<'a>(env: Env<'a>, relationship: Term<'a>, account: Term<'a>) -> NifResult<Term<'a>> {
    let account = (!is_nil(account)).then_some(account);
    let descriptor = decode::relationship(relationship)?.viewer(account);
    let nil = atom::nil().to_term(env);
    let mut keys = vec![words::account_id().to_term(env), words::tier().to_term(env)];
    let mut values = vec![
        descriptor.account_id.unwrap_or(nil),
        tier_atom(descriptor.tier).to_term(env),
    ];
    if descriptor.admin {
        keys.push(words::admin().to_term(env));
        values.push(atom::true_().to_term(env));
    }
    Term::map_from_term_arrays(env, &keys, &values)
}

/// `{:ok, attrs}` for the host's `ArtifactLink.changeset/2`, or
/// `{:error, why}` when the attempt gets no link.
#[rustler::nif]
fn attempt_link<'a>(
    env: Env<'a>,
    repository: Term<'a>,
    principal: Term<'a>,
    authority: Term<'a>,
) -> NifResult<Term<'a>> {
    let repository_id = if repository.is_map() {
        get(repository, words::id())
    } else {
        None
    };
    let (kind, id) = if principal.is_map() {
        (
            principal
                .map_get("type")
                .ok()
                .and_then(|kind| Binary::from_term(kind).ok()),
            principal.map_get("id").ok().filter(|id| id.is_binary()),
        )
    } else {
        (None, None)
    };
    let reading = PrincipalReading {
        kind: kind.as_ref().map(Binary::as_slice),
        id,
    };
    match mint(repository_id, reading, authority) {
        Ok(link) => {
            let consent =
                Term::map_from_arrays(env, &["granted_by"], &[link.consent().granted_by])?;
            let keys = [
                words::account_id(),
                words::repository_id(),
                words::artifact_type(),
                words::artifact_ref(),
                words::tier(),
                words::consent(),
                words::authority_snapshot(),
            ]
            .map(|key| key.to_term(env));
            let values = [
                *link.account_id(),
                *link.repository_id(),
                link.artifact_type().encode(env),
                link.artifact_ref().encode(env),
                link.tier().as_str().encode(env),
                consent,
                *link.authority_snapshot(),
            ];
            Ok((atom::ok(), Term::map_from_term_arrays(env, &keys, &values)?).encode(env))
        }
        Err(why) => Ok((atom::error(), why.to_string()).encode(env)),
    }
}

/// `{unclassified, doubly_classified}`: the positions, in the given list of
/// column names, of the columns the schedule of `family` does not classify
/// and of those it classifies twice. Positions rather than names, so the
/// Elixir side hands back the very atoms it was given. The one call whose work
/// grows with its input, so it runs on a dirty scheduler.
#[rustler::nif(schedule = "DirtyCpu")]
#[allow(clippy::needless_pass_by_value)] // rustler decodes arguments by value
fn classify(family: Term, columns: Vec<Binary>) -> NifResult<(Vec<usize>, Vec<usize>)> {
    let family = decode::family(family)?;
    let names: Vec<&str> = columns
        .iter()
        .map(|name| std::str::from_utf8(name.as_slice()).map_err(|_| Error::BadArg))
        .collect::<NifResult<_>>()?;
    let check = family.classify(names.iter().copied());
    let positions = |found: &[String]| -> Vec<usize> {
        names
            .iter()
            .enumerate()
            .filter(|(_, name)| found.iter().any(|column| column == *name))
            .map(|(at, _)| at)
            .collect()
    };
    Ok((
        positions(&check.unclassified),
        positions(&check.doubly_classified),
    ))
}

// ── the ladder ──────────────────────────────────────────────────────────

#[rustler::nif]
fn ladder_name(tier: Term) -> Atom {
    tier_atom(decode::tier(tier).named())
}

#[rustler::nif]
fn ladder_rank(tier: Term) -> u8 {
    decode::tier(tier).named().rank()
}

#[rustler::nif]
fn ladder_viewer_tier<'a>(viewer: Term<'a>, user_admin: Term<'a>) -> Option<Atom> {
    decode::viewer(viewer, user_admin).tier().map(tier_atom)
}

#[rustler::nif]
fn ladder_clamp<'a>(tier: Term<'a>, viewer: Term<'a>, user_admin: Term<'a>) -> Atom {
    tier_atom(decode::viewer(viewer, user_admin).clamp(decode::tier(tier).named()))
}

#[rustler::nif]
fn ladder_effective_tier<'a>(subject: Term<'a>, viewer: Term<'a>, user_admin: Term<'a>) -> Atom {
    tier_atom(ladder::effective_tier(
        &decode::subject(subject),
        &decode::viewer(viewer, user_admin),
    ))
}

#[rustler::nif]
fn ladder_allows<'a>(
    subject: Term<'a>,
    access: Term<'a>,
    viewer: Term<'a>,
    user_admin: Term<'a>,
) -> bool {
    ladder::allows(
        &decode::subject(subject),
        decode::access(access),
        &decode::viewer(viewer, user_admin),
    )
}

/// `[{field, column}]` in field-name order: the column each scheduled field of
/// `family` is read from.
#[rustler::nif]
fn field_columns<'a>(env: Env<'a>, family: Term<'a>) -> NifResult<Vec<(Atom, Atom)>> {
    let family = decode::family(family)?;
    let names = &words().fields[family_index(family)];
    family
        .fields()
        .iter()
        .zip(names)
        .map(|(field, name)| Ok((*name, Atom::from_str(env, field.column())?)))
        .collect()
}
