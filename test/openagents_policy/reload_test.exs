defmodule OpenAgentsPolicy.ReloadTest do
  # Hot code loading of OpenAgentsPolicy.Native in this VM, with the answers
  # checked after every load.
  #
  # The library now has one path per build (rustler installs
  # `priv/native/libopenagents_policy_nif.so`, rustler_precompiled its
  # artifact's name), and Native's on_load (rustler's or
  # rustler_precompiled's, generated) is `:code.purge(__MODULE__)`, then
  # `:erlang.load_nif/2` of that path. Three ways a new version of Native
  # comes in, and what each does:
  #
  #   * Mix's reloader order (Mix's compiler, so IEx's `recompile/0` and
  #     Phoenix's code reloader): purge, delete (the current code becomes
  #     old, still holding the library), load. The on_load's purge drops the
  #     old code, and with it the library, so the load is a fresh load of
  #     the file: accepted, every time.
  #   * IEx's order (`r/1`, `Code.compile_file/1`): the new version loaded
  #     over the current one, which still holds the library. The NIF has
  #     rustler's entry, with no `upgrade` callback, so the VM refuses the
  #     load, and the current version keeps answering.
  #
  # async: false, because purging kills any process still running the old
  # code, and because other tests call the module.
  use ExUnit.Case, async: false

  alias OpenAgents.Delegations.Target
  alias OpenAgents.Transparency.{Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Native

  @reloads 20

  # Forwards every log event to the process named in the handler's config:
  # the code server reports an on_load failure from a process of its own,
  # so the test waits for the report rather than capturing a window.
  defmodule Forward do
    @moduledoc false
    def log(event, %{config: %{to: pid}}), do: send(pid, {:logged, event})
  end

  setup_all do
    {Native, binary, beam_path} = :code.get_object_code(Native)
    :persistent_term.put({__MODULE__, :before}, answers())

    # Whatever happens in a test, leave the module loaded from its own
    # directory, with its NIF, and no old code.
    on_exit(fn ->
      restore!(binary, beam_path)
      assert_answers!()
      assert current_and_old() == {true, false}
      :persistent_term.erase({__MODULE__, :before})
    end)

    # Not `:file`: since Elixir 1.15 a test's tags are merged over this
    # context, and ExUnit tags every test with `:file` (the test's source).
    %{binary: binary, beam_path: beam_path}
  end

  # Native loaded afresh from `binary` (Mix's order, then the old code
  # dropped too) unless it is loaded and answers already.
  defp restore!(binary, beam_path) do
    answers? =
      try do
        :code.is_loaded(Native) != false and is_list(Native.kinds())
      rescue
        _ -> false
      end

    unless answers? do
      :code.purge(Native)
      :code.delete(Native)
      {:module, Native} = :code.load_binary(Native, beam_path, binary)
    end

    :code.purge(Native)
  end

  # Answers from every path through the NIF that the host calls, and the
  # decision digest the loaded library computes. Held, after every load, to
  # what the module answered before the first (setup_all keeps it): a reload must
  # change nothing. What the rules answer is not this test's to say (the
  # core's tests, the parity run and the decision diff hold that), so a rule
  # change leaves it as it is.
  defp answers do
    link = %OpenAgents.Transparency.ArtifactLink{account_id: "acct-1", tier: "ledger"}

    [
      kinds: Native.kinds(),
      decision_digest: Native.decision_digest(),
      box_lifecycle: Target.box_lifecycle("idle"),
      job_lifecycle: Target.job_lifecycle("stopping"),
      run_lifecycle: Target.run_lifecycle("timed_out"),
      computer_lifecycle:
        Target.computer_lifecycle(%OpenAgents.Machines.Machine{status: "active"}, true),
      seam: Target.seam("computer", "active", false),
      delegation_seam: Target.delegation_seam("queued"),
      fields_at: WorkDisclosure.fields_at(:trace, :pulse),
      fields_at_dark: WorkDisclosure.fields_at(:work_job, "dark"),
      never: WorkDisclosure.never(:trace),
      effective_tier_linked:
        WorkDisclosure.effective_tier(%{artifact_link: link}, %{
          account_id: "acct-1",
          tier: :pulse
        }),
      effective_tier:
        WorkDisclosure.effective_tier(%{transparency_tier: "ledger"}, %{tier: :pulse}),
      project: WorkDisclosure.project(:trace, %{id: 7, document: "secret"}, :pulse),
      viewer: WorkDisclosure.viewer(%{id: "repo"}, nil),
      link_for_attempt:
        WorkDisclosure.link_for_attempt(%{id: "repo"}, %{"type" => "agent", "id" => "a"}),
      clamp: Ladder.clamp(:glass, %{tier: :ledger})
    ]
  end

  defp assert_answers! do
    before = :persistent_term.get({__MODULE__, :before})

    for {{call, answer}, {call, was}} <- Enum.zip(answers(), before) do
      assert answer == was, "#{call} after a load: #{inspect(answer)}, before: #{inspect(was)}"
    end
  end

  defp current_and_old do
    {:code.is_loaded(Native) != false, :erlang.check_old_code(Native)}
  end

  # Whether `file` is mapped into this VM, told apart from the library's own
  # reading (which matches inodes): its resolved path (the kernel's name for
  # it; priv/ may be a symlink) among /proc/self/maps' lines. :unknown where
  # there is no /proc.
  defp mapped?(file) do
    case File.read("/proc/self/maps") do
      {:ok, maps} ->
        {real, 0} = System.cmd("readlink", ["-f", file])
        String.contains?(maps, String.trim(real))

      {:error, _} ->
        :unknown
    end
  end

  # Runs `fun` with every log event forwarded to this process.
  defp forwarding_logs(fun) do
    id = :"reload_test_#{System.unique_integer([:positive])}"
    :ok = :logger.add_handler(id, Forward, %{config: %{to: self()}})

    try do
      fun.()
    after
      :logger.remove_handler(id)
    end
  end

  # The code server's report of Native's on_load result (error_logger's
  # warning_msg, carried as a report or as a format and its arguments).
  defp assert_on_load_reported(pattern_fun) do
    assert_receive {:logged, %{msg: msg}} when elem(msg, 0) == :report or is_list(elem(msg, 0))

    case msg do
      {:report, %{args: [Native, result, _depth]}} ->
        assert pattern_fun.(result), "the on_load returned #{inspect(result)}"

      {format, [Native, result, _depth]} when is_list(format) ->
        assert pattern_fun.(result), "the on_load returned #{inspect(result)}"

      _other ->
        # Another log event of this VM: not the report.
        assert_on_load_reported(pattern_fun)
    end
  end

  test "Mix's reloader order, #{@reloads} times: purge, delete, then a fresh load of the file",
       %{binary: binary, beam_path: beam_path} do
    file = Native.library_file()

    for round <- 1..@reloads do
      :code.purge(Native)
      assert :code.delete(Native)
      # The current code is now old and still holds the library.
      assert current_and_old() == {false, true}

      assert {:module, Native} = :code.load_binary(Native, beam_path, binary),
             "round #{round}: the load failed"

      # The on_load's purge dropped the old code, and the library with it:
      # the NIF was loaded into a module no other version of which held one.
      assert current_and_old() == {true, false}
      assert Native.library_file() == file
      assert_answers!()
    end

    if mapped?(file) != :unknown, do: assert(mapped?(file))
  end

  # The refusals are logged as warnings, expected here.
  @tag :capture_log
  test "IEx's order: the same library loaded over the current version is refused, " <>
         "and the current version keeps answering",
       %{binary: binary, beam_path: beam_path} do
    :code.purge(Native)
    assert current_and_old() == {true, false}

    forwarding_logs(fn ->
      for round <- 1..3 do
        assert :code.load_binary(Native, beam_path, binary) == {:error, :on_load_failure},
               "round #{round}: the load over the current version was let through"

        # No upgrade callback: the VM's own words for it.
        assert_on_load_reported(
          &match?({:error, {:upgrade, text}} when is_list(text) or is_binary(text), &1)
        )

        # Nothing changed: the version that was current still is, with its
        # library, and no other version is left behind.
        assert current_and_old() == {true, false}
        assert_answers!()
      end
    end)

    # The same binary, in Mix's order, is accepted: what was refused is the
    # upgrade onto the library already loaded, not this code.
    :code.delete(Native)
    assert {:module, Native} = :code.load_binary(Native, beam_path, binary)
    assert_answers!()
  end
end
