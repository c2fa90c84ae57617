//! The decision document of the rules this library was built with, made as
//! the library loads, and the load's refusal of a library whose rules are
//! not its package's (two checkouts sharing `CARGO_TARGET_DIR` share builds):
//! the load data `OpenAgentsPolicy.Native` hands it is the SHA-256 of the
//! package's `priv/decisions.json`, which must be the library's own digest.

use std::sync::OnceLock;

use openagents_policy_decisions::document::{sha256_hex, Document};
use rustler::{Binary, Env, NifResult, Term};

use crate::error::raise;
use crate::word::Text;

/// Why the library refused to load.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    #[error("openagents_policy: the NIF library's decision digest is {built}, but its package's priv/decisions.json is {package}: the library was built from other rules: a cargo target directory shared with another checkout (CARGO_TARGET_DIR; touch native/*/src/*.rs, or cargo clean), an artifact of another version, or a rule changed without `make decisions`")]
    Foreign { built: String, package: String },
    #[error("openagents_policy: the load data is not the package's decision digest")]
    NoDigest,
}

/// The canonical document and its SHA-256, once the library has loaded.
static DECISIONS: OnceLock<(String, String)> = OnceLock::new();

fn check(load_info: Term<'_>) -> Result<(), Refusal> {
    let package = load_info.decode::<Binary>().map_err(|_| Refusal::NoDigest)?;
    let json = Document::compute().to_json();
    let built = sha256_hex(json.as_bytes());
    if built.as_bytes() != package.as_slice() {
        let package = String::from_utf8_lossy(package.as_slice()).into_owned();
        return Err(Refusal::Foreign { built, package });
    }
    let _ = DECISIONS.set((built, json));
    Ok(())
}

/// The load callback: `true` (loaded) only when this library's decisions are
/// its package's; otherwise the refusal, naming both digests, goes to stderr
/// (`:erlang.load_nif/2` can say no more than that the load failed).
pub fn load(_env: Env<'_>, load_info: Term<'_>) -> bool {
    check(load_info).map_err(|refusal| eprintln!("{refusal}")).is_ok()
}

fn decisions() -> NifResult<&'static (String, String)> {
    DECISIONS.get().ok_or_else(|| raise("the library loaded without its decisions"))
}

/// The decision digest (64 hex digits), computed as the library loaded.
#[rustler::nif]
fn decision_digest() -> NifResult<Text<'static>> {
    Ok(Text(&decisions()?.0))
}

/// The canonical document the digest is taken of.
#[rustler::nif]
fn decision_json() -> NifResult<Text<'static>> {
    Ok(Text(&decisions()?.1))
}
