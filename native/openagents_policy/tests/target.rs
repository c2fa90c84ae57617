//! The delegation target seam, held to `OpenAgents.Delegations.Target` (seed
//! 000) and to the host vocabularies recorded in `upstream.md`.
//!
//! The inputs are the host's own words, written out here from `upstream.md`
//! rather than read back from the crate, so a word the crate forgot fails a
//! test instead of silently reading `failed`. The expected answers are the
//! seed's tables, written out word for word.

use std::collections::BTreeSet;

use openagents_policy::target::{
    box_lifecycle, job_lifecycle, read_box_state, read_job_status, read_machine_status,
    read_run_state, run_lifecycle, BoxState, Capability, Custody, DelegationLifecycle,
    DelegationSeam, JobStatus, Kind, Lifecycle, MachineObservation, MachineStatus, Reach, RunState,
    RuntimeClass, Seam, UnavailableReason,
};
use openagents_policy::Reading;
use proptest::prelude::*;
use serde_json::{json, Value};

// ── The host's vocabularies, from upstream.md, in declaration order ─────────

/// `Box.ConversationBox.states/0`.
const CONVERSATION_BOX_STATES: &[&str] = &[
    "init",
    "provisioning",
    "provisioned",
    "cloning",
    "ready",
    "idle",
    "running",
    "archiving",
    "archived",
    "error",
];

/// The synthetic state `Box.Fleet` gives a fan-out item admission has not let
/// through.
const FANOUT_QUEUED: &str = "queued";

/// `Box.Run.states/0`.
const RUN_STATES: &[&str] = &[
    "admitted",
    "dispatched",
    "running",
    "completed",
    "failed",
    "cancelled",
    "timed_out",
    "lost",
];

/// `Box.Run.terminal_states/0`.
const RUN_TERMINAL_STATES: &[&str] = &["completed", "failed", "cancelled", "timed_out", "lost"];

/// `Work.Job.statuses/0`.
const JOB_STATUSES: &[&str] = &[
    "queued",
    "running",
    "completed",
    "failed",
    "interrupted",
    "budget_exhausted",
    "cancelled",
];

/// `Work.Job.terminal_statuses/0`.
const JOB_TERMINAL_STATUSES: &[&str] = &[
    "completed",
    "failed",
    "interrupted",
    "budget_exhausted",
    "cancelled",
];

/// The `machines.status` database check.
const MACHINE_STATUSES: &[&str] = &["active", "revoked"];

/// Every Box word a producer hands `box_lifecycle/1`: a row's state, or the
/// fan-out item's synthetic `queued`.
fn every_box_word() -> Vec<&'static str> {
    let mut words = CONVERSATION_BOX_STATES.to_vec();
    words.push(FANOUT_QUEUED);
    words
}

// ── The seed's tables, word for word ────────────────────────────────────────

/// `box_lifecycle/1`'s case, in the seed's order.
const BOX_TABLE: &[(&str, &str)] = &[
    ("queued", "queued"),
    ("init", "starting"),
    ("provisioning", "starting"),
    ("cloning", "starting"),
    ("provisioned", "starting"),
    ("ready", "active"),
    ("idle", "active"),
    ("running", "active"),
    ("archiving", "stopping"),
    ("archived", "destroyed"),
    ("error", "failed"),
];

/// `run_lifecycle/1`'s case, in the seed's order.
const RUN_TABLE: &[(&str, &str)] = &[
    ("admitted", "queued"),
    ("dispatched", "starting"),
    ("running", "active"),
    ("completed", "succeeded"),
    ("cancelled", "cancelled"),
    ("failed", "failed"),
    ("timed_out", "failed"),
    ("lost", "failed"),
];

/// `job_lifecycle/1`'s case, in the seed's order.
const JOB_TABLE: &[(&str, &str)] = &[
    ("queued", "queued"),
    ("running", "active"),
    ("completed", "succeeded"),
    ("cancelled", "cancelled"),
    ("failed", "failed"),
    ("interrupted", "failed"),
    ("budget_exhausted", "failed"),
];

/// Words that are real inputs and belong to no substrate's list: the job
/// being cancelled (`"stopping"`), nothing, a wrong case, stray whitespace,
/// and words that belong to a *different* substrate or to the unified
/// vocabulary itself.
const STRANGERS: &[&[u8]] = &[
    b"stopping",
    b"",
    b"ERROR",
    b"Running",
    b" running",
    b"running ",
    b"running\0",
    b"destroyed",
    b"succeeded",
    b"active",
    b"cold",
    b"\xff",
    b"\xc3\x28",
    b"queu\xe9d",
];

/// `@lifecycles`, in the seed's declaration order.
const SEED_LIFECYCLES: &[&str] = &[
    "cold",
    "queued",
    "starting",
    "active",
    "stopping",
    "failed",
    "destroyed",
];

/// `@delegation_lifecycles`, in the seed's declaration order.
const SEED_DELEGATION_LIFECYCLES: &[&str] = &[
    "queued",
    "starting",
    "active",
    "succeeded",
    "failed",
    "cancelled",
];

const BOTH_REACHES: [Reach; 2] = [Reach::Authorized, Reach::NotAuthorized];

fn lossy(word: &[u8]) -> String {
    String::from_utf8_lossy(word).into_owned()
}

// ── Vocabularies in declaration order ───────────────────────────────────────

#[test]
fn the_target_lifecycles_are_the_seven_contract_states_in_the_seeds_order() {
    assert_eq!(
        Lifecycle::words(),
        SEED_LIFECYCLES,
        "the lifecycle vocabulary is openagents.cloud_computer.v1's state enum verbatim"
    );
}

#[test]
fn the_delegation_lifecycles_are_the_six_seed_words_in_order() {
    assert_eq!(
        DelegationLifecycle::words(),
        SEED_DELEGATION_LIFECYCLES,
        "a delegation's vocabulary is @delegation_lifecycles, in declaration order"
    );
}

#[test]
fn the_custodies_and_kinds_are_the_seed_words_in_order() {
    assert_eq!(
        Custody::words(),
        ["openagents_managed", "customer_premises"],
        "@custodies, in declaration order"
    );
    assert_eq!(
        Kind::words(),
        ["box", "computer"],
        "@kinds: two kinds and no third `cloud_computer`"
    );
}

#[test]
fn the_runtime_classes_are_the_capacity_catalogs_four() {
    assert_eq!(
        RuntimeClass::words(),
        ["standard", "strong", "batch", "connected"],
        "the catalog admits exactly standard, strong, batch and connected"
    );
}

#[test]
fn the_only_capabilities_are_the_two_operations_the_facade_serves() {
    assert_eq!(
        Capability::words(),
        ["start", "cancel"],
        "a capability list naming operations no route serves is worse than none"
    );
}

#[test]
fn the_unavailable_reasons_are_the_non_active_lifecycles_and_not_authorized() {
    let mut expected: Vec<&str> = SEED_LIFECYCLES
        .iter()
        .copied()
        .filter(|word| *word != "active")
        .collect();
    expected.push("not_authorized");
    assert_eq!(
        UnavailableReason::words(),
        expected,
        "the reason introduces no third vocabulary: a lifecycle word, or not_authorized"
    );
}

// ── The substrate vocabularies are exactly the host's ───────────────────────

#[test]
fn every_host_box_word_is_a_box_state_and_nothing_else_is() {
    let host: BTreeSet<&str> = every_box_word().into_iter().collect();
    let ours: BTreeSet<&str> = BoxState::words().into_iter().collect();
    assert_eq!(
        ours, host,
        "BoxState is ConversationBox.states/0 plus the fan-out's synthetic queued, exactly"
    );
    for word in every_box_word() {
        assert!(
            read_box_state(word).is_known(),
            "{word:?} is a host Box word, so reading it must not be Unrecognized"
        );
    }
}

#[test]
fn every_host_run_state_is_a_run_state_in_the_hosts_order() {
    assert_eq!(
        RunState::words(),
        RUN_STATES,
        "RunState is Box.Run.states/0, in declaration order"
    );
    for word in RUN_STATES {
        assert!(
            read_run_state(word).is_known(),
            "{word:?} is a Box.Run state, so reading it must not be Unrecognized"
        );
    }
}

#[test]
fn every_host_job_status_is_a_job_status_in_the_hosts_order() {
    assert_eq!(
        JobStatus::words(),
        JOB_STATUSES,
        "JobStatus is Work.Job.statuses/0, in declaration order"
    );
    for word in JOB_STATUSES {
        assert!(
            read_job_status(word).is_known(),
            "{word:?} is a Work.Job status, so reading it must not be Unrecognized"
        );
    }
}

#[test]
fn every_machine_status_the_database_admits_is_a_machine_status() {
    assert_eq!(
        MachineStatus::words(),
        MACHINE_STATUSES,
        "MachineStatus is the machines.status check, in order"
    );
    for word in MACHINE_STATUSES {
        assert!(
            read_machine_status(word).is_known(),
            "{word:?} passes the database check, so reading it must not be Unrecognized"
        );
    }
}

// ── Box lifecycle ───────────────────────────────────────────────────────────

#[test]
fn every_box_word_maps_into_the_lifecycle_vocabulary() {
    for word in every_box_word() {
        let lifecycle = box_lifecycle(word);
        assert!(
            SEED_LIFECYCLES.contains(&lifecycle.as_str()),
            "{word:?} read {lifecycle}, which is not a contract lifecycle"
        );
    }
}

#[test]
fn each_box_word_reads_the_lifecycle_the_seed_gives_it() {
    for (word, expected) in BOX_TABLE {
        assert_eq!(
            box_lifecycle(word).as_str(),
            *expected,
            "box_lifecycle({word:?}) is {expected:?} in the seed's table"
        );
    }
    let covered: BTreeSet<&str> = BOX_TABLE.iter().map(|(word, _)| *word).collect();
    let host: BTreeSet<&str> = every_box_word().into_iter().collect();
    assert_eq!(covered, host, "the seed's table names every host Box word");
}

#[test]
fn only_error_among_the_box_words_reads_failed() {
    for word in every_box_word() {
        assert_eq!(
            box_lifecycle(word) == Lifecycle::Failed,
            word == "error",
            "{word:?}: of the host's Box words only `error` is failed, so a new state is noticed \
             instead of silently reading failed"
        );
    }
}

#[test]
fn idle_ready_and_running_are_the_box_words_that_read_active() {
    let active: BTreeSet<&str> = every_box_word()
        .into_iter()
        .filter(|word| box_lifecycle(word) == Lifecycle::Active)
        .collect();
    assert_eq!(
        active,
        BTreeSet::from(["idle", "ready", "running"]),
        "a bootstrapped Box is active; a provisioned-but-not-bootstrapped one is not"
    );
}

#[test]
fn a_provisioned_box_that_is_not_bootstrapped_reads_starting() {
    for word in ["init", "provisioning", "provisioned", "cloning"] {
        assert_eq!(
            box_lifecycle(word),
            Lifecycle::Starting,
            "{word:?}: advertising work on a half-ready Box costs a failed command"
        );
    }
}

#[test]
fn only_the_fanout_items_synthetic_queued_reaches_the_contracts_queued() {
    for word in every_box_word() {
        assert_eq!(
            box_lifecycle(word) == Lifecycle::Queued,
            word == FANOUT_QUEUED,
            "{word:?}: the fan-out item is the only thing that reaches queued today"
        );
    }
}

#[test]
fn the_typed_box_projection_agrees_with_the_word_projection() {
    for state in BoxState::ALL {
        assert_eq!(
            state.lifecycle(),
            box_lifecycle(state.as_str()),
            "{state}: reading the word and projecting the value must agree"
        );
        assert_eq!(Reading::Known(*state).lifecycle(), state.lifecycle());
    }
}

// ── Run and job lifecycles ──────────────────────────────────────────────────

#[test]
fn every_run_state_maps_into_the_delegation_vocabulary() {
    for word in RUN_STATES {
        let lifecycle = run_lifecycle(word);
        assert!(
            SEED_DELEGATION_LIFECYCLES.contains(&lifecycle.as_str()),
            "run state {word:?} read {lifecycle}, which is not a delegation lifecycle"
        );
    }
}

#[test]
fn every_job_status_maps_into_the_delegation_vocabulary() {
    for word in JOB_STATUSES {
        let lifecycle = job_lifecycle(word);
        assert!(
            SEED_DELEGATION_LIFECYCLES.contains(&lifecycle.as_str()),
            "job status {word:?} read {lifecycle}, which is not a delegation lifecycle"
        );
    }
}

#[test]
fn each_run_state_reads_the_lifecycle_the_seed_gives_it() {
    for (word, expected) in RUN_TABLE {
        assert_eq!(
            run_lifecycle(word).as_str(),
            *expected,
            "run_lifecycle({word:?}) is {expected:?} in the seed's table"
        );
    }
    let covered: BTreeSet<&str> = RUN_TABLE.iter().map(|(word, _)| *word).collect();
    assert_eq!(
        covered,
        RUN_STATES.iter().copied().collect(),
        "the seed's table names every Box.Run state"
    );
}

#[test]
fn each_job_status_reads_the_lifecycle_the_seed_gives_it() {
    for (word, expected) in JOB_TABLE {
        assert_eq!(
            job_lifecycle(word).as_str(),
            *expected,
            "job_lifecycle({word:?}) is {expected:?} in the seed's table"
        );
    }
    let covered: BTreeSet<&str> = JOB_TABLE.iter().map(|(word, _)| *word).collect();
    assert_eq!(
        covered,
        JOB_STATUSES.iter().copied().collect(),
        "the seed's table names every Work.Job status"
    );
}

#[test]
fn interrupted_and_budget_exhausted_both_read_failed() {
    assert_eq!(
        job_lifecycle("interrupted"),
        DelegationLifecycle::Failed,
        "the distinction survives in the job's own status, not in a new lifecycle word"
    );
    assert_eq!(
        job_lifecycle("budget_exhausted"),
        DelegationLifecycle::Failed,
        "the distinction survives in the job's own status, not in a new lifecycle word"
    );
}

#[test]
fn a_terminal_run_state_offers_no_cancel_and_a_live_one_does() {
    for word in RUN_STATES {
        let seam = DelegationSeam::new(run_lifecycle(word));
        let terminal = RUN_TERMINAL_STATES.contains(word);
        assert_eq!(
            seam.capabilities().is_empty(),
            terminal,
            "run state {word:?} is {} in Box.Run.terminal_states/0, so cancel must {}be offered",
            if terminal { "terminal" } else { "not terminal" },
            if terminal { "not " } else { "" },
        );
    }
}

#[test]
fn a_terminal_job_status_offers_no_cancel_and_a_live_one_does() {
    for word in JOB_STATUSES {
        let seam = DelegationSeam::new(job_lifecycle(word));
        let terminal = JOB_TERMINAL_STATUSES.contains(word);
        assert_eq!(
            seam.capabilities().is_empty(),
            terminal,
            "job status {word:?} is {} in Work.Job.terminal_statuses/0, so cancel must {}be offered",
            if terminal { "terminal" } else { "not terminal" },
            if terminal { "not " } else { "" },
        );
    }
}

#[test]
fn the_typed_run_and_job_projections_agree_with_the_word_projections() {
    for state in RunState::ALL {
        assert_eq!(state.lifecycle(), run_lifecycle(state.as_str()), "{state}");
    }
    for status in JobStatus::ALL {
        assert_eq!(
            status.lifecycle(),
            job_lifecycle(status.as_str()),
            "{status}"
        );
    }
}

// ── Unknown words ───────────────────────────────────────────────────────────

#[test]
fn an_unknown_box_word_is_unrecognized_and_reads_failed() {
    for word in STRANGERS {
        if every_box_word().contains(&lossy(word).as_str()) {
            continue;
        }
        assert_eq!(
            read_box_state(word),
            Reading::Unrecognized,
            "{:?} is not a Box word, so the reading must admit it does not know",
            lossy(word)
        );
        assert_eq!(
            box_lifecycle(word),
            Lifecycle::Failed,
            "{:?} is not a Box word, and the seed's catch-all reads it failed",
            lossy(word)
        );
    }
}

#[test]
fn an_unknown_run_word_is_unrecognized_and_reads_failed() {
    for word in STRANGERS
        .iter()
        .copied()
        .chain([&b"queued"[..], b"archived"])
    {
        assert_eq!(
            read_run_state(word),
            Reading::Unrecognized,
            "{:?} is not a Box.Run state",
            lossy(word)
        );
        assert_eq!(
            run_lifecycle(word),
            DelegationLifecycle::Failed,
            "{:?} is not a Box.Run state, and the seed's catch-all reads it failed",
            lossy(word)
        );
    }
}

#[test]
fn an_unknown_job_word_is_unrecognized_and_reads_failed() {
    for word in STRANGERS
        .iter()
        .copied()
        .chain([&b"admitted"[..], b"timed_out"])
    {
        assert_eq!(
            read_job_status(word),
            Reading::Unrecognized,
            "{:?} is not a Work.Job status",
            lossy(word)
        );
        assert_eq!(
            job_lifecycle(word),
            DelegationLifecycle::Failed,
            "{:?} is not a Work.Job status, and the seed's catch-all reads it failed",
            lossy(word)
        );
    }
}

#[test]
fn a_job_whose_cancel_is_in_flight_reads_failed_but_is_not_mistaken_for_a_known_status() {
    assert_eq!(
        job_lifecycle("stopping"),
        DelegationLifecycle::Failed,
        "upstream: a job set to \"stopping\" reaches job_lifecycle/1 and reads failed"
    );
    assert_eq!(
        read_job_status("stopping"),
        Reading::Unrecognized,
        "\"stopping\" is not in Work.Job.statuses/0, and a Rust caller can see that"
    );
}

#[test]
fn a_word_of_one_substrate_is_a_stranger_to_another() {
    assert_eq!(
        run_lifecycle("queued"),
        DelegationLifecycle::Failed,
        "queued is a job status and a Box word, never a run state"
    );
    assert_eq!(
        job_lifecycle("dispatched"),
        DelegationLifecycle::Failed,
        "dispatched is a run state, never a job status"
    );
    assert_eq!(
        box_lifecycle("completed"),
        Lifecycle::Failed,
        "completed is a run state and a job status, never a Box state"
    );
}

// ── Computer lifecycle ──────────────────────────────────────────────────────

#[test]
fn the_computer_lifecycle_follows_the_seeds_truth_table() {
    let active = read_machine_status("active");
    let revoked = read_machine_status("revoked");
    let unknown = read_machine_status("suspended");
    assert_eq!(
        unknown,
        Reading::Unrecognized,
        "suspended is not a machine status"
    );

    // (status, revoked_at set, online) → lifecycle, from the seed's `cond`:
    // revoked by status or by timestamp is destroyed; active and online is
    // active; anything else is cold.
    let table = [
        (active, false, true, Lifecycle::Active),
        (active, false, false, Lifecycle::Cold),
        (active, true, true, Lifecycle::Destroyed),
        (active, true, false, Lifecycle::Destroyed),
        (revoked, false, true, Lifecycle::Destroyed),
        (revoked, false, false, Lifecycle::Destroyed),
        (revoked, true, true, Lifecycle::Destroyed),
        (revoked, true, false, Lifecycle::Destroyed),
        (unknown, false, true, Lifecycle::Cold),
        (unknown, false, false, Lifecycle::Cold),
        (unknown, true, true, Lifecycle::Destroyed),
        (unknown, true, false, Lifecycle::Destroyed),
    ];
    for (status, revoked, online, expected) in table {
        let seen = MachineObservation {
            status,
            revoked,
            online,
        };
        assert_eq!(
            seen.lifecycle(),
            expected,
            "status {status:?}, revoked_at set: {revoked}, online: {online}"
        );
    }
}

#[test]
fn a_computer_is_only_ever_cold_active_or_destroyed() {
    for status in [
        read_machine_status("active"),
        read_machine_status("revoked"),
        Reading::Unrecognized,
    ] {
        for revoked in [false, true] {
            for online in [false, true] {
                let lifecycle = MachineObservation {
                    status,
                    revoked,
                    online,
                }
                .lifecycle();
                assert!(
                    matches!(
                        lifecycle,
                        Lifecycle::Cold | Lifecycle::Active | Lifecycle::Destroyed
                    ),
                    "a laptop is shut, open, or gone; it never reads {lifecycle}"
                );
            }
        }
    }
}

// ── The seam ────────────────────────────────────────────────────────────────

fn every_seam() -> Vec<(Kind, Lifecycle, Reach, Seam)> {
    let mut seams = Vec::new();
    for &kind in Kind::ALL {
        for &lifecycle in Lifecycle::ALL {
            for reach in BOTH_REACHES {
                seams.push((kind, lifecycle, reach, Seam::new(kind, lifecycle, reach)));
            }
        }
    }
    seams
}

#[test]
fn there_are_twenty_eight_seams() {
    assert_eq!(
        every_seam().len(),
        28,
        "two kinds, seven lifecycles, two reaches"
    );
}

#[test]
fn custody_comes_from_the_kind_alone() {
    assert_eq!(
        Kind::Box.custody(),
        Custody::OpenagentsManaged,
        "a Box is provisioned here"
    );
    assert_eq!(
        Kind::Computer.custody(),
        Custody::CustomerPremises,
        "a Computer is somebody's laptop"
    );
}

#[test]
fn custody_and_runtime_class_never_vary_with_lifecycle_or_authority() {
    for (kind, lifecycle, reach, seam) in every_seam() {
        assert_eq!(
            seam.custody(),
            kind.custody(),
            "{kind} in {lifecycle} with {reach:?}: custody is structural, never inferred from the asking"
        );
        assert_eq!(
            seam.runtime_class(),
            kind.runtime_class(),
            "{kind} in {lifecycle} with {reach:?}: the runtime class is the kind's"
        );
        assert_eq!(
            seam.lifecycle(),
            lifecycle,
            "the seam carries the lifecycle it was given"
        );
    }
}

#[test]
fn a_box_claims_no_runtime_class_and_a_computer_is_connected() {
    assert_eq!(
        Kind::Box.runtime_class(),
        None,
        "nothing establishes a rented Box's egress posture, so it claims no class"
    );
    assert_eq!(
        Kind::Computer.runtime_class(),
        Some(RuntimeClass::Connected),
        "a paired computer is connected by construction"
    );
}

#[test]
fn an_unauthorized_caller_is_offered_nothing_for_any_kind_and_lifecycle() {
    for &kind in Kind::ALL {
        for &lifecycle in Lifecycle::ALL {
            let seam = Seam::new(kind, lifecycle, Reach::NotAuthorized);
            assert!(
                seam.capabilities().is_empty(),
                "{kind} in {lifecycle}: a caller without reach must get no capability by omission"
            );
            assert!(
                seam.unavailable_reason().is_some(),
                "{kind} in {lifecycle}: offering nothing must come with a reason"
            );
        }
    }
}

#[test]
fn only_an_active_target_and_an_authorized_caller_offer_start() {
    for (kind, lifecycle, reach, seam) in every_seam() {
        let startable = lifecycle == Lifecycle::Active && reach == Reach::Authorized;
        let expected: &[Capability] = if startable { &[Capability::Start] } else { &[] };
        assert_eq!(
            seam.capabilities(),
            expected,
            "{kind} in {lifecycle} with {reach:?}: start is offered exactly when active and authorized"
        );
    }
}

#[test]
fn the_unavailable_reason_is_the_lifecycle_not_authorized_or_nothing() {
    for (kind, lifecycle, reach, seam) in every_seam() {
        let reason = seam.unavailable_reason().map(UnavailableReason::as_str);
        let expected = match (lifecycle, reach) {
            (Lifecycle::Active, Reach::Authorized) => None,
            (Lifecycle::Active, Reach::NotAuthorized) => Some("not_authorized"),
            (other, _) => Some(other.as_str()),
        };
        assert_eq!(
            reason, expected,
            "{kind} in {lifecycle} with {reach:?}: the reason is the lifecycle when not startable, \
             not_authorized when only authority is missing, and nothing when start is offered"
        );
        assert_eq!(
            UnavailableReason::of(lifecycle, reach),
            seam.unavailable_reason(),
            "the seam's reason is UnavailableReason::of"
        );
    }
}

#[test]
fn reach_is_read_from_the_authority_the_caller_proved() {
    assert_eq!(Reach::from(true), Reach::Authorized);
    assert_eq!(Reach::from(false), Reach::NotAuthorized);
}

#[test]
fn the_seam_document_has_the_same_five_keys_everywhere() {
    let five: BTreeSet<&str> = [
        "custody",
        "runtime_class",
        "lifecycle",
        "capabilities",
        "unavailable_reason",
    ]
    .into();
    for (kind, lifecycle, reach, seam) in every_seam() {
        let document = serde_json::to_value(&seam).expect("a seam serializes");
        let object = document.as_object().expect("a seam is a JSON object");
        let keys: BTreeSet<&str> = object.keys().map(String::as_str).collect();
        assert_eq!(
            keys, five,
            "{kind} in {lifecycle} with {reach:?}: nothing is omitted, even when it is null"
        );
        assert_eq!(object["lifecycle"], json!(lifecycle.as_str()));
        assert_eq!(object["custody"], json!(kind.custody().as_str()));
        assert!(
            object["capabilities"].is_array(),
            "capabilities is always a list"
        );
        let reason = &object["unavailable_reason"];
        assert!(
            reason.is_null() || reason.is_string(),
            "unavailable_reason is a word or null"
        );
    }
}

#[test]
fn the_seam_document_matches_the_elixir_map_in_full() {
    let cases: [(Kind, Lifecycle, Reach, Value); 5] = [
        (
            Kind::Box,
            Lifecycle::Active,
            Reach::Authorized,
            json!({
                "custody": "openagents_managed",
                "runtime_class": null,
                "lifecycle": "active",
                "capabilities": ["start"],
                "unavailable_reason": null,
            }),
        ),
        (
            Kind::Computer,
            Lifecycle::Active,
            Reach::NotAuthorized,
            json!({
                "custody": "customer_premises",
                "runtime_class": "connected",
                "lifecycle": "active",
                "capabilities": [],
                "unavailable_reason": "not_authorized",
            }),
        ),
        (
            Kind::Computer,
            Lifecycle::Cold,
            Reach::Authorized,
            json!({
                "custody": "customer_premises",
                "runtime_class": "connected",
                "lifecycle": "cold",
                "capabilities": [],
                "unavailable_reason": "cold",
            }),
        ),
        (
            Kind::Box,
            Lifecycle::Destroyed,
            Reach::NotAuthorized,
            json!({
                "custody": "openagents_managed",
                "runtime_class": null,
                "lifecycle": "destroyed",
                "capabilities": [],
                "unavailable_reason": "destroyed",
            }),
        ),
        (
            Kind::Box,
            Lifecycle::Queued,
            Reach::Authorized,
            json!({
                "custody": "openagents_managed",
                "runtime_class": null,
                "lifecycle": "queued",
                "capabilities": [],
                "unavailable_reason": "queued",
            }),
        ),
    ];
    for (kind, lifecycle, reach, expected) in cases {
        assert_eq!(
            serde_json::to_value(Seam::new(kind, lifecycle, reach)).expect("a seam serializes"),
            expected,
            "{kind} in {lifecycle} with {reach:?} must serialize as seam/3's map does"
        );
    }
}

// ── The delegation seam ─────────────────────────────────────────────────────

#[test]
fn a_delegation_can_be_cancelled_exactly_while_queued_starting_or_active() {
    for &lifecycle in DelegationLifecycle::ALL {
        let running = ["queued", "starting", "active"].contains(&lifecycle.as_str());
        let expected: &[Capability] = if running { &[Capability::Cancel] } else { &[] };
        let seam = DelegationSeam::new(lifecycle);
        assert_eq!(
            seam.capabilities(),
            expected,
            "{lifecycle}: cancel turns only on whether the delegation is still under way"
        );
        assert_eq!(seam.lifecycle(), lifecycle);
    }
}

#[test]
fn the_delegation_seam_document_has_exactly_lifecycle_and_capabilities() {
    assert_eq!(
        serde_json::to_value(DelegationSeam::new(DelegationLifecycle::Starting)).unwrap(),
        json!({"lifecycle": "starting", "capabilities": ["cancel"]}),
        "delegation_seam/1's map, word for word"
    );
    assert_eq!(
        serde_json::to_value(DelegationSeam::new(DelegationLifecycle::Cancelled)).unwrap(),
        json!({"lifecycle": "cancelled", "capabilities": []}),
        "a finished delegation offers an empty list, not a missing key"
    );
}

// ── Properties ──────────────────────────────────────────────────────────────

/// Arbitrary bytes, with the host's own words mixed in so known words are
/// exercised as often as strangers.
fn substrate_bytes() -> impl Strategy<Value = Vec<u8>> {
    let known: Vec<&'static str> = every_box_word()
        .into_iter()
        .chain(RUN_STATES.iter().copied())
        .chain(JOB_STATUSES.iter().copied())
        .chain(["stopping"])
        .collect();
    prop_oneof![
        prop::sample::select(known).prop_map(|word| word.as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..24),
    ]
}

fn seed_answer<'t>(table: &'t [(&str, &str)], word: &[u8]) -> Option<&'t str> {
    table
        .iter()
        .find(|(known, _)| known.as_bytes() == word)
        .map(|(_, lifecycle)| *lifecycle)
}

proptest! {
    #[test]
    fn any_bytes_read_as_a_box_lifecycle_in_the_vocabulary(word in substrate_bytes()) {
        let lifecycle = box_lifecycle(&word);
        prop_assert!(Lifecycle::ALL.contains(&lifecycle));
        prop_assert!(SEED_LIFECYCLES.contains(&lifecycle.as_str()));
        if let Some(expected) = seed_answer(BOX_TABLE, &word) {
            prop_assert_eq!(lifecycle.as_str(), expected);
        } else {
                prop_assert_eq!(lifecycle, Lifecycle::Failed, "unknown Box words read failed");
                prop_assert_eq!(read_box_state(&word), Reading::Unrecognized);
        }
    }

    #[test]
    fn any_bytes_read_as_a_run_lifecycle_in_the_vocabulary(word in substrate_bytes()) {
        let lifecycle = run_lifecycle(&word);
        prop_assert!(SEED_DELEGATION_LIFECYCLES.contains(&lifecycle.as_str()));
        if let Some(expected) = seed_answer(RUN_TABLE, &word) {
            prop_assert_eq!(lifecycle.as_str(), expected);
        } else {
                prop_assert_eq!(lifecycle, DelegationLifecycle::Failed, "unknown run words read failed");
                prop_assert_eq!(read_run_state(&word), Reading::Unrecognized);
        }
    }

    #[test]
    fn any_bytes_read_as_a_job_lifecycle_in_the_vocabulary(word in substrate_bytes()) {
        let lifecycle = job_lifecycle(&word);
        prop_assert!(SEED_DELEGATION_LIFECYCLES.contains(&lifecycle.as_str()));
        if let Some(expected) = seed_answer(JOB_TABLE, &word) {
            prop_assert_eq!(lifecycle.as_str(), expected);
        } else {
                prop_assert_eq!(lifecycle, DelegationLifecycle::Failed, "unknown job words read failed");
                prop_assert_eq!(read_job_status(&word), Reading::Unrecognized);
        }
    }

    #[test]
    fn any_string_reads_the_same_as_its_bytes(word in "\\PC{0,16}") {
        prop_assert_eq!(box_lifecycle(&word), box_lifecycle(word.as_bytes()));
        prop_assert_eq!(run_lifecycle(&word), run_lifecycle(word.as_bytes()));
        prop_assert_eq!(job_lifecycle(&word), job_lifecycle(word.as_bytes()));
    }

    #[test]
    fn a_seam_never_offers_start_without_reach(
        kind in prop::sample::select(Kind::ALL),
        lifecycle in prop::sample::select(Lifecycle::ALL),
    ) {
        let seam = Seam::new(kind, lifecycle, Reach::NotAuthorized);
        prop_assert!(seam.capabilities().is_empty());
    }
}
