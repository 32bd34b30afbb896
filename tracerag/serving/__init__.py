"""Compiled programs for apps that do not import them: an HTTP service (``tracerag serve``) and MCP tools
(``python -m tracerag.tools --programs``).

``requests`` declares the bodies, ``programs`` builds the programs and turns a request into JSON (shared by
both front ends), ``app`` is the Starlette service. Nothing here is imported by ``import tracerag``.
"""
