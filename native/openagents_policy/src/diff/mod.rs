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

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};
use std::hash::Hash;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{json, Value};

use crate::fingerprint::FORMAT;
use crate::Reading;

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

// ---------------------------------------------------------------------------
// The document, as format 1 writes it. Words are read as strings, never as
// this build's enums, so a document of another version, with words this
// build lacks, still reads.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    format: Value,
    vocabularies: Vec<VocabularyRow>,
    schedule: Vec<FamilyRow>,
    relationships: Vec<(String, Descriptor)>,
    rungs: Vec<(String, String, String)>,
    ladder: LadderTables,
    lifecycles: LifecycleTables,
    seams: SeamTables,
    links: Vec<(bool, Option<String>, bool, Value)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VocabularyRow {
    vocabulary: String,
    words: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FamilyRow {
    family: String,
    fields: Vec<FieldRow>,
    never: Vec<String>,
    source_columns: Vec<String>,
    fields_at: Vec<(Option<String>, Vec<String>)>,
}

#[derive(Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct FieldRow {
    field: String,
    tier: String,
    column: String,
}

#[derive(Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    account_id: Value,
    tier: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    admin: bool,
}

type Word = Reading<String>;

/// One of the lifecycle tables of substrate words.
type SubstrateRows = fn(&Document) -> &Vec<(Word, String)>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LadderTables {
    ranks: Vec<(String, u64)>,
    named: Vec<(Word, String)>,
    minimums: Vec<(Word, String)>,
    viewers: Vec<(String, Option<String>, bool, Value)>,
    clamp: Vec<(String, Vec<String>)>,
    effective: Vec<(String, Vec<String>)>,
    allows: Vec<(Word, String, Vec<bool>)>,
    records: Vec<(bool, String, Vec<String>)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LifecycleTables {
    box_states: Vec<(Word, String)>,
    run_states: Vec<(Word, String)>,
    job_statuses: Vec<(Word, String)>,
    machines: Vec<(Word, bool, bool, String)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeamTables {
    kinds: Vec<(String, String, Option<String>)>,
    unavailable: Vec<(String, String, Option<String>)>,
    seams: Vec<(String, String, String, SeamRow)>,
    delegation_seams: Vec<DelegationSeamRow>,
    offered: Vec<(String, bool)>,
}

#[derive(Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct SeamRow {
    custody: String,
    runtime_class: Option<String>,
    lifecycle: String,
    capabilities: Vec<String>,
    unavailable_reason: Option<String>,
}

#[derive(Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct DelegationSeamRow {
    lifecycle: String,
    capabilities: Vec<String>,
}

/// The tables format 1 holds besides `format`: what tells a decision
/// document without a format from any other JSON object.
const TABLES: [&str; 8] = [
    "vocabularies",
    "schedule",
    "relationships",
    "rungs",
    "ladder",
    "lifecycles",
    "seams",
    "links",
];

impl Document {
    /// The document in `bytes`, read once as format 1; when that fails,
    /// read again as any JSON, only to say precisely why.
    fn read(bytes: &[u8], side: Side) -> Result<Self, DocumentRefusal> {
        match serde_json::from_slice::<Self>(bytes) {
            Ok(document) if is_format(&document.format) => {
                document
                    .check()
                    .map_err(|why| DocumentRefusal::NotADocument { side, why })?;
                Ok(document)
            }
            Ok(document) => Err(DocumentRefusal::UnknownFormat {
                side,
                found: Some(document.format.to_string()),
            }),
            Err(error) => Err(Self::refusal(bytes, side, &error)),
        }
    }

    fn refusal(bytes: &[u8], side: Side, typed: &serde_json::Error) -> DocumentRefusal {
        let not_one = |why: String| DocumentRefusal::NotADocument { side, why };
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(value) => value,
            Err(error) => return not_one(format!("not JSON ({error})")),
        };
        let Value::Object(object) = &value else {
            return not_one(format!("a JSON {}, not an object", kind(&value)));
        };
        match object.get("format") {
            Some(format) if is_format(format) => {
                not_one(format!("not as format {FORMAT} writes it ({typed})"))
            }
            Some(found) => DocumentRefusal::UnknownFormat {
                side,
                found: Some(found.to_string()),
            },
            None if TABLES.iter().all(|table| object.contains_key(*table)) => {
                DocumentRefusal::UnknownFormat { side, found: None }
            }
            None => {
                not_one("an object with no \"format\" field and not the decision tables".to_owned())
            }
        }
    }

    /// The ladder's rows hold one answer per viewer, in `viewers` order.
    fn check(&self) -> Result<(), String> {
        let viewers = self.ladder.viewers.len();
        let rows = (self
            .ladder
            .clamp
            .iter()
            .map(|(name, row)| (name, row.len())))
        .chain(self.ladder.effective.iter().map(|(n, row)| (n, row.len())))
        .chain(self.ladder.allows.iter().map(|(_, n, row)| (n, row.len())))
        .chain(self.ladder.records.iter().map(|(_, n, row)| (n, row.len())));
        for (name, answers) in rows {
            if answers != viewers {
                return Err(format!(
                    "the ladder row {name:?} holds {answers} answers for {viewers} viewers"
                ));
            }
        }
        Ok(())
    }

    fn viewer_names(&self) -> Vec<&str> {
        self.ladder
            .viewers
            .iter()
            .map(|(name, ..)| name.as_str())
            .collect()
    }
}

/// Whether a `format` field names the format this build reads.
fn is_format(format: &Value) -> bool {
    format.as_u64() == Some(u64::from(FORMAT))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

// ---------------------------------------------------------------------------
// Matching rows by key.

/// Every key of `new` (in its order), then every key only `old` has (in
/// its), with each side's answer.
fn matched<'d, K: Eq + Hash + Clone, V>(
    old: impl IntoIterator<Item = (K, &'d V)>,
    new: impl IntoIterator<Item = (K, &'d V)>,
) -> Vec<(K, Option<&'d V>, Option<&'d V>)> {
    let old: Vec<(K, &V)> = old.into_iter().collect();
    let new: Vec<(K, &V)> = new.into_iter().collect();
    let old_at: HashMap<&K, &V> = old.iter().map(|(key, value)| (key, *value)).collect();
    let new_keys: HashSet<&K> = new.iter().map(|(key, _)| key).collect();
    let mut rows: Vec<_> = new
        .iter()
        .map(|(key, value)| (key.clone(), old_at.get(key).copied(), Some(*value)))
        .collect();
    rows.extend(
        old.iter()
            .filter(|(key, _)| !new_keys.contains(key))
            .map(|(key, value)| (key.clone(), Some(*value), None)),
    );
    rows
}

/// [`matched`] over rows keyed by a word reading: a word one side lacks is
/// answered, on that side, as the side answers a word it does not know.
fn matched_readings<'d, K: Eq + Hash + Clone, V>(
    old: impl IntoIterator<Item = (K, &'d V)>,
    new: impl IntoIterator<Item = (K, &'d V)>,
    unrecognized: impl Fn(&K) -> K,
) -> Vec<(K, Option<&'d V>, Option<&'d V>)> {
    let old: Vec<(K, &V)> = old.into_iter().collect();
    let new: Vec<(K, &V)> = new.into_iter().collect();
    let lookup = |rows: &[(K, &'d V)], key: &K| -> Option<&'d V> {
        let find = |wanted: &K| rows.iter().find(|(k, _)| k == wanted).map(|(_, v)| *v);
        find(key).or_else(|| find(&unrecognized(key)))
    };
    matched(old.iter().cloned(), new.iter().cloned())
        .into_iter()
        .map(|(key, _, _)| {
            let (before, after) = (lookup(&old, &key), lookup(&new, &key));
            (key, before, after)
        })
        .collect()
}

fn reading_word(word: &Word) -> String {
    match word {
        Reading::Known(word) => word.clone(),
        Reading::Unrecognized => ANY_OTHER.to_owned(),
    }
}

/// How an input names "any word the vocabulary does not have".
const ANY_OTHER: &str = "<any other word>";

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn opt<T: Serialize>(value: Option<&T>) -> Value {
    value.map_or(Value::Null, to_value)
}

// ---------------------------------------------------------------------------
// Who gains: one move per part of an answer, folded into a class.

#[derive(Clone, Copy, PartialEq, Eq)]
enum Move {
    Gain,
    Loss,
    Other,
}

fn class_of(moves: &[Move]) -> Class {
    if moves.contains(&Move::Gain) {
        Class::Widens
    } else if moves.contains(&Move::Loss) {
        Class::Narrows
    } else {
        Class::Changes
    }
}

/// `Gain` when something is there that was not, `Loss` for the reverse.
fn presence(before: bool, after: bool) -> Move {
    match (before, after) {
        (false, true) => Move::Gain,
        (true, false) => Move::Loss,
        _ => Move::Other,
    }
}

/// The tier order of both documents (each tier's rank).
struct Tiers {
    old: HashMap<String, u64>,
    new: HashMap<String, u64>,
}

impl Tiers {
    /// Where `after` stands to `before`: by the ranks of each document that
    /// ranks both words, when they agree; `None` when no document ranks both,
    /// or the two disagree.
    fn compare(&self, before: &str, after: &str) -> Option<Ordering> {
        let by = |ranks: &HashMap<String, u64>| Some(ranks.get(after)?.cmp(ranks.get(before)?));
        match (by(&self.old), by(&self.new)) {
            (Some(old), Some(new)) if old == new => Some(old),
            (Some(order), None) | (None, Some(order)) => Some(order),
            _ => None,
        }
    }

    /// A tier that rose is a gain for whoever reads at it.
    fn rise(&self, before: &str, after: &str) -> Move {
        match self.compare(before, after) {
            Some(Ordering::Greater) => Move::Gain,
            Some(Ordering::Less) => Move::Loss,
            _ => Move::Other,
        }
    }

    /// A minimum that fell is a gain for whoever needs it.
    fn fall(&self, before: &str, after: &str) -> Move {
        self.rise(after, before)
    }

    /// A viewer's own tier: `None` clamps nothing, above every tier.
    fn own(&self, before: Option<&str>, after: Option<&str>) -> Move {
        match (before, after) {
            (Some(_), None) => Move::Gain,
            (None, Some(_)) => Move::Loss,
            (Some(before), Some(after)) if before != after => self.rise(before, after),
            _ => Move::Other,
        }
    }
}

/// An account: having one can own a link; losing it cannot.
fn account(before: &Value, after: &Value) -> Move {
    match (before.is_null(), after.is_null()) {
        (true, false) => Move::Gain,
        (false, true) => Move::Loss,
        _ => Move::Other,
    }
}

fn capability_moves(before: &[String], after: &[String]) -> Vec<Move> {
    let gained = after.iter().any(|capability| !before.contains(capability));
    let lost = before.iter().any(|capability| !after.contains(capability));
    let mut moves = vec![Move::Other];
    if gained {
        moves.push(Move::Gain);
    }
    if lost {
        moves.push(Move::Loss);
    }
    moves
}

// ---------------------------------------------------------------------------
// The caller's words.

/// Who reads at a tier, by the relationships that read at it.
fn readers(relationships: &[(String, Descriptor)], tier: Option<&str>) -> String {
    let Some(tier) = tier else {
        return "viewers with no tier of their own".to_owned();
    };
    let names: Vec<String> = relationships
        .iter()
        .filter(|(_, descriptor)| descriptor.tier == tier)
        .map(|(relationship, _)| match relationship.as_str() {
            "operator" => "operators".to_owned(),
            "member" => "members".to_owned(),
            "stranger" => "strangers".to_owned(),
            "anonymous" => "anonymous readers".to_owned(),
            other => format!("`{other}` readers"),
        })
        .collect();
    match names.as_slice() {
        [] => format!("readers at `{tier}`"),
        [one] => format!("{one} (`{tier}`)"),
        [init @ .., last] => format!("{} and {last} (`{tier}`)", init.join(", ")),
    }
}

/// A shape as `{:?}` writes it (`Tiered { tier: Known(Ledger), account_id:
/// Some(1) }`), parsed just enough to be written again as the Elixir term a
/// host passes.
enum Shape<'s> {
    Name(&'s str),
    Call(&'s str, Vec<Shape<'s>>),
    Fields(&'s str, Vec<(&'s str, Shape<'s>)>),
}

struct Parser<'s> {
    text: &'s str,
}

impl<'s> Parser<'s> {
    fn skip(&mut self) {
        self.text = self.text.trim_start();
    }

    fn eat(&mut self, token: char) -> bool {
        self.skip();
        self.text
            .strip_prefix(token)
            .map(|rest| self.text = rest)
            .is_some()
    }

    fn name(&mut self) -> Option<&'s str> {
        self.skip();
        let end = self
            .text
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.text.len());
        let (name, rest) = self.text.split_at(end);
        self.text = rest;
        (!name.is_empty()).then_some(name)
    }

    fn shape(&mut self) -> Option<Shape<'s>> {
        let name = self.name()?;
        if self.eat('(') {
            let mut args = vec![self.shape()?];
            while self.eat(',') {
                args.push(self.shape()?);
            }
            self.eat(')').then_some(Shape::Call(name, args))
        } else if self.eat('{') {
            let mut fields = Vec::new();
            loop {
                let field = self.name()?;
                if !self.eat(':') {
                    return None;
                }
                fields.push((field, self.shape()?));
                if !self.eat(',') {
                    break;
                }
            }
            self.eat('}').then_some(Shape::Fields(name, fields))
        } else {
            Some(Shape::Name(name))
        }
    }
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    for (at, c) in name.char_indices() {
        if c.is_ascii_uppercase() && at > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn elixir(shape: &Shape<'_>) -> String {
    let field = |fields: &[(&str, Shape<'_>)], name: &str| {
        fields
            .iter()
            .find(|(key, _)| *key == name)
            .map_or_else(|| "?".to_owned(), |(_, value)| elixir(value))
    };
    match shape {
        Shape::Name("None" | "Nobody") => "nil".to_owned(),
        Shape::Name("Unrecognized") => ANY_OTHER.to_owned(),
        Shape::Name("Operator") => "%{admin: true}".to_owned(),
        Shape::Name(name) => (*name).to_owned(),
        Shape::Call("Known", args) if args.len() == 1 => match &args[0] {
            Shape::Name(word) => format!("\"{}\"", snake(word)),
            other => elixir(other),
        },
        Shape::Call("Some" | "Word" | "Tier" | "Link", args) if args.len() == 1 => elixir(&args[0]),
        Shape::Fields("Link", fields) => format!(
            "%ArtifactLink{{account_id: {}, tier: {}, revoked_at: {}}}",
            field(fields, "account_id"),
            field(fields, "tier"),
            if field(fields, "revoked") == "true" {
                "<set>"
            } else {
                "nil"
            },
        ),
        Shape::Fields("User", fields) => format!(
            "%User{{id: {}}} with admin? {}",
            field(fields, "id"),
            field(fields, "admin")
        ),
        Shape::Fields("Tiered", fields) => format!(
            "%{{tier: {}, account_id: {}}}",
            field(fields, "tier"),
            field(fields, "account_id")
        ),
        Shape::Fields("Account", fields) => {
            format!("%{{account_id: {}}}", field(fields, "account_id"))
        }
        Shape::Call(name, args) => format!(
            "{name}({})",
            args.iter().map(elixir).collect::<Vec<_>>().join(", ")
        ),
        Shape::Fields(name, fields) => format!(
            "{name} {{{}}}",
            fields
                .iter()
                .map(|(key, value)| format!("{key}: {}", elixir(value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A viewer, subject or link as `{:?}` names it, in the host's terms; the
/// name itself when it is not a shape this module knows.
fn words_of(debug: &str) -> String {
    let mut parser = Parser { text: debug };
    match parser.shape() {
        Some(shape) if parser.text.trim().is_empty() => elixir(&shape),
        _ => debug.to_owned(),
    }
}

fn record_words(linked: bool, name: &str) -> String {
    if linked {
        format!("%{{artifact_link: {}}}", words_of(name))
    } else {
        format!(
            "%{{artifact_link: nil, transparency_tier: {}}}",
            words_of(name)
        )
    }
}

fn reach_words(reach: &str) -> &'static str {
    match reach {
        "authorized" => "with reach",
        "not_authorized" => "without reach",
        _ => "with that reach",
    }
}

fn list(words: &[String]) -> String {
    words
        .iter()
        .map(|word| format!("`{word}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn or_none(word: Option<&String>) -> String {
    word.map_or_else(|| "none".to_owned(), |word| format!("`{word}`"))
}

/// What a caller of a seam gains or loses, in words: "may now `start`",
/// "may no longer `cancel`", the reason otherwise.
fn capability_words(
    before: Option<(&[String], Option<&String>)>,
    after: Option<(&[String], Option<&String>)>,
) -> String {
    let (Some((before, before_reason)), Some((after, after_reason))) = (before, after) else {
        return match after {
            Some(_) => "is now answered".to_owned(),
            None => "is no longer answered".to_owned(),
        };
    };
    let gained: Vec<String> = after
        .iter()
        .filter(|c| !before.contains(c))
        .cloned()
        .collect();
    let lost: Vec<String> = before
        .iter()
        .filter(|c| !after.contains(c))
        .cloned()
        .collect();
    let mut parts = Vec::new();
    if !gained.is_empty() {
        parts.push(format!("may now {}", list(&gained)));
    }
    if !lost.is_empty() {
        parts.push(format!("may no longer {}", list(&lost)));
    }
    let said = parts.join(" and ");
    match (before_reason, after_reason) {
        (before, after) if before == after => {}
        (Some(before), None) => parts = vec![format!("{said} (it was refused as `{before}`)")],
        (None, Some(after)) => parts = vec![format!("{said} (it is now refused as `{after}`)")],
        (Some(before), Some(after)) if parts.is_empty() => {
            parts.push(format!("is now refused as `{after}` (was `{before}`)"));
        }
        (Some(before), Some(after)) => {
            parts = vec![format!("{said} (now refused as `{after}`, was `{before}`)")];
        }
        (None, None) => {}
    }
    if parts.is_empty() {
        "is answered otherwise".to_owned()
    } else {
        parts.join(" and ")
    }
}

fn tier_was(before: Option<&String>, after: Option<&String>) -> String {
    format!("`{}` (was `{}`)", or_dash(after), or_dash(before))
}

fn or_dash(word: Option<&String>) -> &str {
    word.map_or("-", String::as_str)
}

// ---------------------------------------------------------------------------
// The comparison, table by table.

struct Differ<'d> {
    old: &'d Document,
    new: &'d Document,
    tiers: Tiers,
    changes: Vec<Change>,
}

impl<'d> Differ<'d> {
    fn new(old: &'d Document, new: &'d Document) -> Self {
        let ranks = |document: &Document| document.ladder.ranks.iter().cloned().collect();
        Self {
            old,
            new,
            tiers: Tiers {
                old: ranks(old),
                new: ranks(new),
            },
            changes: Vec::new(),
        }
    }

    fn push(
        &mut self,
        table: &'static str,
        input: Input,
        (old, new): (Value, Value),
        class: Class,
        says: String,
    ) {
        self.changes.push(Change {
            table,
            input,
            old,
            new,
            class,
            says,
        });
    }

    /// The relationships to name readers by: the new document's.
    fn readers(&self, tier: Option<&str>) -> String {
        readers(&self.new.relationships, tier)
    }

    fn vocabularies(&mut self) {
        let words = |document: &'d Document| {
            document
                .vocabularies
                .iter()
                .map(|row| (row.vocabulary.as_str(), &row.words))
        };
        for (vocabulary, before, after) in matched(words(self.old), words(self.new)) {
            let empty = Vec::new();
            let (before, after) = (before.unwrap_or(&empty), after.unwrap_or(&empty));
            for (word, was, is) in matched(
                before.iter().map(|w| (w.as_str(), &())),
                after.iter().map(|w| (w.as_str(), &())),
            ) {
                if was.is_some() == is.is_some() {
                    continue;
                }
                let says = if is.is_some() {
                    format!("the `{vocabulary}` vocabulary gained the word `{word}`")
                } else {
                    format!("the `{vocabulary}` vocabulary lost the word `{word}`")
                };
                self.push(
                    "vocabularies",
                    Input::of([("vocabulary", json!(vocabulary)), ("word", json!(word))]),
                    (json!(was.is_some()), json!(is.is_some())),
                    Class::Changes,
                    says,
                );
            }
            self.order("vocabularies", ("vocabulary", vocabulary), before, after);
        }
    }

    /// One entry when the words both lists share are in another order.
    fn order(
        &mut self,
        table: &'static str,
        (name, what): (&'static str, &str),
        before: &[String],
        after: &[String],
    ) {
        let shared = |from: &[String], other: &[String]| -> Vec<String> {
            from.iter().filter(|w| other.contains(w)).cloned().collect()
        };
        if shared(before, after) != shared(after, before) {
            self.push(
                table,
                Input::of([(name, json!(what)), ("order", json!(true))]),
                (json!(before), json!(after)),
                Class::Changes,
                format!("the words of `{what}` ({table}) are in another order"),
            );
        }
    }

    fn schedule(&mut self) {
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
        let columns = |row: Option<&'d FamilyRow>| {
            row.into_iter()
                .flat_map(|row| row.never.iter().map(|column| (column.as_str(), &())))
        };
        for (column, was, is) in matched(columns(before), columns(after)) {
            if was.is_some() == is.is_some() {
                continue;
            }
            let listed = is.is_some();
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
                (json!(was.is_some()), json!(listed)),
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
        let columns = |row: Option<&'d FamilyRow>| {
            row.into_iter().flat_map(|row| {
                row.source_columns
                    .iter()
                    .map(|column| (column.as_str(), &()))
            })
        };
        for (column, was, is) in matched(columns(before), columns(after)) {
            if was.is_some() == is.is_some() {
                continue;
            }
            let read = is.is_some();
            let says = if read {
                format!("the schedule now reads column `{family}.{column}`")
            } else {
                format!("the schedule no longer reads column `{family}.{column}`")
            };
            self.push(
                "schedule.source_columns",
                Input::of([("family", json!(family)), ("column", json!(column))]),
                (json!(was.is_some()), json!(read)),
                class_of(&[presence(was.is_some(), read)]),
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

    fn relationships(&mut self) {
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

    fn rungs(&mut self) {
        let rows = |document: &'d Document| {
            document
                .rungs
                .iter()
                .map(|(rung, tier, access)| (rung.as_str(), (tier, access)))
                .collect::<Vec<_>>()
        };
        let (old_rows, new_rows) = (rows(self.old), rows(self.new));
        let minimum = |document: &Document, access: &str| {
            document
                .ladder
                .minimums
                .iter()
                .find(|(word, _)| matches!(word, Reading::Known(known) if known == access))
                .map(|(_, tier)| tier.clone())
        };
        for (rung, was, is) in matched(
            old_rows.iter().map(|(k, v)| (*k, v)),
            new_rows.iter().map(|(k, v)| (*k, v)),
        ) {
            if was == is {
                continue;
            }
            let moves = match (was, is) {
                (Some((was_tier, was_access)), Some((is_tier, is_access))) => {
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
            let pair = |row: Option<&(&String, &String)>| {
                row.map_or(
                    Value::Null,
                    |(tier, access)| json!({"tier": tier, "access": access}),
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

    fn ladder(&mut self) {
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
        let (old_viewers, new_viewers) = (self.old.viewer_names(), self.new.viewer_names());
        for ((linked, row), was, is) in matched(rows(self.old), rows(self.new)) {
            for (viewer, before, after) in matched(
                old_viewers.iter().copied().zip(was.into_iter().flatten()),
                new_viewers.iter().copied().zip(is.into_iter().flatten()),
            ) {
                if before == after {
                    continue;
                }
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
        let (old_viewers, new_viewers) = (self.old.viewer_names(), self.new.viewer_names());
        let rows = matched_readings(rows(self.old), rows(self.new), |(_, subject)| {
            (Reading::Unrecognized, *subject)
        });
        for ((access, subject), was, is) in rows {
            for (viewer, before, after) in matched(
                old_viewers.iter().copied().zip(was.into_iter().flatten()),
                new_viewers.iter().copied().zip(is.into_iter().flatten()),
            ) {
                if before == after {
                    continue;
                }
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

    fn lifecycles(&mut self) {
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
            let same = match (before, after) {
                (Some(before), Some(after)) => {
                    before.capabilities == after.capabilities
                        && before.unavailable_reason == after.unavailable_reason
                }
                (None, None) => true,
                _ => false,
            };
            if same {
                continue;
            }
            let moves = match (before, after) {
                (Some(before), Some(after)) => {
                    capability_moves(&before.capabilities, &after.capabilities)
                }
                _ => vec![Move::Other],
            };
            let part = |seam: Option<&'d SeamRow>| {
                seam.map(|seam| {
                    (
                        seam.capabilities.as_slice(),
                        seam.unavailable_reason.as_ref(),
                    )
                })
            };
            let says = format!(
                "a caller {} on {what} {}",
                reach_words(reach),
                capability_words(part(before), part(after))
            );
            let mut input = input.to_vec();
            input.push(("reach", json!(reach)));
            self.push(
                table,
                Input(input),
                (opt(before), opt(after)),
                class_of(&moves),
                says,
            );
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
        let same = match (before, after) {
            (Some(before), Some(after)) => before.capabilities == after.capabilities,
            (None, None) => true,
            _ => false,
        };
        if same {
            return;
        }
        let moves = match (before, after) {
            (Some(before), Some(after)) => {
                capability_moves(&before.capabilities, &after.capabilities)
            }
            _ => vec![Move::Other],
        };
        let part = |seam: Option<&'d DelegationSeamRow>| {
            seam.map(|seam| (seam.capabilities.as_slice(), None))
        };
        let says = format!(
            "a caller on {what} {}",
            capability_words(part(before), part(after))
        );
        self.push(
            table,
            Input(input.to_vec()),
            (opt(before), opt(after)),
            class_of(&moves),
            says,
        );
    }

    fn seams(&mut self) {
        self.kinds();
        self.unavailable();
        self.target_seams();
        self.delegation_seams();
        self.offered();
    }

    fn kinds(&mut self) {
        let rows = |document: &'d Document| {
            document
                .seams
                .kinds
                .iter()
                .map(|(kind, custody, class)| (kind.as_str(), (custody, class)))
                .collect::<Vec<_>>()
        };
        let (old_rows, new_rows) = (rows(self.old), rows(self.new));
        for (kind, was, is) in matched(
            old_rows.iter().map(|(k, v)| (*k, v)),
            new_rows.iter().map(|(k, v)| (*k, v)),
        ) {
            if was == is {
                continue;
            }
            let value = |row: Option<&(&String, &Option<String>)>| {
                row.map_or(
                    Value::Null,
                    |(custody, class)| json!({"custody": custody, "runtime_class": class}),
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
            let moves = match (was, is) {
                (Some(was), Some(is)) => capability_moves(&was.capabilities, &is.capabilities),
                _ => vec![Move::Other],
            };
            let part = |seam: Option<&'d SeamRow>| {
                seam.map(|seam| {
                    (
                        seam.capabilities.as_slice(),
                        seam.unavailable_reason.as_ref(),
                    )
                })
            };
            let mut says = format!(
                "a caller {} on a `{kind}` that is `{lifecycle}` {}",
                reach_words(reach),
                capability_words(part(was), part(is))
            );
            if let (Some(was), Some(is)) = (was, is) {
                if (&was.custody, &was.runtime_class, &was.lifecycle)
                    != (&is.custody, &is.runtime_class, &is.lifecycle)
                {
                    let _ = write!(says, " (the seam now reads {})", to_value(is));
                }
            }
            self.push(
                "seams.seams",
                Input::of([
                    ("kind", json!(kind)),
                    ("lifecycle", json!(lifecycle)),
                    ("reach", json!(reach)),
                ]),
                (opt(was), opt(is)),
                class_of(&moves),
                says,
            );
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
            let moves = match (was, is) {
                (Some(was), Some(is)) => capability_moves(&was.capabilities, &is.capabilities),
                _ => vec![Move::Other],
            };
            let part = |seam: Option<&'d DelegationSeamRow>| {
                seam.map(|seam| (seam.capabilities.as_slice(), None))
            };
            let says = format!(
                "a caller on a `{lifecycle}` delegation {}",
                capability_words(part(was), part(is))
            );
            self.push(
                "seams.delegation_seams",
                Input::of([("lifecycle", json!(lifecycle))]),
                (opt(was), opt(is)),
                class_of(&moves),
                says,
            );
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

    fn links(&mut self) {
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

#[cfg(test)]
mod tests {
    use super::words_of;

    #[test]
    fn shapes_are_written_as_the_host_passes_them() {
        assert_eq!(
            words_of("Tiered { tier: Known(Ledger), account_id: Some(1) }"),
            r#"%{tier: "ledger", account_id: 1}"#
        );
        assert_eq!(
            words_of("Link(Link { account_id: None, tier: Unrecognized, revoked: true })"),
            "%ArtifactLink{account_id: nil, tier: <any other word>, revoked_at: <set>}"
        );
        assert_eq!(words_of("Word(Known(Glass))"), r#""glass""#);
        assert_eq!(words_of("Operator"), "%{admin: true}");
        assert_eq!(words_of("Nobody"), "nil");
        assert_eq!(
            words_of("User { id: Some(2), admin: false }"),
            "%User{id: 2} with admin? false"
        );
        assert_eq!(words_of("not ( a shape"), "not ( a shape");
    }
}
