"""An SDK's re-exporting packages loaded lazily: a name is imported when it is first used.

The official SDKs are generated with package ``__init__`` files that do nothing but
re-export (``anthropic.types`` imports ~600 modules of models, ``anthropic.types.beta``
~1,000), so importing the client for one API pulls in every API's types: ~3,300 modules
and ~1.5 s for ``anthropic``. For a package whose ``__init__`` is only such imports, the
finder below gives a module that knows where each re-exported name lives and imports it on
first access (PEP 562 ``__getattr__``). A subpackage with any other statement runs as
shipped; the top-level package is indexed too, its other statements waiting. Anything the
index cannot answer (``__all__``, a star import, a name bound some other
way) runs the real ``__init__`` once, so the package is then exactly what it would have
been; only the cost moved. A module named in ``DEFERRED_MODULES`` whose top level only
imports and defines runs on first use of any of its names, its functions forwarding to the
real ones until then. See docs/architecture.md, "Provider SDKs: only the modules a request
uses"."""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import re
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

#: The SDK distributions loaded this way (the packages they ship are pure re-exports).
LAZY_ROOTS = ("anthropic", "openai")

#: Packages indexed like a top-level one, their subpackages as shipped: ``google.genai``
#: imports its types (24,000 lines) and the client of every API (~170 modules) to
#: re-export them, when a request needs its API client and errors only.
LAZY_PACKAGES = ("google.genai",)

#: Modules that run when first used, their functions forwarding until then: the Anthropic
#: client imports ``make_status_error`` from one that imports ~170 error classes (~340
#: modules with what they import) for the error responses it may never get.
DEFERRED_MODULES = ("anthropic._error_classes",)

#: What a re-exporting ``__init__`` is made of: imports from its own submodules (one dot),
#: ``typing``, ``__all__``, comments and blank lines.
_ALLOWED_LINE = re.compile(
    r"(?:from \.(?!\.)[\w.]* import |from __future__ import |import typing\b|__all__\b|$|#)"
)
_IMPORT = re.compile(r"from \.(?!\.)([\w.]*) import (.*)")


def reexports(source: str, *, strict: bool = True) -> dict[str, tuple[str, str]] | None:
    """``name → (submodule, name there)`` for an ``__init__`` made only of relative imports
    (``from .x import A as B``; ``from . import x`` gives ``(x, "")``), or None when the
    file does anything else. Not ``strict``, other statements are passed over: what they
    define is found by running the whole file."""
    index: dict[str, tuple[str, str]] = {}
    lines = iter(source.splitlines())
    for line in lines:
        if not _ALLOWED_LINE.match(line):
            if line.startswith(('"""', "'''")) and not index:
                if not _skip_docstring(line, lines):
                    return None
                continue
            if strict:
                return None
            if line.rstrip().endswith(("(", "[", "{")):
                _skip_brackets(line, lines)
            continue
        match = _IMPORT.match(line)
        if match is None:
            if line.startswith("__all__"):
                _skip_brackets(line, lines)
            continue
        module, names = match.groups()
        if names.startswith("("):
            parts = [names]
            while ")" not in parts[-1]:
                parts.append(next(lines, ")"))
            names = "\n".join(parts)
        for part in re.sub(r"#[^\n]*", "", names).strip("() ").split(","):
            words = part.split()
            if not words:
                continue
            if len(words) not in (1, 3) or (len(words) == 3 and words[1] != "as"):
                return None
            if module:
                index[words[-1]] = (module, words[0])
            else:
                index[words[-1]] = (words[0], "")
    return index


def _skip_docstring(first: str, lines: Any) -> bool:
    quote = first[:3]
    if first.count(quote) >= 2:
        return True
    return any(quote in line for line in lines)


def _skip_brackets(first: str, lines: Any) -> None:
    depth = _depth(first)
    while depth > 0:
        line = next(lines, "]")
        depth += _depth(line)


class _Resolver:
    """The lazy package's ``__getattr__``."""

    __slots__ = ("_defined", "_has_getattr", "_index", "_lock", "_module", "_real", "_state")

    def __init__(
        self,
        module: ModuleType,
        index: dict[str, tuple[str, str]],
        real: importlib.abc.Loader,
        defined: frozenset[str] = frozenset(),
    ) -> None:
        self._module = module
        self._index = index
        self._real = real
        #: Names the package's other statements bind (``__version__``, its ``__getattr__``).
        self._defined = defined
        self._has_getattr = "__getattr__" in defined
        self._lock = threading.RLock()
        self._state = "lazy"  # → "running" → "whole"

    def __call__(self, name: str) -> Any:
        where = self._index.get(name)
        package = self._module.__name__
        if where is None:
            return self._complete(name)
        submodule, original = where
        if not original:
            return importlib.import_module(f"{package}.{submodule}")
        value = getattr(importlib.import_module(f"{package}.{submodule}"), original)
        setattr(self._module, name, value)
        return value

    def _complete(self, name: str) -> Any:
        """Run the package's own ``__init__``: what the index does not know, it defines."""
        probe = name.startswith("__") and name != "__all__" and name not in self._defined
        if probe:  # a dunder probe (``__wrapped__``): not worth running the package for
            raise AttributeError(f"module {self._module.__name__!r} has no attribute {name!r}")
        if _is_submodule(self._module, name):
            if self._has_getattr:
                # The package's own ``__getattr__`` may import it; importing it is all
                # that ``from package import submodule`` would do in any case.
                return importlib.import_module(f"{self._module.__name__}.{name}")
            # ``from package import submodule`` imports it once this fails.
            raise AttributeError(f"module {self._module.__name__!r} has no attribute {name!r}")
        with self._lock:  # other threads wait here until the package is whole
            if self._state == "running":  # asked by the package's own __init__
                raise AttributeError(f"module {self._module.__name__!r} has no attribute {name!r}")
            self.complete()
        return getattr(self._module, name)

    def complete(self) -> None:
        """Run the module's own code once; a call while it runs (from it) returns at once."""
        with self._lock:
            if self._state == "lazy":
                self._state = "running"
                try:
                    self._real.exec_module(self._module)
                except BaseException:
                    self._state = "lazy"
                    raise
                self._state = "whole"
                if self._module.__dict__.get("__getattr__") is self:
                    del self._module.__dict__["__getattr__"]


def _is_submodule(module: ModuleType, name: str) -> bool:
    path = getattr(module, "__path__", None)
    full = f"{module.__name__}.{name}"
    return bool(path) and importlib.machinery.PathFinder.find_spec(full, path) is not None


def module_spec_wrapped(
    fullname: str,
    path: Sequence[str] | None,
    wrap: Callable[[importlib.abc.Loader, str], importlib.abc.Loader],
) -> importlib.machinery.ModuleSpec | None:
    """The path finder's spec for ``fullname``; a module (not a package) from a ``.py``
    source gets the loader ``wrap`` makes of the real one and the source's path."""
    spec = importlib.machinery.PathFinder.find_spec(fullname, path)
    if spec is None or spec.loader is None or spec.submodule_search_locations is not None:
        return spec
    if isinstance(spec.origin, str) and spec.origin.endswith(".py"):
        spec.loader = wrap(spec.loader, spec.origin)
    return spec


class WrappingLoader(importlib.abc.Loader):
    """Creates the module as the real loader does; how it runs is the subclass's."""

    def __init__(self, real: importlib.abc.Loader, origin: str) -> None:
        self._real = real
        self._origin = origin

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._real.create_module(spec)


class _LazyPackageLoader(WrappingLoader):
    def __init__(self, real: importlib.abc.Loader, origin: str, *, strict: bool) -> None:
        super().__init__(real, origin)
        self._strict = strict

    def exec_module(self, module: ModuleType) -> None:
        try:
            with open(self._origin, encoding="utf-8") as file:
                source = file.read()
            index = reexports(source, strict=self._strict)
        except (OSError, UnicodeDecodeError):
            index = None
        if not index:
            self._real.exec_module(module)
            return
        defined = frozenset() if self._strict else _defined_otherwise(source)
        resolver = _Resolver(module, index, self._real, defined)
        setattr(module, "__getattr__", resolver)  # noqa: B010


_TOP_LEVEL_BINDING = re.compile(
    r"^(?:(?:async )?def |class )?(\w+)\s*(?:\(|:|=(?!=))", re.MULTILINE
)


def _defined_otherwise(source: str) -> frozenset[str]:
    """Names bound at the top level by statements other than imports (a superset: any
    line starting ``name =``, ``def name(`` or ``class name``)."""
    return frozenset(m.group(1) for m in _TOP_LEVEL_BINDING.finditer(source))


class _DeferredModuleLoader(WrappingLoader):
    """A module of functions and definitions only, run on first use of any name; until then
    each top-level function is a stand-in that runs the module and calls the real one."""

    def exec_module(self, module: ModuleType) -> None:
        functions = _functions_of_definitions_only(self._origin)
        if not functions:
            self._real.exec_module(module)
            return
        resolver = _Resolver(module, {}, self._real)
        setattr(module, "__getattr__", resolver)  # noqa: B010
        for name in functions:
            setattr(module, name, _forwarder(module, resolver, name))


def _forwarder(module: ModuleType, resolver: _Resolver, name: str) -> Any:
    def forward(*args: Any, **kwargs: Any) -> Any:
        if module.__dict__.get("__getattr__") is resolver:
            resolver.complete()
        return module.__dict__[name](*args, **kwargs)

    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = module.__name__
    return forward


def _functions_of_definitions_only(origin: str) -> list[str]:
    """The top-level functions of a module whose top level only imports and defines (no
    call runs there but in what it assigns), each bound once; [] for any other module."""
    try:
        with open(origin, encoding="utf-8") as file:
            tree = ast.parse(file.read(), origin)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    functions: list[str] = []
    bound: list[str] = []
    for index, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return []
            bound.extend((a.asname or a.name).partition(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef):
            if node.decorator_list:
                return []
            functions.append(node.name)
        elif isinstance(node, ast.ClassDef):
            bound.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound.extend(t.id for t in targets if isinstance(t, ast.Name))
        elif not (index == 0 and isinstance(node, ast.Expr)):  # the docstring
            return []
    if len(set(functions)) != len(functions) or set(functions) & set(bound):
        return []
    return functions


class LazySdkFinder(importlib.abc.MetaPathFinder):
    """Finds the packages of ``roots`` like the path finder does, with a lazy loader."""

    def __init__(
        self,
        roots: Sequence[str],
        deferred: Sequence[str] = (),
        packages: Sequence[str] = (),
    ) -> None:
        self._roots = tuple(roots)
        self._deferred = frozenset(deferred)
        self._packages = frozenset(packages)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        listed = fullname in self._packages
        if not listed and fullname.partition(".")[0] not in self._roots:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        if spec.submodule_search_locations is None:
            if fullname in self._deferred and isinstance(spec.origin, str):
                spec.loader = _DeferredModuleLoader(spec.loader, spec.origin)
            return spec
        if not isinstance(spec.origin, str) or not spec.origin.endswith("__init__.py"):
            return spec
        strict = not listed and "." in fullname  # a root's subpackage
        spec.loader = _LazyPackageLoader(spec.loader, spec.origin, strict=strict)
        return spec


_installed: list[LazySdkFinder] = []
_install_lock = threading.Lock()


def install(roots: Sequence[str] = LAZY_ROOTS) -> None:
    """Load the packages of ``roots`` not imported yet lazily from now on (idempotent)."""
    with _install_lock:
        if _installed:
            return
        finder = LazySdkFinder(roots, DEFERRED_MODULES, LAZY_PACKAGES)
        sys.meta_path.insert(0, finder)
        _installed.append(finder)


def _depth(line: str) -> int:
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")
