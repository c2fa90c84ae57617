//! The join's two documents, indexed ([`Context`]), and each change made of
//! its table's description ([`Table::description`]): who gains by the move
//! of an answer, one change per item of a list, and the sentence filled.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::{code, key_of, Asked, Change, Class, DocumentRefusal, Limit, Side};
use crate::fingerprint::{Description, Gain, Input, Row, Table, ANY_OTHER_WORD};

/// Which of a table's sentences a change reads: for a list item or a
/// `true`/`false`/no answer, in that order; for a field, newly scheduled,
/// unscheduled, another rung, another column, else; for a reason, `start`
/// now offered, no longer, another reason, one side only; for a viewer
/// descriptor, another tier, else.
fn variant(gain: Gain, old: Option<&Value>, new: Option<&Value>) -> usize {
    let moved = |key| get(old, key) != get(new, key);
    let offers = |v| get(v, "unavailable_reason").map(Value::is_null);
    match (gain, old, new) {
        (Gain::Field, None, _) => 0,
        (Gain::Field, _, None) => 1,
        (Gain::Field, ..) => {
            [[4, 3], [2, 4]][usize::from(moved("tier"))][usize::from(moved("column"))]
        }
        (Gain::Reason, ..) => match (offers(old), offers(new)) {
            (Some(false), Some(true)) => 0,
            (Some(true), Some(false)) => 1,
            (Some(_), Some(_)) => 2,
            _ => 3,
        },
        (Gain::Viewer, Some(_), Some(_)) => usize::from(!moved("tier")),
        (_, _, Some(Value::Bool(false))) => 1,
        (_, _, None) => 2,
        _ => 0,
    }
}

fn get<'v>(value: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    value?.get(key)
}

fn text<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key)?.as_str()
}

/// A word of a document, as the sentences write it: a code span.
fn word(value: Option<&Value>) -> String {
    code(&match value {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => "-".to_owned(),
    })
}

/// "`new` (was `old`)".
fn was(old: Option<&Value>, new: Option<&Value>) -> String {
    format!("{} (was {})", word(new), word(old))
}

/// The words of a list answer, by their text.
fn items(value: Option<&Value>) -> Vec<String> {
    let all = value.and_then(Value::as_array).into_iter().flatten();
    all.map(|item| {
        item.as_str()
            .map_or_else(|| item.to_string(), str::to_owned)
    })
    .collect()
}

/// What `after` has that `before` lacks, in `after`'s order.
fn missing<'w>(after: &'w [String], before: &[String]) -> Vec<&'w String> {
    let before: HashSet<&String> = before.iter().collect();
    after.iter().filter(|item| !before.contains(item)).collect()
}

/// The capabilities a seam's caller gains, then those it loses.
fn granted<'w>(before: &'w [String], after: &'w [String]) -> [Vec<&'w String>; 2] {
    [missing(after, before), missing(before, after)]
}

/// What a caller of a seam gains or loses, in words.
fn offer(old: Option<&Value>, new: Option<&Value>) -> String {
    let (Some(old), Some(new)) = (old, new) else {
        let still = if new.is_some() { "now" } else { "no longer" };
        return format!("is {still} answered");
    };
    let (before, after) = (
        items(old.get("capabilities")),
        items(new.get("capabilities")),
    );
    let listed = |words: &[&String]| words.iter().map(|w| code(w)).collect::<Vec<_>>().join(", ");
    let [gained, lost] = granted(&before, &after);
    let mut parts = Vec::new();
    if !gained.is_empty() {
        parts.push(format!("may now {}", listed(&gained)));
    }
    if !lost.is_empty() {
        parts.push(format!("may no longer {}", listed(&lost)));
    }
    let said = parts.join(" and ");
    let reason = |v: &Value| {
        v.get("unavailable_reason")
            .filter(|r| !r.is_null())
            .cloned()
    };
    match (reason(old), reason(new)) {
        (Some(old), None) => format!("{said} (it was refused as {})", word(Some(&old))),
        (None, Some(new)) => format!("{said} (it is now refused as {})", word(Some(&new))),
        (Some(old), Some(new)) if old != new && said.is_empty() => {
            format!("is now refused as {}", was(Some(&old), Some(&new)))
        }
        (Some(old), Some(new)) if old != new => {
            let (new, old) = (word(Some(&new)), word(Some(&old)));
            format!("{said} (now refused as {new}, was {old})")
        }
        _ if said.is_empty() => "is answered otherwise".to_owned(),
        _ => said,
    }
}

/// One change, for its sentence: both documents, its input, its answers.
struct Said<'a>(
    &'a Context<'a>,
    &'a Input,
    Option<&'a Value>,
    Option<&'a Value>,
);

impl Said<'_> {
    /// The sentence `variant` of `template`, its words filled.
    fn fill(&self, template: &str, variant: usize) -> String {
        let variants: Vec<&str> = template.split('|').collect();
        let mut rest = variants[variant.min(variants.len() - 1)];
        let mut out = String::new();
        while let Some((before, after)) = rest.split_once('{') {
            let (name, after) = after.split_once('}').unwrap_or((after, ""));
            out.push_str(before);
            out.push_str(&self.named(name));
            rest = after;
        }
        out + rest
    }

    fn named(&self, name: &str) -> String {
        let Self(context, input, old, new) = *self;
        if let Some((flag, said)) = name.split_once('?') {
            let (yes, no) = said.split_once(':').unwrap_or((said, ""));
            return (if input.get(flag) == Some(&json!(true)) {
                yes
            } else {
                no
            })
            .to_owned();
        }
        match name.split_once('.') {
            Some(("old", field)) => return word(get(old, field)),
            Some(("new", field)) => return word(get(new, field)),
            Some((first, second)) => {
                let text = |key| input.get(key).and_then(Value::as_str).unwrap_or("-");
                return code(&format!("{}.{}", text(first), text(second)));
            }
            None => {}
        }
        let seam = |v| ["custody", "runtime_class", "lifecycle"].map(|key| get(v, key));
        match name {
            "was" => was(old, new),
            "OFFER" => offer(old, new),
            "READERS" => context.readers(input.get("viewer_tier")),
            "REACH" => match input.get("reach").and_then(Value::as_str) {
                Some("authorized") => "with reach".to_owned(),
                Some("not_authorized") => "without reach".to_owned(),
                _ => "with that reach".to_owned(),
            },
            "COMPUTER" => self.fill("a Computer with status {status}, {revoked?revoked:not revoked}, {online?online:offline}", 0),
            "NOTE" if old.is_some() && new.is_some() && seam(old) != seam(new) => {
                format!(" (the seam now reads {})", word(new))
            }
            "NOTE" => String::new(),
            "PRINCIPAL" => match input.get("principal_type") {
                Some(Value::Null) | None => "no principal type".to_owned(),
                kind => format!("principal type {}", word(kind)),
            },
            "LINK" => format!("{} (was {})", link(new), link(old)),
            word_of_input => word(input.get(word_of_input)),
        }
    }
}

/// The link an attempt gets, or why none.
fn link(outcome: Option<&Value>) -> String {
    match outcome.map(|v| (v.get("Ok"), v.get("Err"))) {
        None => "no answer".to_owned(),
        Some((Some(link), _)) => format!("a link at {}", word(link.get("tier"))),
        Some((None, Some(why))) => format!("no link ({})", word(Some(why))),
        Some((None, None)) => word(outcome),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Move {
    Gain,
    Loss,
    Other,
}

fn presence(before: bool, after: bool) -> Move {
    match (before, after) {
        (false, true) => Move::Gain,
        (true, false) => Move::Loss,
        _ => Move::Other,
    }
}

/// Each question's answer, by table and key.
type Index<'d> = HashMap<(Table, &'d str), &'d Value>;

/// Both documents, indexed: what the join and the classes read, and who
/// reads at each tier by the new document.
pub(super) struct Context<'d> {
    index: [Index<'d>; 2],
    readers: Vec<(&'d str, &'d str)>,
}

impl<'d> Context<'d> {
    /// Both documents indexed, or the refusal of one that asks a question
    /// twice.
    pub(super) fn new(documents: [&'d [Asked]; 2]) -> Result<Self, DocumentRefusal> {
        let mut index = [Index::new(), Index::new()];
        for ((side, document), index) in [Side::Old, Side::New]
            .into_iter()
            .zip(documents)
            .zip(&mut index)
        {
            for Asked { row, key } in document {
                if index.insert((row.table, key), &row.answer).is_some() {
                    let why = format!("two rows of {} ask {key}", row.table.as_str());
                    return Err(DocumentRefusal::NotADocument { side, why });
                }
            }
        }
        let relationships = documents[1]
            .iter()
            .map(|asked| &asked.row)
            .filter(|row| row.table == Table::Relationships);
        let tier = |row: &'d Row| {
            Some((
                row.input.get("relationship")?.as_str()?,
                text(&row.answer, "tier")?,
            ))
        };
        Ok(Self {
            index,
            readers: relationships.filter_map(tier).collect(),
        })
    }

    /// Whether a side asks this question.
    pub(super) fn asks(&self, side: usize, asked: &Asked) -> bool {
        self.index[side].contains_key(&(asked.row.table, asked.key.as_str()))
    }

    /// A side's answer to a question: its own row's, or, for a table whose
    /// input word may be one the side does not know, its `<any other word>`
    /// row's.
    pub(super) fn lookup(&self, side: usize, Asked { row, key }: &Asked) -> Option<&'d Value> {
        let found = |key: &str| self.index[side].get(&(row.table, key)).copied();
        found(key).or_else(|| {
            let word = row.table.description().reading?;
            let mut other = row.input.clone();
            other
                .0
                .iter_mut()
                .filter(|(k, _)| k == word)
                .for_each(|(_, v)| *v = json!(ANY_OTHER_WORD));
            found(&key_of(&other))
        })
    }

    /// A side's answer in `table` to the one-word question `key: word`.
    fn answer(
        &self,
        side: usize,
        table: Table,
        key: &str,
        word: Option<&str>,
    ) -> Option<&'d Value> {
        let asked = key_of(&Input(vec![(key.to_owned(), json!(word?))]));
        self.index[side].get(&(table, asked.as_str())).copied()
    }

    /// Who reads at `tier`, by the new document's relationships.
    fn readers(&self, tier: Option<&Value>) -> String {
        let Some(tier) = tier.and_then(Value::as_str) else {
            return "viewers with no tier of their own".to_owned();
        };
        let reading = self.readers.iter().filter(|(_, at)| *at == tier);
        let names: Vec<String> = reading
            .map(|(relationship, _)| match *relationship {
                "operator" | "member" | "stranger" => format!("{relationship}s"),
                "anonymous" => "anonymous readers".to_owned(),
                other => format!("{} readers", code(other)),
            })
            .collect();
        match names.as_slice() {
            [] => format!("readers at {}", code(tier)),
            [one] => format!("{one} ({})", code(tier)),
            [init @ .., last] => format!("{} and {last} ({})", init.join(", "), code(tier)),
        }
    }

    /// A tier that rose, by the ranks of each document that ranks both
    /// words, when they agree.
    fn rise(&self, before: Option<&str>, after: Option<&str>) -> Move {
        let (Some(before), Some(after)) = (before, after) else {
            return Move::Other;
        };
        let rank = |side, tier| {
            self.answer(side, Table::LadderRanks, "tier", Some(tier))?
                .as_u64()
        };
        let by = |side| Some(rank(side, after)?.cmp(&rank(side, before)?));
        match (by(0), by(1)) {
            (Some(order), None) | (None, Some(order)) => presence(order.is_lt(), order.is_gt()),
            (Some(old), Some(new)) if old == new => presence(old.is_lt(), old.is_gt()),
            _ => Move::Other,
        }
    }

    fn moves(&self, gain: Gain, old: Option<&Value>, new: Option<&Value>) -> Vec<Move> {
        let (Some(old), Some(new)) = (old, new) else {
            return match gain {
                Gain::Field => vec![presence(old.is_some(), new.is_some())],
                _ => vec![],
            };
        };
        let some = |v: &Value, key| {
            v.get(key)
                .is_some_and(|v| !v.is_null() && v != &json!(false))
        };
        match gain {
            Gain::Neither | Gain::Unlisted => vec![],
            Gain::Rise => vec![self.rise(old.as_str(), new.as_str())],
            Gain::Fall => vec![self.rise(new.as_str(), old.as_str())],
            Gain::Present => vec![presence(old == &json!(true), new == &json!(true))],
            Gain::Field => {
                let tier = |side, v| {
                    self.answer(side, Table::Rungs, "rung", text(v, "tier"))?
                        .get("tier")?
                        .as_str()
                };
                vec![self.rise(tier(1, new), tier(0, old))]
            }
            Gain::Viewer => {
                let own = match (text(old, "tier"), text(new, "tier")) {
                    (Some(_), None) => Move::Gain,
                    (None, Some(_)) => Move::Loss,
                    (before, after) => self.rise(before, after),
                };
                let marks =
                    ["admin", "account_id"].map(|key| presence(some(old, key), some(new, key)));
                vec![own, marks[0], marks[1]]
            }
            Gain::Rung => {
                let minimum = |side, v| {
                    self.answer(side, Table::LadderMinimums, "access", text(v, "access"))?
                        .as_str()
                };
                vec![
                    self.rise(text(new, "tier"), text(old, "tier")),
                    self.rise(minimum(1, new), minimum(0, old)),
                ]
            }
            Gain::Offer | Gain::Follows => {
                let (before, after) = (
                    items(old.get("capabilities")),
                    items(new.get("capabilities")),
                );
                let [gained, lost] = granted(&before, &after);
                vec![
                    presence(false, !gained.is_empty()),
                    presence(!lost.is_empty(), false),
                ]
            }
            Gain::Reason => {
                let offered = |v: &Value| v.get("unavailable_reason").is_some_and(Value::is_null);
                vec![presence(offered(old), offered(new))]
            }
            Gain::Link => match (old.get("Ok"), new.get("Ok")) {
                (Some(before), Some(after)) => {
                    vec![self.rise(text(before, "tier"), text(after, "tier"))]
                }
                (before, after) => vec![presence(before.is_some(), after.is_some())],
            },
        }
    }

    /// A change of `of` asking `input`, its sentence the table's.
    fn change(
        &self,
        of: Table,
        input: Input,
        [old, new]: [Option<&Value>; 2],
        moves: &[Move],
    ) -> Change {
        let description = of.description();
        let says = Said(self, &input, old, new)
            .fill(description.says, variant(description.gain, old, new));
        let class = match (moves.contains(&Move::Gain), moves.contains(&Move::Loss)) {
            (true, _) => Class::Widens,
            (false, true) => Class::Narrows,
            (false, false) => Class::Changes,
        };
        let [old, new] = [old, new].map(|answer| answer.cloned().unwrap_or(Value::Null));
        Change {
            table: of,
            input,
            old,
            new,
            class,
            says,
        }
    }

    /// The changes one question makes, onto `out`: a list answer makes one
    /// per item gained or lost and one for a new order; none past
    /// [`Limit::Changes`].
    pub(super) fn changes(
        &self,
        row: &Row,
        [old, new]: [Option<&Value>; 2],
        out: &mut Vec<Change>,
    ) {
        let (of, Description { list, gain, .. }) = (row.table, row.table.description());
        let Some((item, ordered)) = list else {
            let offered = |v| (get(v, "capabilities"), get(v, "unavailable_reason"));
            let lifecycle_moved = get(old, "lifecycle") != get(new, "lifecycle");
            if gain != Gain::Follows || (lifecycle_moved && offered(old) != offered(new)) {
                out.push(self.change(
                    of,
                    row.input.clone(),
                    [old, new],
                    &self.moves(gain, old, new),
                ));
            }
            return;
        };
        let (before, after) = (items(old), items(new));
        let both = old.is_some() && new.is_some();
        let [gained, lost] = granted(&before, &after);
        let listed = gained.into_iter().map(|word| (word, true));
        for (word, listed) in listed.chain(lost.into_iter().map(|word| (word, false))) {
            if out.len() > Limit::Changes.max() {
                return;
            }
            let mut asked = row.input.clone();
            asked.0.push((item.to_owned(), json!(word)));
            let moves = match gain {
                Gain::Present => [presence(!listed, listed)],
                Gain::Unlisted if both => [presence(listed, !listed)],
                _ => [Move::Other],
            };
            let answers = [json!(!listed), json!(listed)];
            out.push(self.change(of, asked, [Some(&answers[0]), Some(&answers[1])], &moves));
        }
        let shared = |from: &[String], other: &[String]| {
            let other: HashSet<&String> = other.iter().collect();
            from.iter()
                .filter(|word| other.contains(word))
                .cloned()
                .collect::<Vec<_>>()
        };
        if ordered && both && shared(&before, &after) != shared(&after, &before) {
            let mut asked = row.input.clone();
            let what = word(asked.0.first().map(|(_, word)| word));
            asked.0.push(("order".to_owned(), json!(true)));
            let mut change = self.change(of, asked, [old, new], &[]);
            change.says = format!("the words of {what} ({}) are in another order", of.as_str());
            out.push(change);
        }
    }
}
