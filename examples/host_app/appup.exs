# The host's appup, in Elixir form: castle's :appup compiler evaluates it and
# writes ebin/host_app.appup. It says what the host's own modules need when
# the release moves between this version and another: nothing, because in
# this example a deploy changes the library (which ships its own appup) and
# leaves the host's code as it is (scripts/hot_upgrade.sh checks that every
# host module is byte for byte the same in both releases). A host whose
# modules change lists them here ({:load_module, Mod}, {:update, Mod, ...}).
{to_charlist(Mix.Project.config()[:version]), [{".*", []}], [{".*", []}]}
