//! The questions the document does not ask, each answered by the rows it
//! keeps: over its whole finite domain, the rules' own answer equals the one
//! derived from the document's rows. A rule change that makes one of these
//! answers a decision of its own fails here, and the document must ask it
//! again (a table in `src/document.rs`), so that the digest and the diff see
//! it.

use std::collections::HashMap;

use openagents_policy::disclosure::{self, Family, Field, Record};
use openagents_policy::ladder::{self, Access, Subject, Tier, Viewer};
use openagents_policy::target::{Capability, Kind, Lifecycle, Reach, UnavailableReason};
use openagents_policy_decisions::diff::{self, Side};
use openagents_policy_decisions::document::{
    decision_json, owned, readings, record_term, subject_term, subjects, viewer_term, viewers,
    word, Table,
};
use serde_json::{json, Value};

/// The live document, read back as the diff reads it: (table, input) to answer.
struct Rows(HashMap<(Table, String), Value>);

impl Rows {
    fn live() -> Self {
        let document = diff::read(decision_json().as_bytes(), Side::New).unwrap();
        let rows = document.rows.into_iter().map(|row| {
            let key = serde_json::to_string(&row.input).unwrap();
            ((row.table, key), row.answer)
        });
        Self(rows.collect())
    }

    /// The answer of `table` to `input` (its words in document order).
    fn get(&self, table: Table, input: &Value) -> &Value {
        let key = input.to_string();
        self.0
            .get(&(table, key.clone()))
            .unwrap_or_else(|| panic!("the document does not ask {table} {key}"))
    }

    fn rank(&self, tier: &Value) -> u64 {
        self.get(Table::LadderRanks, &json!({ "tier": tier })).as_u64().unwrap()
    }

    fn effective(&self, subject: &str, viewer: &str) -> &Value {
        self.get(Table::LadderEffective, &json!({"subject": subject, "viewer": viewer}))
    }

    /// Every seam row of `seams.seams`, and of `seams.delegation_seams`.
    fn seams(&self) -> impl Iterator<Item = (&str, &Value)> + '_ {
        let seams = self.0.iter().filter(|((table, _), _)| {
            matches!(table, Table::SeamsSeams | Table::SeamsDelegationSeams)
        });
        seams.map(|((_, key), seam)| (key.as_str(), seam))
    }
}

/// `ladder.allows`: the tier the viewer reads the subject at reaches the
/// access's minimum, by rank.
#[test]
fn allows_follows_from_the_effective_tier_and_the_minimums() {
    let rows = Rows::live();
    for (subject, owner) in subjects() {
        for (viewer, account) in viewers() {
            let tier =
                rows.effective(&subject_term(&subject, owner), &viewer_term(&viewer, account));
            let subject = owned(subject, owner, account);
            for access in readings(Access::ALL) {
                let minimum = rows.get(Table::LadderMinimums, &json!({"access": word(access)}));
                let derived = rows.rank(tier) >= rows.rank(minimum);
                let allowed = ladder::allows(&subject, access, &viewer);
                assert_eq!(allowed, derived, "{subject:?} {access:?} {viewer:?}");
            }
        }
    }
}

/// What a viewer clamps a tier to: the lower of its own and the tier, by
/// rank, or the tier when it has none of its own.
#[test]
fn clamp_follows_from_the_viewers_and_the_ranks() {
    let rows = Rows::live();
    for (viewer, account) in viewers() {
        let read =
            rows.get(Table::LadderViewers, &json!({"viewer": viewer_term(&viewer, account)}));
        for &tier in Tier::ALL {
            let derived = match &read["tier"] {
                Value::Null => json!(tier),
                own if rows.rank(own) < rows.rank(&json!(tier)) => own.clone(),
                _ => json!(tier),
            };
            assert_eq!(json!(viewer.clamp(tier)), derived, "{viewer:?} {tier:?}");
        }
    }
}

/// A record reads as `ladder.effective` answers for its link, or for its
/// tier column; only an operator's reading of a record without a link is a
/// row of its own (`ladder.records`).
#[test]
fn records_follow_from_the_effective_tier_but_for_the_operators_own_rows() {
    let rows = Rows::live();
    for (subject, owner) in subjects() {
        for (viewer, account) in viewers() {
            let read = owned(subject, owner, account);
            let linked = match read {
                Subject::Link(link) => Some(Record::Linked(link)),
                Subject::Tier(_) => None,
            };
            for record in linked.into_iter().chain([Record::Unlinked(read)]) {
                let (record_word, viewer_word) =
                    (record_term(&record, owner), viewer_term(&viewer, account));
                let derived = match (&record, viewer) {
                    (Record::Unlinked(_), Viewer::Operator) => rows.get(
                        Table::LadderRecords,
                        &json!({"record": record_word, "viewer": viewer_word}),
                    ),
                    _ => rows.effective(&subject_term(&subject, owner), &viewer_word),
                };
                let tier = disclosure::effective_tier(&record, &viewer);
                assert_eq!(&json!(tier), derived, "{record_word} {viewer_word}");
            }
        }
    }
}

/// A family's source columns are its fields' columns; the fields admitted at
/// a viewer tier are those whose rung's tier that viewer reads at its
/// access's minimum or above.
#[test]
fn the_schedules_columns_and_admissions_follow_from_its_fields() {
    let rows = Rows::live();
    for &family in Family::ALL {
        let fields: Vec<&Field> = family.fields().iter().collect();
        let scheduled: Vec<&Value> = fields
            .iter()
            .map(|field| {
                rows.get(Table::ScheduleFields, &json!({"family": family, "field": field.name}))
            })
            .collect();
        let mut columns: Vec<&str> =
            scheduled.iter().map(|f| f["column"].as_str().unwrap()).collect();
        columns.sort_unstable();
        columns.dedup();
        assert_eq!(family.source_columns(), columns, "{family:?}");
        for tier in readings(Tier::ALL).into_iter().map(Some).chain([None]) {
            let viewer = tier.map_or(Viewer::Nobody, Viewer::Word);
            let admitted: Vec<&str> =
                family.fields_at(&viewer).fields().map(|field| field.name).collect();
            let derived: Vec<&str> = scheduled
                .iter()
                .filter(|field| {
                    let rung = rows.get(Table::Rungs, &json!({"rung": field["tier"]}));
                    let subject = format!("\"{}\"", rung["tier"].as_str().unwrap());
                    let read = rows.effective(&subject, &viewer_term(&viewer, None));
                    let minimum =
                        rows.get(Table::LadderMinimums, &json!({"access": rung["access"]}));
                    rows.rank(read) >= rows.rank(minimum)
                })
                .map(|field| field["field"].as_str().unwrap())
                .collect();
            assert_eq!(admitted, derived, "{family:?} at {tier:?}");
        }
    }
}

/// A kind's custody and runtime class, why a lifecycle offers nothing to a
/// reach, and whether any seam offers a capability: each as every seam of
/// `seams.seams` (and `seams.delegation_seams`) says.
#[test]
fn kinds_reasons_and_offers_follow_from_the_seams() {
    let rows = Rows::live();
    for &kind in Kind::ALL {
        for &lifecycle in Lifecycle::ALL {
            for reach in [Reach::Authorized, Reach::NotAuthorized] {
                let input = json!({"kind": kind, "lifecycle": lifecycle, "reach": reach});
                let seam = rows.get(Table::SeamsSeams, &input);
                assert_eq!(seam["custody"], json!(kind.custody()), "{input}");
                assert_eq!(seam["runtime_class"], json!(kind.runtime_class()), "{input}");
                let reason = UnavailableReason::of(lifecycle, reach);
                assert_eq!(seam["unavailable_reason"], json!(reason), "{input}");
            }
        }
    }
    // Whether some seam offers a capability was computed from these very
    // seams: every capability a seam lists is a word of the vocabulary.
    let words = Capability::words();
    for (input, seam) in rows.seams() {
        for capability in seam["capabilities"].as_array().unwrap() {
            assert!(words.contains(&capability.as_str().unwrap()), "{input}");
        }
    }
}
