//! The tier ladder: the pure half of the host's `OpenAgents.Transparency`,
//! and the one ladder the disclosure schedule decides every field through.
//!
//! Four tiers rank `dark < pulse < ledger < glass`. A viewer may carry a tier
//! of its own, which clamps whatever it looks at; a live consent link raises
//! its owner ([`Link::owned`]) and an operator to `glass`; a revoked link is
//! `dark` for everyone, operators included. A tier word may be any term: a
//! known word names its tier, anything else (`nil`, a number, `"GLASS"`)
//! names `dark`, which is why tier words are taken as a [`Reading`].
//!
//! # One ladder, three words
//!
//! A [`Tier`] is a *level* (a record's, a viewer's, `dark` included); an
//! [`Access`] is a *use* a reader asks for ([`allows`]); a
//! [`Rung`](crate::disclosure::Rung) is a *schedule* word, the tier that first
//! exposes a field, with no `dark`, so a field no tier shows is never-listed.
//! One enum would let a schedule say "from `dark`" and mix a reader's level
//! with its asking. Their relations are rules the decision document publishes.

use serde::Serialize;

use crate::{vocabulary, Reading};

vocabulary! {
    /// A transparency tier. Declaration order is rank order, so `Ord`
    /// compares tiers by rank.
    pub enum Tier in Tier {
        /// Nothing: a projection at `dark` is absent, not an empty shell.
        Dark => "dark",
        /// That the work exists, its shape, and how it came out; no ref,
        /// revision, receipt or place.
        Pulse => "pulse",
        /// The content of the result (branch, revision, receipt handle,
        /// environment, counts, budget): where shas, paths, counts and timings sit.
        Ledger => "ledger",
        /// The work job's own output (the report, usage, the model), for the
        /// account the work belongs to and an operator.
        Glass => "glass",
    }
}

vocabulary! {
    /// What a reader wants to do with a record, each with a minimum tier
    /// ([`Access::minimum`]).
    pub enum Access in Access {
        Metadata => "metadata",
        Content => "content",
        Full => "full",
    }
}

impl Tier {
    /// The tier's rank: dark 0, pulse 1, ledger 2, glass 3.
    #[must_use]
    pub const fn rank(self) -> u8 {
        self as u8
    }
}

impl Reading<Tier> {
    /// The tier a word names: its own when known, `dark` otherwise.
    #[must_use]
    pub const fn named(self) -> Tier {
        match self {
            Self::Known(tier) => tier,
            Self::Unrecognized => Tier::Dark,
        }
    }
}

/// How a tier word reads: [`Tier::read`], spelled exactly. The NIF reads
/// every tier a host hands it here, which is why the panic probe sits here.
///
/// # Panics
///
/// Only when the crate is built with the test-only `panic_probe` feature, on
/// the word [`PANIC_PROBE`], with the message [`PANIC_PROBE_MESSAGE`].
#[must_use]
pub fn read_tier(word: impl AsRef<[u8]>) -> Reading<Tier> {
    let word = word.as_ref();
    #[cfg(feature = "panic_probe")]
    assert!(word != PANIC_PROBE.as_bytes(), "{PANIC_PROBE_MESSAGE}");
    Tier::read(word)
}

/// The word on which [`read_tier`] panics under the test-only `panic_probe`
/// feature (a record's `transparency_tier`, say), so fault tests can put a
/// panic inside a real decision; compile-time tables never ask it.
pub const PANIC_PROBE: &str = "panic_probe";

/// The `panic_probe` panic's message. Fault tests look for it in what
/// readers receive: it must never be there.
pub const PANIC_PROBE_MESSAGE: &str = "PANIC-PROBE-FIRED: read_tier panicked on purpose";

impl Access {
    /// The lowest tier that admits this access.
    #[must_use]
    pub const fn minimum(self) -> Tier {
        match self {
            Self::Metadata => Tier::Pulse,
            Self::Content => Tier::Ledger,
            Self::Full => Tier::Glass,
        }
    }
}

impl Reading<Access> {
    /// The minimum tier of an access word; an unknown one needs only `dark`.
    #[must_use]
    pub const fn minimum(self) -> Tier {
        match self {
            Self::Known(access) => access.minimum(),
            Self::Unrecognized => Tier::Dark,
        }
    }
}

/// Who is looking, in the shapes the host passes, in the order they are
/// recognised. The first shape that fits decides:
///
/// 1. a map with `admin: true` is an [`Viewer::Operator`];
/// 2. an `OpenAgents.Accounts.User` struct is a [`Viewer::User`], with the
///    host's own `Accounts.admin?/1` answer;
/// 3. a map with a `:tier` key is [`Viewer::Tiered`];
/// 4. a map with an `:account_id` key and no `:tier` is [`Viewer::Account`];
/// 5. a binary or a non-nil atom is a bare tier [`Viewer::Word`];
/// 6. anything else, `nil` included, is [`Viewer::Nobody`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum Viewer {
    /// An operator: `glass`, and raised on every live link.
    Operator,
    /// A host user record.
    User {
        /// What the host's `Accounts.admin?/1` said of this user.
        admin: bool,
    },
    /// A descriptor naming a tier.
    Tiered {
        /// The tier word as given (`nil` names `dark`).
        tier: Reading<Tier>,
    },
    /// A descriptor with an account and no tier: no clamp of its own.
    Account,
    /// A bare tier word.
    Word(Reading<Tier>),
    /// Anything else: no tier of its own, no identity.
    Nobody,
}

impl Viewer {
    /// The viewer's own tier, which clamps what it reads, or `None` for no
    /// clamp at all. A non-admin user has none.
    #[must_use]
    pub fn tier(&self) -> Option<Tier> {
        match self {
            Self::Operator | Self::User { admin: true, .. } => Some(Tier::Glass),
            Self::Tiered { tier, .. } | Self::Word(tier) => Some(tier.named()),
            Self::User { admin: false } | Self::Account | Self::Nobody => None,
        }
    }

    /// Whether the viewer is an operator, by descriptor or by the host's word.
    #[must_use]
    pub const fn is_admin(&self) -> bool {
        matches!(self, Self::Operator | Self::User { admin: true, .. })
    }

    /// `tier` clamped by this viewer: the lower of the two, or `tier` itself
    /// when the viewer has no tier of its own.
    #[must_use]
    pub fn clamp(&self, tier: Tier) -> Tier {
        self.tier().map_or(tier, |own| own.min(tier))
    }
}

/// A consent-bearing artifact link, as far as the ladder reads it for one
/// viewer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Link {
    /// Whether the viewer owns it (the link's account and the viewer's both
    /// present and equal), as the host states it: no id crosses into the core.
    pub owned: bool,
    /// The link's tier word.
    pub tier: Reading<Tier>,
    /// Whether the link was revoked (its `revoked_at` is set).
    pub revoked: bool,
}

impl Link {
    /// The tier every viewer reads this link at, when it does not depend on
    /// the viewer: `dark` once revoked, operators included. `None` for a live
    /// link, which [`Link::tier_for`] answers per viewer.
    #[must_use]
    pub fn tier_for_anyone(&self) -> Option<Tier> {
        self.revoked.then_some(Tier::Dark)
    }

    /// The tier `viewer` reads this link at: `dark` when revoked, for
    /// everyone; `glass` for its owner and an operator; otherwise the link's
    /// own tier clamped by the viewer.
    #[must_use]
    pub fn tier_for(&self, viewer: &Viewer) -> Tier {
        if let Some(tier) = self.tier_for_anyone() {
            tier
        } else if self.owned || viewer.is_admin() {
            Tier::Glass
        } else {
            viewer.clamp(self.tier.named())
        }
    }
}

/// What an effective tier is asked of: a link, or a bare tier word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "subject", rename_all = "snake_case")]
pub enum Subject {
    /// A loaded artifact link.
    Link(Link),
    /// A tier word (a column, an atom, anything).
    Tier(Reading<Tier>),
}

/// The tier `viewer` reads `subject` at: a link's [`Link::tier_for`], or a
/// bare tier named and clamped by the viewer.
#[must_use]
pub fn effective_tier(subject: &Subject, viewer: &Viewer) -> Tier {
    match subject {
        Subject::Link(link) => link.tier_for(viewer),
        Subject::Tier(tier) => viewer.clamp(tier.named()),
    }
}

/// Whether `viewer` may exercise `access` on `subject`: the effective tier's
/// rank reaches the access's minimum.
#[must_use]
pub fn allows(subject: &Subject, access: Reading<Access>, viewer: &Viewer) -> bool {
    effective_tier(subject, viewer) >= access.minimum()
}
