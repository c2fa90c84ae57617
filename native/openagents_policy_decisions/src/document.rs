//! Every decision of the rules over a finite domain, as one document and one
//! digest, so a cluster upgraded one node at a time can tell whether a node
//! answers every question as the others do, whatever version it reports.
//! [`Document::compute`] asks the rules' own functions (never a hand-kept
//! copy) every such question, so a changed rule changes the digest.
//!
//! Each [`Row`] is a [`Table`], an input in the host's own terms
//! (`%{tier: "ledger", account_id: 1}`, `"provisioned"`) and the answer, one
//! row per independent decision: a question other rows answer is not asked
//! (each table's doc says what follows from it; `tests/derived.rs` holds it).
//! Account ids only compare equal or not ([`owned`]), so an owner, another
//! account and none, written `1`, `2` and `nil`, cover every case.

use std::fmt::Write as _;

use serde::{Serialize, Serializer};
use serde_json::{json, Map, Value};
use sha2::{Digest as _, Sha256};

use openagents_policy::disclosure::{self, link_for_attempt, PrincipalReading, Record};
use openagents_policy::disclosure::{Relationship, Rung};
use openagents_policy::ladder::{self, Access, Link, Subject, Tier, Viewer};
use openagents_policy::target::{BoxState, DelegationLifecycle, DelegationSeam, JobStatus};
use openagents_policy::target::{Kind, Lifecycle, MachineObservation, MachineStatus, Reach};
use openagents_policy::target::{RunState, Seam};
use openagents_policy::{Reading, Vocabulary};

/// The version of the document's layout, its first field: a changed rule is
/// the same format and another document; a table added, removed or written
/// another way is a new format (3: one row a line, no question other rows answer).
pub const FORMAT: u32 = 3;

/// How an input names any word its vocabulary does not have.
pub const ANY_OTHER_WORD: &str = "<any other word>";

openagents_policy::vocabulary! {
    /// The tables of the document, in its order.
    pub enum Table {
        /// A vocabulary's words, in order.
        Vocabularies => "vocabularies",
        /// A family's scheduled field: its rung and column. The columns a
        /// family's schedule reads, and the fields admitted at each viewer tier
        /// (`Family::fields_at`: a field whose rung's tier, read by that viewer
        /// through `ladder.effective`, reaches its access's minimum), follow.
        ScheduleFields => "schedule.fields",
        /// A family's never list.
        ScheduleNever => "schedule.never",
        /// Why a scheduled field (`field`) or a never-listed column (`column`)
        /// is placed where it is: words, which decide nothing.
        ScheduleReasons => "schedule.reasons",
        /// The viewer descriptor of a relationship.
        Relationships => "relationships",
        /// A rung's tier and access.
        Rungs => "rungs",
        /// A tier's rank.
        LadderRanks => "ladder.ranks",
        /// The tier a tier word names.
        LadderNamed => "ladder.named",
        /// The minimum tier of an access.
        LadderMinimums => "ladder.minimums",
        /// A viewer's own tier, operator mark and account. What a viewer clamps
        /// a tier to (the lower of the two by rank, or the tier when the viewer
        /// has none) follows.
        LadderViewers => "ladder.viewers",
        /// The tier a viewer reads a subject at. Whether a viewer may exercise
        /// an access on a subject (`ladder::allows`: the tier reaches the
        /// access's minimum, by rank) follows.
        LadderEffective => "ladder.effective",
        /// The tier an operator (`%{admin: true}`) reads a record without a link
        /// at. Every other record and viewer reads as `ladder.effective`
        /// answers for the record's link, or for its tier column.
        LadderRecords => "ladder.records",
        /// A Box state's lifecycle.
        LifecyclesBoxStates => "lifecycles.box_states",
        /// A run state's lifecycle.
        LifecyclesRunStates => "lifecycles.run_states",
        /// A job status's lifecycle.
        LifecyclesJobStatuses => "lifecycles.job_statuses",
        /// A Computer's lifecycle from its status, revocation and presence.
        LifecyclesMachines => "lifecycles.machines",
        /// Whether a delegation in a lifecycle has ended.
        LifecyclesEnded => "lifecycles.ended",
        /// The seam of a Box in a state, for a reach: what a caller may do,
        /// kept beside the state's lifecycle so that a state mapped to another
        /// lifecycle is classed by what it grants.
        CapabilitiesBoxStates => "capabilities.box_states",
        /// The delegation seam of a run in a state.
        CapabilitiesRunStates => "capabilities.run_states",
        /// The delegation seam of a job in a status.
        CapabilitiesJobStatuses => "capabilities.job_statuses",
        /// The seam of a Computer so observed, for a reach.
        CapabilitiesMachines => "capabilities.machines",
        /// The seam of a kind, lifecycle and reach. A kind's custody and runtime
        /// class, why a lifecycle offers nothing to a reach, and whether any
        /// seam offers a capability follow.
        SeamsSeams => "seams.seams",
        /// The seam of a delegation lifecycle.
        SeamsDelegationSeams => "seams.delegation_seams",
        /// The link an attempt gets, by which of its parts are present.
        Links => "links",
    }
}

/// An input word a table draws from one of the document's vocabularies: the
/// table asks its question for every word of it (and for `<any other word>`,
/// when a caller may pass a word it lacks), or the document is incomplete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drawn {
    /// The input's key.
    pub key: &'static str,
    /// The vocabulary its words are drawn from.
    pub vocabulary: Vocabulary,
    /// Whether the table also asks [`ANY_OTHER_WORD`] for it.
    pub any_other_word: bool,
}

/// `drawn!(key, Vocabulary, any_other_word)`: a constant [`Drawn`].
macro_rules! drawn {
    ($key:literal, $vocabulary:ident, $any:literal) => {
        Drawn { key: $key, vocabulary: Vocabulary::$vocabulary, any_other_word: $any }
    };
}

impl Table {
    /// Whether a changed answer of this table can change what anyone reads or
    /// may do: every table's but the reasons', words that decide nothing.
    #[must_use]
    pub const fn decides(self) -> bool {
        !matches!(self, Self::ScheduleReasons)
    }

    /// The input words this table draws from the document's vocabularies.
    #[must_use]
    pub const fn drawn(self) -> &'static [Drawn] {
        match self {
            Self::ScheduleFields | Self::ScheduleNever | Self::ScheduleReasons => {
                &[drawn!("family", Family, false)]
            }
            Self::Relationships => &[drawn!("relationship", Relationship, false)],
            Self::Rungs => &[drawn!("rung", Rung, false)],
            Self::LadderRanks => &[drawn!("tier", Tier, false)],
            Self::LadderNamed => &[drawn!("tier_word", Tier, true)],
            Self::LadderMinimums => &[drawn!("access", Access, true)],
            Self::LifecyclesBoxStates | Self::CapabilitiesBoxStates => {
                &[drawn!("box_state", BoxState, true)]
            }
            Self::LifecyclesRunStates | Self::CapabilitiesRunStates => {
                &[drawn!("run_state", RunState, true)]
            }
            Self::LifecyclesJobStatuses | Self::CapabilitiesJobStatuses => {
                &[drawn!("job_status", JobStatus, true)]
            }
            Self::LifecyclesMachines | Self::CapabilitiesMachines => {
                &[drawn!("status", MachineStatus, true)]
            }
            Self::LifecyclesEnded | Self::SeamsDelegationSeams => {
                &[drawn!("lifecycle", DelegationLifecycle, false)]
            }
            Self::SeamsSeams => {
                &[drawn!("kind", Kind, false), drawn!("lifecycle", Lifecycle, false)]
            }
            Self::Vocabularies
            | Self::LadderViewers
            | Self::LadderEffective
            | Self::LadderRecords
            | Self::Links => &[],
        }
    }
}

/// A question: the host's words, named, in the order a caller passes them
/// (serde_json's `preserve_order` keeps it), and written in that order.
pub type Input = Map<String, Value>;

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

/// Every independent finite-domain decision of the rules, written canonically
/// by [`Document::to_json`] and read back by [`crate::diff::read`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// [`FORMAT`].
    pub format: u32,
    /// Every answer, table by table.
    pub rows: Vec<Row>,
}

/// One row: `ask!(rows, Table { "word": value, ... } => answer)`, the words
/// in the order a caller passes them.
macro_rules! ask {
    ($rows:ident, $table:ident { $($key:literal: $word:expr),+ $(,)? } => $answer:expr) => {
        $rows.push(Row {
            table: Table::$table,
            input: [$(($key.to_owned(), json!($word))),+].into_iter().collect(),
            answer: json!($answer),
        })
    };
}

const OWNER: u8 = 1;
const OTHER: u8 = 2;
const ACCOUNTS: [Option<u8>; 3] = [Some(OWNER), Some(OTHER), None];
const REACHES: [Reach; 2] = [Reach::Authorized, Reach::NotAuthorized];

/// Every value of a vocabulary as a reading, then an unrecognized one.
#[must_use]
pub fn readings<S: Copy>(all: &[S]) -> Vec<Reading<S>> {
    let known = all.iter().copied().map(Reading::Known);
    known.chain([Reading::Unrecognized]).collect()
}

/// A reading as an input word.
#[must_use]
pub fn word<S: Serialize>(reading: Reading<S>) -> Value {
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

/// A viewer as the host passes it, reading for `account`: the `viewer` word
/// of the ladder's tables.
#[must_use]
pub fn viewer_term(viewer: &Viewer, account: Option<u8>) -> String {
    match viewer {
        Viewer::Operator => "%{admin: true}".to_owned(),
        Viewer::User { admin } => format!("%User{{id: {}}} with admin? {admin}", id(account)),
        Viewer::Tiered { tier } => {
            format!("%{{tier: {}, account_id: {}}}", quoted(*tier), id(account))
        }
        Viewer::Account => format!("%{{account_id: {}}}", id(account)),
        Viewer::Word(tier) => quoted(*tier),
        Viewer::Nobody => "nil".to_owned(),
    }
}

fn link_term(link: Link, owner: Option<u8>) -> String {
    let revoked = if link.revoked { "<set>" } else { "nil" };
    let (owner, tier) = (id(owner), quoted(link.tier));
    format!("%ArtifactLink{{account_id: {owner}, tier: {tier}, revoked_at: {revoked}}}")
}

/// A subject as the host passes it, a link owned by `owner`: the `subject`
/// word of `ladder.effective`.
#[must_use]
pub fn subject_term(subject: &Subject, owner: Option<u8>) -> String {
    match subject {
        Subject::Link(link) => link_term(*link, owner),
        Subject::Tier(tier) => quoted(*tier),
    }
}

/// A record as the host passes it, a link owned by `owner`: the `record`
/// word of `ladder.records`.
#[must_use]
pub fn record_term(record: &Record, owner: Option<u8>) -> String {
    match record {
        Record::Linked(link) => format!("%{{artifact_link: {}}}", link_term(*link, owner)),
        Record::Unlinked(subject) => {
            format!("%{{artifact_link: nil, transparency_tier: {}}}", subject_term(subject, owner))
        }
    }
}

/// Every viewer shape the ladder reads, with the account it reads for (a
/// User's id, a descriptor's `account_id`), in document order.
#[must_use]
pub fn viewers() -> Vec<(Viewer, Option<u8>)> {
    let tiers = readings(Tier::ALL);
    let mut all = vec![(Viewer::Operator, None)];
    for id in ACCOUNTS {
        all.extend([false, true].map(|admin| (Viewer::User { admin }, id)));
    }
    for &tier in &tiers {
        all.extend(ACCOUNTS.map(|account| (Viewer::Tiered { tier }, account)));
    }
    all.extend(ACCOUNTS.map(|account| (Viewer::Account, account)));
    all.extend(tiers.iter().map(|&tier| (Viewer::Word(tier), None)));
    all.push((Viewer::Nobody, None));
    all
}

/// Every subject shape the ladder reads, with a link's owning account, in
/// document order.
#[must_use]
pub fn subjects() -> Vec<(Subject, Option<u8>)> {
    let mut all = Vec::new();
    for owner in [Some(OWNER), None] {
        for tier in readings(Tier::ALL) {
            for revoked in [false, true] {
                all.push((Subject::Link(Link { owned: false, tier, revoked }), owner));
            }
        }
    }
    all.extend(readings(Tier::ALL).into_iter().map(|tier| (Subject::Tier(tier), None)));
    all
}

/// `subject` as the host hands it to a viewer reading for `account`: a link
/// owned by `owner` is the viewer's own when both accounts are present and
/// equal, as the host compares them.
#[must_use]
pub fn owned(subject: Subject, owner: Option<u8>, account: Option<u8>) -> Subject {
    match subject {
        Subject::Link(link) => {
            Subject::Link(Link { owned: owner.is_some() && owner == account, ..link })
        }
        Subject::Tier(_) => subject,
    }
}

fn schedule(rows: &mut Vec<Row>) {
    let families = disclosure::schedule();
    for entry in &families {
        for field in entry.fields {
            let answer = json!({"field": field.name, "tier": field.rung, "column": field.column});
            ask!(rows, ScheduleFields { "family": entry.family, "field": field.name } => answer);
        }
    }
    for entry in &families {
        ask!(rows, ScheduleNever { "family": entry.family } => entry.family.never());
    }
    for entry in &families {
        for field in entry.fields {
            ask!(rows, ScheduleReasons { "family": entry.family, "field": field.name } => field.reason);
        }
        for never in entry.never {
            ask!(rows, ScheduleReasons { "family": entry.family, "column": never.column } => never.reason);
        }
    }
    for &relationship in Relationship::ALL {
        ask!(rows, Relationships { "relationship": relationship } => relationship.viewer(Some(OWNER)));
    }
    for &rung in Rung::ALL {
        ask!(rows, Rungs { "rung": rung } => json!({"tier": rung.tier(), "access": rung.access()}));
    }
}

fn ladder(rows: &mut Vec<Row>) {
    let subjects = subjects();
    let viewers = viewers().into_iter().map(|(viewer, id)| (viewer, id, viewer_term(&viewer, id)));
    let viewers: Vec<_> = viewers.collect();
    for &tier in Tier::ALL {
        ask!(rows, LadderRanks { "tier": tier } => tier.rank());
    }
    for tier in readings(Tier::ALL) {
        ask!(rows, LadderNamed { "tier_word": word(tier) } => tier.named());
    }
    for access in readings(Access::ALL) {
        ask!(rows, LadderMinimums { "access": word(access) } => access.minimum());
    }
    for (viewer, account, name) in &viewers {
        let answer =
            json!({"tier": viewer.tier(), "admin": viewer.is_admin(), "account_id": account});
        ask!(rows, LadderViewers { "viewer": name } => answer);
    }
    for &(subject, owner) in &subjects {
        for (viewer, account, name) in &viewers {
            let tier = ladder::effective_tier(&owned(subject, owner, *account), viewer);
            ask!(rows, LadderEffective { "subject": subject_term(&subject, owner), "viewer": name } => tier);
        }
    }
    // A record without a link carries its tier column, which may hold a
    // link-shaped value too; an operator reads it by a rule of its own.
    let operator = Viewer::Operator;
    for (subject, owner) in subjects {
        let record = Record::Unlinked(subject);
        let tier = disclosure::effective_tier(&record, &operator);
        ask!(rows, LadderRecords { "record": record_term(&record, owner), "viewer": viewer_term(&operator, None) } => tier);
    }
}

fn lifecycles(rows: &mut Vec<Row>) {
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
        ask!(rows, LifecyclesMachines { "status": word(seen.status), "revoked": seen.revoked, "online": seen.online } => seen.lifecycle());
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
            let seam = Seam::new(Kind::Computer, seen.lifecycle(), reach);
            ask!(rows, CapabilitiesMachines { "status": word(seen.status), "revoked": seen.revoked, "online": seen.online, "reach": reach } => seam);
        }
    }
}

fn seams(rows: &mut Vec<Row>) {
    for &kind in Kind::ALL {
        for &lifecycle in Lifecycle::ALL {
            for reach in REACHES {
                let seam = Seam::new(kind, lifecycle, reach);
                ask!(rows, SeamsSeams { "kind": kind, "lifecycle": lifecycle, "reach": reach } => seam);
            }
        }
    }
    for &lifecycle in DelegationLifecycle::ALL {
        ask!(rows, SeamsDelegationSeams { "lifecycle": lifecycle } => DelegationSeam::new(lifecycle));
    }
    // The two principal kinds the rule names, one it does not, and none.
    let kinds = [Some("user"), Some("agent"), Some("machine"), None];
    for (repository, kind) in [true, false].into_iter().flat_map(|r| kinds.map(|k| (r, k))) {
        for id in [true, false] {
            let principal =
                PrincipalReading { kind: kind.map(str::as_bytes), id: id.then_some(OWNER) };
            let outcome = link_for_attempt(repository.then_some(OTHER), principal, ());
            ask!(rows, Links { "repository_id": repository, "principal_type": kind, "principal_id": id } => outcome);
        }
    }
}

impl Document {
    /// Asks every decision function every question of its finite domain
    /// that no other row answers.
    #[must_use]
    pub fn compute() -> Self {
        let mut rows = Vec::with_capacity(2048);
        for &vocabulary in Vocabulary::ALL {
            ask!(rows, Vocabularies { "vocabulary": vocabulary } => vocabulary.words());
        }
        schedule(&mut rows);
        ladder(&mut rows);
        lifecycles(&mut rows);
        seams(&mut rows);
        Self { format: FORMAT, rows }
    }

    /// The canonical document: `{"format":3,"rows":[`, then each row as
    /// compact JSON on a line of its own (`,` between them), then `]}` and
    /// a newline.
    #[must_use]
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(self.rows.len() * 96 + 32);
        let _ = write!(out, "{{\"format\":{},\"rows\":[", self.format);
        for (n, row) in self.rows.iter().enumerate() {
            out.push_str(if n == 0 { "\n" } else { ",\n" });
            out.push_str(&json!(row).to_string());
        }
        out.push_str("\n]}\n");
        out
    }

    /// The SHA-256 of [`Document::to_json`], as 64 lowercase hex digits.
    #[must_use]
    pub fn digest(&self) -> String {
        sha256_hex(self.to_json().as_bytes())
    }
}

/// 64 lowercase hex digits of the SHA-256 of `bytes`.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().fold(String::with_capacity(64), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    })
}

/// The digest of this build's decisions.
#[must_use]
pub fn decision_digest() -> String {
    Document::compute().digest()
}

/// The canonical document of this build's decisions (what
/// [`decision_digest`] digests).
#[must_use]
pub fn decision_json() -> String {
    Document::compute().to_json()
}
