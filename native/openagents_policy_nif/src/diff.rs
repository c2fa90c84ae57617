//! `OpenAgentsPolicy.Decisions.diff/3`: the diff of two decision
//! documents (`openagents_policy_decisions::diff`), as terms.
//!
//! One NIF, always on a dirty CPU scheduler: reading two whole documents
//! and comparing every answer takes milliseconds, past the millisecond a NIF
//! may hold a normal scheduler, and the diff's `Limit`s bound the rest
//! (what it reads, and what it writes).

use openagents_policy_decisions::diff::{diff, Change, Class, DocumentRefusal, Side};
use rustler::types::atom;
use rustler::{Atom, Binary, Encoder, Env, NifMap, Term};
use serde_json::{Map, Value};

use crate::text::Text;

mod atoms {
    rustler::atoms! {
        widens,
        narrows,
        changes,
        not_a_document,
        unknown_format,
        too_large,
        old,
        new,
    }
}

/// A JSON value as the term `Jason.decode!/1` would make of it: `nil`,
/// booleans, integers, binaries, lists, maps with binary keys.
struct Json<'v>(&'v Value);

impl Encoder for Json<'_> {
    fn encode<'a>(&self, env: Env<'a>) -> Term<'a> {
        match self.0 {
            Value::Null => atom::nil().encode(env),
            Value::Bool(boolean) => boolean.encode(env),
            Value::Number(number) => match (number.as_i64(), number.as_u64()) {
                (Some(integer), _) => integer.encode(env),
                (None, Some(integer)) => integer.encode(env),
                (None, None) => number.as_f64().unwrap_or_default().encode(env),
            },
            Value::String(text) => Text(text).encode(env),
            Value::Array(items) => items.iter().map(Json).collect::<Vec<_>>().encode(env),
            Value::Object(object) => Object(object).encode(env),
        }
    }
}

/// A JSON object as a map with binary keys.
struct Object<'v>(&'v Map<String, Value>);

impl Encoder for Object<'_> {
    fn encode<'a>(&self, env: Env<'a>) -> Term<'a> {
        let keys: Vec<Text<'_>> = self.0.keys().map(|key| Text(key)).collect();
        let values: Vec<Json<'_>> = self.0.values().map(Json).collect();
        // A JSON object's keys are distinct, so this cannot fail.
        Term::map_from_arrays(env, &keys, &values).unwrap_or_else(|_| atom::error().encode(env))
    }
}

fn class(class: Class) -> Atom {
    match class {
        Class::Widens => atoms::widens(),
        Class::Narrows => atoms::narrows(),
        Class::Changes => atoms::changes(),
    }
}

fn side(side: Option<Side>) -> Atom {
    match side {
        Some(Side::Old) => atoms::old(),
        Some(Side::New) => atoms::new(),
        None => atom::nil(),
    }
}

/// A change as `OpenAgentsPolicy.Decisions.diff/3` gives it: `%{table:,
/// input:, old:, new:, class:, says:}`, the input a map with binary keys.
#[derive(NifMap)]
#[rustler(encode)]
struct ChangeTerm<'c> {
    table: Text<'static>,
    input: Object<'c>,
    old: Json<'c>,
    new: Json<'c>,
    class: Atom,
    says: Text<'c>,
}

impl<'c> From<&'c Change> for ChangeTerm<'c> {
    fn from(change: &'c Change) -> Self {
        Self {
            table: Text(change.table.as_str()),
            input: Object(&change.input.0),
            old: Json(&change.old),
            new: Json(&change.new),
            class: class(change.class),
            says: Text(&change.says),
        }
    }
}

/// What `OpenAgentsPolicy.Decisions.diff/3` answers with (its `format:`):
/// the changes as terms, or one of the diff's two renderings. Only the one
/// asked for is made: for a large diff, building the changes as terms costs
/// more than comparing the documents.
#[derive(rustler::NifUnitEnum, Clone, Copy)]
enum Format {
    Changes,
    Markdown,
    Json,
}

/// `{:ok, changes | markdown | json}`, or `{:error, {:not_a_document |
/// :unknown_format | :too_large, :old | :new | nil, message}}`.
#[rustler::nif(schedule = "DirtyCpu")]
fn decisions_diff<'a>(env: Env<'a>, old: Binary<'a>, new: Binary<'a>, format: Format) -> Term<'a> {
    match diff(old.as_slice(), new.as_slice()) {
        Ok(changes) => {
            let answer = match format {
                Format::Changes => {
                    changes.changes().iter().map(ChangeTerm::from).collect::<Vec<_>>().encode(env)
                }
                Format::Markdown => Text(&changes.to_markdown()).encode(env),
                // serde_json cannot refuse it: every key is a string.
                Format::Json => Text(&changes.to_json().unwrap_or_default()).encode(env),
            };
            (atom::ok(), answer).encode(env)
        }
        Err(refusal) => {
            let kind = match refusal {
                DocumentRefusal::NotADocument { .. } => atoms::not_a_document(),
                DocumentRefusal::UnknownFormat { .. } => atoms::unknown_format(),
                DocumentRefusal::TooLarge { .. } => atoms::too_large(),
            };
            let why = refusal.to_string();
            (atom::error(), (kind, side(refusal.side()), Text(&why))).encode(env)
        }
    }
}
