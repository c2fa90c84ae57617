//! The targets' tables: the lifecycle of each substrate word
//! (`lifecycles.*`), with what a caller may do for a word whose lifecycle
//! changed (`capabilities.*`), and the seams (`seams.kinds`,
//! `seams.unavailable`, `seams.seams`, `seams.delegation_seams`,
//! `seams.offered`).

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{json, Value};

use super::{matched, matched_readings, opt, to_value, Differ};
use crate::diff::class::{capability_moves, class_of, presence, Move};
use crate::diff::document::{DelegationSeamRow, Document, Offers, SeamRow, SubstrateRows, Word};
use crate::diff::words::{capability_words, or_none, reach_words, reading_word, tier_was};
use crate::diff::{Class, Input};
use crate::Reading;

impl<'d> Differ<'d> {
    pub(in crate::diff) fn lifecycles(&mut self) {
        let rows = |rows: &'d [(Word, String)]| rows.iter().map(|(word, to)| (word.clone(), to));
        let tables: [(&'static str, SubstrateRows); 3] = [
            ("lifecycles.box_states", |d| &d.lifecycles.box_states),
            ("lifecycles.run_states", |d| &d.lifecycles.run_states),
            ("lifecycles.job_statuses", |d| &d.lifecycles.job_statuses),
        ];
        for (table, of) in tables {
            let (old, new) = (of(self.old), of(self.new));
            let matched = matched_readings(rows(old), rows(new), |_| Reading::Unrecognized);
            for (word, was, is) in matched {
                if was == is {
                    continue;
                }
                let (name, what, follows) = match table {
                    "lifecycles.box_states" => ("box_state", "a Box", "capabilities.box_states"),
                    "lifecycles.run_states" => {
                        ("run_state", "a Box run", "capabilities.run_states")
                    }
                    _ => ("job_status", "a work job", "capabilities.job_statuses"),
                };
                let word = reading_word(&word);
                self.push(
                    table,
                    Input::of([(name, json!(word))]),
                    (opt(was), opt(is)),
                    Class::Changes,
                    format!("{what} in `{word}` now reads {}", tier_was(was, is)),
                );
                let input = [(name, json!(word))];
                if table == "lifecycles.box_states" {
                    self.target_follows(
                        follows,
                        &input,
                        "box",
                        (was, is),
                        &format!("a Box in `{word}`"),
                    );
                } else {
                    self.delegation_follows(
                        follows,
                        &input,
                        (was, is),
                        &format!("{what} in `{word}`"),
                    );
                }
            }
        }
        self.machines();
    }

    fn machines(&mut self) {
        let rows = |document: &'d Document| {
            document
                .lifecycles
                .machines
                .iter()
                .map(|(status, revoked, online, to)| ((status.clone(), *revoked, *online), to))
        };
        let matched = matched_readings(rows(self.old), rows(self.new), |(_, revoked, online)| {
            (Reading::Unrecognized, *revoked, *online)
        });
        for ((status, revoked, online), was, is) in matched {
            if was == is {
                continue;
            }
            let status = reading_word(&status);
            let input = [
                ("status", json!(status)),
                ("revoked", json!(revoked)),
                ("online", json!(online)),
            ];
            let what = format!(
                "a Computer with status `{status}`, {}, {}",
                if revoked { "revoked" } else { "not revoked" },
                if online { "online" } else { "offline" }
            );
            self.push(
                "lifecycles.machines",
                Input::of(input.clone()),
                (opt(was), opt(is)),
                Class::Changes,
                format!("{what} now reads {}", tier_was(was, is)),
            );
            self.target_follows(
                "capabilities.machines",
                &input,
                "computer",
                (was, is),
                &what,
            );
        }
    }

    fn seam<'s>(
        document: &'s Document,
        kind: &str,
        lifecycle: &str,
        reach: &str,
    ) -> Option<&'s SeamRow> {
        document
            .seams
            .seams
            .iter()
            .find(|(k, l, r, _)| k == kind && l == lifecycle && r == reach)
            .map(|(.., seam)| seam)
    }

    fn reaches(&self) -> Vec<&'d str> {
        let mut reaches: Vec<&str> = Vec::new();
        for (.., reach, _) in self.new.seams.seams.iter().chain(&self.old.seams.seams) {
            if !reaches.contains(&reach.as_str()) {
                reaches.push(reach);
            }
        }
        reaches
    }

    /// What a caller may do to a target whose substrate word now reads
    /// another lifecycle: the old seam of the old lifecycle against the new
    /// seam of the new one, for each reach.
    fn target_follows(
        &mut self,
        table: &'static str,
        input: &[(&'static str, Value)],
        kind: &str,
        (was, is): (Option<&String>, Option<&String>),
        what: &str,
    ) {
        for reach in self.reaches() {
            let before = was.and_then(|lifecycle| Self::seam(self.old, kind, lifecycle, reach));
            let after = is.and_then(|lifecycle| Self::seam(self.new, kind, lifecycle, reach));
            if before.map(Offers::offer) == after.map(Offers::offer) {
                continue;
            }
            let mut input = input.to_vec();
            input.push(("reach", json!(reach)));
            let caller = format!("a caller {} on {what}", reach_words(reach));
            self.offer_moved(table, Input(input), (before, after), &caller, "");
        }
    }

    fn delegation_seam<'s>(
        document: &'s Document,
        lifecycle: &str,
    ) -> Option<&'s DelegationSeamRow> {
        document
            .seams
            .delegation_seams
            .iter()
            .find(|seam| seam.lifecycle == lifecycle)
    }

    /// As [`Self::target_follows`], for a delegation's substrate word.
    fn delegation_follows(
        &mut self,
        table: &'static str,
        input: &[(&'static str, Value)],
        (was, is): (Option<&String>, Option<&String>),
        what: &str,
    ) {
        let before = was.and_then(|lifecycle| Self::delegation_seam(self.old, lifecycle));
        let after = is.and_then(|lifecycle| Self::delegation_seam(self.new, lifecycle));
        if before.map(Offers::offer) != after.map(Offers::offer) {
            let caller = format!("a caller on {what}");
            self.offer_moved(table, Input(input.to_vec()), (before, after), &caller, "");
        }
    }

    /// One change in what a caller may do (or in the row that says it):
    /// `caller` names the caller and the target ("a caller with reach on a
    /// Box in `idle`"), `note` what else the row now says.
    fn offer_moved<T: Offers + Serialize>(
        &mut self,
        table: &'static str,
        input: Input,
        (before, after): (Option<&T>, Option<&T>),
        caller: &str,
        note: &str,
    ) {
        let moves = capability_moves(
            before.map(|row| row.offer().0),
            after.map(|row| row.offer().0),
        );
        let offers = capability_words(before.map(Offers::offer), after.map(Offers::offer));
        self.push(
            table,
            input,
            (opt(before), opt(after)),
            class_of(&moves),
            format!("{caller} {offers}{note}"),
        );
    }

    pub(in crate::diff) fn seams(&mut self) {
        self.kinds();
        self.unavailable();
        self.target_seams();
        self.delegation_seams();
        self.offered();
    }

    fn kinds(&mut self) {
        let rows =
            |document: &'d Document| document.seams.kinds.iter().map(|row| (row.0.as_str(), row));
        for (kind, was, is) in matched(rows(self.old), rows(self.new)) {
            if was == is {
                continue;
            }
            let value = |row: Option<&(String, String, Option<String>)>| {
                row.map_or(
                    Value::Null,
                    |(_, custody, class)| json!({"custody": custody, "runtime_class": class}),
                )
            };
            let (before, after) = (value(was), value(is));
            let says = format!("a `{kind}` is now {after} (was {before})");
            self.push(
                "seams.kinds",
                Input::of([("kind", json!(kind))]),
                (before, after),
                Class::Changes,
                says,
            );
        }
    }

    fn unavailable(&mut self) {
        let rows = |document: &'d Document| {
            document
                .seams
                .unavailable
                .iter()
                .map(|(lifecycle, reach, reason)| ((lifecycle.as_str(), reach.as_str()), reason))
        };
        for ((lifecycle, reach), was, is) in matched(rows(self.old), rows(self.new)) {
            if was == is {
                continue;
            }
            // No reason is `start` offered: losing the reason is the gain.
            let moves = match (was, is) {
                (Some(was), Some(is)) => vec![presence(was.is_none(), is.is_none())],
                _ => vec![Move::Other],
            };
            let value = |reason: Option<&Option<String>>| {
                reason.map_or(Value::Null, |reason| json!({"unavailable_reason": reason}))
            };
            let who = reach_words(reach);
            let says = match (was.map(Option::as_ref), is.map(Option::as_ref)) {
                (None, _) | (_, None) => format!(
                    "a `{lifecycle}` target, for a caller {who}, is answered by one document \
                     only: {} (was {})",
                    value(is),
                    value(was)
                ),
                (Some(Some(was)), Some(None)) => format!(
                    "a `{lifecycle}` target now offers `start` to a caller {who} (it was \
                     refused as `{was}`)"
                ),
                (Some(None), Some(Some(is))) => format!(
                    "a `{lifecycle}` target no longer offers `start` to a caller {who} (it is \
                     refused as `{is}`)"
                ),
                (Some(was), Some(is)) => format!(
                    "a `{lifecycle}` target, for a caller {who}, is now refused as {} (was {})",
                    or_none(is),
                    or_none(was)
                ),
            };
            self.push(
                "seams.unavailable",
                Input::of([("lifecycle", json!(lifecycle)), ("reach", json!(reach))]),
                (value(was), value(is)),
                class_of(&moves),
                says,
            );
        }
    }

    fn target_seams(&mut self) {
        let rows = |document: &'d Document| {
            document
                .seams
                .seams
                .iter()
                .map(|(kind, lifecycle, reach, seam)| {
                    ((kind.as_str(), lifecycle.as_str(), reach.as_str()), seam)
                })
        };
        for ((kind, lifecycle, reach), was, is) in matched(rows(self.old), rows(self.new)) {
            if was == is {
                continue;
            }
            let mut note = String::new();
            if let (Some(was), Some(is)) = (was, is) {
                if (&was.custody, &was.runtime_class, &was.lifecycle)
                    != (&is.custody, &is.runtime_class, &is.lifecycle)
                {
                    let _ = write!(note, " (the seam now reads {})", to_value(is));
                }
            }
            let caller = format!(
                "a caller {} on a `{kind}` that is `{lifecycle}`",
                reach_words(reach)
            );
            let input = Input::of([
                ("kind", json!(kind)),
                ("lifecycle", json!(lifecycle)),
                ("reach", json!(reach)),
            ]);
            self.offer_moved("seams.seams", input, (was, is), &caller, &note);
        }
    }

    fn delegation_seams(&mut self) {
        let rows = |document: &'d Document| {
            document
                .seams
                .delegation_seams
                .iter()
                .map(|seam| (seam.lifecycle.as_str(), seam))
        };
        for (lifecycle, was, is) in matched(rows(self.old), rows(self.new)) {
            if was == is {
                continue;
            }
            let caller = format!("a caller on a `{lifecycle}` delegation");
            let input = Input::of([("lifecycle", json!(lifecycle))]);
            self.offer_moved("seams.delegation_seams", input, (was, is), &caller, "");
        }
    }

    fn offered(&mut self) {
        let rows = |document: &'d Document| {
            document
                .seams
                .offered
                .iter()
                .map(|(capability, offered)| (capability.as_str(), offered))
        };
        for (capability, was, is) in matched(rows(self.old), rows(self.new)) {
            if was == is {
                continue;
            }
            let moves = match (was, is) {
                (Some(&was), Some(&is)) => vec![presence(was, is)],
                _ => vec![Move::Other],
            };
            let says = if is == Some(&true) {
                format!("some seam now offers `{capability}`")
            } else {
                format!("no seam offers `{capability}` any more")
            };
            self.push(
                "seams.offered",
                Input::of([("capability", json!(capability))]),
                (opt(was), opt(is)),
                class_of(&moves),
                says,
            );
        }
    }
}
