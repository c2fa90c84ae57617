defmodule HostApp.Application do
  @moduledoc false
  use Application

  @impl true
  def start(_type, _args) do
    children = [OpenAgents.Repo]
    Supervisor.start_link(children, strategy: :one_for_one, name: HostApp.Supervisor)
  end
end
