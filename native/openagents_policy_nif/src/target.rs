//! `OpenAgents.Delegations.Target`'s decisions.
//!
//! rustler decodes the typed arguments in order before the body runs, so the
//! wrong type is a bad argument even where a refusal would otherwise be the
//! answer. A refusal is `{:error, "<the core's sentence>"}`.

use openagents_policy::target::{
    self, BoxState, Capability, Custody, DelegationLifecycle, DelegationSeam, JobStatus, Kind,
    Lifecycle, MachineObservation, MachineStatus, Reach, RunState, Seam,
};
use openagents_policy::{Reading, Refusal};
use rustler::types::atom;
use rustler::{Binary, Encoder, Env, NifResult, Term};

use crate::decode::is;
use crate::text::{texts, Text};

/// `{:error, "<the refusal's sentence>"}`.
#[allow(clippy::needless_pass_by_value)] // called with the refusal a parse hands over
fn refused(env: Env<'_>, refusal: Refusal) -> Term<'_> {
    (atom::error(), Text(&refusal.to_string())).encode(env)
}

#[rustler::nif]
fn lifecycles() -> Vec<Text<'static>> {
    texts(Lifecycle::ALL, Lifecycle::as_str)
}

#[rustler::nif]
fn delegation_lifecycles() -> Vec<Text<'static>> {
    texts(DelegationLifecycle::ALL, DelegationLifecycle::as_str)
}

/// The job statuses whose delegation has ended.
#[rustler::nif]
fn job_terminal_statuses() -> Vec<Text<'static>> {
    JobStatus::ended()
        .into_iter()
        .map(|status| Text(status.as_str()))
        .collect()
}

#[rustler::nif]
fn custodies() -> Vec<Text<'static>> {
    texts(Custody::ALL, Custody::as_str)
}

#[rustler::nif]
fn kinds() -> Vec<Text<'static>> {
    texts(Kind::ALL, Kind::as_str)
}

#[rustler::nif]
fn custody<'a>(env: Env<'a>, kind: Binary) -> Term<'a> {
    match Kind::parse(kind.as_slice()) {
        Ok(kind) => Text(kind.custody().as_str()).encode(env),
        Err(refusal) => refused(env, refusal),
    }
}

#[rustler::nif]
fn runtime_class<'a>(env: Env<'a>, kind: Binary) -> Term<'a> {
    match Kind::parse(kind.as_slice()) {
        Ok(kind) => kind
            .runtime_class()
            .map(|class| Text(class.as_str()))
            .encode(env),
        Err(refusal) => refused(env, refusal),
    }
}

#[rustler::nif]
fn box_lifecycle(state: Binary) -> Text<'static> {
    Text(target::box_lifecycle(state.as_slice()).as_str())
}

#[rustler::nif]
fn run_lifecycle(state: Binary) -> Text<'static> {
    Text(target::run_lifecycle(state.as_slice()).as_str())
}

#[rustler::nif]
fn job_lifecycle(status: Binary) -> Text<'static> {
    Text(target::job_lifecycle(status.as_slice()).as_str())
}

/// `status` is any term (only a binary can be a known status); `revoked_at`
/// counts as set when it is anything but `nil`. Called as
/// `OpenAgents.Delegations.Target` compiles, which caches an answer for every
/// machine the core tells apart, so no request reaches it.
#[rustler::nif]
fn computer_lifecycle(status: Term, revoked_at: Term, online: bool) -> Text<'static> {
    let status = Binary::from_term(status).map_or(Reading::Unrecognized, |word| {
        target::read_machine_status(word.as_slice())
    });
    Text(
        MachineObservation {
            status,
            revoked: !is(revoked_at, atom::nil()),
            online,
        }
        .lifecycle()
        .as_str(),
    )
}

/// The seam of the arguments, or the refusal of the first word that is not
/// one.
fn parse_seam(kind: &Binary, lifecycle: &Binary, authorized: bool) -> Result<Seam, Refusal> {
    let kind = Kind::parse(kind.as_slice())?;
    let lifecycle = Lifecycle::parse(lifecycle.as_slice())?;
    Ok(Seam::new(kind, lifecycle, Reach::from(authorized)))
}

/// A list of capability words.
fn capabilities(capabilities: &[Capability]) -> Vec<Text<'static>> {
    texts(capabilities, Capability::as_str)
}

/// The seam as the Elixir map: string keys, `nil` for nothing. The keys are
/// the core's serde field names; `OpenAgents.Delegations.TargetTest` holds
/// the two to each other through the decision document's seam rows.
#[rustler::nif]
fn seam<'a>(
    env: Env<'a>,
    kind: Binary,
    lifecycle: Binary,
    authorized: bool,
) -> NifResult<Term<'a>> {
    let seam = match parse_seam(&kind, &lifecycle, authorized) {
        Ok(seam) => seam,
        Err(refusal) => return Ok(refused(env, refusal)),
    };
    let keys = [
        "capabilities",
        "custody",
        "lifecycle",
        "runtime_class",
        "unavailable_reason",
    ]
    .map(|key| Text(key).encode(env));
    let values = [
        capabilities(seam.capabilities()).encode(env),
        Text(seam.custody().as_str()).encode(env),
        Text(seam.lifecycle().as_str()).encode(env),
        seam.runtime_class()
            .map(|class| Text(class.as_str()))
            .encode(env),
        seam.unavailable_reason()
            .map(|reason| Text(reason.as_str()))
            .encode(env),
    ];
    Term::map_from_term_arrays(env, &keys, &values)
}

#[rustler::nif]
fn delegation_seam<'a>(env: Env<'a>, lifecycle: Binary) -> NifResult<Term<'a>> {
    let seam = match DelegationLifecycle::parse(lifecycle.as_slice()) {
        Ok(lifecycle) => DelegationSeam::new(lifecycle),
        Err(refusal) => return Ok(refused(env, refusal)),
    };
    let keys = ["capabilities", "lifecycle"].map(|key| Text(key).encode(env));
    let values = [
        capabilities(seam.capabilities()).encode(env),
        Text(seam.lifecycle().as_str()).encode(env),
    ];
    Term::map_from_term_arrays(env, &keys, &values)
}

/// The substrate vocabularies the lifecycle projections read, for the
/// demonstration task: `[{substrate, [word]}]`.
#[rustler::nif]
fn substrates() -> Vec<(Text<'static>, Vec<Text<'static>>)> {
    vec![
        (Text("box"), texts(BoxState::ALL, BoxState::as_str)),
        (Text("run"), texts(RunState::ALL, RunState::as_str)),
        (Text("job"), texts(JobStatus::ALL, JobStatus::as_str)),
    ]
}

/// The machine status words `computer_lifecycle/3` knows, in the core's order.
#[rustler::nif]
fn machine_statuses() -> Vec<Text<'static>> {
    texts(MachineStatus::ALL, MachineStatus::as_str)
}

/// What each substrate projection answers for a word its vocabulary does not
/// hold: `[{substrate, lifecycle}]`. The core reads every such word as the one
/// `Reading::Unrecognized`, so there is one answer per substrate.
#[rustler::nif]
fn unrecognized_lifecycles() -> Vec<(Text<'static>, Text<'static>)> {
    vec![
        (
            Text("box"),
            Text(Reading::<BoxState>::Unrecognized.lifecycle().as_str()),
        ),
        (
            Text("run"),
            Text(Reading::<RunState>::Unrecognized.lifecycle().as_str()),
        ),
        (
            Text("job"),
            Text(Reading::<JobStatus>::Unrecognized.lifecycle().as_str()),
        ),
    ]
}
