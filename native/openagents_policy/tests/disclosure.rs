//! The work disclosure schedule, held to `OpenAgents.Transparency.WorkDisclosure`
//! (seed 002) and to the four tables' columns as `upstream.md` records them.
//!
//! The schedule (fields, rungs, never lists, source columns) and the tables'
//! columns come from the tests' oracle (`mod oracle`, the fixture the Elixir
//! suites read too). The crate is asked; the oracle answers.

mod oracle;

use std::collections::BTreeSet;

use openagents_policy::disclosure::{
    effective_tier, link_for_attempt, schedule, Family, Field, NoLink, PrincipalReading, Record,
    Relationship, Rung,
};
use openagents_policy::ladder::{Link, Subject, Tier, Viewer};
use openagents_policy::Reading;
use proptest::prelude::*;
use serde_json::{json, Value};

use oracle::{disclosure, host, Schedule};

// ── The seed's schedule and the host's tables, from the oracle ──────────────

/// The seed's families, each as the crate's `Family` (the crate must know
/// every one).
fn families() -> Vec<Family> {
    disclosure()
        .families
        .iter()
        .map(|word| Family::parse(word).expect("the crate knows every seed family"))
        .collect()
}

/// The seed's schedule of `family`.
fn seed(family: Family) -> &'static Schedule {
    disclosure().of(family.as_str())
}

/// `(field, rung)`, in the seed's order.
fn seed_schedule(family: Family) -> &'static [(&'static str, &'static str)] {
    &seed(family).fields
}

/// The seed's never list, in order.
fn seed_never(family: Family) -> &'static [&'static str] {
    &seed(family).never
}

/// The columns of `family`'s table, in schema order.
fn table_columns(family: Family) -> &'static [&'static str] {
    host().columns_of(family.as_str())
}

/// The oracle's rank of a tier word.
fn rank_of(word: &str) -> u8 {
    host().rank(word)
}

/// The seed field names a viewer of `tier` reads: those whose rung is at or
/// below it, sorted by name as `fields_at/2` returns them.
fn seed_fields_up_to(family: Family, tier: Tier) -> Vec<&'static str> {
    seed(family).fields_up_to(rank_of(tier.as_str()))
}

fn admitted_names<A: PartialEq>(family: Family, viewer: &Viewer<A>) -> Vec<&'static str> {
    family.fields_at(viewer).fields().map(Field::name).collect()
}

fn all_field_names(family: Family) -> Vec<&'static str> {
    family.fields().iter().map(Field::name).collect()
}

fn word(tier: Tier) -> Viewer<&'static str> {
    Viewer::Word(Reading::Known(tier))
}

// ── Families and the schedule ───────────────────────────────────────────────

#[test]
fn each_family_schedules_exactly_the_seeds_fields_at_the_seeds_tiers() {
    for family in families() {
        let ours: BTreeSet<(&str, &str)> = family
            .fields()
            .iter()
            .map(|field| (field.name(), field.rung().as_str()))
            .collect();
        let seed: BTreeSet<(&str, &str)> = seed_schedule(family).iter().copied().collect();
        assert_eq!(
            ours, seed,
            "{family}: every field at the tier that first exposes it in the seed, and no other field"
        );
        assert_eq!(
            family.fields().len(),
            seed_schedule(family).len(),
            "{family}: no field is scheduled twice"
        );
    }
}

#[test]
fn tier_for_names_each_scheduled_fields_rung_and_nothing_for_the_rest() {
    for family in families() {
        for (field, rung) in seed_schedule(family) {
            assert_eq!(
                family.tier_for(field).map(Rung::as_str),
                Some(*rung),
                "{family}.{field} is first exposed at {rung}"
            );
        }
        for column in seed_never(family) {
            if seed_schedule(family).iter().any(|(name, _)| name == column) {
                continue;
            }
            assert_eq!(
                family.tier_for(column),
                None,
                "{family}.{column} is never-listed: no tier exposes it"
            );
        }
        assert_eq!(
            family.tier_for("no_such_field"),
            None,
            "an unknown field has no tier"
        );
    }
}

#[test]
fn each_familys_never_list_is_the_seeds_in_the_seeds_order() {
    for family in families() {
        assert_eq!(
            family.never(),
            seed_never(family),
            "{family}: never/1, verbatim"
        );
    }
}

#[test]
fn the_fields_tables_are_in_field_name_order() {
    for family in families() {
        let names = all_field_names(family);
        assert!(
            names.windows(2).all(|pair| pair[0] < pair[1]),
            "{family}: fields_at/2 returns names sorted, so the table must be sorted and unique: {names:?}"
        );
    }
}

// ── Source columns and classification ───────────────────────────────────────

#[test]
fn source_columns_are_the_seeds_renamed_sorted_and_unique() {
    for family in families() {
        let columns = family.source_columns();
        assert_eq!(
            columns,
            seed(family).source_columns(),
            "{family}: source_columns/1"
        );
        assert!(
            columns.windows(2).all(|pair| pair[0] < pair[1]),
            "{family}: source columns are sorted and each appears once"
        );
    }
}

#[test]
fn each_field_is_read_from_the_seeds_column() {
    for family in families() {
        for field in family.fields() {
            assert_eq!(
                field.column(),
                seed(family).column_of(field.name()),
                "{family}.{}: its column is the seed's rename, or the column of the same name",
                field.name()
            );
        }
    }
}

#[test]
fn every_column_of_the_four_tables_is_classified_exactly_once() {
    for family in families() {
        let check = family.classify(table_columns(family).iter().copied());
        assert!(
            check.unclassified.is_empty(),
            "{family}: a column in neither list must be decided, not left: {:?}",
            check.unclassified
        );
        assert!(
            check.doubly_classified.is_empty(),
            "{family}: a column cannot be both published and never published: {:?}",
            check.doubly_classified
        );
    }
}

#[test]
fn the_schedule_names_no_column_the_table_lacks() {
    for family in families() {
        let table: BTreeSet<&str> = table_columns(family).iter().copied().collect();
        let sources: BTreeSet<&str> = family.source_columns().into_iter().collect();
        let never: BTreeSet<&str> = family.never().iter().copied().collect();
        assert!(
            sources.is_disjoint(&never),
            "{family}: never both: {:?}",
            sources.intersection(&never).collect::<Vec<_>>()
        );
        let classified: BTreeSet<&str> = sources.union(&never).copied().collect();
        assert_eq!(
            classified, table,
            "{family}: the sources and the never list together are exactly the table's columns"
        );
        assert_eq!(
            sources.len() + never.len(),
            table_columns(family).len(),
            "{family}: every column counted once"
        );
    }
}

#[test]
fn a_new_column_is_reported_unclassified_in_the_order_given() {
    for family in families() {
        let mut columns = table_columns(family).to_vec();
        columns.insert(1, "prompt");
        columns.push("cost_cents");
        let check = family.classify(columns);
        assert_eq!(
            check.unclassified,
            ["prompt", "cost_cents"],
            "{family}: a new column fails the schedule until somebody decides"
        );
        assert!(check.doubly_classified.is_empty());
    }
}

#[test]
fn a_column_from_another_familys_table_is_not_mistaken_for_this_ones() {
    let every_column: BTreeSet<&str> = families()
        .into_iter()
        .flat_map(|other| table_columns(other).iter().copied())
        .collect();
    for family in families() {
        let sources = seed(family).source_columns();
        let expected: Vec<&str> = every_column
            .iter()
            .copied()
            .filter(|column| !sources.contains(column) && !seed_never(family).contains(column))
            .collect();
        let check = family.classify(every_column.iter().copied());
        assert_eq!(
            check.unclassified, expected,
            "{family}: another table's column is unclassified here unless the seed names it"
        );
        assert!(
            check.doubly_classified.is_empty(),
            "{family}: no column of any table is both a source and never-listed here"
        );
    }
}

// ── What a viewer is admitted ───────────────────────────────────────────────

#[test]
fn dark_admits_nothing() {
    let dark_viewers: [Viewer<&str>; 4] = [
        word(Tier::Dark),
        Viewer::Word(Reading::Unrecognized),
        Viewer::Tiered {
            tier: Reading::Unrecognized,
            account_id: Some("acct-1"),
        },
        Viewer::Tiered {
            tier: Reading::Known(Tier::Dark),
            account_id: None,
        },
    ];
    for family in families() {
        for viewer in &dark_viewers {
            let admitted = family.fields_at(viewer);
            assert!(
                admitted.is_empty(),
                "{family} for {viewer:?}: a dark projection is absent, not an empty shell"
            );
            assert_eq!(admitted.len(), 0);
            assert_eq!(admitted.fields().count(), 0);
        }
    }
}

#[test]
fn each_tier_admits_exactly_the_seed_fields_at_or_below_it() {
    for family in families() {
        for &tier in Tier::ALL {
            assert_eq!(
                admitted_names(family, &word(tier)),
                seed_fields_up_to(family, tier),
                "{family} at {tier}: each field is first exposed at its seed tier and stays exposed above it"
            );
        }
    }
}

#[test]
fn the_ladder_is_monotone_pulse_within_ledger_within_glass() {
    for family in families() {
        let at =
            |tier| -> BTreeSet<&str> { admitted_names(family, &word(tier)).into_iter().collect() };
        let (dark, pulse, ledger, glass) = (
            at(Tier::Dark),
            at(Tier::Pulse),
            at(Tier::Ledger),
            at(Tier::Glass),
        );
        assert!(dark.is_subset(&pulse), "{family}: dark within pulse");
        assert!(pulse.is_subset(&ledger), "{family}: pulse within ledger");
        assert!(ledger.is_subset(&glass), "{family}: ledger within glass");
        assert!(!pulse.is_empty(), "{family}: pulse says the work exists");
        assert_eq!(
            glass,
            all_field_names(family).into_iter().collect(),
            "{family}: glass admits every scheduled field"
        );
    }
}

#[test]
fn a_viewer_with_no_tier_of_its_own_reads_every_field() {
    let untiered: [Viewer<&str>; 4] = [
        Viewer::Account {
            account_id: Some("acct-1"),
        },
        Viewer::Account { account_id: None },
        Viewer::Nobody,
        Viewer::User {
            id: Some("acct-1"),
            admin: false,
        },
    ];
    for family in families() {
        for viewer in &untiered {
            assert_eq!(
                admitted_names(family, viewer),
                all_field_names(family),
                "{family} for {viewer:?}: no viewer tier means no clamp (fields_at(f, nil) is every field)"
            );
        }
    }
}

#[test]
fn a_glass_viewer_reads_every_field() {
    let glass: [Viewer<&str>; 4] = [
        word(Tier::Glass),
        Viewer::Operator,
        Viewer::User {
            id: Some("acct-1"),
            admin: true,
        },
        Viewer::Tiered {
            tier: Reading::Known(Tier::Glass),
            account_id: None,
        },
    ];
    for family in families() {
        for viewer in &glass {
            assert_eq!(
                admitted_names(family, viewer),
                all_field_names(family),
                "{family} for {viewer:?}: glass admits every scheduled field"
            );
        }
    }
}

#[test]
fn a_viewer_map_reads_as_its_tier() {
    for family in families() {
        let member: Viewer<&str> = Viewer::Tiered {
            tier: Reading::Known(Tier::Ledger),
            account_id: Some("acct-1"),
        };
        assert_eq!(
            admitted_names(family, &member),
            admitted_names(family, &word(Tier::Ledger)),
            "{family}: a descriptor with tier ledger reads as ledger"
        );
    }
}

#[test]
fn the_admitted_positions_index_the_family_table_in_order() {
    for family in families() {
        let admitted = family.fields_at(&word(Tier::Ledger));
        let positions: Vec<usize> = admitted.positions().collect();
        assert!(
            positions.windows(2).all(|pair| pair[0] < pair[1]),
            "{family}: positions ascend"
        );
        assert_eq!(positions.len(), admitted.len());
        for (position, field) in positions.iter().zip(admitted.fields()) {
            assert_eq!(
                &family.fields()[*position],
                field,
                "{family}: a position names its field"
            );
        }
    }
}

fn viewer() -> impl Strategy<Value = Viewer<u8>> {
    let tier = prop_oneof![
        Just(Reading::Unrecognized),
        prop::sample::select(Tier::ALL).prop_map(Reading::Known),
    ];
    let account = prop_oneof![Just(None), (0_u8..3).prop_map(Some)];
    prop_oneof![
        Just(Viewer::Operator),
        (account.clone(), any::<bool>()).prop_map(|(id, admin)| Viewer::User { id, admin }),
        (tier.clone(), account.clone())
            .prop_map(|(tier, account_id)| Viewer::Tiered { tier, account_id }),
        account.prop_map(|account_id| Viewer::Account { account_id }),
        tier.prop_map(Viewer::Word),
        Just(Viewer::Nobody),
    ]
}

proptest! {
    #[test]
    fn no_never_listed_column_is_ever_admitted(
        family in prop::sample::select(families()),
        viewer in viewer(),
    ) {
        for field in family.fields_at(&viewer).fields() {
            prop_assert!(
                !seed_never(family).contains(&field.name()),
                "{}.{} is never-listed, and no viewer may be admitted to it", family, field.name()
            );
            prop_assert!(
                !seed_never(family).contains(&field.column()),
                "{}.{} reads a never-listed column", family, field.name()
            );
        }
    }

    #[test]
    fn a_viewer_is_admitted_a_field_exactly_when_its_tier_reaches_the_fields_rung(
        family in prop::sample::select(families()),
        viewer in viewer(),
    ) {
        let admitted = admitted_names(family, &viewer);
        for (name, rung) in seed_schedule(family) {
            let reaches = viewer.tier().is_none_or(|own| rank_of(own.as_str()) >= rank_of(rung));
            prop_assert_eq!(
                admitted.contains(name),
                reaches,
                "{}.{} at {} for {:?}", family, name, rung, viewer
            );
        }
    }
}

// ── The effective tier of a record ──────────────────────────────────────────

fn link(revoked: bool) -> Link<&'static str> {
    Link {
        account_id: Some("acct-owner"),
        tier: Reading::Known(Tier::Ledger),
        revoked,
    }
}

#[test]
fn a_linked_record_resolves_through_its_link() {
    let record = Record::Linked(link(false));
    let owner = Viewer::Tiered {
        tier: Reading::Known(Tier::Pulse),
        account_id: Some("acct-owner"),
    };
    assert_eq!(
        effective_tier(&record, &owner),
        Tier::Glass,
        "the link's owner is raised to glass"
    );
    let stranger = Viewer::Tiered {
        tier: Reading::Known(Tier::Pulse),
        account_id: Some("acct-stranger"),
    };
    assert_eq!(
        effective_tier(&record, &stranger),
        Tier::Pulse,
        "everyone else is clamped from the link's ledger"
    );
    assert_eq!(
        effective_tier(&record, &Viewer::Operator),
        Tier::Glass,
        "an operator reads glass"
    );
}

#[test]
fn a_revoked_link_makes_the_record_dark_even_for_an_operator() {
    let record = Record::Linked(link(true));
    for viewer in [
        Viewer::Operator,
        Viewer::User {
            id: Some("acct-owner"),
            admin: true,
        },
        Viewer::Account {
            account_id: Some("acct-owner"),
        },
        Viewer::Nobody,
    ] {
        assert_eq!(
            effective_tier(&record, &viewer),
            Tier::Dark,
            "{viewer:?}: a revoked link resolves to dark and the row leaves the projection"
        );
    }
}

#[test]
fn an_operator_reads_an_unlinked_record_at_glass() {
    for column in [
        Reading::Known(Tier::Pulse),
        Reading::Known(Tier::Dark),
        Reading::Unrecognized,
    ] {
        assert_eq!(
            effective_tier::<&str>(&Record::Unlinked(Subject::Tier(column)), &Viewer::Operator),
            Tier::Glass,
            "an operator reaches glass on a record with no link, whatever its column ({column:?})"
        );
    }
}

#[test]
fn nobody_else_is_raised_on_an_unlinked_record() {
    let record: Record<&str> = Record::Unlinked(Subject::Tier(Reading::Known(Tier::Ledger)));
    let cases = [
        (
            Viewer::User {
                id: Some("acct-owner"),
                admin: false,
            },
            Tier::Ledger,
        ),
        (
            Viewer::Account {
                account_id: Some("acct-owner"),
            },
            Tier::Ledger,
        ),
        (
            Viewer::Tiered {
                tier: Reading::Known(Tier::Pulse),
                account_id: Some("acct-owner"),
            },
            Tier::Pulse,
        ),
        (Viewer::Nobody, Tier::Ledger),
    ];
    for (viewer, expected) in cases {
        let read = effective_tier(&record, &viewer);
        assert_eq!(
            read, expected,
            "{viewer:?}: a record with no link has no owner to raise; its column is clamped"
        );
        assert_ne!(read, Tier::Glass, "{viewer:?} must not be raised to glass");
    }
}

// ── The viewer a request carries ────────────────────────────────────────────

#[test]
fn a_readers_relationship_sets_its_tier() {
    let expected = [
        (Relationship::Operator, Tier::Glass),
        (Relationship::Member, Tier::Ledger),
        (Relationship::Stranger, Tier::Pulse),
        (Relationship::Anonymous, Tier::Pulse),
    ];
    for (relationship, tier) in expected {
        assert_eq!(relationship.tier(), tier, "{relationship} reads at {tier}");
        assert_eq!(relationship.viewer(Some(7_u32)).tier, tier);
    }
}

#[test]
fn the_viewer_descriptor_serializes_as_viewer_2_returns_it() {
    let expected = [
        (
            Relationship::Operator,
            json!({"account_id": 7, "tier": "glass", "admin": true}),
        ),
        (
            Relationship::Member,
            json!({"account_id": 7, "tier": "ledger"}),
        ),
        (
            Relationship::Stranger,
            json!({"account_id": 7, "tier": "pulse"}),
        ),
        (
            Relationship::Anonymous,
            json!({"account_id": null, "tier": "pulse"}),
        ),
    ];
    for (relationship, document) in expected {
        assert_eq!(
            serde_json::to_value(relationship.viewer(Some(7_u32))).expect("a descriptor serializes"),
            document,
            "{relationship}: the admin key only for an operator, and no account when there is no user"
        );
    }
}

#[test]
fn an_anonymous_reader_has_no_account_whatever_is_passed() {
    let descriptor = Relationship::Anonymous.viewer(Some("acct-1"));
    assert_eq!(descriptor.account_id, None, "no user, no account");
    assert!(!descriptor.admin);
    assert_eq!(
        Relationship::Stranger.viewer(Some("acct-1")).account_id,
        Some("acct-1")
    );
}

// ── The attempt's link ──────────────────────────────────────────────────────

fn principal(
    kind: Option<&'static [u8]>,
    id: Option<&'static str>,
) -> PrincipalReading<'static, &'static str> {
    PrincipalReading { kind, id }
}

#[test]
fn a_user_requested_attempt_gets_a_ledger_link_its_requester_owns() {
    let authority = json!({"roots": ["/srv/repo"], "cwd": "/srv/repo"});
    let link = link_for_attempt(
        Some("repo-1"),
        principal(Some(b"user"), Some("acct-1")),
        authority.clone(),
    )
    .expect("a user with an id owns the attempt");
    assert_eq!(
        *link.account_id(),
        "acct-1",
        "the requesting user owns the link"
    );
    assert_eq!(*link.repository_id(), "repo-1");
    let seed = &disclosure().attempt_link;
    assert_eq!(link.artifact_type(), seed["artifact_type"]);
    assert_eq!(link.artifact_ref(), seed["artifact_ref"]);
    assert_eq!(
        link.tier().as_str(),
        seed["tier"],
        "ledger: the ceiling a repository member already had"
    );
    assert_eq!(link.consent().granted_by, seed["consent"]["granted_by"]);
    assert_eq!(
        link.authority_snapshot(),
        &authority,
        "the snapshot is carried as given"
    );
    let mut expected = seed.clone();
    expected["account_id"] = json!("acct-1");
    expected["repository_id"] = json!("repo-1");
    expected["authority_snapshot"] = authority;
    assert_eq!(
        serde_json::to_value(&link).expect("the attributes serialize"),
        expected,
        "the attributes ArtifactLink.changeset/2 is handed, key for key"
    );
}

#[test]
fn an_attempt_in_a_repository_with_no_id_gets_no_link() {
    let refusal = link_for_attempt(None::<&str>, principal(Some(b"user"), Some("acct-1")), ())
        .expect_err("there is nothing to bind a link to");
    assert_eq!(refusal, NoLink::NoRepository);
    let message = refusal.to_string();
    assert!(
        message.contains("repository"),
        "the message says why: {message:?}"
    );
}

#[test]
fn an_attempt_an_agent_requested_gets_no_link() {
    for id in [Some("agent-7"), None] {
        let refusal = link_for_attempt(Some("repo-1"), principal(Some(b"agent"), id), ())
            .expect_err("an agent names no account, so nothing owns the attempt");
        assert_eq!(refusal, NoLink::AgentPrincipal);
        let message = refusal.to_string();
        assert!(
            message.contains("agent"),
            "the message says why: {message:?}"
        );
    }
}

#[test]
fn an_attempt_with_an_unrecognized_principal_gets_no_link() {
    let cases: [(&str, PrincipalReading<&str>); 5] = [
        ("a principal with no type", principal(None, Some("acct-1"))),
        ("a user with no id", principal(Some(b"user"), None)),
        (
            "another type",
            principal(Some(b"organization"), Some("org-1")),
        ),
        ("a shouted type", principal(Some(b"USER"), Some("acct-1"))),
        (
            "a type that is not UTF-8",
            principal(Some(b"us\xffer"), Some("acct-1")),
        ),
    ];
    for (case, principal) in cases {
        let refusal = link_for_attempt(Some("repo-1"), principal, ())
            .expect_err("only a user with an id owns an attempt");
        assert_eq!(refusal, NoLink::UnrecognizedPrincipal, "{case}");
        let message = refusal.to_string();
        assert!(
            message.contains("user") && message.contains("id"),
            "{case}: the message says what was missing: {message:?}"
        );
    }
}

#[test]
fn each_no_link_reason_serializes_as_a_word() {
    assert_eq!(
        serde_json::to_value(NoLink::NoRepository).unwrap(),
        json!("no_repository")
    );
    assert_eq!(
        serde_json::to_value(NoLink::AgentPrincipal).unwrap(),
        json!("agent_principal")
    );
    assert_eq!(
        serde_json::to_value(NoLink::UnrecognizedPrincipal).unwrap(),
        json!("unrecognized_principal")
    );
}

// ── The schedule as data ────────────────────────────────────────────────────

#[test]
fn the_schedule_serializes_every_family_field_tier_and_never_list() {
    let document = serde_json::to_value(schedule()).expect("the schedule serializes");
    let entries = document
        .as_array()
        .expect("the schedule is a list of families");
    assert_eq!(entries.len(), families().len(), "one entry per family");
    for (entry, family) in entries.iter().zip(families()) {
        assert_eq!(
            entry["family"],
            json!(family.as_str()),
            "families in declaration order"
        );
        let fields = entry["fields"].as_array().expect("fields is a list");
        let listed: BTreeSet<(&str, &str)> = fields
            .iter()
            .map(|field| {
                (
                    field["field"].as_str().expect("each field names itself"),
                    field["tier"].as_str().expect("each field names its tier"),
                )
            })
            .collect();
        let seed: BTreeSet<(&str, &str)> = seed_schedule(family).iter().copied().collect();
        assert_eq!(
            listed, seed,
            "{family}: the published schedule is the seed's"
        );
        assert_eq!(fields.len(), seed_schedule(family).len());
        assert_eq!(
            entry["never"],
            json!(seed_never(family)),
            "{family}: the never list, in order"
        );
    }
}

#[test]
fn the_schedule_document_round_trips_as_json() {
    let value = serde_json::to_value(schedule()).expect("the schedule serializes");
    let text = serde_json::to_string(&schedule()).expect("the schedule prints");
    let read: Value = serde_json::from_str(&text).expect("the printed schedule parses");
    assert_eq!(
        read, value,
        "printing and parsing the schedule loses nothing"
    );
}
