defmodule OpenAgentsPolicy.Decisions do
  @moduledoc """
  What a change of the rules changes, and for whom: `diff/3` of two decision
  documents.

  `OpenAgentsPolicy.decision_digest/0` tells two builds apart but not how they
  differ, which a reviewer, a release builder and a CHANGELOG need: moving a field
  from `ledger` to `pulse` is one line in the Rust core, and shows it to every
  anonymous reader. `diff/3` joins two documents (the `priv/decisions.json` a
  package or release carries, the last release's) on their questions and lists
  every answer that differs, classed:

    * `:widens`: some reader or caller gains, whatever anyone else loses;
    * `:narrows`: someone loses, no one gains;
    * `:changes`: neither (a Box state that reads another lifecycle);
    * `:removed`: a question the new document no longer answers;
    * `:unclassed`: a question only the new document asks, unless it widens;
    * `:words`: a change of words in a table that decides nothing.

  A question one document lacks is answered on that side as it answers any word it
  does not know. A document that cannot be read, is past a limit or is incomplete
  is refused (`t:refusal/0`), never read as "no changes". The diff is Rust's, on a
  dirty CPU scheduler; `mix openagents_policy.gate` decides a rollout by it.
  Absent: any decision about a diff (the gate's), reading files, keeping anything.
  """

  @typedoc "Who gains or loses by a change (see the module docs)."
  @type class :: :widens | :narrows | :changes | :removed | :unclassed | :words

  @typedoc """
  One answer that differs: `:table` its path in the document (`"schedule.fields"`,
  ...), `:input` the question in the caller's words (`%{"family" => "attempt",
  "field" => "terminal_commit"}`), `:old` and `:new` the answers as JSON terms
  (`nil` on a side that lacks the word), `:says` the change in one sentence.
  """
  @type change :: %{
          table: String.t(),
          input: %{optional(String.t()) => term()},
          old: term(),
          new: term(),
          class: class(),
          says: String.t()
        }

  @typedoc """
  Why two documents were not compared, on which side (`:old`, `:new`, or `nil` for
  the diff's output), in a sentence: `:not_a_document` (not JSON, not an object, not
  rows as its format writes them), `:unknown_format` (a format this library does not
  read, or none), `:incomplete` (a question its vocabularies imply missing),
  `:too_large` (past a limit the sentence names: 1 MiB a document or the output,
  rows, input words, list items, a word's bytes).
  """
  @type refusal ::
          {:not_a_document | :unknown_format | :incomplete | :too_large, :old | :new | nil,
           String.t()}

  @typedoc "What `diff/3` answers with: the changes, or one of their renderings."
  @type format :: :changes | :markdown | :json

  @doc """
  Compares two decision documents (binaries), answering as `format:` says:
  `:changes` (the default, a list of `t:change/0` in document order), `:markdown`
  (for a pull request or a CHANGELOG: by class, widening first) or `:json`
  (`{"changes": [{"table", "input", "old", "new", "class"}...]}`). The same
  rules give no change:

      iex> live = OpenAgentsPolicy.decisions_json()
      iex> OpenAgentsPolicy.Decisions.diff(live, live)
      {:ok, []}
      iex> OpenAgentsPolicy.Decisions.diff(live, live, format: :json)
      {:ok, ~s({"changes":[]})}

  A field moved down a rung widens. Here the document's first field at
  `ledger` is moved to `pulse` (the core's tests change the rules themselves):

      iex> live = OpenAgentsPolicy.decisions_json()
      iex> moved = String.replace(live, ~s("tier":"ledger",), ~s("tier":"pulse",), global: false)
      iex> {:ok, [change]} = OpenAgentsPolicy.Decisions.diff(live, moved)
      iex> {change.table, change.class, Map.keys(change.input)}
      {"schedule.fields", :widens, ["family", "field"]}
      iex> {change.old["tier"], change.new["tier"], change.says =~ "is now disclosed from `pulse` (was `ledger`)"}
      {"ledger", "pulse", true}

  What is not a decision document is refused, never read as "no changes":

      iex> live = OpenAgentsPolicy.decisions_json()
      iex> OpenAgentsPolicy.Decisions.diff(live, "[]")
      {:error, {:not_a_document, :new, "the new document is not a decision document: a JSON array, not an object"}}
      iex> {:error, {:unknown_format, :old, _why}} =
      ...>   OpenAgentsPolicy.Decisions.diff(String.replace(live, ~s({"format":3,), ~s({"format":4,)), live)
  """
  @spec diff(binary(), binary(), format: format()) ::
          {:ok, [change()] | String.t()} | {:error, refusal()}
  def diff(old, new, opts \\ []) when is_binary(old) and is_binary(new) and is_list(opts) do
    format = Keyword.get(opts, :format, :changes)

    unless format in [:changes, :markdown, :json],
      do: raise(ArgumentError, "format: #{inspect(format)} is not :changes, :markdown or :json")

    OpenAgentsPolicy.Native.decisions_diff(old, new, format)
  end

  @doc """
  The changes that widen, which a rollout should refuse unless each is accepted by
  name (its `:says`). A field moved up to `glass` narrows, down to `pulse` widens:

      iex> live = OpenAgentsPolicy.decisions_json()
      iex> move = &String.replace(live, ~s("tier":"ledger",), ~s("tier":") <> &1 <> ~s(",), global: false)
      iex> {:ok, narrowed} = OpenAgentsPolicy.Decisions.diff(live, move.("glass"))
      iex> {:ok, widened} = OpenAgentsPolicy.Decisions.diff(live, move.("pulse"))
      iex> Enum.map(narrowed ++ widened, & &1.class)
      [:narrows, :widens]
      iex> OpenAgentsPolicy.Decisions.widened(narrowed ++ widened) == widened
      true
  """
  @spec widened([change()]) :: [change()]
  def widened(changes) when is_list(changes), do: Enum.filter(changes, &(&1.class == :widens))

  @doc """
  Whether anything widens.

      iex> OpenAgentsPolicy.Decisions.widens?([])
      false
  """
  @spec widens?([change()]) :: boolean()
  def widens?(changes) when is_list(changes), do: Enum.any?(changes, &(&1.class == :widens))
end
