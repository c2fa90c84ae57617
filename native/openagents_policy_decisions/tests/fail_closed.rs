//! The diff fails closed: a document missing a question its own
//! vocabularies imply is refused as incomplete (never read as "narrows"); a
//! question the new document no longer answers is `removed`, and one only
//! the new document asks is `unclassed` unless it widens.

use std::collections::{BTreeMap, BTreeSet};

use openagents_policy_decisions::diff::{diff, Class, DocumentRefusal, Side};
use openagents_policy_decisions::document::{Table, ANY_OTHER_WORD, FORMAT};
use serde_json::{json, Value};

mod common;
use common::{json, live, row};

fn incomplete(old: &str, new: &str) -> (Side, String) {
    match diff(old, new) {
        Err(DocumentRefusal::Incomplete { side, why }) => (side, why),
        other => panic!("not refused as incomplete: {:?}", other.map(|d| d.changes().len())),
    }
}

/// Each table's input words drawn from a vocabulary are exactly those whose
/// values in this build's document are that vocabulary's words (and
/// `<any other word>`): a table that draws a word from a vocabulary and
/// does not say so fails here.
#[test]
fn each_table_says_which_vocabularies_it_draws_from() {
    let document = live();
    let vocabularies: BTreeMap<String, BTreeSet<String>> = document
        .rows
        .iter()
        .filter(|row| row.table == Table::Vocabularies)
        .map(|row| {
            (
                row.input["vocabulary"].to_string(),
                row.answer.as_array().unwrap().iter().map(Value::to_string).collect(),
            )
        })
        .collect();
    for &table in Table::ALL {
        let rows: Vec<_> = document.rows.iter().filter(|row| row.table == table).collect();
        let mut found = BTreeSet::new();
        for key in rows[0].input.keys() {
            let values: BTreeSet<String> =
                rows.iter().filter_map(|row| row.input.get(key)).map(Value::to_string).collect();
            let other = values.contains(&json!(ANY_OTHER_WORD).to_string());
            for (name, words) in &vocabularies {
                let rest: BTreeSet<_> = values.difference(words).collect();
                if words.is_subset(&values) && rest.len() == usize::from(other) {
                    found.insert((key.clone(), name.clone(), other));
                }
            }
        }
        let said: BTreeSet<_> = table
            .drawn()
            .iter()
            .map(|d| (d.key.to_owned(), json!(d.vocabulary).to_string(), d.any_other_word))
            .collect();
        assert_eq!(said, found, "{table}");
    }
}

/// An empty document and a truncated one are refused as incomplete, on
/// either side, naming what they lack; a row removed never passes.
#[test]
fn a_document_missing_a_row_it_implies_is_incomplete() {
    let live = json(&live());
    let empty = format!(r#"{{"format":{FORMAT},"rows":[]}}"#);
    let (side, why) = incomplete(&live, &empty);
    assert_eq!((side, why.as_str()), (Side::New, "it has no row of vocabularies"));
    assert_eq!(incomplete(&empty, &live).0, Side::Old);
    let lines: Vec<&str> = live.lines().collect();
    let half = format!("{}\n]}}\n", lines[..lines.len() / 2].join("\n").trim_end_matches(','));
    assert_eq!(incomplete(&live, &half).0, Side::New);
    // Without the first row of any table: incomplete, naming what it lacks
    // (a vocabulary's row is named by a table that draws from it); or,
    // where no vocabulary implies the row (a viewer or record shape, a
    // scheduled field), removed, which the gate refuses as well; a reason's
    // row, words.
    for &table in Table::ALL {
        let mut document = common::live();
        let at = document.rows.iter().position(|row| row.table == table).unwrap();
        document.rows.remove(at);
        match diff(&live, json(&document)) {
            Err(DocumentRefusal::Incomplete { side: Side::New, why }) => {
                let named =
                    if table == Table::Vocabularies { "vocabulary" } else { table.as_str() };
                assert!(why.contains(named), "{table}: {why}");
            }
            Ok(changes) => {
                let classes: Vec<Class> = changes.changes().iter().map(|c| c.class).collect();
                let class = if table.decides() { Class::Removed } else { Class::Words };
                assert!(!classes.is_empty() && classes.iter().all(|c| *c == class), "{table}");
            }
            Err(other) => panic!("{table}: {other}"),
        }
    }
}

/// A scheduled field the new document no longer answers is removed, not
/// "narrows": the gate refuses it.
#[test]
fn a_question_no_longer_answered_is_removed() {
    let mut document = live();
    let at = document.rows.iter().position(|row| row.table == Table::ScheduleFields).unwrap();
    document.rows.remove(at);
    let changes = diff(json(&live()), json(&document)).unwrap();
    let classes: Vec<Class> = changes.changes().iter().map(|change| change.class).collect();
    assert_eq!(classes, [Class::Removed]);
    assert!(changes.to_markdown().contains("#### Removed: no longer answered (1)"));
}

/// A new relationship, at any tier: only the new document asks it, and it
/// is unclassed (refused), whatever tier it reads at.
#[test]
fn a_new_question_that_does_not_widen_is_unclassed() {
    for tier in ["dark", "glass"] {
        let mut document = live();
        common::edit(
            &mut document,
            "vocabularies",
            &[("vocabulary", json!("relationship"))],
            |words| {
                words.as_array_mut().unwrap().push(json!("auditor"));
            },
        );
        let answer = json!({"tier": tier, "admin": false, "account_id": null});
        document.rows.push(row("relationships", &[("relationship", json!("auditor"))], answer));
        let changes = diff(json(&live()), json(&document)).unwrap();
        let of = |table: Table| changes.changes().iter().filter(move |c| c.table == table);
        assert!(of(Table::Relationships).all(|change| change.class == Class::Unclassed), "{tier}");
        assert_eq!(of(Table::Relationships).count(), 1);
    }
}

/// Every class is written by its serde name, the gate's words.
#[test]
fn every_class_has_its_name() {
    let names: Vec<String> = Class::ALL.iter().map(|class| json!(class).to_string()).collect();
    let unique: BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), Class::ALL.len(), "{names:?}");
}

/// A tier no document ranks: the diff cannot tell who gains, and says so.
#[test]
fn a_tier_no_document_ranks_is_unclassed() {
    let mut document = live();
    let at = document.rows.iter().position(|row| row.table == Table::LadderEffective).unwrap();
    document.rows[at].answer = json!("opal");
    let changes = diff(json(&live()), json(&document)).unwrap();
    let classes: Vec<Class> = changes.changes().iter().map(|change| change.class).collect();
    assert_eq!(classes, [Class::Unclassed]);
    assert!(changes.to_markdown().contains("#### Unclassed: the diff cannot tell who gains (1)"));
}

/// A reason reworded decides nothing: one change, of words, named in the
/// Markdown with the reason's new text.
#[test]
fn a_reason_reworded_is_a_change_of_words() {
    let mut document = live();
    let at = document.rows.iter().position(|row| row.table == Table::ScheduleReasons).unwrap();
    document.rows[at].answer = json!("reworded");
    let changes = diff(json(&live()), json(&document)).unwrap();
    let classes: Vec<Class> = changes.changes().iter().map(|change| change.class).collect();
    assert_eq!(classes, [Class::Words]);
    assert!(changes.to_markdown().contains("now reads `reworded`"));
}
