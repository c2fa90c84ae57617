//! Atoms for every word the core publishes, made once, on first use.
//!
//! The names come from the core's own vocabularies and tables, so the NIF
//! restates none of them. Atoms live as long as the VM, so holding them in a
//! static is sound, and looking one up per call would cost an atom-table
//! lookup per field.

use std::sync::OnceLock;

use openagents_policy::disclosure::{Family, Field, Relationship};
use openagents_policy::ladder::{Access, Tier};
use rustler::{Atom, Env, NifResult, OwnedEnv};

rustler::atoms! {
    admin,
    tier,
    account_id,
    id,
}

/// The atoms of the core's words, indexed as the core indexes them.
pub struct Words {
    /// By `Tier::ALL` position (which is rank).
    pub tiers: Vec<Atom>,
    /// By `Access::ALL` position.
    pub accesses: Vec<Atom>,
    /// By `Family::ALL` position.
    pub families: Vec<Atom>,
    /// `[family][position in Family::fields()]`.
    pub fields: Vec<Vec<Atom>>,
    /// `[family][position in Family::fields()]`: the tier of the field's rung.
    pub field_tiers: Vec<Vec<Atom>>,
    /// `[family][position in Family::fields()]`: the column the field is read
    /// from.
    pub columns: Vec<Vec<Atom>>,
    /// `[family][position in Family::never()]`.
    pub never: Vec<Vec<Atom>>,
    /// `[family][position in Family::source_columns()]`.
    pub sources: Vec<Vec<Atom>>,
    /// By `Relationship::ALL` position.
    pub relationships: Vec<Atom>,
}

static WORDS: OnceLock<Words> = OnceLock::new();

fn atoms<'w>(env: Env, words: impl IntoIterator<Item = &'w str>) -> NifResult<Vec<Atom>> {
    words.into_iter().map(|word| Atom::from_str(env, word)).collect()
}

fn make(env: Env) -> NifResult<Words> {
    let per_family = |table: &dyn Fn(Family) -> Vec<&'static str>| {
        Family::ALL.iter().map(|&family| atoms(env, table(family))).collect::<NifResult<Vec<_>>>()
    };
    let per_field = |word: fn(&Field) -> &'static str| {
        per_family(&|family| family.fields().iter().map(word).collect())
    };
    Ok(Words {
        tiers: atoms(env, Tier::words())?,
        accesses: atoms(env, Access::words())?,
        families: atoms(env, Family::words())?,
        fields: per_field(Field::name)?,
        field_tiers: per_field(|field| field.rung().tier().as_str())?,
        columns: per_field(Field::column)?,
        never: per_family(&|family| family.never().to_vec())?,
        sources: per_family(&Family::source_columns)?,
        relationships: atoms(env, Relationship::words())?,
    })
}

/// The atoms, made on the first call that asks (an atom lives as long as the
/// VM, so holding it in a static is sound).
pub fn words() -> &'static Words {
    WORDS.get_or_init(|| OwnedEnv::new().run(make).expect("every word of the core is a valid atom"))
}
