//! The tier ladder, the pure half of the host's `OpenAgents.Transparency`:
//! ranks, naming a tier, a viewer's own tier, the clamp, effective tier and
//! `allows?`, on every tier and access of the core's vocabularies and every
//! viewer shape the host passes. The invariants over arbitrary links and
//! viewers (a revoked link is dark, nothing reads above its tier unless
//! owned or administered, a bare tier never rises) are tests/fuzz.rs's.
//! Whether a viewer owns a link is the host's fact (`Link::owned`), compared
//! in Elixir and tested there.

use openagents_policy::ladder::{allows, effective_tier, Access, Link, Subject, Tier, Viewer};
use openagents_policy::Reading;

fn known(tier: Tier) -> Reading<Tier> {
    Reading::Known(tier)
}

fn named(word: &[u8]) -> Tier {
    Tier::read(word).named()
}

fn live_link(tier: Tier) -> Link {
    Link { owned: false, tier: known(tier), revoked: false }
}

fn owned_link(tier: Tier) -> Link {
    Link { owned: true, ..live_link(tier) }
}

/// Every viewer shape the host passes, each with the tier upstream.md says it
/// carries of its own (`None` for no clamp).
fn every_viewer_shape() -> Vec<(&'static str, Viewer, Option<Tier>)> {
    vec![
        ("an operator descriptor", Viewer::Operator, Some(Tier::Glass)),
        ("an admin User", Viewer::User { admin: true }, Some(Tier::Glass)),
        ("a non-admin User", Viewer::User { admin: false }, None),
        (
            "a map with tier ledger",
            Viewer::Tiered { tier: known(Tier::Ledger) },
            Some(Tier::Ledger),
        ),
        ("a map with tier: nil", Viewer::Tiered { tier: Reading::Unrecognized }, Some(Tier::Dark)),
        ("a map with an account and no tier", Viewer::Account, None),
        ("a bare tier word", Viewer::Word(known(Tier::Pulse)), Some(Tier::Pulse)),
        ("a bare unknown word", Viewer::Word(Reading::Unrecognized), Some(Tier::Dark)),
        ("nil or anything else", Viewer::Nobody, None),
    ]
}

// ── Ranks and naming ────────────────────────────────────────────────────────

#[test]
fn a_tiers_rank_is_its_place_on_the_ladder_and_orders_it() {
    for (place, &tier) in Tier::ALL.iter().enumerate() {
        assert_eq!(usize::from(tier.rank()), place, "{tier}'s rank");
    }
    for &low in Tier::ALL {
        for &high in Tier::ALL {
            assert_eq!(
                low.cmp(&high),
                low.rank().cmp(&high.rank()),
                "{low} against {high}: the ladder orders tiers by rank and by nothing else"
            );
        }
    }
}

#[test]
fn a_known_word_names_its_own_tier() {
    for &tier in Tier::ALL {
        assert_eq!(named(tier.as_str().as_bytes()), tier, "{tier:?} names itself");
    }
}

#[test]
fn anything_unknown_names_dark() {
    for word in [&b"GLASS"[..], b"Glass", b"glass ", b"bogus", b"", b"3", b"\xff"] {
        assert_eq!(
            named(word),
            Tier::Dark,
            "{:?} is not a tier's name, and an unknown tier is dark, never a guess",
            String::from_utf8_lossy(word)
        );
    }
    assert_eq!(
        Reading::<Tier>::Unrecognized.named(),
        Tier::Dark,
        "nil and integers arrive as Unrecognized and name dark"
    );
}

// ── A viewer's own tier ─────────────────────────────────────────────────────

#[test]
fn each_viewer_shape_carries_the_tier_upstream_gives_it() {
    for (shape, viewer, expected) in every_viewer_shape() {
        assert_eq!(viewer.tier(), expected, "{shape}");
    }
}

#[test]
fn only_an_operator_descriptor_and_an_admin_user_are_admins() {
    for (shape, viewer, _) in every_viewer_shape() {
        let admin = matches!(viewer, Viewer::Operator | Viewer::User { admin: true });
        assert_eq!(viewer.is_admin(), admin, "{shape}");
    }
}

// ── The clamp ───────────────────────────────────────────────────────────────

#[test]
fn a_viewer_with_no_tier_leaves_every_tier_as_it_is() {
    for viewer in [Viewer::Nobody, Viewer::Account, Viewer::User { admin: false }] {
        for &tier in Tier::ALL {
            assert_eq!(
                viewer.clamp(tier),
                tier,
                "{viewer:?} has no tier of its own, so it clamps nothing"
            );
        }
    }
}

#[test]
fn a_viewer_with_a_tier_clamps_to_the_lower_rank() {
    for &own in Tier::ALL {
        let viewer = Viewer::Word(known(own));
        for &tier in Tier::ALL {
            let lower = if own.rank() <= tier.rank() { own } else { tier };
            assert_eq!(
                viewer.clamp(tier),
                lower,
                "a {own} viewer reading {tier}: the lower rank wins"
            );
        }
    }
}

// ── Effective tier of a link ────────────────────────────────────────────────

#[test]
fn the_owner_of_a_live_link_reads_glass() {
    let subject = Subject::Link(owned_link(Tier::Ledger));
    for owner in [
        Viewer::Account,
        Viewer::User { admin: false },
        Viewer::Tiered { tier: known(Tier::Pulse) },
        Viewer::Tiered { tier: known(Tier::Dark) },
    ] {
        assert_eq!(
            effective_tier(&subject, &owner),
            Tier::Glass,
            "{owner:?} owns the link, so it is raised past the link's tier and its own clamp"
        );
    }
}

#[test]
fn an_admin_reads_every_live_link_at_glass() {
    let subject = Subject::Link(live_link(Tier::Dark));
    for admin in [Viewer::Operator, Viewer::User { admin: true }] {
        assert_eq!(
            effective_tier(&subject, &admin),
            Tier::Glass,
            "{admin:?} is an admin, raised to glass on a live link whatever its tier"
        );
    }
}

#[test]
fn a_stranger_reads_a_live_link_at_its_tier_clamped() {
    let subject = Subject::Link(live_link(Tier::Ledger));
    let cases = [
        (Viewer::Tiered { tier: known(Tier::Pulse) }, Tier::Pulse),
        (Viewer::Tiered { tier: known(Tier::Glass) }, Tier::Ledger),
        (Viewer::Account, Tier::Ledger),
        (Viewer::User { admin: false }, Tier::Ledger),
        (Viewer::Word(known(Tier::Glass)), Tier::Ledger),
        (Viewer::Word(known(Tier::Dark)), Tier::Dark),
        (Viewer::Word(Reading::Unrecognized), Tier::Dark),
        (Viewer::Nobody, Tier::Ledger),
    ];
    for (viewer, expected) in cases {
        assert_eq!(
            effective_tier(&subject, &viewer),
            expected,
            "{viewer:?} does not own the ledger link: the link's tier, clamped by the viewer"
        );
    }
}

#[test]
fn a_link_with_an_unknown_tier_word_reads_dark_to_strangers() {
    let subject = Subject::Link(Link { tier: Reading::Unrecognized, ..live_link(Tier::Glass) });
    assert_eq!(
        effective_tier(&subject, &Viewer::Nobody),
        Tier::Dark,
        "an unknown link tier names dark"
    );
    assert_eq!(
        effective_tier(
            &Subject::Link(Link { owned: true, ..live_link(Tier::Glass) }),
            &Viewer::Account
        ),
        Tier::Glass,
        "the owner of a live link is raised whatever its tier word"
    );
}

#[test]
fn a_revoked_link_is_dark_for_everyone_operators_included() {
    let subject = Subject::Link(Link { revoked: true, ..owned_link(Tier::Glass) });
    for (_, viewer, _) in every_viewer_shape() {
        assert_eq!(
            effective_tier(&subject, &viewer),
            Tier::Dark,
            "{viewer:?}: revocation withdraws consent, and nobody reads past it"
        );
    }
}

// ── Effective tier of a bare tier ───────────────────────────────────────────

#[test]
fn a_bare_tier_is_named_and_clamped_and_never_raised() {
    for &tier in Tier::ALL {
        let subject: Subject = Subject::Tier(known(tier));
        for (shape, viewer, own) in every_viewer_shape() {
            let expected = own.map_or(tier, |own| own.min(tier));
            assert_eq!(
                effective_tier(&subject, &viewer),
                expected,
                "{shape} reading a bare {tier}: a bare tier has no owner, so even an admin is only clamped"
            );
        }
    }
    let unknown: Subject = Subject::Tier(Reading::Unrecognized);
    assert_eq!(
        effective_tier(&unknown, &Viewer::Operator),
        Tier::Dark,
        "an unknown bare tier names dark, for operators too"
    );
}

// ── allows? ─────────────────────────────────────────────────────────────────

#[test]
fn an_access_is_allowed_exactly_from_its_minimum_up() {
    for &access in Access::ALL {
        for &tier in Tier::ALL {
            let subject: Subject = Subject::Tier(known(tier));
            assert_eq!(
                allows(&subject, Reading::Known(access), &Viewer::Nobody),
                tier >= access.minimum(),
                "{access} on a {tier} record"
            );
        }
        assert!(access.minimum() > Tier::Dark, "{access}: a dark record allows no known access");
    }
}

#[test]
fn allows_reads_the_effective_tier_not_the_subjects() {
    let full = Reading::Known(Access::Full);
    assert!(
        allows(&Subject::Link(owned_link(Tier::Pulse)), full, &Viewer::Account),
        "the owner is raised to glass, so full access is allowed"
    );
    assert!(
        !allows(&Subject::Link(live_link(Tier::Pulse)), full, &Viewer::Account),
        "a stranger reads pulse, which does not reach full"
    );
    let revoked = Subject::Link(Link { revoked: true, ..live_link(Tier::Glass) });
    assert!(
        !allows(&revoked, Reading::Known(Access::Metadata), &Viewer::Operator),
        "a revoked link is dark, which admits not even metadata, for an operator too"
    );
}

#[test]
fn an_unknown_access_needs_only_dark() {
    assert_eq!(
        Reading::<Access>::Unrecognized.minimum(),
        Tier::Dark,
        "an unknown capability's minimum is dark"
    );
    let dark: Subject = Subject::Tier(known(Tier::Dark));
    assert!(
        allows(&dark, Reading::Unrecognized, &Viewer::Word(known(Tier::Dark))),
        "rank(dark) >= rank(dark): upstream's allows? admits an unknown capability everywhere"
    );
}
