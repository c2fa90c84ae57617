//! The comparison, table by table: [`Differ`] walks the two documents and
//! pushes one [`Change`] for each answer that differs. Here: the walk's state,
//! the matching of rows by key ([`matched`], [`matched_readings`],
//! [`membership`]) that every table's comparison starts from, and the
//! `vocabularies` table. The tables themselves, by group:
//!
//! * `disclosure`: the schedule (`schedule.*`), `relationships`, `rungs`,
//!   `links`.
//! * `ladder`: `ladder.*`.
//! * `targets`: `lifecycles.*`, `seams.*`, and the `capabilities.*` that follow
//!   a substrate word whose lifecycle changed.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

use serde::Serialize;
use serde_json::{json, Value};

use super::class::Tiers;
use super::document::Document;
use super::words::readers;
use super::{Change, Class, Input};

mod disclosure;
mod ladder;
mod targets;

/// Every key of `new` (in its order), then every key only `old` has (in
/// its), with each side's answer.
fn matched<'d, K: Eq + Hash + Clone, V>(
    old: impl IntoIterator<Item = (K, &'d V)>,
    new: impl IntoIterator<Item = (K, &'d V)>,
) -> Vec<(K, Option<&'d V>, Option<&'d V>)> {
    let old: Vec<(K, &V)> = old.into_iter().collect();
    let new: Vec<(K, &V)> = new.into_iter().collect();
    let old_at: HashMap<&K, &V> = old.iter().map(|(key, value)| (key, *value)).collect();
    let new_keys: HashSet<&K> = new.iter().map(|(key, _)| key).collect();
    let mut rows: Vec<_> = new
        .iter()
        .map(|(key, value)| (key.clone(), old_at.get(key).copied(), Some(*value)))
        .collect();
    rows.extend(
        old.iter()
            .filter(|(key, _)| !new_keys.contains(key))
            .map(|(key, value)| (key.clone(), Some(*value), None)),
    );
    rows
}

/// [`matched`] over rows keyed by a word reading: a word one side lacks is
/// answered, on that side, as the side answers a word it does not know.
fn matched_readings<'d, K: Eq + Hash + Clone, V>(
    old: impl IntoIterator<Item = (K, &'d V)>,
    new: impl IntoIterator<Item = (K, &'d V)>,
    unrecognized: impl Fn(&K) -> K,
) -> Vec<(K, Option<&'d V>, Option<&'d V>)> {
    let old: Vec<(K, &V)> = old.into_iter().collect();
    let new: Vec<(K, &V)> = new.into_iter().collect();
    let lookup = |rows: &[(K, &'d V)], key: &K| -> Option<&'d V> {
        let find = |wanted: &K| rows.iter().find(|(k, _)| k == wanted).map(|(_, v)| *v);
        find(key).or_else(|| find(&unrecognized(key)))
    };
    matched(old.iter().cloned(), new.iter().cloned())
        .into_iter()
        .map(|(key, _, _)| {
            let (before, after) = (lookup(&old, &key), lookup(&new, &key));
            (key, before, after)
        })
        .collect()
}

/// The words of one list only, each with whether `after` lists it: every
/// word only `after` has (in its order), then every word only `before` has
/// (in its).
fn membership<'w>(before: &'w [String], after: &'w [String]) -> Vec<(&'w str, bool)> {
    let words = |list: &'w [String]| list.iter().map(|word| (word.as_str(), &()));
    matched(words(before), words(after))
        .into_iter()
        .filter(|(_, was, is)| was.is_some() != is.is_some())
        .map(|(word, _, is)| (word, is.is_some()))
        .collect()
}

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn opt<T: Serialize>(value: Option<&T>) -> Value {
    value.map_or(Value::Null, to_value)
}

pub(super) struct Differ<'d> {
    old: &'d Document,
    new: &'d Document,
    tiers: Tiers,
    pub(super) changes: Vec<Change>,
}

impl<'d> Differ<'d> {
    pub(super) fn new(old: &'d Document, new: &'d Document) -> Self {
        let ranks = |document: &Document| document.ladder.ranks.iter().cloned().collect();
        Self {
            old,
            new,
            tiers: Tiers {
                old: ranks(old),
                new: ranks(new),
            },
            changes: Vec::new(),
        }
    }

    fn push(
        &mut self,
        table: &'static str,
        input: Input,
        (old, new): (Value, Value),
        class: Class,
        says: String,
    ) {
        self.changes.push(Change {
            table,
            input,
            old,
            new,
            class,
            says,
        });
    }

    /// The relationships to name readers by: the new document's.
    fn readers(&self, tier: Option<&str>) -> String {
        readers(&self.new.relationships, tier)
    }

    pub(super) fn vocabularies(&mut self) {
        let words = |document: &'d Document| {
            document
                .vocabularies
                .iter()
                .map(|row| (row.vocabulary.as_str(), &row.words))
        };
        for (vocabulary, before, after) in matched(words(self.old), words(self.new)) {
            let empty = Vec::new();
            let (before, after) = (before.unwrap_or(&empty), after.unwrap_or(&empty));
            for (word, listed) in membership(before, after) {
                let says = if listed {
                    format!("the `{vocabulary}` vocabulary gained the word `{word}`")
                } else {
                    format!("the `{vocabulary}` vocabulary lost the word `{word}`")
                };
                self.push(
                    "vocabularies",
                    Input::of([("vocabulary", json!(vocabulary)), ("word", json!(word))]),
                    (json!(!listed), json!(listed)),
                    Class::Changes,
                    says,
                );
            }
            self.order("vocabularies", ("vocabulary", vocabulary), before, after);
        }
    }

    /// One entry when the words both lists share are in another order.
    fn order(
        &mut self,
        table: &'static str,
        (name, what): (&'static str, &str),
        before: &[String],
        after: &[String],
    ) {
        let shared = |from: &[String], other: &[String]| -> Vec<String> {
            from.iter().filter(|w| other.contains(w)).cloned().collect()
        };
        if shared(before, after) != shared(after, before) {
            self.push(
                table,
                Input::of([(name, json!(what)), ("order", json!(true))]),
                (json!(before), json!(after)),
                Class::Changes,
                format!("the words of `{what}` ({table}) are in another order"),
            );
        }
    }
}
