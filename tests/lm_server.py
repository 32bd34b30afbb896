"""An OpenAI-compatible chat endpoint on 127.0.0.1 for the tests, with the faults real endpoints have.

The programs reach it exactly as they reach a user's server: ``tracerag.configure(lm="openai/…",
api_base=stub.url)`` builds a ``dspy.LM`` that speaks HTTP to ``/v1/chat/completions``. The answers
come from a fake engine of ``conftest`` (``engine.answer(system, user, stop)`` recognises the
signature), and a fault mode decides what goes back on the wire — for every call, or per signature:

good        the engine's answer
garbage     prose with none of the expected fields
empty       ``"content": ""``
null        ``"content": null``
http500     status 500 with an error body
bad_json    status 200 with a body that is not JSON
slow        the answer after ``delay`` seconds (set it past the client's timeout)
wrong_types every field present, of the wrong type (structures as prose, text as an object)
fenced      structured fields wrapped in a ```json fence, as chat models like to write them
gzip        the engine's answer, gzip-encoded (``Content-Encoding: gzip``)
huge        every field far over what it is asked for, well under the byte cap: text 200,000 characters,
            lists 5,000 invented items, an agent's reply an answer citing 5,000 ids before any search
type_names  every field the name of its type, as a model echoing the schema writes it (``list[str]``,
            ``str``, ``bool``; DSPy reads ``list[str]`` as the list ``['str']``)
invented    every id a reply names is one it was never given (lists of ids, ``[doc#n]`` and ``<cite>``
            citations, ``id``/``cites`` keys), an agent's reply an answer citing invented ids at once

Hostile modes (the server misbehaves on the wire; a bounded client must end each call at its deadline
or its byte cap, without growing the process):

endless     status 200 and a JSON reply whose text never ends (no Content-Length, sent as fast as read)
drip        the engine's answer, one byte a second
huge_length ``Content-Length: 10 GB``, then a kilobyte of reply every half second (each read is quick)
gzip_bomb   ``Content-Encoding: gzip``, a body that expands to ``bomb_size`` bytes (500 MB; 0.5 MB sent)

Build LMs with ``stub.lm()``: DSPy's response cache is off for them, so a cached good answer cannot
hide an outage.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
import time
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import dspy
from json_service import BurstServer, gzip_bomb

HOSTILE = ("endless", "drip", "huge_length", "gzip_bomb")
MODES = ("good", "garbage", "empty", "null", "http500", "bad_json", "slow", "wrong_types", "fenced", "gzip", "huge",
         "invented", "type_names", *HOSTILE)
HUGE_CHARS, HUGE_ITEMS = 200_000, 5_000
_FIELD = re.compile(r"(\[\[ ## (\w+) ## \]\]\n)(.*?)(?=\n\n\[\[ ## |\Z)", re.S)


def _flatten(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def _wrong_types(text: str) -> str:
    def swap(match: re.Match) -> str:
        name, value = match.group(2), match.group(3).strip()
        if name == "completed":
            return match.group(0)
        wrong = '"not a structure"' if value[:1] in "[{" else json.dumps({"unexpected": value[:20]})
        return match.group(1) + wrong
    return _FIELD.sub(swap, text)


def _fields(text: str, change) -> str:
    """``text`` with each output field's value (but ``completed``) replaced by ``change(name, value)``."""
    def swap(match: re.Match) -> str:
        name, value = match.group(2), match.group(3).strip()
        return match.group(0) if name == "completed" else match.group(1) + change(name, value)
    return _FIELD.sub(swap, text)


def _as_json(value: str):
    try:
        return json.loads(value)
    except ValueError:
        return value


def _huge(text: str) -> str:
    def inflate(value):
        if isinstance(value, str):
            return (value + " ") * (HUGE_CHARS // (len(value) + 1) + 1)
        if isinstance(value, list):
            return [f"invented-{n}" for n in range(HUGE_ITEMS)] if all(isinstance(v, str) for v in value) \
                else value[:1] * HUGE_ITEMS
        if isinstance(value, dict):
            return {key: inflate(v) for key, v in value.items()}
        return value

    def change(name: str, value: str) -> str:
        if name == "reply":
            cites = " ".join(f'<cite id="{n}">a claim</cite>' for n in range(HUGE_ITEMS))
            return f"<think>Done.</think>\n<answer>Yes. {cites}</answer>"
        parsed = _as_json(value)
        return inflate(parsed) if isinstance(parsed, str) else json.dumps(inflate(parsed))
    return _fields(text, change)


def _invented(text: str) -> str:
    def invent(value, key: str = ""):
        if isinstance(value, str):
            if key == "id":
                return "invented-1"
            value = re.sub(r"\[[\w.-]+#\d+\]", "[invented#0]", value)
            return re.sub(r'(<cite ids?=")[^"]*"', r'\1invented-1"', value)
        if isinstance(value, list):
            if key in ("cites", "") and all(isinstance(v, str) for v in value) and value:
                return ["invented-1", "invented-2"]
            return [invent(v) for v in value]
        if isinstance(value, dict):
            return {k: invent(v, k) for k, v in value.items()}
        return value

    def change(name: str, value: str) -> str:
        if name == "reply":
            return '<think>I know this.</think>\n<answer>Yes. <cite id="invented-1">It works.</cite></answer>'
        parsed = _as_json(value)
        return invent(parsed) if isinstance(parsed, str) else json.dumps(invent(parsed))
    return _fields(text, change)


def _type_names(text: str) -> str:
    def name(_: str, value: str) -> str:
        if value[:1] in "[{":
            return "list[str]" if value[:1] == "[" else "dict"
        return "bool" if value.lower() in ("true", "false") else "str"
    return _fields(text, name)


def _fenced(text: str) -> str:
    def fence(match: re.Match) -> str:
        value = match.group(3).strip()
        return match.group(1) + (f"```json\n{value}\n```" if value[:1] in "[{" else value)
    return _FIELD.sub(fence, text)


def half_of_inputs(name: str, user: str) -> bool:
    """True for about half of all requests, always the same ones (a CRC of the request's text): a stage
    that fails on some inputs only, retries included, between inputs it answers."""
    return zlib.crc32(user.encode()) % 2 == 0


def after_a_tool_call(name: str, user: str) -> bool:
    """True for an agent's steps once its trajectory holds a tool's output: the agent fails after its
    first tool call."""
    return "<tool_output>" in user


class StubLMServer:
    """``with StubLMServer(engine, mode="http500") as stub: tracerag.configure(lm=stub.lm())``.

    ``modes`` maps a signature name (ParseCommand, GradeRelevance, AgentStep, …) to the fault for that
    signature only; others get ``mode``. With ``modes_when`` (a function of the signature name and the
    request's last user message) that fault applies only to the requests it is true for, the others of
    that signature get ``mode``: a stage that fails on some inputs only (``half_of_inputs``), or an
    agent's steps after its first tool call (``after_a_tool_call``). ``requests`` records (signature,
    fault) per request. ``together`` (an ``overlap.Together``) holds the first requests until they are all in.
    """

    def __init__(self, engine, mode: str = "good", *, modes: dict[str, str] | None = None, delay: float = 2.0,
                 bomb_size: int = 500 * 2**20, modes_when: Callable[[str, str], bool] | None = None):
        assert mode in MODES and all(m in MODES for m in (modes or {}).values())
        self.engine, self.mode, self.modes, self.delay = engine, mode, dict(modes or {}), delay
        self.modes_when = modes_when
        self.bomb_size = bomb_size
        self.requests: list[tuple[str, str]] = []
        self.together = None  # an overlap.Together: its first requests answered only once all are in
        self._lock = threading.Lock()
        self._closed = threading.Event()  # ends hostile answers still being sent
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet test output
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if stub.together is not None:
                    stub.together.arrive()
                status, payload, mode = stub._respond(body)
                if mode in HOSTILE:
                    self.close_connection = True
                    try:
                        stub._hostile(mode, self.wfile, payload)
                    except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
                        pass
                    return
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    if mode == "gzip":
                        payload = gzip.compress(payload)
                        self.send_header("Content-Encoding", "gzip")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
                    pass

        self._server = BurstServer(("127.0.0.1", 0), Handler)
        # a short poll: shutting the stub down (every test that uses one) takes 0.05 s, not 0.5 s
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def lm(self, *, timeout: float = 1.0, retries: int = 0) -> dspy.LM:
        """A dspy.LM for this endpoint built the way tracerag builds a user's (no response cache)."""
        from tracerag.lm.bounded_lm import make_lm

        return make_lm("openai/stub-model", self.url, "test-key", timeout=timeout, retries=retries, cache=False)

    def user_lm(self, **kwargs) -> dspy.LM:
        """A dspy.LM for this endpoint built the way a user builds one (``dspy.LM(model, ...)``: no timeout
        unless given; no retries or response cache, so a test sees each call)."""
        return dspy.LM("openai/stub-model", api_base=self.url, api_key="test-key", cache=False,
                       **{"num_retries": 0, **kwargs})

    def _respond(self, body: dict) -> tuple[int, bytes, str]:
        """(status, body, fault mode) of the answer to one request."""
        messages = body.get("messages") or []
        system = "\n".join(_flatten(m.get("content")) for m in messages if m.get("role") == "system")
        user = _flatten(messages[-1].get("content")) if messages else ""
        stop = body.get("stop") or ()
        stop = (stop,) if isinstance(stop, str) else tuple(stop)
        try:
            with self._lock:  # the fake engines keep call logs; one answer at a time
                name, text = self.engine.answer(system, user, stop)
        except Exception as exc:  # an engine told to fail: a server error
            self.requests.append(("error", "http500"))
            return 500, json.dumps({"error": {"message": str(exc), "type": "server_error"}}).encode(), "http500"
        mode = self.modes.get(name, self.mode) if self.modes_when is None or self.modes_when(name, user) \
            else self.mode
        self.requests.append((name, mode))
        if mode == "http500":
            crashed = {"error": {"message": "upstream model crashed", "type": "server_error"}}
            return 500, json.dumps(crashed).encode(), mode
        if mode == "bad_json":
            return 200, b"{'choices': [this is not json", mode
        if mode == "slow":
            time.sleep(self.delay)
        rewrites = {"wrong_types": _wrong_types, "fenced": _fenced, "huge": _huge, "invented": _invented,
                    "type_names": _type_names}
        content = {"garbage": "Sure! Here is what I think: probably the first one.", "empty": "", "null": None}.get(
            mode, rewrites[mode](text) if mode in rewrites else text)
        reply = {"id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()),
                 "model": body.get("model", "stub-model"),
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": len(system + user) // 4, "completion_tokens": len(content or "") // 4,
                           "total_tokens": (len(system + user) + len(content or "")) // 4}}
        return 200, json.dumps(reply).encode(), mode

    def _hostile(self, mode: str, out, payload: bytes) -> None:
        """Write a hostile answer to ``out`` (the status line included) until done or the server closes."""
        def head(*lines: str) -> None:
            out.write(("\r\n".join(["HTTP/1.1 200 OK", "Content-Type: application/json", "Connection: close",
                                      *lines]) + "\r\n\r\n").encode())
            out.flush()

        if mode == "gzip_bomb":
            bomb = gzip_bomb(self.bomb_size)
            head("Content-Encoding: gzip", f"Content-Length: {len(bomb)}")
            out.write(bomb)
        elif mode == "drip":
            head(f"Content-Length: {len(payload)}")
            for i in range(len(payload)):
                if self._closed.wait(1.0):
                    return
                out.write(payload[i : i + 1])
                out.flush()
        elif mode == "huge_length":
            head(f"Content-Length: {10 * 10**9}")
            out.write(b'{"id": "chatcmpl-stub", "choices": [{"message": {"content": "')
            while not self._closed.wait(0.5):
                out.write(b"a" * 1024)
                out.flush()
        else:  # endless
            head()
            out.write(b'{"id": "chatcmpl-stub", "choices": [{"message": {"content": "')
            block = b"a" * 2**16
            while not self._closed.is_set():
                out.write(block)

    def __enter__(self) -> StubLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._closed.set()
        self._server.shutdown()
        self._server.server_close()
