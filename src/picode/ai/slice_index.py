"""The index of a module that ``picode.ai.sliced_module`` runs in slices, and its cache file.

For each top-level statement of the source: the names it binds, the statements it needs
(those binding a name it mentions anywhere, function bodies and type strings included),
and its code, compiled alone with the module's file name and line numbers. Building it
parses the source (~0.4 s for ``google.genai.types``), so it runs in a process of its
own at low priority (``main``) and is kept in one file per module (``slice_file``),
replaced atomically."""

from __future__ import annotations
import __future__

import ast
import contextlib
import marshal
import os
import re
import sys
import tempfile

from picode.ai.slice_file import encode, source_key

#: Statements a module may be sliced with; any other at the top level runs it as shipped.
_ALLOWED = (
    ast.Import,
    ast.ImportFrom,
    ast.ClassDef,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Assign,
    ast.AnnAssign,
    ast.If,
    ast.Try,
    ast.Expr,
    ast.Pass,
)
#: Calls that read or bind names the index cannot see, when made outside a function body.
_DYNAMIC = frozenset({"globals", "locals", "vars", "exec", "eval", "__import__", "setattr"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


class NotSliceable(Exception):
    """The module has a shape the index does not answer for."""


def build(origin: str) -> bytes:
    """The cache file's bytes for the module at ``origin``."""
    key = source_key(origin)
    with open(origin, "rb") as file:
        source = file.read()
    tree = ast.parse(source, origin)
    flags = _future_flags(tree)
    statements = tree.body
    _check_lines(statements)
    binds: dict[str, list[int]] = {}
    refs: list[set[str]] = []
    always: list[int] = []
    skip: list[int] = []
    for index, node in enumerate(statements):
        if not isinstance(node, _ALLOWED):
            raise NotSliceable(f"line {node.lineno}: {type(node).__name__}")
        _check_dynamic(node)
        for name in _bound(node):
            binds.setdefault(name, []).append(index)
        refs.append(_referenced(node))
        if isinstance(node, ast.Pass) or (index > 0 and _is_string(node)):
            skip.append(index)  # no effect; alone, a string would become ``__doc__``
        elif index == 0 and _is_string(node):
            always.append(index)  # the docstring
        elif isinstance(node, ast.Expr) or _imports(node):
            always.append(index)  # what runs for its effect
    deps = [
        sorted({j for name in names for j in binds.get(name, ()) if j != i})
        for i, names in enumerate(refs)
    ]
    blob = bytearray()
    spans: list[list[int]] = []
    for node in statements:
        module = ast.Module(body=[node], type_ignores=[])
        code = compile(module, origin, "exec", flags=flags, dont_inherit=True)
        data = marshal.dumps(code)
        spans.append([len(blob), len(data)])
        blob += data
    header = {"key": key, "binds": binds, "deps": deps, "always": always, "skip": skip}
    return encode({**header, "spans": spans}, bytes(blob))


def write(origin: str, target: str) -> None:
    """Build the index of ``origin`` and put it at ``target`` (temp file, then rename)."""
    before = source_key(origin)
    data = build(origin)
    if source_key(origin) != before:
        return  # changed while read: the next run builds it again
    folder = os.path.dirname(target)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    prefix = os.path.basename(target) + "."
    _remove_stale_temps(folder, prefix)
    handle, temp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _remove_stale_temps(folder: str, prefix: str) -> None:
    """Temp files a killed builder left (older than a minute: another may be writing)."""
    import time

    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if name.startswith(prefix) and name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    if time.time() - os.stat(path).st_mtime > 60:
                        os.unlink(path)


# --- what a statement binds and needs ----------------------------------------------------


def _future_flags(tree: ast.Module) -> int:
    flags = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for alias in node.names:
                flags |= getattr(__future__, alias.name).compiler_flag
    return flags


def _check_lines(statements: list[ast.stmt]) -> None:
    """Each statement on lines of its own (``a = 1; b = 2`` would share them)."""
    last = 0
    for node in statements:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        if first <= last:
            raise NotSliceable(f"line {node.lineno}: statements share a line")
        last = node.end_lineno or node.lineno


def _outside_functions(node: ast.AST) -> list[ast.AST]:
    """The nodes of a statement that run when it does (not those in function bodies)."""
    found: list[ast.AST] = []
    todo = [node]
    while todo:
        current = todo.pop()
        found.append(current)
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # Decorators, defaults and annotations run at definition; the body when called.
            todo.extend([*current.decorator_list, current.args])
            todo.extend([current.returns] if current.returns is not None else [])
        elif isinstance(current, ast.Lambda):
            todo.append(current.args)
        else:
            todo.extend(ast.iter_child_nodes(current))
    return found


def _check_dynamic(node: ast.stmt) -> None:
    for found in ast.walk(node):
        if isinstance(found, ast.alias) and found.name == "*":
            raise NotSliceable(f"line {node.lineno}: star import")
    for found in _outside_functions(node):
        if isinstance(found, ast.Call) and getattr(found.func, "id", None) in _DYNAMIC:
            raise NotSliceable(f"line {found.lineno}: names bound dynamically")


def _bound(node: ast.stmt) -> set[str]:
    """The module-level names a top-level statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    names: set[str] = set()
    todo: list[ast.AST] = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(current.name)  # defined in an ``if``: its body is another scope
            continue
        if isinstance(current, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp)):
            continue
        if isinstance(current, ast.GeneratorExp):
            continue
        if isinstance(current, ast.Name) and isinstance(current.ctx, (ast.Store, ast.Del)):
            names.add(current.id)
        elif isinstance(current, ast.alias):
            names.add((current.asname or current.name).partition(".")[0])
        elif isinstance(current, ast.ExceptHandler) and current.name:
            names.add(current.name)
        todo.extend(ast.iter_child_nodes(current))
    return names


def _referenced(node: ast.stmt) -> set[str]:
    """Every name a statement mentions, in function bodies too (they look names up in the
    module when called), and in strings that read as type expressions (forward refs)."""
    names: set[str] = set()
    for found in ast.walk(node):
        if isinstance(found, ast.Name):
            names.add(found.id)
        elif isinstance(found, ast.Constant) and isinstance(found.value, str):
            names |= _names_in_type_string(found.value)
    return names


def _names_in_type_string(text: str) -> set[str]:
    if text.isidentifier():
        return {text}
    if len(text) > 300 or "\n" in text:
        return set()
    try:
        expression = ast.parse(text, mode="eval")
    except SyntaxError:
        return set()
    if not all(isinstance(n, _TYPE_NODES) for n in ast.walk(expression)):
        return set()
    return set(_IDENTIFIER.findall(text))


_TYPE_NODES = (
    ast.Expression,
    ast.Name,
    ast.Load,
    ast.Attribute,
    ast.Subscript,
    ast.Tuple,
    ast.List,
    ast.BinOp,
    ast.BitOr,
    ast.Constant,
)


def _is_string(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _imports(node: ast.stmt) -> bool:
    """Whether running the statement imports something (at its own level, not in a body)."""
    return any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in _outside_functions(node))


def main(argv: list[str]) -> int:
    """``SOURCE TARGET``: write the index of SOURCE to TARGET, at low priority."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(19)
    origin, target = argv
    try:
        write(origin, target)
    except (NotSliceable, SyntaxError, ValueError, OSError):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
