//! The delegation target seam: invariants over every input the core knows.
//!
//! Every input comes from the vocabularies' own `ALL` lists, so a word added
//! to the core is held to these the day it lands. What the rules *are* is
//! stated once, in `src/target.rs`; parity with the seed is `make parity`, and
//! a changed answer is the decision diff that `make decisions-check` holds to
//! the CHANGELOG. What is held here survives any rule change that keeps the
//! seam's promises: custody and runtime class never vary with lifecycle or
//! authority, an unauthorized caller is offered nothing, the reason names
//! what stands in the way in the words already published, and nothing that
//! ended can be cancelled. Arbitrary bytes are tests/fuzz.rs's.

use openagents_policy::target::{
    BoxState, Capability, DelegationLifecycle, DelegationSeam, JobStatus, Kind, Lifecycle,
    MachineObservation, MachineStatus, Reach, RunState, Seam, UnavailableReason,
};
use openagents_policy::Reading;
use serde_json::Value;

/// The host's `Box.Run.terminal_states/0` (upstream.md): a fact about the
/// host, not a rule of the core.
const RUN_TERMINAL: &[RunState] = &[
    RunState::Completed,
    RunState::Failed,
    RunState::Cancelled,
    RunState::TimedOut,
    RunState::Lost,
];

/// The host's `Work.Job.terminal_statuses/0` (upstream.md).
const JOB_TERMINAL: &[JobStatus] = &[
    JobStatus::Completed,
    JobStatus::Failed,
    JobStatus::Interrupted,
    JobStatus::BudgetExhausted,
    JobStatus::Cancelled,
];

const REACHES: [Reach; 2] = [Reach::Authorized, Reach::NotAuthorized];

/// Every target seam: each kind, each lifecycle, either reach.
fn every_seam() -> impl Iterator<Item = (Kind, Lifecycle, Reach, Seam)> {
    Kind::ALL.iter().flat_map(|&kind| {
        Lifecycle::ALL.iter().flat_map(move |&lifecycle| {
            REACHES
                .into_iter()
                .map(move |reach| (kind, lifecycle, reach, Seam::new(kind, lifecycle, reach)))
        })
    })
}

/// Whether `text`, a JSON object, writes exactly `keys`, in that order.
fn writes_keys_in_order(text: &str, keys: &[&str]) -> bool {
    let object: Value = serde_json::from_str(text).expect("a seam serializes as JSON");
    let positions: Vec<Option<usize>> =
        keys.iter().map(|key| text.find(&format!("\"{key}\":"))).collect();
    object.as_object().is_some_and(|object| object.len() == keys.len())
        && positions.iter().all(Option::is_some)
        && positions.windows(2).all(|pair| pair[0] < pair[1])
}

// ── Substrate words ─────────────────────────────────────────────────────────

#[test]
fn a_word_of_another_vocabulary_is_unrecognized() {
    // The unified words and every other substrate's words, plus the status a
    // job carries while its cancel is in flight (upstream.md: not a status).
    let words: Vec<&str> = Lifecycle::words()
        .into_iter()
        .chain(DelegationLifecycle::words())
        .chain(BoxState::words())
        .chain(RunState::words())
        .chain(JobStatus::words())
        .chain(MachineStatus::words())
        .chain(["stopping", "", "RUNNING"])
        .collect();
    for word in words {
        // Each substrate reads its own words as themselves and every other
        // word as unrecognized.
        macro_rules! reads_its_own_words_only {
            ($($vocabulary:ident),+) => {$(
                match $vocabulary::read(word) {
                    Reading::Known(value) => assert_eq!(value.as_str(), word),
                    Reading::Unrecognized => {
                        assert!(!$vocabulary::words().contains(&word), "{word:?}");
                    }
                }
            )+};
        }
        reads_its_own_words_only!(BoxState, RunState, JobStatus, MachineStatus);
    }
}

#[test]
fn nothing_that_ended_can_be_cancelled() {
    for state in RUN_TERMINAL {
        let seam = DelegationSeam::new(RunState::read(state.as_str()).lifecycle());
        assert!(
            seam.capabilities().is_empty(),
            "run state {state} is terminal in Box.Run.terminal_states/0, yet offers {:?}",
            seam.capabilities()
        );
    }
    for status in JOB_TERMINAL {
        let seam = DelegationSeam::new(JobStatus::read(status.as_str()).lifecycle());
        assert!(
            seam.capabilities().is_empty(),
            "job status {status} is terminal in Work.Job.terminal_statuses/0, yet offers {:?}",
            seam.capabilities()
        );
    }
}

/// What ended is what the host calls terminal, and no delegation that
/// ended offers anything.
#[test]
fn the_job_statuses_that_ended_are_the_hosts_terminal_ones() {
    assert_eq!(JobStatus::ended(), JOB_TERMINAL);
    for &lifecycle in DelegationLifecycle::ALL.iter().filter(|l| l.has_ended()) {
        assert!(DelegationSeam::new(lifecycle).capabilities().is_empty(), "{lifecycle} ended");
    }
}

// ── Computer lifecycle ──────────────────────────────────────────────────────

#[test]
fn a_revoked_or_unreachable_computer_is_never_active() {
    let statuses = MachineStatus::ALL
        .iter()
        .map(|&status| Reading::Known(status))
        .chain([Reading::Unrecognized]);
    for status in statuses {
        for revoked in [false, true] {
            for online in [false, true] {
                let lifecycle = MachineObservation { status, revoked, online }.lifecycle();
                let revoked = revoked || status == Reading::Known(MachineStatus::Revoked);
                if revoked || !online {
                    assert_ne!(
                        lifecycle,
                        Lifecycle::Active,
                        "status {status:?}, revoked: {revoked}, online: {online}: nothing opens it"
                    );
                }
                if revoked {
                    assert_eq!(
                        Seam::new(Kind::Computer, lifecycle, Reach::Authorized).capabilities(),
                        [],
                        "a revoked credential is offered nothing"
                    );
                }
            }
        }
    }
}

// ── The seam ────────────────────────────────────────────────────────────────

#[test]
fn reach_is_read_from_the_authority_the_caller_proved() {
    assert_eq!(Reach::from(true), Reach::Authorized);
    assert_eq!(Reach::from(false), Reach::NotAuthorized);
}

#[test]
fn an_unauthorized_caller_is_offered_nothing() {
    for (kind, lifecycle, reach, seam) in every_seam() {
        if reach == Reach::NotAuthorized {
            assert_eq!(seam.capabilities(), [], "{kind} in {lifecycle}: offered without reach");
        }
        assert!(
            seam.capabilities().iter().all(|capability| *capability == Capability::Start),
            "a target offers start or nothing, never {:?}",
            seam.capabilities()
        );
    }
}

#[test]
fn reach_turns_only_start_into_not_authorized_and_a_reason_names_no_third_vocabulary() {
    for &kind in Kind::ALL {
        let mut startable = false;
        for &lifecycle in Lifecycle::ALL {
            let with = Seam::new(kind, lifecycle, Reach::Authorized);
            let without = Seam::new(kind, lifecycle, Reach::NotAuthorized);
            if with.capabilities().is_empty() {
                // Whoever asks, a lifecycle that offers nothing is its own reason.
                assert_eq!(
                    with.unavailable_reason().map(UnavailableReason::as_str),
                    Some(lifecycle.as_str()),
                    "{kind} in {lifecycle}: the reason is not the lifecycle's own word"
                );
                assert_eq!(
                    without.unavailable_reason(),
                    with.unavailable_reason(),
                    "{kind} in {lifecycle}"
                );
            } else {
                startable = true;
                assert_eq!(
                    with.unavailable_reason(),
                    None,
                    "{kind} in {lifecycle}: offered, and a reason"
                );
                assert_eq!(
                    without.unavailable_reason(),
                    Some(UnavailableReason::NotAuthorized),
                    "{kind} in {lifecycle}: only reach stands in the way"
                );
            }
        }
        assert!(startable, "no lifecycle of a {kind} offers start to a caller with reach");
    }
}

#[test]
fn every_seam_serializes_its_five_keys_null_included() {
    for (kind, lifecycle, reach, seam) in every_seam() {
        let text = serde_json::to_string(&seam).expect("a seam serializes");
        assert!(
            writes_keys_in_order(
                &text,
                &["custody", "runtime_class", "lifecycle", "capabilities", "unavailable_reason"]
            ),
            "{kind} in {lifecycle}, {reach:?}: the five keys, in order, nothing omitted even \
             when null: {text}"
        );
        let document: Value = serde_json::from_str(&text).expect("parses");
        assert_eq!(document["custody"], kind.custody().as_str());
        assert_eq!(
            document["runtime_class"],
            serde_json::to_value(kind.runtime_class()).expect("serializes")
        );
        assert_eq!(document["lifecycle"], lifecycle.as_str());
        assert_eq!(
            document["capabilities"],
            serde_json::to_value(seam.capabilities()).expect("serializes")
        );
        assert_eq!(
            document["unavailable_reason"],
            serde_json::to_value(seam.unavailable_reason()).expect("serializes")
        );
    }
}

#[test]
fn every_delegation_seam_keeps_its_lifecycle_and_offers_cancel_or_nothing() {
    for &lifecycle in DelegationLifecycle::ALL {
        let seam = DelegationSeam::new(lifecycle);
        assert_eq!(
            serde_json::to_value(&seam).expect("serializes")["lifecycle"],
            lifecycle.as_str()
        );
        assert!(
            seam.capabilities().iter().all(|capability| *capability == Capability::Cancel),
            "{lifecycle}: a delegation offers cancel or nothing"
        );
        let text = serde_json::to_string(&seam).expect("a delegation seam serializes");
        assert!(writes_keys_in_order(&text, &["lifecycle", "capabilities"]), "{text}");
        let document: Value = serde_json::from_str(&text).expect("parses");
        assert_eq!(document["lifecycle"], lifecycle.as_str());
    }
}
