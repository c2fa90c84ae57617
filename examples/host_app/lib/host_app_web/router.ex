defmodule HostAppWeb.Router do
  @moduledoc "The JSON API: see examples/host_app/README.md for each route."
  use HostAppWeb, :router

  pipeline :api do
    plug :accepts, ["json"]
    plug HostAppWeb.Auth
  end

  scope "/api", HostAppWeb do
    pipe_through :api

    get "/targets", TargetController, :index
    get "/delegations/:id", DelegationController, :show
    get "/repositories/:slug/attempts", AttemptController, :index
    post "/repositories/:slug/attempts", AttemptController, :create
    get "/attempts/:id", AttemptController, :show
    post "/links/:id/revoke", LinkController, :revoke
  end
end
