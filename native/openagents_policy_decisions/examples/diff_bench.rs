//! The decision diff's cost on two whole documents, in Rust alone (no NIF,
//! no term encoding):
//! `cargo run --release -p openagents_policy_decisions --example diff_bench`
//! (`make bench-diff` runs it, then the same through the NIF). An example
//! rather than a cargo bench: the package a host builds from carries the
//! crates' `src/` only, and a `[[bench]]` entry naming a file it lacks
//! would stop that build.
//!
//! Four pairs, each built from this build's own document or from the
//! diff's own limits, nothing written by hand:
//!
//! * the document against itself: every answer read and compared, no change;
//! * the document against a copy in which every `ladder.effective` answer
//!   is another tier: every one of them a change, each classed and put in
//!   words;
//! * two documents at the read limits (`diff::Limit`): the document and as
//!   many rows more as the byte and row limits hold, each asking a long
//!   word, every answer alike;
//! * the same with every answer different, which the diff refuses as soon
//!   as what it would write passes `Limit::Output`.
//!
//! `DIFF_BENCH_RUNS` (default 200) sets the runs of each pair.
use std::time::{Duration, Instant};

use openagents_policy_decisions::diff::{diff, Limit};
use openagents_policy_decisions::document::{decision_json, FORMAT};
use serde_json::{json, Value};

fn main() {
    let runs: usize = std::env::var("DIFF_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .filter(|&runs| runs > 0)
        .unwrap_or(200);
    let live = decision_json();
    let moved = move_effective(&live);
    let (low, high) = (at_the_limits(&live, 0), at_the_limits(&live, 1));
    println!("decision document: {} bytes", live.len());
    println!("at the read limits: {} bytes each", low.len());
    println!("diff of two whole documents, Rust only ({runs} runs each):");
    for (label, old, new) in [
        ("the same document", &live, &live),
        ("every ladder.effective moved", &live, &moved),
        ("at the read limits, alike", &low, &low),
        ("at the read limits, all moved", &low, &high),
    ] {
        let said = match diff(old, new) {
            Ok(changes) => format!("{:>5} changes", changes.changes().len()),
            Err(refusal) => format!("refused ({refusal})"),
        };
        for _ in 0..runs / 10 {
            let _ = std::hint::black_box(diff(old, new));
        }
        let mut times: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                let _ = std::hint::black_box(diff(old, new));
                start.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "  {label:<30} min {:>6.3} ms  median {:>6.3} ms  p90 {:>6.3} ms  {said}",
            ms(times[0]),
            ms(times[runs / 2]),
            ms(times[runs * 9 / 10])
        );
    }
}

/// The document with every `ladder.effective` answer another tier.
fn move_effective(document: &str) -> String {
    let mut rows = Vec::new();
    let document: Value = serde_json::from_str(document).expect("the document is JSON");
    for row in document["rows"].as_array().expect("the document has rows") {
        let mut row = row.clone();
        if row[0] == "ladder.effective" {
            row[2] = json!(if row[2] == "dark" { "glass" } else { "dark" });
        }
        rows.push(row);
    }
    json!({"format": FORMAT, "rows": rows}).to_string()
}

/// A document at the read limits: `document` and `ladder.ranks` rows more,
/// each a tier word of 100 bytes ranked `rank`, as many as the byte and row
/// limits allow (two calls with two ranks differ in every added answer).
#[must_use]
fn at_the_limits(document: &str, rank: u64) -> String {
    let mut document: Value = serde_json::from_str(document).expect("the document is JSON");
    let word = "w".repeat(100);
    let row = |n: usize| json!(["ladder.ranks", {"tier": format!("{word}{n}")}, rank]);
    let rows = document["rows"].as_array_mut().expect("the document has rows");
    let size = row(Limit::Rows.max()).to_string().len() + 1;
    let room =
        (Limit::Bytes.max() - 64 - rows.iter().map(|row| row.to_string().len() + 1).sum::<usize>())
            / size;
    let more = room.min(Limit::Rows.max() - rows.len());
    rows.extend((0..more).map(row));
    json!({"format": FORMAT, "rows": rows}).to_string()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
