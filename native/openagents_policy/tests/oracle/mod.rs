//! The tests' oracle: the seeds' tables and the host's facts, read from the
//! one fixture every suite shares, `seed_rules.json` beside this file (the
//! Elixir oracle, `OpenAgentsPolicy.SeedRules` and
//! `OpenAgentsPolicy.Test.Upstream` in the library's `test/support/oracle/`,
//! reads the same file at compile time).
//!
//! The fixture is hand-written from the seeds and `upstream.md`, never
//! generated from this crate, so the crate is asked and the fixture answers.
//! Inputs derive from the host's lists (a word the host adds fails the suite
//! until the core knows it); expected answers from the seed's tables. The
//! seed's rules that are code (the catch-all that reads a missing word
//! `failed`, the computer's `cond`, the seam's capability and reason) are
//! written here once, as the seed writes them.
//!
//! The fixture lives in the crate, beside its reader, so the core's tests
//! need nothing outside the crate; the Elixir suites reach into the crate
//! for it.
//!
//! Each test crate uses a part of this module, hence the `dead_code` allow.
#![allow(
    dead_code,
    reason = "each test crate reads the part of the oracle it needs"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{json, Value};

/// The fixture, as the Elixir oracle reads it.
const FIXTURE: &str = include_str!("seed_rules.json");

/// The seeds' catch-all (`_unknown -> "failed"`): a word missing from a
/// lifecycle table reads this.
pub const MISSING_WORD_READS: &str = "failed";

/// The fixture, parsed once.
static ORACLE: LazyLock<Oracle> =
    LazyLock::new(|| serde_json::from_str(FIXTURE).expect("seed_rules.json is the oracle's JSON"));

/// The whole oracle.
#[must_use]
pub fn oracle() -> &'static Oracle {
    &ORACLE
}

/// Seed 000's tables.
#[must_use]
pub fn target() -> &'static Target {
    &oracle().target
}

/// Seed 002's schedule.
#[must_use]
pub fn disclosure() -> &'static Disclosure {
    &oracle().disclosure
}

/// The host's facts (upstream.md), the ladder's included.
#[must_use]
pub fn host() -> &'static Host {
    &oracle().host
}

/// The fixture's three sections.
#[derive(Debug, Deserialize)]
#[serde(bound(deserialize = "'de: 'static"))]
pub struct Oracle {
    /// Seed 000, `OpenAgents.Delegations.Target`.
    pub target: Target,
    /// Seed 002, `OpenAgents.Transparency.WorkDisclosure`.
    pub disclosure: Disclosure,
    /// upstream.md: the host's vocabularies, tables and transparency ladder.
    pub host: Host,
}

/// Which capability each seam offers.
#[derive(Debug, Deserialize)]
pub struct Capabilities {
    /// `seam/3`'s, when active and authorized.
    pub target: &'static str,
    /// `delegation_seam/1`'s, while cancellable.
    pub delegation: &'static str,
}

/// Seed 000's vocabularies and tables.
#[derive(Debug, Deserialize)]
#[serde(bound(deserialize = "'de: 'static"))]
pub struct Target {
    /// `@lifecycles`, in order.
    pub lifecycles: Vec<&'static str>,
    /// `@delegation_lifecycles`, in order.
    pub delegation_lifecycles: Vec<&'static str>,
    /// `@custodies`, in order.
    pub custodies: Vec<&'static str>,
    /// `@kinds`, in order.
    pub kinds: Vec<&'static str>,
    /// `custody/1`.
    pub custody: BTreeMap<&'static str, &'static str>,
    /// `runtime_class/1`.
    pub runtime_class: BTreeMap<&'static str, Option<&'static str>>,
    /// `box_lifecycle/1`'s case, in the seed's order, without the catch-all.
    pub box_lifecycle: Vec<(&'static str, &'static str)>,
    /// `run_lifecycle/1`'s case.
    pub run_lifecycle: Vec<(&'static str, &'static str)>,
    /// `job_lifecycle/1`'s case.
    pub job_lifecycle: Vec<(&'static str, &'static str)>,
    /// The capability of each seam.
    pub capabilities: Capabilities,
    /// The delegation lifecycles that offer cancel.
    pub cancellable: Vec<&'static str>,
    /// The seam document's keys, sorted.
    pub seam_keys: Vec<&'static str>,
}

/// A table's answer for `word`, or the seeds' catch-all.
fn read(table: &[(&'static str, &'static str)], word: &[u8]) -> &'static str {
    table
        .iter()
        .find(|(known, _)| known.as_bytes() == word)
        .map_or(MISSING_WORD_READS, |(_, lifecycle)| *lifecycle)
}

/// `computer_lifecycle/2`'s `cond`, for a machine whose status is
/// `status` (any bytes) and whose `revoked_at` is set or not.
#[must_use]
pub fn computer_lifecycle(status: &[u8], revoked: bool, online: bool) -> &'static str {
    if status == b"revoked" || revoked {
        "destroyed"
    } else if status == b"active" && online {
        "active"
    } else {
        "cold"
    }
}

impl Target {
    /// `box_lifecycle/1` of any bytes.
    #[must_use]
    pub fn box_lifecycle_of(&self, word: &[u8]) -> &'static str {
        read(&self.box_lifecycle, word)
    }

    /// `run_lifecycle/1` of any bytes.
    #[must_use]
    pub fn run_lifecycle_of(&self, word: &[u8]) -> &'static str {
        read(&self.run_lifecycle, word)
    }

    /// `job_lifecycle/1` of any bytes.
    #[must_use]
    pub fn job_lifecycle_of(&self, word: &[u8]) -> &'static str {
        read(&self.job_lifecycle, word)
    }

    /// The words `unavailable_reason/2` can give: a lifecycle that is not
    /// `active`, or `not_authorized`.
    #[must_use]
    pub fn unavailable_reasons(&self) -> Vec<&'static str> {
        let mut reasons: Vec<&str> = self
            .lifecycles
            .iter()
            .copied()
            .filter(|word| *word != "active")
            .collect();
        reasons.push("not_authorized");
        reasons
    }

    /// Every capability word, the target's then the delegation's.
    #[must_use]
    pub fn capability_words(&self) -> Vec<&'static str> {
        vec![self.capabilities.target, self.capabilities.delegation]
    }

    /// `seam/3`'s map, as JSON.
    #[must_use]
    pub fn seam(&self, kind: &str, lifecycle: &str, authorized: bool) -> Value {
        let startable = lifecycle == "active" && authorized;
        let capabilities: Vec<&str> = if startable {
            vec![self.capabilities.target]
        } else {
            Vec::new()
        };
        let reason = match (lifecycle, authorized) {
            ("active", true) => None,
            ("active", false) => Some("not_authorized"),
            (other, _) => Some(other),
        };
        json!({
            "custody": self.custody[kind],
            "runtime_class": self.runtime_class[kind],
            "lifecycle": lifecycle,
            "capabilities": capabilities,
            "unavailable_reason": reason,
        })
    }

    /// `delegation_seam/1`'s map, as JSON.
    #[must_use]
    pub fn delegation_seam(&self, lifecycle: &str) -> Value {
        let capabilities: Vec<&str> = if self.cancellable.contains(&lifecycle) {
            vec![self.capabilities.delegation]
        } else {
            Vec::new()
        };
        json!({"lifecycle": lifecycle, "capabilities": capabilities})
    }
}

/// One family's schedule.
#[derive(Debug, Deserialize)]
#[serde(bound(deserialize = "'de: 'static"))]
pub struct Schedule {
    /// `(field, rung)`, in the seed's order.
    pub fields: Vec<(&'static str, &'static str)>,
    /// The never list, in the seed's order.
    pub never: Vec<&'static str>,
    /// Fields read from a column of another name.
    pub columns: BTreeMap<&'static str, &'static str>,
}

impl Schedule {
    /// The column `field` is read from.
    #[must_use]
    pub fn column_of(&self, field: &str) -> &'static str {
        let (name, _) = self
            .fields
            .iter()
            .find(|(name, _)| *name == field)
            .unwrap_or_else(|| panic!("{field} is not scheduled"));
        self.columns.get(field).copied().unwrap_or(name)
    }

    /// `source_columns/1`: the fields' columns, sorted, each once.
    #[must_use]
    pub fn source_columns(&self) -> Vec<&'static str> {
        let columns: BTreeSet<&str> = self
            .fields
            .iter()
            .map(|(field, _)| self.column_of(field))
            .collect();
        columns.into_iter().collect()
    }

    /// The rung that first exposes `field`, if any.
    #[must_use]
    pub fn rung_of(&self, field: &str) -> Option<&'static str> {
        self.fields
            .iter()
            .find(|(name, _)| *name == field)
            .map(|(_, rung)| *rung)
    }

    /// The field names a reader of rank `rank` sees, sorted.
    #[must_use]
    pub fn fields_up_to(&self, rank: u8) -> Vec<&'static str> {
        let mut names: Vec<&str> = self
            .fields
            .iter()
            .filter(|(_, rung)| host().rank(rung) <= rank)
            .map(|(name, _)| *name)
            .collect();
        names.sort_unstable();
        names
    }

    /// Every field name, in the seed's order.
    #[must_use]
    pub fn field_names(&self) -> Vec<&'static str> {
        self.fields.iter().map(|(name, _)| *name).collect()
    }
}

/// Seed 002's schedule.
#[derive(Debug, Deserialize)]
#[serde(bound(deserialize = "'de: 'static"))]
pub struct Disclosure {
    /// `@families`, in order.
    pub families: Vec<&'static str>,
    /// The rungs a field sits on, lowest first.
    pub rungs: Vec<&'static str>,
    /// `link_for_attempt/3`'s fixed attributes (type, ref, tier, consent).
    pub attempt_link: Value,
    /// Each family's schedule.
    pub schedule: BTreeMap<&'static str, Schedule>,
}

impl Disclosure {
    /// `family`'s schedule.
    #[must_use]
    pub fn of(&self, family: &str) -> &Schedule {
        self.schedule
            .get(family)
            .unwrap_or_else(|| panic!("the seed schedules no family {family}"))
    }
}

/// The host's facts (upstream.md).
#[derive(Debug, Deserialize)]
pub struct Host {
    /// `Box.ConversationBox.states/0`.
    pub box_states: Vec<&'static str>,
    /// The synthetic state of a fan-out item admission has not let through.
    pub fanout_queued: &'static str,
    /// `Box.Run.states/0`.
    pub run_states: Vec<&'static str>,
    /// `Box.Run.terminal_states/0`.
    pub run_terminal_states: Vec<&'static str>,
    /// `Work.Job.statuses/0`.
    pub job_statuses: Vec<&'static str>,
    /// `Work.Job.terminal_statuses/0`.
    pub job_terminal_statuses: Vec<&'static str>,
    /// The status a job carries while its cancel is in flight.
    pub job_cancelling_status: &'static str,
    /// The `machines.status` database check.
    pub machine_statuses: Vec<&'static str>,
    /// `Capacity.Catalog`: `[class, isolation, egress, data location]`.
    pub capacity_catalog: Vec<Vec<&'static str>>,
    /// The table behind each disclosure family.
    pub tables: BTreeMap<&'static str, &'static str>,
    /// Each family's table's columns, in schema order.
    pub columns: BTreeMap<&'static str, Vec<&'static str>>,
    /// The tiers, lowest first.
    pub tiers: Vec<&'static str>,
    /// Each tier's rank.
    pub ranks: BTreeMap<&'static str, u8>,
    /// `allows?/3`'s minimum tier of each access, in the host's order.
    pub capability_minimums: Vec<(&'static str, &'static str)>,
}

impl Host {
    /// Every Box word a producer hands `box_lifecycle/1`: a row's state, or
    /// the fan-out item's synthetic `queued`.
    #[must_use]
    pub fn every_box_word(&self) -> Vec<&'static str> {
        let mut words = self.box_states.clone();
        words.push(self.fanout_queued);
        words
    }

    /// The capacity catalog's classes, in order.
    #[must_use]
    pub fn runtime_classes(&self) -> Vec<&'static str> {
        self.capacity_catalog.iter().map(|entry| entry[0]).collect()
    }

    /// The rank of a tier word.
    #[must_use]
    pub fn rank(&self, tier: &str) -> u8 {
        *self
            .ranks
            .get(tier)
            .unwrap_or_else(|| panic!("{tier} is not a tier"))
    }

    /// The accesses `allows?/3` knows, in order.
    #[must_use]
    pub fn accesses(&self) -> Vec<&'static str> {
        self.capability_minimums
            .iter()
            .map(|(access, _)| *access)
            .collect()
    }

    /// The minimum tier of `access`.
    #[must_use]
    pub fn minimum(&self, access: &str) -> &'static str {
        self.capability_minimums
            .iter()
            .find(|(known, _)| *known == access)
            .map_or_else(|| panic!("{access} is not an access"), |(_, tier)| *tier)
    }

    /// The columns of `family`'s table.
    #[must_use]
    pub fn columns_of(&self, family: &str) -> &[&'static str] {
        self.columns
            .get(family)
            .unwrap_or_else(|| panic!("upstream records no table for {family}"))
    }
}
