defmodule OpenAgentsPolicy.Native.BaseURL do
  @moduledoc false
  # OPENAGENTS_POLICY_NIF_BASE_URL, read as users write a mirror's address and refused
  # otherwise, naming the variable and showing none of its value (guides/releases.md,
  # "Variables"). rustler_precompiled 0.8 joins a base URL's path with an artifact's
  # name itself, raising on a URL without a path, so it is handed `artifact_url/1`.

  @variable "OPENAGENTS_POLICY_NIF_BASE_URL"
  @form "http(s)://host[:port][/path], with no credentials, query or fragment"
  @credentials "has credentials, which rustler_precompiled would send on to any host " <>
                 "the mirror redirects to"
  @instead "for a mirror that needs credentials, fetch the artifacts with a tool that " <>
             "keeps them to the mirror (such as `curl --fail --netrc`) into the directory " <>
             "RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH names, and leave #{@variable} unset " <>
             "(guides/releases.md, \"Variables\")"

  @doc """
  The `base_url:` of `use RustlerPrecompiled`: `default` when the variable
  is unset (`nil`); else `{#{inspect(__MODULE__)}, :artifact_url}`, once the
  value has been read. Raises `ArgumentError`, in words naming the variable,
  when it cannot be.
  """
  @spec option(String.t() | nil, String.t()) :: String.t() | {module(), :artifact_url}
  def option(nil, default), do: default

  def option(value, _default) do
    _base = parse!(value)
    {__MODULE__, :artifact_url}
  end

  @doc "The artifact `name`'s URL under the variable's base URL, no headers: `{URL, []}`."
  @spec artifact_url(String.t()) :: {String.t(), []}
  def artifact_url(name), do: {parse!(System.get_env(@variable) || "") <> "/" <> name, []}

  defp parse!(value) do
    case parse(value) do
      {:ok, base} -> base
      {:error, why} -> raise ArgumentError, why
    end
  end

  @doc """
  Reads a base URL as the variable holds it: `{:ok, base}`, the base
  without its trailing slash, or `{:error, why}`, a sentence naming the
  variable and showing none of its value.
  """
  @spec parse(String.t()) :: {:ok, String.t()} | {:error, String.t()}
  def parse(""), do: refusal("is empty (unset it for the GitHub release)")

  def parse(value) when is_binary(value) do
    case URI.new(value) do
      {:ok, uri} -> usable(uri)
      {:error, _part} -> refusal("is not a URL")
    end
  end

  defp usable(%URI{} = uri) do
    cond do
      uri.scheme not in ["http", "https"] -> refusal("does not start with http:// or https://")
      uri.host in [nil, ""] -> refusal("names no host")
      uri.userinfo != nil -> refusal(@credentials, "; " <> @instead)
      uri.query != nil -> refusal("has a query")
      uri.fragment != nil -> refusal("has a fragment")
      true -> {:ok, URI.to_string(%URI{uri | path: String.trim_trailing(uri.path || "", "/")})}
    end
  end

  defp refusal(why, instead \\ ""),
    do: {:error, "#{@variable} (its value not shown) #{why}: write it as #{@form}#{instead}"}
end
