"""A minimal WebSocket client (RFC 6455) over the stdlib, enough for Home Assistant's JSON API.

Text messages only (ping answered, close honoured, fragmented messages joined). Bounded like every
HTTP client of the project: each call has a total deadline (connect, handshake and every read are
clamped to the time left) and a message is capped in size, so a silent or flooding server cannot hold
the caller. ``wss://`` uses the default TLS context.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import ssl
import struct
import time
from urllib.parse import urlsplit

from ..errors import TraceragError

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_MESSAGE = 64 * 2**20  # bytes of one (joined) message
_HEADERS_MAX = 64 * 2**10


class WebSocketError(TraceragError, RuntimeError):
    pass


def accept_key(key: str) -> str:
    """The Sec-WebSocket-Accept value for a Sec-WebSocket-Key."""
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


class WebSocket:
    """One client connection; ``send_json``/``recv_json`` each finish within ``deadline`` seconds."""

    def __init__(self, url: str, *, deadline: float = 60.0, max_message: int = MAX_MESSAGE) -> None:
        self.url, self.deadline, self.max_message = url, deadline, max_message
        parts = urlsplit(url)
        if parts.scheme not in ("ws", "wss"):
            raise WebSocketError(f"{url}: expected a ws:// or wss:// URL")
        port = parts.port or (443 if parts.scheme == "wss" else 80)
        self._end = time.monotonic() + deadline
        try:
            sock = socket.create_connection((parts.hostname, port), timeout=self._left())
            if parts.scheme == "wss":
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname)
        except OSError as exc:
            raise WebSocketError(f"{url}: cannot connect ({type(exc).__name__}: {exc})") from None
        self.sock = sock
        self._buffer = b""
        self._handshake(parts)

    def _left(self) -> float:
        left = self._end - time.monotonic()
        if left <= 0:
            raise WebSocketError(f"{self.url}: no answer within the {self.deadline:g} s deadline")
        return left

    def _handshake(self, parts) -> None:
        key = base64.b64encode(os.urandom(16)).decode()
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        request = (f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self._send(request.encode())
        while b"\r\n\r\n" not in self._buffer:
            if len(self._buffer) > _HEADERS_MAX:
                raise WebSocketError(f"{self.url}: handshake answer headers too large")
            self._fill()
        head, self._buffer = self._buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        if " 101 " not in f"{lines[0]} ":
            raise WebSocketError(f"{self.url}: handshake answered {lines[0]!r}, not 101 Switching Protocols")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        if headers.get("sec-websocket-accept") != accept_key(key):
            raise WebSocketError(f"{self.url}: handshake answer has a wrong Sec-WebSocket-Accept")

    def _send(self, data: bytes) -> None:
        try:
            self.sock.settimeout(self._left())
            self.sock.sendall(data)
        except OSError as exc:
            raise WebSocketError(f"{self.url}: send failed ({type(exc).__name__}: {exc})") from None

    def _fill(self) -> None:
        try:
            self.sock.settimeout(self._left())
            chunk = self.sock.recv(256 * 1024)
        except TimeoutError:
            raise WebSocketError(f"{self.url}: no answer within the {self.deadline:g} s deadline") from None
        except OSError as exc:
            raise WebSocketError(f"{self.url}: receive failed ({type(exc).__name__}: {exc})") from None
        if not chunk:
            raise WebSocketError(f"{self.url}: the server closed the connection")
        self._buffer += chunk

    def _take(self, n: int) -> bytes:
        while len(self._buffer) < n:
            self._fill()
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def _frame(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 2**16:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        self._send(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def send_json(self, message: dict) -> None:
        self._end = time.monotonic() + self.deadline
        self._frame(0x1, json.dumps(message).encode())

    def recv_json(self):
        """The next text message, decoded (pings are answered on the way)."""
        self._end = time.monotonic() + self.deadline
        parts: list[bytes] = []
        size = 0
        while True:
            b0, b1 = self._take(2)
            fin, opcode, n = b0 & 0x80, b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._take(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._take(8))[0]
            mask = self._take(4) if b1 & 0x80 else None
            if size + n > self.max_message:
                raise WebSocketError(f"{self.url}: message larger than {self.max_message} bytes")
            payload = self._take(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x9:  # ping
                self._frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            if opcode == 0x8:
                raise WebSocketError(f"{self.url}: the server closed the connection "
                                     f"({payload[2:].decode('utf-8', 'replace') or 'no reason'})")
            parts.append(payload)
            size += n
            if fin:
                try:
                    return json.loads(b"".join(parts))
                except ValueError:
                    raise WebSocketError(f"{self.url}: a message that is not JSON") from None

    def close(self) -> None:
        try:
            self._end = time.monotonic() + 1.0
            self._frame(0x8, struct.pack("!H", 1000))
        except WebSocketError:
            pass
        finally:
            self.sock.close()

    def __enter__(self) -> WebSocket:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
