# The oracle's modules read seed_rules.json at compile time with Jason, a
# :dev/:test dependency of the library. A script that loads them under
# another MIX_ENV (`make fuzz` runs under prod, `make bench` under bench)
# requires this file first: it compiles Jason in memory from the dependency's
# source (the offline mirror's, or deps/jason). Under dev and test Jason is
# already loaded and this does nothing.
unless Code.ensure_loaded?(Jason) do
  dep = Enum.find(Mix.Project.config()[:deps], &(elem(&1, 0) == :jason))
  opts = elem(dep, tuple_size(dep) - 1)
  dir = (is_list(opts) && opts[:path]) || Path.join(Mix.Project.deps_path(), "jason")

  {:ok, _modules, _warnings} =
    Kernel.ParallelCompiler.compile(Path.wildcard(Path.join(dir, "lib/**/*.ex")))
end
