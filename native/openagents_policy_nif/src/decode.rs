//! The typed terms a NIF takes, read into the core's plain types. Shapes
//! only: every rule about what a shape means lives in the core.
//!
//! `OpenAgentsPolicy.Host` reduces what a host passes (a viewer, a link, a
//! record's tier column) to these terms, once, before the call: a viewer to
//! its class, a link to its state, its tier and whether the viewer owns it
//! (the two accounts are compared there, with `==`, so no account id crosses
//! into a NIF), and a tier to an atom or a binary of at most 64 bytes (a
//! longer one, or any other term, cannot be a tier word and crosses as
//! `nil`). So every NIF here reads a bounded term, whatever the host passed.

use openagents_policy::disclosure::{Family, Record, Relationship};
use openagents_policy::ladder::{self, Access, Link, Subject, Tier, Viewer};
use openagents_policy::Reading;
use rustler::{Atom, Binary, Decoder, Error, NifResult, NifTaggedEnum, NifUnitEnum, Term};

use crate::words::words;

/// Whether `term` is exactly the atom `atom`. Atoms are immediates.
pub fn is(term: Term, atom: Atom) -> bool {
    term.as_c_arg() == atom.as_c_arg()
}

fn find(atoms: &[Atom], term: Term) -> Option<usize> {
    atoms.iter().position(|known| is(term, *known))
}

/// A family atom. The Elixir guard admits only the four, so anything else is
/// a bad argument.
#[derive(Clone, Copy)]
pub struct FamilyWord(pub Family);

impl<'a> Decoder<'a> for FamilyWord {
    fn decode(term: Term<'a>) -> NifResult<Self> {
        find(&words().families, term).map(|at| Self(Family::ALL[at])).ok_or(Error::BadArg)
    }
}

/// A relationship atom; anything else is a bad argument.
#[derive(Clone, Copy)]
pub struct RelationshipWord(pub Relationship);

impl<'a> Decoder<'a> for RelationshipWord {
    fn decode(term: Term<'a>) -> NifResult<Self> {
        find(&words().relationships, term)
            .map(|at| Self(Relationship::ALL[at]))
            .ok_or(Error::BadArg)
    }
}

/// A tier as `Host.tier/1` sends it: an atom (a tier's by its name, any
/// other unrecognized) or a short binary, read by the core's
/// [`ladder::read_tier`]. Anything else is a bad argument.
#[derive(Clone, Copy)]
pub struct TierTerm(pub Reading<Tier>);

impl<'a> Decoder<'a> for TierTerm {
    fn decode(term: Term<'a>) -> NifResult<Self> {
        if let Some(at) = find(&words().tiers, term) {
            Ok(Self(Reading::Known(Tier::ALL[at])))
        } else if term.is_atom() {
            Ok(Self(Reading::Unrecognized))
        } else {
            let bytes = Binary::from_term(term)?;
            Ok(Self(ladder::read_tier(bytes.as_slice())))
        }
    }
}

/// An access as `Ladder.allows?/3` sends it: an atom (any term that is not
/// one crosses as `nil`), unrecognized unless it is an access's name.
#[derive(Clone, Copy)]
pub struct AccessTerm(pub Reading<Access>);

impl<'a> Decoder<'a> for AccessTerm {
    fn decode(term: Term<'a>) -> NifResult<Self> {
        if !term.is_atom() {
            return Err(Error::BadArg);
        }
        Ok(Self(
            find(&words().accesses, term)
                .map_or(Reading::Unrecognized, |at| Reading::Known(Access::ALL[at])),
        ))
    }
}

/// A viewer's class (`Host.viewer/1`), in the order of shapes the core
/// documents on [`Viewer`]: `:operator`, `{:user, admin?}` (the host's
/// `Accounts.admin?/1` answer), `{:tiered, tier}`, `:account`,
/// `{:word, tier}`, `:nobody`. The account a viewer reads for stays in
/// Elixir; a link says whether the viewer owns it.
#[derive(NifTaggedEnum, Clone, Copy)]
#[rustler(decode)]
pub enum ViewerTerm {
    Operator,
    User(bool),
    Tiered(TierTerm),
    Account,
    Word(TierTerm),
    Nobody,
}

/// Ownership as the core compares it: `Option<()>` on both sides, `Some`
/// for a viewer that reads for an account and for a link its viewer owns.
type Owner = ();

impl ViewerTerm {
    pub const fn viewer(self) -> Viewer<Owner> {
        match self {
            Self::Operator => Viewer::Operator,
            Self::User(admin) => Viewer::User { id: Some(()), admin },
            Self::Tiered(tier) => Viewer::Tiered { tier: tier.0, account_id: Some(()) },
            Self::Account => Viewer::Account { account_id: Some(()) },
            Self::Word(tier) => Viewer::Word(tier.0),
            Self::Nobody => Viewer::Nobody,
        }
    }
}

/// A link's state: `revoked_at` is a present `nil` (`:live`) or not.
#[derive(NifUnitEnum, Clone, Copy)]
#[rustler(decode)]
pub enum LinkState {
    Live,
    Revoked,
}

fn link(state: LinkState, tier: TierTerm, owns: bool) -> Link<Owner> {
    Link {
        account_id: owns.then_some(()),
        tier: tier.0,
        revoked: matches!(state, LinkState::Revoked),
    }
}

/// What a ladder's effective tier is asked of: `{:link, state, tier, owns?}`
/// or `{:tier, tier}`.
#[derive(NifTaggedEnum, Clone, Copy)]
#[rustler(decode)]
pub enum SubjectTerm {
    Link(LinkState, TierTerm, bool),
    Tier(TierTerm),
}

impl SubjectTerm {
    pub fn subject(self) -> Subject<Owner> {
        match self {
            Self::Link(state, tier, owns) => Subject::Link(link(state, tier, owns)),
            Self::Tier(tier) => Subject::Tier(tier.0),
        }
    }
}

/// A record, for `WorkDisclosure.effective_tier/2`: its loaded link,
/// `{:linked, state, tier, owns?}`, or its tier column, `{:column, subject}`
/// (which may itself hold a link).
#[derive(NifTaggedEnum, Clone, Copy)]
#[rustler(decode)]
pub enum RecordTerm {
    Linked(LinkState, TierTerm, bool),
    Column(SubjectTerm),
}

impl RecordTerm {
    pub fn record(self) -> Record<Owner> {
        match self {
            Self::Linked(state, tier, owns) => Record::Linked(link(state, tier, owns)),
            Self::Column(subject) => Record::Unlinked(subject.subject()),
        }
    }
}
