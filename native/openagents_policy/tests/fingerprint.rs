//! The decision digest: a pure function of the answers, moved by any one of
//! them, and the same for every build of the same rules.

use openagents_policy::fingerprint::{decision_digest, decision_json, Tables};
use openagents_policy::ladder::Tier;
use openagents_policy::target::{BoxState, Lifecycle};
#[cfg(feature = "fingerprint_probe")]
use openagents_policy::Reading;

/// The decision digest of the rules as they are in this checkout. A build
/// of the same sources (any machine, any toolchain the workspace supports)
/// computes this value; a changed rule does not. When a rule changes on
/// purpose, the new value is printed by the failing assertion below: put it
/// here, in the same commit as the rule.
const GOLDEN: &str = "19033faf95f835f743b9dba5a190847b0dc1f2b60bd258c1f5234f41b7a106af";

#[cfg(not(feature = "fingerprint_probe"))]
#[test]
fn a_build_of_these_rules_has_the_golden_digest() {
    let digest = decision_digest().unwrap();
    assert_eq!(
        digest, GOLDEN,
        "the decision digest changed: a finite-domain answer of the core is not what it was. \
         If the change is deliberate, set GOLDEN in tests/fingerprint.rs to {digest} \
         (and say so in CHANGELOG.md: nodes on the old rules answer differently)"
    );
}

#[test]
fn the_digest_is_a_pure_function_of_the_answers() {
    let (first, second) = (Tables::compute(), Tables::compute());
    assert_eq!(first, second);
    assert_eq!(first.to_json().unwrap(), decision_json().unwrap());
    assert_eq!(first.digest().unwrap(), decision_digest().unwrap());
    assert_eq!(decision_digest().unwrap().len(), 64);
}

/// Every vocabulary is in the document, with exactly its words.
#[test]
fn every_vocabulary_is_in_the_document() {
    let tables = Tables::compute();
    assert_eq!(
        tables
            .vocabularies
            .iter()
            .map(|entry| entry.vocabulary)
            .collect::<Vec<_>>(),
        openagents_policy::Vocabulary::ALL
    );
    let box_states = tables
        .vocabularies
        .iter()
        .find(|entry| entry.vocabulary == openagents_policy::Vocabulary::BoxState)
        .unwrap();
    assert_eq!(box_states.words, BoxState::words());
}

/// A name and a change of one answer.
type Perturbation = (&'static str, fn(&mut Tables));

/// One answer changed in any one table is another digest: no table is left
/// out of what is digested.
#[test]
#[allow(clippy::too_many_lines)] // one line per table, as rustfmt writes it
fn one_changed_answer_in_any_table_is_another_digest() {
    let tables = Tables::compute();
    let digest = tables.digest().unwrap();
    let perturbations: Vec<Perturbation> = vec![
        (
            "a vocabulary word",
            (|t: &mut Tables| t.vocabularies[0].words[0] = "other"),
        ),
        (
            "a field's rung",
            (|t: &mut Tables| t.schedule[0].fields[0] = t.schedule[0].fields[1]),
        ),
        (
            "a never list",
            (|t: &mut Tables| {
                t.schedule[1].never.pop();
            }),
        ),
        (
            "the source columns",
            (|t: &mut Tables| {
                t.schedule[2].source_columns.pop();
            }),
        ),
        (
            "fields at a tier",
            (|t: &mut Tables| {
                t.schedule[3].fields_at[1].1.pop();
            }),
        ),
        (
            "a relationship",
            (|t: &mut Tables| t.relationships[1].1.tier = Tier::Glass),
        ),
        ("a rung", (|t: &mut Tables| t.rungs[0].1 = Tier::Dark)),
        ("a rank", (|t: &mut Tables| t.ladder.ranks[1].1 = 9)),
        (
            "a tier word",
            (|t: &mut Tables| t.ladder.named[4].1 = Tier::Pulse),
        ),
        (
            "an access minimum",
            (|t: &mut Tables| t.ladder.minimums[0].1 = Tier::Dark),
        ),
        ("a viewer", (|t: &mut Tables| t.ladder.viewers[0].2 = false)),
        (
            "a clamp",
            (|t: &mut Tables| t.ladder.clamp[3].1[0] = Tier::Dark),
        ),
        (
            "an effective tier",
            (|t: &mut Tables| t.ladder.effective[0].1[0] = Tier::Dark),
        ),
        (
            "an allows?",
            (|t: &mut Tables| t.ladder.allows[0].2[0] ^= true),
        ),
        (
            "a record's tier",
            (|t: &mut Tables| t.ladder.records[0].2[0] = Tier::Dark),
        ),
        (
            "a Box lifecycle",
            (|t: &mut Tables| t.lifecycles.box_states[0].1 = Lifecycle::Active),
        ),
        (
            "a run lifecycle",
            (|t: &mut Tables| t.lifecycles.run_states.swap(0, 1)),
        ),
        (
            "a job lifecycle",
            (|t: &mut Tables| t.lifecycles.job_statuses.swap(0, 1)),
        ),
        (
            "a machine lifecycle",
            (|t: &mut Tables| t.lifecycles.machines[0].3 = Lifecycle::Active),
        ),
        (
            "a kind's custody",
            (|t: &mut Tables| t.seams.kinds.swap(0, 1)),
        ),
        (
            "an unavailable reason",
            (|t: &mut Tables| t.seams.unavailable[0].2 = None.or(t.seams.unavailable[2].2)),
        ),
        ("a seam", (|t: &mut Tables| t.seams.seams.swap(0, 1))),
        (
            "a delegation seam",
            (|t: &mut Tables| t.seams.delegation_seams.swap(0, 4)),
        ),
        (
            "an offered capability",
            (|t: &mut Tables| t.seams.offered[0].1 ^= true),
        ),
        ("a minted link", (|t: &mut Tables| t.links.swap(0, 2))),
    ];
    for (what, perturb) in perturbations {
        let mut changed = tables.clone();
        perturb(&mut changed);
        assert_ne!(
            changed, tables,
            "the perturbation of {what} changed nothing"
        );
        assert_ne!(
            changed.digest().unwrap(),
            digest,
            "changing {what} left the digest as it was"
        );
    }
}

/// Built with `--features fingerprint_probe`, the core has one rule
/// changed in its source (an `archiving` Box reads `destroyed`, see
/// target.rs): the digest is no longer the golden one, and putting back that
/// one answer in the computed tables gives the golden digest again, so the
/// digest moved for that rule and for nothing else.
#[cfg(feature = "fingerprint_probe")]
#[test]
fn a_changed_rule_in_the_core_is_another_digest() {
    let mut tables = Tables::compute();
    assert_ne!(tables.digest().unwrap(), GOLDEN);
    let row = tables
        .lifecycles
        .box_states
        .iter_mut()
        .find(|(state, _)| *state == Reading::Known(BoxState::Archiving))
        .unwrap();
    assert_eq!(
        row.1,
        Lifecycle::Destroyed,
        "the probe's rule is not in this build"
    );
    row.1 = Lifecycle::Stopping;
    assert_eq!(tables.digest().unwrap(), GOLDEN);
}
