defmodule OpenAgentsPolicy.Decisions do
  @moduledoc """
  What a change of the rules changes, and for whom: `diff/3` of two decision
  documents.

  `OpenAgentsPolicy.fingerprint/0` tells two builds apart by one digest of
  their decision document (`OpenAgentsPolicy.decisions_json/0`: every
  answer over a finite domain). It cannot say how they differ, and that is
  what a reviewer, an operator starting a rolling upgrade and a CHANGELOG
  need: moving a field from `ledger` to `pulse` is a two-line change in the
  Rust core, and shows it to every anonymous reader.

  `diff/3` compares two documents (the live one of a node, the
  `priv/decisions.json` a package carries, the last release's) and lists every
  answer that differs, each with its table, its input in the caller's words,
  the old and the new answer, and a class:

    * `:widens`: some reader or caller gains: a field exposed at a lower
      tier, a column leaving a never list, a capability granted where it was
      not, a higher effective tier. A change in which someone gains and
      someone else loses widens: a gain is never hidden behind a loss.
    * `:narrows`: someone loses, no one gains.
    * `:changes`: neither, such as a Box state that reads another lifecycle.
      What follows from it is classed in its own table (the capabilities a
      caller gets for that Box state: `capabilities.box_states`).

  Documents are compared word by word, so documents of two library versions
  compare as long as their vocabularies do; a word on one side only is itself
  a change. A document that cannot be read is refused, typed, and never read
  as "no changes" (see `t:refusal/0`).

  The diff is the Rust core's (`openagents_policy::diff`, the same for a Rust
  service); the NIF runs it on a dirty CPU scheduler (about 2 ms for two
  whole documents that agree, 5 to 8 ms when 3,100 answers differ: `make
  bench-diff`), making only the answer `format:` asks for. `mix
  openagents_policy.diff OLD NEW` is this function on two files. The guide
  "Changing a rule" walks the maintainer's loop.

  Deliberately absent: any decision about a diff. Whether a widening may be
  rolled out is the caller's to decide (`widened/1` names what it would
  accept); this module reads no configuration, reads no file and
  keeps nothing.
  """

  @typedoc "Who gains or loses by a change (see the module docs)."
  @type class :: :widens | :narrows | :changes

  @typedoc """
  One answer that differs: `:table` is its path in the document
  (`"schedule.fields_at"`, `"ladder.effective"`, ...); `:input` the
  question in the caller's words (`%{"family" => "attempt", "field" =>
  "terminal_commit"}`); `:old` and `:new` the answers as JSON terms (`nil`
  when that side has no answer: a word it lacks); `:says` the change in one
  sentence.
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
  Why two documents were not compared: `:not_a_document` (not JSON, not an
  object, or not the tables its format has) or `:unknown_format` (a
  decision document of a format this library does not read, or of none),
  which of the two (`:old` or `:new`), and a sentence saying so.
  """
  @type refusal :: {:not_a_document | :unknown_format, :old | :new, String.t()}

  @typedoc "What `diff/3` answers with: the changes, or one of their renderings."
  @type format :: :changes | :markdown | :json

  @doc """
  Compares two decision documents (binaries).

  `format:` says what to answer with: `:changes` (the default, a list of
  `t:change/0` in document order), `:markdown` (for a pull request or a
  CHANGELOG: grouped by class, widening first) or `:json`
  (`{"changes": [{"table", "input", "old", "new", "class"}...]}`).

  The same rules give no change:

      iex> live = OpenAgentsPolicy.decisions_json()
      iex> OpenAgentsPolicy.Decisions.diff(live, live)
      {:ok, []}
      iex> OpenAgentsPolicy.Decisions.diff(live, live, format: :json)
      {:ok, ~s({"changes":[]})}

  Moving an attempt's `terminal_commit` from `ledger` down to `pulse` (here by
  editing the document; the core's tests change the rule itself) widens:

      iex> live = OpenAgentsPolicy.decisions_json()
      iex> moved = String.replace(live, ~s("terminal_commit","tier":"ledger"), ~s("terminal_commit","tier":"pulse"))
      iex> {:ok, [change]} = OpenAgentsPolicy.Decisions.diff(live, moved)
      iex> change.class
      :widens
      iex> change.input
      %{"family" => "attempt", "field" => "terminal_commit"}
      iex> {change.old, change.new}
      {%{"column" => "terminal_commit", "field" => "terminal_commit", "tier" => "ledger"},
       %{"column" => "terminal_commit", "field" => "terminal_commit", "tier" => "pulse"}}
      iex> change.says
      "`attempt.terminal_commit` is now disclosed from `pulse` (was `ledger`)"

  What is not a decision document is refused, never read as "no changes":

      iex> live = OpenAgentsPolicy.decisions_json()
      iex> OpenAgentsPolicy.Decisions.diff(live, "[]")
      {:error, {:not_a_document, :new, "the new document is not a decision document: a JSON array, not an object"}}
      iex> {:error, {:unknown_format, :old, _why}} =
      ...>   OpenAgentsPolicy.Decisions.diff(String.replace(live, ~s({"format":1,), ~s({"format":2,)), live)
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
  The changes that widen: what a rollout should refuse unless someone
  accepts each one by name (its `:says`).

      iex> live = OpenAgentsPolicy.decisions_json()
      iex> up = String.replace(live, ~s("branch","tier":"ledger"), ~s("branch","tier":"glass"))
      iex> down = String.replace(up, ~s("terminal_commit","tier":"ledger"), ~s("terminal_commit","tier":"pulse"))
      iex> {:ok, changes} = OpenAgentsPolicy.Decisions.diff(live, down)
      iex> Enum.map(changes, & &1.class)
      [:narrows, :widens]
      iex> for change <- OpenAgentsPolicy.Decisions.widened(changes), do: change.says
      ["`attempt.terminal_commit` is now disclosed from `pulse` (was `ledger`)"]
  """
  @spec widened([change()]) :: [change()]
  def widened(changes) when is_list(changes), do: Enum.filter(changes, &(&1.class == :widens))

  @doc """
  Whether anything widens.

      iex> live = OpenAgentsPolicy.decisions_json()
      iex> {:ok, changes} = OpenAgentsPolicy.Decisions.diff(live, live)
      iex> OpenAgentsPolicy.Decisions.widens?(changes)
      false
  """
  @spec widens?([change()]) :: boolean()
  def widens?(changes) when is_list(changes), do: Enum.any?(changes, &(&1.class == :widens))
end
