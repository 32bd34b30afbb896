"""``tracerag serve``: the registry's programs over HTTP (and as MCP tools), with the service's limits."""

from __future__ import annotations

from .flags import add_agent_flags, add_experience_flags, add_model_flags, positive_float, positive_int


def add_serve_command(sub, programs: tuple[str, ...]) -> None:
    """Add ``serve`` to the top-level subparsers; ``programs``: the registry's names."""
    serve = sub.add_parser("serve", help="serve programs over HTTP (JSON endpoints; all five on their bundled "
                           "defaults unless --program is given)")
    serve.add_argument("--program", action="append", default=[], metavar="NAME[=ARTIFACT]",
                       help=f"serve this program ({', '.join(programs)}), from a compiled artifact when given; "
                            "repeatable (default: all five on their bundled defaults)")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1); any other than "
                       "loopback needs TRACERAG_SERVE_TOKEN set, or --insecure-no-token")
    serve.add_argument("--port", type=int, default=8700, help="port (default 8700)")
    serve.add_argument("--insecure-no-token", action="store_true", help="serve a non-loopback --host without a "
                       "token: anyone who reaches the port may call every program")
    serve.add_argument("--allowed-host", action="append", default=[], metavar="NAME[:PORT]",
                       help="a name clients reach the service by (its Host header; a browser page's Origin), besides "
                            "localhost, 127.0.0.1, [::1] and --host; repeatable, e.g. the reverse proxy's name")
    serve.add_argument("--dataset", dest="homes", help="commands: home directory or bundled name (default: the "
                       "artifact's, else smarthome)")
    serve.add_argument("--arbitration", action="store_true", help="commands: let the LM settle ambiguous bulk "
                       "commands")
    serve.add_argument("--max-body", type=positive_int, default=1 << 20, metavar="BYTES",
                       help="largest request body accepted (default 1 MiB); a larger one gets 413")
    serve.add_argument("--concurrency", type=positive_int, default=8, metavar="N",
                       help="program calls running at once (default 8); further requests wait their turn")
    serve.add_argument("--calls", choices=("thread", "async"), default="thread",
                       help="run each call as program(...) in a worker thread (default), or await program.acall(...)")
    serve.add_argument("--header-timeout", type=positive_float, default=10.0, metavar="SECONDS",
                       help="a request line and headers not complete this long after the connection opens (or the "
                            "previous answer) get 408 and the connection is closed (default 10)")
    serve.add_argument("--body-timeout", type=positive_float, default=30.0, metavar="SECONDS",
                       help="a body not complete this long after its headers gets 408 and the connection is closed "
                            "(default 30)")
    serve.add_argument("--keep-alive", type=positive_float, default=5.0, metavar="SECONDS",
                       help="an idle keep-alive connection is closed after this long (default 5)")
    serve.add_argument("--max-pending", type=positive_int, default=256, metavar="N",
                       help="program calls running or waiting for a --concurrency slot; one beyond it gets 503 at "
                            "once (default 256)")
    serve.add_argument("--trace", choices=("otel", "mlflow"), help="trace each request with the program's spans: "
                       "otel (OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT; extra tracerag[otel]) or mlflow "
                       "(mlflow.dspy.autolog() to MLFLOW_TRACKING_URI; extra tracerag[mlflow])")
    serve.add_argument("--metrics", action="store_true", help="offer GET /metrics (Prometheus text: requests, "
                       "latency, LM fallbacks, in flight), behind the token like the programs")
    add_experience_flags(serve)
    add_agent_flags(serve, exports=False)
    add_model_flags(serve)


def cmd_serve(args) -> int:
    import sys

    from ..registry import PROGRAMS
    from ..serving.binds import needs_token
    from ..serving.startup_log import StartupLog
    from .configuring import configure, load_embedder_early, options_for

    with StartupLog(verbose=args.verbose) as log:  # what loading does, on the terminal until ready
        given = [item.partition("=")[0].strip() for value in args.program
                 for item in (value.split(",") if "=" not in value else [value])]
        # a refused bind or an unknown program is one error line below, before anything loads
        if not needs_token(args.host, args.insecure_no_token) and all(name in PROGRAMS for name in given):
            print(f"tracerag serve: starting {', '.join(given) or 'all programs'}", file=sys.stderr, flush=True)
            load_embedder_early(args, given or list(PROGRAMS))  # its weights load while the rest is imported
        from ..serving.app import serve
        from ..serving.programs import parse_program_specs

        specs = parse_program_specs(args.program)  # a bad --program fails before the programs are loaded
        return serve(specs, {name: options_for(PROGRAMS[name].build, args) for name in specs}, args,
                     set_up=lambda: configure(args, programs=list(specs)), on_ready=log.close)
