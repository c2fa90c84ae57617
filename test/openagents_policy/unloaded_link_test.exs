defmodule OpenAgentsPolicy.UnloadedLinkTest do
  # `config :openagents_policy, unloaded_link:`: what a record whose link
  # exists but was not loaded reads. async: every mode is set with
  # `Host.override/1`, which no neighbour sees.
  use ExUnit.Case, async: true

  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}
  alias OpenAgentsPolicy.Host
  alias OpenAgentsPolicy.Test.{Assignment, Evidence}

  @viewers [
    %{account_id: nil, tier: :pulse},
    %{account_id: "acct-member", tier: :ledger},
    %{account_id: "acct-owner", tier: :pulse},
    %{account_id: "acct-op", tier: :glass, admin: true}
  ]
  @tier_words ["dark", "pulse", "ledger", "glass", "bogus"]

  # The record with its link not loaded, and its link id set or not.
  defp unloaded(tier, link_id),
    do: %Assignment{transparency_tier: tier, artifact_link_id: link_id}

  # The same record with no link at all: what the seed reads for both.
  defp column(tier), do: %Assignment{transparency_tier: tier, artifact_link: nil}

  test "the default is the seed's: the tier column decides, link id or not" do
    assert Host.unloaded_link() == :tier_column

    for tier <- @tier_words, viewer <- @viewers, link_id <- [nil, "link-1"] do
      assert WorkDisclosure.effective_tier(unloaded(tier, link_id), viewer) ==
               WorkDisclosure.effective_tier(column(tier), viewer)
    end
  end

  test ":dark: a record whose link was not loaded is dark to every viewer, operators included" do
    Host.override(unloaded_link: :dark)

    for tier <- @tier_words, viewer <- @viewers do
      assert WorkDisclosure.effective_tier(unloaded(tier, "link-1"), viewer) == :dark
      # And an evidence edge, whose link association is not loaded either.
      edge = %Evidence{transparency_tier: tier, artifact_link_id: "link-2"}
      assert WorkDisclosure.effective_tier(edge, viewer) == :dark
      assert WorkDisclosure.project(:attempt, Map.from_struct(unloaded(tier, "l")), :dark) == nil
    end
  end

  test ":raise: ArgumentError, saying to preload the link" do
    Host.override(unloaded_link: :raise)

    for viewer <- @viewers do
      error =
        assert_raise ArgumentError, fn ->
          WorkDisclosure.effective_tier(unloaded("ledger", "link-1"), viewer)
        end

      assert error.message =~ "preload :artifact_link"
      assert error.message =~ inspect(Assignment)
    end

    # A plain map is named as such (no struct to name).
    not_loaded = %Ecto.Association.NotLoaded{}

    assert_raise ArgumentError, ~r/preload :artifact_link/, fn ->
      WorkDisclosure.effective_tier(
        %{artifact_link: not_loaded, artifact_link_id: 7, transparency_tier: "glass"},
        %{tier: :glass}
      )
    end
  end

  test "a record with no link id reads its tier column in every mode" do
    for mode <- [:tier_column, :dark, :raise] do
      Host.override(unloaded_link: mode)

      for tier <- @tier_words, viewer <- @viewers do
        expected = WorkDisclosure.effective_tier(column(tier), viewer)
        assert WorkDisclosure.effective_tier(unloaded(tier, nil), viewer) == expected

        # A map with the association not loaded and no id key at all.
        record = %{artifact_link: %Ecto.Association.NotLoaded{}, transparency_tier: tier}
        assert WorkDisclosure.effective_tier(record, viewer) == expected
      end
    end
  end

  test "a loaded link decides in every mode: the setting governs only a link not loaded" do
    live = %ArtifactLink{account_id: "acct-owner", tier: "ledger", revoked_at: nil}
    revoked = %{live | revoked_at: ~U[2026-01-01 00:00:00Z]}

    for mode <- [:tier_column, :dark, :raise] do
      Host.override(unloaded_link: mode)
      record = %Assignment{transparency_tier: "glass", artifact_link_id: "link-1"}

      for viewer <- @viewers do
        assert WorkDisclosure.effective_tier(%{record | artifact_link: revoked}, viewer) == :dark
      end

      assert WorkDisclosure.effective_tier(%{record | artifact_link: live}, Enum.at(@viewers, 2)) ==
               :glass
    end
  end

  test "the setting follows the configuration from the next call" do
    record = unloaded("ledger", "link-1")
    viewer = %{account_id: nil, tier: :ledger}
    assert WorkDisclosure.effective_tier(record, viewer) == :ledger
    Host.override(unloaded_link: :dark)
    assert WorkDisclosure.effective_tier(record, viewer) == :dark
    Host.override(unloaded_link: nil)
    assert WorkDisclosure.effective_tier(record, viewer) == :ledger
  end

  test "a value that is none of the three is refused, set or configured" do
    assert_raise NimbleOptions.ValidationError, ~r/unloaded_link/, fn ->
      Host.override(unloaded_link: :maybe)
    end

    assert_raise NimbleOptions.ValidationError, ~r/unloaded_link/, fn ->
      Host.configure(unloaded_link: "dark")
    end

    assert Host.unloaded_link() == :tier_column

    # A value that reached the environment some other way fails the call
    # that would have used it, rather than being read as one of the three.
    Host.override(unloaded_link: :dark)
    Process.put({Host, :override}, %{unloaded_link: :sometimes})

    assert_raise NimbleOptions.ValidationError, ~r/:sometimes/, fn ->
      WorkDisclosure.effective_tier(unloaded("pulse", "link-1"), %{tier: :pulse})
    end
  end
end
