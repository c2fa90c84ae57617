//! Every decision this crate makes over a finite domain, as one document and
//! one digest.
//!
//! A cluster that upgrades one node at a time runs two versions of this crate
//! at once. The question a coordinator needs answered is not "which version
//! string does the node report" but "does it answer every question as the
//! other nodes do". The decisions over a finite domain (the schedule, the
//! never lists, the source columns, the vocabularies, the lifecycle
//! projections, the seams, the ladder over every viewer shape) are that: the
//! [`Tables`] here are built by iterating each vocabulary's `ALL` and calling
//! the decision functions, never from a second, hand-kept copy of the rules,
//! so a changed rule changes the document and with it the digest.
//!
//! Two builds have the same [`decision_digest`] exactly when they give the
//! same answers to every question of that domain: the document is a pure
//! function of the answers (serde writes struct fields in declaration order,
//! lists in vocabulary order, and no map), and SHA-256 tells two documents
//! apart. Questions over an unbounded domain (which fields of *this* record,
//! the tier of *this* account id) are answered by the same functions the
//! tables call, on the shapes the tables enumerate: account ids only ever
//! compare equal or not, so two distinct ids and none cover every case.
//!
//! ```
//! use openagents_policy::fingerprint::{decision_digest, Tables};
//! let digest = decision_digest()?;
//! assert_eq!(digest.len(), 64);
//! assert_eq!(Tables::compute().digest()?, digest);
//! # Ok::<(), openagents_policy::fingerprint::FingerprintError>(())
//! ```

use serde::Serialize;
use sha2::{Digest as _, Sha256};

use crate::disclosure::{
    self, link_for_attempt, AttemptLink, Family, Field, NoLink, PrincipalReading, Record,
    Relationship, Rung, ViewerDescriptor,
};
use crate::ladder::{self, Access, Link, Subject, Tier, Viewer};
use crate::target::{
    BoxState, Capability, Custody, DelegationLifecycle, DelegationSeam, JobStatus, Kind, Lifecycle,
    MachineObservation, MachineStatus, Reach, RunState, RuntimeClass, Seam, UnavailableReason,
};
use crate::{Reading, Vocabulary};

/// Why the document or its digest could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FingerprintError {
    /// serde_json refused to write the document (it cannot for these types:
    /// every key is a field name; kept typed rather than assumed).
    #[error("the decision tables could not be written as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The account ids the ladder is asked about: ids only compare equal or not,
/// so one owner, one other account and none cover every case.
const OWNER: u8 = 1;
const OTHER: u8 = 2;
const ACCOUNTS: [Option<u8>; 3] = [Some(OWNER), Some(OTHER), None];

/// One vocabulary's words, in declaration order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VocabularyWords {
    /// Which vocabulary.
    pub vocabulary: Vocabulary,
    /// Its words.
    pub words: Vec<&'static str>,
}

/// One family's schedule and what it admits at each viewer tier.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FamilyTable {
    /// The family.
    pub family: Family,
    /// Every scheduled field: its name, rung and source column.
    pub fields: Vec<Field>,
    /// The never list.
    pub never: Vec<&'static str>,
    /// The columns the schedule reads.
    pub source_columns: Vec<&'static str>,
    /// The fields admitted to a viewer of each tier, then (`None`) to a
    /// viewer with no tier of its own.
    pub fields_at: Vec<(Option<Tier>, Vec<&'static str>)>,
}

/// The lifecycle projections of the four substrate vocabularies, every word
/// and then an unrecognized one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lifecycles {
    /// `box_lifecycle` of each Box state.
    pub box_states: Vec<(Reading<BoxState>, Lifecycle)>,
    /// `run_lifecycle` of each run state.
    pub run_states: Vec<(Reading<RunState>, DelegationLifecycle)>,
    /// `job_lifecycle` of each job status.
    pub job_statuses: Vec<(Reading<JobStatus>, DelegationLifecycle)>,
    /// A Computer's lifecycle from (status, revoked, online).
    pub machines: Vec<(Reading<MachineStatus>, bool, bool, Lifecycle)>,
}

/// The target seam's tables.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SeamTables {
    /// Custody and runtime class of each kind.
    pub kinds: Vec<(Kind, Custody, Option<RuntimeClass>)>,
    /// The unavailable reason of each lifecycle and reach.
    pub unavailable: Vec<(Lifecycle, Reach, Option<UnavailableReason>)>,
    /// The seam of each kind, lifecycle and reach.
    pub seams: Vec<(Kind, Lifecycle, Reach, Seam)>,
    /// The delegation seam of each delegation lifecycle.
    pub delegation_seams: Vec<DelegationSeam>,
    /// The capabilities vocabulary is in [`Tables::vocabularies`]; this is
    /// which capability each seam can offer at all.
    pub offered: Vec<(Capability, bool)>,
}

/// The ladder over every viewer shape: rows follow [`Ladder::viewers`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ladder {
    /// Each tier's rank.
    pub ranks: Vec<(Tier, u8)>,
    /// The tier each tier reading names (an unrecognized word names `dark`).
    pub named: Vec<(Reading<Tier>, Tier)>,
    /// The minimum tier of each access reading.
    pub minimums: Vec<(Reading<Access>, Tier)>,
    /// Every viewer shape asked about (named by its `Debug` form: serde's
    /// tagged form cannot write a bare tier word), with its own tier,
    /// operator mark and account as the ladder reads them.
    pub viewers: Vec<(String, Option<Tier>, bool, Option<u8>)>,
    /// For each tier, the clamp of every viewer (in `viewers` order).
    pub clamp: Vec<(Tier, Vec<Tier>)>,
    /// For each subject (by its `Debug` form), the effective tier for every
    /// viewer.
    pub effective: Vec<(String, Vec<Tier>)>,
    /// For each access reading and subject, `allows?` for every viewer.
    pub allows: Vec<(Reading<Access>, String, Vec<bool>)>,
    /// For each record (linked or not, and the subject it carries), the
    /// disclosure's effective tier for every viewer.
    pub records: Vec<(bool, String, Vec<Tier>)>,
}

/// The version of the document's layout: which tables it holds and how each
/// is written, the first field of every document ([`Tables::format`]).
///
/// It names the layout, not the answers: a changed rule is the same format
/// and another document; a table added, removed or written another way is a
/// new format. A reader of documents ([`crate::diff`]) reads the formats it
/// knows and refuses any other rather than misread it.
pub const FORMAT: u32 = 1;

/// `link_for_attempt` over every principal shape it tells apart.
pub type LinkOutcome = Result<AttemptLink<u8, u8, ()>, NoLink>;

/// Every finite-domain decision of the crate. Built by [`Tables::compute`];
/// its JSON is the canonical document the digest is taken of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Tables {
    /// [`FORMAT`]: how the rest of the document is laid out.
    pub format: u32,
    /// Every vocabulary's words.
    pub vocabularies: Vec<VocabularyWords>,
    /// The disclosure schedule, per family.
    pub schedule: Vec<FamilyTable>,
    /// The viewer descriptor of each relationship (for an account).
    pub relationships: Vec<(Relationship, ViewerDescriptor<u8>)>,
    /// The rung of each rung word, as tier and access.
    pub rungs: Vec<(Rung, Tier, Access)>,
    /// The ladder.
    pub ladder: Ladder,
    /// The lifecycle projections.
    pub lifecycles: Lifecycles,
    /// The seam tables.
    pub seams: SeamTables,
    /// `link_for_attempt` for (repository present, principal kind, id present).
    pub links: Vec<(bool, Option<&'static str>, bool, LinkOutcome)>,
}

fn words(vocabulary: Vocabulary) -> Vec<&'static str> {
    // Exhaustive: a new vocabulary does not compile until it is here.
    match vocabulary {
        Vocabulary::Kind => Kind::words(),
        Vocabulary::Custody => Custody::words(),
        Vocabulary::RuntimeClass => RuntimeClass::words(),
        Vocabulary::Lifecycle => Lifecycle::words(),
        Vocabulary::DelegationLifecycle => DelegationLifecycle::words(),
        Vocabulary::Capability => Capability::words(),
        Vocabulary::UnavailableReason => UnavailableReason::words(),
        Vocabulary::BoxState => BoxState::words(),
        Vocabulary::RunState => RunState::words(),
        Vocabulary::JobStatus => JobStatus::words(),
        Vocabulary::MachineStatus => MachineStatus::words(),
        Vocabulary::Tier => Tier::words(),
        Vocabulary::Access => Access::words(),
        Vocabulary::Family => Family::words(),
        Vocabulary::Rung => Rung::words(),
        Vocabulary::Relationship => Relationship::words(),
    }
}

/// Every value of a vocabulary as a reading, then an unrecognized one.
fn readings<S: Copy>(all: &[S]) -> Vec<Reading<S>> {
    all.iter()
        .copied()
        .map(Reading::Known)
        .chain([Reading::Unrecognized])
        .collect()
}

fn viewers() -> Vec<Viewer<u8>> {
    let tiers = readings(Tier::ALL);
    let mut all = vec![Viewer::Operator];
    for id in ACCOUNTS {
        for admin in [false, true] {
            all.push(Viewer::User { id, admin });
        }
    }
    for &tier in &tiers {
        for account_id in ACCOUNTS {
            all.push(Viewer::Tiered { tier, account_id });
        }
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

fn schedule() -> Vec<FamilyTable> {
    disclosure::schedule()
        .into_iter()
        .map(|entry| {
            let family = entry.family;
            let at = |viewer: &Viewer<u8>| -> Vec<&'static str> {
                family.fields_at(viewer).fields().map(Field::name).collect()
            };
            let mut fields_at: Vec<_> = Tier::ALL
                .iter()
                .map(|&tier| (Some(tier), at(&Viewer::Word(Reading::Known(tier)))))
                .collect();
            fields_at.push((None, at(&Viewer::Nobody)));
            FamilyTable {
                family,
                fields: entry.fields.to_vec(),
                never: entry.never.to_vec(),
                source_columns: family.source_columns(),
                fields_at,
            }
        })
        .collect()
}

fn ladder() -> Ladder {
    let viewers = viewers();
    let subjects = subjects();
    let per_viewer = |answer: &dyn Fn(&Viewer<u8>) -> Tier| viewers.iter().map(answer).collect();
    // A linked record carries its link; an unlinked one its tier column,
    // which may hold a link-shaped value too.
    let mut records: Vec<Record<u8>> = subjects
        .iter()
        .filter_map(|subject| match subject {
            Subject::Link(link) => Some(Record::Linked(link.clone())),
            Subject::Tier(_) => None,
        })
        .collect();
    records.extend(subjects.iter().cloned().map(Record::Unlinked));
    Ladder {
        ranks: Tier::ALL.iter().map(|&tier| (tier, tier.rank())).collect(),
        named: readings(Tier::ALL)
            .into_iter()
            .map(|tier| (tier, tier.named()))
            .collect(),
        minimums: readings(Access::ALL)
            .into_iter()
            .map(|access| (access, access.minimum()))
            .collect(),
        clamp: Tier::ALL
            .iter()
            .map(|&tier| (tier, per_viewer(&|viewer| viewer.clamp(tier))))
            .collect(),
        effective: subjects
            .iter()
            .map(|subject| {
                let tiers = per_viewer(&|viewer| ladder::effective_tier(subject, viewer));
                (format!("{subject:?}"), tiers)
            })
            .collect(),
        allows: readings(Access::ALL)
            .into_iter()
            .flat_map(|access| subjects.iter().map(move |subject| (access, subject)))
            .map(|(access, subject)| {
                let allowed = viewers
                    .iter()
                    .map(|viewer| ladder::allows(subject, access, viewer))
                    .collect();
                (access, format!("{subject:?}"), allowed)
            })
            .collect(),
        records: records
            .iter()
            .map(|record| {
                let tiers = per_viewer(&|viewer| disclosure::effective_tier(record, viewer));
                match record {
                    Record::Linked(link) => (true, format!("{link:?}"), tiers),
                    Record::Unlinked(subject) => (false, format!("{subject:?}"), tiers),
                }
            })
            .collect(),
        viewers: viewers
            .iter()
            .map(|viewer| {
                (
                    format!("{viewer:?}"),
                    viewer.tier(),
                    viewer.is_admin(),
                    viewer.account().copied(),
                )
            })
            .collect(),
    }
}

fn lifecycles() -> Lifecycles {
    let mut machines = Vec::new();
    for status in readings(MachineStatus::ALL) {
        for revoked in [false, true] {
            for online in [false, true] {
                let seen = MachineObservation {
                    status,
                    revoked,
                    online,
                };
                machines.push((status, revoked, online, seen.lifecycle()));
            }
        }
    }
    Lifecycles {
        box_states: readings(BoxState::ALL)
            .into_iter()
            .map(|state| (state, state.lifecycle()))
            .collect(),
        run_states: readings(RunState::ALL)
            .into_iter()
            .map(|state| (state, state.lifecycle()))
            .collect(),
        job_statuses: readings(JobStatus::ALL)
            .into_iter()
            .map(|status| (status, status.lifecycle()))
            .collect(),
        machines,
    }
}

fn seams() -> SeamTables {
    let reaches = [Reach::Authorized, Reach::NotAuthorized];
    let mut unavailable = Vec::new();
    let mut seams = Vec::new();
    for &lifecycle in Lifecycle::ALL {
        for reach in reaches {
            unavailable.push((lifecycle, reach, UnavailableReason::of(lifecycle, reach)));
            for &kind in Kind::ALL {
                seams.push((kind, lifecycle, reach, Seam::new(kind, lifecycle, reach)));
            }
        }
    }
    let delegation_seams: Vec<DelegationSeam> = DelegationLifecycle::ALL
        .iter()
        .map(|&lifecycle| DelegationSeam::new(lifecycle))
        .collect();
    let offered = Capability::ALL
        .iter()
        .map(|&capability| {
            let offered = seams
                .iter()
                .any(|(.., seam)| seam.capabilities().contains(&capability))
                || delegation_seams
                    .iter()
                    .any(|seam| seam.capabilities().contains(&capability));
            (capability, offered)
        })
        .collect();
    SeamTables {
        kinds: Kind::ALL
            .iter()
            .map(|&kind| (kind, kind.custody(), kind.runtime_class()))
            .collect(),
        unavailable,
        seams,
        delegation_seams,
        offered,
    }
}

fn links() -> Vec<(bool, Option<&'static str>, bool, LinkOutcome)> {
    let mut all = Vec::new();
    for repository in [true, false] {
        // The two kinds the rule names, one it does not, and none.
        for kind in [Some("user"), Some("agent"), Some("machine"), None] {
            for id in [true, false] {
                let principal = PrincipalReading {
                    kind: kind.map(str::as_bytes),
                    id: id.then_some(OWNER),
                };
                let outcome = link_for_attempt(repository.then_some(OTHER), principal, ());
                all.push((repository, kind, id, outcome));
            }
        }
    }
    all
}

impl Tables {
    /// Asks every decision function every question of its finite domain.
    #[must_use]
    pub fn compute() -> Self {
        Self {
            format: FORMAT,
            vocabularies: Vocabulary::ALL
                .iter()
                .map(|&vocabulary| VocabularyWords {
                    vocabulary,
                    words: words(vocabulary),
                })
                .collect(),
            schedule: schedule(),
            relationships: Relationship::ALL
                .iter()
                .map(|&relationship| (relationship, relationship.viewer(Some(OWNER))))
                .collect(),
            rungs: Rung::ALL
                .iter()
                .map(|&rung| (rung, rung.tier(), rung.access()))
                .collect(),
            ladder: ladder(),
            lifecycles: lifecycles(),
            seams: seams(),
            links: links(),
        }
    }

    /// The canonical document: these tables as compact JSON.
    ///
    /// # Errors
    ///
    /// [`FingerprintError::Json`] if serde_json refuses to write it.
    pub fn to_json(&self) -> Result<String, FingerprintError> {
        Ok(serde_json::to_string(self)?)
    }

    /// The SHA-256 of [`Tables::to_json`], as 64 lowercase hex digits.
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

/// The digest of this build's decisions: `Tables::compute().digest()`.
///
/// # Errors
///
/// [`FingerprintError::Json`] if the document cannot be written.
pub fn decision_digest() -> Result<String, FingerprintError> {
    Tables::compute().digest()
}

/// The canonical document of this build's decisions (what
/// [`decision_digest`] digests).
///
/// # Errors
///
/// [`FingerprintError::Json`] if the document cannot be written.
pub fn decision_json() -> Result<String, FingerprintError> {
    Tables::compute().to_json()
}
