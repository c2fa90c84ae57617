%% nif_answers.erl: loads a NIF library through the stub module the load
%% check leaves (OpenAgentsPolicy.LoadCheck.library/3, keep_stub:) and
%% prints what every NIF answers for a fixed set of arguments, one line each,
%% so two VMs (x86_64 and arm64) can be compared line by line. Needs only
%% erts, kernel and stdlib: no Elixir.
%%
%%   erl -noshell -pa DIR_WITH_STUB_BEAM -pa DIR_WITH_THIS_BEAM \
%%       -eval 'nif_answers:main("/path/to/lib-without-.so")'
-module(nif_answers).
-export([main/1]).

-define(M, 'Elixir.OpenAgentsPolicy.Native').

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
