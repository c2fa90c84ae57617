//! The one error a NIF answers with, as rustler's `{:error, term}`.

use openagents_policy::disclosure::NoLink;
use openagents_policy_decisions::diff::{DocumentRefusal, Side};
use rustler::types::atom;
use rustler::{Encoder, Env, Term};

use crate::word::Text;

mod atoms {
    rustler::atoms! { not_a_document, unknown_format, too_large, incomplete, old, new }
}

/// Why a NIF answered `{:error, _}`: what `OpenAgents.Transparency.WorkDisclosure`
/// and `OpenAgentsPolicy.Decisions` promise their callers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An attempt that gets no link: the core's sentence.
    #[error(transparent)]
    NoLink(#[from] NoLink),
    /// Two decision documents not compared: `{kind, :old | :new | nil, sentence}`.
    #[error(transparent)]
    Refused(#[from] DocumentRefusal),
}

impl Encoder for Error {
    fn encode<'a>(&self, env: Env<'a>) -> Term<'a> {
        match self {
            Self::NoLink(why) => Text(&why.to_string()).encode(env),
            Self::Refused(refusal) => {
                let kind = match refusal {
                    DocumentRefusal::NotADocument { .. } => atoms::not_a_document(),
                    DocumentRefusal::UnknownFormat { .. } => atoms::unknown_format(),
                    DocumentRefusal::TooLarge { .. } => atoms::too_large(),
                    DocumentRefusal::Incomplete { .. } => atoms::incomplete(),
                };
                let side = match refusal.side() {
                    Some(Side::Old) => atoms::old(),
                    Some(Side::New) => atoms::new(),
                    None => atom::nil(),
                };
                (kind, side, Text(&refusal.to_string())).encode(env)
            }
        }
    }
}

/// A failure no caller can cause (serde refusing a value it always
/// writes), raised rather than answered.
pub fn raise(why: impl std::fmt::Display) -> rustler::Error {
    rustler::Error::RaiseTerm(Box::new(why.to_string()))
}
