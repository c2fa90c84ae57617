//! What changes between two decision documents, and for whom.
//!
//! [`diff`] joins two documents (a node's, a package's, the last release's)
//! on each row's table and input, and lists every answer that differs as a
//! [`Change`] with a [`Class`]. A question one side lacks is answered by that
//! side's `<any other word>` row, where the table has one. A document past a
//! [`Limit`], unreadable or incomplete, is refused, typed, never read as "no
//! changes" (guides/rust.md shows both).

use std::fmt::{self, Write as _};
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::document::{Input, Row, Table, FORMAT};

mod complete;
mod read;
mod says;

pub use read::read;

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

/// A bound on what [`diff`] reads and writes, each several times what the
/// real documents need, so that any two documents are refused or compared
/// in well under a second and a few tens of MB.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Limit {
    /// Bytes in one document.
    Bytes,
    /// Rows in one document.
    Rows,
    /// Words in one row's input.
    Words,
    /// Items in one list (or entries in one object) of an answer.
    Items,
    /// Bytes in one word (any string) of a document.
    Word,
    /// Bytes the diff writes: its changes' words, counted as each change is
    /// made, within which its Markdown and its JSON are each written.
    Output,
}

impl Limit {
    const fn bound(self) -> (usize, &'static str) {
        match self {
            Self::Bytes => (1 << 20, "bytes"),
            Self::Rows => (8_192, "rows"),
            Self::Words => (8, "words in a row's input"),
            Self::Items => (256, "items in a list of an answer"),
            Self::Word => (256, "bytes in a word"),
            Self::Output => (1 << 20, "bytes of output"),
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
    /// Not a decision document: not JSON, not an object, not rows as this
    /// format writes them, or a question asked twice.
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
    /// A document that lacks a question its own vocabularies imply: a
    /// table, a word of a vocabulary a table draws its input from, or a
    /// combination of its input words (truncated, or rows removed).
    #[error("the {side} document is incomplete: {why}")]
    Incomplete {
        /// Which document.
        side: Side,
        /// What it lacks.
        why: String,
    },
    /// Past a [`Limit`]: a document (`side`), or the diff's output (`None`).
    #[error("{} is over the limit of {} {} (`{limit:?}`)",
        .side.map_or_else(|| "the diff".to_owned(), |side| format!("the {side} document")),
        .limit.max(), .limit.bound().1)]
    TooLarge {
        /// Which document, or `None` for the diff's output.
        side: Option<Side>,
        /// Which limit.
        limit: Limit,
    },
}

impl DocumentRefusal {
    /// The document refused, or `None` for a diff over [`Limit::Output`].
    #[must_use]
    pub const fn side(&self) -> Option<Side> {
        match self {
            Self::NotADocument { side, .. }
            | Self::UnknownFormat { side, .. }
            | Self::Incomplete { side, .. } => Some(*side),
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
    /// A question the old document answers and the new one does not (not
    /// even as any other word): the new rules no longer say.
    Removed,
    /// A change the diff cannot class: tiers no document ranks, or ranks
    /// the two documents disagree on; a question only the new document
    /// asks, unless it widens.
    Unclassed,
    /// A change of words in a table that decides nothing
    /// ([`Table::decides`]).
    Words,
}

impl Class {
    /// Every class, in the order [`Diff::to_markdown`] writes them.
    pub const ALL: &'static [Self] =
        &[Self::Widens, Self::Removed, Self::Unclassed, Self::Narrows, Self::Changes, Self::Words];

    /// Widens when anyone gains, else narrows when anyone loses, else
    /// changes: a gain is never hidden behind a loss.
    #[must_use]
    pub const fn of(gains: bool, loses: bool) -> Self {
        match (gains, loses) {
            (true, _) => Self::Widens,
            (false, true) => Self::Narrows,
            (false, false) => Self::Changes,
        }
    }
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
    /// span: "`attempt.terminal_commit` is now disclosed from `pulse` (was
    /// `ledger`): strangers and anonymous readers now see it".
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
        self.changes.iter().filter(move |change| change.class == class)
    }

    /// `{"changes":[{"table","input","old","new","class"}...]}`, compact:
    /// within [`Limit::Output`], which counted each entry as it was made.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::json!(self).to_string()
    }

    /// Markdown for a pull request or a CHANGELOG entry: the changes grouped
    /// by class, widening first, within [`Limit::Output`] and a few headings.
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
        let _ = write!(
            out,
            "Answers changed: {all} (widening {widens}, narrowing {narrows}, neither {neither}"
        );
        for (class, name) in
            [(Class::Removed, "removed"), (Class::Unclassed, "unclassed"), (Class::Words, "words")]
        {
            if count(class) > 0 {
                let _ = write!(out, ", {name} {}", count(class));
            }
        }
        out.push_str(").\n");
        for &class in Class::ALL {
            let title = match class {
                Class::Widens => "Widens: someone gains",
                Class::Removed => "Removed: no longer answered",
                Class::Unclassed => "Unclassed: the diff cannot tell who gains",
                Class::Narrows => "Narrows: someone loses",
                Class::Changes => "Changes: no one gains or loses by these alone",
                Class::Words => "Words: a change of words that decides nothing",
            };
            if count(class) > 0 {
                let _ = writeln!(out, "\n#### {title} ({})\n", count(class));
            }
            for change in self.of_class(class) {
                let _ = writeln!(out, "{}", markdown_line(change));
            }
        }
        out
    }
}

/// A change's line of [`Diff::to_markdown`].
fn markdown_line(change: &Change) -> String {
    format!("- {} (`{}`)", change.says, change.table.as_str())
}

/// The changes as they are made, the bytes they will be written as, and
/// what the question being compared makes of each change's class.
struct Output {
    changes: Vec<Change>,
    bytes: usize,
    recast: fn(Class) -> Class,
}

impl Output {
    /// Takes `change`, counting its Markdown line and its JSON entry, or
    /// refuses the diff as soon as they are past [`Limit::Output`].
    fn push(&mut self, mut change: Change) -> Result<(), DocumentRefusal> {
        change.class = (self.recast)(change.class);
        // Its JSON entry and a comma, its Markdown line and a newline.
        self.bytes +=
            serde_json::json!(change).to_string().len() + markdown_line(&change).len() + 2;
        if self.bytes > Limit::Output.max() {
            return Err(Limit::Output.refuse(None));
        }
        self.changes.push(change);
        Ok(())
    }
}

/// The characters [`hidden`] escapes, by Unicode's own tables (regex-syntax
/// carries them): controls (Cc), format characters (Cf: bidirectional
/// marks, zero-width joiners, the byte order mark), separators but the
/// space (Zs, Zl, Zp: U+00A0, U+2000 to U+200A, U+3000), private use (Co),
/// unassigned (Cn), and every Default_Ignorable_Code_Point (fillers,
/// variation selectors, tags). No Unicode property marks a symbol drawn
/// empty, so the two such (So) are named: U+2800 BRAILLE PATTERN BLANK and
/// U+1D159 MUSICAL SYMBOL NULL NOTEHEAD.
pub const HIDDEN: &str =
    r"[[\p{Cc}\p{Cf}\p{Z}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u{2800}\u{1D159}]--\x20]";

/// A class of characters as sorted ranges; every character when the class
/// cannot be read (it can: both are fixed, and their tables are built in).
fn ranges(class: &str) -> Vec<(char, char)> {
    use regex_syntax::hir::{Class as Set, HirKind};
    match regex_syntax::parse(class).as_ref().map(regex_syntax::hir::Hir::kind) {
        Ok(HirKind::Class(Set::Unicode(set))) => {
            set.ranges().iter().map(|range| (range.start(), range.end())).collect()
        }
        _ => vec![('\0', char::MAX)],
    }
}

fn within(ranges: &[(char, char)], c: char) -> bool {
    let at = ranges.partition_point(|&(_, end)| end < c);
    ranges.get(at).is_some_and(|&(start, _)| start <= c)
}

/// Whether `c` renders blank, invisible or as a control, and is written
/// escaped in a code span: one of [`HIDDEN`].
#[must_use]
pub fn hidden(c: char) -> bool {
    static SET: LazyLock<Vec<(char, char)>> = LazyLock::new(|| ranges(HIDDEN));
    within(&SET, c)
}

/// `text` as one Markdown code span, whatever it holds: a fence longer than
/// any run of backticks in it; a backslash, any [`hidden`] character, and a
/// nonspacing mark with no visible character before it written escaped
/// (`\\`, `\n`, `\u{202e}`), so no word can end the span, start a block,
/// pass HTML or hide or reorder what a reader sees. The empty word is
/// `(empty)`, outside any span: two backticks alone are no code span.
#[must_use]
pub fn code(text: &str) -> String {
    // The nonspacing marks (Mn), escaped where they have no visible
    // character to sit on.
    static MARKS: LazyLock<Vec<(char, char)>> = LazyLock::new(|| ranges(r"\p{Mn}"));
    if text.is_empty() {
        return "(empty)".to_owned();
    }
    let mark = |c| within(&MARKS, c);
    let mut escaped = String::with_capacity(text.len());
    let mut base = false;
    for c in text.chars() {
        if c == '\\' {
            escaped.push_str("\\\\");
        } else if hidden(c) || (mark(c) && !base) {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
        base = !hidden(c) && c != ' ' && c != '\\' && (base || !mark(c));
    }
    let fence = "`".repeat(escaped.split(|c| c != '`').map(str::len).max().unwrap_or(0) + 1);
    // A space inside each fence when the text starts or ends with a
    // backtick, or is all spaces (which a span would otherwise strip).
    let pad = escaped.starts_with('`') || escaped.ends_with('`') || escaped.trim().is_empty();
    let pad = if pad { " " } else { "" };
    format!("{fence}{pad}{escaped}{pad}{fence}")
}

/// A question's key: its words by name, whatever order a document wrote
/// them in.
pub(crate) fn key_of(input: &Input) -> String {
    let words: std::collections::BTreeMap<&String, &Value> = input.iter().collect();
    serde_json::to_string(&words).unwrap_or_default()
}

/// One row as read, with its key: its question's words by name.
struct Asked {
    row: Row,
    key: String,
}

fn asked(rows: Vec<Row>) -> Vec<Asked> {
    let with_key = |row: Row| Asked { key: key_of(&row.input), row };
    rows.into_iter().map(with_key).collect()
}

/// Compares two decision documents: every answer that differs, classed.
///
/// # Errors
///
/// [`DocumentRefusal`] for a document that is not one of this format, or
/// past a [`Limit`] (the old one is read first), or for a diff whose words
/// would pass [`Limit::Output`], refused as soon as they would.
pub fn diff(old: impl AsRef<[u8]>, new: impl AsRef<[u8]>) -> Result<Diff, DocumentRefusal> {
    let old = asked(read(old.as_ref(), Side::Old)?.rows);
    let new = asked(read(new.as_ref(), Side::New)?.rows);
    let context = says::Context::new([&old, &new])?;
    complete::check(&old, Side::Old)?;
    complete::check(&new, Side::New)?;
    let mut out = Output { changes: Vec::new(), bytes: 0, recast: |class| class };
    let only_old = old.iter().filter(|asked| !context.asks(Side::New, asked));
    let questions = new.iter().map(|asked| (asked, Side::Old));
    for (asked, other) in questions.chain(only_old.map(|asked| (asked, Side::New))) {
        let mut answers = [context.lookup(other, asked), Some(&asked.row.answer)];
        if other == Side::New {
            answers.reverse();
        }
        if answers[0] != answers[1] {
            // What the question makes of its table's class (see `Class`).
            out.recast = match answers {
                _ if !asked.row.table.decides() => |_| Class::Words,
                [_, None] => |_| Class::Removed,
                [None, _] => |class| if class == Class::Widens { class } else { Class::Unclassed },
                _ => |class| class,
            };
            context.changes(&asked.row, answers, &mut out)?;
        }
    }
    Ok(Diff { changes: out.changes })
}
