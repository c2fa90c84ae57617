//! Inputs and answers in the caller's words: who reads at a tier
//! ([`readers`]), a viewer, subject or link written as the Elixir term a host
//! passes ([`words_of`], which parses the `{:?}` of the core's shape just
//! enough to write it again), what a caller may now do ([`capability_words`]),
//! and the small renderings the sentences of [`super::Change::says`] share.

use super::document::{Descriptor, Offer, Word};
use crate::Reading;

pub(super) fn reading_word(word: &Word) -> String {
    match word {
        Reading::Known(word) => word.clone(),
        Reading::Unrecognized => ANY_OTHER.to_owned(),
    }
}

/// How an input names "any word the vocabulary does not have".
const ANY_OTHER: &str = "<any other word>";

/// Who reads at a tier, by the relationships that read at it.
pub(super) fn readers(relationships: &[(String, Descriptor)], tier: Option<&str>) -> String {
    let Some(tier) = tier else {
        return "viewers with no tier of their own".to_owned();
    };
    let names: Vec<String> = relationships
        .iter()
        .filter(|(_, descriptor)| descriptor.tier == tier)
        .map(|(relationship, _)| match relationship.as_str() {
            "operator" => "operators".to_owned(),
            "member" => "members".to_owned(),
            "stranger" => "strangers".to_owned(),
            "anonymous" => "anonymous readers".to_owned(),
            other => format!("`{other}` readers"),
        })
        .collect();
    match names.as_slice() {
        [] => format!("readers at `{tier}`"),
        [one] => format!("{one} (`{tier}`)"),
        [init @ .., last] => format!("{} and {last} (`{tier}`)", init.join(", ")),
    }
}

/// A shape as `{:?}` writes it (`Tiered { tier: Known(Ledger), account_id:
/// Some(1) }`), parsed just enough to be written again as the Elixir term a
/// host passes.
enum Shape<'s> {
    Name(&'s str),
    Call(&'s str, Vec<Shape<'s>>),
    Fields(&'s str, Vec<(&'s str, Shape<'s>)>),
}

struct Parser<'s> {
    text: &'s str,
}

impl<'s> Parser<'s> {
    fn skip(&mut self) {
        self.text = self.text.trim_start();
    }

    fn eat(&mut self, token: char) -> bool {
        self.skip();
        self.text
            .strip_prefix(token)
            .map(|rest| self.text = rest)
            .is_some()
    }

    fn name(&mut self) -> Option<&'s str> {
        self.skip();
        let end = self
            .text
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.text.len());
        let (name, rest) = self.text.split_at(end);
        self.text = rest;
        (!name.is_empty()).then_some(name)
    }

    fn shape(&mut self) -> Option<Shape<'s>> {
        let name = self.name()?;
        if self.eat('(') {
            let mut args = vec![self.shape()?];
            while self.eat(',') {
                args.push(self.shape()?);
            }
            self.eat(')').then_some(Shape::Call(name, args))
        } else if self.eat('{') {
            let mut fields = Vec::new();
            loop {
                let field = self.name()?;
                if !self.eat(':') {
                    return None;
                }
                fields.push((field, self.shape()?));
                if !self.eat(',') {
                    break;
                }
            }
            self.eat('}').then_some(Shape::Fields(name, fields))
        } else {
            Some(Shape::Name(name))
        }
    }
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    for (at, c) in name.char_indices() {
        if c.is_ascii_uppercase() && at > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn elixir(shape: &Shape<'_>) -> String {
    let field = |fields: &[(&str, Shape<'_>)], name: &str| {
        fields
            .iter()
            .find(|(key, _)| *key == name)
            .map_or_else(|| "?".to_owned(), |(_, value)| elixir(value))
    };
    match shape {
        Shape::Name("None" | "Nobody") => "nil".to_owned(),
        Shape::Name("Unrecognized") => ANY_OTHER.to_owned(),
        Shape::Name("Operator") => "%{admin: true}".to_owned(),
        Shape::Name(name) => (*name).to_owned(),
        Shape::Call("Known", args) if args.len() == 1 => match &args[0] {
            Shape::Name(word) => format!("\"{}\"", snake(word)),
            other => elixir(other),
        },
        Shape::Call("Some" | "Word" | "Tier" | "Link", args) if args.len() == 1 => elixir(&args[0]),
        Shape::Fields("Link", fields) => format!(
            "%ArtifactLink{{account_id: {}, tier: {}, revoked_at: {}}}",
            field(fields, "account_id"),
            field(fields, "tier"),
            if field(fields, "revoked") == "true" {
                "<set>"
            } else {
                "nil"
            },
        ),
        Shape::Fields("User", fields) => format!(
            "%User{{id: {}}} with admin? {}",
            field(fields, "id"),
            field(fields, "admin")
        ),
        Shape::Fields("Tiered", fields) => format!(
            "%{{tier: {}, account_id: {}}}",
            field(fields, "tier"),
            field(fields, "account_id")
        ),
        Shape::Fields("Account", fields) => {
            format!("%{{account_id: {}}}", field(fields, "account_id"))
        }
        Shape::Call(name, args) => format!(
            "{name}({})",
            args.iter().map(elixir).collect::<Vec<_>>().join(", ")
        ),
        Shape::Fields(name, fields) => format!(
            "{name} {{{}}}",
            fields
                .iter()
                .map(|(key, value)| format!("{key}: {}", elixir(value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A viewer, subject or link as `{:?}` names it, in the host's terms; the
/// name itself when it is not a shape this module knows.
pub(super) fn words_of(debug: &str) -> String {
    let mut parser = Parser { text: debug };
    match parser.shape() {
        Some(shape) if parser.text.trim().is_empty() => elixir(&shape),
        _ => debug.to_owned(),
    }
}

pub(super) fn record_words(linked: bool, name: &str) -> String {
    if linked {
        format!("%{{artifact_link: {}}}", words_of(name))
    } else {
        format!(
            "%{{artifact_link: nil, transparency_tier: {}}}",
            words_of(name)
        )
    }
}

pub(super) fn reach_words(reach: &str) -> &'static str {
    match reach {
        "authorized" => "with reach",
        "not_authorized" => "without reach",
        _ => "with that reach",
    }
}

fn list(words: &[String]) -> String {
    words
        .iter()
        .map(|word| format!("`{word}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn or_none(word: Option<&String>) -> String {
    word.map_or_else(|| "none".to_owned(), |word| format!("`{word}`"))
}

/// What a caller of a seam gains or loses, in words: "may now `start`",
/// "may no longer `cancel`", the reason otherwise.
pub(super) fn capability_words(before: Option<Offer<'_>>, after: Option<Offer<'_>>) -> String {
    let (Some((before, before_reason)), Some((after, after_reason))) = (before, after) else {
        return match after {
            Some(_) => "is now answered".to_owned(),
            None => "is no longer answered".to_owned(),
        };
    };
    let gained: Vec<String> = after
        .iter()
        .filter(|c| !before.contains(c))
        .cloned()
        .collect();
    let lost: Vec<String> = before
        .iter()
        .filter(|c| !after.contains(c))
        .cloned()
        .collect();
    let mut parts = Vec::new();
    if !gained.is_empty() {
        parts.push(format!("may now {}", list(&gained)));
    }
    if !lost.is_empty() {
        parts.push(format!("may no longer {}", list(&lost)));
    }
    let said = parts.join(" and ");
    match (before_reason, after_reason) {
        (before, after) if before == after => {}
        (Some(before), None) => parts = vec![format!("{said} (it was refused as `{before}`)")],
        (None, Some(after)) => parts = vec![format!("{said} (it is now refused as `{after}`)")],
        (Some(before), Some(after)) if parts.is_empty() => {
            parts.push(format!("is now refused as `{after}` (was `{before}`)"));
        }
        (Some(before), Some(after)) => {
            parts = vec![format!("{said} (now refused as `{after}`, was `{before}`)")];
        }
        (None, None) => {}
    }
    if parts.is_empty() {
        "is answered otherwise".to_owned()
    } else {
        parts.join(" and ")
    }
}

pub(super) fn tier_was(before: Option<&String>, after: Option<&String>) -> String {
    format!("`{}` (was `{}`)", or_dash(after), or_dash(before))
}

fn or_dash(word: Option<&String>) -> &str {
    word.map_or("-", String::as_str)
}

#[cfg(test)]
mod tests {
    use super::words_of;

    #[test]
    fn shapes_are_written_as_the_host_passes_them() {
        assert_eq!(
            words_of("Tiered { tier: Known(Ledger), account_id: Some(1) }"),
            r#"%{tier: "ledger", account_id: 1}"#
        );
        assert_eq!(
            words_of("Link(Link { account_id: None, tier: Unrecognized, revoked: true })"),
            "%ArtifactLink{account_id: nil, tier: <any other word>, revoked_at: <set>}"
        );
        assert_eq!(words_of("Word(Known(Glass))"), r#""glass""#);
        assert_eq!(words_of("Operator"), "%{admin: true}");
        assert_eq!(words_of("Nobody"), "nil");
        assert_eq!(
            words_of("User { id: Some(2), admin: false }"),
            "%User{id: 2} with admin? false"
        );
        assert_eq!(words_of("not ( a shape"), "not ( a shape");
    }
}
