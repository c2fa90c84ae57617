defmodule OpenAgentsPolicy.Test.Upstream do
  @moduledoc false
  # The host application's facts, transcribed once from the project's
  # specification of the host (upstream.md: "The host app: facts the library
  # must fit") into the "host" section of seed_rules.json, the core crate's
  # test fixture, which the crate's tests read too. The test modules derive their inputs from these lists
  # rather than from the library, so a word the host adds (a Box state, a
  # column) fails the suite the day it lands instead of silently reading
  # `failed` or slipping past the disclosure schedule.
  #
  # Every list is in the host's declaration order.

  @external_resource json =
                       Path.expand(
                         "../../../native/openagents_policy/tests/oracle/seed_rules.json",
                         __DIR__
                       )
  @host (json |> File.read!() |> Jason.decode!())["host"]

  # Atoms where the host's own code holds atoms (fields, columns, tiers).
  atoms = fn words -> Enum.map(words, &String.to_atom/1) end
  atom_keys = fn map -> Map.new(map, fn {key, value} -> {String.to_atom(key), value} end) end

  @machine_fields atoms.(@host["machine_fields"])
  @capacity_catalog Map.new(@host["capacity_catalog"], fn [class | posture] ->
                      {class, List.to_tuple(posture)}
                    end)
  @tables atom_keys.(@host["tables"])
  @columns Map.new(@host["columns"], fn {family, cs} -> {String.to_atom(family), atoms.(cs)} end)
  @attempt_associations atoms.(@host["attempt_associations"])
  @artifact_link_fields atoms.(@host["artifact_link_fields"])
  @ranks atom_keys.(@host["ranks"])
  @capability_minimums Map.new(@host["capability_minimums"], fn [access, tier] ->
                         {String.to_atom(access), String.to_atom(tier)}
                       end)

  # ── substrate vocabularies ─────────────────────────────────────────────

  @doc "`Box.ConversationBox.states/0`."
  def box_states, do: @host["box_states"]

  @doc "The synthetic state of a fan-out item that admission has not let through."
  def fanout_queued, do: @host["fanout_queued"]

  @doc "`Box.Run.states/0`."
  def run_states, do: @host["run_states"]

  @doc "`Box.Run.terminal_states/0`."
  def run_terminal_states, do: @host["run_terminal_states"]

  @doc "`Work.Job.statuses/0`."
  def job_statuses, do: @host["job_statuses"]

  @doc "`Work.Job.terminal_statuses/0`."
  def job_terminal_statuses, do: @host["job_terminal_statuses"]

  @doc "The status a job carries while its cancel is in flight: not in `statuses/0`."
  def job_cancelling_status, do: @host["job_cancelling_status"]

  @doc "`Machines.Machine` status (database check)."
  def machine_statuses, do: @host["machine_statuses"]

  @doc "`Forge.Assignment.states/0`."
  def assignment_states, do: @host["assignment_states"]

  @doc "`Machines.Machine` fields."
  def machine_fields, do: @machine_fields

  # ── capacity catalog ───────────────────────────────────────────────────

  @doc "`Capacity.Catalog`: class => {isolation, egress, data location}."
  def capacity_catalog, do: @capacity_catalog

  # ── the four disclosure families' tables (`__schema__(:fields)` order) ──

  @doc "The table behind each disclosure family."
  def tables, do: @tables

  @doc "The columns of the table behind `family`."
  def columns(family), do: Map.fetch!(@columns, family)

  @doc """
  The association keys of the attempt's Ecto schema: `Map.from_struct/1` of
  an `%Assignment{}` carries eight of them beside its 25 columns.
  """
  def attempt_associations, do: @attempt_associations

  # ── ArtifactLink ───────────────────────────────────────────────────────

  @doc "`ArtifactLink` (`artifact_links`) fields."
  def artifact_link_fields, do: @artifact_link_fields

  @doc "The words an `ArtifactLink`'s `tier` column holds: the tiers' words."
  def link_tiers, do: @host["tiers"]

  @doc "`ArtifactLink` artifact types."
  def artifact_types, do: @host["artifact_types"]

  # ── OpenAgents.Transparency ────────────────────────────────────────────

  @doc "Tier ranks."
  def ranks, do: @ranks

  @doc "The minimum tier of each capability `allows?/3` knows."
  def capability_minimums, do: @capability_minimums
end
