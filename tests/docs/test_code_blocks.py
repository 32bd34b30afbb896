"""Every shell and Python block of README.md and docs/**/*.md runs as pasted, or says why it cannot.

A fenced block in ``bash``, ``sh``, ``shell``, ``console``, ``python`` or ``py`` is one of:

- **run** here, one test per block (``page:line``). A page's blocks run in their order in one fresh
  directory (so an earlier block can write ``docs.jsonl`` or ``bank/`` and a later one read it), with
  ``HOME`` beside it, no LM (every LM and key variable removed, proxies pointing at a closed port: nothing
  reaches the network), the embedded default embedder and one embedding cache shared by the run. Shell
  blocks run in ``bash -e -o pipefail``, each in a new process group that is stopped (SIGTERM, as a
  service manager stops it) when the block ends: a block that starts ``tracerag serve ... &`` waits for it
  with a bounded loop, calls it, and leaves it to be stopped. The port 8700 is replaced by a free one, so
  two pages can serve at once. Each shell block is a new bash (an ``export`` or ``cd`` does not carry over).
  Python blocks run, in their order, in one interpreter per page (as a reader pastes them into one
  session), with the directory as the working directory.
- **listed** in ``NOT_RUN`` with what the reader must have that a test may not: an LM key, an account
  and a home on it, a Milvus server. Listed blocks are still parsed (``bash -n``, ``compile``).
- **run elsewhere**: every block of a page in ``RUN_ELSEWHERE`` runs in the test named there.

Synopses (``[--k 10]``, ``bootstrap|mipro|gepa``) are not copyable commands: they go in ``text`` blocks
or prose, and a runnable block that holds one fails here.

A page's directory holds the repository's ``examples/`` and ``benchmarks/`` (the pages run those scripts
"from the repository root"). The install lines are stood in for: ``python3 -m venv DIR`` makes DIR an
environment whose ``activate`` keeps this test environment, and ``pip install`` checks that what it names
is installed here (with the extras pyproject.toml declares) instead of downloading it.

Blocks of a page run on one xdist worker, in order (``xdist_group``; pyproject.toml sets
``--dist loadgroup``); run alone (``-k``), a block runs the page's earlier blocks first. The few blocks
in ``SLOW`` run in CI's slow step; no later block needs what they make. Before the first block, the
bundled abstracts' bank is built into the shared cache once (the one slow thing to build, which most
pages search).
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNABLE = {"bash": "shell", "sh": "shell", "shell": "shell", "console": "shell", "python": "python", "py": "python"}
SERVE_PORT = "8700"
BLOCK_TIMEOUT = 300  # seconds; a block that takes longer has hung

# Blocks not run here, by what the reader must have. Each entry is (page, a text only that block holds).
NOT_RUN = {
    "an LM and its API key (OPENAI_API_KEY): the tests point the LM nowhere": [
        ("README.md", 'planner = tracerag.build("planner")'),
        ("README.md", 'agent = tracerag.build("agent", pubmed="local")'),
        ("docs/getting-started.md", "export OPENAI_API_KEY=sk-..."),
        ("docs/getting-started.md", "tracerag compile commands"),
        ("docs/getting-started.md", 'tracerag.load("out/commands-compiled.json"'),
        ("docs/examples.md", "compile_with_your_lm.py"),
        ("docs/programs/agent.md", "agent = SearchAgent(tools"),
        ("docs/programs/agent.md", "tracerag compile agent"),
        ("docs/programs/commands.md", "tracerag compile commands"),
        ("docs/programs/experience.md", "tracerag compile experience"),
        ("docs/programs/planner.md", "planner = TraceablePlanner()"),
        ("docs/programs/planner.md", "tracerag compile planner"),
        ("docs/programs/rag.md", "tracerag compile rag"),
        ("docs/reference/agent.md", "agent = SearchAgent(tools"),
        ("docs/reference/commands.md", 'tracerag.load("out/commands-compiled.json"'),
        ("docs/reference/planner.md", "planner = TraceablePlanner()"),
    ],
    "a SmartThings or Home Assistant account with a home on it (and its token)": [
        ("docs/programs/commands.md", "tracerag home pull smartthings"),
        ("docs/reference/commands.md", "tracerag home pull smartthings"),
        ("docs/reference/commands.md", "dry_run=False"),
    ],
    "a Milvus server (db.internal:19530)": [
        ("docs/reference/stores.md", 'open_store("milvus://db.internal'),
        ("docs/reference/stores.md", "tracerag store copy"),
    ],
    "CI runs it as written (.ci/run); run here, this suite would run inside itself": [
        ("README.md", "python -m pytest"),
        ("docs/getting-started.md", "python -m pytest"),
    ],
}

# Pages whose blocks run, as written, in another test (which checks more than that they run).
RUN_ELSEWHERE = {
    "docs/deployment.md": "tests/serving/test_deployment_doc.py",  # a token file, an OTLP collector, SIGTERM
}

# Blocks that take long enough to run in CI's slow step only (python -m pytest -m slow -n 0). A later block
# of the page never needs what a slow one made: in the default run, slow blocks are not run at all.
SLOW = [
    ("docs/programs/commands.md", "tracerag tune commands"),  # 10 tuning trials over the train split
    ("docs/getting-started.md", "tracerag evaluate experience"),  # three programs over their test splits
]

# What a block must show, beyond exiting 0: (page, text the block holds) -> patterns its output holds.
SHOWS = {
    ("README.md", 'pred = program(query="关掉所有的灯")'): [r"main-thermostatCoolingSetpoint-setCoolingSetpoint",
                                                           r"groups=\[BulkGroup\(command_id='main-switch-off'"],
    ("README.md", 'program = tracerag.build("experience")'): [r"\['receipt-total-\d+'"],
    ("README.md", 'program = tracerag.build("rag", k=5)'): [r"\[\d+#\d+\]", r"\['\d+#\d+'.*\] no_lm"],
    ("docs/programs/commands.md", "target_for_home"): [r"dry run \(smartthings\)"],
    ("docs/reference/commands.md", "target_for_home"): [r"dry run \(smartthings\): would send \d+ call"],
    ("docs/reference/models.md", "class Retrievals(BaseCallback)"): [r"\['corpus\.search'"],
    ("docs/programs/experience.md", "localhost:8700/v1/experience"): [r'"used_task_ids":\["receipt-total-1"\]'],
    ("docs/programs/rag.md", "localhost:8700/v1/rag"): [r'"cited_ids":\["\d+#\d+"'],
    ("docs/programs/rag.md", "tracerag run rag --bank chunks/"): [r"statins-t2d#0"],
    ("docs/reference/serving.md", "localhost:8700/v1/commands"): [
        r'"candidates":\[\{', r'"answer":"', r'"experience":"', r'"plan":null', r'"trajectory":\{', r'"status":"ok"'],
}


@dataclass(frozen=True)
class Block:
    page: str          # relative to the repository, e.g. docs/programs/rag.md
    line: int          # the opening fence's line
    lang: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def kind(self) -> str | None:
        return RUNNABLE.get(self.lang)


FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`]*?)[ \t]*$")


def parse_blocks(text: str, page: str) -> list[Block]:
    """Every fenced block of a Markdown text, with its language (the info string's first word)."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        lang = re.split(r"[\s{]", opening["info"].strip().lstrip("{").lstrip("."), maxsplit=1)[0].lower()
        body, j = [], i + 1
        while j < len(lines):
            closing = FENCE.match(lines[j])
            if closing and closing["fence"][0] == fence[0] and len(closing["fence"]) >= len(fence) \
                    and not closing["info"]:
                break
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        blocks.append(Block(page, i + 1, lang, "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def pages() -> list[Path]:
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if "_hooks" not in p.relative_to(ROOT).parts)
    return [ROOT / "README.md", *docs]


def runnable_blocks() -> list[Block]:
    return [b for p in pages() for b in parse_blocks(p.read_text(encoding="utf-8"), p.relative_to(ROOT).as_posix())
            if b.kind]


def _find(entries, blocks: list[Block]) -> dict[tuple[str, str], list[Block]]:
    return {(page, text): [b for b in blocks if b.page == page and text in b.code] for page, text in entries}


def _listed(blocks: list[Block]) -> dict[str, str]:
    """Block id -> why it is not run."""
    return {found[0].id: reason for reason, entries in NOT_RUN.items()
            for found in _find(entries, blocks).values() if len(found) == 1}


BLOCKS = runnable_blocks()
LISTED = _listed(BLOCKS)
SLOW_IDS = {found[0].id for found in _find(SLOW, BLOCKS).values() if len(found) == 1}
TO_RUN = [b for b in BLOCKS if b.id not in LISTED and b.page not in RUN_ELSEWHERE]


def _param(block: Block):
    marks = [pytest.mark.xdist_group(f"docs-{block.page}")]
    if block.id in SLOW_IDS:
        marks.append(pytest.mark.slow)
    return pytest.param(block, id=block.id, marks=marks)


# ---------------------------------------------------------------------------------------------
# What the listing says holds.


def test_every_listing_names_exactly_one_block():
    entries = [(where, reason) for reason, entries in NOT_RUN.items() for where in entries]
    entries += [(where, "slow") for where in SLOW] + [(where, "shows") for where in SHOWS]
    for (page, text), what in entries:
        found = [b.id for b in BLOCKS if b.page == page and text in b.code]
        assert len(found) == 1, f"{what}: {page}: {len(found)} runnable blocks hold {text!r}: {found}"
    listed = [b.id for reason, entries in NOT_RUN.items() for found in _find(entries, BLOCKS).values()
              for b in found]
    assert len(listed) == len(set(listed)), "a block is listed twice"
    assert not set(LISTED) & {b.id for b in BLOCKS if b.page in RUN_ELSEWHERE}
    for page, test in RUN_ELSEWHERE.items():
        assert page in (ROOT / test).read_text(encoding="utf-8"), f"{test} does not name {page}"


def test_the_reasons_for_not_running_a_block_stay_few():
    """Reasons are what the reader owns (a key, an account, a server), not what was hard to set up here."""
    assert len(NOT_RUN) <= 5


SYNOPSIS = re.compile(r"\[--?[A-Za-z]|\b[a-z]+\|[a-z]+\|[a-z]+\b")


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.kind == "shell"], ids=lambda b: b.id)
def test_no_shell_block_is_a_synopsis(block):
    """``[--k 10]`` or ``bootstrap|mipro|gepa`` in a block a reader copies is a command that fails: a text block."""
    code = "\n".join(line.split("  #")[0] for line in block.code.splitlines())  # comments may say anything
    code = re.sub(r"'[^'\n]*'|\"[^\"\n]*\"", "''", code)  # and so may JSON bodies and quoted words
    found = SYNOPSIS.search(code)
    assert not found, f"{block.id}: {found.group(0)!r}: a synopsis belongs in a ```text block or in prose"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.id in LISTED], ids=lambda b: b.id)
def test_a_block_not_run_still_parses(block):
    if block.kind == "python":
        compile(block.code, block.id, "exec")
    else:
        done = subprocess.run(["bash", "-n", "-c", shell_code(block)], capture_output=True, text=True)
        assert done.returncode == 0, f"{block.id} ({LISTED[block.id]}): {done.stderr}"


def test_a_runnable_block_that_serves_says_its_port():
    """The runs replace 8700 with a free port: a ``tracerag serve`` without ``--port 8700`` would not move."""
    for block in TO_RUN:
        for line in block.code.splitlines():
            if re.search(r"\btracerag serve\b", line.split("#")[0]):
                assert f"--port {SERVE_PORT}" in line, f"{block.id}: {line.strip()!r}: say --port {SERVE_PORT}"


def test_the_extractor_reads_fences_as_markdown_does():
    text = textwrap.dedent("""\
        ```bash
        echo one
        ```
        - a list item:

          ```python
          print("two")
          ```

        ````markdown
        ```bash
        not a block of its own
        ```
        ````
        ~~~ sh
        echo three
        ~~~
        ```text
        tracerag evaluate [--k 10]
        ```
        """)
    found = [(b.lang, b.code) for b in parse_blocks(text, "x.md")]
    assert found == [("bash", "echo one\n"), ("python", 'print("two")\n'),
                     ("markdown", "```bash\nnot a block of its own\n```\n"), ("sh", "echo three\n"),
                     ("text", "tracerag evaluate [--k 10]\n")]
    console = Block("x.md", 1, "console", "$ tracerag run rag \\\n    --query x\noutput line\n$ echo done\ndone\n")
    assert shell_code(console) == "tracerag run rag \\\n    --query x\necho done\n"


# ---------------------------------------------------------------------------------------------
# Running a page.


def shell_code(block: Block) -> str:
    """The commands of a block; a ``console`` block's are its ``$ `` lines (and their continuations)."""
    if block.lang != "console":
        return block.code
    commands, going_on = [], False
    for line in block.code.splitlines():
        if line.startswith("$ ") or going_on:
            commands.append(line[2:] if line.startswith("$ ") and not going_on else line)
            going_on = line.rstrip().endswith("\\")
    return "\n".join(commands) + "\n"


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def stop_group(pgid: int, grace: float = 30.0) -> None:
    """SIGTERM to a process group, then SIGKILL to what is left after ``grace`` seconds."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# The interpreter a page's Python blocks run in, one after another: it reads "<code file>\t<log file>" lines
# and answers "ok" or "error" on its own copy of stdout once each block is done (its output in the log).
DRIVER = '''\
import os, sys, traceback
control = os.fdopen(os.dup(1), "w", buffering=1)
sys.path[0] = ""  # the working directory, as in an interactive session
namespace = {"__name__": "__main__"}
for request in sys.stdin:
    code_file, log_file = request.rstrip("\\n").split("\\t")
    sys.stdout.flush(); sys.stderr.flush()
    log = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1); os.dup2(log, 2); os.close(log)
    status = "ok"
    try:
        with open(code_file, encoding="utf-8") as source:
            exec(compile(source.read(), code_file, "exec"), namespace)
    except SystemExit as stop:
        status = "ok" if stop.code in (None, 0) else "error"
        if status == "error":
            print(f"SystemExit: {stop.code}", file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        status = "error"
    sys.stdout.flush(); sys.stderr.flush()
    control.write(status + "\\n")
'''

# `python3 -m venv DIR` and `pip install ...` in the blocks: DIR becomes an environment that is this one,
# and pip checks what it is asked to install is here. Anything else goes to the real interpreter.
PYTHON_SHIM = '''\
#!{python}
"""The docs tests' python: ``-m venv DIR`` stands in for a fresh environment, ``-m pip`` for pip."""
import os, sys
BIN = {bin!r}
args = sys.argv[1:]
if args[:2] == ["-m", "pip"]:
    os.execv(os.path.join(BIN, "pip"), ["pip", *args[2:]])
if args[:2] == ["-m", "venv"]:
    targets = [a for a in args[2:] if not a.startswith("-")]
    if len(targets) != 1:
        sys.exit(f"python -m venv (docs test stand-in): one directory, not {{targets}}")
    env = os.path.abspath(targets[0])
    os.makedirs(os.path.join(env, "bin"), exist_ok=True)
    with open(os.path.join(env, "pyvenv.cfg"), "w") as cfg:
        cfg.write("# a stand-in made by tests/docs/test_code_blocks.py: the test environment\\n")
    for name, target in (("python", "python3"), ("python3", "python3"), ("pip", "pip"), ("pip3", "pip")):
        path = os.path.join(env, "bin", name)
        with open(path, "w") as script:
            script.write(f'#!/bin/sh\\nexec "{{os.path.join(BIN, target)}}" "$@"\\n')
        os.chmod(path, 0o755)
    with open(os.path.join(env, "bin", "activate"), "w") as activate:
        activate.write(f'VIRTUAL_ENV="{{env}}"; export VIRTUAL_ENV\\n'
                       '_OLD_VIRTUAL_PATH="$PATH"; PATH="$VIRTUAL_ENV/bin:$PATH"; export PATH\\n'
                       'deactivate () {{ PATH="$_OLD_VIRTUAL_PATH"; export PATH; unset VIRTUAL_ENV; }}\\n')
    sys.exit(0)
os.execv({python!r}, [{python!r}, *args])
'''

PIP_SHIM = '''\
#!{python}
"""The docs tests' pip: ``pip install X`` succeeds when X (with its extras) is installed here."""
import sys, tomllib
from importlib import metadata
from packaging.requirements import Requirement
ROOT = {root!r}
args = sys.argv[1:]
if not args or args[0] != "install":
    sys.exit(f"pip (docs test stand-in): only pip install is stood in for, not {{args}}")
project = tomllib.load(open(ROOT + "/pyproject.toml", "rb"))["project"]
wanted, rest = [], args[1:]
while rest:
    arg = rest.pop(0)
    if arg in ("-q", "--quiet", "-U", "--upgrade"):
        continue
    if arg in ("-e", "--editable"):
        arg = rest.pop(0)
    elif arg.startswith("-"):
        sys.exit(f"pip (docs test stand-in): {{arg}} is not stood in for")
    name, _, extras = arg.partition("[")
    if name in (".", "./", project["name"]):
        extras = [e.strip() for e in extras.rstrip("]").split(",") if e.strip()]
        unknown = [e for e in extras if e not in project["optional-dependencies"]]
        if unknown:
            sys.exit(f"pip: {{project['name']}} has no extra {{unknown}} (pyproject.toml)")
        wanted += project["dependencies"] + [r for e in extras for r in project["optional-dependencies"][e]]
    else:
        wanted.append(arg)
missing = []
for text in wanted:
    requirement = Requirement(text)
    try:
        version = metadata.version(requirement.name)
    except metadata.PackageNotFoundError:
        missing.append(text)
        continue
    if not requirement.specifier.contains(version, prereleases=True):
        missing.append(f"{{text}} (here: {{version}})")
if missing:
    sys.exit("pip (docs test stand-in): not installed in the test environment: " + ", ".join(missing))
print(f"pip (docs test stand-in): {{len(wanted)}} requirement(s) already installed")
'''


def _secret_or_setting(name: str) -> bool:
    """Variables that would give a block an LM, a key, a token or a setting the reader does not have."""
    upper = name.upper()
    return (upper.startswith(("TRACERAG_", "OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "DEEPSEEK_",
                              "DASHSCOPE_", "AZURE_", "OTEL_", "MLFLOW_", "PIP_", "LITELLM_"))
            or upper.endswith(("_API_KEY", "_TOKEN", "_PROXY")) or upper in ("VIRTUAL_ENV", "PYTHONPATH"))


@dataclass
class Outcome:
    ok: bool
    output: str
    seconds: float


@dataclass
class PageRun:
    """One page's directory, environment and Python session; its blocks' outcomes as they run."""

    page: str
    work: Path
    env: dict
    logs: Path
    outcomes: dict = field(default_factory=dict)
    python: subprocess.Popen | None = None

    def run(self, block: Block) -> Outcome:
        log = self.logs / f"{block.line}.log"
        started = time.monotonic()
        ok = self._python(block, log) if block.kind == "python" else self._shell(block, log)
        outcome = Outcome(ok, log.read_text(encoding="utf-8", errors="replace"), time.monotonic() - started)
        self.outcomes[block.id] = outcome
        return outcome

    def _shell(self, block: Block, log: Path) -> bool:
        code = re.sub(rf"\b{SERVE_PORT}\b", free_port(), shell_code(block))
        with open(log, "wb") as out:
            proc = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", code], cwd=self.work, env=self.env,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                proc.wait(timeout=BLOCK_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                out.write(f"\n[docs test] stopped after {BLOCK_TIMEOUT} s\n".encode())
                return False
            finally:
                stop_group(proc.pid)  # what the block left running in the background (a service)
        return proc.returncode == 0

    def _python(self, block: Block, log: Path) -> bool:
        if self.python is None:
            driver = self.logs / "driver.py"
            driver.write_text(DRIVER, encoding="utf-8")
            self.python = subprocess.Popen([sys.executable, "-u", str(driver)], cwd=self.work, env=self.env,
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                           start_new_session=True)
        code_file = self.logs / f"{block.line}.py"
        code_file.write_text(block.code, encoding="utf-8")
        self.python.stdin.write(f"{code_file}\t{log}\n")
        self.python.stdin.flush()
        ready, _, _ = select.select([self.python.stdout], [], [], BLOCK_TIMEOUT)
        status = self.python.stdout.readline().strip() if ready else ""
        if status not in ("ok", "error"):  # hung or died: nothing after it on this page can run
            self.close()
            with open(log, "a", encoding="utf-8") as out:
                out.write(f"\n[docs test] the interpreter {'died' if ready else 'hung'}\n")
            return False
        return status == "ok"

    def close(self) -> None:
        """End the page's interpreter (its input closed, as a reader ends a session), then what it left running."""
        if self.python is not None:
            self.python.stdin.close()
            try:
                self.python.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.python.kill()
                self.python.wait()
            stop_group(self.python.pid, grace=5)
            self.python = None


@pytest.fixture(scope="session")
def block_tools(tmp_path_factory):
    """The shims' directory and the embedding cache, shared by every page (and every worker) of the run."""
    base = tmp_path_factory.getbasetemp()
    cache = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "docs-blocks-cache"
    cache.mkdir(exist_ok=True)
    bin_dir = tmp_path_factory.mktemp("docs-bin")
    shims = {"python3": PYTHON_SHIM, "python": PYTHON_SHIM, "pip": PIP_SHIM, "pip3": PIP_SHIM}
    for name, text in shims.items():
        (bin_dir / name).write_text(text.format(python=sys.executable, bin=str(bin_dir), root=str(ROOT)),
                                    encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    return bin_dir, cache


def fill_the_shared_cache(cache: Path, env: dict) -> None:
    """Build the bundled PubMedQA abstracts' bank into the shared cache, once a run and one worker at a time.

    Most pages search it (the README, rag, agent, serve, reports), and it is the one thing that takes long to
    build (half a minute of embedding); two workers filling an empty cache at once would each spend it.
    """
    import fcntl

    with open(cache / ".fill.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (cache / ".filled").exists():
            done = subprocess.run([sys.executable, "-c", "import tracerag; tracerag.build('rag')"], cwd=cache,
                                  env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
            assert done.returncode == 0, f"building the bundled abstracts' bank failed:\n{done.stderr[-4000:]}"
            (cache / ".filled").touch()


def block_env(bin_dir: Path, cache: Path, home: Path) -> dict:
    """The environment a page's blocks run in: no LM, no key, no way off the machine, the shared cache."""
    env = {k: v for k, v in os.environ.items() if not _secret_or_setting(k)}
    nowhere = "http://127.0.0.1:9"  # the discard port: closed, so any request leaving the machine fails
    env.update(HOME=str(home), PYTHONPATH=str(ROOT), TRACERAG_CACHE_DIR=str(cache),
               PATH=os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]]),
               LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONIOENCODING="utf-8", PIP_NO_INDEX="1",
               HF_HUB_OFFLINE="1", GRPC_VERBOSITY="NONE",
               **{name: nowhere for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                                             "ALL_PROXY")},
               no_proxy="localhost,127.0.0.1,::1", NO_PROXY="localhost,127.0.0.1,::1")
    return env


@pytest.fixture(scope="session")
def filled_cache(block_tools, tmp_path_factory):
    bin_dir, cache = block_tools
    fill_the_shared_cache(cache, block_env(bin_dir, cache, tmp_path_factory.mktemp("docs-fill-home")))


@pytest.fixture(scope="session")
def page_runs(block_tools, tmp_path_factory):
    runs: dict[str, PageRun] = {}
    bin_dir, cache = block_tools

    def get(page: str) -> PageRun:
        if page not in runs:
            top = tmp_path_factory.mktemp(re.sub(r"\W+", "-", page))
            work, home, logs = top / "work", top / "home", top / "logs"
            for directory in (work, home, logs):
                directory.mkdir()
            for name in ("examples", "benchmarks"):  # the pages run these "from the repository root"
                (work / name).symlink_to(ROOT / name, target_is_directory=True)
            runs[page] = PageRun(page, work, block_env(bin_dir, cache, home), logs)
        return runs[page]

    yield get
    for run in runs.values():
        run.close()


def _report(block: Block, outcome: Outcome, run: PageRun) -> str:
    return (f"{block.id} ({block.lang}) failed after {outcome.seconds:.1f} s in {run.work}:\n{block.code}\n"
            f"--- output (last 6000 characters) ---\n{outcome.output[-6000:]}")


@pytest.mark.parametrize("block", [_param(b) for b in TO_RUN])
def test_block_runs_as_pasted(block, page_runs, filled_cache, request):
    run = page_runs(block.page)
    slow_selected = "not slow" not in (request.config.getoption("-m") or "")
    for earlier in [b for b in TO_RUN if b.page == block.page and b.line < block.line]:
        if earlier.id in run.outcomes or (earlier.id in SLOW_IDS and block.id not in SLOW_IDS
                                          and not slow_selected):
            continue
        run.run(earlier)
    failed = [b for b in run.outcomes if not run.outcomes[b].ok]
    assert not failed, f"{block.id} not run: an earlier block of the page failed: {failed}"
    outcome = run.run(block)
    assert outcome.ok, _report(block, outcome, run)
    for (page, text), shown in SHOWS.items():
        if page == block.page and text in block.code:
            missing = [pattern for pattern in shown if not re.search(pattern, outcome.output)]
            assert not missing, f"{block.id} did not show {missing}:\n{outcome.output[-4000:]}"


def test_the_runs_reach_no_network_and_no_lm(page_runs):
    """The environment the blocks get: no LM variable, no key, and a request leaving the machine fails."""
    run = page_runs("docs/test-environment-probe.md")
    probe = Block(run.page, 1, "python", textwrap.dedent("""\
        import json, os, urllib.request
        seen = sorted(k for k in os.environ if k.startswith(("TRACERAG_", "OPENAI")) or k.endswith("_API_KEY"))
        try:
            urllib.request.urlopen("http://example.com/", timeout=5)
            reached = True
        except OSError:
            reached = False
        print(json.dumps({"seen": seen, "reached": reached}))
        """))
    outcome = run.run(probe)
    assert outcome.ok, outcome.output
    assert json.loads(outcome.output.strip().splitlines()[-1]) == {"seen": ["TRACERAG_CACHE_DIR"], "reached": False}
