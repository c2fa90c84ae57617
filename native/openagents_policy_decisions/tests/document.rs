//! The decision document: every table there, every question asked once, a
//! pure function of the answers, moved by any one of them, one row a line,
//! read back as written, and the package's own (and, until a version is
//! cut, the last release's).

use std::collections::HashSet;

use openagents_policy::target::BoxState;
use openagents_policy::Vocabulary;
use openagents_policy_decisions::diff::{self, Side};
use openagents_policy_decisions::document::{
    decision_digest, decision_json, sha256_hex, Table, FORMAT,
};
use serde_json::{json, Value};

mod common;
use common::live;

#[test]
fn the_digest_is_the_sha256_of_the_document_written() {
    assert_eq!(live().to_json(), decision_json());
    assert_eq!(live().digest(), decision_digest());
    assert_eq!(decision_digest().len(), 64);
}

/// The package's document (and so its digest, which nodes compare) is this
/// build's: `make decisions` writes it anew after a rule changes.
#[test]
fn the_packaged_document_is_this_builds_own() {
    let packaged = common::read(common::PACKAGED);
    assert!(
        packaged == decision_json(),
        "priv/decisions.json is not this build's decision document: run `make decisions`"
    );
    assert_eq!(sha256_hex(packaged.as_bytes()), decision_digest());
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
    let vocabularies: Vec<_> =
        document.rows.iter().filter(|row| row.table == Table::Vocabularies).collect();
    let named: Vec<Value> =
        vocabularies.iter().map(|row| row.input.get("vocabulary").unwrap().clone()).collect();
    let all: Vec<Value> = Vocabulary::ALL.iter().map(|v| json!(v)).collect();
    assert_eq!(named, all);
    let box_states =
        common::answer(&document, "vocabularies", &[("vocabulary", json!("box_state"))]);
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
    for term in
        ["%{admin: true}", "%User{id: 2} with admin? false", r#"%{tier: "ledger", account_id: 1}"#]
    {
        assert!(viewers.contains(&&json!(term)), "{term} is not among {viewers:?}");
    }
    for term in [r#""glass""#, "<any other word>", "%{account_id: nil}", "nil"] {
        assert!(viewers.contains(&&json!(term)), "{term} is not among {viewers:?}");
    }
    let record = r#"%{artifact_link: nil, transparency_tier: %ArtifactLink{account_id: 1, tier: "ledger", revoked_at: <set>}}"#;
    let words = [("record", json!(record)), ("viewer", json!("%{admin: true}"))];
    assert!(document.rows.iter().any(|row| common::asks(row, "ladder.records", &words)));
}

#[test]
fn the_document_reads_back_as_written() {
    let text = decision_json();
    let read = diff::read(text.as_bytes(), Side::New).unwrap();
    assert_eq!(read, live());
    assert_eq!(read.to_json(), text);
}

/// One row a line, so that the `git diff` of a rule change is the rows it
/// moves; and small enough to read whole (and well within the diff's
/// limits).
#[test]
fn the_document_is_one_row_a_line_and_small() {
    let text = decision_json();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!(r#"{{"format":{FORMAT},"rows":["#));
    assert_eq!(lines[lines.len() - 1], "]}");
    assert!(text.ends_with("]}\n"));
    let rows = &lines[1..lines.len() - 1];
    assert_eq!(rows.len(), live().rows.len());
    for (n, line) in rows.iter().enumerate() {
        let line = line.strip_suffix(',').unwrap_or(line);
        assert!(line.ends_with(']'), "row {n}: {line}");
        assert_eq!(serde_json::from_str::<Value>(line).unwrap().as_array().unwrap().len(), 3);
    }
    assert!(text.len() <= 300 * 1024, "{} bytes", text.len());
    assert!(text.len() * 4 <= diff::Limit::Bytes.max());
    assert!(rows.len() * 4 <= diff::Limit::Rows.max());
}

/// The digest `last-release/README.md` records (its line "Digest: <sha256>").
fn last_release_digest() -> String {
    let readme = common::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../last-release/README.md"));
    let line = readme.lines().find_map(|line| line.strip_prefix("Digest: "));
    line.expect("last-release/README.md has a line \"Digest: <sha256>\"").trim().to_owned()
}

/// The last release's document is the diff's fixed baseline: one file,
/// replaced only when a version is cut, and held here to the digest
/// recorded when it was, so an edit of it cannot pass unseen.
#[test]
fn the_last_release_is_the_document_its_digest_names() {
    let document = common::read(common::LAST_RELEASE);
    assert_eq!(
        openagents_policy_decisions::document::sha256_hex(document.as_bytes()),
        last_release_digest(),
        "last-release/decisions.json is not the document last-release/README.md records: \
         it changes only when a version is cut, with its digest"
    );
}

/// One changed answer in any table is another digest: no table is left out
/// of what is digested.
#[test]
fn one_changed_answer_in_any_table_is_another_digest() {
    let document = live();
    let digest = document.digest();
    for (table, changed) in common::one_answer_changed(&document) {
        assert_ne!(changed.digest(), digest, "a changed answer of {table:?}");
    }
}
