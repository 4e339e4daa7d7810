"""An SDK module's imports of classes it only names as types, left out until a class is used.

The Anthropic SDK's tracing code (``anthropic.lib._tracing``, imported by its base client)
imports message and parameter classes of every API, the beta ones included, to write them
in ``cast(...)``, annotations, type aliases and ``isinstance`` checks on tracing paths: ~550
modules and ~12 MB that no request of picode's uses. For the modules ``DeferringFinder`` is
given, the loader reads the source and finds the names imported from the SDK's types
(``TYPE_PACKAGES``) whose every use is one of

- the first argument of ``cast``, or an annotation outside a class body (strings at run
  time: the module must import ``annotations`` from ``__future__``);
- the class argument of ``isinstance`` / ``issubclass`` (alone or in a tuple);
- part of a module-level type alias (``A = B | C``, ``Callable[[], B]``) whose own uses are
  all of these.

Each such name gets a stand-in class before the module runs without its import: a class,
so unions and subscripts of it work; ``isinstance`` and ``issubclass`` against it answer
for the real class when the module defining it has been imported, and False while it has
not (there can be no instances of a class never created). Names used any other way, a
module without the ``__future__`` import, or anything unexpected while reading it, and the
module runs as shipped."""

from __future__ import annotations

import ast
import functools
import importlib.abc
import importlib.machinery
import importlib.util
import re
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any

from picode.ai.lazy_sdk import WrappingLoader, module_spec_wrapped

#: Where the classes that may be deferred come from.
TYPE_PACKAGES = ("anthropic.types",)
#: The modules whose type-only imports are deferred.
CONSUMERS = ("anthropic.lib._tracing.",)


class _StandInMeta(type):
    """``isinstance``/``issubclass`` against a stand-in ask the real class once it exists."""

    _defined_in: str
    _real_name: str

    def _real(cls) -> type | None:
        module = sys.modules.get(cls._defined_in)
        real = getattr(module, cls._real_name, None) if module is not None else None
        return real if isinstance(real, type) else None

    def __instancecheck__(cls, instance: Any) -> bool:
        real = cls._real()
        return real is not None and isinstance(instance, real)

    def __subclasscheck__(cls, subclass: type) -> bool:
        real = cls._real()
        return real is not None and issubclass(subclass, real)


def stand_in(name: str, defined_in: str) -> type:
    """A class standing for ``defined_in.name`` (the module where the class statement is)."""
    return _StandInMeta(name, (), {"_defined_in": defined_in, "_real_name": name})


# --- which imports can wait ----------------------------------------------------------------


def deferrable(
    tree: ast.Module, package: str, type_packages: Sequence[str] = TYPE_PACKAGES
) -> dict[str, tuple[str, str, bool]]:
    """``local name -> (module it is imported from, name there, checked)`` for the type-only
    imports; ``checked``: used in ``isinstance``/``issubclass``, itself or through an alias."""
    if not any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    ):
        return {}
    exported = _exported(tree)  # a star import elsewhere would take the stand-in
    candidates: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            source = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            if any(source == p or source.startswith(p + ".") for p in type_packages):
                for alias in node.names:
                    local = alias.asname or alias.name
                    if alias.name != "*" and local not in exported:
                        candidates[local] = (source, alias.name)
    if not candidates:
        return {}
    aliases = _type_aliases(tree)
    type_only = set(candidates) | set(aliases)
    uses: dict[str, list[tuple[ast.Name, tuple[ast.AST, ...]]]] = {n: [] for n in type_only}
    for found, parents in _walk(tree, (tree,)):
        if isinstance(found, ast.Name) and found.id in uses:
            uses[found.id].append((found, parents))
    while True:  # drop names used otherwise, and the aliases that use them, until stable
        bad = {
            name
            for name in type_only
            if not _uses_are_typing(uses[name], type_only, rebinds=name not in aliases)
        }
        bad |= {alias_name for alias_name, names in aliases.items() if names & bad}
        if not bad & type_only:
            break
        type_only -= bad
    checked = {name for name in type_only if any(_in_check(parents) for _, parents in uses[name])}
    while True:  # what an alias asked about is made of is asked about too
        more = set().union(
            *(names for alias_name, names in aliases.items() if alias_name in checked)
        )
        if more <= checked:
            break
        checked |= more
    return {
        name: (source, original, name in checked)
        for name, (source, original) in candidates.items()
        if name in type_only
    }


def _exported(tree: ast.Module) -> set[str]:
    """The strings in the module's ``__all__``."""
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            names |= {
                n.value
                for n in ast.walk(node)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            }
    return names


def _in_check(parents: tuple[ast.AST, ...]) -> bool:
    return any(
        isinstance(p, ast.Call) and getattr(p.func, "id", None) in ("isinstance", "issubclass")
        for p in parents
    )


def _type_aliases(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level ``X = <type expression>``: the names each one is built from."""
    aliases: dict[str, set[str]] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _is_type_expression(node.value)
        ):
            aliases[node.targets[0].id] = {
                n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)
            }
    return aliases


def _is_type_expression(node: ast.expr) -> bool:
    if isinstance(node, ast.BinOp):
        return (
            isinstance(node.op, ast.BitOr)
            and _is_type_expression(node.left)
            and _is_type_expression(node.right)
        )
    if isinstance(node, ast.Subscript):
        return _is_type_expression(node.value) and _is_type_expression(node.slice)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_is_type_expression(e) for e in node.elts)
    if isinstance(node, ast.Attribute):
        return _is_type_expression(node.value)
    return isinstance(node, ast.Name) or (
        isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, str))
    )


def _uses_are_typing(
    uses: list[tuple[ast.Name, tuple[ast.AST, ...]]], type_only: set[str], *, rebinds: bool
) -> bool:
    """Whether every use is a typing one; an imported name (``rebinds``) is never assigned."""
    stores = int(rebinds)
    for node, parents in uses:
        if isinstance(node.ctx, ast.Load):
            if not _typing_context(node, parents, type_only):
                return False
            continue
        stores += 1  # only a module-level alias may bind it, once
        if stores > 1 or len(parents) != 2 or not isinstance(parents[1], ast.Assign):
            return False
    return True


def _typing_context(node: ast.AST, parents: tuple[ast.AST, ...], type_only: set[str]) -> bool:
    """Whether this use of a name is one of those the module docstring lists."""
    scopes = [p for p in parents if isinstance(p, (*_FUNCTIONS, ast.ClassDef, ast.Lambda))]
    if scopes and isinstance(scopes[-1], ast.ClassDef):
        return False  # a class body: dataclasses, TypedDicts and models read annotations
    if any(isinstance(p, _FUNCTIONS) and not _plain(p) for p in scopes):
        return False  # a decorator may read the signature's annotations
    in_function = bool(scopes)
    child = node
    for depth in range(len(parents) - 1, 0, -1):
        parent = parents[depth]
        if isinstance(parent, ast.arg):
            return parent.annotation is child
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return parent.returns is child
        if isinstance(parent, ast.AnnAssign):
            # Module level: kept as a string; in a function: never evaluated.
            return parent.annotation is child and (depth == 1 or in_function)
        if isinstance(parent, ast.Call):
            func = parent.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called == "cast":
                return bool(parent.args) and parent.args[0] is child
            if called in ("isinstance", "issubclass"):
                return len(parent.args) == 2 and parent.args[1] is child
            return False
        if isinstance(parent, ast.Assign):
            target = parent.targets[0]
            return depth == 1 and isinstance(target, ast.Name) and target.id in type_only
        if not isinstance(parent, (ast.BinOp, ast.Subscript, ast.Tuple, ast.List)):
            return False
        child = parent
    return False


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_PLAIN_DECORATORS = frozenset({"property", "staticmethod", "classmethod", "override"})


def _plain(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return all(
        isinstance(d, ast.Name) and d.id in _PLAIN_DECORATORS for d in function.decorator_list
    )


def _walk(
    node: ast.AST, parents: tuple[ast.AST, ...]
) -> Iterator[tuple[ast.AST, tuple[ast.AST, ...]]]:
    """Every node under ``node`` with its ancestors, outermost first."""
    for child in ast.iter_child_nodes(node):
        yield child, parents
        yield from _walk(child, (*parents, child))


def without_imports(tree: ast.Module, names: set[str]) -> ast.Module:
    """``tree`` with ``names`` taken out of its ``from … import`` statements (in place)."""
    for index, node in enumerate(tree.body):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            kept = [a for a in node.names if (a.asname or a.name) not in names]
            if len(kept) != len(node.names):
                node.names = kept
                if not kept:
                    tree.body[index] = ast.copy_location(ast.Pass(), node)
    return tree


# --- where a class is defined ---------------------------------------------------------------


def defining_module(source_module: str, name: str) -> str | None:
    """The module whose top level has ``class name``: ``source_module`` itself, or for a
    package the submodule its ``__init__`` imports ``name`` from; None if not found so."""
    spec = importlib.util.find_spec(source_module)
    if spec is None or not isinstance(spec.origin, str):
        return None
    text = _read(spec.origin)
    if text is None:
        return None
    if re.search(rf"^class {re.escape(name)}\b", text, re.MULTILINE):
        return source_module
    if spec.submodule_search_locations is None:
        return None
    match = re.search(
        rf"^from \.(\w+) import (?:\(\s*)?{re.escape(name)}(?: as {re.escape(name)})?\b",
        text,
        re.MULTILINE,
    )
    if match is None:
        return None
    submodule = f"{source_module}.{match.group(1)}"
    sub_spec = importlib.machinery.PathFinder.find_spec(submodule, spec.submodule_search_locations)
    if sub_spec is None or not isinstance(sub_spec.origin, str):
        return None
    sub_text = _read(sub_spec.origin)
    if sub_text is None or not re.search(rf"^class {re.escape(name)}\b", sub_text, re.MULTILINE):
        return None
    return submodule


@functools.lru_cache(maxsize=8)  # a package's __init__ is read for each of its names, once
def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError):
        return None


# --- the loader -------------------------------------------------------------------------------


class _DeferringLoader(WrappingLoader):
    def __init__(
        self, real: importlib.abc.Loader, origin: str, type_packages: tuple[str, ...]
    ) -> None:
        super().__init__(real, origin)
        self._type_packages = type_packages

    def exec_module(self, module: ModuleType) -> None:
        prepared = self._prepare(module)
        if prepared is None:
            self._real.exec_module(module)
            return
        code, stand_ins = prepared
        module.__dict__.update(stand_ins)
        exec(code, module.__dict__)

    def _prepare(self, module: ModuleType) -> tuple[Any, dict[str, type]] | None:
        try:
            text = _read(self._origin)
            # Not parsed when no type package is so much as named (its last part, as a
            # relative import writes it).
            names = {package.rpartition(".")[2] for package in self._type_packages}
            if text is None or not any(name in text for name in names):
                return None
            tree = ast.parse(text, self._origin)
            package = module.__name__.rpartition(".")[0]
            found = deferrable(tree, package, self._type_packages)
            stand_ins: dict[str, type] = {}
            for local, (source, name, checked) in found.items():
                # Only a class asked about needs the module where it really is.
                defined_in = defining_module(source, name) if checked else source
                if defined_in is not None:
                    stand_ins[local] = stand_in(name, defined_in)
            if not stand_ins:
                return None
            tree = without_imports(tree, set(stand_ins))
            return compile(tree, self._origin, "exec", dont_inherit=True), stand_ins
        except Exception:  # anything unexpected: the module as shipped
            return None
        finally:
            _read.cache_clear()  # the sources read are not kept


class DeferringFinder(importlib.abc.MetaPathFinder):
    """Finds the modules named by ``consumers`` (prefixes) with the deferring loader."""

    def __init__(
        self, consumers: Sequence[str] = CONSUMERS, type_packages: Sequence[str] = TYPE_PACKAGES
    ) -> None:
        self._consumers = tuple(consumers)
        self._type_packages = tuple(type_packages)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(self._consumers):
            return None
        return module_spec_wrapped(
            fullname,
            path,
            lambda real, origin: _DeferringLoader(real, origin, self._type_packages),
        )


_installed: list[DeferringFinder] = []


def install(consumers: Sequence[str] = CONSUMERS) -> None:
    """Put the finder first on ``sys.meta_path`` (idempotent)."""
    if not _installed:
        finder = DeferringFinder(consumers)
        sys.meta_path.insert(0, finder)
        _installed.append(finder)
