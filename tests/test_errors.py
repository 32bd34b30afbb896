"""Every error tracerag raises on purpose shares one root: ``except tracerag.TraceragError`` catches them all,
and each keeps the built-in base callers already catch."""

import importlib
import inspect
import pkgutil

import tracerag
from tracerag.data_files.read_report import FileProblem
from tracerag.home_commands.file_fields import HomeDataError
from tracerag.stores.bank_errors import BankWriteError


def _public_errors():
    found = {}
    for module in pkgutil.walk_packages(tracerag.__path__, "tracerag."):
        try:
            loaded = importlib.import_module(module.name)
        except ImportError:  # an optional extra not installed here: its errors are checked where it is
            continue
        for name, cls in inspect.getmembers(loaded, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == module.name and not name.startswith("_"):
                found[f"{module.name}.{name}"] = cls
    return found


def test_every_public_error_class_derives_from_the_one_root():
    errors = _public_errors()
    assert len(errors) >= 20  # the walk found the library's errors
    assert not sorted(name for name, cls in errors.items() if not issubclass(cls, tracerag.TraceragError))


def test_an_error_keeps_the_built_in_base_callers_catch():
    assert issubclass(HomeDataError, ValueError) and issubclass(FileProblem, ValueError)
    assert issubclass(BankWriteError, OSError)
    try:
        raise HomeDataError("devices.json: line 3: field 'label': expected a string")
    except tracerag.TraceragError as caught:
        assert "line 3" in str(caught)


def test_a_data_file_error_says_where_in_fields_too(tmp_path):
    """A caller can point at the place without parsing the message: the file, the line and the field."""
    from tracerag.home_commands.file_fields import HomeDataError
    from tracerag.home_commands.home import Home

    home = tmp_path / "home"
    home.mkdir()
    (home / "devices.json").write_text('{"items": [{"deviceId": "d1", "label": 7.5e400}]}', encoding="utf-8")
    (home / "rooms.json").write_text('{"items": []}', encoding="utf-8")
    (home / "spec.jsonl").write_text("", encoding="utf-8")
    try:
        Home.load(home)
    except HomeDataError as exc:
        assert isinstance(exc, tracerag.TraceragError) and exc.path == str(home / "devices.json")
        assert exc.line == 1 and str(exc).startswith(f"{exc.path}:{exc.line}: ")
    else:
        raise AssertionError("a label of infinity was read")


def test_the_library_raises_no_bare_built_in_exception():
    """Every error the library raises on purpose is a TraceragError: a ``raise ValueError(...)`` would slip past
    ``except tracerag.TraceragError`` (its own classes keep the built-in bases, so ``except ValueError`` works)."""
    import ast
    import builtins
    from pathlib import Path

    # what Python's own protocols ask for: a module's __getattr__, an exit code, an invariant that cannot fail
    protocol = {"AttributeError", "SystemExit", "AssertionError", "NotImplementedError", "StopIteration"}
    built_in = {name for name, value in vars(builtins).items()
                if isinstance(value, type) and issubclass(value, BaseException)} - protocol
    root = Path(tracerag.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and \
                    isinstance(node.exc.func, ast.Name) and node.exc.func.id in built_in:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {node.exc.func.id}")
    assert not found, found
