//! What changes between two decision documents, and for whom.
//!
//! [`diff`] joins two documents ([`crate::fingerprint::Document`]: a node's
//! live one, a package's, the last release's) on each row's table and
//! input, and lists every answer that differs as a [`Change`] with a
//! [`Class`]. A question one side lacks is answered, for a table whose input
//! is a substrate or tier word, by that side's `<any other word>` row: what
//! a caller passing the word would get. A document this module cannot read,
//! or past a [`Limit`], is refused, typed, and never read as "no changes".
//!
//! ```
//! use openagents_policy::diff::{diff, Class};
//! use openagents_policy::fingerprint::decision_json;
//!
//! let live = decision_json()?;
//! assert!(diff(&live, &live)?.is_empty());
//! let ledger = r#"{"column":"terminal_commit","field":"terminal_commit","tier":"ledger"}"#;
//! let moved = live.replace(ledger, &ledger.replace("ledger", "pulse"));
//! let changes = diff(&live, &moved)?;
//! let change = &changes.changes()[0];
//! assert_eq!((change.table.as_str(), change.class), ("schedule.fields", Class::Widens));
//! assert_eq!(change.says, "`attempt.terminal_commit` is now disclosed from `pulse` (was `ledger`)");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::{self, Write as _};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::fingerprint::{self, Input, Row, Table, FORMAT};

mod changes;

/// Which of the two documents given to [`diff`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The first: the rules before.
    Old,
    /// The second: the rules after.
    New,
}

impl fmt::Display for Side {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(if *self == Self::Old { "old" } else { "new" })
    }
}

/// A bound on what [`diff`] reads and makes, each about four times what the
/// real document needs, so that no diff takes a second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Limit {
    /// Bytes in one document.
    Bytes,
    /// Rows in one document.
    Rows,
    /// Bytes in one word (any string) of a document.
    Word,
    /// Changes in one diff.
    Changes,
}

impl Limit {
    const fn bound(self) -> (usize, &'static str) {
        match self {
            Self::Bytes => (4 << 20, "bytes"),
            Self::Rows => (24_576, "rows"),
            Self::Word => (256, "bytes in a word"),
            Self::Changes => (24_576, "changes"),
        }
    }

    /// The bound.
    #[must_use]
    pub const fn max(self) -> usize {
        self.bound().0
    }

    const fn refuse(self, side: Option<Side>) -> DocumentRefusal {
        DocumentRefusal::TooLarge { side, limit: self }
    }
}

/// Why two documents were not compared. Never "no changes".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DocumentRefusal {
    /// Not a decision document: not JSON, not an object, or not rows as
    /// this format writes them.
    #[error("the {side} document is not a decision document: {why}")]
    NotADocument {
        /// Which document.
        side: Side,
        /// What is wrong with it.
        why: String,
    },
    /// A decision document of another [`FORMAT`], or of none.
    #[error(
        "the {side} document is a decision document of format {}, and this library reads format {} only",
        .found.as_deref().unwrap_or("none (it has no \"format\" field)"),
        FORMAT
    )]
    UnknownFormat {
        /// Which document.
        side: Side,
        /// Its `format` field as written (JSON), or `None` when it has none.
        found: Option<String>,
    },
    /// Past a [`Limit`]: a document (`side`), or the diff itself (`None`).
    #[error("{} is over the limit of {} {} (`{limit:?}`)",
        .side.map_or_else(|| "the diff".to_owned(), |side| format!("the {side} document")),
        .limit.max(), .limit.bound().1)]
    TooLarge {
        /// Which document, or `None` for the diff's changes.
        side: Option<Side>,
        /// Which limit.
        limit: Limit,
    },
}

impl DocumentRefusal {
    /// The document refused, or `None` for a diff over [`Limit::Changes`].
    #[must_use]
    pub const fn side(&self) -> Option<Side> {
        match self {
            Self::NotADocument { side, .. } | Self::UnknownFormat { side, .. } => Some(*side),
            Self::TooLarge { side, .. } => *side,
        }
    }
}

/// How an answer moved, for whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Some reader or caller gains (whatever anyone else loses).
    Widens,
    /// Someone loses, no one gains.
    Narrows,
    /// Neither, by this answer alone.
    Changes,
}

impl Class {
    /// Every class, in the order [`Diff::to_markdown`] writes them.
    pub const ALL: &'static [Self] = &[Self::Widens, Self::Narrows, Self::Changes];
}

/// One answer that differs between the two documents.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The table.
    pub table: Table,
    /// The question, in the host's words.
    pub input: Input,
    /// The old answer; `null` when the old document has none.
    pub old: Value,
    /// The new answer; `null` likewise.
    pub new: Value,
    /// Who gains or loses by it.
    pub class: Class,
    /// The change in one sentence, every document word in a Markdown code
    /// span: "strangers and anonymous readers (`pulse`) now see
    /// `attempt.terminal_commit`".
    #[serde(skip)]
    pub says: String,
}

/// Every change between two documents, in the new document's order, then
/// the questions only the old one asks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diff {
    changes: Vec<Change>,
}

impl Diff {
    /// Every change, in order.
    #[must_use]
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// Whether the two documents give every answer alike.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Whether any change widens: what a rollout gate refuses unless
    /// accepted.
    #[must_use]
    pub fn widens(&self) -> bool {
        self.of_class(Class::Widens).next().is_some()
    }

    /// The changes of one class.
    pub fn of_class(&self, class: Class) -> impl Iterator<Item = &Change> {
        self.changes
            .iter()
            .filter(move |change| change.class == class)
    }

    /// `{"changes":[{"table","input","old","new","class"}...]}`, compact.
    ///
    /// # Errors
    ///
    /// If serde_json refuses to write it (it cannot: every key is a string).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }

    /// Markdown for a pull request or a CHANGELOG entry: a `### Decision
    /// changes` section, the changes grouped by class, widening first.
    #[must_use]
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("### Decision changes\n\n");
        if self.is_empty() {
            out.push_str("no decision changes\n");
            return out;
        }
        let count = |class| self.of_class(class).count();
        let (widens, narrows) = (count(Class::Widens), count(Class::Narrows));
        let (all, neither) = (self.changes.len(), count(Class::Changes));
        let _ = writeln!(
            out,
            "Answers changed: {all} (widening {widens}, narrowing {narrows}, neither {neither})."
        );
        for &class in Class::ALL {
            let title = match class {
                Class::Widens => "Widens: someone gains",
                Class::Narrows => "Narrows: someone loses",
                Class::Changes => "Changes: no one gains or loses by these alone",
            };
            if count(class) > 0 {
                let _ = writeln!(out, "\n#### {title} ({})\n", count(class));
            }
            for change in self.of_class(class) {
                let _ = writeln!(out, "- {} (`{}`)", change.says, change.table.as_str());
            }
        }
        out
    }
}

/// `text` as one Markdown code span, whatever it holds: a fence longer than
/// any run of backticks in it, and control characters written escaped, so
/// no document word can end the span, start a block or pass HTML through.
#[must_use]
pub fn code(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    let fence = "`".repeat(escaped.split(|c| c != '`').map(str::len).max().unwrap_or(0) + 1);
    // A space between a fence and a backtick the text starts or ends with.
    let pad = " ".repeat(usize::from(
        escaped.starts_with('`') || escaped.ends_with('`'),
    ));
    format!("{fence}{pad}{escaped}{pad}{fence}")
}

/// One row as read, with its key: its question's words by name.
struct Asked {
    row: Row,
    key: String,
}

impl Asked {
    fn new(row: Row) -> Self {
        let key = key_of(&row.input);
        Self { row, key }
    }
}

fn too_long(value: &Value) -> bool {
    let long = |word: &str| word.len() > Limit::Word.max();
    match value {
        Value::String(word) => long(word),
        Value::Array(items) => items.iter().any(too_long),
        Value::Object(map) => map.iter().any(|(key, value)| long(key) || too_long(value)),
        _ => false,
    }
}

/// A parser's complaint, at most 200 characters of it: it may quote the
/// document.
fn bounded(error: &serde_json::Error) -> String {
    error.to_string().chars().take(200).collect()
}

/// Why `bytes`, which do not read as a document of this format, are not one.
fn refusal(bytes: &[u8], side: Side, error: &serde_json::Error) -> DocumentRefusal {
    let refuse = |why: &str| DocumentRefusal::NotADocument {
        side,
        why: why.to_owned(),
    };
    let head = match serde_json::from_slice(bytes) {
        Err(error) => return refuse(&format!("not JSON ({})", bounded(&error))),
        Ok(Value::Object(head)) => head,
        Ok(Value::Array(_)) => return refuse("a JSON array, not an object"),
        Ok(Value::Null) => return refuse("a JSON null, not an object"),
        Ok(_) => return refuse("a JSON scalar, not an object"),
    };
    match head.get("format") {
        Some(format) if format.as_u64() == Some(u64::from(FORMAT)) => refuse(&format!(
            "not as format {FORMAT} writes it ({})",
            bounded(error)
        )),
        found if found.is_some() || head.contains_key("rows") => {
            let found = found.map(Value::to_string);
            DocumentRefusal::UnknownFormat { side, found }
        }
        _ => refuse("an object with no \"format\" field and no rows"),
    }
}

/// The document in `bytes`, or why it is not one this build reads.
fn read(bytes: &[u8], side: Side) -> Result<Vec<Asked>, DocumentRefusal> {
    let large = |limit: Limit| Err(limit.refuse(Some(side)));
    if bytes.len() > Limit::Bytes.max() {
        return large(Limit::Bytes);
    }
    let document: fingerprint::Document =
        serde_json::from_slice(bytes).map_err(|error| refusal(bytes, side, &error))?;
    if document.format != FORMAT {
        let found = Some(document.format.to_string());
        return Err(DocumentRefusal::UnknownFormat { side, found });
    }
    let long = |(key, word): (&str, &Value)| key.len() > Limit::Word.max() || too_long(word);
    let long = |row: &Row| row.input.iter().any(long) || too_long(&row.answer);
    match document.rows {
        rows if rows.len() > Limit::Rows.max() => large(Limit::Rows),
        rows if rows.iter().any(long) => large(Limit::Word),
        rows => Ok(rows.into_iter().map(Asked::new).collect()),
    }
}

/// A question's key: its words by name, whatever order a document wrote
/// them in.
pub(super) fn key_of(input: &Input) -> String {
    let words: std::collections::BTreeMap<&str, &Value> = input.iter().collect();
    serde_json::to_string(&words).unwrap_or_default()
}

/// Compares two decision documents: every answer that differs, classed.
///
/// # Errors
///
/// [`DocumentRefusal`] for a document that is not one of this format, or
/// past a [`Limit`]. The old one is read first.
pub fn diff(old: impl AsRef<[u8]>, new: impl AsRef<[u8]>) -> Result<Diff, DocumentRefusal> {
    let old = read(old.as_ref(), Side::Old)?;
    let new = read(new.as_ref(), Side::New)?;
    let context = changes::Context::new([&old, &new])?;
    let only_old = old.iter().filter(|asked| !context.asks(Side::New, asked));
    let questions = new.iter().map(|asked| (asked, Side::Old));
    let mut changes = Vec::new();
    for (asked, other) in questions.chain(only_old.map(|asked| (asked, Side::New))) {
        let mut answers = [context.lookup(other, asked), Some(&asked.row.answer)];
        if other == Side::New {
            answers.reverse();
        }
        if answers[0] != answers[1] {
            context.changes(&asked.row, answers, &mut changes);
        }
        if changes.len() > Limit::Changes.max() {
            return Err(Limit::Changes.refuse(None));
        }
    }
    Ok(Diff { changes })
}
