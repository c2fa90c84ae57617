defmodule OpenAgents.Transparency.WorkDisclosureReasonsTest do
  # explain/2 and withheld/2 over every family, field, never-listed column
  # and tier the library names: each reason is the core's (its JSON says the
  # same), so a field added without one fails here the day it lands.
  use ExUnit.Case, async: true

  alias OpenAgents.Transparency.{Ladder, WorkDisclosure}

  @families WorkDisclosure.families()
  @tiers Ladder.tiers()
  # Every tier form fields_at/2 reads: atoms, strings, nil, strangers, viewers.
  @tier_forms [nil, :bogus, "GLASS", "", %{admin: true}, %{account_id: "a"}] ++
                @tiers ++ Enum.map(@tiers, &Atom.to_string/1) ++ Enum.map(@tiers, &%{tier: &1})
  @not_families [:deployment, :Attempt, "attempt", nil, 1]

  defp fields(family), do: WorkDisclosure.schedule() |> Map.fetch!(family) |> Map.keys()
  defp fields_in_order(family), do: Enum.sort(fields(family))

  # The core's own serialization of each reason, keyed by family and name.
  defp core_reasons do
    for %{"family" => family, "fields" => fields, "never" => never} <-
          Jason.decode!(WorkDisclosure.schedule_json()),
        entry <- fields ++ never,
        into: %{},
        do: {{family, entry["field"] || entry["column"]}, entry["reason"]}
  end

  test "explain/2: every scheduled field at its first tier, with the core's reason" do
    reasons = core_reasons()

    for family <- @families, field <- fields(family) do
      assert %{field: ^field, rung: rung, reason: reason} = WorkDisclosure.explain(family, field)
      assert rung == WorkDisclosure.tier_for(family, field)
      assert reason == reasons[{"#{family}", "#{field}"}]
      assert byte_size(reason) > 0, "#{family}.#{field} has no reason"
    end
  end

  test "explain/2: every never-listed column is :never, with the core's reason" do
    reasons = core_reasons()

    for family <- @families, column <- WorkDisclosure.never(family) do
      assert %{field: ^column, rung: :never, reason: reason} =
               WorkDisclosure.explain(family, column)

      assert reason == reasons[{"#{family}", "#{column}"}]
      assert byte_size(reason) > 0, "#{family}.#{column} has no reason"
    end
  end

  test "explain/2: nil for a name the family has on neither list" do
    for family <- @families,
        name <- [:no_such_column, :__meta__, "id", nil, 1] ++ (@families -- [family]),
        not (is_atom(name) and name in fields(family)) do
      assert WorkDisclosure.explain(family, name) == nil, "#{family}.#{inspect(name)}"
    end
  end

  test "withheld/2: the scheduled fields fields_at/2 does not show, in the schedule's order" do
    for family <- @families, tier <- @tier_forms do
      shown = WorkDisclosure.fields_at(family, tier)
      withheld = WorkDisclosure.withheld(family, tier)

      assert withheld ==
               for(
                 f <- fields_in_order(family),
                 f not in shown,
                 do: WorkDisclosure.explain(family, f)
               )

      assert Enum.sort(shown ++ Enum.map(withheld, & &1.field)) == fields_in_order(family)
      refute Enum.any?(withheld, &(&1.rung == :never))
    end
  end

  test "withheld/2: at dark everything, at a viewer with no tier nothing" do
    for family <- @families do
      assert Enum.map(WorkDisclosure.withheld(family, :dark), & &1.field) ==
               fields_in_order(family)

      assert WorkDisclosure.withheld(family, nil) == []
    end
  end

  test "an unknown family raises as fields_at/2 does" do
    for family <- @not_families do
      assert_raise FunctionClauseError, fn -> WorkDisclosure.fields_at(family, :glass) end
      assert_raise FunctionClauseError, fn -> WorkDisclosure.explain(family, :id) end
      assert_raise FunctionClauseError, fn -> WorkDisclosure.withheld(family, :glass) end
    end
  end
end
