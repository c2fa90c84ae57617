//! Every decision this crate makes over a finite domain, as one document and
//! one digest.
//!
//! A cluster that upgrades one node at a time runs two versions of this crate
//! at once, and a coordinator needs to know whether a node answers every
//! question as the others do, not which version string it reports. The
//! [`Document`] here asks every decision function every question of its
//! finite domain (each vocabulary's `ALL`, every viewer and subject shape),
//! never a second, hand-kept copy of the rules, so a changed rule changes the
//! document and with it the digest.
//!
//! The document is uniform: a list of [`Row`]s, each a [`Table`], an input
//! written in the host's own terms (`%{tier: "ledger", account_id: 1}`,
//! `"provisioned"`) and the answer. [`crate::diff`] joins two documents on
//! (table, input). Account ids only ever compare equal or not, so one owner,
//! one other account and none cover every case; they are written `1`, `2` and
//! `nil`.
//!
//! ```
//! use openagents_policy::fingerprint::{decision_digest, Document};
//! let document = Document::compute()?;
//! assert_eq!(document.digest()?, decision_digest()?);
//! assert_eq!(decision_digest()?.len(), 64);
//! # Ok::<(), openagents_policy::fingerprint::FingerprintError>(())
//! ```

use std::fmt;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};

use crate::disclosure::{self, link_for_attempt, Field, PrincipalReading, Record};
use crate::disclosure::{Relationship, Rung};
use crate::ladder::{self, Access, Link, Subject, Tier, Viewer};
use crate::target::{BoxState, Capability, DelegationLifecycle, DelegationSeam};
use crate::target::{JobStatus, Kind, Lifecycle, MachineObservation, MachineStatus, Reach};
use crate::target::{RunState, Seam, UnavailableReason};
use crate::{Reading, Vocabulary};

/// The version of the document's layout, its first field. A changed rule is
/// the same format and another document; a table added, removed or written
/// another way is a new format. Format 1 (0.1.0's development) wrote one
/// record per table; format 2 writes rows.
pub const FORMAT: u32 = 2;

/// How an input names any word its vocabulary does not have.
pub const ANY_OTHER_WORD: &str = "<any other word>";

/// Why the document or its digest could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FingerprintError {
    /// serde_json refused to write an answer or the document (it cannot for
    /// these types: kept typed rather than assumed).
    #[error("the decision document could not be written as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

macro_rules! tables {
    ($($(#[$doc:meta])* $variant:ident => $name:literal: $reading:expr, $list:expr, $gain:ident, $says:literal,)+) => {
        /// The tables of the document, in its order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum Table { $($(#[$doc])* #[serde(rename = $name)] $variant,)+ }

        impl Table {
            /// Every table, in document order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The table's name in the document.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $name,)+ }
            }

            /// The table named `name`, if the document has one.
            #[must_use]
            pub fn parse(name: &str) -> Option<Self> {
                match name { $($name => Some(Self::$variant),)+ _ => None }
            }

            /// How the table is read, classed and said: its sentence's words are
            /// `{word}`, the input word so named; `{a.b}`, two input words as one;
            /// `{old.f}` and `{new.f}`, a field of an answer; `{was}`, the new answer
            /// and the old; `{flag?yes:no}`, by an input flag; and in upper case the
            /// diff's own phrases (who reads at a tier, what a caller may now do).
            #[must_use]
            pub const fn description(self) -> Description {
                match self {
                    $(Self::$variant => Description { reading: $reading, list: $list, gain: Gain::$gain, says: $says },)+
                }
            }
        }
    };
}

// Each table: its name in the document, then its description: the input
// word a document may not know, the list item, who gains, the sentence.
tables! {
    /// A vocabulary's words, in order.
    Vocabularies => "vocabularies": None, Some(("word", true)), Neither, "the {vocabulary} vocabulary gained the word {word}|the {vocabulary} vocabulary lost the word {word}",
    /// A family's scheduled field: its rung and column.
    ScheduleFields => "schedule.fields": None, None, Field, "{family.field} is newly scheduled, from {new.tier} (column {new.column})|{family.field} is no longer scheduled (was from {old.tier})|{family.field} is now disclosed from {new.tier} (was {old.tier})|{family.field} is now read from column {new.column} (was {old.column})|{family.field} is now {was}",
    /// A family's never list.
    ScheduleNever => "schedule.never": None, Some(("column", true)), Unlisted, "{family.column} is now on the never list|{family.column} left the never list",
    /// The columns a family's schedule reads.
    ScheduleSourceColumns => "schedule.source_columns": None, Some(("column", false)), Present, "the schedule now reads column {family.column}|the schedule no longer reads column {family.column}",
    /// The fields admitted at a viewer tier (`nil`: no tier of its own).
    ScheduleFieldsAt => "schedule.fields_at": None, Some(("field", false)), Present, "{READERS} now see {family.field}|{READERS} no longer see {family.field}",
    /// The viewer descriptor of a relationship.
    Relationships => "relationships": None, None, Viewer, "a {relationship} reader now reads at {new.tier} (was {old.tier})|a {relationship} reader is now described as {was}",
    /// A rung's tier and access.
    Rungs => "rungs": None, None, Rung, "the {rung} rung is now {was}",
    /// A tier's rank.
    LadderRanks => "ladder.ranks": None, None, Neither, "{tier}'s rank is now {was}",
    /// The tier a tier word names.
    LadderNamed => "ladder.named": Some("tier_word"), None, Rise, "the tier word {tier_word} now names {was}",
    /// The minimum tier of an access.
    LadderMinimums => "ladder.minimums": Some("access"), None, Fall, "{access} access now needs {was}",
    /// A viewer's own tier, operator mark and account.
    LadderViewers => "ladder.viewers": None, None, Viewer, "the viewer {viewer} is now read as {was}",
    /// A tier clamped by a viewer.
    LadderClamp => "ladder.clamp": None, None, Rise, "{viewer} now clamps {tier} to {was}",
    /// The tier a viewer reads a subject at.
    LadderEffective => "ladder.effective": None, None, Rise, "{viewer} now reads {subject} at {was}",
    /// Whether a viewer may exercise an access on a subject.
    LadderAllows => "ladder.allows": Some("access"), None, Present, "{viewer} may now have {access} access to {subject}|{viewer} may no longer have {access} access to {subject}|{viewer}'s {access} access to {subject} is not answered",
    /// The tier a viewer reads a record at.
    LadderRecords => "ladder.records": None, None, Rise, "{viewer} now reads the record {record} at {was}",
    /// A Box state's lifecycle.
    LifecyclesBoxStates => "lifecycles.box_states": Some("box_state"), None, Neither, "a Box in {box_state} now reads {was}",
    /// A run state's lifecycle.
    LifecyclesRunStates => "lifecycles.run_states": Some("run_state"), None, Neither, "a Box run in {run_state} now reads {was}",
    /// A job status's lifecycle.
    LifecyclesJobStatuses => "lifecycles.job_statuses": Some("job_status"), None, Neither, "a work job in {job_status} now reads {was}",
    /// A Computer's lifecycle from its status, revocation and presence.
    LifecyclesMachines => "lifecycles.machines": Some("status"), None, Neither, "{COMPUTER} now reads {was}",
    /// Whether a delegation in a lifecycle has ended.
    LifecyclesEnded => "lifecycles.ended": None, None, Neither, "a {lifecycle} delegation now counts as ended|a {lifecycle} delegation now counts as under way",
    /// The seam of a Box in a state, for a reach.
    CapabilitiesBoxStates => "capabilities.box_states": Some("box_state"), None, Follows, "a caller {REACH} on a Box in {box_state} {OFFER}",
    /// The delegation seam of a run in a state.
    CapabilitiesRunStates => "capabilities.run_states": Some("run_state"), None, Follows, "a caller on a Box run in {run_state} {OFFER}",
    /// The delegation seam of a job in a status.
    CapabilitiesJobStatuses => "capabilities.job_statuses": Some("job_status"), None, Follows, "a caller on a work job in {job_status} {OFFER}",
    /// The seam of a Computer so observed, for a reach.
    CapabilitiesMachines => "capabilities.machines": Some("status"), None, Follows, "a caller {REACH} on {COMPUTER} {OFFER}",
    /// A kind's custody and runtime class.
    SeamsKinds => "seams.kinds": None, None, Neither, "a {kind} is now {was}",
    /// Why a lifecycle offers nothing to a reach.
    SeamsUnavailable => "seams.unavailable": None, None, Reason, "a {lifecycle} target now offers `start` to a caller {REACH} (it was refused as {old.unavailable_reason})|a {lifecycle} target no longer offers `start` to a caller {REACH} (it is refused as {new.unavailable_reason})|a {lifecycle} target, for a caller {REACH}, is now refused as {new.unavailable_reason} (was {old.unavailable_reason})|a {lifecycle} target, for a caller {REACH}, is answered by one document only: {was}",
    /// The seam of a kind, lifecycle and reach.
    SeamsSeams => "seams.seams": None, None, Offer, "a caller {REACH} on a {kind} that is {lifecycle} {OFFER}{NOTE}",
    /// The seam of a delegation lifecycle.
    SeamsDelegationSeams => "seams.delegation_seams": None, None, Offer, "a caller on a {lifecycle} delegation {OFFER}",
    /// Whether any seam offers a capability.
    SeamsOffered => "seams.offered": None, None, Present, "some seam now offers {capability}|no seam offers {capability} any more",
    /// The link an attempt gets, by which of its parts are present.
    Links => "links": None, None, Link, "an attempt in a repository {repository_id?with an id:with no id} by {PRINCIPAL}, {principal_id?with an id:with no id}, now gets {LINK}",
}

/// How one table is read, classed and said.
pub struct Description {
    /// The input word a document may not know: a question one side lacks is
    /// answered by that side's row with `<any other word>` in its place.
    pub reading: Option<&'static str>,
    /// For a list answer: what one item is called, and whether the list's
    /// order is itself an answer.
    pub list: Option<(&'static str, bool)>,
    /// Who gains when the answer moves.
    pub gain: Gain,
    /// The sentence (see [`Table::description`]): for a `true` answer (an item listed),
    /// then `|` and for `false`, then `|` and for none.
    pub says: &'static str,
}

/// Who gains when an answer moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gain {
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

/// A question: the host's words, named, in the order a caller passes them.
/// Written as a JSON object in that order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Input(pub Vec<(String, Value)>);

impl Input {
    /// The word given as `name`, if any.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(key, _)| key == name).map(|(_, v)| v)
    }

    /// Every (name, word), in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(key, value)| (key.as_str(), value))
    }
}

impl<'de> Deserialize<'de> for Input {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Words;
        impl<'de> Visitor<'de> for Words {
            type Value = Input;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an input: an object of words")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Input, M::Error> {
                let mut words = Vec::new();
                while let Some(word) = map.next_entry()? {
                    words.push(word);
                }
                Ok(Input(words))
            }
        }
        deserializer.deserialize_map(Words)
    }
}

impl Serialize for Input {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// One answer: `[table, input, answer]` in the document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Which table.
    pub table: Table,
    /// The question.
    pub input: Input,
    /// The answer.
    pub answer: Value,
}

impl Serialize for Row {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (self.table, &self.input, &self.answer).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Row {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (name, input, answer) = <(String, Input, Value)>::deserialize(deserializer)?;
        let table = Table::parse(&name).ok_or_else(|| {
            D::Error::custom(format!("no table of format {FORMAT} is named {name:?}"))
        })?;
        Ok(Self {
            table,
            input,
            answer,
        })
    }
}

/// Every finite-domain decision of the crate; its JSON is the canonical
/// document the digest is taken of. Reads back as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// [`FORMAT`].
    pub format: u32,
    /// Every answer, table by table.
    pub rows: Vec<Row>,
}

struct Rows(Vec<Row>);

impl Rows {
    fn push<T: Serialize>(&mut self, table: Table, input: &[(&str, Value)], answer: T) -> Res {
        let input = input.iter().map(|(k, v)| ((*k).to_owned(), v.clone()));
        let answer = serde_json::to_value(answer)?;
        self.0.push(Row {
            table,
            input: Input(input.collect()),
            answer,
        });
        Ok(())
    }
}

/// One row: `ask!(rows, Table { "word": value, ... } => answer)`, the words
/// in the order a caller passes them.
macro_rules! ask {
    ($rows:ident, $table:ident { $($key:literal: $word:expr),+ $(,)? } => $answer:expr) => {
        $rows.push(Table::$table, &[$(($key, json!($word))),+], $answer)?
    };
}

type Res = Result<(), FingerprintError>;

const OWNER: u8 = 1;
const OTHER: u8 = 2;
const ACCOUNTS: [Option<u8>; 3] = [Some(OWNER), Some(OTHER), None];
const REACHES: [Reach; 2] = [Reach::Authorized, Reach::NotAuthorized];

/// Every value of a vocabulary as a reading, then an unrecognized one.
fn readings<S: Copy>(all: &[S]) -> Vec<Reading<S>> {
    let known = all.iter().copied().map(Reading::Known);
    known.chain([Reading::Unrecognized]).collect()
}

/// A reading as an input word.
fn word<S: Serialize>(reading: Reading<S>) -> Value {
    match reading {
        Reading::Known(word) => serde_json::to_value(word).unwrap_or(Value::Null),
        Reading::Unrecognized => json!(ANY_OTHER_WORD),
    }
}

// The shapes the ladder reads, as the host passes them.
fn quoted(tier: Reading<Tier>) -> String {
    match tier {
        Reading::Known(tier) => format!("\"{}\"", tier.as_str()),
        Reading::Unrecognized => ANY_OTHER_WORD.to_owned(),
    }
}

fn id(account: Option<u8>) -> String {
    account.map_or_else(|| "nil".to_owned(), |id| id.to_string())
}

fn viewer_term(viewer: &Viewer<u8>) -> String {
    match viewer {
        Viewer::Operator => "%{admin: true}".to_owned(),
        Viewer::User { id: user, admin } => {
            format!("%User{{id: {}}} with admin? {admin}", id(*user))
        }
        Viewer::Tiered { tier, account_id } => {
            let (tier, account_id) = (quoted(*tier), id(*account_id));
            format!("%{{tier: {tier}, account_id: {account_id}}}")
        }
        Viewer::Account { account_id } => format!("%{{account_id: {}}}", id(*account_id)),
        Viewer::Word(tier) => quoted(*tier),
        Viewer::Nobody => "nil".to_owned(),
    }
}

fn link_term(link: &Link<u8>) -> String {
    let revoked = if link.revoked { "<set>" } else { "nil" };
    let (owner, tier) = (id(link.account_id), quoted(link.tier));
    format!("%ArtifactLink{{account_id: {owner}, tier: {tier}, revoked_at: {revoked}}}")
}

fn subject_term(subject: &Subject<u8>) -> String {
    match subject {
        Subject::Link(link) => link_term(link),
        Subject::Tier(tier) => quoted(*tier),
    }
}

fn record_term(record: &Record<u8>) -> String {
    match record {
        Record::Linked(link) => format!("%{{artifact_link: {}}}", link_term(link)),
        Record::Unlinked(subject) => format!(
            "%{{artifact_link: nil, transparency_tier: {}}}",
            subject_term(subject)
        ),
    }
}

fn viewers() -> Vec<Viewer<u8>> {
    let tiers = readings(Tier::ALL);
    let mut all = vec![Viewer::Operator];
    for id in ACCOUNTS {
        all.extend([false, true].map(|admin| Viewer::User { id, admin }));
    }
    for &tier in &tiers {
        all.extend(ACCOUNTS.map(|account_id| Viewer::Tiered { tier, account_id }));
    }
    all.extend(ACCOUNTS.map(|account_id| Viewer::Account { account_id }));
    all.extend(tiers.iter().copied().map(Viewer::Word));
    all.push(Viewer::Nobody);
    all
}

fn subjects() -> Vec<Subject<u8>> {
    let mut all = Vec::new();
    for account_id in [Some(OWNER), None] {
        for tier in readings(Tier::ALL) {
            for revoked in [false, true] {
                all.push(Subject::Link(Link {
                    account_id,
                    tier,
                    revoked,
                }));
            }
        }
    }
    all.extend(readings(Tier::ALL).into_iter().map(Subject::Tier));
    all
}

fn schedule(rows: &mut Rows) -> Res {
    let families = disclosure::schedule();
    for entry in &families {
        for field in entry.fields {
            ask!(rows, ScheduleFields { "family": entry.family, "field": field.name() } => field);
        }
    }
    for entry in &families {
        ask!(rows, ScheduleNever { "family": entry.family } => entry.never);
    }
    for entry in &families {
        ask!(rows, ScheduleSourceColumns { "family": entry.family } => entry.family.source_columns());
    }
    for entry in &families {
        for tier in Tier::ALL.iter().map(|&tier| Some(tier)).chain([None]) {
            let viewer: Viewer<u8> =
                tier.map_or(Viewer::Nobody, |tier| Viewer::Word(Reading::Known(tier)));
            let fields: Vec<_> = entry
                .family
                .fields_at(&viewer)
                .fields()
                .map(Field::name)
                .collect();
            ask!(rows, ScheduleFieldsAt { "family": entry.family, "viewer_tier": tier } => fields);
        }
    }
    for &relationship in Relationship::ALL {
        ask!(rows, Relationships { "relationship": relationship } => relationship.viewer(Some(OWNER)));
    }
    for &rung in Rung::ALL {
        ask!(rows, Rungs { "rung": rung } => json!({"tier": rung.tier(), "access": rung.access()}));
    }
    Ok(())
}

fn ladder(rows: &mut Rows) -> Res {
    let (viewers, subjects) = (viewers(), subjects());
    let viewers: Vec<_> = viewers
        .iter()
        .map(|viewer| (viewer, viewer_term(viewer)))
        .collect();
    for &tier in Tier::ALL {
        ask!(rows, LadderRanks { "tier": tier } => tier.rank());
    }
    for tier in readings(Tier::ALL) {
        ask!(rows, LadderNamed { "tier_word": word(tier) } => tier.named());
    }
    for access in readings(Access::ALL) {
        ask!(rows, LadderMinimums { "access": word(access) } => access.minimum());
    }
    for (viewer, name) in &viewers {
        let answer = json!({"tier": viewer.tier(), "admin": viewer.is_admin(), "account_id": viewer.account()});
        ask!(rows, LadderViewers { "viewer": name } => answer);
    }
    for &tier in Tier::ALL {
        for (viewer, name) in &viewers {
            ask!(rows, LadderClamp { "tier": tier, "viewer": name } => viewer.clamp(tier));
        }
    }
    for subject in &subjects {
        for (viewer, name) in &viewers {
            let tier = ladder::effective_tier(subject, viewer);
            ask!(rows, LadderEffective { "subject": subject_term(subject), "viewer": name } => tier);
        }
    }
    for access in readings(Access::ALL) {
        for subject in &subjects {
            for (viewer, name) in &viewers {
                let allowed = ladder::allows(subject, access, viewer);
                ask!(rows, LadderAllows { "access": word(access), "subject": subject_term(subject), "viewer": name } => allowed);
            }
        }
    }
    // A linked record carries its link; an unlinked one its tier column,
    // which may hold a link-shaped value too.
    let linked = subjects.iter().filter_map(|subject| match subject {
        Subject::Link(link) => Some(Record::Linked(link.clone())),
        Subject::Tier(_) => None,
    });
    for record in linked.chain(subjects.iter().cloned().map(Record::Unlinked)) {
        for (viewer, name) in &viewers {
            let tier = disclosure::effective_tier(&record, viewer);
            ask!(rows, LadderRecords { "record": record_term(&record), "viewer": name } => tier);
        }
    }
    Ok(())
}

fn lifecycles(rows: &mut Rows) -> Res {
    let boxes = readings(BoxState::ALL);
    let runs = readings(RunState::ALL);
    let jobs = readings(JobStatus::ALL);
    let mut machines = Vec::new();
    for status in readings(MachineStatus::ALL) {
        for revoked in [false, true] {
            machines.extend([false, true].map(|online| MachineObservation {
                status,
                revoked,
                online,
            }));
        }
    }
    for &state in &boxes {
        ask!(rows, LifecyclesBoxStates { "box_state": word(state) } => state.lifecycle());
    }
    for &state in &runs {
        ask!(rows, LifecyclesRunStates { "run_state": word(state) } => state.lifecycle());
    }
    for &status in &jobs {
        ask!(rows, LifecyclesJobStatuses { "job_status": word(status) } => status.lifecycle());
    }
    for seen in &machines {
        let (status, revoked, online) = (word(seen.status), seen.revoked, seen.online);
        ask!(rows, LifecyclesMachines { "status": status, "revoked": revoked, "online": online } => seen.lifecycle());
    }
    for &lifecycle in DelegationLifecycle::ALL {
        ask!(rows, LifecyclesEnded { "lifecycle": lifecycle } => lifecycle.has_ended());
    }
    // What a caller may do for each substrate word: the seam of its lifecycle.
    for &state in &boxes {
        for reach in REACHES {
            let seam = Seam::new(Kind::Box, state.lifecycle(), reach);
            ask!(rows, CapabilitiesBoxStates { "box_state": word(state), "reach": reach } => seam);
        }
    }
    for &state in &runs {
        ask!(rows, CapabilitiesRunStates { "run_state": word(state) } => DelegationSeam::new(state.lifecycle()));
    }
    for &status in &jobs {
        ask!(rows, CapabilitiesJobStatuses { "job_status": word(status) } => DelegationSeam::new(status.lifecycle()));
    }
    for seen in &machines {
        for reach in REACHES {
            let (status, revoked, online) = (word(seen.status), seen.revoked, seen.online);
            let seam = Seam::new(Kind::Computer, seen.lifecycle(), reach);
            ask!(rows, CapabilitiesMachines { "status": status, "revoked": revoked, "online": online, "reach": reach } => seam);
        }
    }
    Ok(())
}

fn seams(rows: &mut Rows) -> Res {
    for &kind in Kind::ALL {
        ask!(rows, SeamsKinds { "kind": kind } => json!({"custody": kind.custody(), "runtime_class": kind.runtime_class()}));
    }
    for &lifecycle in Lifecycle::ALL {
        for reach in REACHES {
            let reason = UnavailableReason::of(lifecycle, reach);
            ask!(rows, SeamsUnavailable { "lifecycle": lifecycle, "reach": reach } => json!({"unavailable_reason": reason}));
        }
    }
    let mut offered = Vec::new();
    for &kind in Kind::ALL {
        for &lifecycle in Lifecycle::ALL {
            for reach in REACHES {
                let seam = Seam::new(kind, lifecycle, reach);
                offered.extend_from_slice(seam.capabilities());
                ask!(rows, SeamsSeams { "kind": kind, "lifecycle": lifecycle, "reach": reach } => seam);
            }
        }
    }
    for &lifecycle in DelegationLifecycle::ALL {
        let seam = DelegationSeam::new(lifecycle);
        offered.extend_from_slice(seam.capabilities());
        ask!(rows, SeamsDelegationSeams { "lifecycle": lifecycle } => seam);
    }
    for &capability in Capability::ALL {
        ask!(rows, SeamsOffered { "capability": capability } => offered.contains(&capability));
    }
    // The two principal kinds the rule names, one it does not, and none.
    let kinds = [Some("user"), Some("agent"), Some("machine"), None];
    for (repository, kind) in [true, false]
        .into_iter()
        .flat_map(|r| kinds.map(|k| (r, k)))
    {
        for id in [true, false] {
            let principal = PrincipalReading {
                kind: kind.map(str::as_bytes),
                id: id.then_some(OWNER),
            };
            let outcome = link_for_attempt(repository.then_some(OTHER), principal, ());
            ask!(rows, Links { "repository_id": repository, "principal_type": kind, "principal_id": id } => outcome);
        }
    }
    Ok(())
}

impl Document {
    /// Asks every decision function every question of its finite domain.
    ///
    /// # Errors
    ///
    /// [`FingerprintError::Json`] if serde_json refuses an answer.
    pub fn compute() -> Result<Self, FingerprintError> {
        let mut rows = Rows(Vec::with_capacity(8192));
        for &vocabulary in Vocabulary::ALL {
            ask!(rows, Vocabularies { "vocabulary": vocabulary } => vocabulary.words());
        }
        schedule(&mut rows)?;
        ladder(&mut rows)?;
        lifecycles(&mut rows)?;
        seams(&mut rows)?;
        Ok(Self {
            format: FORMAT,
            rows: rows.0,
        })
    }

    /// The canonical document: compact JSON.
    ///
    /// # Errors
    ///
    /// [`FingerprintError::Json`] if serde_json refuses to write it.
    pub fn to_json(&self) -> Result<String, FingerprintError> {
        Ok(serde_json::to_string(self)?)
    }

    /// The SHA-256 of [`Document::to_json`], as 64 lowercase hex digits.
    ///
    /// # Errors
    ///
    /// [`FingerprintError::Json`] if the document cannot be written.
    pub fn digest(&self) -> Result<String, FingerprintError> {
        Ok(sha256_hex(self.to_json()?.as_bytes()))
    }
}

/// 64 lowercase hex digits of the SHA-256 of `bytes`.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

/// The digest of this build's decisions.
///
/// # Errors
///
/// [`FingerprintError::Json`] if the document cannot be written.
pub fn decision_digest() -> Result<String, FingerprintError> {
    Document::compute()?.digest()
}

/// The canonical document of this build's decisions (what
/// [`decision_digest`] digests).
///
/// # Errors
///
/// [`FingerprintError::Json`] if the document cannot be written.
pub fn decision_json() -> Result<String, FingerprintError> {
    Document::compute()?.to_json()
}
