//! Each table of the decision document described once ([`describe`]): the
//! input word a document may not know, whether its answer is a list of
//! words, who gains when its answer moves ([`Gain`]), and its sentence.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::{code, Change, Class, Limit};
use crate::fingerprint::{Input, Table};

/// How one table is read, classed and said.
pub(super) struct Description {
    /// The input word a document may not know: a question one side lacks is
    /// answered by that side's row with `<any other word>` in its place.
    pub(super) reading: Option<&'static str>,
    /// For a list answer: what one item is called, and whether the list's
    /// order is itself an answer.
    list: Option<(&'static str, bool)>,
    gain: Gain,
    /// The sentence ([`Said::fill`]): for a `true` answer (an item listed),
    /// then `|` and for `false`, then `|` and for none.
    says: &'static str,
}

/// Who gains when an answer moves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gain {
    /// No one, by this answer alone.
    Neither,
    /// A higher tier.
    Rise,
    /// A lower tier (a minimum).
    Fall,
    /// `true` (an item listed) where it was `false`.
    Present,
    /// An item leaving the list, when both documents have the list.
    Unlisted,
    /// A field newly scheduled, or from a lower rung.
    Field,
    /// A viewer's own tier risen or gone (none clamps nothing), the operator
    /// mark, an account.
    Viewer,
    /// A rung's lower tier or lower access minimum.
    Rung,
    /// A capability granted.
    Offer,
    /// As `Offer`, said only where the seam's lifecycle moved: what follows
    /// from a substrate word (the seams tables say the rest).
    Follows,
    /// An unavailable reason gone: `start` offered.
    Reason,
    /// A link minted, or at a higher tier.
    Link,
}

/// The sentences' words: `{word}` the input word so named, `{a.b}` two
/// input words as one, `{old.f}` and `{new.f}` a field of an answer,
/// `{was}` the new answer and the old, `{flag?yes:no}` by an input flag,
/// and each upper-case name what [`Said::named`] says.
#[rustfmt::skip]
pub(super) fn describe(of: Table) -> Description {
    use Gain::{Fall, Field, Follows, Link, Neither, Offer, Present, Reason, Rise, Rung, Unlisted, Viewer};
    use Table as T;
    let (reading, list, gain, says) = match of {
        T::Vocabularies => (None, Some(("word", true)), Neither, "the {vocabulary} vocabulary gained the word {word}|the {vocabulary} vocabulary lost the word {word}"),
        T::ScheduleFields => (None, None, Field, "{family.field} is newly scheduled, from {new.tier} (column {new.column})|{family.field} is no longer scheduled (was from {old.tier})|{family.field} is now disclosed from {new.tier} (was {old.tier})|{family.field} is now read from column {new.column} (was {old.column})|{family.field} is now {was}"),
        T::ScheduleNever => (None, Some(("column", true)), Unlisted, "{family.column} is now on the never list|{family.column} left the never list"),
        T::ScheduleSourceColumns => (None, Some(("column", false)), Present, "the schedule now reads column {family.column}|the schedule no longer reads column {family.column}"),
        T::ScheduleFieldsAt => (None, Some(("field", false)), Present, "{READERS} now see {family.field}|{READERS} no longer see {family.field}"),
        T::Relationships => (None, None, Viewer, "a {relationship} reader now reads at {new.tier} (was {old.tier})|a {relationship} reader is now described as {was}"),
        T::Rungs => (None, None, Rung, "the {rung} rung is now {was}"),
        T::LadderRanks => (None, None, Neither, "{tier}'s rank is now {was}"),
        T::LadderNamed => (Some("tier_word"), None, Rise, "the tier word {tier_word} now names {was}"),
        T::LadderMinimums => (Some("access"), None, Fall, "{access} access now needs {was}"),
        T::LadderViewers => (None, None, Viewer, "the viewer {viewer} is now read as {was}"),
        T::LadderClamp => (None, None, Rise, "{viewer} now clamps {tier} to {was}"),
        T::LadderEffective => (None, None, Rise, "{viewer} now reads {subject} at {was}"),
        T::LadderAllows => (Some("access"), None, Present, "{viewer} may now have {access} access to {subject}|{viewer} may no longer have {access} access to {subject}|{viewer}'s {access} access to {subject} is not answered"),
        T::LadderRecords => (None, None, Rise, "{viewer} now reads the record {record} at {was}"),
        T::LifecyclesBoxStates => (Some("box_state"), None, Neither, "a Box in {box_state} now reads {was}"),
        T::LifecyclesRunStates => (Some("run_state"), None, Neither, "a Box run in {run_state} now reads {was}"),
        T::LifecyclesJobStatuses => (Some("job_status"), None, Neither, "a work job in {job_status} now reads {was}"),
        T::LifecyclesMachines => (Some("status"), None, Neither, "{COMPUTER} now reads {was}"),
        T::CapabilitiesBoxStates => (Some("box_state"), None, Follows, "a caller {REACH} on a Box in {box_state} {OFFER}"),
        T::CapabilitiesRunStates => (Some("run_state"), None, Follows, "a caller on a Box run in {run_state} {OFFER}"),
        T::CapabilitiesJobStatuses => (Some("job_status"), None, Follows, "a caller on a work job in {job_status} {OFFER}"),
        T::CapabilitiesMachines => (Some("status"), None, Follows, "a caller {REACH} on {COMPUTER} {OFFER}"),
        T::SeamsKinds => (None, None, Neither, "a {kind} is now {was}"),
        T::SeamsUnavailable => (None, None, Reason, "a {lifecycle} target now offers `start` to a caller {REACH} (it was refused as {old.unavailable_reason})|a {lifecycle} target no longer offers `start` to a caller {REACH} (it is refused as {new.unavailable_reason})|a {lifecycle} target, for a caller {REACH}, is now refused as {new.unavailable_reason} (was {old.unavailable_reason})|a {lifecycle} target, for a caller {REACH}, is answered by one document only: {was}"),
        T::SeamsSeams => (None, None, Offer, "a caller {REACH} on a {kind} that is {lifecycle} {OFFER}{NOTE}"),
        T::SeamsDelegationSeams => (None, None, Offer, "a caller on a {lifecycle} delegation {OFFER}"),
        T::SeamsOffered => (None, None, Present, "some seam now offers {capability}|no seam offers {capability} any more"),
        T::Links => (None, None, Link, "an attempt in a repository {repository_id?with an id:with no id} by {PRINCIPAL}, {principal_id?with an id:with no id}, now gets {LINK}"),
    };
    Description { reading, list, gain, says }
}

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
    let all = value
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let text = |item: &Value| {
        item.as_str()
            .map_or_else(|| item.to_string(), str::to_owned)
    };
    all.iter().map(text).collect()
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
        let now = if new.is_some() { "now" } else { "no longer" };
        return format!("is {now} answered");
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

/// One change, for its sentence.
struct Said<'a> {
    context: &'a Context<'a>,
    input: &'a Input,
    old: Option<&'a Value>,
    new: Option<&'a Value>,
}

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
        let (old, new, input) = (self.old, self.new, self.input);
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
            "READERS" => self.context.readers(input.get("viewer_tier")),
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

type Rows = [(Table, Input, Value, String)];

/// What the sentences and classes read across tables: each document's tier
/// ranks, rung tiers and access minimums, and who reads at each tier.
pub(super) struct Context<'d> {
    ranks: [HashMap<&'d str, u64>; 2],
    rungs: [HashMap<&'d str, &'d str>; 2],
    minimums: [HashMap<&'d str, &'d str>; 2],
    readers: Vec<(&'d str, &'d str)>,
}

/// `(input word, answer or its field)` of one table's rows, in order.
fn pairs<'d>(
    rows: &'d Rows,
    of: Table,
    key: &str,
    field: Option<&str>,
) -> Vec<(&'d str, &'d Value)> {
    let rows = rows.iter().filter(|row| row.0 == of);
    let rows = rows.filter_map(|(_, input, value, _)| {
        let value = field.map_or(Some(value), |field| value.get(field))?;
        Some((input.get(key)?.as_str()?, value))
    });
    rows.collect()
}

fn words<'d>(rows: &'d Rows, of: Table, key: &str, field: Option<&str>) -> Vec<(&'d str, &'d str)> {
    let pairs = pairs(rows, of, key, field).into_iter();
    pairs
        .filter_map(|(word, answer)| Some((word, answer.as_str()?)))
        .collect()
}

impl<'d> Context<'d> {
    pub(super) fn new(old: &'d Rows, new: &'d Rows) -> Self {
        let ranks = |rows| {
            let ranks = pairs(rows, Table::LadderRanks, "tier", None).into_iter();
            ranks
                .filter_map(|(tier, rank)| Some((tier, rank.as_u64()?)))
                .collect()
        };
        let map = |rows, of, key, field| words(rows, of, key, field).into_iter().collect();
        Self {
            ranks: [ranks(old), ranks(new)],
            rungs: [old, new].map(|rows| map(rows, Table::Rungs, "rung", Some("tier"))),
            minimums: [old, new].map(|rows| map(rows, Table::LadderMinimums, "access", None)),
            readers: words(new, Table::Relationships, "relationship", Some("tier")),
        }
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
        let by = |ranks: &HashMap<&str, u64>| Some(ranks.get(after)?.cmp(ranks.get(before)?));
        match (by(&self.ranks[0]), by(&self.ranks[1])) {
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
                let tier = |side: usize, v| self.rungs[side].get(text(v, "tier")?).copied();
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
                let minimum = |side: usize, v| self.minimums[side].get(text(v, "access")?).copied();
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
        let description = describe(of);
        let said = Said {
            context: self,
            input: &input,
            old,
            new,
        };
        let says = said.fill(description.says, variant(description.gain, old, new));
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
        of: Table,
        input: &Input,
        [old, new]: [Option<&Value>; 2],
        out: &mut Vec<Change>,
    ) {
        let Description { list, gain, .. } = describe(of);
        let Some((item, ordered)) = list else {
            let offered = |v| (get(v, "capabilities"), get(v, "unavailable_reason"));
            let lifecycle_moved = get(old, "lifecycle") != get(new, "lifecycle");
            if gain != Gain::Follows || (lifecycle_moved && offered(old) != offered(new)) {
                out.push(self.change(of, input.clone(), [old, new], &self.moves(gain, old, new)));
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
            let mut asked = input.clone();
            asked.0.push((item.to_owned(), json!(word)));
            let moves = match gain {
                Gain::Present => [presence(!listed, listed)],
                Gain::Unlisted if both => [presence(listed, !listed)],
                _ => [Move::Other],
            };
            out.push(self.change(
                of,
                asked,
                [Some(&json!(!listed)), Some(&json!(listed))],
                &moves,
            ));
        }
        let shared = |from: &[String], other: &[String]| -> Vec<String> {
            let other: HashSet<&String> = other.iter().collect();
            from.iter()
                .filter(|word| other.contains(word))
                .cloned()
                .collect()
        };
        if ordered && both && shared(&before, &after) != shared(&after, &before) {
            let mut asked = input.clone();
            let what = word(asked.0.first().map(|(_, word)| word));
            asked.0.push(("order".to_owned(), json!(true)));
            let says = format!("the words of {what} ({}) are in another order", of.as_str());
            out.push(Change {
                says,
                ..self.change(of, asked, [old, new], &[])
            });
        }
    }
}
