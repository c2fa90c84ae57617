//! `OpenAgentsPolicy.Decisions.diff/3`: the diff of two decision
//! documents (`openagents_policy_decisions::diff`), as terms.
//!
//! One NIF, always on a dirty CPU scheduler: reading two whole documents
//! and comparing every answer takes milliseconds, past the millisecond a NIF
//! may hold a normal scheduler, and the diff's `Limit`s bound the rest
//! (what it reads, and what it writes).

use openagents_policy_decisions::diff::{diff, Change, Class, DocumentRefusal, Side};
use rustler::serde::SerdeTerm;
use rustler::types::atom;
use rustler::{Atom, Binary, Encoder, Env, NifMap, Term};
use serde_json::{Map, Value};

use crate::text::Text;

mod atoms {
    rustler::atoms! {
        not_a_document,
        unknown_format,
        too_large,
        incomplete,
        old,
        new,
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
/// input:, old:, new:, class:, says:}`. rustler's serde encoder writes the
/// JSON values as `Jason.decode!/1` would (`nil`, booleans, integers,
/// binaries, lists, maps with binary keys) and the class as its atom.
#[derive(NifMap)]
#[rustler(encode)]
struct ChangeTerm<'c> {
    table: Text<'static>,
    input: SerdeTerm<&'c Map<String, Value>>,
    old: SerdeTerm<&'c Value>,
    new: SerdeTerm<&'c Value>,
    class: SerdeTerm<Class>,
    says: Text<'c>,
}

impl<'c> From<&'c Change> for ChangeTerm<'c> {
    fn from(change: &'c Change) -> Self {
        Self {
            table: Text(change.table.as_str()),
            input: SerdeTerm(&change.input),
            old: SerdeTerm(&change.old),
            new: SerdeTerm(&change.new),
            class: SerdeTerm(change.class),
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
/// :unknown_format | :too_large | :incomplete, :old | :new | nil, message}}`.
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
                DocumentRefusal::Incomplete { .. } => atoms::incomplete(),
            };
            let why = refusal.to_string();
            (atom::error(), (kind, side(refusal.side()), Text(&why))).encode(env)
        }
    }
}
