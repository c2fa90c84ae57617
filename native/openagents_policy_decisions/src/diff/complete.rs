//! A document holds every question its own vocabularies imply: every table
//! that decides ([`Table::decides`]); in each, a row for every word it draws
//! ([`Table::drawn`]) and every combination of its rows' words (but where each
//! family names its own fields). A truncated document is refused, never read
//! as "narrows".

use std::collections::{BTreeSet, HashMap};

use serde_json::{json, Value};

use super::says::word;
use super::{code, Asked, DocumentRefusal, Side};
use crate::document::{Input, Table, ANY_OTHER_WORD};

/// The refusal of a document that lacks a question it implies, if it does.
pub(super) fn check(rows: &[Asked], side: Side) -> Result<(), DocumentRefusal> {
    let incomplete = |why: String| DocumentRefusal::Incomplete { side, why };
    let mut tables: HashMap<Table, Vec<&Input>> = HashMap::new();
    for Asked { row, .. } in rows {
        tables.entry(row.table).or_default().push(&row.input);
    }
    let vocabulary = |name: &Value| {
        let row = rows.iter().map(|asked| &asked.row).find(|row| {
            row.table == Table::Vocabularies && row.input.get("vocabulary") == Some(name)
        })?;
        Some(row.answer.as_array()?.iter().collect::<Vec<_>>())
    };
    for &table in Table::ALL {
        let Some(asked) = tables.get(&table) else {
            if !table.decides() {
                continue;
            }
            return Err(incomplete(format!("it has no row of {table}")));
        };
        for drawn in table.drawn() {
            let name = json!(drawn.vocabulary);
            let words = vocabulary(&name).ok_or_else(|| {
                incomplete(format!(
                    "it has no {} vocabulary, which {table} draws from",
                    word(Some(&name))
                ))
            })?;
            let other = json!(ANY_OTHER_WORD);
            let needed = words.into_iter().chain(drawn.any_other_word.then_some(&other));
            for needed in needed {
                if !asked.iter().any(|input| input.get(drawn.key) == Some(needed)) {
                    let key = code(drawn.key);
                    return Err(incomplete(format!(
                        "no row of {table} asks {key} {}, a word of its {} vocabulary",
                        word(Some(needed)),
                        word(Some(&name))
                    )));
                }
            }
        }
        if !matches!(table, Table::ScheduleFields | Table::ScheduleReasons) {
            combinations(table, asked).map_err(incomplete)?;
        }
    }
    Ok(())
}

/// Every combination of the words the rows of `table` ask, asked.
fn combinations(table: Table, asked: &[&Input]) -> Result<(), String> {
    let keys: Vec<&String> = asked[0].keys().collect();
    if asked.iter().any(|input| !input.keys().eq(keys.iter().copied())) {
        return Err(format!("the rows of {table} do not all ask the same words"));
    }
    let product = keys.iter().try_fold(1_usize, |product, &key| {
        let words: BTreeSet<String> = asked.iter().map(|input| input[key].to_string()).collect();
        product.checked_mul(words.len())
    });
    match product {
        Some(product) if product == asked.len() => Ok(()),
        _ => Err(format!(
            "{table} asks {} questions, not every combination of its words ({})",
            asked.len(),
            product.map_or_else(|| "too many".to_owned(), |product| product.to_string())
        )),
    }
}
