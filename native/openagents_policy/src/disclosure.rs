//! The field-by-field disclosure schedule for work in progress: for an
//! attempt, a work job, a deployment receipt or a trace, a tier answers not
//! "may this reader see the record" but "which of its fields". Each
//! [`Family`] names the [`Rung`] that first exposes each [`Field`], and a
//! never list the columns no rung exposes; every column of a family's table
//! is one or the other, never both, never neither ([`Family::classify`], for
//! a host to run against its live schema). What each tier shows is [`Tier`]'s.
//!
//! A never list is not a fifth rung waiting for a viewer (guides/disclosure-model.md
//! says what they hold). Repository authority is stronger than every rung: a
//! tier only narrows what a reader who already passed the repository's gate sees.

use serde::Serialize;

use crate::ladder::{self, Access, Link, Subject, Tier, Viewer};
use crate::{vocabulary, Reading};

vocabulary! {
    /// The four families of records the schedule covers.
    pub enum Family in Family {
        /// One attempt (`forge_assignments`).
        Attempt => "attempt",
        /// The execution behind an attempt (`work_jobs`).
        WorkJob => "work_job",
        /// An evidence edge between a commit and an issue (`issue_evidence`).
        Evidence => "evidence",
        /// An uploaded trajectory of one attempt (`traces`).
        Trace => "trace",
    }
}

vocabulary! {
    /// The tier that first exposes a scheduled field. There is no `dark`
    /// rung: a field no tier exposes belongs on the never list, so "dark
    /// admits nothing" holds by construction. Why this is not a [`Tier`] nor
    /// an [`Access`]: [`crate::ladder`], "One ladder, three words".
    pub enum Rung in Rung {
        Pulse => "pulse",
        Ledger => "ledger",
        Glass => "glass",
    }
}

impl Rung {
    /// The tier this rung is.
    #[must_use]
    pub const fn tier(self) -> Tier {
        match self {
            Self::Pulse => Tier::Pulse,
            Self::Ledger => Tier::Ledger,
            Self::Glass => Tier::Glass,
        }
    }

    /// The access this rung is the minimum for, which is how a field is
    /// asked of the ladder.
    #[must_use]
    pub const fn access(self) -> Access {
        match self {
            Self::Pulse => Access::Metadata,
            Self::Ledger => Access::Content,
            Self::Glass => Access::Full,
        }
    }
}

/// One scheduled field of a family: only the schedule writes one
/// (`non_exhaustive`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Field {
    /// The field's name in a projection.
    #[serde(rename = "field")]
    pub name: &'static str,
    /// The rung that first exposes it.
    #[serde(rename = "tier")]
    pub rung: Rung,
    /// The schema column it is read from: most fields share their column's
    /// name, a few are derived (`budget` from `budget_snapshot`) or renamed.
    pub column: &'static str,
    /// Why it is placed at its rung, as the app's schedule says it (or
    /// [`NO_REASON`] where it says nothing).
    pub reason: &'static str,
}

impl Field {
    const fn new(name: &'static str, rung: Rung, reason: &'static str) -> Self {
        Self { name, rung, column: name, reason }
    }

    /// The field, read from `column` rather than the column of its name.
    const fn read_from(self, column: &'static str) -> Self {
        Self { column, ..self }
    }
}

/// A column no rung discloses, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Never {
    /// The schema column.
    pub column: &'static str,
    /// Why no rung discloses it (or [`NO_REASON`]).
    pub reason: &'static str,
}

/// A never list, `column => reason` a line.
macro_rules! never {
    ($list:ident: $($column:literal => $reason:expr,)+) => {
        const $list: &[Never] = &[$(Never { column: $column, reason: $reason }),+];
    };
}

use Rung::{Glass, Ledger, Pulse};

// The schedule, each placement with the app's reason as its value. A never
// list is no rung: it would restate, where the repository's gate does not
// reach, what that gate withholds. Tables keep the app's order (`by_name`
// sorts fields by name), one placement a line: rustfmt would split each in five.

/// The reason a placement carries where the app's schedule states none.
pub const NO_REASON: &str = "No reason stated in the seeds.";
const HANDLE: &str = "An opaque handle: names nothing beyond the repository the reader reached.";
const REVISION: &str = "A revision: TRANSPARENCY-001 puts shas at l2.";
const OUTCOME: &str = "The executor's word on how it ended: a detail of the result, not the fact.";
const COUNT: &str = "A count of work: TRANSPARENCY-001 admits module and node counts at l2.";
const CONVERSATION: &str = "The prompt's home: the requester's conversation, not the readers'.";
const NODE: &str = "An internal node name, which TRANSPARENCY-001 bans by name.";
const CREDENTIAL: &str = "Credential metadata: TRANSPARENCY-001 admits no credential at any level.";
const IN_URL: &str = "In the reader's own URL: republishing makes it public for no gain.";
const GATE: &str = "The tier is the gate, not a field the gate discloses.";
const LINK: &str = "The link that carries the gate, listed with the tier.";
const RESTATES: &str = "Restates private repository content, like `goal`.";
const SUBSTRATE: &str = "A handle into the operator's own substrate.";

// attempt (`forge_assignments`): `pulse` that it ran, its shape and how it
// ended (no ref, revision or place); `ledger` the refs and the revision it
// produced; `glass` nothing more, only the work job stores output.
#[rustfmt::skip]
const ATTEMPT: &[Field] = &by_name([
    Field::new("id", Pulse, HANDLE),
    Field::new("target_kind", Pulse, "`box` or `computer`: which shape ran, never which one."),
    Field::new("state", Pulse, "Its own lifecycle word: \"it ran and ended so\" is all `pulse` is for."),
    Field::new("requester_kind", Pulse, "TRANSPARENCY-001 publishes a principal's kind, never its id.").read_from("requesting_principal"),
    Field::new("admitted_at", Pulse, NO_REASON),
    Field::new("started_at", Pulse, NO_REASON),
    Field::new("finished_at", Pulse, NO_REASON),
    Field::new("branch", Ledger, "A ref in the repository's namespace, perhaps named after the work."),
    Field::new("terminal_branch", Ledger, "The ref the run ended on: repository content."),
    Field::new("terminal_commit", Ledger, REVISION),
    Field::new("failure_reason", Ledger, OUTCOME),
]);

never! { ATTEMPT_NEVER:
    "conversation_id" => CONVERSATION,
    "conversation_box_id" => "The conversation's Box: the prompt's home too.",
    "machine_id" => "A box or computer id: an internal node name TRANSPARENCY-001 bans.",
    "run_id" => "Names a run on a box or computer: an internal node name too.",
    "work_job_id" => "The job is its own family, gated per field, not an id fetching it all.",
    "deadline_at" => "A bound on the run: published once, as the job's `budget`, not twice.",
    "credential_delivery_status" => CREDENTIAL,
    "credential_delivery_reason" => CREDENTIAL,
    "repository_id" => IN_URL,
    "issue_id" => IN_URL,
    "transparency_tier" => GATE,
    "artifact_link_id" => LINK,
    "inserted_at" => NO_REASON,
    "updated_at" => NO_REASON,
}

// work_job (`work_jobs`): the execution behind an attempt, and the one family
// whose `glass` carries anything, because it is the one that stores output.
#[rustfmt::skip]
const WORK_JOB: &[Field] = &by_name([
    Field::new("id", Pulse, HANDLE),
    Field::new("kind", Pulse, "Which of five delegation shapes ran: a shape, not a place."),
    Field::new("status", Pulse, NO_REASON),
    Field::new("started_at", Pulse, NO_REASON),
    Field::new("completed_at", Pulse, NO_REASON),
    Field::new("tool_call_count", Ledger, COUNT),
    Field::new("continuation_count", Ledger, COUNT),
    Field::new("error_code", Ledger, OUTCOME),
    Field::new("budget", Ledger, "Wall clock, report and prompt ceilings: a bound on the run is a fact about the run (the \
         prompt they bound is never published).").read_from("budget_snapshot"),
    Field::new("report", Glass, "Model-authored prose, up to 8 KB, may restate private content verbatim."),
    Field::new("usage", Glass, "Token and cost accounting: billing, about that account."),
    Field::new("model_id", Glass, "Which model did that account's work."),
]);

never! { WORK_JOB_NEVER:
    "goal" => "The issue's own sentence: private repository content, retyped.",
    "context_hint" => RESTATES,
    "delegation" => RESTATES,
    "authority_snapshot" => "Roots, cwd, machine name, agent id: a machine's filesystem, a node name.",
    "machine_id" => NODE,
    "conversation_id" => CONVERSATION,
    "owner_visitor_id" => NO_REASON,
    "requesting_tool_step_ref" => NO_REASON,
    "instruction_digest" => SUBSTRATE,
    "tool_catalog_digest" => SUBSTRATE,
    "memory_snapshot_ref" => SUBSTRATE,
    "report_message_id" => SUBSTRATE,
    "owner_node" => NODE,
    "generation" => NO_REASON,
    "surface" => "`text` or `voice`: conversation metadata about that account.",
    "inserted_at" => NO_REASON,
    "updated_at" => NO_REASON,
}

// evidence (`issue_evidence`): `pulse` is exactly "a public issue can say that
// restricted evidence exists": the family and the verdict, without the
// artifact, the revision or the place, which are `ledger`'s.
#[rustfmt::skip]
const EVIDENCE: &[Field] = &by_name([
    Field::new("id", Pulse, HANDLE),
    Field::new("family", Pulse, "Which of four receipt families evaluated the commit: the existence."),
    Field::new("result", Pulse, "The receipt's terminal word: the outcome, without the artifact."),
    Field::new("plane", Pulse, "`forge` or `tenant`: two structural values."),
    Field::new("source", Pulse, "`closing_reference` or `assignment`: how the commit resolved to the issue."),
    Field::new("recorded_at", Pulse, NO_REASON).read_from("inserted_at"),
    Field::new("commit", Ledger, REVISION).read_from("commit_sha"),
    Field::new("receipt_id", Ledger, "The handle that fetches the receipt: at `pulse`, a pointer past the gate."),
    Field::new("environment", Ledger, "Where bytes reached (a customer-named place on tenant)."),
]);

never! { EVIDENCE_NEVER:
    "actor" => "Carries a principal's id: TRANSPARENCY-001 publishes kinds, not ids.",
    "assignment_id" => "The edge and the attempt join on the revision, at `ledger`, without it.",
    "repository_id" => IN_URL,
    "issue_id" => IN_URL,
    "transparency_tier" => GATE,
    "artifact_link_id" => LINK,
}

// trace (`traces`): no rung publishes the ATIF document, not even to its
// uploader: it is the whole run (every prompt, message, tool argument and
// result) and restates more of a repository than `goal`, `context_hint` and
// `delegation`, which are never-listed for less. Each rung takes a bounded
// fact about the trajectory and none a step out of it; `document` is read for
// two such facts and published for none; `glass` adds nothing, the owner
// reads the document through their own account, not through an issue.
#[rustfmt::skip]
const TRACE: &[Field] = &by_name([
    Field::new("id", Pulse, HANDLE),
    Field::new("schema_version", Pulse, "A format name (`ATIF-v1.7`): the existence disclosure.").read_from("document"),
    Field::new("step_count", Pulse, "A count of work, a rung below `tool_call_count`: it names no repository.").read_from("document"),
    Field::new("recorded_at", Pulse, NO_REASON).read_from("inserted_at"),
    Field::new("digest", Ledger,
        "A sha of a document (TRANSPARENCY-001 puts shas at l2): it lets a holder of the bytes prove \
         they are the ones this attempt recorded."),
    Field::new("byte_size", Ledger, NO_REASON),
]);

never! { TRACE_NEVER:
    "user_id" => "The uploader: TRANSPARENCY-001 publishes a kind, never an id.",
    "visibility" => "The consent that gates this projection: the gate is not a field.",
    "assignment_id" => "The attempt is its own family, gated on its own fields.",
}

/// `fields` in field-name order, which is the order the schedule answers in.
/// A name written twice, or more fields than [`Admitted`] has bits, does not
/// compile.
const fn by_name<const N: usize>(mut fields: [Field; N]) -> [Field; N] {
    assert!(N <= 32, "a family has more fields than Admitted has bits");
    let mut sorted = 1;
    while sorted < N {
        let mut at = sorted;
        while at > 0 && precedes(fields[at].name, fields[at - 1].name) {
            let earlier = fields[at - 1];
            fields[at - 1] = fields[at];
            fields[at] = earlier;
            at -= 1;
        }
        sorted += 1;
    }
    let mut at = 1;
    while at < N {
        assert!(precedes(fields[at - 1].name, fields[at].name), "a field is scheduled twice");
        at += 1;
    }
    fields
}

/// Whether `a` sorts strictly before `b`, byte by byte, as `str`'s `<` does.
const fn precedes(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut at = 0;
    while at < a.len() && at < b.len() {
        if a[at] != b[at] {
            return a[at] < b[at];
        }
        at += 1;
    }
    a.len() < b.len()
}

impl Family {
    /// The family's scheduled fields, in field-name order.
    #[must_use]
    pub const fn fields(self) -> &'static [Field] {
        match self {
            Self::Attempt => ATTEMPT,
            Self::WorkJob => WORK_JOB,
            Self::Evidence => EVIDENCE,
            Self::Trace => TRACE,
        }
    }

    /// The columns no tier discloses in any form, in schedule order.
    #[must_use]
    pub fn never(self) -> Vec<&'static str> {
        self.never_listed().iter().map(|never| never.column).collect()
    }

    /// The never list with each column's reason, in schedule order.
    #[must_use]
    pub const fn never_listed(self) -> &'static [Never] {
        match self {
            Self::Attempt => ATTEMPT_NEVER,
            Self::WorkJob => WORK_JOB_NEVER,
            Self::Evidence => EVIDENCE_NEVER,
            Self::Trace => TRACE_NEVER,
        }
    }

    /// The scheduled field named `name`, if there is one.
    #[must_use]
    pub fn field(self, name: &str) -> Option<&'static Field> {
        self.fields().iter().find(|field| field.name == name)
    }

    /// The columns the scheduled fields are read from, sorted, each once.
    #[must_use]
    pub fn source_columns(self) -> Vec<&'static str> {
        let mut columns: Vec<&'static str> =
            self.fields().iter().map(|field| field.column).collect();
        columns.sort_unstable();
        columns.dedup();
        columns
    }

    /// The fields `viewer` may read, in field-name order. Each field is asked
    /// of the ladder as the access its rung is the minimum for, so a viewer
    /// with no tier of its own reads every field and `dark` reads none.
    #[must_use]
    pub fn fields_at(self, viewer: &Viewer) -> Admitted {
        let mut positions = 0_u32;
        for (position, field) in self.fields().iter().enumerate() {
            let subject = Subject::Tier(Reading::Known(field.rung.tier()));
            if ladder::allows(&subject, Reading::Known(field.rung.access()), viewer) {
                positions |= 1 << position;
            }
        }
        Admitted { family: self, positions }
    }

    /// Classifies a table's columns against this family's schedule: the
    /// columns that are neither a scheduled field's source nor on the never
    /// list, and those that are both. Both lists empty is the invariant.
    #[must_use]
    pub fn classify<'c>(self, columns: impl IntoIterator<Item = &'c str>) -> Classification {
        classify_against(&self.source_columns(), &self.never(), columns)
    }
}

fn classify_against<'c>(
    sources: &[&str],
    never: &[&str],
    columns: impl IntoIterator<Item = &'c str>,
) -> Classification {
    let mut check = Classification::default();
    for column in columns {
        match (sources.contains(&column), never.contains(&column)) {
            (false, false) => check.unclassified.push(column.to_owned()),
            (true, true) => check.doubly_classified.push(column.to_owned()),
            _ => {}
        }
    }
    check
}

/// The fields of one family a viewer may read. Built only by
/// [`Family::fields_at`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admitted {
    family: Family,
    positions: u32,
}

impl Admitted {
    /// Whether no field is admitted: the projection is absent, not empty.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.positions == 0
    }

    /// The admitted fields, in field-name order.
    pub fn fields(&self) -> impl Iterator<Item = &'static Field> + '_ {
        let fields = self.family.fields().iter().enumerate();
        fields.filter(|(at, _)| self.positions & (1 << at) != 0).map(|(_, field)| field)
    }
}

/// The result of [`Family::classify`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Classification {
    /// Columns neither scheduled nor never-listed, in the order given.
    pub unclassified: Vec<String>,
    /// Columns both scheduled and never-listed, in the order given.
    pub doubly_classified: Vec<String>,
}

/// One family's whole schedule, as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FamilySchedule {
    /// The family.
    pub family: Family,
    /// Its scheduled fields, in field-name order.
    pub fields: &'static [Field],
    /// The columns no tier discloses, with their reasons, in schedule order.
    pub never: &'static [Never],
}

/// The whole schedule, every family in declaration order. Serializes to the
/// JSON that `mix openagents_policy.show --json` prints.
#[must_use]
pub fn schedule() -> Vec<FamilySchedule> {
    let schedule = |&family: &Family| FamilySchedule {
        family,
        fields: family.fields(),
        never: family.never_listed(),
    };
    Family::ALL.iter().map(schedule).collect()
}

/// What a record carries for the effective tier: a loaded link, or only its
/// own tier column (which may hold anything, even a link).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// The record's `artifact_link` is a loaded link.
    Linked(Link),
    /// No loaded link (`nil`, not loaded, anything else): the tier column.
    Unlinked(Subject),
}

/// The tier `viewer` reads one record at: a linked record's
/// [`Link::tier_for`]; an unlinked one has no owner to raise, so only an
/// operator descriptor (`admin: true`) reaches `glass`, and everyone else
/// reads its tier column clamped.
#[must_use]
pub fn effective_tier(record: &Record, viewer: &Viewer) -> Tier {
    match (record, viewer) {
        (Record::Linked(link), _) => link.tier_for(viewer),
        (Record::Unlinked(_), Viewer::Operator) => Tier::Glass,
        (Record::Unlinked(subject), _) => ladder::effective_tier(subject, viewer),
    }
}

vocabulary! {
    /// A reader's relationship to a repository, which sets its viewer tier.
    pub enum Relationship in Relationship {
        /// An operator: `glass`.
        Operator => "operator",
        /// A member of the repository: `ledger`, the rung membership admits a
        /// private repository's reader on.
        Member => "member",
        /// Any other signed-in reader: `pulse`.
        Stranger => "stranger",
        /// No user at all: `pulse`, with no account.
        Anonymous => "anonymous",
    }
}

/// The viewer descriptor a request carries: an account to compare with a
/// link's owner, a tier that clamps everything else, and the operator mark.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ViewerDescriptor<A> {
    /// The reader's account, `None` when anonymous.
    pub account_id: Option<A>,
    /// The reader's tier.
    pub tier: Tier,
    /// Present (and `true`) for an operator only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub admin: bool,
}

impl<A> From<ViewerDescriptor<A>> for Viewer {
    /// A descriptor is read by the ladder as what it is: an operator, or a
    /// viewer naming its tier (its account stays with the host, which says
    /// whether it owns a link).
    fn from(descriptor: ViewerDescriptor<A>) -> Self {
        if descriptor.admin {
            Viewer::Operator
        } else {
            Viewer::Tiered { tier: Reading::Known(descriptor.tier) }
        }
    }
}

impl Relationship {
    /// The tier a reader with this relationship gets.
    #[must_use]
    pub const fn tier(self) -> Tier {
        match self {
            Self::Operator => Tier::Glass,
            Self::Member => Tier::Ledger,
            Self::Stranger | Self::Anonymous => Tier::Pulse,
        }
    }

    /// The descriptor for a reader with this relationship and `account`.
    /// An anonymous reader has no account, whatever is passed.
    #[must_use]
    pub fn viewer<A>(self, account: Option<A>) -> ViewerDescriptor<A> {
        ViewerDescriptor {
            account_id: if self == Self::Anonymous { None } else { account },
            tier: self.tier(),
            admin: self == Self::Operator,
        }
    }
}

/// Who requested an attempt, as far as minting its link reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrincipalReading<'k, A> {
    /// The principal's `"type"` word, when it has a binary one. Borrowed: a
    /// principal is read, never copied, however long its words.
    pub kind: Option<&'k [u8]>,
    /// The principal's `"id"`, when it is a binary.
    pub id: Option<A>,
}

/// Why an attempt gets no link (`:none` in Elixir), its message the host's
/// answer: not a failure, since with no owner there is nothing for `glass`
/// to mean, and the record's tier column still clamps every reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoLink {
    /// The repository has no id to bind the link to.
    #[error("the repository carries no id, so there is nothing to bind a link to")]
    NoRepository,
    /// An agent requested the attempt, so no account owns it.
    #[error("an agent requested the attempt, so no account owns it")]
    AgentPrincipal,
    /// The principal is not a user with a binary id.
    #[error("the principal is not a user with an id, so no account owns it")]
    UnrecognizedPrincipal,
}

/// Consent recorded on an attempt's link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Consent {
    /// Who granted the consent: always the requesting principal.
    pub granted_by: &'static str,
}

/// The attributes of the consent-bearing link one attempt gets, for the
/// host's `ArtifactLink.changeset/2`. Built only by [`link_for_attempt`]
/// (`non_exhaustive`, so no other crate writes one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AttemptLink<R, A, S> {
    /// The account that requested the attempt and owns the link.
    pub account_id: A,
    /// The repository the attempt belongs to.
    pub repository_id: R,
    /// Always `"attempt"`.
    pub artifact_type: &'static str,
    /// Always `"id"`: the link refers to the attempt by its id.
    pub artifact_ref: &'static str,
    /// Always `ledger`: the ceiling a repository member already has. The
    /// owner is raised to `glass` by owning it; everyone else is clamped.
    pub tier: Tier,
    /// Who granted consent.
    pub consent: Consent,
    /// The authority the attempt was requested under, carried as given.
    pub authority_snapshot: S,
}

/// Mints the link attributes for one attempt, or says why there is none.
///
/// # Errors
///
/// [`NoLink`] when the repository has no id, or the principal is an agent or
/// anything but a user with a binary id.
///
/// ```
/// use openagents_policy::disclosure::{link_for_attempt, NoLink, PrincipalReading};
/// use openagents_policy::ladder::Tier;
/// let user = PrincipalReading { kind: Some(b"user"), id: Some("acct-1") };
/// let link = link_for_attempt(Some("repo-1"), user, ()).unwrap();
/// assert_eq!(link.tier, Tier::Ledger);
/// let agent = PrincipalReading { kind: Some(b"agent"), id: Some("agent-7") };
/// assert_eq!(link_for_attempt(Some("repo-1"), agent, ()).unwrap_err(), NoLink::AgentPrincipal);
/// ```
pub fn link_for_attempt<R, A, S>(
    repository_id: Option<R>,
    principal: PrincipalReading<'_, A>,
    authority_snapshot: S,
) -> Result<AttemptLink<R, A, S>, NoLink> {
    let repository_id = repository_id.ok_or(NoLink::NoRepository)?;
    let account_id = match (principal.kind, principal.id) {
        (Some(b"user"), Some(id)) => id,
        (Some(b"agent"), _) => return Err(NoLink::AgentPrincipal),
        _ => return Err(NoLink::UnrecognizedPrincipal),
    };
    Ok(AttemptLink {
        account_id,
        repository_id,
        artifact_type: "attempt",
        artifact_ref: "id",
        tier: Tier::Ledger,
        consent: Consent { granted_by: "requesting_principal" },
        authority_snapshot,
    })
}

#[cfg(test)]
mod tests {
    use super::classify_against;

    /// No real column is both scheduled and never-listed, so the branch that
    /// reports one is watched here, against tables made to disagree.
    #[test]
    fn a_column_both_scheduled_and_never_listed_is_reported_doubly() {
        let check = classify_against(&["id", "goal"], &["goal"], ["id", "goal", "prompt"]);
        assert_eq!(check.doubly_classified, ["goal"]);
        assert_eq!(check.unclassified, ["prompt"]);
    }
}
