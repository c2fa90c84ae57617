//! `OpenAgents.Delegations.Target`'s decisions.

use openagents_policy::target::{
    self, DelegationLifecycle, DelegationSeam, Kind, Lifecycle, MachineObservation, Reach, Seam,
};
use openagents_policy::{Reading, Refusal};
use rustler::{Binary, Encoder, Env, Error, NifResult, Term};

use crate::decode::is_nil;

#[allow(clippy::needless_pass_by_value)] // `map_err` hands it over by value
fn refused(refusal: Refusal) -> Error {
    Error::Term(Box::new(refusal.to_string()))
}

#[rustler::nif]
fn lifecycles() -> Vec<&'static str> {
    Lifecycle::words()
}

#[rustler::nif]
fn delegation_lifecycles() -> Vec<&'static str> {
    DelegationLifecycle::words()
}

#[rustler::nif]
fn custodies() -> Vec<&'static str> {
    target::Custody::words()
}

#[rustler::nif]
fn kinds() -> Vec<&'static str> {
    Kind::words()
}

#[rustler::nif]
fn custody(kind: Binary) -> NifResult<&'static str> {
    let kind = Kind::parse(kind.as_slice()).map_err(refused)?;
    Ok(kind.custody().as_str())
}

#[rustler::nif]
fn runtime_class(kind: Binary) -> NifResult<Option<&'static str>> {
    let kind = Kind::parse(kind.as_slice()).map_err(refused)?;
    Ok(kind
        .runtime_class()
        .map(openagents_policy::target::RuntimeClass::as_str))
}

#[rustler::nif]
fn box_lifecycle(state: Binary) -> &'static str {
    target::box_lifecycle(state.as_slice()).as_str()
}

#[rustler::nif]
fn run_lifecycle(state: Binary) -> &'static str {
    target::run_lifecycle(state.as_slice()).as_str()
}

#[rustler::nif]
fn job_lifecycle(status: Binary) -> &'static str {
    target::job_lifecycle(status.as_slice()).as_str()
}

/// `status` is any term (only a binary can be a known status); `revoked_at`
/// counts as set when it is anything but `nil`.
#[rustler::nif]
fn computer_lifecycle(status: Term, revoked_at: Term, online: bool) -> &'static str {
    let status = Binary::from_term(status).map_or(Reading::Unrecognized, |word| {
        target::read_machine_status(word.as_slice())
    });
    MachineObservation {
        status,
        revoked: !is_nil(revoked_at),
        online,
    }
    .lifecycle()
    .as_str()
}

fn parse_seam(kind: Binary, lifecycle: Binary, authorized: bool) -> NifResult<Seam> {
    let kind = Kind::parse(kind.as_slice()).map_err(refused)?;
    let lifecycle = Lifecycle::parse(lifecycle.as_slice()).map_err(refused)?;
    Ok(Seam::new(kind, lifecycle, Reach::from(authorized)))
}

fn words(env: Env<'_>, words: impl Iterator<Item = &'static str>) -> Term<'_> {
    words.collect::<Vec<_>>().encode(env)
}

/// The seam as the Elixir map: string keys, `nil` for nothing. The keys are
/// the core's serde field names; `OpenAgents.Delegations.TargetTest` holds
/// the two to each other through `seam_json/3`.
#[rustler::nif]
fn seam<'a>(
    env: Env<'a>,
    kind: Binary,
    lifecycle: Binary,
    authorized: bool,
) -> NifResult<Term<'a>> {
    let seam = parse_seam(kind, lifecycle, authorized)?;
    let keys = [
        "custody",
        "runtime_class",
        "lifecycle",
        "capabilities",
        "unavailable_reason",
    ]
    .map(|key| key.encode(env));
    let values = [
        seam.custody().as_str().encode(env),
        seam.runtime_class()
            .map(openagents_policy::target::RuntimeClass::as_str)
            .encode(env),
        seam.lifecycle().as_str().encode(env),
        words(env, seam.capabilities().iter().map(|c| c.as_str())),
        seam.unavailable_reason()
            .map(openagents_policy::target::UnavailableReason::as_str)
            .encode(env),
    ];
    Term::map_from_term_arrays(env, &keys, &values)
}

#[rustler::nif]
fn seam_json(kind: Binary, lifecycle: Binary, authorized: bool) -> NifResult<String> {
    let seam = parse_seam(kind, lifecycle, authorized)?;
    serde_json::to_string(&seam).map_err(|error| Error::Term(Box::new(error.to_string())))
}

fn parse_delegation(lifecycle: Binary) -> NifResult<DelegationSeam> {
    let lifecycle = DelegationLifecycle::parse(lifecycle.as_slice()).map_err(refused)?;
    Ok(DelegationSeam::new(lifecycle))
}

#[rustler::nif]
fn delegation_seam<'a>(env: Env<'a>, lifecycle: Binary) -> NifResult<Term<'a>> {
    let seam = parse_delegation(lifecycle)?;
    let keys = ["lifecycle", "capabilities"].map(|key| key.encode(env));
    let values = [
        seam.lifecycle().as_str().encode(env),
        words(env, seam.capabilities().iter().map(|c| c.as_str())),
    ];
    Term::map_from_term_arrays(env, &keys, &values)
}

#[rustler::nif]
fn delegation_seam_json(lifecycle: Binary) -> NifResult<String> {
    let seam = parse_delegation(lifecycle)?;
    serde_json::to_string(&seam).map_err(|error| Error::Term(Box::new(error.to_string())))
}

/// The substrate vocabularies the lifecycle projections read, for the
/// demonstration task: `[{substrate, [word]}]`.
#[rustler::nif]
fn substrates() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("box", target::BoxState::words()),
        ("run", target::RunState::words()),
        ("job", target::JobStatus::words()),
    ]
}
