defmodule OpenAgents.Transparency.Ladder do
  @moduledoc """
  The tier ladder `dark < pulse < ledger < glass`: the pure half of the
  host's `OpenAgents.Transparency`, computed by the Rust core, so the host
  (which can delegate here) and `WorkDisclosure` share one ladder.

    * **Naming a tier.** An atom by its name, a binary directly; anything
      else (`nil`, `:bogus`, `"GLASS"`, a number, a map) names `dark`.
    * **A viewer's own tier.** `%{admin: true}` is `glass`; a user `glass` when the
      host's `Accounts.admin?/1` says so, else none; a map with `:tier` that tier, with
      `:account_id` none; a binary or a non-nil atom the tier it names; else none.
    * **Clamp.** No viewer tier leaves a tier as it is; else the lower wins.
    * **Effective tier.** A live link is `glass` for its owner and an operator,
      its tier clamped for everyone else; a revoked link is `dark` for everyone.
      Anything else is named, then clamped.
    * **Allows.** The effective tier reaches the access's minimum (`:metadata`
      `pulse`, `:content` `ledger`, `:full` `glass`, anything else `dark`).

  Deliberately absent: revoking a link, and anything else that writes.
  """

  alias OpenAgentsPolicy.Host.Boundary
  alias OpenAgentsPolicy.Native

  # Read from the Rust core as this module compiles; a rebuilt NIF recompiles it.
  @tiers Native.tiers()

  @typedoc "A tier: `:dark`, `:pulse`, `:ledger` or `:glass`."
  @type tier :: :dark | :pulse | :ledger | :glass

  @doc """
  The tiers in rank order.

      iex> OpenAgents.Transparency.Ladder.tiers()
      [:dark, :pulse, :ledger, :glass]
  """
  @spec tiers() :: [tier()]
  def tiers, do: @tiers

  @doc """
  The tier a term names; unknown terms name `:dark`.

      iex> OpenAgents.Transparency.Ladder.name("ledger")
      :ledger
      iex> OpenAgents.Transparency.Ladder.name("GLASS")
      :dark
  """
  @spec name(term()) :: tier()
  def name(tier), do: Native.ladder_name(Boundary.tier(tier))

  @doc """
  The rank of the tier a term names: dark 0, pulse 1, ledger 2, glass 3.

      iex> OpenAgents.Transparency.Ladder.rank(:glass) > OpenAgents.Transparency.Ladder.rank(:dark)
      true
  """
  @spec rank(term()) :: 0..3
  def rank(tier), do: Native.ladder_rank(Boundary.tier(tier))

  @doc """
  The lower of two tiers, each read as `rank/1` reads it (an unknown word is
  `:dark`): what two gates on one record allow together.

      iex> OpenAgents.Transparency.Ladder.lower("ledger", :glass)
      :ledger
      iex> OpenAgents.Transparency.Ladder.lower(:glass, "GLASS")
      :dark
  """
  @spec lower(term(), term()) :: tier()
  def lower(a, b), do: Enum.min_by([name(a), name(b)], &rank/1)

  @doc """
  A viewer's own tier, or `nil` when it has none (and so clamps nothing).

      iex> OpenAgents.Transparency.Ladder.viewer_tier(%{account_id: "a", tier: :ledger})
      :ledger
      iex> OpenAgents.Transparency.Ladder.viewer_tier(%{account_id: "a"})
      nil
  """
  @spec viewer_tier(term()) :: tier() | nil
  def viewer_tier(viewer), do: Native.ladder_viewer_tier(class(viewer))

  @doc """
  The tier `tier` names, clamped by `viewer`.

      iex> OpenAgents.Transparency.Ladder.rank(OpenAgents.Transparency.Ladder.clamp(:glass, %{tier: :pulse})) <= OpenAgents.Transparency.Ladder.rank(:glass)
      true
      iex> OpenAgents.Transparency.Ladder.clamp(:glass, nil)
      :glass
  """
  @spec clamp(term(), term()) :: tier()
  def clamp(tier, viewer), do: Native.ladder_clamp(Boundary.tier(tier), class(viewer))

  @doc """
  The tier `viewer` reads `subject` at; `subject` is an `ArtifactLink` struct
  or anything that names a tier.

      iex> OpenAgents.Transparency.Ladder.effective_tier("ledger", %{tier: :pulse}) in OpenAgents.Transparency.Ladder.tiers()
      true
  """
  @spec effective_tier(term(), term()) :: tier()
  def effective_tier(subject, viewer) do
    {subject, class} = Boundary.reading(subject, viewer)
    Native.ladder_effective_tier(subject, class)
  end

  @doc """
  Whether `viewer` may exercise `access` on `subject`.

      iex> OpenAgents.Transparency.Ladder.allows?(:ledger, :content, %{tier: :ledger}) |> is_boolean()
      true
      iex> OpenAgents.Transparency.Ladder.allows?(:dark, :metadata, nil)
      false
  """
  @spec allows?(term(), term(), term()) :: boolean()
  def allows?(subject, access, viewer) do
    {subject, class} = Boundary.reading(subject, viewer)
    Native.ladder_allows(subject, if(is_atom(access), do: access), class)
  end

  defp class(viewer), do: elem(Boundary.viewer(viewer), 0)
end
