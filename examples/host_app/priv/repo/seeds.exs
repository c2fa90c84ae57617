# mix run priv/repo/seeds.exs (part of `mix ecto.setup`): the world
# HostApp.Seeds describes; a no-op when it is already there.
case HostApp.Seeds.run() do
  :already_seeded -> IO.puts("seeds: #{HostApp.Seeds.slug()} already seeded")
  world -> IO.puts("seeds: #{world.repository.slug}, #{length(world.attempts)} attempts")
end
