//! The diff on real rule changes: each test-only `diff_probe_*` feature (and
//! the fingerprint's `fingerprint_probe`) changes one rule in the core's
//! source, and the document `Tables::compute()` writes for that build is
//! compared with the document of the rules as they are, the `priv/decisions.json`
//! the package carries (which `tests/diff.rs` holds to a build without
//! probes). One build per probe:
//!
//! ```sh
//! cargo test -p openagents_policy --features diff_probe_field_down --test diff_probes
//! ```
//!
//! (`make decisions-check` runs every one.) Without a probe, the build's own
//! document against itself and against the file: no change.

use openagents_policy::diff::{diff, Class, Diff};
use openagents_policy::fingerprint::decision_json;

/// The document of the rules as they are, without any probe.
fn rules_as_they_are() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../priv/decisions.json");
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// The rules as they are against this build's.
#[allow(dead_code)] // unused in the build without a probe
fn probed() -> Diff {
    let changes = diff(rules_as_they_are(), decision_json().unwrap()).unwrap();
    // The figure the guide and the issue's report quote.
    eprintln!(
        "{} changes:\n{}",
        changes.changes().len(),
        changes.to_markdown()
    );
    changes
}

/// (table, input as JSON, class) of each change, in document order.
#[allow(dead_code)]
fn summary(changes: &Diff) -> Vec<(&'static str, String, Class)> {
    changes
        .changes()
        .iter()
        .map(|change| {
            (
                change.table,
                serde_json::to_string(&change.input).unwrap(),
                change.class,
            )
        })
        .collect()
}

#[allow(dead_code)]
fn row(table: &'static str, input: &str, class: Class) -> (&'static str, String, Class) {
    (table, input.to_owned(), class)
}

#[cfg(not(any(
    feature = "fingerprint_probe",
    feature = "diff_probe_field_down",
    feature = "diff_probe_field_up",
    feature = "diff_probe_never_scheduled",
    feature = "diff_probe_capability_added",
    feature = "diff_probe_capability_removed",
    feature = "diff_probe_box_state",
)))]
#[test]
fn identical_builds_give_no_change() {
    assert!(diff(decision_json().unwrap(), decision_json().unwrap())
        .unwrap()
        .is_empty());
    let changes = diff(rules_as_they_are(), decision_json().unwrap()).unwrap();
    assert!(
        changes.is_empty(),
        "priv/decisions.json is not this build's document, so no probe can be compared with it \
         (tests/diff.rs says how to regenerate it):\n{}",
        changes.to_markdown()
    );
}

/// `terminal_commit`: ledger -> pulse. Strangers and anonymous readers gain it.
#[cfg(feature = "diff_probe_field_down")]
#[test]
fn a_field_moved_down_widens() {
    use Class::Widens;
    let changes = probed();
    assert_eq!(
        summary(&changes),
        [
            row(
                "schedule.fields",
                r#"{"family":"attempt","field":"terminal_commit"}"#,
                Widens
            ),
            row(
                "schedule.fields_at",
                r#"{"family":"attempt","viewer_tier":"pulse","field":"terminal_commit"}"#,
                Widens
            ),
        ]
    );
    assert_eq!(
        changes.changes()[1].says,
        "strangers and anonymous readers (`pulse`) now see `attempt.terminal_commit`"
    );
    assert!(changes.widens());
}

/// `branch`: ledger -> glass. Members lose it.
#[cfg(feature = "diff_probe_field_up")]
#[test]
fn a_field_moved_up_narrows() {
    use Class::Narrows;
    let changes = probed();
    assert_eq!(
        summary(&changes),
        [
            row(
                "schedule.fields",
                r#"{"family":"attempt","field":"branch"}"#,
                Narrows
            ),
            row(
                "schedule.fields_at",
                r#"{"family":"attempt","viewer_tier":"ledger","field":"branch"}"#,
                Narrows
            ),
        ]
    );
    assert_eq!(
        changes.changes()[1].says,
        "members (`ledger`) no longer see `attempt.branch`"
    );
    assert!(!changes.widens());
}

/// `deadline_at` leaves the never list and is scheduled at ledger: six
/// answers, every one a gain.
#[cfg(feature = "diff_probe_never_scheduled")]
#[test]
fn a_never_listed_column_scheduled_widens() {
    use Class::Widens;
    let changes = probed();
    assert_eq!(
        summary(&changes),
        [
            row(
                "schedule.fields",
                r#"{"family":"attempt","field":"deadline_at"}"#,
                Widens
            ),
            row(
                "schedule.never",
                r#"{"family":"attempt","column":"deadline_at"}"#,
                Widens
            ),
            row(
                "schedule.source_columns",
                r#"{"family":"attempt","column":"deadline_at"}"#,
                Widens
            ),
            row(
                "schedule.fields_at",
                r#"{"family":"attempt","viewer_tier":"ledger","field":"deadline_at"}"#,
                Widens
            ),
            row(
                "schedule.fields_at",
                r#"{"family":"attempt","viewer_tier":"glass","field":"deadline_at"}"#,
                Widens
            ),
            row(
                "schedule.fields_at",
                r#"{"family":"attempt","viewer_tier":null,"field":"deadline_at"}"#,
                Widens
            ),
        ]
    );
    assert_eq!(
        changes.changes()[1].says,
        "`attempt.deadline_at` left the never list"
    );
}

/// A `starting` target offers `start` to a caller with reach: the reason is
/// gone, and each kind's seam grants it.
#[cfg(feature = "diff_probe_capability_added")]
#[test]
fn a_capability_added_widens() {
    use Class::Widens;
    let changes = probed();
    assert_eq!(
        summary(&changes),
        [
            row(
                "seams.unavailable",
                r#"{"lifecycle":"starting","reach":"authorized"}"#,
                Widens
            ),
            row(
                "seams.seams",
                r#"{"kind":"box","lifecycle":"starting","reach":"authorized"}"#,
                Widens
            ),
            row(
                "seams.seams",
                r#"{"kind":"computer","lifecycle":"starting","reach":"authorized"}"#,
                Widens
            ),
        ]
    );
    assert_eq!(
        changes.changes()[1].says,
        "a caller with reach on a `box` that is `starting` may now `start` (it was refused as `starting`)"
    );
}

/// A `queued` delegation can no longer be cancelled.
#[cfg(feature = "diff_probe_capability_removed")]
#[test]
fn a_capability_removed_narrows() {
    let changes = probed();
    assert_eq!(
        summary(&changes),
        [row(
            "seams.delegation_seams",
            r#"{"lifecycle":"queued"}"#,
            Class::Narrows
        )]
    );
    assert_eq!(
        changes.changes()[0].says,
        "a caller on a `queued` delegation may no longer `cancel`"
    );
    assert!(!changes.widens());
}

/// A `provisioned` Box reads `active`: its lifecycle entry changes (neither
/// gain nor loss by itself), and the capabilities that follow are classed:
/// a caller with reach may now start one; one without is refused for its
/// reach instead of the Box's state.
#[cfg(feature = "diff_probe_box_state")]
#[test]
fn a_box_state_mapped_elsewhere_changes_and_classes_what_follows() {
    let changes = probed();
    assert_eq!(
        summary(&changes),
        [
            row(
                "lifecycles.box_states",
                r#"{"box_state":"provisioned"}"#,
                Class::Changes
            ),
            row(
                "capabilities.box_states",
                r#"{"box_state":"provisioned","reach":"authorized"}"#,
                Class::Widens
            ),
            row(
                "capabilities.box_states",
                r#"{"box_state":"provisioned","reach":"not_authorized"}"#,
                Class::Changes
            ),
        ]
    );
    assert_eq!(
        changes.changes()[1].says,
        "a caller with reach on a Box in `provisioned` may now `start` (it was refused as `starting`)"
    );
}

/// The fingerprint's probe, `archiving` reads `destroyed`: stopping and
/// destroyed both offer nothing, so what follows only changes its reason.
#[cfg(feature = "fingerprint_probe")]
#[test]
fn a_box_state_mapped_between_two_refusals_changes_only() {
    use Class::Changes;
    let changes = probed();
    assert_eq!(
        summary(&changes),
        [
            row(
                "lifecycles.box_states",
                r#"{"box_state":"archiving"}"#,
                Changes
            ),
            row(
                "capabilities.box_states",
                r#"{"box_state":"archiving","reach":"authorized"}"#,
                Changes
            ),
            row(
                "capabilities.box_states",
                r#"{"box_state":"archiving","reach":"not_authorized"}"#,
                Changes
            ),
        ]
    );
    assert_eq!(
        changes.changes()[1].says,
        "a caller with reach on a Box in `archiving` is now refused as `destroyed` (was `stopping`)"
    );
}
