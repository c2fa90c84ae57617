//! The join's two documents, indexed ([`Context`]), and each change made of
//! its table's description ([`Table::description`]): who gains by the move
//! of an answer, one change per item of a list, and the sentence filled.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::{code, key_of, Asked, Change, Class, DocumentRefusal, Limit, Side};
use crate::fingerprint::{Description, Gain, Input, Row, Table, ANY_OTHER_WORD};

/// Whether some reader or caller gains by a change, and whether one loses.
type Moved = [bool; 2];

const STILL: Moved = [false; 2];

/// A list item's answers: not listed, listed.
static LISTED: [Value; 2] = [Value::Bool(false), Value::Bool(true)];

/// A thing had `before` and has `after`: gained, or lost.
const fn presence(before: bool, after: bool) -> Moved {
    [after && !before, before && !after]
}

const fn either([gains, loses]: Moved, [more, less]: Moved) -> Moved {
    [gains || more, loses || less]
}

fn get<'v>(value: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    value?.get(key)
}

fn text<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key)?.as_str()
}

/// A word of a document, as the sentences write it: a code span.
fn word(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => code(text),
        other => code(&other.map_or_else(|| "-".to_owned(), Value::to_string)),
    }
}

/// "`new` (was `old`)".
fn was(old: Option<&Value>, new: Option<&Value>) -> String {
    format!("{} (was {})", word(new), word(old))
}

/// The words of a list answer, by their text.
fn items(value: Option<&Value>) -> Vec<String> {
    let text = |item: &Value| {
        item.as_str()
            .map_or_else(|| item.to_string(), str::to_owned)
    };
    let all = value.and_then(Value::as_array).into_iter().flatten();
    all.map(text).collect()
}

/// The words of `from` that `other` has (`has`) or lacks, in `from`'s order.
fn among<'w>(from: &'w [String], other: &[String], has: bool) -> Vec<&'w String> {
    let other: HashSet<&String> = other.iter().collect();
    from.iter().filter(|w| other.contains(w) == has).collect()
}

/// The words a list gained, then those it lost.
fn gained<'w>(before: &'w [String], after: &'w [String]) -> [Vec<&'w String>; 2] {
    [among(after, before, false), among(before, after, false)]
}

/// The capabilities a seam gained, then those it lost.
fn granted(old: &Value, new: &Value) -> [Vec<String>; 2] {
    let [before, after] = [old, new].map(|v| items(v.get("capabilities")));
    gained(&before, &after).map(|words| words.into_iter().map(|w| code(w)).collect())
}

/// What a caller of a seam gains or loses, in words.
fn offer(old: Option<&Value>, new: Option<&Value>) -> String {
    let (Some(old), Some(new)) = (old, new) else {
        return format!(
            "is {} answered",
            ["no longer", "now"][usize::from(new.is_some())]
        );
    };
    let verbs = ["may now", "may no longer"]
        .into_iter()
        .zip(granted(old, new));
    let said: Vec<String> = verbs
        .filter(|(_, words)| !words.is_empty())
        .map(|(verb, words)| format!("{verb} {}", words.join(", ")))
        .collect();
    let said = said.join(" and ");
    let [old, new] = [old, new].map(|v| v.get("unavailable_reason").filter(|r| !r.is_null()));
    match (old, new) {
        (Some(_), None) => format!("{said} (it was refused as {})", word(old)),
        (None, Some(_)) => format!("{said} (it is now refused as {})", word(new)),
        (Some(_), Some(_)) if old != new && said.is_empty() => {
            format!("is now refused as {}", was(old, new))
        }
        (Some(_), Some(_)) if old != new => {
            format!("{said} (now refused as {}, was {})", word(new), word(old))
        }
        _ if said.is_empty() => "is answered otherwise".to_owned(),
        _ => said,
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
        for (side, document) in [Side::Old, Side::New].into_iter().zip(documents) {
            for Asked { row, key } in document {
                if index[side as usize]
                    .insert((row.table, key), &row.answer)
                    .is_some()
                {
                    let why = format!("two rows of {} ask {key}", row.table.as_str());
                    return Err(DocumentRefusal::NotADocument { side, why });
                }
            }
        }
        let reader = |Asked { row, .. }: &'d Asked| match row.table {
            Table::Relationships => Some((
                row.input.get("relationship")?.as_str()?,
                text(&row.answer, "tier")?,
            )),
            _ => None,
        };
        let readers = documents[1].iter().filter_map(reader).collect();
        Ok(Self { index, readers })
    }

    fn find(&self, side: Side, table: Table, key: &str) -> Option<&'d Value> {
        self.index[side as usize].get(&(table, key)).copied()
    }

    /// Whether a side asks this question.
    pub(super) fn asks(&self, side: Side, asked: &Asked) -> bool {
        self.find(side, asked.row.table, &asked.key).is_some()
    }

    /// A side's answer to a question: its own row's, or, for a table whose
    /// input word may be one the side does not know, its `<any other word>`
    /// row's.
    pub(super) fn lookup(&self, side: Side, Asked { row, key }: &Asked) -> Option<&'d Value> {
        self.find(side, row.table, key).or_else(|| {
            let reading = row.table.description().reading?;
            let mut other = row.input.clone();
            let words = other.0.iter_mut().filter(|(name, _)| name == reading);
            words.for_each(|(_, word)| *word = json!(ANY_OTHER_WORD));
            self.find(side, row.table, &key_of(&other))
        })
    }

    /// A side's answer in `table` to the one-word question `name: word`.
    fn answer(
        &self,
        side: Side,
        table: Table,
        name: &str,
        word: Option<&str>,
    ) -> Option<&'d Value> {
        self.find(side, table, &json!({ name: word? }).to_string())
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
    fn rise(&self, before: Option<&str>, after: Option<&str>) -> Moved {
        let rank = |side, tier| {
            self.answer(side, Table::LadderRanks, "tier", tier)?
                .as_u64()
        };
        let by = |side| Some(rank(side, after)?.cmp(&rank(side, before)?));
        match (by(Side::Old), by(Side::New)) {
            (Some(order), None) | (None, Some(order)) => [order.is_gt(), order.is_lt()],
            (Some(old), Some(new)) if old == new => [old.is_gt(), old.is_lt()],
            _ => STILL,
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
        let (table, Description { list, gain, .. }) = (row.table, row.table.description());
        let asking = |input, old, new| Asking {
            context: self,
            table,
            input,
            old,
            new,
        };
        let Some((item, ordered)) = list else {
            // What follows from a substrate word is said only where its
            // lifecycle moved: the seams tables say the rest.
            let offered = |v| (get(v, "capabilities"), get(v, "unavailable_reason"));
            let lifecycle_moved = get(old, "lifecycle") != get(new, "lifecycle");
            if gain != Gain::Follows || (lifecycle_moved && offered(old) != offered(new)) {
                let asking = asking(row.input.clone(), old, new);
                let moved = asking.moved(gain);
                out.push(asking.change(moved));
            }
            return;
        };
        let ([before, after], both) = ([old, new].map(items), old.is_some() && new.is_some());
        let [listed, unlisted] = gained(&before, &after);
        let words = listed.into_iter().map(|word| (word, true));
        for (word, listed) in words.chain(unlisted.into_iter().map(|word| (word, false))) {
            if out.len() > Limit::Changes.max() {
                return;
            }
            let mut input = row.input.clone();
            input.0.push((item.to_owned(), json!(word)));
            let moved = match gain {
                Gain::Present => presence(!listed, listed),
                Gain::Unlisted if both => presence(listed, !listed),
                _ => STILL,
            };
            let [old, new] = [!listed, listed].map(|is| &LISTED[usize::from(is)]);
            out.push(asking(input, Some(old), Some(new)).change(moved));
        }
        if ordered && both && among(&before, &after, true) != among(&after, &before, true) {
            let mut input = row.input.clone();
            let what = word(input.0.first().map(|(_, word)| word));
            input.0.push(("order".to_owned(), json!(true)));
            let mut change = asking(input, old, new).change(STILL);
            change.says = format!(
                "the words of {what} ({}) are in another order",
                table.as_str()
            );
            out.push(change);
        }
    }
}

/// One question of a table, its two answers, and both documents: what a
/// change is made of.
struct Asking<'a> {
    context: &'a Context<'a>,
    table: Table,
    input: Input,
    old: Option<&'a Value>,
    new: Option<&'a Value>,
}

impl Asking<'_> {
    /// The change, classed by `moved`, its sentence the table's.
    fn change(self, [gains, loses]: Moved) -> Change {
        let says = self.fill(self.table.description().says, self.variant());
        let class = match (gains, loses) {
            (true, _) => Class::Widens,
            (false, true) => Class::Narrows,
            (false, false) => Class::Changes,
        };
        let [old, new] = [self.old, self.new].map(|answer| answer.cloned().unwrap_or(Value::Null));
        let Self { table, input, .. } = self;
        Change {
            table,
            input,
            old,
            new,
            class,
            says,
        }
    }

    /// Who gains and who loses as the answer moves, by its table's [`Gain`].
    fn moved(&self, gain: Gain) -> Moved {
        let Self { context, .. } = *self;
        let (Some(old), Some(new)) = (self.old, self.new) else {
            let field = gain == Gain::Field;
            return presence(field && self.old.is_some(), field && self.new.is_some());
        };
        let some = |v: &Value, key| {
            v.get(key)
                .is_some_and(|v| !v.is_null() && v.as_bool() != Some(false))
        };
        let tier = |v| text(v, "tier");
        // The tier a rung (its answer's) or an access (its minimum) names,
        // in each side's own document: the lower, the wider.
        let via = |table, name, key| {
            let at = |side, v| {
                let answer = context.answer(side, table, name, text(v, key))?;
                answer.get("tier").unwrap_or(answer).as_str()
            };
            context.rise(at(Side::New, new), at(Side::Old, old))
        };
        match gain {
            Gain::Neither | Gain::Unlisted => STILL,
            Gain::Rise => context.rise(old.as_str(), new.as_str()),
            Gain::Fall => context.rise(new.as_str(), old.as_str()),
            Gain::Present => presence(old.as_bool() == Some(true), new.as_bool() == Some(true)),
            Gain::Field => via(Table::Rungs, "rung", "tier"),
            Gain::Viewer => {
                let own = match (tier(old), tier(new)) {
                    (Some(_), None) => [true, false],
                    (None, Some(_)) => [false, true],
                    (before, after) => context.rise(before, after),
                };
                let marks =
                    ["admin", "account_id"].map(|key| presence(some(old, key), some(new, key)));
                marks.into_iter().fold(own, either)
            }
            Gain::Rung => either(
                context.rise(tier(new), tier(old)),
                via(Table::LadderMinimums, "access", "access"),
            ),
            Gain::Offer | Gain::Follows => granted(old, new).map(|words| !words.is_empty()),
            Gain::Reason => {
                let offered = |v: &Value| v.get("unavailable_reason").is_some_and(Value::is_null);
                presence(offered(old), offered(new))
            }
            Gain::Link => match (old.get("Ok"), new.get("Ok")) {
                (Some(before), Some(after)) => context.rise(tier(before), tier(after)),
                (before, after) => presence(before.is_some(), after.is_some()),
            },
        }
    }

    /// Which of the table's sentences the change reads: for a list item or
    /// a `true`/`false`/no answer, in that order; for a field, newly
    /// scheduled, unscheduled, another rung, another column, else; for a
    /// reason, `start` now offered, no longer, another reason, one side
    /// only; for a viewer descriptor, another tier, else.
    fn variant(&self) -> usize {
        let (old, new) = (self.old, self.new);
        let moved = |key| usize::from(get(old, key) != get(new, key));
        let offers = |v| get(v, "unavailable_reason").map(Value::is_null);
        match (self.table.description().gain, old, new) {
            (Gain::Field, None, _) => 0,
            (Gain::Field, _, None) => 1,
            (Gain::Field, ..) => [[4, 3], [2, 4]][moved("tier")][moved("column")],
            (Gain::Reason, ..) => match (offers(old), offers(new)) {
                (Some(false), Some(true)) => 0,
                (Some(true), Some(false)) => 1,
                (Some(_), Some(_)) => 2,
                _ => 3,
            },
            (Gain::Viewer, Some(_), Some(_)) => 1 - moved("tier"),
            (_, _, Some(Value::Bool(false))) => 1,
            (_, _, None) => 2,
            _ => 0,
        }
    }

    /// The sentence `variant` of `template`, its words filled.
    fn fill(&self, template: &str, variant: usize) -> String {
        let variants: Vec<&str> = template.split('|').collect();
        let mut rest = variants[variant.min(variants.len() - 1)];
        let mut out = String::new();
        while let Some((before, after)) = rest.split_once('{') {
            let (name, after) = after.split_once('}').unwrap_or((after, ""));
            out = out + before + &self.phrase(name);
            rest = after;
        }
        out + rest
    }

    /// One word of a sentence (see [`Table::description`]).
    fn phrase(&self, name: &str) -> String {
        let Self {
            input, old, new, ..
        } = self;
        let (old, new) = (*old, *new);
        if let Some((flag, said)) = name.split_once('?') {
            let (yes, no) = said.split_once(':').unwrap_or((said, ""));
            let set = input.get(flag) == Some(&json!(true));
            return (if set { yes } else { no }).to_owned();
        }
        let text = |key| input.get(key).and_then(Value::as_str).unwrap_or("-");
        let seam = |v| ["custody", "runtime_class", "lifecycle"].map(|key| get(v, key));
        match name.split_once('.') {
            Some(("old", field)) => word(get(old, field)),
            Some(("new", field)) => word(get(new, field)),
            Some((first, second)) => code(&format!("{}.{}", text(first), text(second))),
            None => match name {
                "was" => was(old, new),
                "OFFER" => offer(old, new),
                "READERS" => self.context.readers(input.get("viewer_tier")),
                "REACH" => match text("reach") {
                    "authorized" => "with reach".to_owned(),
                    "not_authorized" => "without reach".to_owned(),
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
            },
        }
    }
}
