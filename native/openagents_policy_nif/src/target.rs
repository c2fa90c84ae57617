//! `OpenAgents.Delegations.Target`'s decisions. `Target` asks them only as
//! it compiles, of the words the core gave it: a word the core does not
//! have is a bad argument.

use openagents_policy::target::{
    BoxState, Custody, DelegationLifecycle, DelegationSeam, JobStatus, Kind, Lifecycle,
    MachineObservation, MachineStatus, RunState, RuntimeClass, Seam,
};
use openagents_policy::Reading;
use rustler::types::atom;
use rustler::{Binary, Env, NifResult, Term};
use serde::Serialize;

use crate::error::raise;
use crate::word::Word;

/// A seam as the seed writes it: the core's serde JSON as a term (a map with
/// binary keys, `nil` for nothing), which `TargetTest` holds to the document.
fn seam_term<'a>(env: Env<'a>, seam: &impl Serialize) -> NifResult<Term<'a>> {
    let json = serde_json::to_value(seam).map_err(raise)?;
    Ok(rustler::serde::to_term(env, json)?)
}

words!(binaries lifecycles: Lifecycle, delegation_lifecycles: DelegationLifecycle);
words!(binaries custodies: Custody, kinds: Kind, machine_statuses: MachineStatus);

/// The job statuses whose delegation has ended.
#[rustler::nif]
fn job_terminal_statuses() -> Vec<&'static str> {
    JobStatus::ended().iter().map(|&status| status.as_str()).collect()
}

#[rustler::nif]
fn custody(kind: Word<Kind>) -> &'static str {
    kind.0.custody().as_str()
}

#[rustler::nif]
fn runtime_class(kind: Word<Kind>) -> Option<&'static str> {
    kind.0.runtime_class().map(RuntimeClass::as_str)
}

/// `status` is any term (only a binary can be a known status); `revoked_at`
/// counts as set when it is anything but `nil`.
#[rustler::nif]
fn computer_lifecycle(status: Term, revoked_at: Term, online: bool) -> &'static str {
    let status = Binary::from_term(status)
        .map_or(Reading::Unrecognized, |word| MachineStatus::read(word.as_slice()));
    let revoked = atom::nil() != revoked_at;
    MachineObservation { status, revoked, online }.lifecycle().as_str()
}

#[rustler::nif]
fn seam(
    env: Env<'_>,
    kind: Word<Kind>,
    lifecycle: Word<Lifecycle>,
    authorized: bool,
) -> NifResult<Term<'_>> {
    seam_term(env, &Seam::new(kind.0, lifecycle.0, authorized.into()))
}

#[rustler::nif]
fn delegation_seam(env: Env<'_>, lifecycle: Word<DelegationLifecycle>) -> NifResult<Term<'_>> {
    seam_term(env, &DelegationSeam::new(lifecycle.0))
}

/// The three substrates a word is projected from, each named once: a
/// lifecycle NIF each, their words (`substrates/0`), and what each answers
/// for a word it lacks (`unrecognized_lifecycles/0`).
macro_rules! substrates {
    ($($name:literal: $nif:ident($substrate:ident)),+) => {
        $(
            #[rustler::nif]
            fn $nif(word: Binary) -> &'static str {
                $substrate::read(word.as_slice()).lifecycle().as_str()
            }
        )+

        #[rustler::nif]
        fn substrates() -> Vec<(&'static str, Vec<&'static str>)> {
            vec![$(($name, $substrate::words())),+]
        }

        #[rustler::nif]
        fn unrecognized_lifecycles() -> Vec<(&'static str, &'static str)> {
            vec![$(($name, Reading::<$substrate>::Unrecognized.lifecycle().as_str())),+]
        }
    };
}

substrates!("box": box_lifecycle(BoxState), "run": run_lifecycle(RunState),
    "job": job_lifecycle(JobStatus));
