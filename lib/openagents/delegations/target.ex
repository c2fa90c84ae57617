defmodule OpenAgents.Delegations.Target do
  @moduledoc """
  One vocabulary for a delegation target (a `box` this application
  provisions, or someone's own `computer`): how it is addressed, what it is
  doing, and what the asking caller may do to it now.

  Work, chat, text, voice and the API all hand work to a target; this module
  is the one place that answers for them, and the Rust core computes every
  answer, so a Rust service gets the same word. Surfaces render the
  capabilities in `seam/3` and `delegation_seam/1`; none re-derives them,
  since a surface that decides reach for itself can widen it.

    * **Custody** comes from the kind alone, never from the route or surface.
    * **Lifecycle** is one word projected from whichever substrate owns the
      target (Box states, run states, job statuses, machines); the
      substrate's own word travels beside it, untouched. A word the core does
      not know reads as the core's one answer for an unrecognized word.
    * **Capabilities** come from the lifecycle and the reach the caller has
      already proved; `unavailable_reason` says what stands in the way.

  Every answer over a finite domain is read from the core when this module
  compiles and kept as a function clause, so a request makes no NIF call for
  it, and an argument outside the domain raises `FunctionClauseError`, as
  the app's own pattern-matched functions do.

  Deliberately absent: a runtime class for a Box (nothing establishes a
  rented Box's egress posture), operations beyond `start` and `cancel` (no
  route serves them), a third target kind, and any control-plane client,
  lease or command journal.
  """

  alias OpenAgentsPolicy.Native

  # Read from the Rust core as this module compiles (a compile-time
  # dependency on Native, so a rebuilt library recompiles it).
  @lifecycles Native.lifecycles()
  @delegation_lifecycles Native.delegation_lifecycles()
  @job_terminal_statuses Native.job_terminal_statuses()
  @custodies Native.custodies()
  @kinds Native.kinds()
  @substrates Map.new(Native.substrates())
  @machine_statuses Native.machine_statuses()
  # The core reads every word outside a substrate's vocabulary as one
  # `Unrecognized` reading, so each projection has one answer for all of them.
  @unrecognized Map.new(Native.unrecognized_lifecycles())

  # A substrate's lifecycle as the arms of one `case`: the core's answer for
  # each word it knows, then its one answer for any other word.
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

      iex> OpenAgents.Delegations.Target.lifecycles()
      ["cold", "queued", "starting", "active", "stopping", "failed", "destroyed"]
  """
  @spec lifecycles() :: [String.t()]
  def lifecycles, do: @lifecycles

  @doc """
  The delegation lifecycle vocabulary.

      iex> OpenAgents.Delegations.Target.delegation_lifecycles()
      ["queued", "starting", "active", "succeeded", "failed", "cancelled"]
  """
  @spec delegation_lifecycles() :: [String.t()]
  def delegation_lifecycles, do: @delegation_lifecycles

  @doc """
  The work job statuses whose delegation has ended (it `succeeded`, `failed`
  or was `cancelled`), in `Work.Job.statuses/0`'s order: what a surface
  showing work in motion leaves out. A status the core does not know is not
  on the list.

      iex> OpenAgents.Delegations.Target.job_terminal_statuses()
      ["completed", "failed", "interrupted", "budget_exhausted", "cancelled"]
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

      iex> OpenAgents.Delegations.Target.custody("computer")
      "customer_premises"
  """
  @spec custody(String.t()) :: String.t()
  def custody(kind)

  for kind <- @kinds do
    def custody(unquote(kind)), do: unquote(Native.custody(kind))
  end

  @doc """
  The capacity class of `kind`, or `nil` when no admitted class describes it.

      iex> OpenAgents.Delegations.Target.runtime_class("computer")
      "connected"
      iex> OpenAgents.Delegations.Target.runtime_class("box")
      nil
  """
  @spec runtime_class(String.t()) :: String.t() | nil
  def runtime_class(kind)

  for kind <- @kinds do
    def runtime_class(unquote(kind)), do: unquote(Native.runtime_class(kind))
  end

  @doc """
  The lifecycle of a Box from its last observed state: a `conversation_boxes`
  state, or the synthetic `queued` of a fan-out item not yet admitted.

  A provisioned Box that is not bootstrapped reads `starting`: refusing work
  on a half-ready Box costs one poll, advertising it costs a failed command.
  Any word the vocabulary lacks reads `failed`.

      iex> OpenAgents.Delegations.Target.box_lifecycle("provisioned")
      "starting"
      iex> OpenAgents.Delegations.Target.box_lifecycle("idle")
      "active"
  """
  @spec box_lifecycle(String.t()) :: String.t()
  def box_lifecycle(state) when is_binary(state) do
    case state, do: unquote(lifecycle_arms.("box", &Native.box_lifecycle/1))
  end

  @doc """
  The lifecycle of a Computer. `online?` is a live reachability read, passed
  in rather than taken. A revoked machine (by status, or by any `revoked_at`)
  is `destroyed`; an active reachable one `active`; anything else `cold`.
  """
  @spec computer_lifecycle(machine(), boolean()) :: String.t()
  def computer_lifecycle(%{__struct__: OpenAgents.Machines.Machine} = machine, online?)
      when is_boolean(online?) do
    # Status first, and `revoked_at` only when the status is not "revoked"
    # (the answer is `destroyed` either way), so a revoked machine map that
    # lacks the key is answered, not a `KeyError`, as the app answers it.
    status = machine.status
    revoked_at = if status == "revoked", do: nil, else: machine.revoked_at
    machine_lifecycle(status, revoked_at, online?)
  end

  # The core reads a machine as its status (a word it knows, or any other
  # term, which it reads alike as unrecognized: `nil` stands for those here),
  # whether it has a `revoked_at` (any value but `nil`: `:revoked` stands for
  # those) and `online?`. Every combination is one clause holding the core's
  # answer, so no machine reaches the library on the call.
  for status <- @machine_statuses ++ [nil], online? <- [true, false] do
    status_pattern = if status, do: status, else: quote(do: _status)

    defp machine_lifecycle(unquote(status_pattern), nil, unquote(online?)),
      do: unquote(Native.computer_lifecycle(status, nil, online?))

    defp machine_lifecycle(unquote(status_pattern), _revoked_at, unquote(online?)),
      do: unquote(Native.computer_lifecycle(status, :revoked, online?))
  end

  @doc """
  The delegation lifecycle of one Box run.

      iex> OpenAgents.Delegations.Target.run_lifecycle("timed_out")
      "failed"
  """
  @spec run_lifecycle(String.t()) :: String.t()
  def run_lifecycle(state) when is_binary(state) do
    case state, do: unquote(lifecycle_arms.("run", &Native.run_lifecycle/1))
  end

  @doc """
  The delegation lifecycle of one Computer delegation, from its `work_jobs`
  status. `interrupted` and `budget_exhausted` read `failed`; the job's own
  status keeps the distinction.

      iex> OpenAgents.Delegations.Target.job_lifecycle("budget_exhausted")
      "failed"
  """
  @spec job_lifecycle(String.t()) :: String.t()
  def job_lifecycle(status) when is_binary(status) do
    case status, do: unquote(lifecycle_arms.("job", &Native.job_lifecycle/1))
  end

  @doc """
  The seam of one target: custody, runtime class, lifecycle, the capabilities
  this caller may exercise, and why not.

  `authorized?` is the per-kind reach the caller already proved. It is
  required, so a surface that forgot to check gets no capability by omission.

      iex> OpenAgents.Delegations.Target.seam("box", "active", true)
      %{
        "custody" => "openagents_managed",
        "runtime_class" => nil,
        "lifecycle" => "active",
        "capabilities" => ["start"],
        "unavailable_reason" => nil
      }
      iex> OpenAgents.Delegations.Target.seam("computer", "active", false)["unavailable_reason"]
      "not_authorized"
      iex> OpenAgents.Delegations.Target.seam("computer", "cold", true)["unavailable_reason"]
      "cold"
  """
  @spec seam(String.t(), String.t(), boolean()) :: seam()
  def seam(kind, lifecycle, authorized?)

  for kind <- @kinds, lifecycle <- @lifecycles, authorized? <- [true, false] do
    def seam(unquote(kind), unquote(lifecycle), unquote(authorized?)),
      do: unquote(Macro.escape(Native.seam(kind, lifecycle, authorized?)))
  end

  @doc """
  The seam of one delegation: its lifecycle, and `["cancel"]` while it is
  still under way. A caller that resolved the delegation already passed the
  reach check its target required.

      iex> OpenAgents.Delegations.Target.delegation_seam("active")
      %{"lifecycle" => "active", "capabilities" => ["cancel"]}
      iex> OpenAgents.Delegations.Target.delegation_seam("succeeded")
      %{"lifecycle" => "succeeded", "capabilities" => []}
  """
  @spec delegation_seam(String.t()) :: %{String.t() => String.t() | [String.t()]}
  def delegation_seam(lifecycle)

  for lifecycle <- @delegation_lifecycles do
    def delegation_seam(unquote(lifecycle)),
      do: unquote(Macro.escape(Native.delegation_seam(lifecycle)))
  end
end
