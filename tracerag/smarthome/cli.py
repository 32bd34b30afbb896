"""Command-line pieces for real homes, wired into ``optimize.py``:

- ``tracerag home pull smartthings --location ID --out DIR [--base-url URL] [--locale en]`` (token in
  ``SMARTTHINGS_TOKEN``) and ``tracerag home pull homeassistant --url URL --out DIR`` (token in ``HA_TOKEN``):
  ``add_home_commands(subparsers)`` and ``run_home_command(args)``;
- ``tracerag run commands … --execute [--dry-run] [--confirm-sensitive] [--target smartthings|homeassistant]
  [--home-url URL]``:
  ``add_execute_arguments(parser)`` and ``execute_from_args(args, prediction, home=…)``
  (``execute_prediction(prediction, target=…, …)`` without a parser).

Only argparse is imported here; the API clients (httpx) load when a command runs, so ``tracerag --help``
stays cheap.
"""

from __future__ import annotations

import sys


def add_home_commands(subparsers) -> None:
    """Add ``home pull smartthings|homeassistant`` to the top-level subparsers."""
    home = subparsers.add_parser("home", help="pull a real home (SmartThings, Home Assistant) into a home directory")
    verbs = home.add_subparsers(dest="home_verb", required=True)
    pull = verbs.add_parser("pull", help="fetch devices, rooms and commands and write devices.json, rooms.json, "
                            "spec.jsonl (hand-written descriptions in an existing spec.jsonl are kept)")
    sources = pull.add_subparsers(dest="source", required=True)
    st = sources.add_parser("smartthings", help="SmartThings REST API; token in SMARTTHINGS_TOKEN (scopes "
                            "r:devices:* r:locations:*)")
    st.add_argument("--location", required=True, help="the location id (GET /v1/locations lists them)")
    st.add_argument("--out", required=True, help="home directory to write")
    st.add_argument("--base-url", default="https://api.smartthings.com")
    st.add_argument("--locale", default="en", help="language of the capability descriptions (default en)")
    ha = sources.add_parser("homeassistant", help="Home Assistant WebSocket + REST API; long-lived token in HA_TOKEN")
    ha.add_argument("--url", required=True, help="the instance, e.g. http://homeassistant.local:8123")
    ha.add_argument("--out", required=True, help="home directory to write")
    for p in (st, ha):
        p.add_argument("--deadline", type=float, default=60.0, help="seconds per request, retries included")
        p.add_argument("--retries", type=int, default=4, help="retries of a 429 or 5xx answer (default 4)")
        p.add_argument("-v", "--verbose", action="store_true")


def run_home_command(args) -> int:
    """Run ``home pull …``: one summary line on stdout, or one ``error:`` line and exit code 2."""
    import logging

    logging.basicConfig(level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
                        format="%(levelname)s %(message)s")
    from .homeassistant import HomeAssistantError, pull_homeassistant
    from .smartthings import SmartThingsError, pull_smartthings

    try:
        if args.source == "smartthings":
            summary = pull_smartthings(args.location, args.out, base_url=args.base_url, locale=args.locale,
                                       deadline=args.deadline, retries=args.retries)
        else:
            summary = pull_homeassistant(args.url, args.out, deadline=args.deadline, retries=args.retries)
    except (SmartThingsError, HomeAssistantError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary.line())
    return 0


def add_execute_arguments(parser) -> None:
    """Add ``--execute``, ``--dry-run``, ``--confirm-sensitive``, ``--target`` and ``--home-url`` to
    ``run commands``."""
    g = parser.add_argument_group("execute (commands)")
    g.add_argument("--execute", action="store_true", help="send the result to the home's API (SmartThings "
                   "commands or Home Assistant services); refused for need_clarification, too_many_targets, "
                   "no_intent, too_long, withheld, no_match")
    g.add_argument("--dry-run", action="store_true", help="with --execute: print the calls, send nothing")
    g.add_argument("--confirm-sensitive", action="store_true", help="with --execute: also send sensitive commands "
                   "(unlock, open a door or garage door, disarm, open a valve, an oven on, what policy.json marks); "
                   "without it they are listed as needs_confirmation and not sent")
    g.add_argument("--target", choices=("smartthings", "homeassistant"),
                   help="the API to send to (default: the source.json a `home pull` wrote into the home)")
    g.add_argument("--home-url", help="the API's base URL (default: from source.json; SmartThings: "
                   "https://api.smartthings.com)")


def execute_from_args(args, prediction, home=None) -> tuple[dict | None, int]:
    """:func:`execute_prediction` with the options ``add_execute_arguments`` added to a parser; (None, 0)
    without ``--execute``."""
    if not getattr(args, "execute", False):
        return None, 0
    return execute_prediction(prediction, home=home, target=args.target, home_url=args.home_url,
                              dry_run=args.dry_run, confirm_sensitive=args.confirm_sensitive,
                              dataset=getattr(args, "dataset", None), query=getattr(args, "query", None))


def execute_prediction(prediction, *, home=None, target: str | None = None, home_url: str | None = None,
                       dry_run: bool = False, confirm_sensitive: bool = False, dataset: str | None = None,
                       query: str | None = None) -> tuple[dict, int]:
    """(the execution report as a dict, exit code) of sending ``prediction`` to the home's API (``target``:
    smartthings, homeassistant, or None to tell from the home's files).

    Prints the per-device report on stderr. Exit code: 0 when every device was accepted (or, with
    ``dry_run``, every planned call could be built), 1 when anything was refused, skipped, failed or
    needs a confirmation, 2 when the target cannot be used (no token, no home)."""
    from .execute import ExecutionError, HomeAssistantTarget, SmartThingsTarget, execute, target_for_home

    home_dir = _home_dir(dataset, home)
    try:
        if target == "smartthings":
            api = SmartThingsTarget(base_url=home_url or SmartThingsTarget.base_url, home_dir=home_dir)
        elif target == "homeassistant":
            if not home_url:
                raise ExecutionError("--target homeassistant needs --home-url (the instance's URL)")
            api = HomeAssistantTarget(home_url, home_dir=home_dir)
        elif home_dir is None:  # a dataset of several homes: the calls can be shown, the API is not known
            api = SmartThingsTarget(base_url=home_url or SmartThingsTarget.base_url, dry_run_only=(
                f"{dataset}: which home's source.json to read is not known: give --target to send"))
        else:
            api = target_for_home(home_dir, base_url=home_url)
        report = execute(prediction, api, dry_run=dry_run, home=home, query=query,
                         confirm_sensitive=confirm_sensitive)
    except (ExecutionError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return {"error": str(exc)}, 2
    for line in report.lines():
        print(line, file=sys.stderr)
    return report.to_dict(), 0 if report.ok else 1


def _home_dir(dataset: str | None, home):
    """The directory of the home the prediction was made on, when it can be told."""
    from pathlib import Path

    from ..datasets.smarthome import resolve_dataset

    if not dataset:
        return None
    try:
        path = resolve_dataset(dataset)  # a bundled name too ("smarthome/home_small")
    except FileNotFoundError:
        path = Path(dataset)
    if (path / "devices.json").exists():
        return path
    if home is not None and (path / home.name / "devices.json").exists():
        return path / home.name
    return None
