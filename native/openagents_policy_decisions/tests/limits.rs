//! The diff bounded by what it reads and what it writes: hostile documents
//! within the byte limit are refused early, by the limit they pass, or
//! diffed within the output budget; and what a document's words may hold
//! (nothing, bidirectional and zero-width characters) cannot bend the
//! Markdown a reviewer reads.

use openagents_policy_decisions::diff::{code, diff, DocumentRefusal, Limit, Side};
use openagents_policy_decisions::document::Document;
use regex_syntax::hir::{Class, HirKind, Literal};
use serde_json::json;

mod common;
use common::{json, live};

fn edited(change: impl FnOnce(&mut Document)) -> String {
    let mut document = live();
    change(&mut document);
    json(&document)
}

fn too_large(side: Option<Side>, limit: Limit) -> DocumentRefusal {
    DocumentRefusal::TooLarge { side, limit }
}

/// A row asking hundreds of words more than any question has: refused as
/// the document is read, before the join (the diff once made one change per item of a
/// list answer, each carrying every word of the input).
#[test]
fn a_row_with_hundreds_of_input_words_is_refused() {
    let live = json(&live());
    let wordy = edited(|d| {
        let words = (0..500).map(|n| (format!("extra_{n}"), json!("w".repeat(100))));
        d.rows[0].input.extend(words);
        d.rows[0].answer = json!((0..200).map(|n| format!("word{n}")).collect::<Vec<_>>());
    });
    assert!(wordy.len() < Limit::Bytes.max());
    assert_eq!(diff(&live, &wordy).unwrap_err(), too_large(Some(Side::New), Limit::Words));
    assert_eq!(diff(&wordy, &live).unwrap_err(), too_large(Some(Side::Old), Limit::Words));
}

/// A list answer of tens of thousands of items, in a document of the byte
/// limit: refused, naming the limit.
#[test]
fn list_answers_of_tens_of_thousands_of_items_are_refused() {
    let live = json(&live());
    for items in [Limit::Items.max() + 1, 20_000, 60_000] {
        let grown = edited(|d| {
            d.rows[0].answer = json!((0..items).map(|n| format!("w{n}")).collect::<Vec<_>>());
        });
        assert!(grown.len() <= Limit::Bytes.max(), "{items}: {}", grown.len());
        assert_eq!(diff(&live, &grown).unwrap_err(), too_large(Some(Side::New), Limit::Items));
    }
    // Within the limit, each item a change, every one counted.
    let words = common::free_words(&mut common::live()).1.len();
    let within = edited(|d| {
        let more = (words..Limit::Items.max()).map(|n| json!(format!("w{n}")));
        common::free_words(d).1.extend(more);
    });
    let changes = diff(&live, &within).unwrap();
    assert_eq!(changes.changes().len(), Limit::Items.max() - words);
}

/// Thousands of relationships all reading at one tier: a field moved to it
/// names them all once, and a diff of thousands of such moves is refused by
/// what it would write, as soon as it would, never "no changes".
#[test]
fn many_readers_are_named_within_the_output_budget() {
    let mut base = live();
    let readers = (0..5000).map(|n| {
        common::row(
            "relationships",
            &[("relationship", json!(format!("reader_{n}")))],
            json!({"account_id": 1, "admin": false, "tier": "pulse"}),
        )
    });
    base.rows.extend(readers);
    let ledger = |row: &openagents_policy_decisions::document::Row| {
        row.table.as_str() == "schedule.fields" && row.answer["tier"] == "ledger"
    };
    let mut one = base.clone();
    let at = one.rows.iter().position(ledger).unwrap();
    one.rows[at].answer["tier"] = json!("pulse");
    let changes = diff(json(&base), json(&one)).unwrap();
    let says = &changes.changes()[0].says;
    assert!(says.contains("`reader_0` readers, "), "{}", &says[..200]);
    assert!(
        says.ends_with(" and `reader_4999` readers now see it"),
        "{}",
        &says[says.len() - 200..]
    );
    assert!(changes.to_markdown().len() < Limit::Output.max());

    let mut all = base.clone();
    for row in all.rows.iter_mut().filter(|row| ledger(row)) {
        row.answer["tier"] = json!("pulse");
    }
    match diff(json(&base), json(&all)) {
        Err(refused) => assert_eq!(refused, too_large(None, Limit::Output)),
        Ok(changes) => panic!("{} changes, not refused", changes.changes().len()),
    }
}

/// Every answer different, in two documents at the read limits: refused by
/// the output budget, naming it, before the rest is said.
#[test]
fn a_diff_past_the_output_budget_is_refused_naming_it() {
    // This build's document, and 4,000 tier words more, each ranked `rank`.
    let document = |rank: u64| {
        let mut document = live();
        let word = "w".repeat(100);
        let tier = |n: usize| json!(format!("{word}{n}"));
        let rows =
            (0..4000).map(|n| common::row("ladder.ranks", &[("tier", tier(n))], json!(rank)));
        document.rows.extend(rows);
        json(&document)
    };
    let (low, high) = (document(0), document(1));
    assert!(low.len() <= Limit::Bytes.max());
    let refused = diff(&low, &high).unwrap_err();
    assert_eq!(refused, too_large(None, Limit::Output));
    assert!(
        refused.to_string().starts_with("the diff is over the limit of 1048576 bytes of output"),
        "{refused}"
    );
    // Alike, they are read whole and compared: no change.
    assert!(diff(&low, &low).unwrap().is_empty());
}

/// The empty word is no code span (two backticks alone would open one that
/// a later backtick closes): written `(empty)`, and every span of the line
/// stays whole.
#[test]
fn the_empty_word_keeps_the_markdown_whole() {
    assert_eq!(code(""), "(empty)");
    assert_eq!(code(" "), "`   `");
    let mut vocabulary = String::new();
    let grown = edited(|d| {
        let (name, words) = common::free_words(d);
        words.push(json!(""));
        vocabulary = name;
    });
    let markdown = diff(json(&live()), &grown).unwrap().to_markdown();
    let line = markdown.lines().last().unwrap();
    let gained =
        format!("- the `{vocabulary}` vocabulary gained the word (empty) (`vocabularies`)");
    assert_eq!(line, gained);
    assert_eq!(line.matches('`').count() % 2, 0, "{line}");
}

/// Bidirectional controls (U+202E and the rest) and zero-width characters
/// (U+200B and the rest) are written escaped, so a word cannot reorder or
/// hide what a reviewer reads; so is a backslash, so an escape cannot be
/// forged.
#[test]
fn bidi_and_zero_width_characters_are_escaped() {
    for (word, written) in [
        ("a\u{202E}b", "`a\\u{202e}b`"),
        ("\u{2066}x\u{2069}", "`\\u{2066}x\\u{2069}`"),
        ("a\u{200B}b", "`a\\u{200b}b`"),
        ("\u{200D}\u{FEFF}\u{2060}", "`\\u{200d}\\u{feff}\\u{2060}`"),
        ("\u{200E}\u{200F}\u{061C}", "`\\u{200e}\\u{200f}\\u{61c}`"),
        ("a\u{2028}b", "`a\\u{2028}b`"),
        ("a\\u{202e}b", "`a\\\\u{202e}b`"),
    ] {
        assert_eq!(code(word), written);
    }
    let forged = "admin\u{202E}txt.exe\u{200B}";
    let grown = edited(|d| common::free_words(d).1.push(json!(forged)));
    let markdown = diff(json(&live()), &grown).unwrap().to_markdown();
    assert!(markdown.contains("`admin\\u{202e}txt.exe\\u{200b}`"), "{markdown}");
    assert!(!markdown.contains('\u{202E}') && !markdown.contains('\u{200B}'));
}

/// A question that names a word twice is refused: its first word would be
/// lost, and with it what the row answers.
#[test]
fn a_repeated_key_in_a_rows_input_is_refused() {
    let live = json(&live());
    let repeated = live.replacen(
        r#"["vocabularies",{"vocabulary":"kind"}"#,
        r#"["vocabularies",{"vocabulary":"kind","vocabulary":"custody"}"#,
        1,
    );
    assert_ne!(repeated, live);
    let refused = diff(&live, &repeated).unwrap_err();
    let DocumentRefusal::NotADocument { side, why } = &refused else {
        panic!("{refused:?}");
    };
    assert_eq!(*side, Side::New);
    assert!(why.contains(r#"an object names "vocabulary" twice"#), "{why}");
    // And an answer's object that names a key twice.
    let twice = live.replacen(r#""tier":"ledger","#, r#""tier":"ledger","tier":"pulse","#, 1);
    assert!(diff(&live, &twice)
        .unwrap_err()
        .to_string()
        .contains(r#"an object names "tier" twice"#));
}

/// Every code point, by Unicode's own tables (read here one category at a
/// time): a control, a format character, a separator but the space,
/// private use, unassigned, a default ignorable, or a symbol drawn empty
/// never reaches the Markdown raw; whatever reaches it escaped is written
/// in printable ASCII; every other character is written as itself.
#[test]
fn every_character_that_renders_blank_or_invisible_is_escaped() {
    // Each table as ranges (a table of one character reads as a literal).
    let ranges = |name: &str| -> Vec<(char, char)> {
        match regex_syntax::parse(&format!(r"\p{{{name}}}")).unwrap().into_kind() {
            HirKind::Class(Class::Unicode(set)) => {
                set.ranges().iter().map(|r| (r.start(), r.end())).collect()
            }
            HirKind::Literal(Literal(bytes)) => {
                let c = std::str::from_utf8(&bytes).unwrap().chars().next().unwrap();
                vec![(c, c)]
            }
            other => panic!("{other:?}"),
        }
    };
    let tables =
        ["Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cn", "Default_Ignorable_Code_Point"].map(ranges);
    let blank = |c: char| tables.iter().flatten().any(|&(start, end)| start <= c && c <= end);
    let named = ['\u{00A0}', '\u{2800}', '\u{3000}'].into_iter().chain('\u{2000}'..='\u{200A}');
    let mut escaped = 0;
    for c in (0..=0x0010_FFFF).filter_map(char::from_u32) {
        let written = code(&format!("a{c}"));
        let raw = written.contains(c);
        if raw {
            assert!(c == ' ' || !blank(c), "U+{:04X} is written raw", u32::from(c));
        } else {
            escaped += 1;
            assert!(
                written.chars().all(|w| w.is_ascii_graphic()),
                "U+{:04X}: {written}",
                u32::from(c)
            );
        }
    }
    for c in named.chain(['\u{1D159}']) {
        assert!(!code(&c.to_string()).contains(c), "U+{:04X}", u32::from(c));
    }
    assert!(escaped > 900_000, "{escaped}");
    // A nonspacing mark is itself on a letter, escaped with nothing to sit on.
    assert_eq!(code("e\u{301}"), "`e\u{301}`");
    assert_eq!(code("\u{301}e"), "`\\u{301}e`");
    assert_eq!(code("a \u{301}"), "`a \\u{301}`");
}
