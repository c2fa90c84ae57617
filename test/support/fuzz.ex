# The fuzzer shared by test/openagents_policy/fuzz_test.exs (a bounded run in
# `mix test`), test/openagents_policy/concurrency_test.exs, and the longer
# runs of scripts/fuzz.exs and scripts/parity.exs. Compiled with the rest of
# test/support under MIX_ENV=test; the scripts, which run where test/support
# is not compiled, load it through scripts/test_support.exs.
#
#   * `OpenAgentsPolicy.Fuzz.Gen`: a seeded generator of Erlang terms, biased
#     towards the library's vocabularies and the host's shapes (nested maps,
#     improper lists, pids, refs, floats, 1 MB and non-UTF-8 binaries,
#     sub-binaries, host structs, viewers, records, projection sources).
#   * `OpenAgentsPolicy.Fuzz`: the runner. Calls every public function of the
#     three modules with generated arguments and holds each outcome to the
#     function's invariants (`Fuzz.invariant/4`): a value of the right shape
#     in the library's own vocabularies (a lifecycle word, a tier, a subset
#     of the schedule's fields, a seam offering nothing without reach), or an
#     exception of the classes the seeds' guards and map reads raise. An
#     exception raised by `OpenAgentsPolicy.Native` itself (a NIF `badarg`, a
#     caught panic, `nif_not_loaded`) is always a failure. No answer is
#     restated here: what each input reads is the core's to say, held to the
#     seeds call for call by `make parity` (scripts/parity.exs, on this
#     generator's inputs).
#
# The generator is not StreamData because a run must be a plain function of
# its seed under any MIX_ENV (the test-only StreamData is absent under prod),
# and its inputs (1 MB binaries, 5 000-element lists, pids) would make
# shrinking most of a failing run. The property of fuzz_test.exs generates
# its calls with StreamData, holds them to `Fuzz.check/1`, and shrinks.

defmodule OpenAgentsPolicy.Fuzz.Gen do
  @moduledoc false
  import Bitwise

  # ── vocabularies (inputs) ───────────────────────────────────────────────

  @tiers ~w(dark pulse ledger glass)
  @target_words ~w(box computer openagents_managed customer_premises cold queued starting
                   active stopping failed destroyed succeeded cancelled not_authorized start
                   cancel standard strong batch connected)
  @substrate_words ~w(init provisioning provisioned cloning ready idle running archiving
                      archived error admitted dispatched completed timed_out lost interrupted
                      budget_exhausted revoked)
  @other_words ~w(attempt work_job evidence trace metadata content full user agent operator
                  member stranger anonymous GLASS Ledger BOX Active true false nil id tier
                  admin account_id)
  # The schedule's fields, and the host's other columns.
  @fields OpenAgents.Transparency.WorkDisclosure.schedule()
          |> Map.values()
          |> Enum.flat_map(&Map.keys/1)
          |> Enum.uniq()
  @columns Enum.uniq(
             Enum.flat_map(
               Map.keys(OpenAgentsPolicy.Test.Upstream.tables()),
               &OpenAgentsPolicy.Test.Upstream.columns/1
             )
           ) -- @fields
  @junk_atoms [
    nil,
    true,
    false,
    :bogus,
    :"",
    :GLASS,
    :"Elixir",
    :"Elixir.OpenAgents.Accounts.User",
    :"Elixir.OpenAgents.Machines.Machine",
    :ü,
    :日本,
    :"ledger ",
    :__struct__,
    :metadata,
    :content,
    :full,
    :operator,
    :member,
    :stranger,
    :anonymous,
    String.to_atom(String.duplicate("a", 255)),
    String.to_atom(String.duplicate("é", 255))
  ]
  @machine_fields OpenAgentsPolicy.Test.Upstream.machine_fields()
  @link_fields OpenAgentsPolicy.Test.Upstream.artifact_link_fields()
  @associations OpenAgentsPolicy.Test.Upstream.attempt_associations()
  @families [:attempt, :work_job, :evidence, :trace]

  @words List.to_tuple(@tiers ++ @target_words ++ @substrate_words ++ @other_words)
  @atoms List.to_tuple(
           Enum.map(@tiers ++ @target_words ++ @substrate_words, &String.to_atom/1) ++
             @families ++ @fields ++ @columns ++ @junk_atoms
         )
  @column_atoms List.to_tuple(@fields ++ @columns ++ @associations ++ [:__meta__, :bogus])

  @huge_size 1_048_576

  @user OpenAgents.Accounts.User
  @link OpenAgents.Transparency.ArtifactLink
  @machine OpenAgents.Machines.Machine
  @not_loaded Ecto.Association.NotLoaded

  @doc """
  Seeds this process's generator. Everything generated afterwards in this
  process is a function of `seed`, apart from the identity of pids and refs.
  `users?` says whether to generate `%OpenAgents.Accounts.User{}` viewers,
  which the library hands to the host's `Accounts.admin?/1`.
  """
  def seed(seed, opts \\ []) when is_integer(seed) do
    :rand.seed(:exsss, {seed, seed * 7 + 11, seed * 13 + 17})
    huge = :rand.bytes(@huge_size)
    cut = div(@huge_size, 2)
    # A 1 MB binary that is almost valid UTF-8 (one bad byte at the end), and
    # one with a vocabulary word inside it, so a sub-binary of a large binary
    # can be exactly a word.
    ascii = :binary.copy("a", @huge_size - 1) <> <<0xFF>>
    framed = binary_part(huge, 0, cut) <> "glass" <> binary_part(huge, cut, cut)

    Process.put(__MODULE__, %{
      huge: huge,
      ascii: ascii,
      framed: framed,
      cut: cut,
      users?: Keyword.get(opts, :users?, Code.ensure_loaded?(OpenAgents.Accounts))
    })

    :ok
  end

  defp state, do: Process.get(__MODULE__) || raise("call OpenAgentsPolicy.Fuzz.Gen.seed/2 first")

  # ── primitives ─────────────────────────────────────────────────────────

  def int(n), do: :rand.uniform(n) - 1
  def chance(p), do: :rand.uniform() < p
  def pick(tuple) when is_tuple(tuple), do: elem(tuple, int(tuple_size(tuple)))
  def pick(list) when is_list(list), do: Enum.at(list, int(length(list)))

  @doc "One of the generators in `weighted` (`[{weight, fun}]`), called."
  def freq(weighted) do
    total = Enum.reduce(weighted, 0, fn {w, _}, acc -> acc + w end)
    roll = int(total)

    Enum.reduce_while(weighted, roll, fn {w, fun}, left ->
      if left < w, do: {:halt, {:picked, fun}}, else: {:cont, left - w}
    end)
    |> then(fn {:picked, fun} -> fun.() end)
  end

  @doc "Usually `fun.()`, sometimes an arbitrary term in its place."
  def or_any(fun, p_any \\ 0.15), do: if(chance(p_any), do: any(), else: fun.())

  # ── arbitrary terms ─────────────────────────────────────────────────────

  def any, do: any(3)

  def any(depth) when depth <= 0, do: scalar()

  def any(depth) do
    freq([
      {30, &scalar/0},
      {6, fn -> list(depth) end},
      {2, fn -> improper(depth) end},
      {4, fn -> tuple(depth) end},
      {6, fn -> map(depth) end},
      {1, fn -> big_map(depth) end},
      {6, &host_struct/0},
      {4, &viewer/0},
      {1, fn -> deep(int(5_000) + 1) end}
    ])
  end

  def scalar do
    freq([
      {12, &word/0},
      {8, &atom/0},
      {5, &random_binary/0},
      {1, &huge/0},
      {3, &bitstring/0},
      {4, &integer/0},
      {3, &float/0},
      {1, fn -> self() end},
      {1, fn -> spawn(fn -> :ok end) end},
      {1, &make_ref/0},
      {1, fn -> hd(Port.list() ++ [self()]) end},
      {1, fn -> pick({&Function.identity/1, fn -> :ok end, &Kernel.+/2}) end},
      {2, fn -> pick({[], ~c"box", ~c"glass", [104 | 105], {}}) end}
    ])
  end

  @doc "A vocabulary word as a binary, sometimes mutated, sometimes a sub-binary."
  def word do
    w = pick(@words)

    freq([
      {14, fn -> w end},
      {1, fn -> String.upcase(w) end},
      {1, fn -> w <> pick({" ", <<0>>, <<0xFF>>, "s", "\n"}) end},
      {1, fn -> <<0xC3>> <> w end},
      {1, fn -> binary_part(w, 0, max(byte_size(w) - 1, 0)) end},
      {1, &sub_word/0},
      {1, fn -> "" end}
    ])
  end

  # Exactly "glass", as a sub-binary of a 1 MB refc binary.
  defp sub_word do
    %{framed: framed, cut: cut} = state()
    binary_part(framed, cut, 5)
  end

  def atom, do: pick(@atoms)

  @doc "Every vocabulary word the generator draws from."
  def words, do: Tuple.to_list(@words)

  def random_binary do
    freq([
      {3, fn -> :rand.bytes(int(40)) end},
      {1, fn -> <<0xFF, 0xFE, 0xC0, 0x80>> end},
      {1, fn -> "glass" <> :rand.bytes(int(4)) end},
      {1, fn -> :binary.copy("ab", int(600)) end}
    ])
  end

  @doc "A 1 MB binary: random bytes, a long almost-ASCII run, or a slice of one."
  def huge do
    %{huge: huge, ascii: ascii, framed: framed} = state()

    freq([
      {2, fn -> huge end},
      {1, fn -> ascii end},
      {1, fn -> framed end},
      {1, fn -> binary_part(huge, int(1000), 700_000) end}
    ])
  end

  def bitstring do
    freq([
      {2, fn -> <<int(8)::size(3)>> end},
      {2, fn -> <<pick(@words)::binary, int(2)::size(1)>> end},
      {1, fn -> <<:rand.bytes(int(9))::binary, int(128)::size(7)>> end},
      {1, fn -> <<sub_word()::binary, 0::size(4)>> end}
    ])
  end

  def integer do
    freq([
      {4, fn -> int(10) end},
      {2, fn -> -int(1000) end},
      {1, fn -> int(1 <<< 62) end},
      {1, fn -> (1 <<< 200) + int(1000) end},
      {1, fn -> -(1 <<< 100) end}
    ])
  end

  def float do
    freq([
      {3, fn -> :rand.uniform() * 1000 end},
      {1, fn -> pick({0.0, -0.0, 1.0, 1.0e308, -1.0e-308, 5.0e-324}) end}
    ])
  end

  def list(depth) do
    freq([
      {4, fn -> for _ <- 1..int(5)//1, do: any(depth - 1) end},
      {1, fn -> for _ <- 1..int(200)//1, do: scalar() end},
      {1, fn -> Enum.map(1..int(6)//1, fn _ -> atom() end) end}
    ])
  end

  def improper(depth) do
    tail = pick({:x, "tail", 1, %{}, {}, 0.5, self()})
    Enum.reduce(1..(int(3) + 1), tail, fn _, acc -> [any(depth - 1) | acc] end)
  end

  def tuple(depth) do
    freq([
      {3, fn -> List.to_tuple(for _ <- 1..int(4)//1, do: any(depth - 1)) end},
      {1, fn -> {:ok, any(depth - 1)} end},
      {1, fn -> {:error, any(depth - 1)} end}
    ])
  end

  def key do
    freq([
      {5, fn -> pick(@column_atoms) end},
      {2, &atom/0},
      {2, &word/0},
      {1, fn -> scalar() end}
    ])
  end

  def map(depth) do
    Map.new(1..int(8)//1, fn _ -> {key(), any(depth - 1)} end)
  end

  # More than 32 keys: a hash-array-mapped map rather than a flat one.
  def big_map(depth) do
    base = Map.new(1..(40 + int(2_000)), fn i -> {i, i} end)
    Map.merge(base, map(depth))
  end

  # A deeply nested term, for anything that walks or compares terms.
  def deep(n), do: Enum.reduce(1..n, :leaf, fn _, acc -> pick({[acc], {acc}, %{a: acc}}) end)

  # ── host shapes ─────────────────────────────────────────────────────────

  def host_struct do
    freq([
      {3, &machine/0},
      {2, fn -> if state().users?, do: user(), else: link() end},
      {3, &link/0},
      {1, &not_loaded/0},
      {1, fn -> %{__struct__: Some.Unknown.Struct, status: "active", revoked_at: nil} end},
      {1, fn -> URI.parse("https://example.test/x") end},
      {1, fn -> pick({~D[2026-08-25], ~U[2026-08-25 00:00:00Z]}) end}
    ])
  end

  # Account ids drawn from one small pool, so owners and viewers meet; `1`
  # and `1.0` are equal under `==`, which is how the host compares them.
  @ids {"acct-1", "acct-2", "acct-1", 1, 1.0, 2, nil, <<0xFF, 0xFE>>, :acct}
  def id, do: or_any(fn -> pick(@ids) end, 0.1)

  def status_word,
    do: or_any(fn -> pick({"active", "revoked", "stopping", "ACTIVE", nil, :active}) end)

  def timestamp_or_nil do
    freq([
      {6, fn -> nil end},
      {1, fn -> ~U[2026-08-25 12:00:00Z] end},
      {1, fn -> pick({false, 0, "", "2026-08-25", :revoked}) end},
      {1, &any/0}
    ])
  end

  @doc "A `%Machines.Machine{}`; sometimes missing `status` or `revoked_at`."
  def machine do
    m =
      @machine_fields
      |> Map.new(&{&1, nil})
      |> Map.merge(%{
        __struct__: @machine,
        scoped_forge_credentials_enabled: false,
        status: status_word(),
        revoked_at: timestamp_or_nil()
      })

    freq([
      {12, fn -> m end},
      {1, fn -> Map.delete(m, :status) end},
      {1, fn -> Map.delete(m, :revoked_at) end},
      {1, fn -> Map.drop(m, [:status, :revoked_at]) end},
      {1, fn -> Map.delete(m, :__struct__) end},
      {1, fn -> %{m | __struct__: Some.Other.Machine} end}
    ])
  end

  @doc "An `%Accounts.User{}` as the test stand-in defines it."
  def user do
    u = %{
      __struct__: @user,
      id: id(),
      admin: pick({true, false, false, false, nil}),
      member_of: Enum.take_random(["repo-1", "repo-2", 1, nil], int(3))
    }

    freq([
      {12, fn -> u end},
      {1, fn -> Map.put(u, :tier, pick({:glass, "dark", nil})) end},
      {1, fn -> Map.put(u, :account_id, id()) end}
    ])
  end

  @doc "An `%ArtifactLink{}`: live or revoked, any owner, any tier word."
  def link do
    l =
      @link_fields
      |> Map.new(&{&1, nil})
      |> Map.merge(%{
        __struct__: @link,
        account_id: id(),
        tier: or_any(fn -> pick({"dark", "pulse", "ledger", "glass", :glass, "GLASS", nil}) end),
        revoked_at: timestamp_or_nil()
      })

    freq([
      {12, fn -> l end},
      {1, fn -> Map.delete(l, :revoked_at) end},
      {1, fn -> Map.delete(l, :account_id) end},
      {1, fn -> Map.delete(l, :tier) end},
      {1, fn -> Map.put(l, :admin, true) end}
    ])
  end

  def not_loaded,
    do: %{
      __struct__: @not_loaded,
      __field__: :artifact_link,
      __owner__: Some.Assignment,
      __cardinality__: :one
    }

  def tier_word do
    freq([
      {4, fn -> pick({:dark, :pulse, :ledger, :glass}) end},
      {4, fn -> pick({"dark", "pulse", "ledger", "glass"}) end},
      {1, fn -> pick({nil, :bogus, "GLASS", "Ledger", 3, "glass\0"}) end},
      {1, &word/0},
      {1, &any/0}
    ])
  end

  @doc """
  A viewer: anything the ladder reads as one (a tier word, a descriptor as
  `WorkDisclosure.viewer/2` builds it, an operator, an account, a user), and
  arbitrary terms.
  """
  def viewer do
    freq([
      {4, &tier_word/0},
      {4, fn -> %{account_id: id(), tier: tier_word()} end},
      {2, fn -> %{account_id: id(), tier: :glass, admin: true} end},
      {1, fn -> %{admin: pick({true, "true", false, 1, nil})} end},
      {1, fn -> %{admin: true, tier: tier_word()} end},
      {2, fn -> %{account_id: id()} end},
      {1, fn -> %{tier: tier_word()} end},
      {1, fn -> %{} end},
      {3, fn -> if state().users?, do: user(), else: %{account_id: id()} end},
      {1, &link/0},
      {1, fn -> Map.put(map(1), :tier, tier_word()) end},
      {1, fn -> scalar() end}
    ])
  end

  @doc "An effective-tier subject: a link, or anything naming a tier."
  def subject, do: freq([{2, &link/0}, {3, &tier_word/0}, {1, &any/0}])

  def access,
    do: or_any(fn -> pick({:metadata, :content, :full, :bogus, "metadata", nil}) end, 0.2)

  def family,
    do:
      or_any(fn ->
        freq([
          {12, fn -> pick(@families) end},
          {1, fn -> pick({"attempt", "trace", :Attempt, :tier, nil}) end}
        ])
      end)

  def field do
    freq([
      {6, fn -> pick(@fields) end},
      {3, fn -> pick(@columns) end},
      {1, fn -> Atom.to_string(pick(@fields)) end},
      {1, &any/0}
    ])
  end

  def kind, do: or_any(fn -> freq([{4, fn -> pick({"box", "computer"}) end}, {2, &word/0}]) end)
  def boolean, do: or_any(fn -> pick({true, false}) end, 0.1)

  def lifecycle_word,
    do: or_any(fn -> freq([{3, fn -> pick(@target_words) end}, {2, &word/0}]) end)

  def state_word,
    do:
      or_any(fn ->
        freq([{3, fn -> pick(@substrate_words ++ @target_words) end}, {2, &word/0}])
      end)

  @doc "A record for `effective_tier/2`: a link that is loaded, absent, not loaded, or junk."
  def record do
    base =
      freq([
        {3, fn -> %{} end},
        {2, fn -> source(:attempt) end},
        {1, fn -> source(:evidence) end},
        {1, fn -> map(2) end}
      ])

    rec =
      base
      |> maybe_put(:artifact_link, fn ->
        freq([{4, &link/0}, {2, fn -> nil end}, {2, &not_loaded/0}, {1, &any/0}])
      end)
      |> maybe_put(:transparency_tier, &subject/0)

    or_any(fn -> rec end, 0.1)
  end

  defp maybe_put(map, key, fun) when is_map(map),
    do: if(chance(0.85), do: Map.put(map, key, fun.()), else: map)

  defp maybe_put(other, _key, _fun), do: other

  @doc """
  A projection source for `family`, usually as the host builds it:
  `Map.from_struct/1` of the record (its columns, `__meta__`, associations)
  plus the derived keys, with plausible values.
  """
  def source(family) do
    freq([
      {6, fn -> realistic_source(family) end},
      {1, fn -> map(2) end},
      {1, fn -> big_map(1) end},
      {1, fn -> pick({%{}, machine(), link()}) end},
      {1, &any/0}
    ])
  end

  def realistic_source(family) do
    keys = Enum.filter(@fields ++ @columns, fn _ -> chance(0.8) end)
    extra = if family == :attempt, do: @associations, else: []

    keys
    |> Map.new(&{&1, value()})
    |> Map.merge(Map.new(extra, &{&1, not_loaded()}))
    |> Map.put(:__meta__, :loaded)
  end

  defp value do
    freq([
      {3, fn -> "v-" <> Integer.to_string(int(1000)) end},
      {1, &integer/0},
      {1, fn -> nil end},
      {1, fn -> ~U[2026-08-25 12:00:00Z] end},
      {1, fn -> %{"type" => pick({"user", "agent"}), "id" => "acct-1"} end},
      {1, fn -> %{wall_clock_ms: 60_000, report_bytes: 8192, prompt_bytes: 65_536} end},
      {1, &scalar/0}
    ])
  end

  @doc "A column list for `classify/2`: atoms, as a schema's `__schema__(:fields)` gives."
  def columns do
    freq([
      {8,
       fn -> Enum.shuffle(Enum.filter(Tuple.to_list(@column_atoms), fn _ -> chance(0.5) end)) end},
      {2, fn -> for _ <- 1..int(12)//1, do: atom() end},
      {1, fn -> [] end},
      {1, fn -> for _ <- 1..5_000, do: pick(@column_atoms) end},
      {1, fn -> list(2) end},
      {1, fn -> improper(1) end},
      {1, &any/0}
    ])
  end

  def repository do
    freq([
      {6, fn -> %{id: pick({"repo-1", "repo-2", 1, nil})} end},
      {1, fn -> %{id: any()} end},
      {1, fn -> %{} end},
      {1, fn -> %{"id" => "repo-1"} end},
      {1, &any/0}
    ])
  end

  def principal do
    p = %{
      "type" => or_any(fn -> pick({"user", "user", "agent", "User", "", :user}) end),
      "id" => or_any(fn -> pick({"acct-1", "acct-2", 1, nil, <<1::3>>, <<0xFF>>, :acct_1}) end)
    }

    freq([
      {8, fn -> p end},
      {1, fn -> Map.delete(p, "id") end},
      {1, fn -> Map.delete(p, "type") end},
      {1, fn -> Map.put(p, "id", huge()) end},
      {1, fn -> %{type: "user", id: "acct-1"} end},
      {1, &any/0}
    ])
  end

  def authority,
    do:
      freq([
        {3, fn -> %{} end},
        {2, fn -> %{"roots" => ["/home/x"], "machine_name" => "m"} end},
        {1, &any/0}
      ])

  def user_or_not do
    freq([
      {6, fn -> if state().users?, do: user(), else: nil end},
      {2, fn -> nil end},
      {1, &any/0}
    ])
  end

  @doc """
  Arguments for a call of `module.fun/arity`: shaped for the function where
  it has a known signature, arbitrary terms otherwise (a function added to
  the library later is still fuzzed, with arbitrary terms).
  """
  def args(module, fun, arity) do
    case {module |> Module.split() |> List.last(), fun, arity} do
      {_, _, 0} ->
        []

      {"Target", f, 1} when f in [:custody, :runtime_class] ->
        [kind()]

      {"Target", f, 1} when f in [:box_lifecycle, :run_lifecycle, :job_lifecycle] ->
        [state_word()]

      {"Target", :computer_lifecycle, 2} ->
        [or_any(&machine/0), boolean()]

      {"Target", :seam, 3} ->
        [kind(), lifecycle_word(), boolean()]

      {"Target", :delegation_seam, 1} ->
        [lifecycle_word()]

      {"WorkDisclosure", f, 1} when f in [:never, :source_columns] ->
        [family()]

      {"WorkDisclosure", :tier_for, 2} ->
        [family(), field()]

      {"WorkDisclosure", f, 2} when f in [:fields_at, :withheld] ->
        [family(), viewer()]

      {"WorkDisclosure", :visibility, 1} ->
        [viewer()]

      {"WorkDisclosure", :explain, 2} ->
        [family(), field()]

      {"WorkDisclosure", :viewer, 2} ->
        [repository(), user_or_not()]

      {"WorkDisclosure", :effective_tier, 2} ->
        [record(), viewer()]

      {"WorkDisclosure", :link_for_attempt, 2} ->
        [repository(), principal()]

      {"WorkDisclosure", :link_for_attempt, 3} ->
        [repository(), principal(), authority()]

      {"WorkDisclosure", :project, 3} ->
        project_args()

      {"WorkDisclosure", :classify, 2} ->
        [family(), columns()]

      {"Ladder", f, 1} when f in [:name, :rank] ->
        [tier_word()]

      {"Ladder", :viewer_tier, 1} ->
        [viewer()]

      {"Ladder", :clamp, 2} ->
        [tier_word(), viewer()]

      {"Ladder", :lower, 2} ->
        [tier_word(), tier_word()]

      {"Ladder", :effective_tier, 2} ->
        [subject(), viewer()]

      {"Ladder", :allows?, 3} ->
        [subject(), access(), viewer()]

      {_, _, arity} ->
        for _ <- 1..arity, do: any()
    end
  end

  defp project_args do
    family = family()
    shape = if family in @families, do: family, else: pick(@families)
    [family, source(shape), viewer()]
  end
end

defmodule OpenAgentsPolicy.Fuzz do
  @moduledoc false

  alias OpenAgents.Delegations.Target
  alias OpenAgents.Transparency.{Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Fuzz.Gen

  @modules [Target, WorkDisclosure, Ladder]

  # What the seeds' guards, map reads and struct reads raise, and what the
  # wrapper raises for an unloaded link it was told to refuse or a column
  # list that is not atoms.
  @refusals [FunctionClauseError, BadMapError, KeyError, ArgumentError]

  @doc "The three modules under test."
  def modules, do: @modules

  @doc "Every public function of the three modules, as `{module, fun, arity}`."
  def functions do
    for module <- @modules,
        {fun, arity} <- module.__info__(:functions),
        not String.starts_with?(Atom.to_string(fun), "__"),
        # An Ecto query over the host's schemas: the example host's suite runs it.
        {module, fun} != {WorkDisclosure, :where_visible},
        do: {module, fun, arity}
  end

  @doc "The outcome of `fun.()`: `{:ok, value}` or `{:raise, exception, stacktrace}`."
  def outcome(fun) do
    {:ok, fun.()}
  rescue
    exception -> {:raise, exception, __STACKTRACE__}
  end

  @doc "Whether an exception was raised by the NIF module itself."
  def from_nif?([{OpenAgentsPolicy.Native, _, _, _} | _]), do: true
  def from_nif?(_stacktrace), do: false

  @doc """
  What a call did, as a term to compare: `{:ok, value}` or `{:raise,
  exception module}`, and the host effects it had (each insert the test Repo
  reports), with an inserted link's fresh id replaced.
  """
  def observe({module, fun, args}) do
    _ = drain()
    actual = outcome(fn -> apply(module, fun, args) end)

    observed =
      case normalize(actual) do
        {:ok, value} -> {:ok, value}
        {:raise, exception, _} -> {:raise, exception.__struct__}
      end

    {observed, Enum.map(drain(), &normalize_effect/1)}
  end

  # Messages a host stand-in sent to this process (the test Repo reports
  # each insert).
  defp drain(acc \\ []) do
    receive do
      {:repo_insert, _} = message -> drain([message | acc])
    after
      0 -> Enum.reverse(acc)
    end
  end

  # A link the stand-in repo inserted carries a fresh id on every insert.
  defp normalize({:ok, {:ok, %{__struct__: _, id: _} = inserted}}),
    do: {:ok, {:ok, %{inserted | id: :inserted}}}

  defp normalize(outcome), do: outcome

  defp normalize_effect(effect), do: effect

  @doc """
  Calls `module.fun(args...)` and holds the outcome to the function's
  invariants. Returns `{class, nil}` when they hold (`class` is `:returned`
  or the exception module) or `{class, {why, description}}`.
  """
  def check({module, fun, args}) do
    _ = drain()
    actual = outcome(fn -> apply(module, fun, args) end)
    effects = drain()

    class =
      case actual do
        {:ok, _} -> :returned
        {:raise, exception, _} -> exception.__struct__
      end

    failure =
      case actual do
        {:raise, _, stacktrace} ->
          cond do
            from_nif?(stacktrace) -> "raised by the NIF itself"
            class == ErlangError -> "ErlangError"
            class in @refusals -> nil
            true -> "unexpected #{inspect(class)}"
          end

        {:ok, value} ->
          case invariant(module, fun, args, value) do
            true -> effect_invariant(module, fun, value, effects)
            false -> "the value breaks #{inspect(module)}.#{fun}'s invariant"
            :unknown -> effect_invariant(module, fun, value, effects)
            why -> why
          end
      end

    {class, failure && {failure, describe(module, fun, args, actual, failure)}}
  end

  # Only link_for_attempt/2,3 reaches the host's repo, once, for the link it returns.
  defp effect_invariant(WorkDisclosure, :link_for_attempt, {:ok, _}, [_insert]), do: nil
  defp effect_invariant(WorkDisclosure, :link_for_attempt, {:ok, _}, e), do: "inserts #{short(e)}"
  defp effect_invariant(_module, _fun, _value, []), do: nil
  defp effect_invariant(_module, _fun, _value, effects), do: "host effects #{short(effects)}"

  # The functions `invariant/4` has a clause of its own for.
  @invariants [
    {Target, :lifecycles, 0},
    {Target, :delegation_lifecycles, 0},
    {Target, :job_terminal_statuses, 0},
    {Target, :custodies, 0},
    {Target, :kinds, 0},
    {Target, :custody, 1},
    {Target, :runtime_class, 1},
    {Target, :box_lifecycle, 1},
    {Target, :run_lifecycle, 1},
    {Target, :job_lifecycle, 1},
    {Target, :computer_lifecycle, 2},
    {Target, :seam, 3},
    {Target, :delegation_seam, 1},
    {WorkDisclosure, :families, 0},
    {WorkDisclosure, :schedule, 0},
    {WorkDisclosure, :schedule_json, 0},
    {WorkDisclosure, :never, 1},
    {WorkDisclosure, :source_columns, 1},
    {WorkDisclosure, :tier_for, 2},
    {WorkDisclosure, :fields_at, 2},
    {WorkDisclosure, :viewer, 2},
    {WorkDisclosure, :effective_tier, 2},
    {WorkDisclosure, :link_for_attempt, 2},
    {WorkDisclosure, :link_for_attempt, 3},
    {WorkDisclosure, :project, 3},
    {WorkDisclosure, :classify, 2},
    {WorkDisclosure, :explain, 2},
    {WorkDisclosure, :visibility, 1},
    {WorkDisclosure, :withheld, 2},
    {Ladder, :lower, 2},
    {Ladder, :tiers, 0},
    {Ladder, :name, 1},
    {Ladder, :rank, 1},
    {Ladder, :viewer_tier, 1},
    {Ladder, :clamp, 2},
    {Ladder, :effective_tier, 2},
    {Ladder, :allows?, 3}
  ]

  @doc "Whether `module.fun/arity` has an invariant of its own (every public function should)."
  def invariant?(module, fun, arity), do: {module, fun, arity} in @invariants

  defp tier?(term), do: term in Ladder.tiers()
  defp words?(list), do: is_list(list) and Enum.all?(list, &is_binary/1)
  defp atoms?(list), do: is_list(list) and Enum.all?(list, &is_atom/1)
  defp sorted?(list), do: list == Enum.sort(Enum.uniq(list))

  @doc """
  The invariant `value` must satisfy as `module.fun(args...)`'s answer:
  `true`, `false`, a reason, or `:unknown` for a function it has none for.
  """
  def invariant(Target, f, [], v) when f in [:lifecycles, :delegation_lifecycles], do: words?(v)

  def invariant(Target, :job_terminal_statuses, [], v),
    do: words?(v) and Enum.all?(v, &(Target.job_lifecycle(&1) in ~w(succeeded failed cancelled)))

  def invariant(Target, f, [], v) when f in [:custodies, :kinds], do: words?(v)
  def invariant(Target, :custody, [_], v), do: v in Target.custodies()
  def invariant(Target, :runtime_class, [_], v), do: is_nil(v) or is_binary(v)
  def invariant(Target, :box_lifecycle, [_], v), do: v in Target.lifecycles()
  def invariant(Target, :computer_lifecycle, [_, _], v), do: v in Target.lifecycles()

  def invariant(Target, f, [_], v) when f in [:run_lifecycle, :job_lifecycle],
    do: v in Target.delegation_lifecycles()

  def invariant(Target, :seam, [kind, lifecycle, authorized?], v) do
    cond do
      Enum.sort(Map.keys(v)) !=
          ~w(capabilities custody lifecycle runtime_class unavailable_reason) ->
        "not the seam's five keys"

      v["custody"] != Target.custody(kind) or v["runtime_class"] != Target.runtime_class(kind) ->
        "custody or runtime class varied with lifecycle or authority"

      v["lifecycle"] != lifecycle ->
        "not the lifecycle given"

      not authorized? and v["capabilities"] != [] ->
        "an unauthorized caller was offered #{inspect(v["capabilities"])}"

      is_nil(v["unavailable_reason"]) == (v["capabilities"] == []) ->
        "a reason with an offer, or neither"

      true ->
        v["unavailable_reason"] in [nil, "not_authorized", lifecycle]
    end
  end

  def invariant(Target, :delegation_seam, [lifecycle], v),
    do: Map.keys(v) |> Enum.sort() == ~w(capabilities lifecycle) and v["lifecycle"] == lifecycle

  def invariant(WorkDisclosure, :families, [], v), do: atoms?(v)

  # A map's keys come in no promised order (OTP 26 orders atom keys its own way).
  def invariant(WorkDisclosure, :schedule, [], v),
    do: Enum.sort(Map.keys(v)) == Enum.sort(WorkDisclosure.families())

  def invariant(WorkDisclosure, :schedule_json, [], v), do: is_binary(v) and String.valid?(v)
  def invariant(WorkDisclosure, :never, [f], v), do: atoms?(v) and schedule_free?(f, v)
  def invariant(WorkDisclosure, :source_columns, [_], v), do: atoms?(v) and sorted?(v)

  def invariant(WorkDisclosure, :tier_for, [f, field], v),
    do: v == WorkDisclosure.schedule()[f][field] and (is_nil(v) or tier?(v))

  def invariant(WorkDisclosure, :fields_at, [f, _], v),
    do: atoms?(v) and sorted?(v) and v -- Map.keys(WorkDisclosure.schedule()[f]) == []

  def invariant(WorkDisclosure, :viewer, [_, _], v),
    do: is_map_key(v, :account_id) and tier?(v.tier) and Map.get(v, :admin, true) == true

  def invariant(WorkDisclosure, :effective_tier, [_, _], v), do: tier?(v)

  def invariant(WorkDisclosure, :link_for_attempt, [_, principal | _], v) do
    case v do
      :none -> true
      {:ok, link} -> link.account_id == principal["id"] and is_binary(principal["id"])
      {:error, _} -> true
      _ -> false
    end
  end

  def invariant(WorkDisclosure, :project, [f, _source, tier], v) do
    cond do
      is_nil(v) -> WorkDisclosure.fields_at(f, tier) == []
      is_map(v) -> Enum.sort(Map.keys(v)) == WorkDisclosure.fields_at(f, tier)
      true -> false
    end
  end

  def invariant(WorkDisclosure, :classify, [f, columns], v) do
    unclassified =
      Enum.reject(
        columns,
        &(&1 in WorkDisclosure.source_columns(f) or &1 in WorkDisclosure.never(f))
      )

    v == %{unclassified: unclassified, doubly_classified: []}
  end

  def invariant(WorkDisclosure, :explain, [f, field], v),
    do:
      v == nil or
        (v.field == field and (v.rung == :never or v.rung == WorkDisclosure.tier_for(f, field)))

  def invariant(WorkDisclosure, :withheld, [f, tier], v),
    do: Enum.all?(v, &(&1.field not in WorkDisclosure.fields_at(f, tier) and &1.rung != :never))

  def invariant(WorkDisclosure, :visibility, [_], v) do
    words = Enum.map(Ladder.tiers(), &Atom.to_string/1)
    values = Map.drop(v, [:account])

    Enum.sort(Map.keys(values)) == [:column, :link, :own_link, :revoked_link] and
      Enum.all?(Map.values(values), &(&1.words -- words == [] and is_boolean(&1.other)))
  end

  def invariant(Ladder, :lower, [a, b], v),
    do:
      v in [Ladder.name(a), Ladder.name(b)] and
        Ladder.rank(v) == min(Ladder.rank(a), Ladder.rank(b))

  def invariant(Ladder, :tiers, [], v), do: v == Enum.sort_by(v, &Ladder.rank/1) and v != []
  def invariant(Ladder, :name, [_], v), do: tier?(v)

  def invariant(Ladder, :rank, [t], v),
    do: v == Enum.find_index(Ladder.tiers(), &(&1 == Ladder.name(t)))

  def invariant(Ladder, :viewer_tier, [_], v), do: is_nil(v) or tier?(v)
  def invariant(Ladder, f, [_, _], v) when f in [:clamp, :effective_tier], do: tier?(v)
  def invariant(Ladder, :allows?, [_, _, _], v), do: is_boolean(v)
  def invariant(_module, _fun, _args, _value), do: :unknown

  # No never-listed column is a scheduled field's name or source.
  defp schedule_free?(family, never) do
    fields = Map.keys(WorkDisclosure.schedule()[family])
    never -- (fields ++ WorkDisclosure.source_columns(family)) == never
  end

  defp describe(module, fun, args, actual, failure) do
    got =
      case actual do
        {:ok, value} -> "returned " <> short(value)
        {:raise, e, _} -> "raised #{inspect(e.__struct__)}: " <> short_message(e)
      end

    "#{inspect(module)}.#{fun}(#{Enum.map_join(args, ", ", &short/1)}) #{got} -- #{failure}"
  end

  defp short(term), do: inspect(term, limit: 6, printable_limit: 48, width: :infinity)

  defp short_message(exception) do
    exception |> Exception.message() |> String.slice(0, 160)
  end

  @doc """
  Runs `count` generated calls from `seed`, spread over every public
  function. Returns `%{calls: n, classes: %{class => n}, by_function:
  %{{m, f, a} => n}, failures: [string], failure_count: n, failure_kinds:
  %{{m, f, a, class, why} => n}}`; keeps the first `:keep` failures
  (default 50).
  """
  def run(count, seed, opts \\ []) do
    Gen.seed(seed, opts)
    functions = List.to_tuple(functions())
    keep = Keyword.get(opts, :keep, 50)
    progress = Keyword.get(opts, :progress)

    acc = %{
      calls: 0,
      classes: %{},
      by_function: %{},
      failures: [],
      failure_count: 0,
      failure_kinds: %{}
    }

    Enum.reduce(1..count//1, acc, fn i, acc ->
      if progress && rem(i, progress.every) == 0, do: progress.fun.(i, acc)
      {module, fun, arity} = mfa = elem(functions, rem(i - 1, tuple_size(functions)))
      args = Gen.args(module, fun, arity)
      {class, failure} = check({module, fun, args})

      acc = %{
        acc
        | calls: acc.calls + 1,
          classes: Map.update(acc.classes, class, 1, &(&1 + 1)),
          by_function: Map.update(acc.by_function, mfa, 1, &(&1 + 1))
      }

      case failure do
        nil ->
          acc

        {why, text} ->
          kind = {module, fun, arity, class, tag(why)}

          %{
            acc
            | failure_count: acc.failure_count + 1,
              failures:
                if(acc.failure_count < keep, do: [text | acc.failures], else: acc.failures),
              failure_kinds: Map.update(acc.failure_kinds, kind, 1, &(&1 + 1))
          }
      end
    end)
    |> Map.update!(:failures, &Enum.reverse/1)
  end

  # A failure's reason without the values in it, to count alike failures.
  defp tag("host effects" <> _), do: "host effects"
  defp tag("inserts" <> _), do: "inserts"
  defp tag("an unauthorized caller was offered" <> _), do: "an unauthorized caller was offered"
  defp tag(why), do: why
end
