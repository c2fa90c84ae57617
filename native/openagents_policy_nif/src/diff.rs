//! `OpenAgentsPolicy.Decisions.diff/3` (`openagents_policy_decisions::diff`)
//! as terms, on a dirty CPU scheduler: reading two whole documents takes
//! milliseconds, past what a NIF may hold a normal scheduler; the diff's
//! `Limit`s bound the rest.

use openagents_policy_decisions::diff::{diff, Change};
use rustler::serde::SerdeTerm;
use rustler::{Atom, Binary, Encoder, Env, NifMap, NifResult, Term};
use serde_json::{Map, Value};

use crate::error::Error;
use crate::word::{atom, Text};

/// A change as `OpenAgentsPolicy.Decisions.diff/3` gives it, the JSON
/// values as `Jason.decode!/1` would make them (rustler's serde encoder).
#[derive(NifMap)]
#[rustler(encode)]
struct ChangeTerm<'c> {
    table: Text<'static>,
    input: SerdeTerm<&'c Map<String, Value>>,
    old: SerdeTerm<&'c Value>,
    new: SerdeTerm<&'c Value>,
    class: Atom,
    says: Text<'c>,
}

impl<'c> ChangeTerm<'c> {
    fn new(env: Env<'_>, change: &'c Change) -> NifResult<Self> {
        Ok(Self {
            table: Text(change.table.as_str()),
            input: SerdeTerm(&change.input),
            old: SerdeTerm(&change.old),
            new: SerdeTerm(&change.new),
            class: atom(env, change.class)?,
            says: Text(&change.says),
        })
    }
}

/// What `OpenAgentsPolicy.Decisions.diff/3` answers with (its `format:`), the
/// one made: a large diff's changes as terms cost more than the comparison.
#[derive(rustler::NifUnitEnum, Clone, Copy)]
enum Format {
    Changes,
    Markdown,
    Json,
}

/// The changes (or their Markdown or JSON), or why the two documents were
/// not compared ([`Error::Refused`]).
#[rustler::nif(schedule = "DirtyCpu")]
fn decisions_diff<'a>(
    env: Env<'a>,
    old: Binary<'a>,
    new: Binary<'a>,
    format: Format,
) -> NifResult<Result<Term<'a>, Error>> {
    let changes = match diff(old.as_slice(), new.as_slice()) {
        Ok(changes) => changes,
        Err(refusal) => return Ok(Err(refusal.into())),
    };
    Ok(Ok(match format {
        Format::Changes => changes
            .changes()
            .iter()
            .map(|change| ChangeTerm::new(env, change))
            .collect::<NifResult<Vec<_>>>()?
            .encode(env),
        Format::Markdown => Text(&changes.to_markdown()).encode(env),
        Format::Json => Text(&changes.to_json()).encode(env),
    }))
}
