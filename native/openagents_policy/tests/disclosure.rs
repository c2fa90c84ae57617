//! The work disclosure schedule: invariants over every family, field and
//! viewer the core knows.
//!
//! Every family comes from `Family::ALL` and every field from the family's
//! own table, so a family or a field added to the core is held to these the
//! day it lands. What the schedule *is* (which rung first exposes which
//! field, what is never published) is stated once, in `src/disclosure.rs`;
//! parity with the seed is `make parity`, a changed answer is the decision
//! diff `make decisions-check` holds to the CHANGELOG, and the host's live
//! columns are held to the schedule by the Elixir suite's WorkDisclosureTest
//! shape (against the host's schemas). Held here: every column is on exactly
//! one list, the ladder is monotone, no viewer reads a never-listed column,
//! and a viewer reads a field exactly when its tier reaches the field's rung
//! (the last two over arbitrary viewers are tests/fuzz.rs's).

use std::collections::BTreeSet;

use openagents_policy::disclosure::{
    effective_tier, link_for_attempt, schedule, Family, Field, NoLink, PrincipalReading, Record,
    Relationship, NO_REASON,
};
use openagents_policy::ladder::{Link, Subject, Tier, Viewer};
use openagents_policy::Reading;
use serde_json::{json, Value};

fn admitted_names(family: Family, viewer: Viewer) -> Vec<&'static str> {
    family.fields_at(&viewer).fields().map(|field| field.name).collect()
}

fn all_field_names(family: Family) -> Vec<&'static str> {
    family.fields().iter().map(|field| field.name).collect()
}

fn word(tier: Tier) -> Viewer {
    Viewer::Word(Reading::Known(tier))
}

// ── Families and the schedule ───────────────────────────────────────────────

#[test]
fn the_fields_tables_are_in_field_name_order() {
    for &family in Family::ALL {
        let names = all_field_names(family);
        assert!(
            names.windows(2).all(|pair| pair[0] < pair[1]),
            "{family}: fields_at/2 returns names sorted, so the table must be sorted and unique: {names:?}"
        );
    }
}

#[test]
fn no_tier_exposes_a_never_listed_or_unknown_name() {
    for &family in Family::ALL {
        for column in family.never() {
            assert_eq!(
                family.field(column),
                None,
                "{family}.{column} is never-listed: no tier exposes it"
            );
        }
        assert_eq!(family.field("no_such_field"), None);
    }
}

// ── Every column on exactly one list ────────────────────────────────────────

#[test]
fn source_columns_are_the_fields_columns_sorted_and_unique() {
    for &family in Family::ALL {
        let columns = family.source_columns();
        assert!(
            columns.windows(2).all(|pair| pair[0] < pair[1]),
            "{family}: source columns are sorted and each appears once"
        );
        let of_fields: BTreeSet<&str> = family.fields().iter().map(|field| field.column).collect();
        assert_eq!(columns, of_fields.into_iter().collect::<Vec<_>>(), "{family}");
    }
}

#[test]
fn no_column_is_both_a_source_and_never_listed() {
    for &family in Family::ALL {
        let sources: BTreeSet<&str> = family.source_columns().into_iter().collect();
        let names: BTreeSet<&str> = all_field_names(family).into_iter().collect();
        let never: BTreeSet<&str> = family.never().iter().copied().collect();
        assert_eq!(
            never.len(),
            family.never().len(),
            "{family}: a never list names each column once"
        );
        assert!(
            sources.is_disjoint(&never),
            "{family}: published and never published: {:?}",
            sources.intersection(&never).collect::<Vec<_>>()
        );
        assert!(
            names.is_disjoint(&never),
            "{family}: a never-listed name is scheduled: {:?}",
            names.intersection(&never).collect::<Vec<_>>()
        );
        let check = family.classify(sources.iter().chain(&never).copied());
        assert!(
            check.unclassified.is_empty() && check.doubly_classified.is_empty(),
            "{family}: the schedule's own columns classify cleanly: {check:?}"
        );
    }
}

#[test]
fn a_new_column_is_reported_unclassified_in_the_order_given() {
    for &family in Family::ALL {
        let mut columns: Vec<&str> = family.source_columns();
        columns.extend(family.never());
        columns.insert(1, "prompt");
        columns.push("cost_cents");
        let check = family.classify(columns);
        assert_eq!(
            check.unclassified,
            ["prompt", "cost_cents"],
            "{family}: a new column fails the schedule until somebody decides"
        );
        assert_eq!(check.doubly_classified, Vec::<&str>::new(), "{family}");
    }
}

// ── What a viewer is admitted ───────────────────────────────────────────────

#[test]
fn dark_admits_nothing() {
    let dark_viewers = [
        word(Tier::Dark),
        Viewer::Word(Reading::Unrecognized),
        Viewer::Tiered { tier: Reading::Unrecognized },
        Viewer::Tiered { tier: Reading::Known(Tier::Dark) },
    ];
    for &family in Family::ALL {
        for viewer in &dark_viewers {
            let admitted = family.fields_at(viewer);
            assert!(
                admitted.is_empty(),
                "{family} for {viewer:?}: a dark projection is absent, not an empty shell"
            );
            assert_eq!(admitted.fields().count(), 0);
        }
    }
}

#[test]
fn the_ladder_is_monotone_and_each_field_appears_from_its_rung_up() {
    for &family in Family::ALL {
        for &low in Tier::ALL {
            for &high in Tier::ALL.iter().filter(|&&high| high >= low) {
                let below: BTreeSet<&str> = admitted_names(family, word(low)).into_iter().collect();
                let above: BTreeSet<&str> =
                    admitted_names(family, word(high)).into_iter().collect();
                assert!(below.is_subset(&above), "{family}: {low} within {high}");
            }
            let admitted = admitted_names(family, word(low));
            for field in family.fields() {
                assert_eq!(
                    admitted.contains(&field.name),
                    low >= field.rung.tier(),
                    "{family}.{} (first at {}) at {low}",
                    field.name,
                    field.rung
                );
            }
        }
        assert_eq!(
            admitted_names(family, word(Tier::Glass)),
            all_field_names(family),
            "{family}: glass admits every scheduled field"
        );
    }
}

#[test]
fn a_viewer_with_no_tier_of_its_own_reads_every_field() {
    let untiered = [Viewer::Account, Viewer::Nobody, Viewer::User { admin: false }];
    for &family in Family::ALL {
        for viewer in &untiered {
            assert_eq!(
                admitted_names(family, *viewer),
                all_field_names(family),
                "{family} for {viewer:?}: no viewer tier means no clamp (fields_at(f, nil) is every field)"
            );
        }
    }
}

#[test]
fn a_glass_viewer_reads_every_field() {
    let glass = [
        word(Tier::Glass),
        Viewer::Operator,
        Viewer::User { admin: true },
        Viewer::Tiered { tier: Reading::Known(Tier::Glass) },
    ];
    for &family in Family::ALL {
        for viewer in &glass {
            assert_eq!(
                admitted_names(family, *viewer),
                all_field_names(family),
                "{family} for {viewer:?}: glass admits every scheduled field"
            );
        }
    }
}

#[test]
fn a_viewer_map_reads_as_its_tier() {
    for &family in Family::ALL {
        for &tier in Tier::ALL {
            let descriptor = Viewer::Tiered { tier: Reading::Known(tier) };
            assert_eq!(
                admitted_names(family, descriptor),
                admitted_names(family, word(tier)),
                "{family}: a descriptor with tier {tier} reads as {tier}"
            );
        }
    }
}

#[test]
fn the_admitted_fields_are_the_familys_own_in_name_order() {
    for &family in Family::ALL {
        let admitted = family.fields_at(&word(Tier::Ledger));
        let fields: Vec<&Field> = admitted.fields().collect();
        assert!(fields.windows(2).all(|pair| pair[0].name < pair[1].name), "{family}: by name");
        assert!(fields.iter().all(|field| family.fields().contains(field)), "{family}: its own");
    }
}

// ── The effective tier of a record ──────────────────────────────────────────

fn link(owned: bool, revoked: bool) -> Link {
    Link { owned, tier: Reading::Known(Tier::Ledger), revoked }
}

#[test]
fn a_linked_record_resolves_through_its_link() {
    let pulse = Viewer::Tiered { tier: Reading::Known(Tier::Pulse) };
    let (owned, record) = (Record::Linked(link(true, false)), Record::Linked(link(false, false)));
    assert_eq!(effective_tier(&owned, &pulse), Tier::Glass, "the link's owner is raised to glass");
    assert_eq!(
        effective_tier(&record, &pulse),
        Tier::Pulse,
        "everyone else is clamped from the link's ledger"
    );
    assert_eq!(effective_tier(&record, &Viewer::Operator), Tier::Glass, "an operator reads glass");
}

#[test]
fn a_revoked_link_makes_the_record_dark_even_for_an_operator() {
    let record = Record::Linked(link(true, true));
    for viewer in [Viewer::Operator, Viewer::User { admin: true }, Viewer::Account, Viewer::Nobody]
    {
        assert_eq!(
            effective_tier(&record, &viewer),
            Tier::Dark,
            "{viewer:?}: a revoked link resolves to dark and the row leaves the projection"
        );
    }
}

#[test]
fn an_operator_reads_an_unlinked_record_at_glass() {
    for column in [Reading::Known(Tier::Pulse), Reading::Known(Tier::Dark), Reading::Unrecognized] {
        assert_eq!(
            effective_tier(&Record::Unlinked(Subject::Tier(column)), &Viewer::Operator),
            Tier::Glass,
            "an operator reaches glass on a record with no link, whatever its column ({column:?})"
        );
    }
}

#[test]
fn nobody_else_is_raised_on_an_unlinked_record() {
    let record = Record::Unlinked(Subject::Tier(Reading::Known(Tier::Ledger)));
    let cases = [
        (Viewer::User { admin: false }, Tier::Ledger),
        (Viewer::Account, Tier::Ledger),
        (Viewer::Tiered { tier: Reading::Known(Tier::Pulse) }, Tier::Pulse),
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
fn a_closer_relationship_never_reads_lower_and_the_descriptor_carries_its_tier() {
    // Relationship::ALL runs from the closest (an operator) to none at all.
    for pair in Relationship::ALL.windows(2) {
        assert!(pair[0].tier() >= pair[1].tier(), "{} reads below {}", pair[0], pair[1]);
    }
    for &relationship in Relationship::ALL {
        assert_eq!(relationship.viewer(Some(7_u32)).tier, relationship.tier());
    }
}

#[test]
fn the_viewer_descriptor_serializes_as_viewer_2_returns_it() {
    let expected = [
        (Relationship::Operator, json!({"account_id": 7, "tier": "glass", "admin": true})),
        (Relationship::Member, json!({"account_id": 7, "tier": "ledger"})),
        (Relationship::Stranger, json!({"account_id": 7, "tier": "pulse"})),
        (Relationship::Anonymous, json!({"account_id": null, "tier": "pulse"})),
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
    assert_eq!(Relationship::Stranger.viewer(Some("acct-1")).account_id, Some("acct-1"));
}

// ── The attempt's link ──────────────────────────────────────────────────────

fn principal(
    kind: Option<&'static [u8]>,
    id: Option<&'static str>,
) -> PrincipalReading<'static, &'static str> {
    PrincipalReading { kind, id }
}

#[test]
fn a_user_requested_attempt_gets_a_link_its_requester_owns_capped_at_a_members_tier() {
    let authority = json!({"roots": ["/srv/repo"], "cwd": "/srv/repo"});
    let link = link_for_attempt(
        Some("repo-1"),
        principal(Some(b"user"), Some("acct-1")),
        authority.clone(),
    )
    .expect("a user with an id owns the attempt");
    assert_eq!(link.account_id, "acct-1", "the requesting user owns the link");
    assert_eq!(link.repository_id, "repo-1");
    assert_eq!(link.authority_snapshot, authority, "the snapshot is carried as given");
    assert!(
        link.tier <= Relationship::Member.tier(),
        "a link grants no stranger more than a member already reads"
    );
    let other = link_for_attempt(Some("repo-2"), principal(Some(b"user"), Some("acct-2")), ())
        .expect("another user owns another attempt");
    assert_eq!(
        (link.artifact_type, link.artifact_ref, link.tier, link.consent),
        (other.artifact_type, other.artifact_ref, other.tier, other.consent),
        "the fixed attributes do not depend on who asked"
    );
    let document = serde_json::to_value(&link).expect("the attributes serialize");
    let keys: BTreeSet<&str> =
        document.as_object().expect("an object").keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        BTreeSet::from([
            "account_id",
            "repository_id",
            "artifact_type",
            "artifact_ref",
            "tier",
            "consent",
            "authority_snapshot"
        ]),
        "the attributes ArtifactLink.changeset/2 is handed"
    );
    assert_eq!(document["tier"], link.tier.as_str());
    assert_eq!(document["authority_snapshot"], authority);
}

#[test]
fn an_attempt_in_a_repository_with_no_id_gets_no_link() {
    let refusal = link_for_attempt(None::<&str>, principal(Some(b"user"), Some("acct-1")), ())
        .expect_err("there is nothing to bind a link to");
    assert_eq!(refusal, NoLink::NoRepository);
    let message = refusal.to_string();
    assert!(message.contains("repository"), "the message says why: {message:?}");
}

#[test]
fn an_attempt_an_agent_requested_gets_no_link() {
    for id in [Some("agent-7"), None] {
        let refusal = link_for_attempt(Some("repo-1"), principal(Some(b"agent"), id), ())
            .expect_err("an agent names no account, so nothing owns the attempt");
        assert_eq!(refusal, NoLink::AgentPrincipal);
        let message = refusal.to_string();
        assert!(message.contains("agent"), "the message says why: {message:?}");
    }
}

#[test]
fn an_attempt_with_an_unrecognized_principal_gets_no_link() {
    let cases: [(&str, PrincipalReading<&str>); 5] = [
        ("a principal with no type", principal(None, Some("acct-1"))),
        ("a user with no id", principal(Some(b"user"), None)),
        ("another type", principal(Some(b"organization"), Some("org-1"))),
        ("a shouted type", principal(Some(b"USER"), Some("acct-1"))),
        ("a type that is not UTF-8", principal(Some(b"us\xffer"), Some("acct-1"))),
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
    assert_eq!(serde_json::to_value(NoLink::NoRepository).unwrap(), json!("no_repository"));
    assert_eq!(serde_json::to_value(NoLink::AgentPrincipal).unwrap(), json!("agent_principal"));
    assert_eq!(
        serde_json::to_value(NoLink::UnrecognizedPrincipal).unwrap(),
        json!("unrecognized_principal")
    );
}

// ── The schedule as data ────────────────────────────────────────────────────

#[test]
fn the_schedule_serializes_every_family_field_tier_and_never_list() {
    let document = serde_json::to_value(schedule()).expect("the schedule serializes");
    let entries = document.as_array().expect("the schedule is a list of families");
    assert_eq!(entries.len(), Family::ALL.len(), "one entry per family");
    for (entry, &family) in entries.iter().zip(Family::ALL) {
        assert_eq!(entry["family"], json!(family.as_str()), "families in declaration order");
        let fields: Vec<Value> = family
            .fields()
            .iter()
            .map(|field| {
                let (name, column, reason) = (field.name, field.column, field.reason);
                json!({"field": name, "tier": field.rung.as_str(), "column": column, "reason": reason})
            })
            .collect();
        assert_eq!(
            entry["fields"],
            json!(fields),
            "{family}: every field, its tier, column, reason"
        );
        let never: Vec<Value> = (family.never().iter().zip(family.never_listed()))
            .map(|(column, never)| json!({"column": column, "reason": never.reason}))
            .collect();
        assert_eq!(entry["never"], json!(never), "{family}: the never list and reasons, in order");
    }
}

/// Each placement and each never-listed column carries a reason: a sentence
/// of its own, or the one that says the seeds give none. A field or column
/// added without one fails here.
#[test]
fn every_field_and_never_listed_column_has_its_reason() {
    for &family in Family::ALL {
        let scheduled = family.fields().iter().map(|field| (field.name, field.reason));
        let listed = family.never_listed().iter().map(|never| (never.column, never.reason));
        for (name, reason) in scheduled.chain(listed) {
            assert!(
                reason.len() > 8 && reason.ends_with('.'),
                "{family}.{name}: its reason is a sentence, not {reason:?}"
            );
        }
    }
    assert!(NO_REASON.starts_with("No reason"), "the seeds' silence is said, not hidden");
}

#[test]
fn the_schedule_document_round_trips_as_json() {
    let value = serde_json::to_value(schedule()).expect("the schedule serializes");
    let text = serde_json::to_string(&schedule()).expect("the schedule prints");
    let read: Value = serde_json::from_str(&text).expect("the printed schedule parses");
    assert_eq!(read, value, "printing and parsing the schedule loses nothing");
}
