//! The decision document: every table there, every question asked once, a
//! pure function of the answers, moved by any one of them, read back as
//! written, and the package's own.

use std::collections::HashSet;

use openagents_policy::fingerprint::{decision_digest, decision_json, sha256_hex, Document, Table};
use openagents_policy::target::BoxState;
use openagents_policy::Vocabulary;
use serde_json::{json, Value};

mod common;
use common::live;

#[test]
fn the_digest_is_a_pure_function_of_the_answers() {
    assert_eq!(live(), live());
    assert_eq!(live().to_json().unwrap(), decision_json().unwrap());
    assert_eq!(live().digest().unwrap(), decision_digest().unwrap());
    assert_eq!(decision_digest().unwrap().len(), 64);
}

/// The package's document (and so its digest, which nodes compare) is this
/// build's: `make decisions` writes it anew after a rule changes.
#[test]
fn the_packaged_document_is_this_builds_own() {
    let packaged = common::read(common::PACKAGED);
    assert!(
        packaged == decision_json().unwrap(),
        "priv/decisions.json is not this build's decision document: run `make decisions`"
    );
    assert_eq!(sha256_hex(packaged.as_bytes()), decision_digest().unwrap());
}

/// Every table has rows, in the document's order, and no question is asked
/// twice.
#[test]
fn every_table_is_there_in_order_and_asks_each_question_once() {
    let document = live();
    let tables: Vec<Table> = document.rows.iter().map(|row| row.table).collect();
    let mut order = tables.clone();
    order.dedup();
    assert_eq!(order, Table::ALL);
    let questions: HashSet<(Table, String)> = document
        .rows
        .iter()
        .map(|row| (row.table, serde_json::to_string(&row.input).unwrap()))
        .collect();
    assert_eq!(questions.len(), document.rows.len());
}

#[test]
fn every_vocabulary_is_there_with_its_words() {
    let document = live();
    let vocabularies: Vec<_> = document
        .rows
        .iter()
        .filter(|row| row.table == Table::Vocabularies)
        .collect();
    let named: Vec<Value> = vocabularies
        .iter()
        .map(|row| row.input.get("vocabulary").unwrap().clone())
        .collect();
    let all: Vec<Value> = Vocabulary::ALL.iter().map(|v| json!(v)).collect();
    assert_eq!(named, all);
    let box_states = common::answer(
        &document,
        "vocabularies",
        &[("vocabulary", json!("box_state"))],
    );
    assert_eq!(box_states, json!(BoxState::words()));
}

/// Viewers, subjects and records are written as the host passes them.
#[test]
fn shapes_are_written_in_the_hosts_terms() {
    let document = live();
    let viewers: Vec<&Value> = document
        .rows
        .iter()
        .filter(|row| row.table == Table::LadderViewers)
        .map(|row| row.input.get("viewer").unwrap())
        .collect();
    for term in [
        "%{admin: true}",
        "%User{id: 2} with admin? false",
        r#"%{tier: "ledger", account_id: 1}"#,
    ] {
        assert!(
            viewers.contains(&&json!(term)),
            "{term} is not among {viewers:?}"
        );
    }
    for term in [
        r#""glass""#,
        "<any other word>",
        "%{account_id: nil}",
        "nil",
    ] {
        assert!(
            viewers.contains(&&json!(term)),
            "{term} is not among {viewers:?}"
        );
    }
    let record =
        r#"%{artifact_link: %ArtifactLink{account_id: 1, tier: "ledger", revoked_at: <set>}}"#;
    let words = [
        ("record", json!(record)),
        ("viewer", json!("%{admin: true}")),
    ];
    assert_eq!(
        common::answer(&document, "ladder.records", &words),
        json!("dark")
    );
}

#[test]
fn the_document_reads_back_as_written() {
    let text = decision_json().unwrap();
    let read: Document = serde_json::from_str(&text).unwrap();
    assert_eq!(read, live());
    assert_eq!(read.to_json().unwrap(), text);
}

/// One changed answer in any table is another digest: no table is left out
/// of what is digested.
#[test]
fn one_changed_answer_in_any_table_is_another_digest() {
    let document = live();
    let digest = document.digest().unwrap();
    for (table, changed) in common::one_answer_changed(&document) {
        assert_ne!(
            changed.digest().unwrap(),
            digest,
            "a changed answer of {table:?}"
        );
    }
}
