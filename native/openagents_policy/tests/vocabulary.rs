//! Every closed vocabulary: its words round-trip, it refuses a stranger with
//! a typed refusal naming itself, and serde reads and writes the word itself.
//!
//! Each vocabulary is watched refusing on its own, because a refusal that
//! named the wrong vocabulary would send a caller looking in the wrong place.
//! Which words each holds is stated once, where it is declared; every check
//! here runs over its `ALL`, so a word added there is held to them at once.

use std::collections::BTreeSet;

use openagents_policy::disclosure::{Family, Relationship, Rung};
use openagents_policy::ladder::{Access, Tier};
use openagents_policy::target::{
    BoxState, Capability, Custody, DelegationLifecycle, JobStatus, Kind, Lifecycle, MachineStatus,
    RunState, RuntimeClass, UnavailableReason,
};
use openagents_policy::{Reading, Refusal, Vocabulary};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Inputs no vocabulary contains: near misses, nothing, and bytes that are
/// not UTF-8.
const STRANGERS: &[&[u8]] = &[b"", b"nonsense", b"BOX", b"glass ", b"\0", b"\xff\xfe", b"caf\xe9"];

/// Runs the vocabulary checks for one enum, naming the vocabulary it must
/// refuse as.
macro_rules! vocabulary_checks {
    ($module:ident, $ty:ty, $vocabulary:expr) => {
        mod $module {
            use super::*;

            fn words() -> Vec<&'static str> {
                <$ty>::words()
            }

            #[test]
            fn its_words_are_alls_words_each_naming_one_value() {
                let words = words();
                let of_all: Vec<&str> = <$ty>::ALL.iter().map(|value| value.as_str()).collect();
                assert_eq!(words, of_all, "words() is ALL's words, in declaration order");
                assert!(!words.is_empty(), "{} has words", $vocabulary);
                let unique: BTreeSet<&str> = words.iter().copied().collect();
                assert_eq!(unique.len(), words.len(), "no word names two values");
                let values: BTreeSet<$ty> = <$ty>::ALL.iter().copied().collect();
                assert_eq!(values.len(), words.len(), "no value is listed twice");
            }

            #[test]
            fn every_word_round_trips_through_parse_and_as_str() {
                for &value in <$ty>::ALL {
                    assert_eq!(
                        <$ty>::parse(value.as_str()),
                        Ok(value),
                        "parse(as_str(x)) must be x for {value:?}"
                    );
                    assert_eq!(
                        <$ty>::parse(value.as_str().as_bytes()),
                        Ok(value),
                        "parse takes the same word as bytes"
                    );
                    assert_eq!(value.to_string(), value.as_str(), "Display prints the word");
                }
            }

            #[test]
            fn every_word_round_trips_through_serde_as_the_word_itself() {
                for &value in <$ty>::ALL {
                    let written = serde_json::to_value(value).expect("a word serializes");
                    assert_eq!(
                        written,
                        Value::String(value.as_str().to_owned()),
                        "{value:?} must serialize as its word, as the Elixir map spells it"
                    );
                    let read: $ty = serde_json::from_value(written).expect("a word deserializes");
                    assert_eq!(read, value, "serde must read back the value it wrote");
                }
                assert!(
                    serde_json::from_value::<$ty>(json!("nonsense")).is_err(),
                    "serde must refuse a word outside the vocabulary, as parse does"
                );
            }

            #[test]
            fn it_refuses_a_stranger_naming_itself_and_the_word() {
                for &word in STRANGERS {
                    let refusal = <$ty>::parse(word).expect_err(
                        "a word outside the vocabulary must be refused, never guessed",
                    );
                    let lossy = String::from_utf8_lossy(word).into_owned();
                    assert_eq!(
                        refusal,
                        Refusal::UnknownWord { vocabulary: $vocabulary, word: lossy.clone() },
                        "the refusal must name the vocabulary that refused and what it was handed"
                    );
                    let message = refusal.to_string();
                    assert!(
                        message.contains($vocabulary.as_str()),
                        "the message {message:?} must name the {} vocabulary",
                        $vocabulary
                    );
                    assert!(
                        message.contains(&format!("{lossy:?}")),
                        "the message {message:?} must quote the refused word"
                    );
                    assert_eq!(
                        <$ty>::read(word),
                        Reading::Unrecognized,
                        "a refused word reads as Unrecognized"
                    );
                }
            }

            #[test]
            fn it_refuses_a_word_with_different_case() {
                for &value in <$ty>::ALL {
                    let shouted = value.as_str().to_uppercase();
                    assert!(
                        <$ty>::parse(&shouted).is_err(),
                        "{shouted:?}: words are matched exactly, not case-insensitively"
                    );
                }
            }

            proptest! {
                #[test]
                fn parse_inverts_as_str(value in prop::sample::select(<$ty>::ALL)) {
                    prop_assert_eq!(<$ty>::parse(value.as_str()), Ok(value));
                }

                #[test]
                fn parse_accepts_exactly_the_words(word in prop::collection::vec(any::<u8>(), 0..20)) {
                    let known = words().iter().any(|w| w.as_bytes() == word.as_slice());
                    prop_assert_eq!(<$ty>::parse(&word).is_ok(), known);
                }
            }
        }
    };
}

vocabulary_checks!(kind, Kind, Vocabulary::Kind);
vocabulary_checks!(custody, Custody, Vocabulary::Custody);
vocabulary_checks!(runtime_class, RuntimeClass, Vocabulary::RuntimeClass);
vocabulary_checks!(lifecycle, Lifecycle, Vocabulary::Lifecycle);
vocabulary_checks!(delegation_lifecycle, DelegationLifecycle, Vocabulary::DelegationLifecycle);
vocabulary_checks!(capability, Capability, Vocabulary::Capability);
vocabulary_checks!(unavailable_reason, UnavailableReason, Vocabulary::UnavailableReason);
vocabulary_checks!(box_state, BoxState, Vocabulary::BoxState);
vocabulary_checks!(run_state, RunState, Vocabulary::RunState);
vocabulary_checks!(job_status, JobStatus, Vocabulary::JobStatus);
vocabulary_checks!(machine_status, MachineStatus, Vocabulary::MachineStatus);
vocabulary_checks!(tier, Tier, Vocabulary::Tier);
vocabulary_checks!(access, Access, Vocabulary::Access);
vocabulary_checks!(family, Family, Vocabulary::Family);
vocabulary_checks!(rung, Rung, Vocabulary::Rung);
vocabulary_checks!(relationship, Relationship, Vocabulary::Relationship);

#[test]
fn a_refusal_of_bytes_that_are_not_utf8_can_still_be_printed() {
    let refusal = Kind::parse(b"bo\xffx").expect_err("not a kind");
    assert_eq!(
        refusal,
        Refusal::UnknownWord { vocabulary: Vocabulary::Kind, word: "bo\u{fffd}x".to_owned() },
        "bytes that are not UTF-8 are replaced, so the refusal always prints"
    );
    assert!(refusal.to_string().contains("target kind"));
}

#[test]
fn a_refusal_round_trips_through_serde() {
    // The status a job carries while its cancel is in flight (upstream.md).
    let stopping = "stopping";
    let refusal =
        JobStatus::parse(stopping).expect_err("a cancelling job's status is not a status");
    let written = serde_json::to_value(&refusal).expect("a refusal serializes");
    assert_eq!(
        written,
        json!({"refusal": "unknown_word", "vocabulary": "job_status", "word": stopping}),
        "a refusal is typed data a caller can read without parsing a sentence"
    );
    let read: Refusal = serde_json::from_value(written).expect("a refusal deserializes");
    assert_eq!(read, refusal);
}

#[test]
fn a_reading_says_whether_the_word_was_known() {
    assert_eq!(Kind::read("box"), Reading::Known(Kind::Box));
    assert_eq!(Kind::read("cloud_computer"), Reading::<Kind>::Unrecognized);
}

/// A refusal keeps a bounded prefix of what it was handed, so refusing a
/// ten-megabyte binary costs what refusing a short word costs.
#[test]
fn a_huge_word_is_refused_with_a_bounded_copy() {
    let huge = vec![b'x'; 10 * 1024 * 1024];
    let Refusal::UnknownWord { vocabulary, word } = Refusal::unknown(Vocabulary::Kind, &huge);
    assert_eq!(vocabulary, Vocabulary::Kind);
    assert!(word.len() < Refusal::KEPT + 32, "kept {} bytes", word.len());
    assert!(word.ends_with("(10485760 bytes)"), "{word}");
}
