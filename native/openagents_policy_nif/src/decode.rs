//! Terms into the core's plain types. Shapes only: every rule about what a
//! shape means lives in the core.
//!
//! The words a NIF takes on their own (a family, a relationship, a tier) are
//! `Decoder`s, so a NIF names them as typed arguments. A viewer is read with
//! the host's `admin?` answer beside it, a link or a subject by its shape, and
//! the arguments of the NIFs that may go dirty (`on_either_scheduler!`) are all terms, so
//! those are read inside the NIF from its `Term` arguments.

use std::cell::Cell;
use std::cmp::Ordering;

use openagents_policy::disclosure::{Family, Relationship};
use openagents_policy::ladder::{self, Access, Link, Subject, Tier, Viewer};
use openagents_policy::Reading;
use rustler::types::atom;
use rustler::{Atom, Binary, Decoder, Error, NifResult, Term, TermType};

use crate::words::{self, words};

/// A term compared as Erlang's `==` compares (so `1 == 1.0`), which is how
/// the host compares account ids.
///
/// Inside [`unless_dirty`], a comparison involving a [`dirty_to_compare`] term is not
/// made: it is noted, and the caller moves the whole call to a dirty
/// scheduler. Only comparisons the core actually asks for are checked.
pub struct ErlEq<'a>(pub Term<'a>);

impl PartialEq for ErlEq<'_> {
    fn eq(&self, other: &Self) -> bool {
        let watched = WATCH.get() != Watch::Off;
        // Two binaries (what account ids are): `==` is byte equality, read
        // here from the two sizes and, when they agree, the bytes.
        if let (Ok(left), Ok(right)) = (Binary::from_term(self.0), Binary::from_term(other.0)) {
            if left.len() != right.len() {
                return false;
            }
            if watched && left.len() > DIRTY_COMPARE_BYTES {
                WATCH.set(Watch::Tripped);
                return false;
            }
            return left.as_slice() == right.as_slice();
        }
        if watched && (dirty_to_compare(self.0) || dirty_to_compare(other.0)) {
            WATCH.set(Watch::Tripped);
            return false;
        }
        self.0.cmp(&other.0) == Ordering::Equal
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Watch {
    /// Compare whatever is asked (a dirty scheduler, or a NIF that never
    /// compares ids).
    Off,
    /// On a normal scheduler: refuse comparisons that must go dirty.
    On,
    /// A comparison that must go dirty was asked for and not made.
    Tripped,
}

thread_local! {
    static WATCH: Cell<Watch> = const { Cell::new(Watch::Off) };
}

/// Turns the watch off when [`unless_dirty`] ends, panicking or not.
struct Unwatch;

impl Drop for Unwatch {
    fn drop(&mut self) {
        WATCH.set(Watch::Off);
    }
}

/// `decide()`, or `None` when it asked for a comparison of [`dirty_to_compare`] terms,
/// which was then not made (and the answer is worthless): the caller moves to
/// a dirty scheduler, where (`dirty`) it decides again with every comparison
/// made.
pub fn unless_dirty<T>(dirty: bool, decide: impl FnOnce() -> T) -> Option<T> {
    if dirty {
        return Some(decide());
    }
    let _unwatch = Unwatch;
    WATCH.set(Watch::On);
    let answer = decide();
    (WATCH.get() != Watch::Tripped).then_some(answer)
}

/// How many bytes of binary two account ids may hold and still be compared on
/// a normal scheduler: comparing two equal binaries of this size takes tens
/// of microseconds here, well inside the 1 ms a NIF may hold one.
pub const DIRTY_COMPARE_BYTES: usize = 256 * 1024;

/// Whether comparing `term` with another could outlast a normal scheduler's
/// slice: a binary past [`DIRTY_COMPARE_BYTES`], an integer past 64 bits, or a
/// list, tuple or map, whose size is not known without walking it.
pub fn dirty_to_compare(term: Term) -> bool {
    // A binary first: what account ids are, told apart in one call.
    if let Ok(bytes) = Binary::from_term(term) {
        return bytes.len() > DIRTY_COMPARE_BYTES;
    }
    match term.get_type() {
        TermType::Binary | TermType::List | TermType::Tuple | TermType::Map => true,
        TermType::Integer => term.decode::<i64>().is_err(),
        _ => false,
    }
}

/// Whether `term` is exactly the atom `atom`. Atoms are immediates.
pub fn is(term: Term, atom: Atom) -> bool {
    term.as_c_arg() == atom.as_c_arg()
}

pub fn is_nil(term: Term) -> bool {
    is(term, atom::nil())
}

/// A map's value at `key`, or `None` when the key is absent.
pub fn get(map: Term<'_>, key: Atom) -> Option<Term<'_>> {
    map.map_get(key).ok()
}

/// A value that is set: present and not `nil`.
fn set(value: Option<Term>) -> Option<ErlEq> {
    value.filter(|term| !is_nil(*term)).map(ErlEq)
}

/// Whether `term` is a struct of the module `module`. (A term that is not a
/// map has no `__struct__` to get: `enif_get_map_value` checks.)
pub fn is_struct(term: Term, module: Atom) -> bool {
    get(term, words::struct_key()).is_some_and(|name| is(name, module))
}

fn find(atoms: &[Atom], term: Term) -> Option<usize> {
    atoms.iter().position(|known| is(term, *known))
}

/// A tier word: an atom by its name, a binary by the core's
/// [`ladder::read_tier`], anything else unrecognized (which the core names
/// `dark`).
pub fn tier(term: Term) -> Reading<Tier> {
    // The tier atoms first: an immediate compared with four others, where
    // asking the VM whether the term is an atom would be a call.
    if let Some(at) = find(&words().tiers, term) {
        Reading::Known(Tier::ALL[at])
    } else if term.is_atom() {
        Reading::Unrecognized
    } else {
        Binary::from_term(term).map_or(Reading::Unrecognized, |bytes| {
            ladder::read_tier(bytes.as_slice())
        })
    }
}

/// A family atom. The Elixir guard admits only the four, so anything else is
/// a bad argument.
#[derive(Clone, Copy)]
pub struct FamilyWord(pub Family);

impl<'a> Decoder<'a> for FamilyWord {
    fn decode(term: Term<'a>) -> NifResult<Self> {
        find(&words().families, term)
            .map(|at| Self(Family::ALL[at]))
            .ok_or(Error::BadArg)
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

/// Any term, read as a tier word ([`tier`]): never a bad argument.
#[derive(Clone, Copy)]
pub struct TierWord(pub Reading<Tier>);

impl<'a> Decoder<'a> for TierWord {
    fn decode(term: Term<'a>) -> NifResult<Self> {
        Ok(Self(tier(term)))
    }
}

/// An access word: only the atoms name one, and anything else is
/// unrecognized.
pub fn access(term: Term) -> Reading<Access> {
    find(&words().accesses, term)
        .map_or(Reading::Unrecognized, |at| Reading::Known(Access::ALL[at]))
}

/// A viewer, in the order of shapes the core documents on [`Viewer`].
/// `user_admin` is the host's `Accounts.admin?/1` answer, asked by the Elixir
/// side only when the term is a user struct.
pub fn viewer<'a>(term: Term<'a>, user_admin: Term<'a>) -> Viewer<ErlEq<'a>> {
    if term.is_map() {
        if get(term, words::admin()).is_some_and(|admin| is(admin, atom::true_())) {
            Viewer::Operator
        } else if is_struct(term, words::user_struct()) {
            // The account a user reads for is its `id`, unless the map also
            // carries a set `account_id` (no `%User{}` does; a map claiming
            // the struct may): the host's ladder asks for that first.
            Viewer::User {
                id: set(get(term, words::account_id())).or_else(|| set(get(term, words::id()))),
                admin: is(user_admin, atom::true_()),
            }
        } else if let Some(tier) = get(term, words::tier()) {
            Viewer::Tiered {
                tier: self::tier(tier),
                account_id: set(get(term, words::account_id())),
            }
        } else if let Some(account) = get(term, words::account_id()) {
            Viewer::Account {
                account_id: set(Some(account)),
            }
        } else {
            Viewer::Nobody
        }
    } else if term.is_binary() || (term.is_atom() && !is_nil(term)) {
        Viewer::Word(tier(term))
    } else {
        Viewer::Nobody
    }
}

/// An `ArtifactLink` struct. A link whose `revoked_at` is anything but a
/// present `nil` is revoked.
pub fn link(map: Term) -> Link<ErlEq> {
    link_of(
        get(map, words::account_id()),
        get(map, words::tier()),
        get(map, words::revoked_at()),
    )
}

/// A link from its three fields, each `None` when the struct lacks it.
pub fn link_of<'a>(
    account_id: Option<Term<'a>>,
    tier: Option<Term<'a>>,
    revoked_at: Option<Term<'a>>,
) -> Link<ErlEq<'a>> {
    Link {
        account_id: set(account_id),
        tier: tier.map_or(Reading::Unrecognized, self::tier),
        revoked: !revoked_at.is_some_and(is_nil),
    }
}

/// What an effective tier is asked of: a link struct, or a tier word.
pub fn subject(term: Term) -> Subject<ErlEq> {
    if is_struct(term, words::link_struct()) {
        Subject::Link(link(term))
    } else {
        Subject::Tier(tier(term))
    }
}
