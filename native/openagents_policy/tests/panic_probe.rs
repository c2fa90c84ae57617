//! The test-only `panic_probe` feature, both ways.
//!
//! `cargo test` (no feature, as every normal build) checks that the probe word
//! is an unknown status like any other; `cargo test --features panic_probe`
//! (run by `scripts/faults/panic.sh`) checks that it panics, with its message,
//! and that every other word still answers.

use openagents_policy::target::{job_lifecycle, DelegationLifecycle, PANIC_PROBE};

#[cfg(not(feature = "panic_probe"))]
#[test]
fn without_the_feature_the_probe_word_reads_failed() {
    assert_eq!(job_lifecycle(PANIC_PROBE), DelegationLifecycle::Failed);
}

#[cfg(feature = "panic_probe")]
#[test]
fn with_the_feature_the_probe_word_panics_with_its_message() {
    use openagents_policy::target::PANIC_PROBE_MESSAGE;

    let panic = std::panic::catch_unwind(|| job_lifecycle(PANIC_PROBE)).unwrap_err();
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied());
    assert_eq!(message, Some(PANIC_PROBE_MESSAGE));
}

#[test]
fn every_other_word_answers_either_way() {
    assert_eq!(job_lifecycle("running"), DelegationLifecycle::Active);
    assert_eq!(job_lifecycle("stopping"), DelegationLifecycle::Failed);
    assert_eq!(
        job_lifecycle(format!("{PANIC_PROBE} ")),
        DelegationLifecycle::Failed
    );
}
