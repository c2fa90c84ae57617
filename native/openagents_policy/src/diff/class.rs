//! Who gains by an answer that moved: each part of an answer is one [`Move`]
//! (a gain, a loss, or neither), and [`class_of`] folds the moves into the
//! [`Class`] a change gets. The rules of which move is a gain live here: a
//! tier that rose ([`Tiers::rise`]), a minimum that fell ([`Tiers::fall`]), a
//! viewer's own tier ([`Tiers::own`]), something present that was not
//! ([`presence`]), an account ([`account`]), capabilities granted or taken
//! ([`capability_moves`]).

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::Value;

use super::Class;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Move {
    Gain,
    Loss,
    Other,
}

pub(super) fn class_of(moves: &[Move]) -> Class {
    if moves.contains(&Move::Gain) {
        Class::Widens
    } else if moves.contains(&Move::Loss) {
        Class::Narrows
    } else {
        Class::Changes
    }
}

/// `Gain` when something is there that was not, `Loss` for the reverse.
pub(super) fn presence(before: bool, after: bool) -> Move {
    match (before, after) {
        (false, true) => Move::Gain,
        (true, false) => Move::Loss,
        _ => Move::Other,
    }
}

/// The tier order of both documents (each tier's rank).
pub(super) struct Tiers {
    pub(super) old: HashMap<String, u64>,
    pub(super) new: HashMap<String, u64>,
}

impl Tiers {
    /// Where `after` stands to `before`: by the ranks of each document that
    /// ranks both words, when they agree; `None` when no document ranks both,
    /// or the two disagree.
    fn compare(&self, before: &str, after: &str) -> Option<Ordering> {
        let by = |ranks: &HashMap<String, u64>| Some(ranks.get(after)?.cmp(ranks.get(before)?));
        match (by(&self.old), by(&self.new)) {
            (Some(old), Some(new)) if old == new => Some(old),
            (Some(order), None) | (None, Some(order)) => Some(order),
            _ => None,
        }
    }

    /// A tier that rose is a gain for whoever reads at it.
    pub(super) fn rise(&self, before: &str, after: &str) -> Move {
        match self.compare(before, after) {
            Some(Ordering::Greater) => Move::Gain,
            Some(Ordering::Less) => Move::Loss,
            _ => Move::Other,
        }
    }

    /// A minimum that fell is a gain for whoever needs it.
    pub(super) fn fall(&self, before: &str, after: &str) -> Move {
        self.rise(after, before)
    }

    /// A viewer's own tier: `None` clamps nothing, above every tier.
    pub(super) fn own(&self, before: Option<&str>, after: Option<&str>) -> Move {
        match (before, after) {
            (Some(_), None) => Move::Gain,
            (None, Some(_)) => Move::Loss,
            (Some(before), Some(after)) if before != after => self.rise(before, after),
            _ => Move::Other,
        }
    }
}

/// An account: having one can own a link; losing it cannot.
pub(super) fn account(before: &Value, after: &Value) -> Move {
    match (before.is_null(), after.is_null()) {
        (true, false) => Move::Gain,
        (false, true) => Move::Loss,
        _ => Move::Other,
    }
}

/// Capabilities granted and taken; a side with no answer moves nothing.
pub(super) fn capability_moves(before: Option<&[String]>, after: Option<&[String]>) -> Vec<Move> {
    let (Some(before), Some(after)) = (before, after) else {
        return vec![Move::Other];
    };
    let gained = after.iter().any(|capability| !before.contains(capability));
    let lost = before.iter().any(|capability| !after.contains(capability));
    let mut moves = vec![Move::Other];
    if gained {
        moves.push(Move::Gain);
    }
    if lost {
        moves.push(Move::Loss);
    }
    moves
}
