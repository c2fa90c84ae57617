defmodule OpenAgentsPolicy.Native.BaseURL do
  @moduledoc false
  # OPENAGENTS_POLICY_NIF_BASE_URL, where rustler_precompiled downloads the
  # artifacts from (guides/releases.md), taken as users write a mirror's
  # address: http or https, a host and port, with or without a path prefix
  # (with or without its trailing slash), with `user:password@` before the
  # host when the mirror needs them. Refused, in words naming the variable:
  # anything else (a query or a fragment, another scheme, no host, not a
  # URL, empty). rustler_precompiled 0.8 joins a base URL's path with the
  # artifact's name itself, and a URL without a path makes that join raise
  # in its words; so the variable, when set, is handed to it as this
  # module's `artifact_url/1`, which it calls with each artifact's name. Its
  # credentials go as an `authorization` header, never in a URL it prints,
  # nor in its metadata file (which keeps `{module, function}`), nor in a
  # refusal.

  @variable "OPENAGENTS_POLICY_NIF_BASE_URL"
  @form "http(s)://host[:port][/path], with user:password@ before the host " <>
          "if the mirror needs them, and no query or fragment"

  @typedoc "A base URL read: the artifacts' directory, without credentials, and the request headers."
  @type t :: {String.t(), [{String.t(), String.t()}]}

  @doc """
  The `base_url:` of `use RustlerPrecompiled`: `default` when the variable
  is unset (`nil`); else `{#{inspect(__MODULE__)}, :artifact_url}`, once the
  value has been read. Raises `ArgumentError`, in words naming the variable,
  when it cannot be.
  """
  @spec option(String.t() | nil, String.t()) :: String.t() | {module(), :artifact_url}
  def option(nil, default), do: default

  def option(value, _default) do
    case parse(value) do
      {:ok, _} -> {__MODULE__, :artifact_url}
      {:error, why} -> raise ArgumentError, why
    end
  end

  @doc """
  The URL of the artifact `file_name` under the variable's base URL, and the
  headers of its request (rustler_precompiled's `{URL, headers}`).
  """
  @spec artifact_url(String.t()) :: t()
  def artifact_url(file_name) do
    case parse(System.get_env(@variable) || "") do
      {:ok, {base, headers}} -> {base <> "/" <> file_name, headers}
      {:error, why} -> raise ArgumentError, why
    end
  end

  @doc """
  Reads a base URL as the variable holds it: `{:ok, {base, headers}}`, the
  base without credentials nor trailing slash, or `{:error, why}`, a
  sentence naming the variable (its value shown with any credentials
  replaced).
  """
  @spec parse(String.t()) :: {:ok, t()} | {:error, String.t()}
  def parse(value) when is_binary(value) do
    with {:ok, uri} <- read(value),
         :ok <- usable(uri) do
      path = String.trim_trailing(uri.path || "", "/")
      base = URI.to_string(%URI{uri | userinfo: nil, path: path})
      {:ok, {base, authorization(uri.userinfo)}}
    else
      {:error, why} -> {:error, "#{@variable}=#{redact(value)} #{why}: write it as #{@form}"}
    end
  end

  defp read(""), do: {:error, "is empty (unset it for the GitHub release)"}

  defp read(value) do
    case URI.new(value) do
      {:ok, uri} -> {:ok, uri}
      {:error, _part} -> {:error, "is not a URL"}
    end
  end

  defp usable(%URI{scheme: scheme}) when scheme not in ["http", "https"],
    do: {:error, "does not start with http:// or https://"}

  defp usable(%URI{host: host}) when host in [nil, ""], do: {:error, "names no host"}
  defp usable(%URI{query: query}) when query != nil, do: {:error, "has a query"}
  defp usable(%URI{fragment: fragment}) when fragment != nil, do: {:error, "has a fragment"}
  defp usable(%URI{}), do: :ok

  # `user:password`, percent-decoded, as HTTP Basic authentication; a user
  # alone has an empty password.
  defp authorization(nil), do: []

  defp authorization(userinfo) do
    credentials =
      case String.split(userinfo, ":", parts: 2) do
        [user, password] -> URI.decode(user) <> ":" <> URI.decode(password)
        [user] -> URI.decode(user) <> ":"
      end

    [{"authorization", "Basic " <> Base.encode64(credentials)}]
  end

  # Everything between the scheme's `//` (or the start) and the last `@`
  # replaced: the credentials of a value that may not even parse.
  defp redact(value),
    do: Regex.replace(~r/^([a-z][a-z0-9+.-]*:\/\/)?.*@/is, value, "\\1[credentials]@")
end
