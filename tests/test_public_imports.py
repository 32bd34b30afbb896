"""The public surface: ``tracerag.X`` and one import per subpackage, each name loaded on first use only."""

import importlib
import subprocess
import sys

import pytest

PACKAGES = ("tracerag", "tracerag.stores", "tracerag.documents", "tracerag.memory", "tracerag.embedding")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_imports(package):
    module = importlib.import_module(package)
    assert module.__all__ and set(module.__all__) <= set(dir(module))
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"


def test_the_documented_store_import():
    from tracerag.stores import StoreError, open_store
    from tracerag.stores.stores import open_store as where_it_lives

    assert open_store is where_it_lives and issubclass(StoreError, importlib.import_module("tracerag").TraceragError)


def test_an_unknown_name_says_which_package():
    import tracerag.stores

    with pytest.raises(AttributeError, match="'tracerag.stores' has no attribute 'open_stor'"):
        tracerag.stores.open_stor  # noqa: B018


def test_importing_one_module_loads_none_of_its_siblings():
    """The numpy bank's users never pay for Milvus, and ``tracerag.stores`` alone imports nothing."""
    code = ("import sys, tracerag.stores.numpy_store; "
            "print(sorted(m for m in sys.modules if m.startswith(('tracerag.stores.', 'pymilvus'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "milvus" not in loaded and "tracerag.stores.stores" not in loaded, loaded


def test_the_old_retrievers_package_is_gone():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tracerag.retrievers")
