"""SDK modules run in slices: a name's statements run when the name is first used.

``google.genai.types`` is 24,000 lines defining ~1,000 pydantic classes (~0.3 s of CPU and
pydantic's schema work); the API client picode sends requests through needs five of them.
For a module in ``SLICED_MODULES`` whose index is cached (``picode.ai.slice_index``: per
top-level statement, the names it binds, the statements it needs and its code compiled
from the real file), the module starts empty and a name first asked for (attribute,
``from … import``) runs, in source order, the statements it needs that have not run yet.
``__all__``, ``dir()`` or a name the index does not know run all the rest: the module is
then the shipped one. No cache folder, no index, an index for another version of the file
or a damaged one: the module runs as shipped, and on a miss the index is built by a
process of its own at low priority for the next launch. See docs/architecture.md,
"Provider SDKs: only the modules a request uses"."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import marshal
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from picode.ai import sdk_cache
from picode.ai.lazy_sdk import WrappingLoader, module_spec_wrapped
from picode.ai.slice_file import decode, source_key

#: The modules loaded this way.
SLICED_MODULES = ("google.genai.types",)

#: Builder processes started, so that each module's index is built once per process.
_builders: dict[str, Any] = {}  # subprocess.Popen


def set_cache_dir(folder: Path | None) -> None:
    """Keep indexes in ``folder`` (one file per module; None: run modules as shipped)."""
    sdk_cache.set_folder(folder)


def index_path(folder: Path, name: str) -> Path:
    return folder / "sdk-slices" / f"{name}.slice"


def builder(name: str) -> Any:
    """The process (``subprocess.Popen``) building ``name``'s index, if this one started it."""
    return _builders.get(name)


class _Slices:
    """The sliced module's ``__getattr__`` and ``__dir__``; runs statements under a lock."""

    def __init__(self, module: ModuleType, header: dict[str, Any], blob: memoryview) -> None:
        self._module = module
        self._binds: dict[str, list[int]] = header["binds"]
        self._deps: list[list[int]] = header["deps"]
        self._always: list[int] = header["always"]
        self._spans: list[list[int]] = header["spans"]
        self._blob = blob
        self._ran = [False] * len(self._spans)
        for index in header["skip"]:
            self._ran[index] = True
        self._claimed: set[int] = set()
        self._own_getattr: Any = None  # the module's own ``__getattr__``, once it ran
        self._lock = threading.RLock()
        self.whole = False
        self._dir = _Dir(self)

    def install(self) -> None:
        self._module.__dict__["__getattr__"] = self
        self._module.__dict__["__dir__"] = self._dir

    def __call__(self, name: str) -> Any:
        namespace = self._module.__dict__
        if name == "__all__" or (name not in self._binds and not name.startswith("__")):
            self.complete()  # the index cannot answer: run everything
        elif name in self._binds:
            self._run_for(self._binds[name])
        if name in namespace:
            return namespace[name]
        own = self._own_getattr
        if own is None and "__getattr__" in self._binds and not self.whole:
            self._run_for(self._binds["__getattr__"])
            own = self._own_getattr
        if own is not None:
            return own(name)
        raise AttributeError(f"module {self._module.__name__!r} has no attribute {name!r}")

    def names(self) -> list[str]:
        self.complete()
        return sorted(self._module.__dict__)

    def complete(self) -> None:
        """Run every statement not run yet; the module is then as shipped."""
        with self._lock:
            if self.whole:
                return
            self._run(range(len(self._spans)))
            if all(self._ran):
                self._finish()

    def _run_for(self, roots: Sequence[int]) -> None:
        with self._lock:
            needed: set[int] = set()
            todo = [*roots, *self._always]
            while todo:
                index = todo.pop()
                if index in needed or self._ran[index]:
                    continue
                needed.add(index)
                todo.extend(self._deps[index])
            self._run(sorted(needed))

    def _run(self, indexes: Sequence[int] | range) -> None:
        # Statements a run further up this thread's stack has claimed run there, in order.
        plan = [i for i in indexes if not self._ran[i] and i not in self._claimed]
        self._claimed.update(plan)
        namespace = self._module.__dict__
        try:
            for index in plan:
                exec(self._code(index), namespace)
                self._ran[index] = True
                self._claimed.discard(index)
                if namespace.get("__getattr__") is not self:  # the module defined its own
                    self._own_getattr = namespace["__getattr__"]
                    namespace["__getattr__"] = self
        finally:
            self._claimed.difference_update(plan)

    def _code(self, index: int) -> CodeType:
        start, length = self._spans[index]
        code = marshal.loads(self._blob[start : start + length])
        if not isinstance(code, CodeType):
            raise ImportError(f"slice index of {self._module.__name__} is damaged")
        return code

    def _finish(self) -> None:
        namespace = self._module.__dict__
        if namespace.get("__dir__") is self._dir:
            del namespace["__dir__"]
        if self._own_getattr is not None:
            namespace["__getattr__"] = self._own_getattr
        elif namespace.get("__getattr__") is self:
            del namespace["__getattr__"]
        self.whole = True
        self._blob = memoryview(b"")


class _Dir:
    __slots__ = ("_slices",)

    def __init__(self, slices: _Slices) -> None:
        self._slices = slices

    def __call__(self) -> list[str]:
        return self._slices.names()


def read_index(path: Path, origin: str) -> tuple[dict[str, Any], memoryview] | None:
    """The index at ``path`` if it is whole and made from ``origin`` as it is now."""
    try:
        header, blob = decode(path.read_bytes())
        if header.get("key") != source_key(origin):
            return None
    except (OSError, ValueError):
        return None
    return header, blob


def start_builder(name: str, origin: str, target: Path) -> None:
    """Build the index in a process of its own at low priority (once per process)."""
    if name in _builders:
        return
    import subprocess

    # Isolated (no environment, no current folder on the path): only picode's own folder.
    root = str(Path(__file__).resolve().parents[2])
    code = (
        f"import sys; sys.path.insert(0, {root!r}); from picode.ai.slice_index import main; "
        "sys.exit(main(sys.argv[1:]))"
    )
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", code, origin, str(target)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # not stopped by the terminal's Ctrl+C with picode
        )
    except OSError:
        return
    _builders[name] = process
    # Reaped as it ends rather than left a zombie until picode exits.
    threading.Thread(target=process.wait, name="slice-index-reaper", daemon=True).start()


class _SlicedLoader(WrappingLoader):
    def __init__(self, real: importlib.abc.Loader, origin: str, folder: Path) -> None:
        super().__init__(real, origin)
        self._folder = folder

    def exec_module(self, module: ModuleType) -> None:
        target = index_path(self._folder, module.__name__)
        found = read_index(target, self._origin)
        if found is None:
            self._real.exec_module(module)
            start_builder(module.__name__, self._origin, target)
            return
        _Slices(module, *found).install()


class SlicedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of ``names`` as the path finder does, with the sliced loader."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = frozenset(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        folder = sdk_cache.folder
        if fullname not in self._names or folder is None:
            return None
        return module_spec_wrapped(
            fullname,
            path,
            lambda real, origin: _SlicedLoader(real, os.path.abspath(origin), folder),
        )


_installed: list[SlicedModuleFinder] = []
_install_lock = threading.Lock()


def install(names: Sequence[str] = SLICED_MODULES) -> None:
    """Put the finder first on ``sys.meta_path`` (idempotent)."""
    with _install_lock:
        if not _installed:
            finder = SlicedModuleFinder(names)
            sys.meta_path.insert(0, finder)
            _installed.append(finder)
