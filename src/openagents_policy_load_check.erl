%% The check VM's side of OpenAgentsPolicy.LoadCheck: what a fresh VM runs,
%% as `erl -run openagents_policy_load_check library|module Args`, to load a
%% NIF library and say on its standard output whether it loaded. Its
%% caller, OpenAgentsPolicy.LoadCheck, starts that VM, bounds it and reads
%% the verdict: the one line that starts with marker/0.
%%
%% Erlang, and only erts, kernel, stdlib and compiler (and, for module/1,
%% Elixir's Exception and Base): nothing of Mix runs in the check VM.
-module(openagents_policy_load_check).
-moduledoc(false).

-export([library/1, module/1, marker/0, deadline_status/0]).

-define(MARKER, "load_check: ").
%% The check VM's exit status when it halts at its own deadline (timeout(1)'s).
-define(DEADLINE_STATUS, 124).

%% What starts the check VM's verdict line.
-spec marker() -> binary().
marker() -> <<?MARKER>>.

-spec deadline_status() -> pos_integer().
deadline_status() -> ?DEADLINE_STATUS.

%% `library Home Timeout Module Lib [Keep]`: loads the library Lib (its path
%% without `.so`) into a module named Module, made here with a stub for
%% every function the library itself names. The loader refuses a library
%% that names a function its module lacks with ERTS's `Function not found
%% M:F/A`: that stub is added and the load tried again, until it loads or
%% fails for another reason. With Keep, the stub module that loaded is
%% written there as a `.beam`.
-spec library([string()]) -> no_return().
library([Home, Timeout, Module, Lib | Keep]) ->
    start(Home, Timeout),
    report(load_stub(list_to_atom(Module), Lib, Keep, [])).

load_stub(M, Lib, Keep, Fs) ->
    Forms = stub_module(M, Fs, erl_anno:new(1)),
    {ok, M, Bin} = compile:forms(Forms, [binary, return_errors]),
    _ = code:purge(M),
    _ = code:delete(M),
    _ = code:purge(M),
    {module, M} = code:load_binary(M, "load_check", Bin),
    Loaded =
        try
            M:check(Lib)
        catch
            Class:Reason -> {Class, Reason}
        end,
    case Loaded of
        ok when Keep =:= [] ->
            ok;
        ok ->
            [File] = Keep,
            file:write_file(File, Bin);
        {error, {bad_lib, "Function not found " ++ Missing}} = Error ->
            case re:run(Missing, ":([^:]+)/([0-9]+)$", [{capture, all_but_first, list}]) of
                {match, [N, A]} ->
                    F = {list_to_atom(N), list_to_integer(A)},
                    case lists:member(F, Fs) of
                        true -> Error;
                        false -> load_stub(M, Lib, Keep, [F | Fs])
                    end;
                nomatch ->
                    Error
            end;
        Other ->
            Other
    end.

%% The module M: check/1, which loads a library into it, and a stub that
%% raises nif_not_loaded for each function of Fs.
stub_module(M, Fs, L) ->
    Call = fun(F, Args) -> {call, L, {remote, L, {atom, L, erlang}, {atom, L, F}}, Args} end,
    Clause = fun(Args, Body) -> [{clause, L, Args, [], [Body]}] end,
    Check = Clause([{var, L, 'P'}], Call(load_nif, [{var, L, 'P'}, {integer, L, 0}])),
    NotLoaded = Call(nif_error, [{atom, L, nif_not_loaded}]),
    Stub = fun(A) -> Clause([{var, L, '_'} || _ <- lists:seq(1, A)], NotLoaded) end,
    [
        {attribute, L, module, M},
        {attribute, L, export, [{check, 1} | Fs]},
        {function, L, check, 1, Check}
        | [{function, L, N, A, Stub(A)} || {N, A} <- Fs]
    ].

%% `module Home Timeout Module [Function Asked]`: loads Module from the code
%% path, its on_load loading its library as a relup will; then, with
%% Function, calls Module:Function() and answers what it returned, or, when
%% it raises, throws or exits (or is not there), Asked and the banner of
%% the exception. The code server returns only on_load_failure, and reports
%% the on_load's own result from a process of its own (error_logger's
%% warning_msg): a primary filter hands that report here, where it is the
%% verdict (the VM would otherwise halt before it is printed).
-spec module([string()]) -> no_return().
module([Home, Timeout, Module | Ask]) ->
    start(Home, Timeout),
    M = list_to_atom(Module),
    ok = logger:add_primary_filter(load_check_on_load, {fun on_load/2, {M, self()}}),
    Verdict =
        case code:ensure_loaded(M) of
            {module, M} ->
                ask(M, Ask);
            {error, on_load_failure} ->
                receive
                    {on_load, Returned} -> Returned
                after 10000 -> {error, on_load_failure}
                end;
            Other ->
                Other
        end,
    report(Verdict).

on_load(#{msg := {report, #{args := [M, Returned, _]}}}, {M, To}) ->
    To ! {on_load, Returned},
    stop;
on_load(#{msg := {Format, [M, Returned, _]}}, {M, To}) when is_list(Format) ->
    To ! {on_load, Returned},
    stop;
on_load(_Event, _Extra) ->
    ignore.

%% The one call after the load, caught whole: a missing function is an
%% undef like any other error.
ask(_M, []) ->
    ok;
ask(M, [Function, Asked]) ->
    F = list_to_atom(Function),
    try M:F() of
        Answer -> {answer, Answer}
    catch
        Class:Reason:Stack ->
            {asked, Asked, 'Elixir.Exception':format_banner(Class, Reason, Stack)}
    end.

%% The check VM's first acts, before the load: removing its home, which
%% served while it booted (a `.erlang` there is read by the boot, before any
%% `-run`), so no directory is left whatever ends the VM after that; then
%% watch/1.
start(Home, Timeout) ->
    _ = file:del_dir_r(Home),
    _ = spawn(fun() -> watch(list_to_integer(Timeout)) end),
    ok.

%% A process that halts the VM when its standard input, the port's pipe,
%% reaches end of file (the port closed, by its owner or with it, or the
%% calling VM gone) or goes away, and at the deadline counted from this
%% VM's start: so never before the caller's own, which is the one that
%% speaks while the caller is alive and reading. No flush at halt: a caller
%% stuck with its pipe full must not hold it.
-spec watch(pos_integer()) -> no_return().
watch(Timeout) ->
    process_flag(trap_exit, true),
    Stdin = open_port({fd, 0, 1}, [in, eof, binary]),
    _ = erlang:send_after(Timeout, self(), deadline),
    watch_loop(Stdin).

watch_loop(Stdin) ->
    receive
        {Stdin, {data, _}} -> watch_loop(Stdin);
        {Stdin, eof} -> stop(1);
        {'EXIT', Stdin, _} -> stop(1);
        deadline -> stop(?DEADLINE_STATUS)
    end.

-spec stop(non_neg_integer()) -> no_return().
stop(Status) -> erlang:halt(Status, [{flush, false}]).

%% The VM's last words: one marked line saying ok or why not.
-spec report(term()) -> no_return().
report(Verdict) ->
    ok = say(Verdict),
    erlang:halt(0).

say(ok) ->
    io:put_chars(?MARKER "ok\n");
say({answer, A}) ->
    io:format(?MARKER "answer ~s~n", ['Elixir.Base':encode16(term_to_binary(A))]);
say({asked, Asked, Banner}) ->
    io:format(?MARKER "~ts: ~ts~n", [Asked, Banner]);
say({error, {Reason, Text}}) when is_list(Text) ->
    io:format(?MARKER "~p: ~ts~n", [Reason, Text]);
say(Why) ->
    io:format(?MARKER "~p~n", [Why]).
