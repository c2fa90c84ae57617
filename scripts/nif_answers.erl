%% nif_answers.erl: what every NIF of a library answers for a fixed set of
%% arguments, one line each, so two VMs (x86_64 and arm64) can be compared
%% line by line. Needs only erts, kernel and stdlib (and compiler, where the
%% stub is made): no Elixir.
%%
%%   erl -noshell -pa DIR -eval 'nif_answers:stub("/path/to/lib-without-.so", "DIR", "DIGEST")'
%%   erl -noshell -pa DIR -eval 'nif_answers:main("/path/to/lib-without-.so")'
%%
%% stub/3 makes the module the library loads into, with a stub for every
%% function the library itself names: the loader refuses a library that
%% names a function its module lacks (`Function not found M:F/A`), so that
%% stub is added and the load tried again, until it loads; the stub's .beam
%% is written into DIR. Its load data is DIGEST, the package's decision
%% digest (the SHA-256 of priv/decisions.json, hex), which the library
%% refuses to load without. main/1 loads the library into it and asks.
-module(nif_answers).
-export([stub/3, main/1]).

-define(M, 'Elixir.OpenAgentsPolicy.Native').

stub(Library, Dir, Digest) ->
    Bin = load_stub(Library, Digest, []),
    ok = file:write_file(filename:join(Dir, atom_to_list(?M) ++ ".beam"), Bin),
    halt(0).

load_stub(Library, Digest, Fs) ->
    {ok, ?M, Bin} = compile:forms(stub_module(Fs, Digest, erl_anno:new(1)), [binary, return_errors]),
    _ = code:purge(?M),
    _ = code:delete(?M),
    _ = code:purge(?M),
    {module, ?M} = code:load_binary(?M, "nif_answers", Bin),
    case ?M:check(Library) of
        ok ->
            Bin;
        {error, {bad_lib, "Function not found " ++ Missing}} = Error ->
            {match, [N, A]} = re:run(Missing, ":([^:]+)/([0-9]+)$", [{capture, all_but_first, list}]),
            F = {list_to_atom(N), list_to_integer(A)},
            lists:member(F, Fs) andalso erlang:error(Error),
            load_stub(Library, Digest, [F | Fs]);
        Error ->
            erlang:error(Error)
    end.

%% check/1, which loads a library into the module with Digest as its load
%% data, and a stub that raises nif_not_loaded for each function of Fs.
stub_module(Fs, Digest, L) ->
    Call = fun(F, Args) -> {call, L, {remote, L, {atom, L, erlang}, {atom, L, F}}, Args} end,
    Clause = fun(Args, Body) -> [{clause, L, Args, [], [Body]}] end,
    Data = {bin, L, [{bin_element, L, {string, L, Digest}, default, default}]},
    Check = Clause([{var, L, 'P'}], Call(load_nif, [{var, L, 'P'}, Data])),
    NotLoaded = Call(nif_error, [{atom, L, nif_not_loaded}]),
    Stub = fun(A) -> Clause([{var, L, '_'} || _ <- lists:seq(1, A)], NotLoaded) end,
    [
        {attribute, L, module, ?M},
        {attribute, L, export, [{check, 1} | Fs]},
        {function, L, check, 1, Check}
        | [{function, L, N, A, Stub(A)} || {N, A} <- Fs]
    ].

main(Library) ->
    ok = ?M:check(Library),
    Words = [<<"box">>, <<"idle">>, <<"running">>, <<"openagents_hosted">>, <<"public">>,
             <<"summary">>, <<"nonsense">>, <<>>, 42, nil],
    Calls = [{F, A} || {F, A} <- lists:sort(?M:module_info(exports)),
                       F =/= check, F =/= module_info],
    lists:foreach(
      fun({F, A}) ->
          lists:foreach(
            fun(Args) ->
                Result = try apply(?M, F, Args) catch C:R -> {C, R} end,
                io:format("~p~p = ~0p~n", [F, Args, norm(Result)])
            end, args(A, Words))
      end, Calls),
    io:format("answers: ~p functions~n", [length(Calls)]),
    halt(0).

%% Maps as sorted lists: OTP 26 and later print a map's keys in another
%% order than OTP 25 does, and the two VMs compared may differ so.
norm(M) when is_map(M) -> {map, lists:sort([{norm(K), norm(V)} || {K, V} <- maps:to_list(M)])};
norm(L) when is_list(L) -> [norm(X) || X <- L];
norm(T) when is_tuple(T) -> list_to_tuple(norm(tuple_to_list(T)));
norm(X) -> X.

args(0, _) -> [[]];
args(1, Words) -> [[W] || W <- Words];
args(2, Words) -> [[W, V] || W <- lists:sublist(Words, 4), V <- lists:sublist(Words, 4)];
args(N, Words) -> [lists:duplicate(N, W) || W <- lists:sublist(Words, 3)].
