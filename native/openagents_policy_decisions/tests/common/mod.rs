//! What the decision document's tests share: the documents (this build's,
//! the package's, the last release's), edits of their rows, and a diff's
//! changes summed up. Rows are found by their table and input words, never
//! by position, so an edit holds whatever else the rules say.
// Each test file uses some of it.
#![allow(dead_code)]

use openagents_policy_decisions::diff::{self, Change, Class, Side};
use openagents_policy_decisions::document::{Document, Row, Table};
use serde_json::Value;

/// The decision document the package carries, at the repository's root.
pub const PACKAGED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../priv/decisions.json");

/// The last release's decision document.
pub const LAST_RELEASE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../last-release/decisions.json");

/// A file's text; empty when it is missing, for the test that says so.
#[must_use]
pub fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// This build's document.
#[must_use]
pub fn live() -> Document {
    Document::compute()
}

/// The last release's document, read back.
#[must_use]
pub fn last_release() -> Document {
    diff::read(read(LAST_RELEASE).as_bytes(), Side::Old).expect("last-release/decisions.json reads")
}

/// Whether `row` is of `table` and asks (at least) `words`.
#[must_use]
pub fn asks(row: &Row, table: &str, words: &[(&str, Value)]) -> bool {
    row.table.as_str() == table && words.iter().all(|(key, word)| row.input.get(*key) == Some(word))
}

/// Edits every row of `table` that asks `words`; panics when there is none.
pub fn edit(
    document: &mut Document,
    table: &str,
    words: &[(&str, Value)],
    mut edit: impl FnMut(&mut Value),
) {
    let mut found = false;
    for row in document.rows.iter_mut().filter(|row| asks(row, table, words)) {
        edit(&mut row.answer);
        found = true;
    }
    assert!(found, "no row of {table} asks {words:?}");
}

/// The answer of the first row of `table` that asks `words`.
#[must_use]
pub fn answer(document: &Document, table: &str, words: &[(&str, Value)]) -> Value {
    let row = document.rows.iter().find(|row| asks(row, table, words));
    row.unwrap_or_else(|| panic!("no row of {table} asks {words:?}")).answer.clone()
}

/// A row of `table` asking `words`, in that order.
#[must_use]
pub fn row(table: &str, words: &[(&str, Value)], answer: Value) -> Row {
    let input = words.iter().map(|(key, word)| ((*key).to_owned(), word.clone()));
    Row {
        table: serde_json::from_value(Value::from(table)).unwrap(),
        input: input.collect(),
        answer,
    }
}

/// `document` as JSON.
#[must_use]
pub fn json(document: &Document) -> String {
    document.to_json()
}

/// (table, input as JSON, class) of each change, in order.
#[must_use]
pub fn summary(changes: &[Change]) -> Vec<(&'static str, String, Class)> {
    let summed = changes.iter().map(|change| {
        (change.table.as_str(), serde_json::to_string(&change.input).unwrap(), change.class)
    });
    summed.collect()
}

/// Whether `row` lists a vocabulary some table draws its input words from
/// (`Table::drawn`): a word added to it asks questions the document must
/// answer too.
#[must_use]
pub fn drawn_from(row: &Row) -> bool {
    let mut drawn = Table::ALL.iter().flat_map(|table| table.drawn());
    drawn.any(|drawn| row.input.get("vocabulary") == Some(&serde_json::json!(drawn.vocabulary)))
}

/// The first vocabulary no table draws from, and its words: what a test
/// may add a word to and keep the document complete.
pub fn free_words(document: &mut Document) -> (String, &mut Vec<Value>) {
    let row =
        document.rows.iter_mut().find(|row| row.table == Table::Vocabularies && !drawn_from(row));
    let row = row.expect("a vocabulary no table draws from");
    (row.input["vocabulary"].as_str().unwrap().to_owned(), row.answer.as_array_mut().unwrap())
}

/// For each table, `document` with the first answer of that table (of the
/// vocabularies, the first no table draws from) [`perturbed`].
pub fn one_answer_changed(document: &Document) -> impl Iterator<Item = (Table, Document)> + '_ {
    Table::ALL.iter().map(|&table| {
        let mut changed = document.clone();
        let row = changed.rows.iter_mut().find(|row| row.table == table && !drawn_from(row));
        let row = row.unwrap();
        row.answer = perturbed(&row.answer);
        (table, changed)
    })
}

/// Every leaf of an answer made another value: for a seam, its lifecycle
/// and its capabilities alike, so what follows from a substrate word moves.
#[must_use]
pub fn perturbed(answer: &Value) -> Value {
    match answer {
        Value::Bool(flag) => Value::Bool(!flag),
        Value::Number(number) => Value::from(number.as_u64().unwrap_or(0) + 100),
        Value::Array(items) => {
            items.iter().map(perturbed).chain([Value::from("perturbed")]).collect()
        }
        Value::Object(map) => {
            map.iter().map(|(key, value)| (key.clone(), perturbed(value))).collect()
        }
        _ => Value::from("perturbed"),
    }
}
