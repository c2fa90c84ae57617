defmodule OpenAgents.Delegations.Target do
  @moduledoc """
  One vocabulary for a delegation target (a `box` this application provisions, or
  someone's own `computer`): how it is addressed, what it is doing, and what the
  asking caller may do to it now ([Delegation targets](delegation-targets.md)).

  The Rust core computes every answer; each over a finite domain is read
  from it as this module compiles and kept compiled in, so a request makes
  no NIF call and an argument outside the domain raises `FunctionClauseError`.

  Deliberately absent: a runtime class for a Box, operations beyond `start`
  and `cancel`, a third target kind, any control-plane client.
  """

  alias OpenAgentsPolicy.Native

  # Read from the Rust core as this module compiles; a rebuilt NIF recompiles it.
  @lifecycles Native.lifecycles()
  @delegation_lifecycles Native.delegation_lifecycles()
  @job_terminal_statuses Native.job_terminal_statuses()
  @custodies Native.custodies()
  @kinds Native.kinds()
  @substrates Map.new(Native.substrates())
  @machine_statuses Native.machine_statuses()
  @machine OpenAgents.Machines.Machine
  # The core reads any word outside a substrate's vocabulary as one reading.
  @unrecognized Map.new(Native.unrecognized_lifecycles())

  # A substrate's lifecycle as one `case`: the core's answer for each word, then any other.
  lifecycle_arms = fn substrate, lifecycle ->
    known = for word <- @substrates[substrate], do: {:->, [], [[word], lifecycle.(word)]}
    known ++ [{:->, [], [[{:_, [], nil}], @unrecognized[substrate]]}]
  end

  @typedoc "The host's `%OpenAgents.Machines.Machine{}`; only `status` and `revoked_at` are read."
  @type machine :: %{
          :__struct__ => OpenAgents.Machines.Machine,
          :status => term(),
          :revoked_at => term(),
          optional(atom()) => term()
        }

  @typedoc "The seam document of one target: five string keys."
  @type seam :: %{String.t() => String.t() | [String.t()] | nil}

  @doc """
  The target lifecycle vocabulary, in the contract's order.

      iex> "active" in OpenAgents.Delegations.Target.lifecycles()
      true
  """
  @spec lifecycles() :: [String.t()]
  def lifecycles, do: @lifecycles

  @doc """
  The delegation lifecycle vocabulary.

      iex> "succeeded" in OpenAgents.Delegations.Target.delegation_lifecycles()
      true
  """
  @spec delegation_lifecycles() :: [String.t()]
  def delegation_lifecycles, do: @delegation_lifecycles

  @doc """
  The work job statuses whose delegation has ended (`succeeded`, `failed`,
  `cancelled`), in `Work.Job.statuses/0`'s order: what a surface showing
  work in motion leaves out (a status the core does not know is not on it).

      iex> "completed" in OpenAgents.Delegations.Target.job_terminal_statuses()
      true
  """
  @spec job_terminal_statuses() :: [String.t()]
  def job_terminal_statuses, do: @job_terminal_statuses

  @doc "The custody vocabulary: `openagents_managed`, `customer_premises`."
  @spec custodies() :: [String.t()]
  def custodies, do: @custodies

  @doc "The target kinds: `box`, `computer`."
  @spec kinds() :: [String.t()]
  def kinds, do: @kinds

  @doc """
  Who holds a target of `kind`. Reads the kind and nothing else.

      iex> OpenAgents.Delegations.Target.custody("computer") in OpenAgents.Delegations.Target.custodies()
      true
  """
  @spec custody(String.t()) :: String.t()
  def custody(kind)

  for kind <- @kinds do
    def custody(unquote(kind)), do: unquote(Native.custody(kind))
  end

  @doc """
  The capacity class of `kind`, or `nil` when no admitted class describes it.

      iex> OpenAgents.Delegations.Target.runtime_class("box")
      nil
  """
  @spec runtime_class(String.t()) :: String.t() | nil
  def runtime_class(kind)

  for kind <- @kinds do
    def runtime_class(unquote(kind)), do: unquote(Native.runtime_class(kind))
  end

  @doc """
  The lifecycle of a Box from its last observed state (a `conversation_boxes`
  state, or a fan-out item's synthetic `queued`); any other word as the core reads it.

      iex> OpenAgents.Delegations.Target.box_lifecycle("idle") in OpenAgents.Delegations.Target.lifecycles()
      true
  """
  @spec box_lifecycle(String.t()) :: String.t()
  def box_lifecycle(state) when is_binary(state) do
    case state, do: unquote(lifecycle_arms.("box", &Native.box_lifecycle/1))
  end

  @doc """
  The lifecycle of a Computer, `online?` a live reachability read passed in. A
  revoked machine (by status or any `revoked_at`) is `destroyed`; an active
  reachable one `active`; anything else `cold`.
  """
  @spec computer_lifecycle(machine(), boolean()) :: String.t()
  def computer_lifecycle(%{__struct__: @machine} = machine, online?) when is_boolean(online?),
    do: computer(machine.status, online?, machine)

  # The core's answer by status (then any other) and `online?`; `revoked_at` is read
  # only where it decides, so a machine lacking a key raises the app's `KeyError`.
  for {word, pattern} <- Enum.map(@machine_statuses, &{&1, &1}) ++ [{nil, {:_, [], nil}}],
      online? <- [true, false] do
    live = Native.computer_lifecycle(word, nil, online?)
    revoked = Native.computer_lifecycle(word, :revoked, online?)

    if live == revoked do
      defp computer(unquote(pattern), unquote(online?), _machine), do: unquote(live)
    else
      defp computer(unquote(pattern), unquote(online?), machine),
        do: if(machine.revoked_at == nil, do: unquote(live), else: unquote(revoked))
    end
  end

  @doc """
  The delegation lifecycle of one Box run.

      iex> OpenAgents.Delegations.Target.run_lifecycle("timed_out") in OpenAgents.Delegations.Target.delegation_lifecycles()
      true
  """
  @spec run_lifecycle(String.t()) :: String.t()
  def run_lifecycle(state) when is_binary(state) do
    case state, do: unquote(lifecycle_arms.("run", &Native.run_lifecycle/1))
  end

  @doc """
  The delegation lifecycle of one Computer delegation, from its `work_jobs` status:
  `interrupted` and `budget_exhausted` read `failed` (the job's status keeps them apart).

      iex> OpenAgents.Delegations.Target.job_lifecycle("budget_exhausted") in OpenAgents.Delegations.Target.delegation_lifecycles()
      true
  """
  @spec job_lifecycle(String.t()) :: String.t()
  def job_lifecycle(status) when is_binary(status) do
    case status, do: unquote(lifecycle_arms.("job", &Native.job_lifecycle/1))
  end

  @doc """
  The seam of one target: custody, runtime class, lifecycle, the capabilities this
  caller may exercise, and why not; `authorized?`, the reach the caller proved, is
  required, so forgetting it grants nothing.

      iex> seam = OpenAgents.Delegations.Target.seam("box", "active", true)
      iex> Enum.sort(Map.keys(seam))
      ["capabilities", "custody", "lifecycle", "runtime_class", "unavailable_reason"]
      iex> OpenAgents.Delegations.Target.seam("computer", "active", false)["capabilities"]
      []
  """
  @spec seam(String.t(), String.t(), boolean()) :: seam()
  def seam(kind, lifecycle, authorized?)

  for kind <- @kinds, lifecycle <- @lifecycles, authorized? <- [true, false] do
    def seam(unquote(kind), unquote(lifecycle), unquote(authorized?)),
      do: unquote(Macro.escape(Native.seam(kind, lifecycle, authorized?)))
  end

  @doc """
  The seam of one delegation: its lifecycle, and `["cancel"]` while under way.

      iex> OpenAgents.Delegations.Target.delegation_seam("succeeded")["lifecycle"]
      "succeeded"
  """
  @spec delegation_seam(String.t()) :: %{String.t() => String.t() | [String.t()]}
  def delegation_seam(lifecycle)

  for life <- @delegation_lifecycles do
    def delegation_seam(unquote(life)), do: unquote(Macro.escape(Native.delegation_seam(life)))
  end
end
