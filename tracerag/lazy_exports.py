"""A package's public names, imported on first use (PEP 562).

``from tracerag.stores import open_store`` then costs only the modules that name needs: a package's
``__init__`` lists where each public name lives and hands this module's ``__getattr__`` and ``__dir__`` to
Python, so importing one submodule of the package never loads its siblings.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_exports(package: str, sources: dict[str, tuple[str, ...]], submodules: tuple[str, ...] = ()
                 ) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for ``package``, whose public names live in ``sources`` (relative
    module -> names); ``submodules`` are reachable as attributes too (``tracerag.config``)."""
    module_of = {name: module for module, names in sources.items() for name in names}
    namespace = importlib.import_module(package).__dict__

    def getattr_(name: str) -> object:
        if name in module_of:
            value = getattr(importlib.import_module(module_of[name], package), name)
        elif name in submodules:
            value = importlib.import_module(f".{name}", package)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value  # later look-ups are plain attribute reads
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *module_of, *submodules})

    return sorted(module_of), getattr_, dir_
