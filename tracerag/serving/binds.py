"""Which binds a service may listen on without a token: kept apart from the app so the command line checks a
bind before it loads anything (the app, DSPy, the embedder's weights)."""

from __future__ import annotations

import ipaddress
import os

__all__ = ["TOKEN_ENV", "is_loopback", "needs_token"]

TOKEN_ENV = "TRACERAG_SERVE_TOKEN"


def is_loopback(host: str) -> bool:
    """True when binding ``host`` listens on this machine only (localhost, 127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False  # any other name may resolve to an outside address


def needs_token(host: str, insecure_no_token: bool = False) -> bool:
    """Whether serving on ``host`` is refused for want of a token: other machines can reach it, no token is set
    (``TRACERAG_SERVE_TOKEN``) and ``--insecure-no-token`` was not given."""
    return not os.environ.get(TOKEN_ENV) and not is_loopback(host) and not insecure_no_token
