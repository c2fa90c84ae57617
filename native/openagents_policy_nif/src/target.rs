//! `OpenAgents.Delegations.Target`'s decisions.
//!
//! Arguments that rustler decoded as `Binary` or `bool` are decoded here, in
//! argument order and before anything else, as rustler did: the wrong type is
//! a bad argument even where a refusal would otherwise be the answer.

use openagents_policy::target::{
    self, BoxState, Capability, Custody, DelegationLifecycle, DelegationSeam, JobStatus, Kind,
    Lifecycle, MachineObservation, MachineStatus, Reach, RunState, RuntimeClass, Seam,
    UnavailableReason,
};
use openagents_policy::{Reading, Refusal};
use rustler::{Binary, Encoder, Env, NifResult, Term};

use crate::decode::is_nil;
use crate::make;

/// `{:error, "<the refusal's sentence>"}`.
#[allow(clippy::needless_pass_by_value)] // called with the refusal `parse` hands over
fn refused(env: Env<'_>, refusal: Refusal) -> Term<'_> {
    make::error(env, make::display(env, &refusal))
}

/// The `Result` of a parse, or the `{:error, _}` term to return at once.
macro_rules! parse {
    ($env:expr, $parsed:expr) => {
        match $parsed {
            Ok(value) => value,
            Err(refusal) => return Ok(refused($env, refusal)),
        }
    };
}

pub fn lifecycles(env: Env<'_>) -> Term<'_> {
    make::binaries(env, Lifecycle::ALL.iter().map(|word| word.as_str()))
}

pub fn delegation_lifecycles(env: Env<'_>) -> Term<'_> {
    make::binaries(
        env,
        DelegationLifecycle::ALL.iter().map(|word| word.as_str()),
    )
}

pub fn custodies(env: Env<'_>) -> Term<'_> {
    make::binaries(env, Custody::ALL.iter().map(|word| word.as_str()))
}

pub fn kinds(env: Env<'_>) -> Term<'_> {
    make::binaries(env, Kind::ALL.iter().map(|word| word.as_str()))
}

pub fn custody<'a>(env: Env<'a>, kind: Term<'a>) -> NifResult<Term<'a>> {
    let kind: Binary = kind.decode()?;
    let kind = parse!(env, Kind::parse(kind.as_slice()));
    Ok(kind.custody().as_str().encode(env))
}

pub fn runtime_class<'a>(env: Env<'a>, kind: Term<'a>) -> NifResult<Term<'a>> {
    let kind: Binary = kind.decode()?;
    let kind = parse!(env, Kind::parse(kind.as_slice()));
    Ok(kind.runtime_class().map(RuntimeClass::as_str).encode(env))
}

pub fn box_lifecycle<'a>(env: Env<'a>, state: Term<'a>) -> NifResult<Term<'a>> {
    let state: Binary = state.decode()?;
    Ok(target::box_lifecycle(state.as_slice()).as_str().encode(env))
}

pub fn run_lifecycle<'a>(env: Env<'a>, state: Term<'a>) -> NifResult<Term<'a>> {
    let state: Binary = state.decode()?;
    Ok(target::run_lifecycle(state.as_slice()).as_str().encode(env))
}

pub fn job_lifecycle<'a>(env: Env<'a>, status: Term<'a>) -> NifResult<Term<'a>> {
    let status: Binary = status.decode()?;
    Ok(target::job_lifecycle(status.as_slice())
        .as_str()
        .encode(env))
}

/// `status` is any term (only a binary can be a known status); `revoked_at`
/// counts as set when it is anything but `nil`.
pub fn computer_lifecycle<'a>(
    env: Env<'a>,
    status: Term<'a>,
    revoked_at: Term<'a>,
    online: Term<'a>,
) -> NifResult<Term<'a>> {
    let online: bool = online.decode()?;
    let status = Binary::from_term(status).map_or(Reading::Unrecognized, |word| {
        target::read_machine_status(word.as_slice())
    });
    Ok(MachineObservation {
        status,
        revoked: !is_nil(revoked_at),
        online,
    }
    .lifecycle()
    .as_str()
    .encode(env))
}

/// The seam of the arguments, or the refusal of the first word that is not
/// one; the arguments' types are checked first.
fn parse_seam<'a>(
    env: Env<'a>,
    kind: Term<'a>,
    lifecycle: Term<'a>,
    authorized: Term<'a>,
) -> NifResult<Result<Seam, Term<'a>>> {
    let kind: Binary = kind.decode()?;
    let lifecycle: Binary = lifecycle.decode()?;
    let authorized: bool = authorized.decode()?;
    let parsed = Kind::parse(kind.as_slice()).and_then(|kind| {
        let lifecycle = Lifecycle::parse(lifecycle.as_slice())?;
        Ok(Seam::new(kind, lifecycle, Reach::from(authorized)))
    });
    Ok(parsed.map_err(|refusal| refused(env, refusal)))
}

/// A list of capability words.
fn capabilities<'a>(env: Env<'a>, capabilities: &[Capability]) -> Term<'a> {
    make::binaries(env, capabilities.iter().map(|word| word.as_str()))
}

/// The seam as the Elixir map: string keys, `nil` for nothing. The keys are
/// the core's serde field names; `OpenAgents.Delegations.TargetTest` holds
/// the two to each other through `seam_json/3`.
pub fn seam<'a>(
    env: Env<'a>,
    kind: Term<'a>,
    lifecycle: Term<'a>,
    authorized: Term<'a>,
) -> NifResult<Term<'a>> {
    let seam = match parse_seam(env, kind, lifecycle, authorized)? {
        Ok(seam) => seam,
        Err(refusal) => return Ok(refusal),
    };
    // The keys in term order, which is the order the VM keeps them in: it
    // then sorts nothing.
    let keys = [
        "capabilities",
        "custody",
        "lifecycle",
        "runtime_class",
        "unavailable_reason",
    ]
    .map(|key| key.encode(env).as_c_arg());
    let values = [
        capabilities(env, seam.capabilities()),
        seam.custody().as_str().encode(env),
        seam.lifecycle().as_str().encode(env),
        seam.runtime_class().map(RuntimeClass::as_str).encode(env),
        seam.unavailable_reason()
            .map(UnavailableReason::as_str)
            .encode(env),
    ]
    .map(|value| value.as_c_arg());
    make::map(env, &keys, &values)
}

pub fn seam_json<'a>(
    env: Env<'a>,
    kind: Term<'a>,
    lifecycle: Term<'a>,
    authorized: Term<'a>,
) -> NifResult<Term<'a>> {
    match parse_seam(env, kind, lifecycle, authorized)? {
        Ok(seam) => Ok(make::json(env, |text| serde_json::to_writer(text, &seam))),
        Err(refusal) => Ok(refusal),
    }
}

fn parse_delegation<'a>(
    env: Env<'a>,
    lifecycle: Term<'a>,
) -> NifResult<Result<DelegationSeam, Term<'a>>> {
    let lifecycle: Binary = lifecycle.decode()?;
    Ok(DelegationLifecycle::parse(lifecycle.as_slice())
        .map(DelegationSeam::new)
        .map_err(|refusal| refused(env, refusal)))
}

pub fn delegation_seam<'a>(env: Env<'a>, lifecycle: Term<'a>) -> NifResult<Term<'a>> {
    let seam = match parse_delegation(env, lifecycle)? {
        Ok(seam) => seam,
        Err(refusal) => return Ok(refusal),
    };
    let keys = ["capabilities", "lifecycle"].map(|key| key.encode(env).as_c_arg());
    let values = [
        capabilities(env, seam.capabilities()),
        seam.lifecycle().as_str().encode(env),
    ]
    .map(|value| value.as_c_arg());
    make::map(env, &keys, &values)
}

pub fn delegation_seam_json<'a>(env: Env<'a>, lifecycle: Term<'a>) -> NifResult<Term<'a>> {
    match parse_delegation(env, lifecycle)? {
        Ok(seam) => Ok(make::json(env, |text| serde_json::to_writer(text, &seam))),
        Err(refusal) => Ok(refusal),
    }
}

/// The substrate vocabularies the lifecycle projections read, for the
/// demonstration task: `[{substrate, [word]}]`.
pub fn substrates<'a>(env: Env<'a>) -> Term<'a> {
    let substrate = |name: &str, words: Term<'a>| (name, words).encode(env).as_c_arg();
    let substrates = [
        substrate(
            "box",
            make::binaries(env, BoxState::ALL.iter().map(|word| word.as_str())),
        ),
        substrate(
            "run",
            make::binaries(env, RunState::ALL.iter().map(|word| word.as_str())),
        ),
        substrate(
            "job",
            make::binaries(env, JobStatus::ALL.iter().map(|word| word.as_str())),
        ),
    ];
    make::list(env, &substrates)
}

/// The machine status words `computer_lifecycle/3` knows, in the core's order.
pub fn machine_statuses(env: Env<'_>) -> Term<'_> {
    make::binaries(env, MachineStatus::ALL.iter().map(|word| word.as_str()))
}

/// What each substrate projection answers for a word its vocabulary does not
/// hold: `[{substrate, lifecycle}]`. The core reads every such word as the one
/// `Reading::Unrecognized`, so there is one answer per substrate.
pub fn unrecognized_lifecycles(env: Env<'_>) -> Term<'_> {
    let pair = |name: &str, lifecycle: &str| (name, lifecycle).encode(env).as_c_arg();
    make::list(
        env,
        &[
            pair(
                "box",
                Reading::<BoxState>::Unrecognized.lifecycle().as_str(),
            ),
            pair(
                "run",
                Reading::<RunState>::Unrecognized.lifecycle().as_str(),
            ),
            pair(
                "job",
                Reading::<JobStatus>::Unrecognized.lifecycle().as_str(),
            ),
        ],
    )
}
