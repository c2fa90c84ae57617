//! A decision document read within the [`Limit`]s: every row checked as it
//! is read, and the first one past a limit ends the reading.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserializer;
use serde_json::{Map, Value};

use super::{DocumentRefusal, Limit, Side};
use crate::document::{Document, Input, Row, Table, FORMAT};

/// The first limit a reading crossed, and the format it found.
#[derive(Default)]
struct Bounds {
    crossed: Cell<Option<Limit>>,
    format: Cell<Option<bool>>,
}

impl Bounds {
    fn over<E: de::Error>(&self, limit: Limit) -> E {
        self.crossed.set(Some(limit));
        E::custom(format!("past the limit {limit:?}"))
    }

    fn word<E: de::Error>(&self, word: &str) -> Result<(), E> {
        if word.len() > Limit::Word.max() {
            return Err(self.over(Limit::Word));
        }
        Ok(())
    }
}

/// The document in `bytes`, or why it is not one this build reads: not a
/// decision document, of another format, or past a [`Limit`] (`side` says
/// which document it is, in the refusal).
///
/// # Errors
///
/// [`DocumentRefusal`], naming `side`.
pub fn read(bytes: &[u8], side: Side) -> Result<Document, DocumentRefusal> {
    if bytes.len() > Limit::Bytes.max() {
        return Err(Limit::Bytes.refuse(Some(side)));
    }
    let bounds = Bounds::default();
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    let read = DocumentSeed(&bounds)
        .deserialize(&mut reader)
        .and_then(|rows| reader.end().map(|()| rows));
    match read {
        Ok(rows) => Ok(Document {
            format: FORMAT,
            rows,
        }),
        Err(error) => Err(refusal(bytes, side, &bounds, &error)),
    }
}

/// A parser's complaint, at most 200 characters of it: it may quote the
/// document.
fn bounded(error: &serde_json::Error) -> String {
    error.to_string().chars().take(200).collect()
}

/// The head of a document: its format, whatever its rows hold.
#[derive(serde::Deserialize)]
struct Head {
    #[serde(default, deserialize_with = "present")]
    format: Option<Value>,
    rows: Option<IgnoredAny>,
}

/// A field that is there, even as `null`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    serde::Deserialize::deserialize(deserializer).map(Some)
}

/// Why `bytes` did not read as a document of this format: its format first
/// (a document of another format is refused as such, whatever else it
/// holds), then a limit, then the parser's complaint.
fn refusal(
    bytes: &[u8],
    side: Side,
    bounds: &Bounds,
    error: &serde_json::Error,
) -> DocumentRefusal {
    let refuse = |why: String| DocumentRefusal::NotADocument { side, why };
    let ours = || {
        if let Some(limit) = bounds.crossed.get() {
            return limit.refuse(Some(side));
        }
        refuse(format!(
            "not as format {FORMAT} writes it ({})",
            bounded(error)
        ))
    };
    if bounds.format.get() == Some(true) {
        return ours();
    }
    if let Err(error) = serde_json::from_slice::<IgnoredAny>(bytes) {
        return refuse(format!("not JSON ({})", bounded(&error)));
    }
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(b'[') => return refuse("a JSON array, not an object".to_owned()),
        Some(b'n') => return refuse("a JSON null, not an object".to_owned()),
        _ => return refuse("a JSON scalar, not an object".to_owned()),
    }
    match serde_json::from_slice::<Head>(bytes) {
        Ok(Head {
            format: Some(format),
            ..
        }) if format.as_u64() != Some(u64::from(FORMAT)) => {
            let found = format.to_string().chars().take(64).collect();
            DocumentRefusal::UnknownFormat {
                side,
                found: Some(found),
            }
        }
        Ok(Head {
            format: None,
            rows: Some(_),
        }) => DocumentRefusal::UnknownFormat { side, found: None },
        Ok(Head {
            format: None,
            rows: None,
        }) => refuse("an object with no \"format\" field and no rows".to_owned()),
        _ => ours(),
    }
}

struct DocumentSeed<'b>(&'b Bounds);

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_> {
    type Value = Vec<Row>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<Row>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DocumentSeed<'_> {
    type Value = Vec<Row>;
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a decision document")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Vec<Row>, M::Error> {
        let bounds = self.0;
        let mut rows = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" if bounds.format.get().is_none() => {
                    let format = map.next_value_seed(AnswerSeed(bounds))?;
                    let ours = format.as_u64() == Some(u64::from(FORMAT));
                    bounds.format.set(Some(ours));
                    if !ours {
                        return Err(de::Error::custom("another format"));
                    }
                }
                "rows" if rows.is_none() => rows = Some(map.next_value_seed(RowsSeed(bounds))?),
                "format" | "rows" => {
                    return Err(de::Error::custom(format!("duplicate field `{key}`")))
                }
                other => {
                    bounds.word(other)?;
                    return Err(de::Error::custom(format!("unknown field `{other}`")));
                }
            }
        }
        if bounds.format.get().is_none() {
            return Err(de::Error::missing_field("format"));
        }
        rows.ok_or_else(|| de::Error::missing_field("rows"))
    }
}

struct RowsSeed<'b>(&'b Bounds);

impl<'de> DeserializeSeed<'de> for RowsSeed<'_> {
    type Value = Vec<Row>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<Row>, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RowsSeed<'_> {
    type Value = Vec<Row>;
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a list of rows")
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Vec<Row>, S::Error> {
        let mut rows = Vec::new();
        while let Some(row) = seq.next_element_seed(RowSeed(self.0))? {
            if rows.len() == Limit::Rows.max() {
                return Err(self.0.over(Limit::Rows));
            }
            rows.push(row);
        }
        Ok(rows)
    }
}

struct RowSeed<'b>(&'b Bounds);

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = Row;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Row, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = Row;
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a row: [table, input, answer]")
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Row, S::Error> {
        let bounds = self.0;
        let short = || de::Error::custom("a row of fewer than three parts");
        let name: String = seq.next_element()?.ok_or_else(short)?;
        bounds.word(&name)?;
        let table = Table::parse(&name).ok_or_else(|| {
            de::Error::custom(format!("no table of format {FORMAT} is named {name:?}"))
        })?;
        let input = seq.next_element_seed(InputSeed(bounds, table))?;
        let input = input.ok_or_else(short)?;
        let answer = seq.next_element_seed(AnswerSeed(bounds))?;
        let answer = answer.ok_or_else(short)?;
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("a row of more than three parts"));
        }
        Ok(Row {
            table,
            input,
            answer,
        })
    }
}

/// A row's input: at most [`Limit::Words`] words, each name given once.
struct InputSeed<'b>(&'b Bounds, Table);

impl<'de> DeserializeSeed<'de> for InputSeed<'_> {
    type Value = Input;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Input, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for InputSeed<'_> {
    type Value = Input;
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an input: an object of words")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Input, M::Error> {
        let InputSeed(bounds, table) = self;
        let mut words: Vec<(String, Value)> = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            if words.len() == Limit::Words.max() {
                return Err(bounds.over(Limit::Words));
            }
            bounds.word(&name)?;
            if words.iter().any(|(known, _)| *known == name) {
                return Err(de::Error::custom(format!(
                    "a row of {table} names {name:?} twice in its input"
                )));
            }
            let word = map.next_value_seed(AnswerSeed(bounds))?;
            words.push((name, word));
        }
        Ok(Input(words))
    }
}

/// Any JSON value of an answer (or an input's word): its strings within
/// [`Limit::Word`], its lists and objects within [`Limit::Items`], checked
/// as they are read; an object naming a key twice is refused.
struct AnswerSeed<'b>(&'b Bounds);

impl<'de> DeserializeSeed<'de> for AnswerSeed<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AnswerSeed<'_> {
    type Value = Value;
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        self.0.word(value)?;
        Ok(Value::String(value.to_owned()))
    }
    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        self.0.word(&value)?;
        Ok(Value::String(value))
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Value, S::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(AnswerSeed(self.0))? {
            if items.len() == Limit::Items.max() {
                return Err(self.0.over(Limit::Items));
            }
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Value, M::Error> {
        let mut entries = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if entries.len() == Limit::Items.max() {
                return Err(self.0.over(Limit::Items));
            }
            self.0.word(&key)?;
            let value = map.next_value_seed(AnswerSeed(self.0))?;
            if entries.insert(key, value).is_some() {
                return Err(de::Error::custom("an object names a key twice"));
            }
        }
        Ok(Value::Object(entries))
    }
}
