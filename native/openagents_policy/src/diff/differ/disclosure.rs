//! The disclosure schedule's tables: `schedule.fields`, `schedule.never`,
//! `schedule.source_columns` and `schedule.fields_at` (family by family),
//! `relationships`, `rungs`, and `links` (the link an attempt gets).

use serde_json::{json, Value};

use super::{matched, membership, opt, Differ};
use crate::diff::class::{account, class_of, presence, Move};
use crate::diff::document::{Document, FamilyRow};
use crate::diff::{Class, Input};
use crate::Reading;

impl<'d> Differ<'d> {
    pub(in crate::diff) fn schedule(&mut self) {
        let families = |document: &'d Document| {
            document
                .schedule
                .iter()
                .map(|row| (row.family.as_str(), row))
        };
        for (family, before, after) in matched(families(self.old), families(self.new)) {
            self.fields(family, before, after);
            self.never(family, before, after);
            self.source_columns(family, before, after);
            self.fields_at(family, before, after);
        }
    }

    fn rung_tier(document: &Document, rung: &str) -> Option<String> {
        document
            .rungs
            .iter()
            .find(|(name, ..)| name == rung)
            .map(|(_, tier, _)| tier.clone())
    }

    fn fields(
        &mut self,
        family: &str,
        before: Option<&'d FamilyRow>,
        after: Option<&'d FamilyRow>,
    ) {
        let fields = |row: Option<&'d FamilyRow>| {
            row.into_iter()
                .flat_map(|row| row.fields.iter().map(|field| (field.field.as_str(), field)))
        };
        for (name, was, is) in matched(fields(before), fields(after)) {
            if was == is {
                continue;
            }
            let (moves, says) = match (was, is) {
                (None, Some(is)) => (
                    vec![Move::Gain],
                    format!(
                        "`{family}.{name}` is newly scheduled, from `{}` (column `{}`)",
                        is.tier, is.column
                    ),
                ),
                (Some(was), None) => (
                    vec![Move::Loss],
                    format!(
                        "`{family}.{name}` is no longer scheduled (was from `{}`)",
                        was.tier
                    ),
                ),
                (Some(was), Some(is)) => {
                    let mut moves = vec![Move::Other];
                    let mut says = Vec::new();
                    if was.tier != is.tier {
                        let before = Self::rung_tier(self.old, &was.tier);
                        let after = Self::rung_tier(self.new, &is.tier);
                        if let (Some(before), Some(after)) = (before, after) {
                            moves.push(self.tiers.fall(&before, &after));
                        }
                        says.push(format!(
                            "`{family}.{name}` is now disclosed from `{}` (was `{}`)",
                            is.tier, was.tier
                        ));
                    }
                    if was.column != is.column {
                        says.push(format!(
                            "`{family}.{name}` is now read from column `{}` (was `{}`)",
                            is.column, was.column
                        ));
                    }
                    (moves, says.join("; "))
                }
                (None, None) => continue,
            };
            self.push(
                "schedule.fields",
                Input::of([("family", json!(family)), ("field", json!(name))]),
                (opt(was), opt(is)),
                class_of(&moves),
                says,
            );
        }
    }

    fn never(&mut self, family: &str, before: Option<&'d FamilyRow>, after: Option<&'d FamilyRow>) {
        let both = before.is_some() && after.is_some();
        let never = |row: Option<&'d FamilyRow>| row.map_or(&[][..], |row| row.never.as_slice());
        for (column, listed) in membership(never(before), never(after)) {
            // A family on one side only has nothing to lose or gain by its
            // never list: its records were not served at all on the other.
            let class = match (both, listed) {
                (false, _) => Class::Changes,
                (true, true) => Class::Narrows,
                (true, false) => Class::Widens,
            };
            let says = if listed {
                format!("`{family}.{column}` is now on the never list")
            } else {
                format!("`{family}.{column}` left the never list")
            };
            self.push(
                "schedule.never",
                Input::of([("family", json!(family)), ("column", json!(column))]),
                (json!(!listed), json!(listed)),
                class,
                says,
            );
        }
        if let (Some(before), Some(after)) = (before, after) {
            self.order(
                "schedule.never",
                ("family", family),
                &before.never,
                &after.never,
            );
        }
    }

    fn source_columns(
        &mut self,
        family: &str,
        before: Option<&'d FamilyRow>,
        after: Option<&'d FamilyRow>,
    ) {
        let columns =
            |row: Option<&'d FamilyRow>| row.map_or(&[][..], |row| row.source_columns.as_slice());
        for (column, read) in membership(columns(before), columns(after)) {
            let says = if read {
                format!("the schedule now reads column `{family}.{column}`")
            } else {
                format!("the schedule no longer reads column `{family}.{column}`")
            };
            self.push(
                "schedule.source_columns",
                Input::of([("family", json!(family)), ("column", json!(column))]),
                (json!(!read), json!(read)),
                class_of(&[presence(!read, read)]),
                says,
            );
        }
    }

    fn fields_at(
        &mut self,
        family: &str,
        before: Option<&'d FamilyRow>,
        after: Option<&'d FamilyRow>,
    ) {
        let rows = |row: Option<&'d FamilyRow>| {
            row.into_iter().flat_map(|row| {
                row.fields_at
                    .iter()
                    .map(|(tier, fields)| (tier.clone(), fields))
            })
        };
        // Every field either side schedules or admits, in the new order.
        let mut names: Vec<&str> = Vec::new();
        for row in [after, before].into_iter().flatten() {
            let admitted = row.fields_at.iter().flat_map(|(_, fields)| fields);
            for name in row.fields.iter().map(|f| &f.field).chain(admitted) {
                if !names.contains(&name.as_str()) {
                    names.push(name);
                }
            }
        }
        for (tier, was, is) in matched(rows(before), rows(after)) {
            let empty = Vec::new();
            let (was, is) = (was.unwrap_or(&empty), is.unwrap_or(&empty));
            for &name in &names {
                let old_admits = was.iter().any(|f| f == name);
                let new_admits = is.iter().any(|f| f == name);
                if old_admits == new_admits {
                    continue;
                }
                let who = self.readers(tier.as_deref());
                let says = if new_admits {
                    format!("{who} now see `{family}.{name}`")
                } else {
                    format!("{who} no longer see `{family}.{name}`")
                };
                self.push(
                    "schedule.fields_at",
                    Input::of([
                        ("family", json!(family)),
                        ("viewer_tier", json!(tier)),
                        ("field", json!(name)),
                    ]),
                    (json!(old_admits), json!(new_admits)),
                    class_of(&[presence(old_admits, new_admits)]),
                    says,
                );
            }
        }
    }

    pub(in crate::diff) fn relationships(&mut self) {
        let rows = |document: &'d Document| {
            document
                .relationships
                .iter()
                .map(|(relationship, descriptor)| (relationship.as_str(), descriptor))
        };
        for (relationship, was, is) in matched(rows(self.old), rows(self.new)) {
            if was == is {
                continue;
            }
            let moves = match (was, is) {
                (Some(was), Some(is)) => vec![
                    self.tiers.rise(&was.tier, &is.tier),
                    presence(was.admin, is.admin),
                    account(&was.account_id, &is.account_id),
                ],
                _ => vec![Move::Other],
            };
            let says = match (was, is) {
                (Some(was), Some(is)) if was.tier != is.tier => format!(
                    "a `{relationship}` reader now reads at `{}` (was `{}`)",
                    is.tier, was.tier
                ),
                _ => format!(
                    "a `{relationship}` reader is now described as {} (was {})",
                    opt(is),
                    opt(was)
                ),
            };
            self.push(
                "relationships",
                Input::of([("relationship", json!(relationship))]),
                (opt(was), opt(is)),
                class_of(&moves),
                says,
            );
        }
    }

    pub(in crate::diff) fn rungs(&mut self) {
        let rows = |document: &'d Document| document.rungs.iter().map(|row| (row.0.as_str(), row));
        let minimum = |document: &Document, access: &str| {
            document
                .ladder
                .minimums
                .iter()
                .find(|(word, _)| matches!(word, Reading::Known(known) if known == access))
                .map(|(_, tier)| tier.clone())
        };
        for (rung, was, is) in matched(rows(self.old), rows(self.new)) {
            if was == is {
                continue;
            }
            let moves = match (was, is) {
                (Some((_, was_tier, was_access)), Some((_, is_tier, is_access))) => {
                    let mut moves = vec![Move::Other, self.tiers.fall(was_tier, is_tier)];
                    if let (Some(before), Some(after)) =
                        (minimum(self.old, was_access), minimum(self.new, is_access))
                    {
                        moves.push(self.tiers.fall(&before, &after));
                    }
                    moves
                }
                _ => vec![Move::Other],
            };
            let pair = |row: Option<&(String, String, String)>| {
                row.map_or(
                    Value::Null,
                    |(_, tier, access)| json!({"tier": tier, "access": access}),
                )
            };
            let (before, after) = (pair(was), pair(is));
            let says = format!("the `{rung}` rung is now {after} (was {before})");
            self.push(
                "rungs",
                Input::of([("rung", json!(rung))]),
                (before, after),
                class_of(&moves),
                says,
            );
        }
    }

    pub(in crate::diff) fn links(&mut self) {
        let rows = |document: &'d Document| {
            document
                .links
                .iter()
                .map(|(repository, kind, id, outcome)| ((*repository, kind.clone(), *id), outcome))
        };
        for ((repository, kind, id), was, is) in matched(rows(self.old), rows(self.new)) {
            if was == is {
                continue;
            }
            let link = |outcome: Option<&'d Value>| outcome.and_then(|o| o.get("Ok"));
            let moves = match (link(was), link(is)) {
                (None, Some(_)) if was.is_some() => vec![Move::Gain],
                (Some(_), None) if is.is_some() => vec![Move::Loss],
                (Some(before), Some(after)) => {
                    let tier =
                        |link: &Value| link.get("tier").and_then(Value::as_str).map(str::to_owned);
                    match (tier(before), tier(after)) {
                        (Some(before), Some(after)) if before != after => {
                            vec![Move::Other, self.tiers.rise(&before, &after)]
                        }
                        _ => vec![Move::Other],
                    }
                }
                _ => vec![Move::Other],
            };
            let outcome = |outcome: Option<&Value>| match outcome {
                None => "no answer".to_owned(),
                Some(value) => match (value.get("Ok"), value.get("Err")) {
                    (Some(link), _) => format!(
                        "a link at `{}`",
                        link.get("tier").and_then(Value::as_str).unwrap_or("?")
                    ),
                    (_, Some(Value::String(why))) => format!("no link (`{why}`)"),
                    _ => value.to_string(),
                },
            };
            let principal = kind.as_deref().map_or_else(
                || "no principal type".to_owned(),
                |kind| format!("principal type `{kind}`"),
            );
            let says = format!(
                "an attempt in a repository {} by {principal}, {}, now gets {} (was {})",
                if repository {
                    "with an id"
                } else {
                    "with no id"
                },
                if id { "with an id" } else { "with no id" },
                outcome(is),
                outcome(was)
            );
            self.push(
                "links",
                Input::of([
                    ("repository_id", json!(repository)),
                    ("principal_type", json!(kind)),
                    ("principal_id", json!(id)),
                ]),
                (opt(was), opt(is)),
                class_of(&moves),
                says,
            );
        }
    }
}
