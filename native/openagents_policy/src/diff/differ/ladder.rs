//! The ladder's tables: `ladder.ranks`, `ladder.named`, `ladder.minimums`,
//! `ladder.viewers`, and the answers per viewer (`ladder.clamp`,
//! `ladder.effective`, `ladder.allows`, `ladder.records`).

use serde_json::{json, Value};

use super::{matched, matched_readings, opt, Differ};
use crate::diff::class::{account, class_of, presence, Move};
use crate::diff::document::Document;
use crate::diff::words::{reading_word, record_words, tier_was, words_of};
use crate::diff::{Class, Input};
use crate::Reading;

impl<'d> Differ<'d> {
    pub(in crate::diff) fn ladder(&mut self) {
        self.ranks();
        self.named("ladder.named", true);
        self.named("ladder.minimums", false);
        self.viewers();
        self.per_viewer_tiers("ladder.clamp");
        self.per_viewer_tiers("ladder.effective");
        self.allows();
        self.per_viewer_tiers("ladder.records");
    }

    fn ranks(&mut self) {
        let rows = |document: &'d Document| {
            document
                .ladder
                .ranks
                .iter()
                .map(|(tier, rank)| (tier.as_str(), rank))
        };
        for (tier, was, is) in matched(rows(self.old), rows(self.new)) {
            if was == is {
                continue;
            }
            self.push(
                "ladder.ranks",
                Input::of([("tier", json!(tier))]),
                (opt(was), opt(is)),
                Class::Changes,
                format!("`{tier}`'s rank is now {} (was {})", opt(is), opt(was)),
            );
        }
    }

    /// `named` (higher is a gain) or `minimums` (lower is a gain).
    fn named(&mut self, table: &'static str, named: bool) {
        let rows = |document: &'d Document| {
            let rows = if named {
                &document.ladder.named
            } else {
                &document.ladder.minimums
            };
            rows.iter().map(|(word, tier)| (word.clone(), tier))
        };
        let rows = matched_readings(rows(self.old), rows(self.new), |_| Reading::Unrecognized);
        for (word, was, is) in rows {
            if was == is {
                continue;
            }
            let moves = match (was, is) {
                (Some(was), Some(is)) if named => vec![self.tiers.rise(was, is)],
                (Some(was), Some(is)) => vec![self.tiers.fall(was, is)],
                _ => vec![Move::Other],
            };
            let word = reading_word(&word);
            let (input, says) = if named {
                (
                    ("tier_word", json!(word)),
                    format!("the tier word `{word}` now names {}", tier_was(was, is)),
                )
            } else {
                (
                    ("access", json!(word)),
                    format!("`{word}` access now needs {}", tier_was(was, is)),
                )
            };
            self.push(
                table,
                Input::of([input]),
                (opt(was), opt(is)),
                class_of(&moves),
                says,
            );
        }
    }

    fn viewers(&mut self) {
        let rows = |document: &'d Document| {
            document
                .ladder
                .viewers
                .iter()
                .map(|row| (row.0.as_str(), row))
        };
        let value = |row: Option<&(String, Option<String>, bool, Value)>| {
            row.map_or(Value::Null, |(_, tier, admin, account)| {
                json!({"tier": tier, "admin": admin, "account_id": account})
            })
        };
        for (viewer, was, is) in matched(rows(self.old), rows(self.new)) {
            let (before, after) = (value(was), value(is));
            if before == after {
                continue;
            }
            let moves = match (was, is) {
                (Some(was), Some(is)) => vec![
                    self.tiers.own(was.1.as_deref(), is.1.as_deref()),
                    presence(was.2, is.2),
                    account(&was.3, &is.3),
                ],
                _ => vec![Move::Other],
            };
            let who = words_of(viewer);
            let says = format!("the viewer `{who}` is now read as {after} (was {before})");
            self.push(
                "ladder.viewers",
                Input::of([("viewer", json!(who))]),
                (before, after),
                class_of(&moves),
                says,
            );
        }
    }

    /// One row's answers that differ, viewer by viewer: each side's answers
    /// are in its own `viewers` order, and are matched by the viewer.
    fn by_viewer<T: PartialEq>(
        &self,
        was: Option<&'d Vec<T>>,
        is: Option<&'d Vec<T>>,
    ) -> Vec<(&'d str, Option<&'d T>, Option<&'d T>)> {
        let (old, new) = (self.old.viewer_names(), self.new.viewer_names());
        matched(
            old.into_iter().zip(was.into_iter().flatten()),
            new.into_iter().zip(is.into_iter().flatten()),
        )
        .into_iter()
        .filter(|(_, before, after)| before != after)
        .collect()
    }

    /// `clamp`, `effective` and `records`: a tier for each row and viewer;
    /// a higher one is a gain.
    fn per_viewer_tiers(&mut self, table: &'static str) {
        type Rows<'r> = Vec<((bool, &'r str), &'r Vec<String>)>;
        let rows = |document: &'d Document| -> Rows<'d> {
            let ladder = &document.ladder;
            match table {
                "ladder.clamp" => ladder
                    .clamp
                    .iter()
                    .map(|(tier, row)| ((false, tier.as_str()), row))
                    .collect(),
                "ladder.effective" => ladder
                    .effective
                    .iter()
                    .map(|(subject, row)| ((false, subject.as_str()), row))
                    .collect(),
                _ => ladder
                    .records
                    .iter()
                    .map(|(linked, record, row)| ((*linked, record.as_str()), row))
                    .collect(),
            }
        };
        for ((linked, row), was, is) in matched(rows(self.old), rows(self.new)) {
            for (viewer, before, after) in self.by_viewer(was, is) {
                let moves = match (before, after) {
                    (Some(before), Some(after)) => vec![self.tiers.rise(before, after)],
                    _ => vec![Move::Other],
                };
                let who = words_of(viewer);
                let tiers = tier_was(before, after);
                let (input, says) = match table {
                    "ladder.clamp" => (
                        ("tier", json!(row)),
                        format!("`{who}` now clamps `{row}` to {tiers}"),
                    ),
                    "ladder.effective" => {
                        let subject = words_of(row);
                        (
                            ("subject", json!(subject)),
                            format!("`{who}` now reads `{subject}` at {tiers}"),
                        )
                    }
                    _ => {
                        let record = record_words(linked, row);
                        (
                            ("record", json!(record)),
                            format!("`{who}` now reads the record `{record}` at {tiers}"),
                        )
                    }
                };
                self.push(
                    table,
                    Input::of([input, ("viewer", json!(who))]),
                    (opt(before), opt(after)),
                    class_of(&moves),
                    says,
                );
            }
        }
    }

    fn allows(&mut self) {
        let rows = |document: &'d Document| {
            document
                .ladder
                .allows
                .iter()
                .map(|(access, subject, row)| ((access.clone(), subject.as_str()), row))
        };
        let rows = matched_readings(rows(self.old), rows(self.new), |(_, subject)| {
            (Reading::Unrecognized, *subject)
        });
        for ((access, subject), was, is) in rows {
            for (viewer, before, after) in self.by_viewer(was, is) {
                let moves = match (before, after) {
                    (Some(&before), Some(&after)) => vec![presence(before, after)],
                    _ => vec![Move::Other],
                };
                let (access, subject, who) =
                    (reading_word(&access), words_of(subject), words_of(viewer));
                let says = match after {
                    Some(true) => format!("`{who}` may now have `{access}` access to `{subject}`"),
                    Some(false) => {
                        format!("`{who}` may no longer have `{access}` access to `{subject}`")
                    }
                    None => format!("`{who}`'s `{access}` access to `{subject}` is not answered"),
                };
                self.push(
                    "ladder.allows",
                    Input::of([
                        ("access", json!(access)),
                        ("subject", json!(subject)),
                        ("viewer", json!(who)),
                    ]),
                    (opt(before), opt(after)),
                    class_of(&moves),
                    says,
                );
            }
        }
    }
}
