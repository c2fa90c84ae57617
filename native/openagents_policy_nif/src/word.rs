//! Words across the boundary: a value of a core vocabulary (any unit
//! variant, a column's or a field's name) crosses as the atom of its serde
//! name, made when the VM has none yet, and is read back by the same name,
//! so a word a vocabulary gains needs no edit here. Text goes back as [`Text`].

use openagents_policy::ladder::{self, Access, Tier};
use openagents_policy::Reading;
use rustler::{Atom, Binary, Decoder, Encoder, Env, Error, NewBinary, NifResult, Term};
use serde::de::{value, DeserializeOwned, IntoDeserializer};
use serde::Serialize;
use serde_json::Value;

/// The atom of `value`'s word: its serde name.
pub fn atom(env: Env<'_>, value: impl Serialize) -> NifResult<Atom> {
    match serde_json::to_value(value).map_err(crate::error::raise)? {
        Value::String(word) => Atom::from_str(env, &word),
        other => Err(crate::error::raise(format!("{other} is not a word"))),
    }
}

/// [`atom`] of each of `values`, in order.
pub fn atoms<T: Serialize>(
    env: Env<'_>,
    values: impl IntoIterator<Item = T>,
) -> NifResult<Vec<Atom>> {
    values.into_iter().map(|value| atom(env, value)).collect()
}

/// A value of `T` named by its word: an atom, or a UTF-8 binary. Any other
/// term, or a word `T` does not have, is a bad argument.
#[derive(Clone, Copy)]
pub struct Word<T>(pub T);

impl<'a, T: DeserializeOwned + 'a> Decoder<'a> for Word<T> {
    fn decode(term: Term<'a>) -> NifResult<Self> {
        let word: String = if term.is_atom() { term.atom_to_string()? } else { term.decode()? };
        T::deserialize(word.into_deserializer()).map(Self).map_err(|_: value::Error| Error::BadArg)
    }
}

/// A tier as `Host.tier/1` sends it: an atom or a short binary, read by the
/// core's [`ladder::read_tier`]; anything else is a bad argument.
#[derive(Clone, Copy)]
pub struct TierTerm(pub Reading<Tier>);

impl<'a> Decoder<'a> for TierTerm {
    fn decode(term: Term<'a>) -> NifResult<Self> {
        Ok(Self(if term.is_atom() {
            term.atom_to_string().map_or(Reading::Unrecognized, ladder::read_tier)
        } else {
            ladder::read_tier(Binary::from_term(term)?.as_slice())
        }))
    }
}

/// An access as `Ladder.allows?/3` sends it: an atom (any term that is not
/// one crosses as `nil`), unrecognized unless it is an access's word.
#[derive(Clone, Copy)]
pub struct AccessTerm(pub Reading<Access>);

impl<'a> Decoder<'a> for AccessTerm {
    fn decode(term: Term<'a>) -> NifResult<Self> {
        if !term.is_atom() {
            return Err(Error::BadArg);
        }
        Ok(Self(term.atom_to_string().map_or(Reading::Unrecognized, Access::read)))
    }
}

/// A string, encoded as a binary made by `enif_make_new_binary`, which keeps
/// a short word on the process heap where rustler's `&str` makes a
/// reference-counted binary: every word answered here is a few bytes.
#[derive(Clone, Copy)]
pub struct Text<'s>(pub &'s str);

impl Encoder for Text<'_> {
    fn encode<'a>(&self, env: Env<'a>) -> Term<'a> {
        let mut binary = NewBinary::new(env, self.0.len());
        binary.as_mut_slice().copy_from_slice(self.0.as_bytes());
        binary.into()
    }
}
