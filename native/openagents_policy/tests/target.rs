//! The delegation target seam, held to `OpenAgents.Delegations.Target` (seed
//! 000) and to the host vocabularies recorded in `upstream.md`.
//!
//! The inputs are the host's own words and the expected answers the seed's
//! tables, both from the tests' oracle (`mod oracle`, the fixture the Elixir
//! suites read too) rather than from the crate, so a word the crate forgot
//! fails a test instead of silently reading `failed`.

mod oracle;

use std::collections::BTreeSet;

use openagents_policy::target::{
    box_lifecycle, job_lifecycle, read_box_state, read_job_status, read_machine_status,
    read_run_state, run_lifecycle, BoxState, DelegationLifecycle, DelegationSeam, JobStatus, Kind,
    Lifecycle, MachineObservation, Reach, RunState, Seam, UnavailableReason,
};
use openagents_policy::Reading;
use oracle::{computer_lifecycle, host, target};
use proptest::prelude::*;

/// Inputs that belong to no substrate's list: nothing, a wrong case, stray
/// whitespace, bytes that are not UTF-8 (the unified vocabularies' words and
/// the host's words of *other* substrates are added per test).
const STRANGERS: &[&[u8]] = &[
    b"",
    b"ERROR",
    b"Running",
    b" running",
    b"running ",
    b"running\0",
    b"\xff",
    b"\xc3\x28",
    b"queu\xe9d",
];

fn lossy(word: &[u8]) -> String {
    String::from_utf8_lossy(word).into_owned()
}

// ── Vocabularies in declaration order ───────────────────────────────────────

// ── The substrate vocabularies are exactly the host's ───────────────────────

// ── Box lifecycle ───────────────────────────────────────────────────────────

#[test]
fn every_box_word_maps_into_the_lifecycle_vocabulary() {
    for word in host().every_box_word() {
        let lifecycle = box_lifecycle(word);
        assert!(
            target().lifecycles.contains(&lifecycle.as_str()),
            "{word:?} read {lifecycle}, which is not a contract lifecycle"
        );
    }
}

#[test]
fn each_box_word_reads_the_lifecycle_the_seed_gives_it() {
    for (word, expected) in &target().box_lifecycle {
        assert_eq!(
            box_lifecycle(word).as_str(),
            *expected,
            "box_lifecycle({word:?}) is {expected:?} in the seed's table"
        );
    }
    let covered: BTreeSet<&str> = target()
        .box_lifecycle
        .iter()
        .map(|(word, _)| *word)
        .collect();
    let host: BTreeSet<&str> = host().every_box_word().into_iter().collect();
    assert_eq!(covered, host, "the seed's table names every host Box word");
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
    for word in &host().run_states {
        let lifecycle = run_lifecycle(word);
        assert!(
            target().delegation_lifecycles.contains(&lifecycle.as_str()),
            "run state {word:?} read {lifecycle}, which is not a delegation lifecycle"
        );
    }
}

#[test]
fn every_job_status_maps_into_the_delegation_vocabulary() {
    for word in &host().job_statuses {
        let lifecycle = job_lifecycle(word);
        assert!(
            target().delegation_lifecycles.contains(&lifecycle.as_str()),
            "job status {word:?} read {lifecycle}, which is not a delegation lifecycle"
        );
    }
}

#[test]
fn each_run_state_reads_the_lifecycle_the_seed_gives_it() {
    for (word, expected) in &target().run_lifecycle {
        assert_eq!(
            run_lifecycle(word).as_str(),
            *expected,
            "run_lifecycle({word:?}) is {expected:?} in the seed's table"
        );
    }
    let covered: BTreeSet<&str> = target()
        .run_lifecycle
        .iter()
        .map(|(word, _)| *word)
        .collect();
    assert_eq!(
        covered,
        host().run_states.iter().copied().collect(),
        "the seed's table names every Box.Run state"
    );
}

#[test]
fn each_job_status_reads_the_lifecycle_the_seed_gives_it() {
    for (word, expected) in &target().job_lifecycle {
        assert_eq!(
            job_lifecycle(word).as_str(),
            *expected,
            "job_lifecycle({word:?}) is {expected:?} in the seed's table"
        );
    }
    let covered: BTreeSet<&str> = target()
        .job_lifecycle
        .iter()
        .map(|(word, _)| *word)
        .collect();
    assert_eq!(
        covered,
        host().job_statuses.iter().copied().collect(),
        "the seed's table names every Work.Job status"
    );
}

#[test]
fn a_terminal_run_state_offers_no_cancel_and_a_live_one_does() {
    for word in &host().run_states {
        let seam = DelegationSeam::new(run_lifecycle(word));
        let terminal = host().run_terminal_states.contains(word);
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
    for word in &host().job_statuses {
        let seam = DelegationSeam::new(job_lifecycle(word));
        let terminal = host().job_terminal_statuses.contains(word);
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

/// The words one substrate's reader is handed that are not its own: the
/// strangers, the unified vocabularies' words, the cancelling job's status,
/// and every other substrate's words.
fn strangers_to(own: &[&str]) -> Vec<Vec<u8>> {
    let (host, seed) = (host(), target());
    STRANGERS
        .iter()
        .map(|word| word.to_vec())
        .chain(
            host.every_box_word()
                .into_iter()
                .chain(host.run_states.iter().copied())
                .chain(host.job_statuses.iter().copied())
                .chain([host.job_cancelling_status])
                .chain(seed.lifecycles.iter().copied())
                .chain(seed.delegation_lifecycles.iter().copied())
                .filter(|word| !own.contains(word))
                .map(|word| word.as_bytes().to_vec()),
        )
        .collect()
}

#[test]
fn a_word_not_the_substrates_own_is_unrecognized_and_reads_failed() {
    let (host, seed) = (host(), target());
    for word in strangers_to(&host.every_box_word()) {
        assert_eq!(
            read_box_state(&word),
            Reading::Unrecognized,
            "{:?} is not a Box word, so the reading must admit it does not know",
            lossy(&word)
        );
        assert_eq!(
            box_lifecycle(&word).as_str(),
            seed.box_lifecycle_of(&word),
            "{:?} is not a Box word, and the seed's catch-all reads it failed",
            lossy(&word)
        );
    }
    for word in strangers_to(&host.run_states) {
        assert_eq!(
            read_run_state(&word),
            Reading::Unrecognized,
            "{:?}",
            lossy(&word)
        );
        assert_eq!(
            run_lifecycle(&word).as_str(),
            seed.run_lifecycle_of(&word),
            "{:?} is not a Box.Run state, and the seed's catch-all reads it failed",
            lossy(&word)
        );
    }
    for word in strangers_to(&host.job_statuses) {
        assert_eq!(
            read_job_status(&word),
            Reading::Unrecognized,
            "{:?} is not in Work.Job.statuses/0 (the cancelling job's status included)",
            lossy(&word)
        );
        assert_eq!(
            job_lifecycle(&word).as_str(),
            seed.job_lifecycle_of(&word),
            "{:?} is not a Work.Job status, and the seed's catch-all reads it failed",
            lossy(&word)
        );
    }
}

// ── Computer lifecycle ──────────────────────────────────────────────────────

#[test]
fn the_computer_lifecycle_follows_the_seeds_cond() {
    let unknown = "suspended";
    assert_eq!(read_machine_status(unknown), Reading::Unrecognized);
    let statuses = host().machine_statuses.iter().copied().chain([unknown]);
    for status in statuses {
        for revoked in [false, true] {
            for online in [false, true] {
                let seen = MachineObservation {
                    status: read_machine_status(status),
                    revoked,
                    online,
                };
                assert_eq!(
                    seen.lifecycle().as_str(),
                    computer_lifecycle(status.as_bytes(), revoked, online),
                    "status {status:?}, revoked_at set: {revoked}, online: {online}"
                );
            }
        }
    }
}

// ── The seam ────────────────────────────────────────────────────────────────

/// Every seam: each of the seed's kinds and lifecycles, either way authorized.
fn every_seam() -> Vec<(&'static str, &'static str, bool, Seam)> {
    let seed = target();
    let mut seams = Vec::new();
    for &kind in &seed.kinds {
        for &lifecycle in &seed.lifecycles {
            for authorized in [true, false] {
                let seam = Seam::new(
                    Kind::parse(kind).expect("the crate knows every seed kind"),
                    Lifecycle::parse(lifecycle).expect("the crate knows every seed lifecycle"),
                    Reach::from(authorized),
                );
                seams.push((kind, lifecycle, authorized, seam));
            }
        }
    }
    seams
}

#[test]
fn reach_is_read_from_the_authority_the_caller_proved() {
    assert_eq!(Reach::from(true), Reach::Authorized);
    assert_eq!(Reach::from(false), Reach::NotAuthorized);
}

#[test]
fn every_seam_document_is_seam_3s_map() {
    for (kind, lifecycle, authorized, seam) in every_seam() {
        let document = serde_json::to_value(&seam).expect("a seam serializes");
        assert_eq!(
            document,
            target().seam(kind, lifecycle, authorized),
            "{kind} in {lifecycle}, authorized: {authorized}: seam/3's map, key for key (null included)"
        );
        let keys: Vec<&str> = document
            .as_object()
            .expect("a seam is a JSON object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            target().seam_keys,
            "nothing is omitted, even when it is null"
        );
        assert_eq!(
            UnavailableReason::of(seam.lifecycle(), Reach::from(authorized)),
            seam.unavailable_reason(),
            "the seam's reason is UnavailableReason::of"
        );
    }
}

#[test]
fn every_delegation_seam_document_is_delegation_seam_1s_map() {
    for &word in &target().delegation_lifecycles {
        let lifecycle =
            DelegationLifecycle::parse(word).expect("the crate knows every delegation lifecycle");
        let seam = DelegationSeam::new(lifecycle);
        assert_eq!(seam.lifecycle(), lifecycle);
        assert_eq!(
            serde_json::to_value(seam).expect("a delegation seam serializes"),
            target().delegation_seam(word),
            "{word}: cancel turns only on whether the delegation is still under way"
        );
    }
}

// ── The delegation seam ─────────────────────────────────────────────────────

// ── Properties ──────────────────────────────────────────────────────────────

/// Arbitrary bytes, with the host's own words mixed in so known words are
/// exercised as often as strangers.
fn substrate_bytes() -> impl Strategy<Value = Vec<u8>> {
    let host = host();
    let known: Vec<&'static str> = host
        .every_box_word()
        .into_iter()
        .chain(host.run_states.iter().copied())
        .chain(host.job_statuses.iter().copied())
        .chain([host.job_cancelling_status])
        .collect();
    prop_oneof![
        prop::sample::select(known).prop_map(|word| word.as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..24),
    ]
}

/// Whether `word` is one of `own`.
fn is_one_of(own: &[&str], word: &[u8]) -> bool {
    own.iter().any(|known| known.as_bytes() == word)
}

proptest! {
    #[test]
    fn any_bytes_read_the_seeds_box_lifecycle(word in substrate_bytes()) {
        prop_assert_eq!(box_lifecycle(&word).as_str(), target().box_lifecycle_of(&word));
        prop_assert_eq!(read_box_state(&word).is_known(), is_one_of(&host().every_box_word(), &word));
    }

    #[test]
    fn any_bytes_read_the_seeds_run_lifecycle(word in substrate_bytes()) {
        prop_assert_eq!(run_lifecycle(&word).as_str(), target().run_lifecycle_of(&word));
        prop_assert_eq!(read_run_state(&word).is_known(), is_one_of(&host().run_states, &word));
    }

    #[test]
    fn any_bytes_read_the_seeds_job_lifecycle(word in substrate_bytes()) {
        prop_assert_eq!(job_lifecycle(&word).as_str(), target().job_lifecycle_of(&word));
        prop_assert_eq!(read_job_status(&word).is_known(), is_one_of(&host().job_statuses, &word));
    }

    #[test]
    fn any_string_reads_the_same_as_its_bytes(word in "\\PC{0,16}") {
        prop_assert_eq!(box_lifecycle(&word), box_lifecycle(word.as_bytes()));
        prop_assert_eq!(run_lifecycle(&word), run_lifecycle(word.as_bytes()));
        prop_assert_eq!(job_lifecycle(&word), job_lifecycle(word.as_bytes()));
    }
}
