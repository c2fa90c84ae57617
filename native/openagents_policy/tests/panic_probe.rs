//! The test-only `panic_probe` feature, both ways.
//!
//! `cargo test` (no feature, as every normal build) checks that the probe word
//! is an unknown tier word like any other, which names `dark`;
//! `cargo test --features panic_probe` (run by `scripts/panic_check.sh`)
//! checks that reading it panics, with its message, and that every other word
//! still reads as before.

use openagents_policy::ladder::{read_tier, Tier, PANIC_PROBE};
use openagents_policy::Reading;

#[cfg(not(feature = "panic_probe"))]
#[test]
fn without_the_feature_the_probe_word_names_dark() {
    use openagents_policy::ladder::{effective_tier, Subject, Viewer};

    assert_eq!(read_tier(PANIC_PROBE), Reading::Unrecognized);
    assert_eq!(read_tier(PANIC_PROBE).named(), Tier::Dark);
    // As the NIF asks it of a record with no link: dark, clamped or not.
    let subject = Subject::Tier(read_tier(PANIC_PROBE));
    assert_eq!(effective_tier(&subject, &Viewer::Nobody), Tier::Dark);
    assert_eq!(effective_tier(&subject, &Viewer::Word(Reading::Known(Tier::Glass))), Tier::Dark);
}

#[cfg(feature = "panic_probe")]
#[test]
fn with_the_feature_the_probe_word_panics_with_its_message() {
    use openagents_policy::ladder::PANIC_PROBE_MESSAGE;

    let panic = std::panic::catch_unwind(|| read_tier(PANIC_PROBE)).unwrap_err();
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied());
    assert_eq!(message, Some(PANIC_PROBE_MESSAGE));
}

#[test]
fn every_other_word_reads_either_way() {
    for &tier in Tier::ALL {
        assert_eq!(read_tier(tier.as_str()), Reading::Known(tier));
    }
    assert_eq!(read_tier("GLASS"), Reading::Unrecognized);
    assert_eq!(read_tier(format!("{PANIC_PROBE} ")), Reading::Unrecognized);
    assert_eq!(read_tier(PANIC_PROBE.to_uppercase()), Reading::Unrecognized);
    assert_eq!(read_tier(""), Reading::Unrecognized);
}
