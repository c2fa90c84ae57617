//! The decision document, as format 1 writes it: its tables as serde reads
//! them, the check that its ladder rows are whole, and the typed refusal of
//! anything that is not such a document ([`DocumentRefusal`]).
//!
//! Words are read as strings, never as this build's enums, so a document of
//! another version, with words this build lacks, still reads.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{DocumentRefusal, Side};
use crate::fingerprint::FORMAT;
use crate::Reading;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Document {
    pub(super) format: Value,
    pub(super) vocabularies: Vec<VocabularyRow>,
    pub(super) schedule: Vec<FamilyRow>,
    pub(super) relationships: Vec<(String, Descriptor)>,
    pub(super) rungs: Vec<(String, String, String)>,
    pub(super) ladder: LadderTables,
    pub(super) lifecycles: LifecycleTables,
    pub(super) seams: SeamTables,
    pub(super) links: Vec<(bool, Option<String>, bool, Value)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct VocabularyRow {
    pub(super) vocabulary: String,
    pub(super) words: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FamilyRow {
    pub(super) family: String,
    pub(super) fields: Vec<FieldRow>,
    pub(super) never: Vec<String>,
    pub(super) source_columns: Vec<String>,
    pub(super) fields_at: Vec<(Option<String>, Vec<String>)>,
}

#[derive(Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(super) struct FieldRow {
    pub(super) field: String,
    pub(super) tier: String,
    pub(super) column: String,
}

#[derive(Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(super) struct Descriptor {
    pub(super) account_id: Value,
    pub(super) tier: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) admin: bool,
}

pub(super) type Word = Reading<String>;

/// One of the lifecycle tables of substrate words.
pub(super) type SubstrateRows = fn(&Document) -> &Vec<(Word, String)>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LadderTables {
    pub(super) ranks: Vec<(String, u64)>,
    pub(super) named: Vec<(Word, String)>,
    pub(super) minimums: Vec<(Word, String)>,
    pub(super) viewers: Vec<(String, Option<String>, bool, Value)>,
    pub(super) clamp: Vec<(String, Vec<String>)>,
    pub(super) effective: Vec<(String, Vec<String>)>,
    pub(super) allows: Vec<(Word, String, Vec<bool>)>,
    pub(super) records: Vec<(bool, String, Vec<String>)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LifecycleTables {
    pub(super) box_states: Vec<(Word, String)>,
    pub(super) run_states: Vec<(Word, String)>,
    pub(super) job_statuses: Vec<(Word, String)>,
    pub(super) machines: Vec<(Word, bool, bool, String)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SeamTables {
    pub(super) kinds: Vec<(String, String, Option<String>)>,
    pub(super) unavailable: Vec<(String, String, Option<String>)>,
    pub(super) seams: Vec<(String, String, String, SeamRow)>,
    pub(super) delegation_seams: Vec<DelegationSeamRow>,
    pub(super) offered: Vec<(String, bool)>,
}

#[derive(Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(super) struct SeamRow {
    pub(super) custody: String,
    pub(super) runtime_class: Option<String>,
    pub(super) lifecycle: String,
    pub(super) capabilities: Vec<String>,
    pub(super) unavailable_reason: Option<String>,
}

#[derive(Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(super) struct DelegationSeamRow {
    pub(super) lifecycle: String,
    pub(super) capabilities: Vec<String>,
}

/// What a seam offers a caller: its capabilities, and the reason when it
/// offers none (a delegation's seam gives no reason).
pub(super) type Offer<'r> = (&'r [String], Option<&'r String>);

/// A row that answers what a caller may do: a target's seam or a
/// delegation's.
pub(super) trait Offers {
    fn offer(&self) -> Offer<'_>;
}

impl Offers for SeamRow {
    fn offer(&self) -> Offer<'_> {
        (&self.capabilities, self.unavailable_reason.as_ref())
    }
}

impl Offers for DelegationSeamRow {
    fn offer(&self) -> Offer<'_> {
        (&self.capabilities, None)
    }
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
    pub(super) fn read(bytes: &[u8], side: Side) -> Result<Self, DocumentRefusal> {
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

    pub(super) fn viewer_names(&self) -> Vec<&str> {
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
