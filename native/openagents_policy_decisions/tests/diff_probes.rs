//! The diff on the seven rule changes a maintainer makes most: a field
//! moved a rung down or up, a never-listed column scheduled, a capability
//! granted or taken, a Box state mapped elsewhere (to an offering lifecycle,
//! and between two refusals). Each is an edit of the last release's
//! document that moves every answer the real rule change moves, the
//! consequences taken from the document's own rows; the last release's
//! document changes only when a version is cut, so a rule changed in the
//! core leaves these as they are.
//!
//! `tests/golden/<probe>.md` and `.json` hold what the diff says, as a
//! reviewer and the CHANGELOG read it; each was read by hand.
//!
//! When a version is cut and its rules already make a probe's edit, that
//! probe changes nothing and says so: give it another input. Then (and when
//! the diff's wording changes on purpose) write the files anew and read
//! their `git diff`:
//!
//! ```sh
//! OPENAGENTS_WRITE_GOLDEN=1 cargo test -p openagents_policy_decisions --test diff_probes
//! ```

use openagents_policy_decisions::diff::diff;
use openagents_policy_decisions::document::Document;
use serde_json::{json, Value};

mod common;
use common::{answer, asks, edit, json, last_release, row};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/");

/// The last release's document against `edited`: the Markdown and the JSON
/// are the golden files', and the whole widens as said.
fn golden(probe: &str, edited: &Document, widens: bool) {
    let changes = diff(json(&last_release()), json(edited)).unwrap();
    assert!(
        !changes.is_empty(),
        "{probe}: this edit is already the last release's answer (a released rule made it): \
         give the probe another input, then write its golden files anew (this file's header)"
    );
    if std::env::var_os("OPENAGENTS_WRITE_GOLDEN").is_some() {
        let write = |ext: &str, text: String| {
            std::fs::write(format!("{GOLDEN}{probe}.{ext}"), text).unwrap();
        };
        write("md", changes.to_markdown());
        write("json", changes.to_json());
    }
    let file = |ext: &str| common::read(&format!("{GOLDEN}{probe}.{ext}"));
    assert_eq!(changes.to_markdown(), file("md"), "{probe}.md");
    assert_eq!(changes.to_json(), file("json").trim_end(), "{probe}.json");
    assert_eq!(changes.widens(), widens, "{probe}");
}

fn attempt(key: &'static str, word: &str) -> [(&'static str, Value); 2] {
    [("family", json!("attempt")), (key, json!(word))]
}

fn drop_word(list: &mut Value, word: &str) {
    list.as_array_mut().unwrap().retain(|item| item != word);
}

/// Every seam of `lifecycle` (target and delegation seams, and what follows
/// from each substrate word that reads it), for `reach` when given, edited.
fn seams_of(
    document: &mut Document,
    lifecycle: &str,
    reach: Option<&str>,
    mut change: impl FnMut(&mut Value),
) {
    for row in &mut document.rows {
        let seam = ["seams.", "capabilities."].iter().any(|t| row.table.as_str().starts_with(t));
        let reached = reach.is_none_or(|reach| row.input.get("reach") == Some(&json!(reach)));
        if seam && row.answer.get("lifecycle") == Some(&json!(lifecycle)) && reached {
            change(&mut row.answer);
        }
    }
}

/// A Box state reads `lifecycle`: its row, and the seams that follow it,
/// from the document's own Box seams of that lifecycle.
fn box_state_reads(document: &mut Document, state: &str, lifecycle: &str) {
    edit(document, "lifecycles.box_states", &[("box_state", json!(state))], |to| {
        *to = json!(lifecycle);
    });
    for reach in ["authorized", "not_authorized"] {
        let asked =
            [("kind", json!("box")), ("lifecycle", json!(lifecycle)), ("reach", json!(reach))];
        let seam = answer(document, "seams.seams", &asked);
        let words = [("box_state", json!(state)), ("reach", json!(reach))];
        edit(document, "capabilities.box_states", &words, |answer| {
            *answer = seam.clone();
        });
    }
}

#[test]
fn a_field_moved_down_widens() {
    let mut document = last_release();
    edit(&mut document, "schedule.fields", &attempt("field", "terminal_commit"), |f| {
        f["tier"] = json!("pulse");
    });
    golden("field_down", &document, true);
}

#[test]
fn a_field_moved_up_narrows() {
    let mut document = last_release();
    edit(&mut document, "schedule.fields", &attempt("field", "branch"), |f| {
        f["tier"] = json!("glass");
    });
    golden("field_up", &document, false);
}

#[test]
fn a_never_listed_column_scheduled_widens() {
    let mut document = last_release();
    let at =
        document.rows.iter().position(|r| asks(r, "schedule.fields", &attempt("field", "branch")));
    let field = json!({"column": "deadline_at", "field": "deadline_at", "tier": "ledger"});
    document
        .rows
        .insert(at.unwrap() + 1, row("schedule.fields", &attempt("field", "deadline_at"), field));
    edit(&mut document, "schedule.never", &attempt("family", "attempt")[..1], |never| {
        drop_word(never, "deadline_at");
    });
    golden("never_scheduled", &document, true);
}

#[test]
fn a_capability_added_widens() {
    let mut document = last_release();
    seams_of(&mut document, "starting", Some("authorized"), |seam| {
        seam["capabilities"] = json!(["start"]);
        seam["unavailable_reason"] = Value::Null;
    });
    golden("capability_added", &document, true);
}

#[test]
fn a_capability_removed_narrows() {
    let mut document = last_release();
    seams_of(&mut document, "queued", None, |seam| {
        if seam.get("unavailable_reason").is_none() {
            seam["capabilities"] = json!([]);
        }
    });
    golden("capability_removed", &document, false);
}

/// `provisioned` reads `active`: the lifecycle's entry changes (neither gain
/// nor loss by itself); a caller with reach may now start one; one without
/// is refused for its reach instead of the Box's state.
#[test]
fn a_box_state_mapped_to_an_offering_lifecycle_widens_by_what_follows() {
    let mut document = last_release();
    box_state_reads(&mut document, "provisioned", "active");
    golden("box_state_active", &document, true);
}

/// `archiving` reads `destroyed`: both refuse everything, so what follows
/// only changes its reason.
#[test]
fn a_box_state_mapped_between_two_refusals_changes_only() {
    let mut document = last_release();
    box_state_reads(&mut document, "archiving", "destroyed");
    golden("box_state_destroyed", &document, false);
}
