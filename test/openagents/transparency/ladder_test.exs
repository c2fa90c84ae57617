defmodule OpenAgents.Transparency.LadderTest do
  use ExUnit.Case, async: true

  alias OpenAgents.Accounts
  alias OpenAgents.Accounts.User
  alias OpenAgents.Transparency.{ArtifactLink, Ladder}

  doctest OpenAgents.Transparency.Ladder

  # The ladder's words, as the core serves them; the rules they follow are
  # the core's (native/openagents_policy/src/ladder.rs and its tests). Here:
  # upstream.md's examples of each viewer shape and subject, and what the
  # wrapper adds (atoms and strings alike, host users through
  # Accounts.admin?/1, the exceptions a malformed link raises).
  @tiers Ladder.tiers()
  # A tier's rank is its place on the ladder.
  @ranks Map.new(Enum.with_index(@tiers))
  # The words a link's tier column holds.
  @link_tiers Enum.map(@tiers, &Atom.to_string/1)
  # The capabilities `allows?/3` knows (upstream.md).
  @capabilities [:metadata, :content, :full]

  # Terms that name no tier. Naming them gives `dark`.
  @unknown_words [nil, :bogus, :GLASS, true, false, "GLASS", "Glass", "", " glass", "glass\0"] ++
                   [1, 3, 1.5, ~c"glass", [], {}, {:glass}, %{}, %{tier: :glass}, <<0xFF>>]

  @revoked_at ~U[2026-08-25 12:00:00Z]

  # Every viewer shape upstream.md lists, and its neighbours.
  @viewers [nil, 1, [], {}, %{}, %{admin: false}, %{admin: "true"}, ~c"glass"] ++
             @tiers ++
             Enum.map(@tiers, &Atom.to_string/1) ++
             [:bogus, "GLASS", true] ++
             [%{admin: true}, %{admin: true, tier: :pulse}, %{admin: true, account_id: "acct-2"}] ++
             Enum.map(@tiers ++ [nil, "ledger", "bogus"], &%{tier: &1}) ++
             [%{account_id: "acct-1"}, %{account_id: nil}, %{account_id: "acct-2"}] ++
             [%{account_id: "acct-1", tier: :pulse}, %{account_id: "acct-2", tier: :ledger}] ++
             [%{account_id: "acct-2", tier: :glass}, %{id: "acct-1", tier: :pulse}] ++
             [%User{id: "acct-1"}, %User{id: "acct-2"}, %User{id: nil}] ++
             [%User{id: "op", admin: true}, %User{id: "acct-1", admin: true}]

  defp links do
    for tier <- @link_tiers ++ ["GLASS", nil],
        account_id <- ["acct-1", nil],
        revoked_at <- [nil, @revoked_at],
        do: %ArtifactLink{id: "l", account_id: account_id, tier: tier, revoked_at: revoked_at}
  end

  defp subjects, do: @tiers ++ @link_tiers ++ @unknown_words ++ links()

  describe "naming and ranking a tier" do
    test "the tiers, in rank order" do
      assert @tiers == [:dark, :pulse, :ledger, :glass]
    end

    test "an atom is named by its string, a binary directly" do
      for tier <- @tiers do
        assert Ladder.name(tier) == tier
        assert Ladder.name(Atom.to_string(tier)) == tier
      end
    end

    test "anything unknown names dark: nil, :bogus, \"GLASS\", an integer, a map" do
      for word <- @unknown_words, do: assert(Ladder.name(word) == :dark, inspect(word))
    end

    test "a tier's rank is its place on the ladder, whether named by atom or string" do
      for {tier, rank} <- @ranks do
        assert Ladder.rank(tier) == rank
        assert Ladder.rank(Atom.to_string(tier)) == rank
      end

      for word <- @unknown_words, do: assert(Ladder.rank(word) == 0)
    end
  end

  describe "viewer_tier/1" do
    test "%{admin: true} is glass, whatever else it says" do
      assert Ladder.viewer_tier(%{admin: true}) == :glass
      assert Ladder.viewer_tier(%{admin: true, tier: :pulse}) == :glass
      assert Ladder.viewer_tier(%{admin: true, tier: nil, account_id: "a"}) == :glass
    end

    test "a User is glass when Accounts.admin?/1 says so, and has no tier otherwise" do
      assert Accounts.admin?(%User{id: "op", admin: true})
      assert Ladder.viewer_tier(%User{id: "op", admin: true}) == :glass
      refute Accounts.admin?(%User{id: "u"})
      assert Ladder.viewer_tier(%User{id: "u"}) == nil
      assert Ladder.viewer_tier(%User{id: nil}) == nil
    end

    test "a map with :tier names that tier, so %{tier: nil} is dark" do
      for tier <- @tiers do
        assert Ladder.viewer_tier(%{tier: tier}) == tier
        assert Ladder.viewer_tier(%{tier: Atom.to_string(tier), account_id: "a"}) == tier
      end

      assert Ladder.viewer_tier(%{tier: nil}) == :dark
      assert Ladder.viewer_tier(%{tier: "GLASS"}) == :dark
      assert Ladder.viewer_tier(%{tier: :bogus, account_id: "a"}) == :dark
    end

    test "a map with :account_id and no :tier has no tier" do
      assert Ladder.viewer_tier(%{account_id: "acct-1"}) == nil
      assert Ladder.viewer_tier(%{account_id: nil}) == nil
    end

    test "a binary or a non-nil atom names a tier, unknown ones (booleans included) dark" do
      for tier <- @tiers do
        assert Ladder.viewer_tier(tier) == tier
        assert Ladder.viewer_tier(Atom.to_string(tier)) == tier
      end

      for word <- [:bogus, :GLASS, true, false, "GLASS", "", <<0xFF>>],
          do: assert(Ladder.viewer_tier(word) == :dark, inspect(word))
    end

    test "anything else, nil included, has no tier" do
      for viewer <- [nil, 1, 1.5, [], ~c"glass", {}, {:glass}, %{}, %{admin: false}, %{id: "u"}],
          do: assert(Ladder.viewer_tier(viewer) == nil, inspect(viewer))
    end
  end

  describe "clamp/2" do
    test "the lower rank wins" do
      for tier <- @tiers, own <- @tiers do
        expected = Enum.min_by([tier, own], &@ranks[&1])
        assert Ladder.clamp(tier, %{tier: own}) == expected
        assert Ladder.clamp(Atom.to_string(tier), own) == expected
      end
    end

    test "a viewer with no tier leaves the tier as it is" do
      for tier <- @tiers, viewer <- [nil, %{account_id: "a"}, %User{id: "u"}, 1, %{}] do
        assert Ladder.clamp(tier, viewer) == tier
      end
    end

    test "an unknown tier is named dark before it is clamped" do
      for word <- @unknown_words,
          viewer <- [nil, :glass, %{admin: true}],
          do: assert(Ladder.clamp(word, viewer) == :dark)
    end
  end

  describe "effective_tier/2" do
    setup do
      %{link: %ArtifactLink{id: "l", account_id: "acct-1", tier: "ledger", revoked_at: nil}}
    end

    test "a live link is glass for its owner, by account_id or as a User's id", %{link: link} do
      assert Ladder.effective_tier(link, %{account_id: "acct-1", tier: :pulse}) == :glass
      assert Ladder.effective_tier(link, %{account_id: "acct-1"}) == :glass
      assert Ladder.effective_tier(link, %User{id: "acct-1"}) == :glass
    end

    test "a live link's owner is glass whatever the link's own tier", %{link: link} do
      for tier <- @link_tiers ++ ["GLASS", nil] do
        assert Ladder.effective_tier(%{link | tier: tier}, %{account_id: "acct-1", tier: :dark}) ==
                 :glass
      end
    end

    test "a live link is glass for an operator, by descriptor or by Accounts.admin?/1", %{
      link: link
    } do
      assert Ladder.effective_tier(link, %{admin: true}) == :glass
      assert Ladder.effective_tier(link, %User{id: "op", admin: true}) == :glass
    end

    test "anyone else reads the link's tier clamped by their own", %{link: link} do
      assert Ladder.effective_tier(link, %{account_id: "acct-2", tier: :pulse}) == :pulse
      assert Ladder.effective_tier(link, %{account_id: "acct-2", tier: :glass}) == :ledger
      assert Ladder.effective_tier(link, %{account_id: "acct-2"}) == :ledger
      assert Ladder.effective_tier(link, %User{id: "acct-2"}) == :ledger
      assert Ladder.effective_tier(link, nil) == :ledger
      assert Ladder.effective_tier(link, :pulse) == :pulse
      assert Ladder.effective_tier(%{link | tier: "GLASS"}, nil) == :dark
    end

    test "ownership needs both accounts present and equal", %{link: link} do
      ownerless = %{link | account_id: nil}
      assert Ladder.effective_tier(ownerless, %{account_id: nil, tier: :pulse}) == :pulse
      assert Ladder.effective_tier(ownerless, %User{id: nil}) == :ledger
      assert Ladder.effective_tier(link, %{account_id: "ACCT-1", tier: :pulse}) == :pulse
      # A plain map's :id is not an account; only a User's id is.
      assert Ladder.effective_tier(link, %{id: "acct-1", tier: :pulse}) == :pulse
    end

    test "ownership compares accounts as the host does, with ==", %{link: link} do
      assert Ladder.effective_tier(%{link | account_id: 7}, %{account_id: 7.0, tier: :dark}) ==
               :glass

      assert Ladder.effective_tier(%{link | account_id: 7}, %{account_id: "7", tier: :dark}) ==
               :dark
    end

    test "a revoked link is dark for everyone, operators and its owner included", %{link: link} do
      revoked = %{link | revoked_at: @revoked_at}

      for viewer <- @viewers,
          do: assert(Ladder.effective_tier(revoked, viewer) == :dark, inspect(viewer))
    end

    test "a bare tier is named and clamped; a map that merely looks like a link is not one" do
      assert Ladder.effective_tier("glass", %{tier: :ledger}) == :ledger
      assert Ladder.effective_tier(:pulse, nil) == :pulse
      assert Ladder.effective_tier("GLASS", nil) == :dark

      lookalike = %{account_id: "acct-1", tier: "glass", revoked_at: nil}
      assert Ladder.effective_tier(lookalike, %{account_id: "acct-1"}) == :dark
    end
  end

  describe "a map claiming the link struct without its fields" do
    test "live with no :tier raises KeyError, as the host's ladder reading link.tier does" do
      lacking =
        %ArtifactLink{account_id: "acct-1"}
        |> Map.from_struct()
        |> Map.delete(:tier)
        |> Map.put(:__struct__, ArtifactLink)

      for viewer <- [%{admin: true}, %{account_id: "acct-1"}, %{tier: :glass}, nil] do
        assert_raise KeyError, fn -> Ladder.effective_tier(lacking, viewer) end
        assert_raise KeyError, fn -> Ladder.allows?(lacking, :metadata, viewer) end
      end

      assert Ladder.effective_tier(Map.delete(lacking, :revoked_at), %{admin: true}) == :dark
    end
  end

  describe "allows?/3" do
    test "each capability is allowed from some tier above dark up, and never below it" do
      for capability <- @capabilities do
        allowed = for tier <- @tiers, do: Ladder.allows?(tier, capability, nil)
        refute hd(allowed), "#{capability} at dark"
        assert List.last(allowed), "#{capability} at glass"

        assert allowed == Enum.sort(allowed),
               "#{capability}: #{inspect(allowed)} is not an upper set"

        assert Ladder.allows?(Atom.to_string(List.last(@tiers)), capability, nil)
      end
    end

    test "the viewer's clamp applies" do
      refute Ladder.allows?(:glass, :full, %{tier: :ledger})
      assert Ladder.allows?(:glass, :content, %{tier: :ledger})
      refute Ladder.allows?(:ledger, :metadata, %{tier: nil})
    end

    test "an unknown capability needs only dark" do
      for capability <- [:bogus, "metadata", nil, 1], tier <- @tiers ++ ["GLASS"] do
        assert Ladder.allows?(tier, capability, %{tier: :dark})
      end
    end

    test "for every subject and viewer: allows? is the effective tier reaching the capability" do
      for subject <- subjects(), viewer <- @viewers do
        tier = Ladder.effective_tier(subject, viewer)
        assert tier in @tiers

        for capability <- @capabilities ++ [:bogus] do
          assert Ladder.allows?(subject, capability, viewer) ==
                   Ladder.allows?(tier, capability, nil),
                 "allows?(#{inspect(subject)}, #{inspect(capability)}, #{inspect(viewer)})"
        end
      end
    end

    test "a revoked link allows no known capability, even to an operator" do
      revoked = %ArtifactLink{account_id: "op", tier: "glass", revoked_at: @revoked_at}

      for capability <- @capabilities do
        refute Ladder.allows?(revoked, capability, %{admin: true})
        refute Ladder.allows?(revoked, capability, %{account_id: "op"})
      end
    end
  end

  describe "lower/2" do
    @forms @tiers ++ @link_tiers ++ @unknown_words

    test "the lower by rank/1 of the two tiers as rank/1 reads them; commutative" do
      for a <- @forms, b <- @forms do
        lower = Ladder.lower(a, b)
        assert lower == Ladder.lower(b, a), "#{inspect(a)} and #{inspect(b)}"
        assert lower in [Ladder.name(a), Ladder.name(b)]
        assert Ladder.rank(lower) == min(Ladder.rank(a), Ladder.rank(b))
      end
    end

    test "an unknown word is dark, whatever the other" do
      for a <- @unknown_words, b <- @forms, do: assert(Ladder.lower(a, b) == Ladder.name(a))
    end
  end
end
