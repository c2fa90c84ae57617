# Differential run of every public function of OpenAgents.Delegations.Target
# and OpenAgents.Transparency.WorkDisclosure against the Elixir seeds they
# replace (compiled into this VM as Reference.Target and
# Reference.WorkDisclosure by ../shared/reference/load.exs, with the host
# stand-ins both sides then share).
#
#     MIX_BUILD_ROOT=/tmp/build_parity mix run scripts/parity.exs
#
# Each call is made on both sides and compared as `{:ok, value}` (strictly,
# with ===) or `{:raise, exception_module}` (plus `original` for an
# ErlangError). Prints one summary line per function and the first differing
# inputs with both results; exits 1 on any difference.
#
# One difference is known and deliberate, and is counted apart rather than
# as a failure: upstream.md says a User struct whose `id` equals a live
# link's `account_id` owns the link (glass), while the reference stand-in
# only recognises a viewer's `account_id`.
#
# Inputs holding a map that claims a stand-in struct (`__struct__` of User,
# ArtifactLink or Machine) while lacking some of that struct's fields are
# labelled "[malformed structs]". No host can build such a map with `%User{}`
# and friends, and three known divergences live only there (the seed reads a
# field lazily that we read eagerly, or the other way round: a Machine with no
# `revoked_at`, a User with no `admin` on a revoked link, a link with no
# `tier`). Their differences are printed and counted apart, and do not fail
# the run; every difference on a well-formed input does.
#
# This is a script, not a test: the test suite must not depend on the seeds.

started = System.monotonic_time(:millisecond)

root =
  case Mix.Project.project_file() do
    nil -> File.cwd!()
    file -> Path.dirname(file)
  end

unless Code.ensure_loaded?(Ecto.Association.NotLoaded) do
  defmodule Ecto.Association.NotLoaded do
    defstruct [:__field__, :__owner__, :__cardinality__]
  end
end

Code.require_file(Path.expand("../shared/reference/load.exs", root))

:rand.seed(:exsss, {1, 2, 3})

defmodule Parity do
  @moduledoc false
  @examples 5

  # ── running and comparing ─────────────────────────────────────────────

  def outcome(fun) do
    {:ok, fun.()}
  rescue
    error ->
      case error do
        %ErlangError{original: original} -> {:raise, ErlangError, original}
        %module{} -> {:raise, module}
      end
  catch
    kind, value -> {:caught, kind, value}
  end

  # Calls `fun_name` with `args` on both modules and records the outcome.
  # `expected?` (args, reference, ours) marks a difference as known.
  # Inputs holding a map that claims a stand-in struct (`__struct__`) but
  # lacks some of its fields are counted under their own label, so a
  # difference that only such a map provokes is told apart at a glance.
  def check(label, ref_mod, our_mod, fun_name, args, expected? \\ nil) do
    label = if malformed?(args), do: label <> " [malformed structs]", else: label
    reference = outcome(fn -> apply(ref_mod, fun_name, args) end)
    ours = outcome(fn -> apply(our_mod, fun_name, args) end)

    stats =
      Process.get({:stats, label}, %{
        calls: 0,
        diffs: 0,
        expected: 0,
        malformed: 0,
        examples: [],
        expected_examples: [],
        malformed_examples: []
      })

    stats = %{stats | calls: stats.calls + 1}

    stats =
      cond do
        reference === ours ->
          stats

        malformed?(args) ->
          %{
            stats
            | malformed: stats.malformed + 1,
              malformed_examples: keep(stats.malformed_examples, {args, reference, ours})
          }

        expected? && expected?.(args, reference, ours) ->
          %{
            stats
            | expected: stats.expected + 1,
              expected_examples: keep(stats.expected_examples, {args, reference, ours})
          }

        true ->
          %{
            stats
            | diffs: stats.diffs + 1,
              examples: keep(stats.examples, {args, reference, ours})
          }
      end

    unless Process.get({:seen, label}) do
      Process.put({:seen, label}, true)
      Process.put(:order, [label | Process.get(:order, [])])
    end

    Process.put({:stats, label}, stats)
  end

  @stand_ins [
    OpenAgents.Accounts.User,
    OpenAgents.Transparency.ArtifactLink,
    OpenAgents.Machines.Machine
  ]

  def malformed?(%{__struct__: module} = map) when module in @stand_ins do
    fields = module.__struct__() |> Map.keys()

    not Enum.all?(fields, &Map.has_key?(map, &1)) or
      map |> Map.values() |> Enum.any?(&malformed?/1)
  end

  def malformed?(map) when is_map(map), do: map |> Map.values() |> Enum.any?(&malformed?/1)
  def malformed?(list) when is_list(list), do: Enum.any?(list, &malformed?/1)

  def malformed?(tuple) when is_tuple(tuple),
    do: tuple |> Tuple.to_list() |> Enum.any?(&malformed?/1)

  def malformed?(_), do: false

  defp keep(list, example) when length(list) < @examples, do: list ++ [example]
  defp keep(list, _example), do: list

  def report do
    labels = Process.get(:order, []) |> Enum.reverse()
    stats = Enum.map(labels, &{&1, Process.get({:stats, &1})})
    width = labels |> Enum.map(&String.length/1) |> Enum.max()

    IO.puts("\n== parity: ours vs seed ==")

    for {label, s} <- stats do
      extra = if s.expected > 0, do: "  expected: #{s.expected}", else: ""
      extra = if s.malformed > 0, do: extra <> "  malformed-only: #{s.malformed}", else: extra

      IO.puts(
        "#{String.pad_trailing(label, width)}  calls: #{pad(s.calls)}  differences: #{pad(s.diffs)}#{extra}"
      )
    end

    total = stats |> Enum.map(&elem(&1, 1).calls) |> Enum.sum()
    diffs = stats |> Enum.map(&elem(&1, 1).diffs) |> Enum.sum()
    expected = stats |> Enum.map(&elem(&1, 1).expected) |> Enum.sum()

    for {label, s} <- stats, s.examples != [] do
      IO.puts("\n-- #{label}: first #{length(s.examples)} of #{s.diffs} differences")
      Enum.each(s.examples, &print_example/1)
    end

    for {label, s} <- stats, s.expected_examples != [] do
      IO.puts(
        "\n-- #{label}: first #{length(s.expected_examples)} of #{s.expected} expected (upstream.md User-id ownership)"
      )

      Enum.each(s.expected_examples, &print_example/1)
    end

    malformed = stats |> Enum.map(&elem(&1, 1).malformed) |> Enum.sum()

    for {label, s} <- stats, s.malformed_examples != [] do
      IO.puts(
        "\n-- #{label}: first #{length(s.malformed_examples)} of #{s.malformed} on malformed struct maps (known, not failures)"
      )

      Enum.each(s.malformed_examples, &print_example/1)
    end

    IO.puts("\ntotal compared calls: #{total}")
    IO.puts("differences: #{diffs}")
    IO.puts("expected (upstream.md User-id ownership): #{expected}")
    IO.puts("known divergences on malformed struct maps: #{malformed}")
    diffs
  end

  defp pad(n), do: String.pad_leading(Integer.to_string(n), 6)

  defp print_example({args, reference, ours}) do
    IO.puts("  args: " <> show(args))
    IO.puts("    seed: " <> show(reference))
    IO.puts("    ours: " <> show(ours))
  end

  def show(term), do: inspect(term, limit: 12, printable_limit: 80, structs: true)

  # ── inputs ────────────────────────────────────────────────────────────

  def random_binary(max_len) do
    len = :rand.uniform(max_len + 1) - 1
    for _ <- 1..len//1, into: <<>>, do: <<:rand.uniform(256) - 1>>
  end

  # Thousands of near misses of each word: case changes, affixes,
  # truncations, byte flips, insertions and deletions.
  def mutations(word) do
    size = byte_size(word)

    cases = [
      String.upcase(word),
      String.capitalize(word),
      String.downcase(String.upcase(word)) <> "",
      swapcase_first(word)
    ]

    affixes =
      for affix <- [" ", "_", "x", "s", "\t", "\n", <<0>>, <<255>>, "é", "-", ":"],
          w <- [affix <> word, word <> affix],
          do: w

    truncations =
      for n <- 0..(size - 1)//1,
          w <- [binary_part(word, 0, n), binary_part(word, size - n, n)],
          do: w

    flips =
      for _ <- 1..12 do
        pos = :rand.uniform(size) - 1
        <<head::binary-size(pos), byte, tail::binary>> = word
        <<head::binary, Bitwise.bxor(byte, :rand.uniform(255)), tail::binary>>
      end

    inserts =
      for _ <- 1..4 do
        pos = :rand.uniform(size + 1) - 1
        <<head::binary-size(pos), tail::binary>> = word
        <<head::binary, :rand.uniform(256) - 1, tail::binary>>
      end

    deletes =
      for pos <- 0..(size - 1)//1 do
        <<head::binary-size(pos), _, tail::binary>> = word
        head <> tail
      end

    cases ++ affixes ++ truncations ++ flips ++ inserts ++ deletes ++ [word <> word]
  end

  defp swapcase_first(<<c, rest::binary>>) when c in ?a..?z, do: <<c - 32, rest::binary>>
  defp swapcase_first(word), do: word
end

# The inputs use struct literals of the stand-ins, which exist only once
# load.exs has run, so the run lives in a module compiled after it.
defmodule Parity.Run do
  @moduledoc false
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Transparency.WorkDisclosure
  alias OpenAgents.Transparency.ArtifactLink
  alias OpenAgents.Accounts.User
  alias OpenAgents.Machines.Machine
  alias Reference.Target, as: RefTarget
  alias Reference.WorkDisclosure, as: RefDisclosure

  def main do
    # ════════════════════════════════════════════════════════════════════════
    # Target
    # ════════════════════════════════════════════════════════════════════════

    box_states =
      ~w(init provisioning provisioned cloning ready idle running archiving archived error queued)

    run_states = ~w(admitted dispatched running completed failed cancelled timed_out lost)

    job_statuses =
      ~w(queued running completed failed interrupted budget_exhausted cancelled stopping)

    machine_statuses = ~w(active revoked)
    assignment_states = ~w(admitted running completed failed cancelled)
    lifecycles = ~w(cold queued starting active stopping failed destroyed)
    delegation_lifecycles = ~w(queued starting active succeeded failed cancelled)
    kinds = ~w(box computer)
    custodies = ~w(openagents_managed customer_premises)
    classes = ~w(standard strong batch connected)
    tier_words = ~w(dark pulse ledger glass)

    base_words =
      Enum.uniq(
        box_states ++
          run_states ++
          job_statuses ++
          machine_statuses ++
          assignment_states ++
          lifecycles ++
          delegation_lifecycles ++
          kinds ++
          custodies ++
          classes ++
          tier_words ++
          ~w(user agent cancel start not_authorized)
      )

    big = :binary.copy("a", 100_000)
    big_random = for _ <- 1..100_000, into: <<>>, do: <<:rand.uniform(256) - 1>>

    random_binaries = for _ <- 1..600, do: Parity.random_binary(16)

    odd_binaries = [
      "",
      <<0>>,
      <<255>>,
      <<255, 254>>,
      <<"box", 0>>,
      <<"active", 255>>,
      <<0, "box">>,
      "BOX",
      "Box",
      "box ",
      " box",
      "computer\n",
      "ｂｏｘ",
      big,
      big_random,
      "box" <> big,
      big <> "box",
      <<192, 128>>,
      <<237, 160, 128>>
    ]

    odd_terms = [
      nil,
      true,
      false,
      :box,
      :computer,
      :active,
      :queued,
      :failed,
      :bogus,
      :"",
      0,
      1,
      -1,
      1.0,
      0.0,
      -0.0,
      12_345_678_901_234_567_890,
      ~c"box",
      ~c"active",
      [],
      [1],
      ["box"],
      %{},
      %{kind: "box"},
      %{"box" => true},
      {},
      {"box"},
      {:box, "active"},
      self(),
      make_ref(),
      <<1::3>>,
      <<"box", 1::3>>,
      <<"active", 0::1>>,
      &Kernel.+/2,
      ~U[2026-01-01 00:00:00Z],
      %Machine{status: "active"}
    ]

    atom_words = Enum.map(base_words, &String.to_atom/1)

    mutated = base_words |> Enum.flat_map(&Parity.mutations/1)

    word_inputs =
      Enum.uniq(base_words ++ mutated ++ random_binaries ++ odd_binaries) ++
        odd_terms ++ atom_words

    IO.puts("target word inputs: #{length(word_inputs)}")

    for fun <- [:lifecycles, :delegation_lifecycles, :custodies, :kinds] do
      Parity.check("Target.#{fun}/0", RefTarget, Target, fun, [])
    end

    for fun <- [
          :custody,
          :runtime_class,
          :box_lifecycle,
          :run_lifecycle,
          :job_lifecycle,
          :delegation_seam
        ],
        input <- word_inputs do
      Parity.check("Target.#{fun}/1", RefTarget, Target, fun, [input])
    end

    # computer_lifecycle/2
    dt = ~U[2026-01-01 00:00:00Z]

    statuses = [
      "active",
      "revoked",
      "bogus",
      nil,
      :active,
      1,
      "ACTIVE",
      "Revoked",
      "",
      <<255>>,
      :revoked,
      ~c"active",
      <<1::3>>
    ]

    revoked_ats = [nil, dt, "x", false, 0, :nil_like]
    onlines = [true, false, nil, "true", 1, :true_like]

    machines =
      for status <- statuses, revoked_at <- revoked_ats do
        %Machine{id: "m1", name: "laptop", status: status, revoked_at: revoked_at, tier: "glass"}
      end

    word_machines =
      for word <- base_words,
          revoked_at <- [nil, dt],
          do: %Machine{status: word, revoked_at: revoked_at}

    non_machines =
      [
        %{status: "active", revoked_at: nil},
        %{__struct__: User, status: "active", revoked_at: nil},
        %ArtifactLink{revoked_at: nil},
        %User{id: "m"},
        # Maps claiming to be a Machine with fields missing.
        %{__struct__: Machine},
        %{__struct__: Machine, status: "active"},
        %{__struct__: Machine, status: "revoked"},
        %{__struct__: Machine, status: nil},
        %{__struct__: Machine, revoked_at: nil},
        %{__struct__: Machine, revoked_at: dt},
        %{__struct__: Machine, status: "active", revoked_at: nil},
        %{__struct__: Machine, status: "active", revoked_at: nil, extra: 1}
      ] ++ odd_terms ++ ["active", "box"]

    for machine <- machines ++ word_machines ++ non_machines, online <- onlines do
      Parity.check("Target.computer_lifecycle/2", RefTarget, Target, :computer_lifecycle, [
        machine,
        online
      ])
    end

    # seam/3
    seam_words =
      kinds ++
        lifecycles ++
        delegation_lifecycles ++
        ~w(BOX Box computer\s active\s ACTIVE) ++
        ["", <<255>>, <<0>>, "box" <> <<0>>, big]

    seam_odd = [
      nil,
      :box,
      :computer,
      :active,
      :cold,
      true,
      false,
      1,
      1.0,
      ~c"box",
      ~c"active",
      %{},
      {},
      [],
      self(),
      make_ref(),
      <<1::3>>
    ]

    seam_values = Enum.uniq(seam_words) ++ seam_odd
    authorizations = [true, false, nil, "true", "false", 1, 0, :yes, [], %{}]

    for kind <- seam_values, lifecycle <- seam_values, authorized <- authorizations do
      Parity.check("Target.seam/3", RefTarget, Target, :seam, [kind, lifecycle, authorized])
    end

    # ════════════════════════════════════════════════════════════════════════
    # WorkDisclosure
    # ════════════════════════════════════════════════════════════════════════

    families = [:attempt, :work_job, :evidence, :trace]

    odd_families = [
      :bogus,
      "attempt",
      "work_job",
      nil,
      1,
      :Attempt,
      :attempts,
      ~c"attempt",
      {},
      [],
      %{},
      [:attempt],
      true,
      <<255>>,
      <<1::3>>,
      self()
    ]

    all_families = families ++ odd_families

    columns = %{
      attempt:
        ~w(id conversation_id conversation_box_id machine_id repository_id issue_id run_id work_job_id target_kind credential_delivery_status credential_delivery_reason requesting_principal branch state terminal_branch terminal_commit failure_reason deadline_at admitted_at started_at finished_at transparency_tier artifact_link_id inserted_at updated_at)a,
      work_job:
        ~w(id conversation_id owner_visitor_id machine_id surface goal context_hint requesting_tool_step_ref kind delegation authority_snapshot budget_snapshot status report error_code model_id instruction_digest tool_catalog_digest memory_snapshot_ref tool_call_count continuation_count usage owner_node generation report_message_id started_at completed_at inserted_at updated_at)a,
      evidence:
        ~w(id commit_sha family receipt_id plane environment result actor source repository_id issue_id assignment_id transparency_tier artifact_link_id inserted_at)a,
      trace: ~w(id user_id digest visibility document byte_size assignment_id inserted_at)a
    }

    derived = %{
      attempt: [:requester_kind],
      work_job: [:budget],
      evidence: [:commit, :recorded_at],
      trace: [:schema_version, :step_count, :recorded_at]
    }

    associations = %{
      attempt: [
        :conversation,
        :conversation_box,
        :machine,
        :repository,
        :issue,
        :run,
        :work_job,
        :artifact_link
      ],
      work_job: [:conversation, :machine, :owner_visitor, :report_message],
      evidence: [:repository, :issue, :assignment, :artifact_link],
      trace: [:user, :assignment]
    }

    never_columns = %{
      attempt:
        ~w(conversation_id conversation_box_id machine_id run_id work_job_id deadline_at credential_delivery_status credential_delivery_reason repository_id issue_id transparency_tier artifact_link_id inserted_at updated_at requesting_principal)a,
      work_job:
        ~w(goal context_hint delegation authority_snapshot machine_id conversation_id owner_visitor_id requesting_tool_step_ref instruction_digest tool_catalog_digest memory_snapshot_ref report_message_id owner_node generation surface inserted_at updated_at budget_snapshot)a,
      evidence:
        ~w(actor assignment_id repository_id issue_id transparency_tier artifact_link_id commit_sha inserted_at)a,
      trace: ~w(user_id visibility assignment_id document inserted_at)a
    }

    for fun <- [:families, :schedule] do
      Parity.check("WorkDisclosure.#{fun}/0", RefDisclosure, WorkDisclosure, fun, [])
    end

    for fun <- [:never, :source_columns], family <- all_families ++ odd_terms do
      Parity.check("WorkDisclosure.#{fun}/1", RefDisclosure, WorkDisclosure, fun, [family])
    end

    # tier_for/2
    every_column = columns |> Map.values() |> List.flatten()
    every_derived = derived |> Map.values() |> List.flatten()
    every_association = associations |> Map.values() |> List.flatten()

    fields =
      Enum.uniq(every_column ++ every_derived ++ every_association) ++
        [
          :__meta__,
          :__struct__,
          :bogus,
          :document,
          :prompt,
          :commit_sha,
          :ID,
          :Id,
          :id?,
          nil,
          true,
          false
        ] ++
        [
          "id",
          "report",
          "branch",
          ~c"id",
          1,
          1.0,
          {},
          [],
          %{},
          {:id},
          [:id],
          self(),
          make_ref(),
          <<255>>,
          <<1::3>>,
          big
        ]

    for family <- all_families, field <- fields do
      Parity.check("WorkDisclosure.tier_for/2", RefDisclosure, WorkDisclosure, :tier_for, [
        family,
        field
      ])
    end

    # Tier forms, and viewers built of them.
    bare_tiers = [
      :dark,
      :pulse,
      :ledger,
      :glass,
      "dark",
      "pulse",
      "ledger",
      "glass",
      "GLASS",
      "Glass",
      :GLASS,
      :bogus,
      nil,
      true,
      false,
      1,
      1.0,
      0,
      [],
      {},
      ~c"glass",
      "glass ",
      "",
      <<255>>,
      <<0>>,
      <<"glass", 0>>,
      <<"ledger", 255>>,
      <<1::3>>,
      self(),
      make_ref(),
      big,
      %{}
    ]

    live_link = fn account_id, tier ->
      %ArtifactLink{
        id: "link-9",
        account_id: account_id,
        repository_id: "r1",
        artifact_type: "attempt",
        artifact_ref: "id",
        tier: tier,
        revoked_at: nil
      }
    end

    link_tiers = ["dark", "pulse", "ledger", "glass", "bogus", nil, :glass]
    link_accounts = ["acct-1", nil, 1]

    live_links = for account <- link_accounts, tier <- link_tiers, do: live_link.(account, tier)

    revoked_links = [
      %{live_link.("acct-1", "glass") | revoked_at: dt},
      %{live_link.("acct-1", "ledger") | revoked_at: "x"},
      %{live_link.(nil, "pulse") | revoked_at: false}
    ]

    # Maps claiming to be an ArtifactLink with fields missing.
    malformed_links = [
      %{__struct__: ArtifactLink},
      %{__struct__: ArtifactLink, revoked_at: nil},
      %{__struct__: ArtifactLink, revoked_at: nil, tier: "glass"},
      %{__struct__: ArtifactLink, revoked_at: nil, account_id: "acct-1"},
      %{__struct__: ArtifactLink, revoked_at: nil, account_id: "acct-1", tier: "pulse"}
    ]

    users =
      for admin <- [true, false], id <- ["acct-1", "other", nil] do
        %User{id: id, admin: admin, member_of: ["r1"]}
      end ++ [%User{id: "acct-1", admin: "yes"}, %User{id: 1, admin: false}]

    malformed_users = [
      %{__struct__: User},
      %{__struct__: User, id: "acct-1"},
      %{__struct__: User, admin: false},
      %{__struct__: User, admin: true}
    ]

    viewer_maps =
      for(t <- bare_tiers, do: %{tier: t}) ++
        [
          %{admin: true},
          %{admin: false},
          %{admin: "true"},
          %{admin: true, tier: :dark},
          %{admin: false, tier: :pulse},
          %{account_id: "a"},
          %{account_id: nil},
          %{account_id: "a", tier: :ledger},
          %{account_id: "acct-1"},
          %{account_id: "acct-1", tier: :pulse},
          %{account_id: "acct-1", tier: :dark},
          %{account_id: "acct-1", tier: nil},
          %{account_id: "other", tier: :pulse},
          %{account_id: "other"},
          %{account_id: 1},
          %{account_id: 1.0, tier: :pulse},
          %{id: "acct-1"},
          %{id: "acct-1", tier: :pulse},
          %{"tier" => :glass},
          %{"admin" => true},
          %{},
          # The four viewer/2 outputs.
          %{account_id: "acct-1", tier: :glass, admin: true},
          %{account_id: "acct-1", tier: :ledger},
          %{account_id: "acct-1", tier: :pulse},
          %{account_id: nil, tier: :pulse}
        ]

    struct_tiers =
      users ++
        [
          live_link.("acct-1", "glass"),
          live_link.("acct-1", "pulse"),
          live_link.(nil, "ledger"),
          hd(revoked_links),
          %Machine{tier: "glass"},
          %Machine{tier: nil},
          %Machine{tier: :pulse},
          %Ecto.Association.NotLoaded{__field__: :artifact_link}
        ]

    tiers =
      Enum.uniq(bare_tiers ++ viewer_maps ++ struct_tiers ++ malformed_users ++ malformed_links)

    IO.puts("tier/viewer forms: #{length(tiers)}")

    # fields_at/2
    for family <- all_families, tier <- tiers do
      Parity.check("WorkDisclosure.fields_at/2", RefDisclosure, WorkDisclosure, :fields_at, [
        family,
        tier
      ])
    end

    # viewer/2
    repositories = [
      %{id: "r1"},
      %{id: "r2"},
      %{id: nil},
      %{},
      %{"id" => "r1"},
      nil,
      "r1",
      :r1,
      1,
      %Machine{id: "r1"}
    ]

    viewer_users =
      [nil] ++
        for(
          admin <- [true, false, "yes"],
          member_of <- [["r1"], [], ["r2"], ["r1", "r2"]],
          id <- ["acct-1", nil],
          do: %User{id: id, admin: admin, member_of: member_of}
        ) ++
        [
          %User{id: 1},
          %{id: "acct-1", admin: true},
          %{id: "acct-1", admin: false, member_of: ["r1"]},
          %{__struct__: Other, id: "acct-1"},
          %Machine{id: "acct-1"},
          :admin,
          :user,
          "user",
          1,
          true,
          [],
          {}
        ] ++
        malformed_users ++
        [
          %{__struct__: User, admin: false, id: "a"},
          %{__struct__: User, admin: false, member_of: ["r1"]}
        ]

    for repository <- repositories, user <- viewer_users do
      Parity.check("WorkDisclosure.viewer/2", RefDisclosure, WorkDisclosure, :viewer, [
        repository,
        user
      ])
    end

    # effective_tier/2
    not_loaded = %Ecto.Association.NotLoaded{
      __field__: :artifact_link,
      __owner__: Assignment,
      __cardinality__: :one
    }

    link_values =
      live_links ++
        revoked_links ++ [nil, not_loaded, "glass", :glass, %{tier: "glass"}] ++ malformed_links

    tier_columns = [
      :absent,
      "ledger",
      "glass",
      "pulse",
      "dark",
      :glass,
      nil,
      "bogus",
      live_link.("acct-1", "pulse"),
      live_link.(nil, "glass"),
      hd(revoked_links),
      %{}
    ]

    linked_records =
      for link <- [:absent | link_values], column <- tier_columns do
        record = %{id: "att-1", state: "running"}
        record = if link == :absent, do: record, else: Map.put(record, :artifact_link, link)
        if column == :absent, do: record, else: Map.put(record, :transparency_tier, column)
      end

    other_records = [
      %{"artifact_link" => live_link.("acct-1", "glass"), "transparency_tier" => "glass"},
      %{"transparency_tier" => "ledger"},
      %Machine{tier: "glass"},
      %ArtifactLink{tier: "glass"},
      %User{id: "acct-1"},
      not_loaded,
      %{},
      nil,
      "x",
      1,
      [],
      {},
      [artifact_link: live_link.("acct-1", "glass")],
      self()
    ]

    records = linked_records ++ other_records

    effective_viewers = tiers

    # The deliberate difference: a User struct viewer whose id equals the live
    # link's account_id is the owner per upstream.md, not per the stand-in.
    live? = fn
      %{__struct__: ArtifactLink, revoked_at: nil} -> true
      _ -> false
    end

    user_owns? = fn record, viewer ->
      link =
        case record do
          %{artifact_link: %{__struct__: ArtifactLink} = link} ->
            link

          %{transparency_tier: %{__struct__: ArtifactLink} = link}
          when not (is_map_key(viewer, :admin) and :erlang.map_get(:admin, viewer) == true) ->
            link

          _ ->
            nil
        end

      is_map(record) and is_struct(viewer, User) and link != nil and live?.(link) and
        Map.get(link, :account_id) != nil and Map.get(viewer, :id) != nil and
        Map.get(link, :account_id) == Map.get(viewer, :id)
    end

    ownership = fn
      [record, viewer], {:ok, _}, {:ok, :glass} -> user_owns?.(record, viewer)
      _, _, _ -> false
    end

    for record <- records, viewer <- effective_viewers do
      Parity.check(
        "WorkDisclosure.effective_tier/2",
        RefDisclosure,
        WorkDisclosure,
        :effective_tier,
        [record, viewer],
        ownership
      )
    end

    # link_for_attempt/2 and /3
    link_repositories = [
      %{id: "r1"},
      %{id: nil},
      %{id: 7},
      %{},
      nil,
      "r1",
      %{"id" => "r1"},
      %Machine{id: "r1"},
      [id: "r1"]
    ]

    principals = [
      %{"type" => "user", "id" => "acct-1"},
      %{"type" => "user", "id" => ""},
      %{"type" => "user", "id" => <<255>>},
      %{"type" => "user", "id" => <<1::3>>},
      %{"type" => "user", "id" => 1},
      %{"type" => "user", "id" => nil},
      %{"type" => "user", "id" => :x},
      %{"type" => "user", "id" => ~c"acct-1"},
      %{"type" => "user", "id" => "acct-1", "extra" => true},
      %{"type" => "user"},
      %{"id" => "acct-1"},
      %{"type" => "agent", "id" => "a"},
      %{"type" => "agent"},
      %{"type" => "User", "id" => "a"},
      %{"type" => :user, "id" => "a"},
      %{"type" => "user ", "id" => "a"},
      %{"type" => <<"user", 0>>, "id" => "a"},
      %{type: "user", id: "a"},
      %{:type => "user", "id" => "a"},
      %{},
      nil,
      "user",
      :user,
      1,
      [],
      {},
      [{"type", "user"}, {"id", "a"}]
    ]

    authorities = [%{}, %{"roots" => ["/x"]}, nil, "x", [cwd: "/"]]

    for repository <- link_repositories, principal <- principals do
      Parity.check(
        "WorkDisclosure.link_for_attempt/2",
        RefDisclosure,
        WorkDisclosure,
        :link_for_attempt,
        [repository, principal]
      )

      for authority <- authorities do
        Parity.check(
          "WorkDisclosure.link_for_attempt/3",
          RefDisclosure,
          WorkDisclosure,
          :link_for_attempt,
          [repository, principal, authority]
        )
      end
    end

    # project/3
    complete = fn family ->
      keys = columns[family] ++ derived[family] ++ associations[family]
      base = Map.new(keys, fn key -> {key, "#{family}.#{key}"} end)

      base
      |> Map.put(:__meta__, %{state: :loaded, source: "#{family}s"})
      |> Map.put(:artifact_link, live_link.("acct-1", "glass"))
      |> Map.put(:requesting_principal, %{"type" => "user", "id" => "acct-1"})
      |> Map.put(:budget, %{wall_clock_ms: 1000, report_bytes: 8192})
    end

    secret = fn family ->
      Enum.reduce(never_columns[family], complete.(family), fn column, acc ->
        Map.put(acc, column, "SECRET-#{column}")
      end)
    end

    partial = fn family ->
      source = complete.(family)
      keys = Map.keys(source)
      for _ <- 1..6, do: Map.take(source, Enum.filter(keys, fn _ -> :rand.uniform(2) == 1 end))
    end

    stringy = fn family ->
      complete.(family) |> Map.new(fn {key, value} -> {Atom.to_string(key), value} end)
    end

    non_map_sources = [nil, "x", [], 1, {}, [id: 1]]

    project_sources = fn family ->
      [
        complete.(family),
        secret.(family),
        stringy.(family),
        %{},
        %{id: nil},
        %Machine{id: "m1", tier: "glass"},
        live_link.("acct-1", "glass"),
        not_loaded
      ] ++
        partial.(family) ++ Enum.map(families -- [family], complete) ++ non_map_sources
    end

    for family <- families, source <- project_sources.(family), tier <- tiers do
      Parity.check("WorkDisclosure.project/3", RefDisclosure, WorkDisclosure, :project, [
        family,
        source,
        tier
      ])
    end

    for family <- odd_families,
        source <- [complete.(:attempt), %{}, nil, "x"],
        tier <- [:glass, :dark, nil, "ledger", %{admin: true}] do
      Parity.check("WorkDisclosure.project/3", RefDisclosure, WorkDisclosure, :project, [
        family,
        source,
        tier
      ])
    end
  end
end

Parity.Run.main()
diffs = Parity.report()
elapsed = System.monotonic_time(:millisecond) - started
IO.puts("elapsed: #{elapsed} ms")

if diffs > 0, do: System.halt(1)
