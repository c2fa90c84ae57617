//! The decision fingerprint, for `OpenAgentsPolicy.fingerprint/0`
//! (`openagents_policy_decisions::document`).
//!
//! The document and its digest are computed once, on first use, from the
//! decisions of the core this library was built with: a node asked for its
//! digest answers for the code it is running, not for a file on disk.

use std::sync::OnceLock;

use openagents_policy_decisions::document::{sha256_hex, Document};
use rustler::types::atom;
use rustler::{Encoder, Env, Term};

use crate::text::Text;

/// The canonical document and its SHA-256, or why serde could not write it.
fn computed() -> &'static Result<(String, String), String> {
    static COMPUTED: OnceLock<Result<(String, String), String>> = OnceLock::new();
    COMPUTED.get_or_init(|| {
        let document = Document::compute().map_err(|error| error.to_string())?;
        let json = document.to_json().map_err(|error| error.to_string())?;
        let digest = sha256_hex(json.as_bytes());
        Ok((digest, json))
    })
}

/// The decision digest (64 hex digits), or `{:error, why}`. Dirty: the
/// first call computes the tables (a few thousand answers).
#[rustler::nif(schedule = "DirtyCpu")]
fn decision_digest(env: Env<'_>) -> Term<'_> {
    match computed() {
        Ok((digest, _)) => Text(digest).encode(env),
        Err(why) => (atom::error(), Text(why)).encode(env),
    }
}

/// The canonical document the digest is taken of, or `{:error, why}`.
#[rustler::nif(schedule = "DirtyCpu")]
fn decision_json(env: Env<'_>) -> Term<'_> {
    match computed() {
        Ok((_, json)) => Text(json).encode(env),
        Err(why) => (atom::error(), Text(why)).encode(env),
    }
}
