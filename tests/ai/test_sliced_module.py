"""Modules run in slices (``picode.ai.sliced_module``): a name runs the statements it needs,
anything the index cannot answer runs the rest, and any doubt about the index runs the
module as shipped (and builds the index again)."""

from __future__ import annotations

import builtins
import importlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from picode.ai import sliced_module
from picode.ai.slice_file import decode
from picode.ai.slice_index import write
from picode.ai.sliced_module import SlicedModuleFinder, builder, index_path

NAME = "fakeslice"

SOURCE = '''\
"""A module of definitions."""
from __future__ import annotations

import builtins
from typing import Any

RAN = builtins.__dict__.setdefault("_fakeslice_ran", [])


def _note(name: str) -> str:
    RAN.append(name)
    return name


A = _note("A")
B = _note("B") + A


class C:
    field: Later = None

    def method(self) -> str:
        return D


D = _note("D")
E = _note("E")
if False:
    HIDDEN = 1


class Later:
    pass


# A forward reference, as pydantic models write them: resolved in the module when used.
ALIAS = list["Target"]


class Target:
    pass


def boom() -> None:
    raise ValueError("boom")


def __getattr__(name: str) -> Any:
    if name == "HIDDEN":
        return "from getattr"
    raise AttributeError(name)
'''


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[Path]:
    """``fakeslice`` on sys.path, its index built, the finder on; yields the cache folder."""
    source = tmp_path / "src" / f"{NAME}.py"
    source.parent.mkdir()
    source.write_text(SOURCE)
    folder = tmp_path / "cache"
    write(str(source), str(index_path(folder, NAME)))
    finder = SlicedModuleFinder([NAME])
    sys.path.insert(0, str(source.parent))
    sys.meta_path.insert(0, finder)
    sliced_module.set_cache_dir(folder)
    ran: list[str] = []
    builtins._fakeslice_ran = ran  # type: ignore[attr-defined]
    try:
        yield folder
    finally:
        sliced_module.set_cache_dir(None)
        sys.meta_path.remove(finder)
        sys.path.remove(str(source.parent))
        sys.modules.pop(NAME, None)
        del builtins._fakeslice_ran  # type: ignore[attr-defined]
        started = sliced_module._builders.pop(NAME, None)
        if started is not None:
            started.wait(timeout=60)


def ran() -> list[str]:
    return list(builtins._fakeslice_ran)  # type: ignore[attr-defined]


def load() -> ModuleType:
    return importlib.import_module(NAME)


def shipped_names() -> set[str]:
    """The names of the module run whole (its statements log into ``ran()`` too)."""
    namespace: dict[str, object] = {"__name__": "shipped"}
    exec(compile(SOURCE, "shipped", "exec"), namespace)
    return set(namespace) - {"__builtins__", "__name__"}


def test_a_name_runs_only_the_statements_it_needs(cache: Path) -> None:
    module = load()
    assert ran() == []
    assert module.B == "BA"
    assert ran() == ["A", "B"]
    # A method's body looks names up when called: they run with the class.
    assert module.C().method() == "D"
    assert ran() == ["A", "B", "D"]
    assert module.C.__annotations__ == {"field": "Later"}
    assert "Later" in vars(module) and "E" not in vars(module)


def test_a_name_in_a_type_string_runs_with_what_names_it(cache: Path) -> None:
    module = load()
    assert module.ALIAS.__args__ == ("Target",)
    assert "Target" in vars(module)


def test_from_import_runs_the_name(cache: Path) -> None:
    from fakeslice import A  # type: ignore[import-not-found]

    assert A == "A" and ran() == ["A"]


@pytest.mark.parametrize("ask", ["__all__", "dir", "star", "unknown"])
def test_what_the_index_cannot_answer_runs_the_rest(cache: Path, ask: str) -> None:
    module = load()
    assert module.A == "A"
    if ask == "dir":
        names = set(dir(module))
    elif ask == "star":
        imported: dict[str, object] = {}
        exec(f"from {NAME} import *", imported)
        names = set(vars(module))
        assert {n for n in names if not n.startswith("_")} <= set(imported)
    else:
        with pytest.raises(AttributeError):
            getattr(module, "__all__" if ask == "__all__" else "not_there")
        names = set(vars(module))
    assert ran() == ["A", "B", "D", "E"]  # each statement once
    assert shipped_names() <= names
    assert vars(module)["__getattr__"].__module__ == NAME  # the module's own, back in place
    assert module.__doc__ == "A module of definitions."


def test_the_modules_own_getattr_answers_what_no_statement_bound(cache: Path) -> None:
    module = load()
    assert module.HIDDEN == "from getattr"
    with pytest.raises(AttributeError):
        module.__wrapped__  # noqa: B018
    assert ran() == []  # neither ran the module's other statements


def test_tracebacks_point_at_the_real_file(cache: Path) -> None:
    module = load()
    with pytest.raises(ValueError) as caught:
        module.boom()
    frame = traceback.extract_tb(caught.value.__traceback__)[-1]
    assert frame.filename == module.__file__
    assert frame.lineno == SOURCE.splitlines().index('    raise ValueError("boom")') + 1
    assert frame.line == 'raise ValueError("boom")'


def test_threads_asking_at_once_share_each_statement(cache: Path) -> None:
    module = load()
    barrier = threading.Barrier(4)
    found: list[object] = []

    def ask(name: str) -> None:
        barrier.wait(timeout=10)
        found.append(getattr(module, name))

    threads = [threading.Thread(target=ask, args=(n,)) for n in ("C", "C", "E", "B")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(ran()) == ["A", "B", "D", "E"]
    classes = [value for value in found if isinstance(value, type)]
    assert len(classes) == 2 and classes[0] is classes[1]


def _shipped_at_import(folder: Path) -> None:
    """The module ran whole when imported, and the index is built again, for this file."""
    module = load()
    assert ran() == ["A", "B", "D", "E"]
    assert "__getattr__" not in vars(module) or vars(module)["__getattr__"].__module__ == NAME
    started = builder(NAME)
    assert started is not None
    assert started.wait(timeout=60) == 0
    header, _ = decode(index_path(folder, NAME).read_bytes())
    assert header["key"][0] == module.__file__
    assert header["key"][1] == os.stat(module.__file__).st_size


def test_an_index_of_another_version_of_the_file_runs_it_as_shipped(cache: Path) -> None:
    source = Path(sys.path[0]) / f"{NAME}.py"
    source.write_text(SOURCE + "\nF = 1\n")
    _shipped_at_import(cache)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_a_damaged_index_runs_it_as_shipped(cache: Path, damage: str) -> None:
    path = index_path(cache, NAME)
    data = path.read_bytes()
    middle = len(data) // 2
    damaged = {
        "truncate": data[:middle],
        "flip": data[:middle] + bytes([data[middle] ^ 1]) + data[middle + 1 :],
        "garbage": b"\x00" * 64,
        "empty": b"",
    }[damage]
    path.write_bytes(damaged)
    _shipped_at_import(cache)


def test_no_cache_folder_no_slices(cache: Path) -> None:
    sliced_module.set_cache_dir(None)
    load()
    assert ran() == ["A", "B", "D", "E"]
    assert builder(NAME) is None


# --- google.genai.types -------------------------------------------------------------------

PROBE = """
import json, sys
from pathlib import Path
{setup}
from google.genai import _api_client, types
options = types.HttpOptions(
    base_url="http://127.0.0.1:9", headers={{"A": "b"}}, timeout=5,
    retry_options=types.HttpRetryOptions(attempts=1),
)
try:
    types.HttpRetryOptions(attempts="many")
except Exception as exc:
    errors = [e["loc"] for e in exc.errors()]
slices = vars(types).get("__getattr__")
print(json.dumps({{
    "dump": options.model_dump(mode="json"),
    "fields": sorted(types.HttpOptions.model_fields),
    "errors": errors,
    "sliced": getattr(slices, "whole", None) is False,
    "names": len(vars(types)),
}}))
"""


def _probe(setup: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(setup=setup)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_google_types_in_a_slice_are_the_shipped_ones(tmp_path: Path) -> None:
    import google.genai.types as shipped

    origin = shipped.__file__
    assert origin is not None
    write(os.path.abspath(origin), str(index_path(tmp_path, "google.genai.types")))
    setup = textwrap.dedent(f"""
        from picode.ai import sliced_module
        import picode.ai.providers
        sliced_module.set_cache_dir(Path({str(tmp_path)!r}))
    """)
    sliced = _probe(setup)
    whole = _probe("")
    assert sliced.pop("sliced") is True and whole.pop("sliced") is False
    names, whole_names = sliced.pop("names"), whole.pop("names")
    assert isinstance(names, int) and isinstance(whole_names, int)
    assert names < whole_names / 10, (names, whole_names)
    assert sliced == whole


@pytest.mark.parametrize("drop", ["always", "skip", "binds", "deps", "spans", "key"])
def test_a_header_missing_a_part_is_not_an_index(cache: Path, drop: str) -> None:
    from picode.ai.slice_file import encode

    path = index_path(cache, NAME)
    header, blob = decode(path.read_bytes())
    del header[drop]
    path.write_bytes(encode(header, bytes(blob)))
    _shipped_at_import(cache)
