//! Both documents, indexed ([`Context`]), and what each change is: one
//! `match` on its table says who gains or loses by it ([`Class`]) and in
//! which words.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::{code, Asked, Change, Class, DocumentRefusal, Output, Side};
use crate::diff::key_of;
use crate::document::{Input, Row, Table, ANY_OTHER_WORD};

/// A question's answers, old then new.
type Answers<'v> = [Option<&'v Value>; 2];

/// Each question's answer, by table and key.
type Index<'d> = HashMap<(Table, &'d str), &'d Value>;

/// Both documents, indexed: what the join and the classes read, and who
/// reads at each tier by the new document.
pub(super) struct Context<'d> {
    index: [Index<'d>; 2],
    /// The new document's relationships: (the rank of the tier each reads
    /// at, how a sentence names its readers), by rank.
    readers: Vec<(u64, String)>,
}

/// A word of a document, as the sentences write it: a code span, or "no
/// answer" for none.
pub(super) fn word(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => code(text),
        Some(other) => code(&other.to_string()),
        None => "no answer".to_owned(),
    }
}

fn was(old: Option<&Value>, new: Option<&Value>) -> String {
    format!("{} (was {})", word(new), word(old))
}

fn get<'v>(value: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    value?.get(key)
}

fn tier_of(value: &Value) -> Option<&str> {
    value.get("tier")?.as_str()
}

fn text<'i>(input: &'i Input, key: &str) -> &'i str {
    input.get(key).and_then(Value::as_str).unwrap_or("-")
}

fn flag(input: &Input, key: &str) -> bool {
    input.get(key) == Some(&Value::Bool(true))
}

fn items(value: Option<&Value>) -> Vec<String> {
    let text = |item: &Value| item.as_str().map_or_else(|| item.to_string(), str::to_owned);
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

/// What a caller of a seam gains or loses, in words, classed: a capability
/// granted widens, one taken narrows.
fn offer(old: Option<&Value>, new: Option<&Value>) -> (Class, String) {
    let (Some(old), Some(new)) = (old, new) else {
        let says = if new.is_some() {
            format!("is now answered: {}", word(new))
        } else {
            format!("is no longer answered (was {})", word(old))
        };
        return (Class::Changes, says);
    };
    let [before, after] = [old, new].map(|v| items(v.get("capabilities")));
    let [more, fewer] = gained(&before, &after);
    let class = Class::of(!more.is_empty(), !fewer.is_empty());
    let said =
        [("may now", more), ("may no longer", fewer)].into_iter().filter(|(_, w)| !w.is_empty());
    let said = said.map(|(verb, words)| {
        format!("{verb} {}", words.into_iter().map(|w| code(w)).collect::<Vec<_>>().join(", "))
    });
    let said = said.collect::<Vec<_>>().join(" and ");
    let [old, new] = [old, new].map(|v| v.get("unavailable_reason").filter(|r| !r.is_null()));
    let says = match (old, new) {
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
    };
    (class, says)
}

fn reach(input: &Input) -> String {
    match text(input, "reach") {
        "authorized" => "with reach".to_owned(),
        "not_authorized" => "without reach".to_owned(),
        _ => format!("with reach {}", word(input.get("reach"))),
    }
}

/// What a substrate row is about, as its input describes it.
fn substrate(table: Table, input: &Input) -> String {
    let (what, key) = match table {
        Table::LifecyclesBoxStates | Table::CapabilitiesBoxStates => ("a Box", "box_state"),
        Table::LifecyclesRunStates | Table::CapabilitiesRunStates => ("a Box run", "run_state"),
        Table::LifecyclesJobStatuses | Table::CapabilitiesJobStatuses => {
            ("a work job", "job_status")
        }
        _ => {
            let revoked = if flag(input, "revoked") { "revoked" } else { "not revoked" };
            let online = if flag(input, "online") { "online" } else { "offline" };
            let status = word(input.get("status"));
            return format!("a Computer with status {status}, {revoked}, {online}");
        }
    };
    format!("{what} in {}", word(input.get(key)))
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

/// The class of a tier's move ([`Context::rise`]).
fn classed(rise: Option<[bool; 2]>) -> Class {
    rise.map_or(Class::Unclassed, |[gains, loses]| Class::of(gains, loses))
}

impl<'d> Context<'d> {
    /// Both documents indexed, or the refusal of one that asks a question
    /// twice.
    pub(super) fn new(documents: [&'d [Asked]; 2]) -> Result<Self, DocumentRefusal> {
        let mut index = [Index::new(), Index::new()];
        for (side, document) in [Side::Old, Side::New].into_iter().zip(documents) {
            for Asked { row, key } in document {
                if index[side as usize].insert((row.table, key), &row.answer).is_some() {
                    let why = format!("two rows of {} ask {key}", row.table.as_str());
                    return Err(DocumentRefusal::NotADocument { side, why });
                }
            }
        }
        let mut context = Self { index, readers: Vec::new() };
        let reader = |Asked { row, .. }: &Asked| {
            let relationship = row.input.get("relationship")?.as_str()?;
            let rank = context.rank(Side::New, row.answer.get("tier")?.as_str())?;
            let name = match relationship {
                "operator" | "member" | "stranger" => format!("{relationship}s"),
                "anonymous" => "anonymous readers".to_owned(),
                other => format!("{} readers", code(other)),
            };
            Some((rank, name))
        };
        let relationships = documents[1].iter().filter(|a| a.row.table == Table::Relationships);
        context.readers = relationships.filter_map(reader).collect();
        context.readers.sort_by_key(|(rank, _)| *rank);
        Ok(context)
    }

    fn find(&self, side: Side, table: Table, key: &str) -> Option<&'d Value> {
        self.index[side as usize].get(&(table, key)).copied()
    }

    pub(super) fn asks(&self, side: Side, asked: &Asked) -> bool {
        self.find(side, asked.row.table, &asked.key).is_some()
    }

    /// A side's answer to a question: its own row's, or, for a table whose
    /// input word may be one the side does not know, its `<any other word>`
    /// row's.
    pub(super) fn lookup(&self, side: Side, Asked { row, key }: &Asked) -> Option<&'d Value> {
        self.find(side, row.table, key).or_else(|| {
            let drawn = row.table.drawn().iter().find(|drawn| drawn.any_other_word)?;
            let mut other = row.input.clone();
            *other.get_mut(drawn.key)? = json!(ANY_OTHER_WORD);
            self.find(side, row.table, &key_of(&other))
        })
    }

    /// A side's answer in `table` to the one-word question `key: word`.
    fn answer(&self, side: Side, table: Table, key: &str, word: Option<&str>) -> Option<&'d Value> {
        self.find(side, table, &json!({ key: word? }).to_string())
    }

    /// A tier's rank, by a side's `ladder.ranks`.
    fn rank(&self, side: Side, tier: Option<&str>) -> Option<u64> {
        self.answer(side, Table::LadderRanks, "tier", tier)?.as_u64()
    }

    /// The tier a rung word stands at, by a side's `rungs`.
    fn rung(&self, side: Side, rung: Option<&Value>) -> Option<&'d str> {
        let rung = rung.and_then(Value::as_str);
        self.answer(side, Table::Rungs, "rung", rung)?.get("tier")?.as_str()
    }

    /// Whether a tier rose (`[true, false]`) or fell from `before` to `after`,
    /// by the ranks of each document that ranks both words; `None` when none
    /// can tell or the two disagree (a change the diff cannot class).
    fn rise(&self, before: Option<&str>, after: Option<&str>) -> Option<[bool; 2]> {
        let by = |side| Some(self.rank(side, after)?.cmp(&self.rank(side, before)?));
        match (by(Side::Old), by(Side::New)) {
            (Some(order), None) | (None, Some(order)) => Some([order.is_gt(), order.is_lt()]),
            (Some(old), Some(new)) if old == new => Some([old.is_gt(), old.is_lt()]),
            _ => None,
        }
    }

    /// ": `a`, `b` and `c` {verb} see it", naming the new document's readers
    /// at a tier ranked in `from..to`; nothing when there are none.
    fn readers(&self, from: Option<u64>, to: Option<u64>, verb: &str) -> String {
        let Some(from) = from else {
            return String::new();
        };
        let at = |to| self.readers.partition_point(|(rank, _)| *rank < to);
        let (start, end) = (at(from), to.map_or(self.readers.len(), at));
        let names: Vec<&str> =
            self.readers[start..end.max(start)].iter().map(|(_, name)| name.as_str()).collect();
        let names = match names.split_last() {
            None => return String::new(),
            Some((last, [])) => (*last).to_owned(),
            Some((last, init)) => format!("{} and {last}", init.join(", ")),
        };
        format!(": {names} {verb} see it")
    }

    /// The changes one question makes, onto `out`.
    pub(super) fn changes(
        &self,
        row: &Row,
        [old, new]: Answers<'_>,
        out: &mut Output,
    ) -> Result<(), DocumentRefusal> {
        let (table, input) = (row.table, &row.input);
        let (at, was) = (|key| word(input.get(key)), was(old, new));
        // A tier risen widens, fallen narrows, by the ranks both documents agree on.
        let tier_class = |old: Option<&Value>, new: Option<&Value>| {
            classed(self.rise(old.and_then(Value::as_str), new.and_then(Value::as_str)))
        };
        let (class, says) = match table {
            Table::Vocabularies | Table::ScheduleNever => return Self::list(row, [old, new], out),
            Table::ScheduleFields => self.field(input, [old, new]),
            Table::ScheduleReasons => {
                let key = if input.contains_key("field") { "field" } else { "column" };
                let name = code(&format!("{}.{}", text(input, "family"), text(input, key)));
                (Class::Words, format!("the reason for {name} now reads {was}"))
            }
            Table::Relationships => {
                let (class, how) = self.viewer(old, new);
                (class, format!("a {} reader {how}", at("relationship")))
            }
            Table::Rungs => self.rung_moved(input, [old, new]),
            Table::LadderRanks => (Class::Changes, format!("{} now ranks {was}", at("tier"))),
            Table::LadderNamed => {
                (tier_class(old, new), format!("the tier word {} now names {was}", at("tier_word")))
            }
            // A lower minimum widens.
            Table::LadderMinimums => {
                (tier_class(new, old), format!("{} access now needs {was}", at("access")))
            }
            Table::LadderViewers => {
                let (class, how) = self.viewer(old, new);
                (class, format!("the viewer {} {how}", at("viewer")))
            }
            Table::LadderEffective => (
                tier_class(old, new),
                format!("{} now reads {} at {was}", at("viewer"), at("subject")),
            ),
            Table::LadderRecords => {
                let (viewer, record) = (at("viewer"), at("record"));
                (tier_class(old, new), format!("{viewer} now reads the record {record} at {was}"))
            }
            // No one gains or loses by a lifecycle alone.
            Table::LifecyclesBoxStates
            | Table::LifecyclesRunStates
            | Table::LifecyclesJobStatuses
            | Table::LifecyclesMachines => {
                (Class::Changes, format!("{} now reads {was}", substrate(table, input)))
            }
            Table::LifecyclesEnded => {
                let counts = match new {
                    Some(Value::Bool(true)) => "now counts as ended".to_owned(),
                    Some(Value::Bool(false)) => "now counts as under way".to_owned(),
                    _ => format!("is now answered {was}"),
                };
                (Class::Changes, format!("a {} delegation {counts}", at("lifecycle")))
            }
            // What follows from a substrate word, said only where its
            // lifecycle moved: the seams tables say the rest.
            Table::CapabilitiesBoxStates
            | Table::CapabilitiesRunStates
            | Table::CapabilitiesJobStatuses
            | Table::CapabilitiesMachines => {
                let offered = |v| (get(v, "capabilities"), get(v, "unavailable_reason"));
                if get(old, "lifecycle") == get(new, "lifecycle") || offered(old) == offered(new) {
                    return Ok(());
                }
                let caller = match input.get("reach") {
                    Some(_) => format!("a caller {} on", reach(input)),
                    None => "a caller on".to_owned(),
                };
                let (class, offer) = offer(old, new);
                (class, format!("{caller} {} {offer}", substrate(table, input)))
            }
            Table::SeamsSeams => {
                let seam = |v| ["custody", "runtime_class", "lifecycle"].map(|key| get(v, key));
                let note = if old.is_some() && new.is_some() && seam(old) != seam(new) {
                    format!(" (the seam now reads {})", word(new))
                } else {
                    String::new()
                };
                let (reach, kind, lifecycle) = (reach(input), at("kind"), at("lifecycle"));
                let (class, offer) = offer(old, new);
                (class, format!("a caller {reach} on a {kind} that is {lifecycle} {offer}{note}"))
            }
            Table::SeamsDelegationSeams => {
                let (class, offer) = offer(old, new);
                (class, format!("a caller on a {} delegation {offer}", at("lifecycle")))
            }
            Table::Links => self.link_moved(input, [old, new]),
        };
        let [old, new] = [old, new].map(|answer| answer.cloned().unwrap_or_default());
        out.push(Change { table, input: input.clone(), old, new, class, says })
    }

    /// A rung moved: a lower tier, or an access with a lower minimum, widens.
    fn rung_moved(&self, input: &Input, [old, new]: Answers<'_>) -> (Class, String) {
        let at = |v| get(v, "tier").and_then(Value::as_str);
        let needs = |side, v| {
            let access = get(v, "access").and_then(Value::as_str);
            self.answer(side, Table::LadderMinimums, "access", access)?.as_str()
        };
        let moved =
            (self.rise(at(new), at(old)), self.rise(needs(Side::New, new), needs(Side::Old, old)));
        let class = match moved {
            (Some([lower, higher]), Some([easier, harder])) => {
                Class::of(lower || easier, higher || harder)
            }
            _ => Class::Unclassed,
        };
        let stands = |v| {
            let access = word(get(v, "access"));
            format!("{}, asked through {access} access", word(get(v, "tier")))
        };
        let [rung, new, old] = [word(input.get("rung")), stands(new), stands(old)];
        (class, format!("the {rung} rung is now at {new} (was {old})"))
    }

    /// The link an attempt gets: one where there was none, or at a lower
    /// tier, widens.
    fn link_moved(&self, input: &Input, [old, new]: Answers<'_>) -> (Class, String) {
        let with = |key| if flag(input, key) { "with an id" } else { "with no id" };
        let principal = match input.get("principal_type") {
            Some(Value::Null) | None => "no principal type".to_owned(),
            kind => format!("principal type {}", word(kind)),
        };
        let (repository, id) = (with("repository_id"), with("principal_id"));
        let [now, was] = [new, old].map(link);
        let says = format!(
            "an attempt in a repository {repository} by {principal}, {id}, now gets {now} (was {was})"
        );
        let rise = match (get(old, "Ok"), get(new, "Ok")) {
            (Some(before), Some(after)) => self.rise(tier_of(before), tier_of(after)),
            (before, after) => {
                Some([after.is_some() && before.is_none(), before.is_some() && after.is_none()])
            }
        };
        (classed(rise), says)
    }

    /// A scheduled field: newly, no longer, from another rung or column. Who
    /// gains is by each side's rungs; who is named, the new document's readers.
    fn field(&self, input: &Input, [old, new]: Answers<'_>) -> (Class, String) {
        let name = code(&format!("{}.{}", text(input, "family"), text(input, "field")));
        let [before, after] =
            [(Side::Old, old), (Side::New, new)].map(|(side, v)| self.rung(side, get(v, "tier")));
        let [from, to] = [before, after].map(|tier| self.rank(Side::New, tier));
        match (old, new) {
            (None, _) => {
                let (tier, column) = (word(get(new, "tier")), word(get(new, "column")));
                let readers = self.readers(to, None, "now");
                (
                    Class::Widens,
                    format!("{name} is newly scheduled, from {tier} (column {column}){readers}"),
                )
            }
            (_, None) => {
                let (tier, readers) =
                    (word(get(old, "tier")), self.readers(from, None, "no longer"));
                (
                    Class::Narrows,
                    format!("{name} is no longer scheduled (was from {tier}){readers}"),
                )
            }
            (Some(_), Some(_)) => {
                let said = [("tier", "disclosed from"), ("column", "read from column")].into_iter();
                let said = said.filter(|(key, _)| get(old, key) != get(new, key));
                let said = said.map(|(key, verb)| (verb, was(get(old, key), get(new, key))));
                let mut said: Vec<String> =
                    said.map(|(verb, moved)| format!("is now {verb} {moved}")).collect();
                if said.is_empty() {
                    said.push(format!("is now {}", was(old, new)));
                }
                let Some([gains, loses]) = self.rise(after, before) else {
                    return (Class::Unclassed, format!("{name} {}", said.join(" and ")));
                };
                let readers = match (gains, loses) {
                    (true, _) => self.readers(to, from, "now"),
                    (false, true) => self.readers(from, to, "no longer"),
                    (false, false) => String::new(),
                };
                (Class::of(gains, loses), format!("{name} {}{readers}", said.join(" and ")))
            }
        }
    }

    /// A viewer as read (`{tier, admin, account_id}`): its own tier risen or
    /// gone (none clamps nothing), the operator mark or an account gained, widens.
    fn viewer(&self, old: Option<&Value>, new: Option<&Value>) -> (Class, String) {
        let (Some(before), Some(after)) = (old, new) else {
            return (Class::Changes, format!("is now read as {}", was(old, new)));
        };
        let rise = match (tier_of(before), tier_of(after)) {
            (Some(_), None) => Some([true, false]),
            (None, Some(_)) => Some([false, true]),
            (None, None) => Some([false, false]),
            (before, after) => self.rise(before, after),
        };
        let Some([more, less]) = rise else {
            return (Class::Unclassed, format!("is now read as {}", was(old, new)));
        };
        let set = |v: &Value, key| v.get(key).is_some_and(|v| !v.is_null() && *v != json!(false));
        let marks = ["admin", "account_id"].map(|key| (set(before, key), set(after, key)));
        let gains = more || marks.iter().any(|&(was, is)| is && !was);
        let loses = less || marks.iter().any(|&(was, is)| was && !is);
        let rest = |v: &Value| [v.get("admin").cloned(), v.get("account_id").cloned()];
        let says = if rest(before) == rest(after) {
            let at = |v| tier_of(v).map_or_else(|| "no tier of its own".to_owned(), code);
            format!("now reads at {} (was {})", at(after), at(before))
        } else {
            format!("is now read as {}", was(old, new))
        };
        (Class::of(gains, loses), says)
    }

    /// The changes of a list answer: one per item gained or lost, and one
    /// when the items both lists hold are in another order.
    fn list(row: &Row, [old, new]: Answers<'_>, out: &mut Output) -> Result<(), DocumentRefusal> {
        let never = row.table == Table::ScheduleNever;
        let ([before, after], both) = ([old, new].map(items), old.is_some() && new.is_some());
        let [listed, unlisted] = gained(&before, &after);
        let (item, owner) = if never { ("column", "family") } else { ("word", "vocabulary") };
        let owner = text(&row.input, owner);
        let listed = listed.into_iter().map(|word| (word, true));
        for (word, listed) in listed.chain(unlisted.into_iter().map(|word| (word, false))) {
            let mut input = row.input.clone();
            input.insert(item.to_owned(), json!(word));
            let (class, says) = match (never, listed) {
                (false, true) => (Class::Changes, "gained the word"),
                (false, false) => (Class::Changes, "lost the word"),
                // Onto the never list: a column promised never published.
                (true, true) => (Class::of(false, both), "is now on the never list"),
                (true, false) => (Class::of(both, false), "left the never list"),
            };
            let says = if never {
                format!("{} {says}", code(&format!("{owner}.{word}")))
            } else {
                format!("the {} vocabulary {says} {}", code(owner), code(word))
            };
            let (old, new) = (json!(!listed), json!(listed));
            out.push(Change { table: row.table, input, old, new, class, says })?;
        }
        if both && among(&before, &after, true) != among(&after, &before, true) {
            let mut input = row.input.clone();
            input.insert("order".to_owned(), json!(true));
            let says = if never {
                format!("the never list of {} is in another order", code(owner))
            } else {
                format!("the words of the {} vocabulary are in another order", code(owner))
            };
            let [old, new] = [old, new].map(|answer| answer.cloned().unwrap_or_default());
            out.push(Change { table: row.table, input, old, new, class: Class::Changes, says })?;
        }
        Ok(())
    }
}
