# Prototypes of the wrapper changes proposed in bench/README.md, used only by
# bench/profile.exs to put a number on each proposal. Not library code.
#
# Every answer here is still the Rust core's: the tables are filled by calling
# the NIF when this file is compiled (exactly as lib/ already does for
# @lifecycles and @schedule), and any input outside a table falls through to
# the real wrapper, i.e. to the NIF at run time.

defmodule Bench.WhatIf.Target do
  @moduledoc false
  alias OpenAgentsPolicy.Native
  alias OpenAgents.Delegations.Target

  # Substrate vocabularies from upstream.md; other words fall through to the NIF.
  @box_states ~w(init provisioning provisioned cloning ready idle running archiving archived error queued)
  @run_states ~w(admitted dispatched running completed failed cancelled timed_out lost)
  @job_statuses ~w(queued running completed failed interrupted budget_exhausted cancelled)

  # (1) table clauses: one literal-returning clause per known word.
  for word <- @box_states do
    def box_lifecycle(unquote(word)), do: unquote(Native.box_lifecycle(word))
  end

  def box_lifecycle(word), do: Target.box_lifecycle(word)

  for word <- @run_states do
    def run_lifecycle(unquote(word)), do: unquote(Native.run_lifecycle(word))
  end

  def run_lifecycle(word), do: Target.run_lifecycle(word)

  for word <- @job_statuses do
    def job_lifecycle(unquote(word)), do: unquote(Native.job_lifecycle(word))
  end

  def job_lifecycle(word), do: Target.job_lifecycle(word)

  for kind <- Native.kinds() do
    def custody(unquote(kind)), do: unquote(Native.custody(kind))
  end

  # computer_lifecycle/2: the known statuses x revoked_at nil or set x online?.
  @machine OpenAgents.Machines.Machine
  for status <- ~w(active revoked), online <- [true, false] do
    def computer_lifecycle(
          %{__struct__: @machine, status: unquote(status), revoked_at: nil},
          unquote(online)
        ),
        do: unquote(Native.computer_lifecycle(status, nil, online))

    def computer_lifecycle(%{__struct__: @machine, status: unquote(status)}, unquote(online)),
      do: unquote(Native.computer_lifecycle(status, :set, online))
  end

  def computer_lifecycle(machine, online?), do: Target.computer_lifecycle(machine, online?)

  for kind <- Native.kinds() do
    def seam(unquote(kind), lifecycle, authorized?),
      do: seam_of(unquote(kind), lifecycle, authorized?)
  end

  for kind <- Native.kinds(), lifecycle <- Native.lifecycles(), authorized <- [true, false] do
    defp seam_of(unquote(kind), unquote(lifecycle), unquote(authorized)),
      do: unquote(Macro.escape(Native.seam(kind, lifecycle, authorized)))
  end

  for lifecycle <- Native.delegation_lifecycles() do
    def delegation_seam(unquote(lifecycle)),
      do: unquote(Macro.escape(Native.delegation_seam(lifecycle)))
  end

  # (2) the NIF answers with a small integer, Elixir turns it into a literal
  # string. Proxy: ladder_rank/1 is a NIF that returns a small integer.
  @words List.to_tuple(~w(dark pulse ledger glass))
  def indexed(tier), do: elem(@words, Native.ladder_rank(tier))
end

defmodule Bench.WhatIf.Disclosure do
  @moduledoc false
  alias OpenAgentsPolicy.Native
  alias OpenAgents.Transparency.WorkDisclosure

  @families Native.families()
  @tiers Native.tiers()

  for family <- @families do
    def never(unquote(family)), do: unquote(Native.never(family))
  end

  # fields_at/2 for a tier atom or nil: a literal list per (family, tier).
  for family <- @families, tier <- [nil | @tiers] do
    def fields_at(unquote(family), unquote(tier)),
      do: unquote(Native.fields_at(family, tier, nil))
  end

  def fields_at(family, tier), do: WorkDisclosure.fields_at(family, tier)

  # project/3 for a tier atom: a map literal per (family, tier), each value a
  # Map.get of the source. Other tiers (viewer maps, strings, users) fall
  # through to the NIF.
  for family <- @families, tier <- @tiers do
    case Native.fields_at(family, tier, nil) do
      [] ->
        def project(unquote(family), _source, unquote(tier)), do: nil

      fields ->
        pairs = for f <- fields, do: {f, quote(do: Map.get(var!(source), unquote(f)))}

        def project(unquote(family), source, unquote(tier)) when is_map(source),
          do: %{unquote_splicing(pairs)}
    end
  end

  def project(family, source, tier), do: WorkDisclosure.project(family, source, tier)

  # project/3, variant: literal field list + Map.take + literal nil defaults.
  for family <- @families, tier <- @tiers do
    case Native.fields_at(family, tier, nil) do
      [] ->
        def project_take(unquote(family), _source, unquote(tier)), do: nil

      fields ->
        defaults = Map.new(fields, &{&1, nil})

        def project_take(unquote(family), source, unquote(tier)) when is_map(source),
          do: Map.merge(unquote(Macro.escape(defaults)), Map.take(source, unquote(fields)))
    end
  end

  # viewer/2 with the host modules resolved once (compile_env or
  # :persistent_term instead of Application.get_env on every call) and the
  # descriptor a literal per relationship, filled from the NIF.
  @user OpenAgents.Accounts.User
  @accounts OpenAgents.Accounts
  @repositories OpenAgents.Repositories
  for relationship <- [:operator, :member, :stranger, :anonymous] do
    defp descriptor(unquote(relationship)),
      do: unquote(Macro.escape(Native.viewer(relationship, nil)))
  end

  def viewer(repository, %{__struct__: @user} = user) do
    relationship =
      cond do
        @accounts.admin?(user) -> :operator
        @repositories.member?(repository, user) -> :member
        true -> :stranger
      end

    %{descriptor(relationship) | account_id: user.id}
  end

  def viewer(_repository, _user), do: descriptor(:anonymous)
end
