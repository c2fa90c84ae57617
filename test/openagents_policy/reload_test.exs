defmodule OpenAgentsPolicy.ReloadTest do
  # Hot code reload of the NIF module, as a dev server's code reloader and
  # IEx do it, with the answers checked after every reload.
  #
  # Loading a new version of a module whose current version holds a NIF
  # library runs the library's `upgrade` callback (the VM refuses the load
  # when there is none, and the new version is left with no NIF). That is the
  # path a recompile in a running dev server takes:
  #
  #   * Mix's compiler (and so Phoenix's code reloader) purges and deletes a
  #     stale module, which makes its current code old, and then loads the
  #     recompiled binary while the old code still holds the library;
  #   * IEx's `r/1` (`Code.compile_file/1`) loads the new binary over the
  #     current one, which becomes old the same way.
  #
  # async: false, because purging kills any process still running the old
  # code, and because other tests call the module.
  use ExUnit.Case, async: false

  alias OpenAgents.Delegations.Target
  alias OpenAgents.Transparency.{Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Native

  @reloads 20

  setup_all do
    {Native, binary, beam_path} = :code.get_object_code(Native)

    # Whatever happens in a test, leave the module loaded, with its NIF.
    on_exit(fn ->
      if :code.is_loaded(Native) == false,
        do: {:module, Native} = :code.load_binary(Native, beam_path, binary)

      assert_answers!()
    end)

    # Not `:file`: since Elixir 1.15 a test's tags are merged over this
    # context, and ExUnit tags every test with `:file` (the test's source).
    %{binary: binary, beam_path: beam_path}
  end

  # Answers from every path through the NIF that the host calls.
  defp assert_answers! do
    assert Native.kinds() == ["box", "computer"]
    assert Target.box_lifecycle("idle") == "active"
    assert Target.job_lifecycle("stopping") == "failed"
    assert Target.run_lifecycle("timed_out") == "failed"

    assert Target.computer_lifecycle(%OpenAgents.Machines.Machine{status: "active"}, true) ==
             "active"

    assert Target.seam("computer", "active", false) == %{
             "custody" => "customer_premises",
             "runtime_class" => "connected",
             "lifecycle" => "active",
             "capabilities" => [],
             "unavailable_reason" => "not_authorized"
           }

    assert Target.delegation_seam("queued") == %{
             "lifecycle" => "queued",
             "capabilities" => ["cancel"]
           }

    assert WorkDisclosure.fields_at(:trace, :pulse) == [
             :id,
             :recorded_at,
             :schema_version,
             :step_count
           ]

    assert WorkDisclosure.fields_at(:work_job, "dark") == []
    assert WorkDisclosure.never(:trace) == [:user_id, :visibility, :assignment_id]

    link = %OpenAgents.Transparency.ArtifactLink{account_id: "acct-1", tier: "ledger"}
    viewer = %{account_id: "acct-1", tier: :pulse}
    assert WorkDisclosure.effective_tier(%{artifact_link: link}, viewer) == :glass

    assert WorkDisclosure.effective_tier(%{transparency_tier: "ledger"}, %{tier: :pulse}) ==
             :pulse

    assert WorkDisclosure.project(:trace, %{id: 7, document: "secret"}, :pulse) ==
             %{id: 7, recorded_at: nil, schema_version: nil, step_count: nil}

    assert WorkDisclosure.viewer(%{id: "repo"}, nil) == %{account_id: nil, tier: :pulse}

    assert WorkDisclosure.link_for_attempt(%{id: "repo"}, %{"type" => "agent", "id" => "a"}) ==
             :none

    assert Ladder.clamp(:glass, %{tier: :ledger}) == :ledger
  end

  defp current_and_old do
    {:code.is_loaded(Native) != false, :erlang.check_old_code(Native)}
  end

  test "Mix's reloader order, #{@reloads} times: purge, delete, load while the old code holds the NIF",
       %{binary: binary, beam_path: beam_path} do
    for round <- 1..@reloads do
      :code.purge(Native)
      assert :code.delete(Native)
      # The current code is now old and still holds the library.
      assert current_and_old() == {false, true}

      assert {:module, Native} = :code.load_binary(Native, beam_path, binary),
             "round #{round}: the load (the NIF's upgrade path) failed"

      assert current_and_old() == {true, true}
      assert_answers!()
    end
  end

  test "IEx's order, #{@reloads} times: load over the current version", %{
    binary: binary,
    beam_path: beam_path
  } do
    for round <- 1..@reloads do
      # Only one old version may exist; the previous round left one.
      :code.purge(Native)
      assert current_and_old() == {true, false}

      assert {:module, Native} = :code.load_binary(Native, beam_path, binary),
             "round #{round}: loading over the current version failed"

      assert current_and_old() == {true, true}
      assert_answers!()
    end
  end

  test "a cold load after the old code is gone, #{@reloads} times", %{
    binary: binary,
    beam_path: beam_path
  } do
    for round <- 1..@reloads do
      :code.purge(Native)
      :code.delete(Native)
      # No version at all holds the library now.
      :code.purge(Native)
      assert current_and_old() == {false, false}

      assert {:module, Native} = :code.load_binary(Native, beam_path, binary),
             "round #{round}: a fresh load failed"

      assert_answers!()
    end
  end

  test "the three orders interleaved, then the module is left loaded", %{
    binary: binary,
    beam_path: beam_path
  } do
    for round <- 1..@reloads do
      case rem(round, 3) do
        0 ->
          :code.purge(Native)
          :code.delete(Native)

        1 ->
          :code.purge(Native)

        2 ->
          :code.purge(Native)
          :code.delete(Native)
          :code.purge(Native)
      end

      assert {:module, Native} = :code.load_binary(Native, beam_path, binary)
      assert_answers!()
    end

    # Drop the last old version too: the current one holds the library alone.
    :code.purge(Native)
    assert current_and_old() == {true, false}
    assert_answers!()
  end
end
