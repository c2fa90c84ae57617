//! The decision diff's cost on two whole documents, in the core alone (no
//! NIF, no term encoding):
//! `cargo run --release -p openagents_policy --example diff_bench`
//! (`make bench-diff` runs it, then the same through the NIF). An example
//! rather than a cargo bench: the package a host builds from carries the
//! crates' `src/` only, and a `[[bench]]` entry naming a file it lacks
//! would stop that build.
//!
//! Three pairs, each built from this build's own document or from the
//! diff's own limits, nothing written by hand:
//!
//! * the document against itself: every answer read and compared, no change;
//! * the document against a copy in which every `ladder.allows` answer is
//!   flipped: every one of them a change, each classed and put in words;
//! * two documents at the limits (`diff::Limit`): as many rows as the byte
//!   limit holds, each asking long words, every answer different, which is
//!   the most one diff may read and make.
//!
use std::time::{Duration, Instant};

use openagents_policy::diff::{diff, Limit};
use openagents_policy::fingerprint::decision_json;
use serde_json::{json, Value};

fn main() {
    let runs: usize = std::env::var("DIFF_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .filter(|&runs| runs > 0)
        .unwrap_or(500);
    let live = decision_json().expect("this build's decision document");
    let flipped = flip_allows(&live);
    let (low, high) = (at_the_limits("dark"), at_the_limits("glass"));
    println!("decision document: {} bytes of compact JSON", live.len());
    println!("at the limits: {} bytes each", low.len());
    println!("diff of two whole documents, core only ({runs} runs each):");
    for (label, old, new) in [
        ("the same document", &live, &live),
        ("every ladder.allows flipped", &live, &flipped),
        ("at the limits", &low, &high),
    ] {
        let changes = diff(old, new).expect("both are documents").changes().len();
        for _ in 0..runs / 10 {
            std::hint::black_box(diff(old, new).expect("both are documents"));
        }
        let mut times: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(diff(old, new).expect("both are documents"));
                start.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "  {label:<30} {changes:>5} changes  min {:>6.3} ms  median {:>6.3} ms  p90 {:>6.3} ms",
            ms(times[0]),
            ms(times[runs / 2]),
            ms(times[runs * 9 / 10])
        );
    }
}

/// The document with every `ladder.allows` answer negated.
fn flip_allows(document: &str) -> String {
    let mut document: Value = serde_json::from_str(document).expect("the document is JSON");
    for row in document["rows"]
        .as_array_mut()
        .expect("the document has rows")
    {
        if row[0] == "ladder.allows" {
            row[2] = json!(!row[2].as_bool().unwrap_or_default());
        }
    }
    document.to_string()
}

/// A document at the limits: `ladder.effective` rows asking words of 100
/// bytes, as many as the byte, row and change limits allow, each answered
/// `tier` (two calls with two tiers differ in every answer).
#[must_use]
pub fn at_the_limits(tier: &str) -> String {
    let word = "w".repeat(100);
    let row = |n: usize| json!(["ladder.effective", {"subject": format!("{word}{n}"), "viewer": word}, tier]);
    let size = row(Limit::Rows.max()).to_string().len() + 1;
    let rows = (Limit::Bytes.max() - 64) / size;
    let rows = rows.min(Limit::Rows.max()).min(Limit::Changes.max());
    json!({"format": 2, "rows": (0..rows).map(row).collect::<Vec<_>>()}).to_string()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
