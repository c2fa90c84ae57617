//! What changes between two decision documents, and for whom.
//!
//! [`crate::fingerprint`] tells two builds apart by one digest; this module
//! says how they differ. [`diff`] reads two decision documents (the JSON of
//! [`crate::fingerprint::Tables`]: a node's live one, the file a package
//! carries, the last release's) and lists every answer that differs, each as a
//! [`Change`]: its table, its input in the caller's words, the old and the new
//! answer, and a [`Class`]:
//!
//! * [`Class::Widens`]: some reader or caller gains: a field exposed at a
//!   lower tier, a column leaving a never list, a capability granted where it
//!   was not, a higher effective tier. A change in which someone gains and
//!   someone else loses widens: a gain is never hidden behind a loss.
//! * [`Class::Narrows`]: someone loses and no one gains.
//! * [`Class::Changes`]: neither, such as a lifecycle word that maps
//!   elsewhere. What follows from it is classed in its own table: when a
//!   substrate word (a Box state, a run state, a job status, a machine's
//!   status) reads another lifecycle, the capabilities a caller gets for that
//!   word are compared too (`capabilities.box_states` and its siblings).
//!
//! Documents are compared word by word, never by position, so two documents
//! from different versions of the library compare as long as their
//! vocabularies do: a word on one side only is itself a change (a vocabulary
//! entry, and each answer for it, whose other side is `null`). A substrate or
//! tier word one side does not know is answered, on that side, as that side
//! answers any word it does not know (its `unrecognized` row): that is what
//! a caller passing the word would get.
//!
//! A document this module cannot read is refused, typed, and never read as
//! "no changes": [`DocumentRefusal::NotADocument`] for anything that is not a
//! decision document, [`DocumentRefusal::UnknownFormat`] for one whose
//! [`crate::fingerprint::FORMAT`] is not the one this build reads.
//!
//! ```
//! use openagents_policy::diff::{diff, Class, DocumentRefusal, Side};
//! use openagents_policy::fingerprint::decision_json;
//!
//! let live = decision_json()?;
//! // The same rules: no change, in both renderings.
//! let same = diff(&live, &live)?;
//! assert!(same.is_empty() && !same.widens());
//! assert_eq!(same.to_json()?, r#"{"changes":[]}"#);
//!
//! // `terminal_commit` moved from `ledger` to `pulse` (by hand here; the
//! // crate's tests move it in the rules themselves).
//! let moved = live.replace(
//!     r#"{"field":"terminal_commit","tier":"ledger""#,
//!     r#"{"field":"terminal_commit","tier":"pulse""#,
//! );
//! let changes = diff(&live, &moved)?;
//! let change = &changes.changes()[0];
//! assert_eq!((change.table, change.class), ("schedule.fields", Class::Widens));
//! assert_eq!(change.says, "`attempt.terminal_commit` is now disclosed from `pulse` (was `ledger`)");
//! assert_eq!(changes.widened().count(), 1);
//!
//! // Not a document: refused, never "no changes".
//! let refused = diff(&live, "{}").unwrap_err();
//! assert!(matches!(refused, DocumentRefusal::NotADocument { side: Side::New, .. }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::{self, Write as _};

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::fingerprint::FORMAT;

use self::differ::Differ;
use self::document::Document;

// Where each part of the work lives (each file's header says what it owns):
//
// * `document`: reading a decision document, and refusing what is not one.
// * `differ`: the comparison, table by table (`differ/disclosure.rs`,
//   `differ/ladder.rs`, `differ/targets.rs`), and the matching of rows by key.
// * `class`: who gains or loses by an answer that moved: the classing rules.
// * `words`: inputs and answers in the caller's words.
mod class;
mod differ;
mod document;
mod words;

/// Which of the two documents given to [`diff`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The first: the rules before.
    Old,
    /// The second: the rules after.
    New,
}

impl Side {
    /// `"old"` or `"new"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Old => "old",
            Self::New => "new",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Why two documents were not compared. Never "no changes": a caller that
/// cannot read a document does not know what it changes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DocumentRefusal {
    /// Not a decision document at all: not JSON, not an object, or an object
    /// that declares this build's format and does not hold its tables as that
    /// format writes them.
    #[error("the {side} document is not a decision document: {why}")]
    NotADocument {
        /// Which document.
        side: Side,
        /// What is wrong with it.
        why: String,
    },
    /// A decision document of a format this build does not read: another
    /// [`crate::fingerprint::FORMAT`], or none at all (a document written
    /// before the format was numbered).
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
}

impl DocumentRefusal {
    /// The document refused.
    #[must_use]
    pub const fn side(&self) -> Side {
        match self {
            Self::NotADocument { side, .. } | Self::UnknownFormat { side, .. } => *side,
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
    /// Neither: the answer is another one, and no one gains or loses by it
    /// alone.
    Changes,
}

impl Class {
    /// Every class, in the order [`Diff::to_markdown`] writes them.
    pub const ALL: &'static [Self] = &[Self::Widens, Self::Narrows, Self::Changes];

    /// `"widens"`, `"narrows"` or `"changes"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Widens => "widens",
            Self::Narrows => "narrows",
            Self::Changes => "changes",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A change's input: the caller's words, named, in the order a caller passes
/// them. Serializes as a JSON object in that order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Input(Vec<(&'static str, Value)>);

impl Input {
    fn of(parts: impl IntoIterator<Item = (&'static str, Value)>) -> Self {
        Self(parts.into_iter().collect())
    }

    /// The word given as `name`, if this input has one.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value)
    }

    /// Every (name, word), in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        self.0.iter().map(|(key, value)| (*key, value))
    }
}

impl Serialize for Input {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// One answer that differs between the two documents.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The table, named by its path in the document (`schedule.fields_at`,
    /// `ladder.effective`, ...), or `capabilities.*` for what a caller may do
    /// with a substrate word whose lifecycle changed.
    pub table: &'static str,
    /// The question, in the caller's words.
    pub input: Input,
    /// The old answer; `null` when the old document has no answer for this
    /// input (a word it does not have).
    pub old: Value,
    /// The new answer; `null` likewise.
    pub new: Value,
    /// Who gains or loses by it.
    pub class: Class,
    /// The change in one sentence, for a reader: who gains what ("strangers
    /// and anonymous readers (`pulse`) now see `attempt.terminal_commit`").
    #[serde(skip)]
    pub says: String,
}

/// Every change between two documents, in document order (table by table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diff {
    changes: Vec<Change>,
}

impl Diff {
    /// Every change, in document order.
    #[must_use]
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// Whether the two documents give every answer alike.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Whether any change widens: what a relup preflight refuses unless it
    /// is acknowledged.
    #[must_use]
    pub fn widens(&self) -> bool {
        self.changes
            .iter()
            .any(|change| change.class == Class::Widens)
    }

    /// The changes that widen, each naming what is gained ([`Change::says`]).
    pub fn widened(&self) -> impl Iterator<Item = &Change> {
        self.of_class(Class::Widens)
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
    /// changes` section, the changes grouped by class, widening first, each
    /// one sentence naming who gains or loses what, then its table. Identical
    /// documents give the section with "no decision changes".
    #[must_use]
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("### Decision changes\n\n");
        if self.is_empty() {
            out.push_str("no decision changes\n");
            return out;
        }
        let count = |class| self.of_class(class).count();
        let _ = writeln!(
            out,
            "Answers changed: {} (widening {}, narrowing {}, neither {}).",
            self.changes.len(),
            count(Class::Widens),
            count(Class::Narrows),
            count(Class::Changes),
        );
        for &class in Class::ALL {
            if count(class) == 0 {
                continue;
            }
            let title = match class {
                Class::Widens => "Widens: someone gains",
                Class::Narrows => "Narrows: someone loses",
                Class::Changes => "Changes: no one gains or loses by these alone",
            };
            let _ = writeln!(out, "\n#### {title} ({})\n", count(class));
            for change in self.of_class(class) {
                let _ = writeln!(out, "- {} (`{}`)", change.says, change.table);
            }
        }
        out
    }
}

/// Compares two decision documents (JSON, as
/// [`crate::fingerprint::decision_json`] writes them): every answer that
/// differs, classed.
///
/// # Errors
///
/// [`DocumentRefusal`] for a document that is not a decision document, or
/// not of the format this build reads. The old one is read first.
pub fn diff(old: impl AsRef<[u8]>, new: impl AsRef<[u8]>) -> Result<Diff, DocumentRefusal> {
    let old = Document::read(old.as_ref(), Side::Old)?;
    let new = Document::read(new.as_ref(), Side::New)?;
    let mut diff = Differ::new(&old, &new);
    diff.vocabularies();
    diff.schedule();
    diff.relationships();
    diff.rungs();
    diff.ladder();
    diff.lifecycles();
    diff.seams();
    diff.links();
    Ok(Diff {
        changes: diff.changes,
    })
}
