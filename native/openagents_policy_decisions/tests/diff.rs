//! The decision diff: every refusal watched refusing, every limit watched
//! holding, every table watched changing, documents of different versions
//! compared word by word, and what it writes. Each fixture is an edit of
//! this build's document, its rows found by table and words, so a rule
//! changed in the core leaves these tests as they are; the wording of the
//! rule changes a maintainer makes most is in `tests/diff_probes.rs`.

use openagents_policy::target::Capability;
use openagents_policy_decisions::diff::{code, diff, Class, DocumentRefusal, Limit, Side};
use openagents_policy_decisions::document::{Document, Table, ANY_OTHER_WORD, FORMAT};
use serde_json::{json, Value};

mod common;
use common::{answer, asks, edit, json, live, row, summary};

fn edited(change: impl FnOnce(&mut Document)) -> String {
    let mut document = live();
    change(&mut document);
    json(&document)
}

fn refusal(old: &[u8], new: &[u8]) -> DocumentRefusal {
    match diff(old, new) {
        Ok(changes) => panic!("read as {} changes, not refused", changes.changes().len()),
        Err(refusal) => refusal,
    }
}

#[test]
fn the_same_document_gives_no_change_in_either_rendering() {
    let changes = diff(json(&live()), json(&live())).unwrap();
    assert!(changes.is_empty() && !changes.widens());
    assert_eq!(changes.to_json(), r#"{"changes":[]}"#);
    assert_eq!(changes.to_markdown(), "### Decision changes\n\nno decision changes\n");
}

/// Each refusal, on either side: never "no changes".
#[test]
fn what_is_not_a_decision_document_is_refused_as_such() {
    let live = json(&live());
    let repeated = edited(|d| d.rows.push(d.rows[0].clone()));
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"not json".to_vec(), "not JSON"),
        (b"\xff\xfe".to_vec(), "not JSON"),
        (b"".to_vec(), "not JSON"),
        (b"[1, 2]".to_vec(), "a JSON array, not an object"),
        (b"null".to_vec(), "a JSON null, not an object"),
        (b"7".to_vec(), "a JSON scalar, not an object"),
        (b"{}".to_vec(), "an object with no \"format\" field and no rows"),
        (format!(r#"{{"format":{FORMAT}}}"#).into_bytes(), "missing field `rows`"),
        (
            live.replacen(r#""rows":["#, r#""extra":1,"rows":["#, 1).into_bytes(),
            "unknown field `extra`",
        ),
        (
            live.replacen(r#"["vocabularies","#, r#"["elsewhere","#, 1).into_bytes(),
            "no table of format",
        ),
        (
            live.replacen(r#"["vocabularies",{"#, r#"["vocabularies",7,{"#, 1).into_bytes(),
            "not as format",
        ),
        (
            live.replacen(r#"{"vocabulary":"kind"}"#, r#"["kind"]"#, 1).into_bytes(),
            "a row of vocabularies asks no question: its input is not an object",
        ),
        (repeated.into_bytes(), "two rows of vocabularies ask"),
    ];
    for (bad, why) in cases {
        let old = refusal(&bad, live.as_bytes());
        assert_eq!(old.side(), Some(Side::Old));
        assert!(old.to_string().contains(why), "{old}");
        let new = refusal(live.as_bytes(), &bad);
        assert_eq!(new.side(), Some(Side::New));
        assert!(
            new.to_string().starts_with("the new document is not a decision document: "),
            "{new}"
        );
    }
}

#[test]
fn a_document_of_another_format_is_refused_as_such() {
    let live = json(&live());
    let format = format!(r#"{{"format":{FORMAT},"#);
    let cases = [
        (live.replacen(&format, r#"{"format":1,"#, 1), Some("1")),
        (live.replacen(&format, r#"{"format":"2","#, 1), Some("\"2\"")),
        (live.replacen(&format, r#"{"format":null,"#, 1), Some("null")),
        (live.replacen(&format, "{", 1), None),
        // The first format: one record per table, no rows.
        (r#"{"format":1,"vocabularies":[],"schedule":[]}"#.to_owned(), Some("1")),
    ];
    for (document, found) in cases {
        for (old, new, side) in [(&document, &live, Side::Old), (&live, &document, Side::New)] {
            let refused = refusal(old.as_bytes(), new.as_bytes());
            assert_eq!(
                refused,
                DocumentRefusal::UnknownFormat { side, found: found.map(str::to_owned) }
            );
            assert!(refused
                .to_string()
                .ends_with(&format!("this library reads format {FORMAT} only")));
        }
    }
    // The old document is read first: both bad, the old one is named.
    assert_eq!(refusal(b"{}", b"[]").side(), Some(Side::Old));
}

/// Each limit of a document is refused by name, whatever the rest of the
/// documents, on either side.
#[test]
fn each_limit_is_refused_by_name() {
    let live = json(&live());
    let too_large = |limit| move |side| DocumentRefusal::TooLarge { side, limit };
    let padded = format!("{live}{}", " ".repeat(Limit::Bytes.max() - live.len() + 1));
    let mut many = common::live();
    let rows = (0..=Limit::Rows.max())
        .map(|n| row("ladder.ranks", &[("tier", json!(n.to_string()))], json!(0)));
    many.rows = rows.collect();
    let long = edited(|d| d.rows[0].answer = json!(["w".repeat(Limit::Word.max() + 1)]));
    let long_key = edited(|d| {
        d.rows[0].input.insert("k".repeat(Limit::Word.max() + 1), json!(1));
    });
    let wordy = edited(|d| {
        let words = (0..Limit::Words.max()).map(|n| (format!("w{n}"), json!(n)));
        d.rows[0].input.extend(words);
    });
    let listed = edited(|d| d.rows[0].answer = json!(vec![0; Limit::Items.max() + 1]));
    let keyed = edited(|d| {
        let entries = (0..=Limit::Items.max()).map(|n| (format!("k{n}"), json!(n)));
        d.rows[0].answer = Value::Object(entries.collect());
    });
    for (document, limit) in [
        (padded, Limit::Bytes),
        (json(&many), Limit::Rows),
        (long, Limit::Word),
        (long_key, Limit::Word),
        (wordy, Limit::Words),
        (listed, Limit::Items),
        (keyed, Limit::Items),
    ] {
        let refused = refusal(document.as_bytes(), live.as_bytes());
        assert_eq!(refused, too_large(limit)(Some(Side::Old)));
        assert!(
            refused.to_string().contains(&format!("over the limit of {}", limit.max())),
            "{refused}"
        );
        assert_eq!(
            refusal(live.as_bytes(), document.as_bytes()),
            too_large(limit)(Some(Side::New))
        );
    }
}

/// One changed answer in any table is a change in that table.
#[test]
fn one_changed_answer_in_any_table_is_a_change_in_that_table() {
    let document = live();
    for (table, moved) in common::one_answer_changed(&document) {
        let changes = diff(json(&document), json(&moved)).unwrap();
        assert!(
            changes.changes().iter().any(|change| change.table == table),
            "a changed answer of {table:?} was seen as {:?}",
            summary(changes.changes())
        );
    }
}

/// A new Box state on one side only: a vocabulary change, and on the side
/// that lacks it the word is answered as that side answers any other word.
#[test]
fn documents_of_different_versions_compare_word_by_word() {
    let base = live();
    let other = answer(&base, "lifecycles.box_states", &[("box_state", json!(ANY_OTHER_WORD))]);
    let lifecycle = if other == json!("stopping") { "destroyed" } else { "stopping" };
    let mut grown = base.clone();
    edit(&mut grown, "vocabularies", &[("vocabulary", json!("box_state"))], |words| {
        words.as_array_mut().unwrap().push(json!("hibernating"));
    });
    grown.rows.push(row(
        "lifecycles.box_states",
        &[("box_state", json!("hibernating"))],
        json!(lifecycle),
    ));
    for reach in ["authorized", "not_authorized"] {
        let seam = answer(
            &base,
            "seams.seams",
            &[("kind", json!("box")), ("lifecycle", json!(lifecycle)), ("reach", json!(reach))],
        );
        grown.rows.push(row(
            "capabilities.box_states",
            &[("box_state", json!("hibernating")), ("reach", json!(reach))],
            seam,
        ));
    }
    let changes = diff(json(&base), json(&grown)).unwrap();
    let tables: Vec<_> = changes.changes().iter().map(|c| c.table.as_str()).collect();
    assert_eq!(tables[..2], ["vocabularies", "lifecycles.box_states"]);
    let moved = &changes.changes()[1];
    assert_eq!((&moved.old, &moved.new), (&other, &json!(lifecycle)));
    assert_eq!(
        moved.says,
        format!(
            "a Box in `hibernating` now reads `{lifecycle}` (was {})",
            code(other.as_str().unwrap())
        )
    );
    assert!(tables[2..].iter().all(|table| *table == "capabilities.box_states"));
    // The other way round: the word is gone, and reads as any other word.
    let back = diff(json(&grown), json(&base)).unwrap();
    assert_eq!(back.changes().len(), changes.changes().len());
    assert_eq!((&back.changes()[0].old, &back.changes()[0].new), (&json!(true), &json!(false)));
}

/// A family on one side only: its fields are gains, its never list neither
/// a gain nor a loss (its records were not served at all before).
#[test]
fn a_family_on_one_side_only_widens_by_its_fields() {
    let family = [("family", json!("trace"))];
    let without = edited(|d| {
        d.rows.retain(|row| {
            !(row.table.as_str().starts_with("schedule.") && asks(row, row.table.as_str(), &family))
        });
        edit(d, "vocabularies", &[("vocabulary", json!("family"))], |words| {
            words.as_array_mut().unwrap().retain(|word| *word != family[0].1);
        });
    });
    let changes = diff(&without, json(&live())).unwrap();
    let rows = |table: &str| {
        live().rows.into_iter().filter(|row| asks(row, table, &family)).collect::<Vec<_>>()
    };
    let words = |table: &str| {
        rows(table).iter().map(|row| row.answer.as_array().unwrap().len()).sum::<usize>()
    };
    let classes = |table: &str| {
        changes
            .changes()
            .iter()
            .filter(|c| c.table.as_str() == table)
            .map(|c| c.class)
            .collect::<Vec<_>>()
    };
    assert_eq!(classes("schedule.fields"), vec![Class::Widens; rows("schedule.fields").len()]);
    // Only the new document asks them, and they do not widen: unclassed;
    // the new family's reasons decide nothing.
    assert_eq!(classes("schedule.never"), vec![Class::Unclassed; words("schedule.never")]);
    assert_eq!(classes("schedule.reasons"), vec![Class::Words; rows("schedule.reasons").len()]);
    assert_eq!(classes("vocabularies"), [Class::Changes]);
    let all = rows("schedule.fields").len() + words("schedule.never") + 1;
    assert_eq!(changes.changes().len(), all + rows("schedule.reasons").len());
}

/// A gain is never hidden behind a loss: a seam that grants one capability
/// and takes another widens.
#[test]
fn a_change_in_which_someone_gains_widens_whatever_else_is_lost() {
    let base = live();
    let at = base
        .rows
        .iter()
        .position(|r| r.table == Table::SeamsSeams && r.answer["capabilities"] != json!([]));
    let mut swapped = base.clone();
    let seam = &mut swapped.rows[at.unwrap()].answer;
    let others: Vec<&str> = Capability::words()
        .into_iter()
        .filter(|c| !seam["capabilities"].as_array().unwrap().contains(&json!(c)))
        .collect();
    seam["capabilities"] = json!(others);
    let changes = diff(json(&base), json(&swapped)).unwrap();
    assert_eq!(changes.changes().len(), 1);
    let change = &changes.changes()[0];
    assert_eq!(change.class, Class::Widens);
    assert!(
        change.says.contains(" may now `") && change.says.contains(" and may no longer `"),
        "{}",
        change.says
    );
    assert!(changes.widens());
}

/// The JSON has its five keys, in document order; the Markdown puts what
/// widens first.
#[test]
fn the_json_has_the_five_keys_and_the_markdown_groups_widening_first() {
    let base = live();
    let reading = |tier: &str| {
        base.rows
            .iter()
            .position(|r| r.table == Table::LadderEffective && r.answer == json!(tier))
            .unwrap()
    };
    let (taken, granted) = (reading("glass"), reading("dark"));
    let mut flipped = base.clone();
    flipped.rows[taken].answer = json!("dark");
    flipped.rows[granted].answer = json!("glass");
    let changes = diff(json(&base), json(&flipped)).unwrap();
    let written: Value = serde_json::from_str(&changes.to_json()).unwrap();
    let first = written["changes"][0].as_object().unwrap();
    assert_eq!(first.keys().collect::<Vec<_>>(), ["table", "input", "old", "new", "class"]);
    let classes: Vec<&Value> = (0..2).map(|n| &written["changes"][n]["class"]).collect();
    let expected = if taken < granted { ["narrows", "widens"] } else { ["widens", "narrows"] };
    assert_eq!(classes, expected);
    let markdown = changes.to_markdown();
    assert!(
        markdown.find("#### Widens").unwrap() < markdown.find("#### Narrows").unwrap(),
        "{markdown}"
    );
    assert!(markdown.contains("Answers changed: 2 (widening 1, narrowing 1, neither 0)."));
}

/// A list whose shared words are in another order: one change, naming it.
#[test]
fn a_vocabulary_in_another_order_is_one_change() {
    let swapped = edited(|d| common::free_words(d).1.swap(0, 1));
    let changes = diff(json(&live()), &swapped).unwrap();
    assert_eq!(changes.changes().len(), 1);
    let change = &changes.changes()[0];
    assert_eq!((change.class, change.input.get("order")), (Class::Changes, Some(&json!(true))));
    assert!(change.says.ends_with(" vocabulary are in another order"), "{}", change.says);
}

/// A word from a document can neither end its code span, nor start a
/// heading, nor pass HTML through.
#[test]
fn every_document_word_is_escaped_in_the_markdown() {
    assert_eq!(code("plain"), "`plain`");
    assert_eq!(code("a`b"), "``a`b``");
    assert_eq!(code("`x``"), "``` `x`` ```");
    assert_eq!(code("a\n## b"), "`a\\n## b`");
    assert_eq!(code("a\\n"), "`a\\\\n`");
    let forged = "x` <b>raw</b>\n\n## Narrowing: forged\n- `y";
    let mut grown = live();
    let (vocabulary, words) = common::free_words(&mut grown);
    words.push(json!(forged));
    let markdown = diff(json(&live()), json(&grown)).unwrap().to_markdown();
    let lines: Vec<&str> = markdown.lines().collect();
    assert_eq!(lines.len(), 7, "{markdown}");
    let gained =
        format!("- the `{vocabulary}` vocabulary gained the word ``x` <b>raw</b>\\n\\n## N");
    assert!(lines[6].starts_with(&gained), "{markdown}");
    assert_eq!(lines.iter().filter(|line| line.starts_with('#')).count(), 2, "{markdown}");
}
