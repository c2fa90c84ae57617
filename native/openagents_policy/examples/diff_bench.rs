//! The decision diff's cost on two whole documents, in the core alone (no
//! NIF, no term encoding):
//! `cargo run --release -p openagents_policy --example diff_bench`
//! (`make bench-diff` runs it, then the same through the NIF). An example
//! rather than a cargo bench: the package a host builds from carries the
//! crates' `src/` only, and a `[[bench]]` entry naming a file it lacks
//! would stop that build.
//!
//! Two pairs, both built from this build's own document, nothing written by
//! hand:
//!
//! * the document against itself: every answer read and compared, no change;
//! * the document against a copy in which every `ladder.allows` answer is
//!   flipped: every one of them a change, each classed and put in words.
//!
//! Each pair is diffed `DIFF_BENCH_RUNS` times (default 500) after a warm-up
//! of a tenth of that; the minimum, median and 90th percentile are printed,
//! with the document's size. A plain `main` timed with `Instant`: the figure
//! wanted is one a maintainer can rerun, not a statistical comparison. It
//! reports and never fails.

use std::time::{Duration, Instant};

use openagents_policy::diff::diff;
use openagents_policy::fingerprint::decision_json;
use serde_json::Value;

fn main() {
    let runs: usize = std::env::var("DIFF_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .filter(|&runs| runs > 0)
        .unwrap_or(500);
    let live = decision_json().expect("this build's decision document");
    let flipped = flip_allows(&live);
    println!("decision document: {} bytes of compact JSON", live.len());
    println!("diff of two whole documents, core only ({runs} runs each):");
    for (label, new) in [
        ("the same document", &live),
        ("every ladder.allows flipped", &flipped),
    ] {
        let changes = diff(&live, new)
            .expect("both are documents")
            .changes()
            .len();
        for _ in 0..runs / 10 {
            std::hint::black_box(diff(&live, new).expect("both are documents"));
        }
        let mut times: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(diff(&live, new).expect("both are documents"));
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

/// The document with every boolean under `ladder.allows` negated.
fn flip_allows(document: &str) -> String {
    let mut document: Value = serde_json::from_str(document).expect("the document is JSON");
    let allows = document
        .pointer_mut("/ladder/allows")
        .expect("the document has ladder.allows");
    negate(allows);
    document.to_string()
}

fn negate(value: &mut Value) {
    match value {
        Value::Bool(answer) => *answer = !*answer,
        Value::Array(items) => items.iter_mut().for_each(negate),
        Value::Object(fields) => fields.values_mut().for_each(negate),
        _ => {}
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
