//! The maintainer's tool for this build's decision document: writes it, diffs
//! a document against it, and holds a release to announcing its changes.
//!
//! ```sh
//! # The document this build's rules give (what the package carries as priv/decisions.json):
//! cargo run -q --locked -p openagents_policy_decisions --example decisions -- document > priv/decisions.json
//! # What changed since OLD (default: Markdown; --format json):
//! cargo run -q --locked -p openagents_policy_decisions --example decisions -- diff last-release/decisions.json
//! # The release gate (make check): fails when this build's decisions differ
//! # from OLD and CHANGELOG's Unreleased section lacks the diff's Markdown.
//! cargo run -q --locked -p openagents_policy_decisions --example decisions -- check last-release/decisions.json CHANGELOG.md
//! ```
//!
//! `make decisions-diff` and `make decisions-check` run the last two. The
//! Elixir side has the same diff as `mix openagents_policy.diff OLD NEW`; this
//! tool exists so that the gate reads the core's own document, built by
//! cargo alone, with no NIF and no Mix in between.

use std::process::ExitCode;

use openagents_policy_decisions::diff::{diff, Class};
use openagents_policy_decisions::document::decision_json;

const USAGE: &str = "usage: decisions document
       decisions diff OLD [--format markdown|json]
       decisions check OLD CHANGELOG";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["document"] => {
            print!("{}", decision_json());
            Ok(())
        }
        ["diff", old] => changes(old, "markdown"),
        ["diff", old, "--format", format] => changes(old, format),
        ["check", old, changelog] => check(old, changelog),
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("{why}");
            ExitCode::FAILURE
        }
    }
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|error| format!("{path}: {error}"))
}

fn changes(old: &str, format: &str) -> Result<(), String> {
    let changes =
        diff(read(old)?, decision_json()).map_err(|refusal| format!("{old}: {refusal}"))?;
    match format {
        "markdown" => print!("{}", changes.to_markdown()),
        "json" => println!("{}", changes.to_json()),
        other => return Err(format!("--format {other}: markdown or json\n{USAGE}")),
    }
    Ok(())
}

/// The lines of `text`, each without its trailing whitespace.
fn normalized(text: &str) -> String {
    text.lines().map(str::trim_end).collect::<Vec<_>>().join("\n")
}

/// The Unreleased section of a Keep a Changelog file: from its heading to
/// the next `## ` heading.
fn unreleased(changelog: &str) -> Option<String> {
    let mut lines = changelog.lines().skip_while(|line| !line.starts_with("## [Unreleased]"));
    let heading = lines.next()?;
    let body = lines.take_while(|line| !line.starts_with("## "));
    Some(std::iter::once(heading).chain(body).collect::<Vec<_>>().join("\n"))
}

fn check(old_path: &str, changelog_path: &str) -> Result<(), String> {
    let (old, live) = (read(old_path)?, decision_json());
    if old == live {
        println!("decisions: the core's decision document is {old_path}'s: nothing to announce");
        return Ok(());
    }
    let changes = diff(&old, &live).map_err(|refusal| format!("{old_path}: {refusal}"))?;
    if changes.is_empty() {
        return Err(format!(
            "decisions: {old_path} is not byte for byte the document these rules give, yet no \
             answer differs: write it as the tool writes documents (`cargo run -q --locked -p \
             openagents_policy_decisions --example decisions -- document > {old_path}` at the release it \
             records)"
        ));
    }
    let markdown = changes.to_markdown();
    let changelog = read(changelog_path)?;
    let section = unreleased(&changelog)
        .ok_or_else(|| format!("decisions: {changelog_path} has no \"## [Unreleased]\" section"))?;
    if normalized(&section).contains(normalized(&markdown).trim()) {
        println!(
            "decisions: changed answers since {old_path}: {}, announced in {changelog_path}",
            changes.changes().len()
        );
        return Ok(());
    }
    Err(format!(
        "decisions: the core's decisions differ from the last release's ({old_path}): changed \
         answers {}, widening {}, and {changelog_path}'s Unreleased section does not carry the \
         diff. Paste what `make decisions-diff` prints under \"## [Unreleased]\" (as it is: \
         the check looks for it verbatim). It is:\n\n{markdown}",
        changes.changes().len(),
        changes.of_class(Class::Widens).count(),
    ))
}
