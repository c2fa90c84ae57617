defmodule OpenAgentsPolicy.Scheduler do
  @moduledoc """
  Which scheduler a NIF call runs on: a normal one, or, for an argument
  holding a large binary, a dirty CPU one.

  Why the Elixir side decides: a NIF reads a binary through
  `enif_inspect_binary`, which copies a binary that starts part-way through a
  byte (a sub-binary taken at a bit offset) before the NIF can learn its
  size, so a large one holds a normal scheduler far past its slice, inside
  the VM, before any of the library's own size guards can run (the guide
  "Performance", "Worst cases", has the figure). `byte_size/1` here costs
  the same for every binary, so a call whose arguments hold a binary larger
  than `dirty_read_bytes/0` goes dirty: it is sent to its `_dirty` NIF (the same
  function, registered to run on a dirty CPU scheduler) without being read
  at all.

  What `dirty?/1` reads: a binary argument, and the values a NIF reads as a binary
  out of a map argument (`:tier`, `:account_id`, `:id`; a viewer, a link, a
  user). Deliberately not: any other value of a map, which no NIF reads as a
  binary (a link's `:revoked_at` is only told from `nil`; a projection's
  source values are handed back as they are, never inspected).
  """

  @dirty_read_bytes 65_536

  @doc """
  The largest binary (in bytes) an argument may hold and still be read on a
  normal scheduler: 64 KiB, which even at a bit offset is copied well inside
  the slice a NIF may hold one.
  """
  @spec dirty_read_bytes() :: pos_integer()
  def dirty_read_bytes, do: @dirty_read_bytes

  @doc """
  Whether `term` holds a binary too large for a normal scheduler: itself, or
  one of the values a NIF reads out of a map.

      iex> OpenAgentsPolicy.Scheduler.dirty?(:binary.copy("x", 65_537))
      true
      iex> OpenAgentsPolicy.Scheduler.dirty?(%{account_id: "acct-1", tier: :ledger})
      false
  """
  @spec dirty?(term()) :: boolean()
  def dirty?(term) when is_binary(term), do: byte_size(term) > @dirty_read_bytes

  for key <- [:tier, :account_id, :id] do
    def dirty?(%{unquote(key) => value})
        when is_binary(value) and byte_size(value) > @dirty_read_bytes,
        do: true
  end

  def dirty?(_term), do: false
end
