//! A decision document read within the [`Limit`]s: no more than
//! [`Limit::Bytes`] is parsed, then every row is checked against the rest.

use std::fmt;

use openagents_policy::Reading;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{DocumentRefusal, Limit, Side};
use crate::document::{Document, Row, Table, FORMAT};

/// The document in `bytes`, read within the [`Limit`]s.
///
/// # Errors
///
/// [`DocumentRefusal`], naming `side`.
pub fn read(bytes: &[u8], side: Side) -> Result<Document, DocumentRefusal> {
    let refuse = |why: &str| DocumentRefusal::NotADocument { side, why: why.to_owned() };
    let over = |limit: Limit| limit.refuse(Some(side));
    if bytes.len() > Limit::Bytes.max() {
        return Err(over(Limit::Bytes));
    }
    let written =
        serde_json::from_slice::<Written>(bytes).map_err(|error| why_not(bytes, side, &error))?;
    if let Some(refused) = other_format(side, written.format.as_ref(), true) {
        return Err(refused);
    }
    if written.rows.len() > Limit::Rows.max() {
        return Err(over(Limit::Rows));
    }
    let mut rows = Vec::with_capacity(written.rows.len());
    for (name, Strict(input), Strict(answer)) in written.rows {
        word(&name).map_err(over)?;
        let Reading::Known(table) = Table::read(&name) else {
            return Err(refuse(&format!("no table of format {FORMAT} is named {name:?}")));
        };
        let Value::Object(words) = input else {
            return Err(refuse(&format!(
                "a row of {name} asks no question: its input is not an object"
            )));
        };
        if words.len() > Limit::Words.max() {
            return Err(over(Limit::Words));
        }
        for (name, value) in &words {
            word(name).and_then(|()| bounded(value)).map_err(over)?;
        }
        bounded(&answer).map_err(over)?;
        rows.push(Row { table, input: words, answer });
    }
    Ok(Document { format: FORMAT, rows })
}

/// Why `bytes` did not read as a document of this format: not JSON, not an
/// object, of another format (whatever else it holds), else the parser's complaint.
fn why_not(bytes: &[u8], side: Side, error: &serde_json::Error) -> DocumentRefusal {
    let refuse = |why: String| DocumentRefusal::NotADocument { side, why };
    if let Err(error) = serde_json::from_slice::<de::IgnoredAny>(bytes) {
        return refuse(format!("not JSON ({})", cut(&error)));
    }
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(b'[') => return refuse("a JSON array, not an object".to_owned()),
        Some(b'n') => return refuse("a JSON null, not an object".to_owned()),
        _ => return refuse("a JSON scalar, not an object".to_owned()),
    }
    let head = serde_json::from_slice::<Head>(bytes).ok();
    let refused =
        head.and_then(|head| other_format(side, head.format.as_ref(), head.rows.is_some()));
    refused.unwrap_or_else(|| refuse(format!("not as format {FORMAT} writes it ({})", cut(error))))
}

/// The refusal of a document whose `format` is not this one (`rows`: whether
/// it has rows, which tell a document of no format from any other object).
fn other_format(side: Side, format: Option<&Value>, rows: bool) -> Option<DocumentRefusal> {
    match format {
        Some(format) if format.as_u64() == Some(u64::from(FORMAT)) => None,
        Some(format) => Some(DocumentRefusal::UnknownFormat {
            side,
            found: Some(format.to_string().chars().take(64).collect()),
        }),
        None if rows => Some(DocumentRefusal::UnknownFormat { side, found: None }),
        None => Some(DocumentRefusal::NotADocument {
            side,
            why: "an object with no \"format\" field and no rows".to_owned(),
        }),
    }
}

/// A document's head, whatever its rows hold.
#[derive(serde::Deserialize)]
struct Head {
    #[serde(default, deserialize_with = "present")]
    format: Option<Value>,
    rows: Option<de::IgnoredAny>,
}

/// A field that is there, even as `null`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A parser's complaint, at most 200 characters of it: it may quote the
/// document.
fn cut(error: &serde_json::Error) -> String {
    error.to_string().chars().take(200).collect()
}

/// A word within [`Limit::Word`].
fn word(word: &str) -> Result<(), Limit> {
    (word.len() <= Limit::Word.max()).then_some(()).ok_or(Limit::Word)
}

/// A value's words within [`Limit::Word`], its lists and objects within
/// [`Limit::Items`]. Recursion is bounded by the parser's depth limit.
fn bounded(value: &Value) -> Result<(), Limit> {
    match value {
        Value::String(text) => word(text),
        Value::Array(items) if items.len() > Limit::Items.max() => Err(Limit::Items),
        Value::Object(entries) if entries.len() > Limit::Items.max() => Err(Limit::Items),
        Value::Array(items) => items.iter().try_for_each(bounded),
        Value::Object(entries) => {
            entries.iter().try_for_each(|(key, value)| word(key).and_then(|()| bounded(value)))
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

/// A document as this [`FORMAT`] writes it: rows of `[table, input, answer]`,
/// each input an object of words in the order written.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    #[serde(default, deserialize_with = "present")]
    format: Option<Value>,
    rows: Vec<(String, Strict, Strict)>,
}

/// Any JSON value; an object that names a key twice is refused, where
/// `Value` would keep the last.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Once).map(Strict)
    }
}

struct Once;

/// `Once`'s visits of scalars, each the `Value` serde_json makes of it.
macro_rules! scalars {
    ($($visit:ident: $type:ty),+) => {
        $(fn $visit<E: de::Error>(self, value: $type) -> Result<Value, E> {
            Ok(Value::from(value))
        })+
    };
}

impl<'de> Visitor<'de> for Once {
    type Value = Value;
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    scalars!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Value, S::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Value, M::Error> {
        let mut entries = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if entries.contains_key(&key) {
                return Err(de::Error::custom(format!("an object names {key:?} twice")));
            }
            let Strict(value) = map.next_value()?;
            entries.insert(key, value);
        }
        Ok(Value::Object(entries))
    }
}
