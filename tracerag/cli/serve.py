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
    from ..registry import entry
    from ..serving.app import serve
    from ..serving.programs import parse_program_specs
    from .configuring import configure, options_for

    specs = parse_program_specs(args.program)  # a bad --program fails before anything is loaded
    configure(args, programs=list(specs))  # the embedder's weights start loading here, in the background
    return serve(specs, {name: options_for(entry(name).build, args) for name in specs}, args)
