//! The decision diff: every refusal watched refusing, every table watched
//! changing, documents of different versions compared word by word, and the
//! document the package carries held to this build's.
//!
//! The classes on real rule changes of the core (a feature per change) are
//! in `tests/diff_probes.rs`.

use openagents_policy::diff::{diff, Class, DocumentRefusal, Side};
use openagents_policy::disclosure::NoLink;
use openagents_policy::fingerprint::{decision_json, Tables, FORMAT};
use openagents_policy::ladder::Tier;
use openagents_policy::target::{
    Custody, DelegationLifecycle, DelegationSeam, Kind, Lifecycle, Reach, Seam,
};
use serde_json::{json, Value};

#[macro_use]
mod common;
use common::summary;

fn live() -> String {
    decision_json().unwrap()
}

/// `live()` as JSON, edited by `edit`, written back compact.
fn edited(edit: impl FnOnce(&mut Value)) -> String {
    let mut document: Value = serde_json::from_str(&live()).unwrap();
    edit(&mut document);
    document.to_string()
}

without_probes! {
    #[test]
    fn the_packaged_document_is_this_builds_own() {
        // The command that writes the file the package carries, from the
        // repository's root.
        const REGENERATE: &str = "cargo run -q --locked -p openagents_policy --example decisions \
                                  -- document > priv/decisions.json";
        let packaged = common::packaged();
        let changes = diff(&packaged, live()).map_or_else(|e| e.to_string(), |c| c.to_markdown());
        assert!(
            packaged == live(),
            "priv/decisions.json (the decision document the package carries) is not this build's: \
             \n{changes}\nIf the rules changed on purpose, regenerate it from the repository's \
             root:\n    {REGENERATE}"
        );
        assert_eq!(
            openagents_policy::fingerprint::sha256_hex(packaged.as_bytes()),
            openagents_policy::fingerprint::decision_digest().unwrap()
        );
    }
}

#[test]
fn the_same_document_gives_no_change_in_either_rendering() {
    let changes = diff(live(), live()).unwrap();
    assert!(changes.is_empty() && !changes.widens());
    assert_eq!(changes.to_json().unwrap(), r#"{"changes":[]}"#);
    assert_eq!(
        changes.to_markdown(),
        "### Decision changes\n\nno decision changes\n"
    );
}

fn refusal(old: &[u8], new: &[u8]) -> DocumentRefusal {
    match diff(old, new) {
        Ok(changes) => panic!("read as {} changes, not refused", changes.changes().len()),
        Err(refusal) => refusal,
    }
}

fn not_a_document(refusal: &DocumentRefusal) -> (Side, &str) {
    match refusal {
        DocumentRefusal::NotADocument { side, why } => (*side, why.as_str()),
        other @ DocumentRefusal::UnknownFormat { .. } => panic!("{other}"),
    }
}

/// Each refusal, on either side: never "no changes".
#[test]
fn what_is_not_a_decision_document_is_refused_as_such() {
    let live = live();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"not json".to_vec(), "not JSON"),
        (b"\xff\xfe".to_vec(), "not JSON"),
        (b"".to_vec(), "not JSON"),
        (b"[1, 2]".to_vec(), "a JSON array, not an object"),
        (b"null".to_vec(), "a JSON null, not an object"),
        (
            b"{}".to_vec(),
            "an object with no \"format\" field and not the decision tables",
        ),
        (
            edited(|d| {
                d.as_object_mut().unwrap().remove("links");
            })
            .into_bytes(),
            "missing field `links`",
        ),
        (
            edited(|d| d["extra"] = json!([])).into_bytes(),
            "unknown field `extra`",
        ),
        (
            edited(|d| d["schedule"][0]["fields"][0]["tier"] = json!(3)).into_bytes(),
            "not as format 1 writes it",
        ),
        (
            edited(|d| {
                d["ladder"]["effective"][2][1].as_array_mut().unwrap().pop();
            })
            .into_bytes(),
            "holds 30 answers for 31 viewers",
        ),
    ];
    for (bad, why) in cases {
        let old = refusal(&bad, live.as_bytes());
        assert_eq!(not_a_document(&old).0, Side::Old);
        assert!(not_a_document(&old).1.contains(why), "{old}");
        let new = refusal(live.as_bytes(), &bad);
        assert_eq!(new.side(), Side::New);
        assert!(new
            .to_string()
            .starts_with("the new document is not a decision document: "));
    }
}

#[test]
fn a_document_of_another_format_is_refused_as_such() {
    let cases = [
        (edited(|d| d["format"] = json!(2)), Some("2")),
        (edited(|d| d["format"] = json!("1")), Some("\"1\"")),
        (edited(|d| d["format"] = json!(null)), Some("null")),
        // A document written before the format was numbered: the tables,
        // and no `format`.
        (
            edited(|d| {
                d.as_object_mut().unwrap().remove("format");
            }),
            None,
        ),
    ];
    for (document, found) in cases {
        for (old, new, side) in [
            (&document, &live(), Side::Old),
            (&live(), &document, Side::New),
        ] {
            let refused = refusal(old.as_bytes(), new.as_bytes());
            assert_eq!(
                refused,
                DocumentRefusal::UnknownFormat {
                    side,
                    found: found.map(str::to_owned)
                }
            );
            assert!(refused
                .to_string()
                .ends_with(&format!("this library reads format {FORMAT} only")));
        }
    }
    // The old document is read first: both bad, the old one is named.
    assert_eq!(refusal(b"{}", b"[]").side(), Side::Old);
}

/// One changed answer in each of the document's 25 tables: the diff finds
/// it, in that table. (Rows merely swapped are the same answers: the diff
/// reads by word, never by position.)
#[test]
#[allow(clippy::too_many_lines)] // one line per table, as rustfmt writes it
fn one_changed_answer_in_any_table_is_a_change_in_that_table() {
    type Perturbation = (&'static str, fn(&mut Tables));
    let tables = Tables::compute();
    let perturbations: Vec<Perturbation> = vec![
        ("vocabularies", |t| t.vocabularies[0].words[0] = "other"),
        ("schedule.fields", |t| {
            t.schedule[0].fields[0] = t.schedule[0].fields[1];
        }),
        ("schedule.never", |t| {
            t.schedule[1].never.pop();
        }),
        ("schedule.source_columns", |t| {
            t.schedule[2].source_columns.pop();
        }),
        ("schedule.fields_at", |t| {
            t.schedule[3].fields_at[1].1.pop();
        }),
        ("relationships", |t| t.relationships[1].1.tier = Tier::Glass),
        ("rungs", |t| t.rungs[0].1 = Tier::Dark),
        ("ladder.ranks", |t| t.ladder.ranks[1].1 = 9),
        ("ladder.named", |t| t.ladder.named[4].1 = Tier::Pulse),
        ("ladder.minimums", |t| t.ladder.minimums[0].1 = Tier::Dark),
        ("ladder.viewers", |t| t.ladder.viewers[0].2 = false),
        ("ladder.clamp", |t| t.ladder.clamp[3].1[0] = Tier::Dark),
        ("ladder.effective", |t| {
            t.ladder.effective[0].1[0] = Tier::Dark;
        }),
        ("ladder.allows", |t| t.ladder.allows[0].2[0] ^= true),
        ("ladder.records", |t| t.ladder.records[0].2[0] = Tier::Dark),
        ("lifecycles.box_states", |t| {
            t.lifecycles.box_states[0].1 = Lifecycle::Cold;
        }),
        ("lifecycles.run_states", |t| {
            t.lifecycles.run_states[0].1 = DelegationLifecycle::Cancelled;
        }),
        ("lifecycles.job_statuses", |t| {
            t.lifecycles.job_statuses[0].1 = DelegationLifecycle::Succeeded;
        }),
        ("lifecycles.machines", |t| {
            t.lifecycles.machines[0].3 = Lifecycle::Failed;
        }),
        ("seams.kinds", |t| {
            t.seams.kinds[0].1 = Custody::CustomerPremises;
        }),
        ("seams.unavailable", |t| t.seams.unavailable[0].2 = None),
        ("seams.seams", |t| {
            t.seams.seams[0].3 = Seam::new(Kind::Box, Lifecycle::Active, Reach::Authorized);
        }),
        ("seams.delegation_seams", |t| {
            t.seams.delegation_seams[0] = DelegationSeam::new(DelegationLifecycle::Succeeded);
        }),
        ("seams.offered", |t| t.seams.offered[0].1 ^= true),
        ("links", |t| t.links[0].3 = Err(NoLink::AgentPrincipal)),
    ];
    assert_eq!(perturbations.len(), 25);
    for (table, perturb) in perturbations {
        let mut perturbed = tables.clone();
        perturb(&mut perturbed);
        let changes = diff(tables.to_json().unwrap(), perturbed.to_json().unwrap()).unwrap();
        assert!(
            !changes.is_empty(),
            "a changed answer of {table} went unseen"
        );
        assert!(
            changes.changes().iter().any(|change| change.table == table),
            "the change of {table} was seen as {:?}",
            summary(changes.changes())
        );
    }
}

/// A new Box state on one side only, and a Box state gone from the other:
/// each is a vocabulary change, and on the side that lacks the word it is
/// answered as that side answers any word it does not know.
#[test]
fn documents_of_different_versions_compare_word_by_word() {
    let grown = edited(|d| {
        let box_states = d["vocabularies"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|row| row["vocabulary"] == "box_state")
            .unwrap();
        box_states["words"]
            .as_array_mut()
            .unwrap()
            .push(json!("hibernating"));
        let rows = d["lifecycles"]["box_states"].as_array_mut().unwrap();
        rows.insert(
            rows.len() - 1,
            json!([{"known": "hibernating"}, "stopping"]),
        );
    });
    let changes = diff(live(), &grown).unwrap();
    assert_eq!(
        summary(changes.changes()),
        [
            (
                "vocabularies",
                r#"{"vocabulary":"box_state","word":"hibernating"}"#.to_owned(),
                Class::Changes
            ),
            (
                "lifecycles.box_states",
                r#"{"box_state":"hibernating"}"#.to_owned(),
                Class::Changes
            ),
            (
                "capabilities.box_states",
                r#"{"box_state":"hibernating","reach":"authorized"}"#.to_owned(),
                Class::Changes
            ),
            (
                "capabilities.box_states",
                r#"{"box_state":"hibernating","reach":"not_authorized"}"#.to_owned(),
                Class::Changes
            ),
        ]
    );
    let lifecycle = &changes.changes()[1];
    assert_eq!(
        (&lifecycle.old, &lifecycle.new),
        (&json!("failed"), &json!("stopping"))
    );
    assert_eq!(
        lifecycle.says,
        "a Box in `hibernating` now reads `stopping` (was `failed`)"
    );
    assert_eq!(
        changes.changes()[2].says,
        "a caller with reach on a Box in `hibernating` is now refused as `stopping` (was `failed`)"
    );

    // The other way round: the word is gone, and reads as any other word.
    let back = diff(&grown, live()).unwrap();
    assert_eq!(back.changes().len(), 4);
    assert_eq!(back.changes()[0].old, json!(true));
    assert_eq!(back.changes()[0].new, json!(false));
}

/// A family on one side only: its fields are gains, its never list neither
/// a gain nor a loss (its records were not served at all before).
#[test]
fn a_family_on_one_side_only_widens_by_its_fields() {
    let without_trace = edited(|d| {
        let schedule = d["schedule"].as_array_mut().unwrap();
        schedule.retain(|family| family["family"] != "trace");
    });
    let changes = diff(&without_trace, live()).unwrap();
    let classes = |table: &str| -> Vec<Class> {
        changes
            .changes()
            .iter()
            .filter(|change| change.table == table)
            .map(|change| change.class)
            .collect()
    };
    assert_eq!(classes("schedule.fields"), [Class::Widens; 6]);
    assert_eq!(classes("schedule.never"), [Class::Changes; 3]);
    assert_eq!(classes("schedule.source_columns"), [Class::Widens; 5]);
    // pulse: 4 fields, ledger and glass: 6, and a viewer with no tier: 6.
    assert_eq!(classes("schedule.fields_at"), [Class::Widens; 22]);
    assert!(changes.to_markdown().contains(
        "- strangers and anonymous readers (`pulse`) now see `trace.step_count` (`schedule.fields_at`)"
    ));
}

/// A gain is never hidden behind a loss: a seam that grants one capability
/// and takes another widens.
#[test]
fn a_change_in_which_someone_gains_widens_whatever_else_is_lost() {
    let swapped = edited(|d| {
        let seams = d["seams"]["seams"].as_array_mut().unwrap();
        let row = seams
            .iter_mut()
            .find(|row| row[0] == "box" && row[1] == "active" && row[2] == "authorized")
            .unwrap();
        row[3]["capabilities"] = json!(["cancel"]);
    });
    let changes = diff(live(), swapped).unwrap();
    assert_eq!(changes.changes().len(), 1);
    let change = &changes.changes()[0];
    assert_eq!(change.class, Class::Widens);
    assert_eq!(
        change.says,
        "a caller with reach on a `box` that is `active` may now `cancel` and may no longer `start`"
    );
    assert_eq!(changes.widened().count(), 1);
    assert!(changes.widens());
}

#[test]
fn the_json_has_the_five_keys_and_the_markdown_groups_widening_first() {
    let moved = edited(|d| {
        let attempt = &mut d["schedule"][0];
        for field in attempt["fields"].as_array_mut().unwrap() {
            match field["field"].as_str() {
                Some("terminal_commit") => field["tier"] = json!("pulse"),
                Some("branch") => field["tier"] = json!("glass"),
                _ => {}
            }
        }
    });
    let changes = diff(live(), moved).unwrap();
    let json: Value = serde_json::from_str(&changes.to_json().unwrap()).unwrap();
    let first = json["changes"][0].as_object().unwrap();
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        ["class", "input", "new", "old", "table"]
    );
    assert_eq!(json["changes"][0]["class"], "narrows");
    assert_eq!(json["changes"][1]["class"], "widens");
    let markdown = changes.to_markdown();
    let widens = markdown.find("#### Widens").unwrap();
    let narrows = markdown.find("#### Narrows").unwrap();
    assert!(widens < narrows, "{markdown}");
    assert!(markdown.contains("Answers changed: 2 (widening 1, narrowing 1, neither 0)."));
}
