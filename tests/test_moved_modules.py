"""The modules that left ``tracerag/retrievers/`` still import from their old paths for one release, as the
same module objects, so code (and ``mock.patch`` targets) written against the old paths keeps working."""

import importlib
import subprocess
import sys
from unittest import mock

import tracerag.retrievers as old_home


def test_every_old_path_is_the_module_at_its_new_path():
    for old_name, new_path in old_home._MOVED.items():
        old = importlib.import_module(f"tracerag.retrievers.{old_name}")
        assert old is importlib.import_module(new_path), old_name
        assert old.__name__ == old.__spec__.name == new_path  # the new module keeps its own identity


def test_a_patch_on_the_old_path_is_seen_at_the_new_one():
    from tracerag.home_commands import home

    with mock.patch("tracerag.retrievers.home.logger", 7):
        assert home.logger == 7
    assert home.logger != 7


def test_from_imports_of_old_paths_and_names_work():
    from tracerag.retrievers import CosineBank, Home, open_store
    from tracerag.retrievers.cosine_bank import CosineBank as old_bank
    from tracerag.stores.stores import open_store as new_open

    assert CosineBank is old_bank and open_store is new_open
    assert Home.__module__ == "tracerag.home_commands.home"


def test_a_class_pickled_under_its_old_path_loads():
    import pickle

    from tracerag.home_commands.file_fields import HomeDataError

    assert pickle.loads(b"ctracerag.retrievers.home\nHomeDataError\n.") is HomeDataError


def test_an_unknown_old_module_is_still_an_import_error():
    try:
        importlib.import_module("tracerag.retrievers.no_such_module")
    except ModuleNotFoundError:
        pass
    else:
        raise AssertionError("tracerag.retrievers.no_such_module imported")


def test_importing_the_old_package_loads_none_of_the_moved_modules():
    code = ("import sys, tracerag.retrievers; "
            "print(sorted(m for m in sys.modules if m.startswith('tracerag.') and m != 'tracerag.retrievers'))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
