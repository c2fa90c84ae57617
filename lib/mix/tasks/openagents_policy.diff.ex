defmodule Mix.Tasks.OpenagentsPolicy.Diff do
  @shortdoc "Compares two decision documents: what changes, for whom"
  @moduledoc """
  Compares two decision documents (files) and prints every answer that
  differs, classed `widens`, `narrows` or `changes`
  (`OpenAgentsPolicy.Decisions.diff/3`).

      mix openagents_policy.diff OLD NEW                    # Markdown
      mix openagents_policy.diff OLD NEW --format json      # {"changes": [...]}

  A decision document is the JSON of `OpenAgentsPolicy.decisions_json/0`:
  the package carries its own as `priv/decisions.json` (in a host,
  `deps/openagents_policy/priv/decisions.json`), this repository keeps the last
  release's as `last-release/decisions.json`, and a running node serves its
  live one. So, for what an upgrade to a candidate would change:

      mix openagents_policy.diff deps/openagents_policy/priv/decisions.json ../candidate/decisions.json

  Markdown is for a pull request or a CHANGELOG entry: grouped by class,
  widening first, each change one sentence saying who gains or loses what
  ("strangers and anonymous readers (`pulse`) now see
  `attempt.terminal_commit`"). Identical documents print "no decision
  changes" (JSON: `{"changes":[]}`).

  A file that is not a decision document, or one of a format this library
  does not read, is refused: the task fails, naming which file and why,
  rather than print "no decision changes". The exit status does not say
  whether anything widens; a gate reads `--format json` (or calls
  `OpenAgentsPolicy.Decisions.widened/1`).
  """
  use Mix.Task

  # The NIF is loaded with OpenAgentsPolicy.Native, which compiles with the
  # project; nothing is started.
  @requirements ["compile"]

  @switches [format: :string]
  @formats %{"markdown" => :markdown, "json" => :json}

  @impl true
  def run(args) do
    {opts, files} = OptionParser.parse!(args, strict: @switches)

    format =
      Map.get(@formats, opts[:format] || "markdown") ||
        Mix.raise("--format must be markdown or json, not #{inspect(opts[:format])}")

    [old, new] =
      case files do
        [_old, _new] = both -> both
        _ -> Mix.raise("usage: mix openagents_policy.diff OLD NEW [--format markdown|json]")
      end

    case OpenAgentsPolicy.Decisions.diff(read!(old), read!(new), format: format) do
      {:ok, rendered} -> Mix.shell().info(String.trim_trailing(rendered))
      {:error, {_kind, side, why}} -> Mix.raise("#{if side == :old, do: old, else: new}: #{why}")
    end
  end

  defp read!(path) do
    case File.read(path) do
      {:ok, document} -> document
      {:error, reason} -> Mix.raise("#{path}: #{:file.format_error(reason)}")
    end
  end
end
