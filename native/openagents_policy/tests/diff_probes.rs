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

use openagents_policy::diff::{diff, Diff};
use openagents_policy::fingerprint::decision_json;

#[macro_use]
mod common;

/// The rules as they are (the packaged document) against this build's.
#[allow(dead_code)] // unused in the build without a probe
fn probed() -> Diff {
    let changes = diff(common::packaged(), decision_json().unwrap()).unwrap();
    // The figure the guide and the issue's report quote.
    eprintln!(
        "{} changes:\n{}",
        changes.changes().len(),
        changes.to_markdown()
    );
    changes
}

/// One probe's test, built only with its feature: the diff's changes in
/// document order, as (table, input as JSON, class); the sentence one of
/// them says (by its index); and whether the whole diff widens, which is
/// what the upgrade's preflight asks.
macro_rules! probe {
    (
        $(#[$doc:meta])*
        $feature:literal, $name:ident,
        changes: [$(($table:literal, $input:literal, $class:ident)),+ $(,)?],
        says: ($index:literal, $says:literal),
        widens: $widens:literal $(,)?
    ) => {
        $(#[$doc])*
        #[cfg(feature = $feature)]
        #[test]
        fn $name() {
            let changes = probed();
            assert_eq!(
                common::summary(changes.changes()),
                [$(($table, $input.to_owned(), openagents_policy::diff::Class::$class)),+]
            );
            assert_eq!(changes.changes()[$index].says, $says);
            assert_eq!(changes.widens(), $widens);
        }
    };
}

without_probes! {
    #[test]
    fn identical_builds_give_no_change() {
        assert!(diff(decision_json().unwrap(), decision_json().unwrap())
            .unwrap()
            .is_empty());
        let changes = diff(common::packaged(), decision_json().unwrap()).unwrap();
        assert!(
            changes.is_empty(),
            "priv/decisions.json is not this build's document, so no probe can be compared with it \
             (tests/diff.rs says how to regenerate it):\n{}",
            changes.to_markdown()
        );
    }
}

probe! {
    /// `terminal_commit`: ledger -> pulse. Strangers and anonymous readers gain it.
    "diff_probe_field_down", a_field_moved_down_widens,
    changes: [
        ("schedule.fields", r#"{"family":"attempt","field":"terminal_commit"}"#, Widens),
        (
            "schedule.fields_at",
            r#"{"family":"attempt","viewer_tier":"pulse","field":"terminal_commit"}"#,
            Widens
        ),
    ],
    says: (1, "strangers and anonymous readers (`pulse`) now see `attempt.terminal_commit`"),
    widens: true,
}

probe! {
    /// `branch`: ledger -> glass. Members lose it.
    "diff_probe_field_up", a_field_moved_up_narrows,
    changes: [
        ("schedule.fields", r#"{"family":"attempt","field":"branch"}"#, Narrows),
        (
            "schedule.fields_at",
            r#"{"family":"attempt","viewer_tier":"ledger","field":"branch"}"#,
            Narrows
        ),
    ],
    says: (1, "members (`ledger`) no longer see `attempt.branch`"),
    widens: false,
}

probe! {
    /// `deadline_at` leaves the never list and is scheduled at ledger: six
    /// answers, every one a gain.
    "diff_probe_never_scheduled", a_never_listed_column_scheduled_widens,
    changes: [
        ("schedule.fields", r#"{"family":"attempt","field":"deadline_at"}"#, Widens),
        ("schedule.never", r#"{"family":"attempt","column":"deadline_at"}"#, Widens),
        ("schedule.source_columns", r#"{"family":"attempt","column":"deadline_at"}"#, Widens),
        (
            "schedule.fields_at",
            r#"{"family":"attempt","viewer_tier":"ledger","field":"deadline_at"}"#,
            Widens
        ),
        (
            "schedule.fields_at",
            r#"{"family":"attempt","viewer_tier":"glass","field":"deadline_at"}"#,
            Widens
        ),
        (
            "schedule.fields_at",
            r#"{"family":"attempt","viewer_tier":null,"field":"deadline_at"}"#,
            Widens
        ),
    ],
    says: (1, "`attempt.deadline_at` left the never list"),
    widens: true,
}

probe! {
    /// A `starting` target offers `start` to a caller with reach: the reason is
    /// gone, and each kind's seam grants it.
    "diff_probe_capability_added", a_capability_added_widens,
    changes: [
        ("seams.unavailable", r#"{"lifecycle":"starting","reach":"authorized"}"#, Widens),
        (
            "seams.seams",
            r#"{"kind":"box","lifecycle":"starting","reach":"authorized"}"#,
            Widens
        ),
        (
            "seams.seams",
            r#"{"kind":"computer","lifecycle":"starting","reach":"authorized"}"#,
            Widens
        ),
    ],
    says: (
        1,
        "a caller with reach on a `box` that is `starting` may now `start` (it was refused as `starting`)"
    ),
    widens: true,
}

probe! {
    /// A `queued` delegation can no longer be cancelled.
    "diff_probe_capability_removed", a_capability_removed_narrows,
    changes: [("seams.delegation_seams", r#"{"lifecycle":"queued"}"#, Narrows)],
    says: (0, "a caller on a `queued` delegation may no longer `cancel`"),
    widens: false,
}

probe! {
    /// A `provisioned` Box reads `active`: its lifecycle entry changes (neither
    /// gain nor loss by itself), and the capabilities that follow are classed:
    /// a caller with reach may now start one; one without is refused for its
    /// reach instead of the Box's state.
    "diff_probe_box_state", a_box_state_mapped_elsewhere_changes_and_classes_what_follows,
    changes: [
        ("lifecycles.box_states", r#"{"box_state":"provisioned"}"#, Changes),
        (
            "capabilities.box_states",
            r#"{"box_state":"provisioned","reach":"authorized"}"#,
            Widens
        ),
        (
            "capabilities.box_states",
            r#"{"box_state":"provisioned","reach":"not_authorized"}"#,
            Changes
        ),
    ],
    says: (
        1,
        "a caller with reach on a Box in `provisioned` may now `start` (it was refused as `starting`)"
    ),
    widens: true,
}

probe! {
    /// The fingerprint's probe, `archiving` reads `destroyed`: stopping and
    /// destroyed both offer nothing, so what follows only changes its reason.
    "fingerprint_probe", a_box_state_mapped_between_two_refusals_changes_only,
    changes: [
        ("lifecycles.box_states", r#"{"box_state":"archiving"}"#, Changes),
        (
            "capabilities.box_states",
            r#"{"box_state":"archiving","reach":"authorized"}"#,
            Changes
        ),
        (
            "capabilities.box_states",
            r#"{"box_state":"archiving","reach":"not_authorized"}"#,
            Changes
        ),
    ],
    says: (
        1,
        "a caller with reach on a Box in `archiving` is now refused as `destroyed` (was `stopping`)"
    ),
    widens: false,
}
