defmodule OpenAgentsPolicy.PicturesTest do
  use ExUnit.Case, async: true
  @moduletag :repo

  import ExUnit.CaptureIO

  alias OpenAgents.Delegations.Target
  alias OpenAgents.Transparency.{Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Pictures

  @root Path.expand("../..", __DIR__)
  @dir Path.join(@root, Pictures.dir())

  test "the committed pictures are the ones the core draws now" do
    for {name, svg} <- Pictures.files() do
      assert File.read(Path.join(@dir, name)) == {:ok, svg},
             "#{Pictures.dir()}/#{name} drifted from the core: run `mix openagents_policy.pictures`"
    end
  end

  test "no stale picture is left in the assets directory" do
    assert Enum.sort(File.ls!(@dir)) == Enum.sort(Enum.map(Pictures.files(), &elem(&1, 0)))
  end

  test "every picture is included by a guide" do
    guides = Path.wildcard(Path.join(@root, "guides/*.md")) |> Enum.map_join(&File.read!/1)

    for {name, _svg} <- Pictures.files() do
      assert guides =~ "](assets/#{name})", "no guide includes #{name}"
    end
  end

  describe "a schedule grid" do
    for family <- WorkDisclosure.families() do
      @family family

      test "of #{family} fills, for each field, exactly the tiers at or above its first" do
        svg = Pictures.schedule_svg(@family)
        rows = field_rows(svg)
        schedule = Map.fetch!(WorkDisclosure.schedule(), @family)

        assert Map.keys(rows) |> Enum.sort() ==
                 Map.keys(schedule) |> Enum.map(&to_string/1) |> Enum.sort()

        for {field, first} <- schedule do
          {drawn_first, shown} = Map.fetch!(rows, to_string(field))
          assert drawn_first == to_string(first)

          expected =
            for t <- Ladder.tiers(), Ladder.rank(t) >= Ladder.rank(first), do: to_string(t)

          assert shown == expected, "#{@family}.#{field}: #{inspect(shown)}"
        end
      end

      test "of #{family} shows every never-listed column apart, and none as a field" do
        svg = Pictures.schedule_svg(@family)
        never = Enum.map(WorkDisclosure.never(@family), &to_string/1)

        assert Regex.scan(~r/<g data-never="([^"]+)">/, svg, capture: :all_but_first)
               |> List.flatten() ==
                 never

        assert MapSet.disjoint?(MapSet.new(never), MapSet.new(Map.keys(field_rows(svg))))
      end
    end
  end

  test "the seam matrix draws seam/3 for every kind, lifecycle and reach" do
    cells =
      Regex.scan(
        ~r/<g data-kind="([^"]*)" data-lifecycle="([^"]*)" data-authorized="([^"]*)" data-capabilities="([^"]*)" data-unavailable="([^"]*)">\n<rect[^>]* fill="([^"]+)"/,
        Pictures.seam_svg(),
        capture: :all_but_first
      )

    assert length(cells) == length(Target.kinds()) * length(Target.lifecycles()) * 2

    for [kind, lifecycle, authorized, caps, reason, fill] <- cells do
      seam = Target.seam(kind, lifecycle, authorized == "true")
      assert caps == Enum.join(seam["capabilities"], " ")
      assert reason == to_string(seam["unavailable_reason"])
      # Offered and withheld cells differ in colour, so the picture says it.
      assert fill == offered_fill() == (seam["capabilities"] != [])
    end
  end

  test "the delegation seam draws delegation_seam/1 for every delegation lifecycle" do
    cells =
      Regex.scan(
        ~r/<g data-lifecycle="([^"]*)" data-capabilities="([^"]*)">/,
        Pictures.delegation_seam_svg(),
        capture: :all_but_first
      )

    assert Enum.map(cells, &hd/1) == Target.delegation_lifecycles()

    for [lifecycle, caps] <- cells do
      assert caps == Enum.join(Target.delegation_seam(lifecycle)["capabilities"], " ")
    end
  end

  test "mix openagents_policy.pictures --check passes on the committed files and fails on a changed one" do
    tmp = Path.join(System.tmp_dir!(), "pictures-#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm_rf!(tmp) end)

    written = capture_io(fn -> Mix.Tasks.OpenagentsPolicy.Pictures.run(["--out", tmp]) end)
    assert written =~ "seam-matrix.svg"

    checked =
      capture_io(fn -> Mix.Tasks.OpenagentsPolicy.Pictures.run(["--out", tmp, "--check"]) end)

    assert checked == ""

    File.write!(Path.join(tmp, "seam-matrix.svg"), "<svg/>")

    assert_raise Mix.Error, ~r/seam-matrix.svg/, fn ->
      Mix.Tasks.OpenagentsPolicy.Pictures.run(["--out", tmp, "--check"])
    end
  end

  # %{field => {first tier, [tiers whose cell is drawn filled]}}
  defp field_rows(svg) do
    ~r/<g data-field="([^"]+)" data-first-tier="([^"]+)">(.*?)<\/g>/s
    |> Regex.scan(svg, capture: :all_but_first)
    |> Map.new(fn [field, first, body] ->
      shown = Regex.scan(~r/data-tier="([^"]+)" data-shown="true"/, body, capture: :all_but_first)
      {field, {first, List.flatten(shown)}}
    end)
  end

  # The fill of the cell that offers `start` to an authorized caller on an
  # active box, as drawn.
  defp offered_fill do
    [fill] =
      Regex.run(
        ~r/<g data-kind="box" data-lifecycle="active" data-authorized="true"[^>]*>\n<rect[^>]* fill="([^"]+)"/,
        Pictures.seam_svg(),
        capture: :all_but_first
      )

    fill
  end
end
