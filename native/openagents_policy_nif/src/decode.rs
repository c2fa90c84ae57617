//! The typed terms a NIF takes, read into the core's plain types: shapes
//! only, every rule about a shape is the core's. `OpenAgentsPolicy.Host`
//! reduces what a host passes to these bounded terms before the call
//! (whether a viewer owns a link is decided there, so no account id crosses).

use openagents_policy::disclosure::Record;
use openagents_policy::ladder::{Link, Subject, Viewer};
use rustler::{NifTaggedEnum, NifUnitEnum};

use crate::word::TierTerm;

/// A viewer's class (`Host.viewer/1`), one per shape of [`Viewer`]
/// (`{:user, admin?}` carries the host's `Accounts.admin?/1` answer).
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

impl ViewerTerm {
    pub const fn viewer(self) -> Viewer {
        match self {
            Self::Operator => Viewer::Operator,
            Self::User(admin) => Viewer::User { admin },
            Self::Tiered(tier) => Viewer::Tiered { tier: tier.0 },
            Self::Account => Viewer::Account,
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

fn link(state: LinkState, tier: TierTerm, owned: bool) -> Link {
    Link { owned, tier: tier.0, revoked: matches!(state, LinkState::Revoked) }
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
    pub fn subject(self) -> Subject {
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
    pub fn record(self) -> Record {
        match self {
            Self::Linked(state, tier, owns) => Record::Linked(link(state, tier, owns)),
            Self::Column(subject) => Record::Unlinked(subject.subject()),
        }
    }
}
