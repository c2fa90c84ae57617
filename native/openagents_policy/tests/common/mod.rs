//! What the decision diff's two test files share: the document the package
//! carries, a diff's changes summed up for comparison, and the build
//! without any probe.
// Each test file uses some of it, and a probe build less.
#![allow(dead_code)]

/// Items built only without any test-only probe feature (Cargo.toml lists
/// them), that is, with the rules as they are.
macro_rules! without_probes {
    ($($item:item)*) => {
        $(
            #[cfg(not(any(
                feature = "fingerprint_probe",
                feature = "diff_probe_field_down",
                feature = "diff_probe_field_up",
                feature = "diff_probe_never_scheduled",
                feature = "diff_probe_capability_added",
                feature = "diff_probe_capability_removed",
                feature = "diff_probe_box_state",
            )))]
            $item
        )*
    };
}

use openagents_policy::diff::{Change, Class};

/// The decision document the package carries (`priv/decisions.json`, at the
/// repository's root): the rules as they are, without any probe.
pub const PACKAGED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../priv/decisions.json");

/// [`PACKAGED`]'s text; empty when it is missing, for the test that says so.
#[must_use]
pub fn packaged() -> String {
    std::fs::read_to_string(PACKAGED).unwrap_or_default()
}

/// (table, input as JSON, class) of each change, in document order.
#[must_use]
pub fn summary(changes: &[Change]) -> Vec<(&'static str, String, Class)> {
    changes
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
