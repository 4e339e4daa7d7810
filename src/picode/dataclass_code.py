"""Dataclass methods compiled once per machine instead of at every start.

Python writes each dataclass's ``__init__``, ``__repr__``, ``__eq__`` (and ``__setattr__``,
``__hash__`` when frozen) as source text and runs it with ``exec``; compiling that text is
~80 % of a dataclass's cost (0.3–0.8 ms a class on Python 3.11). A start of picode defines
~300 of them (its own events and messages, Textual's, pydantic's, the SDK's), ~170 ms of CPU
before the first answer (docs/benchmarks.md, "Dataclass methods compiled once").

The text depends only on the class's fields and options, so its compiled code is kept in
the cache folder, keyed by the exact text, and the ``exec`` the dataclasses module calls
finds it there. The code still runs through ``exec`` with the globals and locals Python
passed: the functions are the ones Python would have built. Anything unexpected (no
cache, a damaged or foreign file, another Python) falls back to compiling, as without it.
"""

from __future__ import annotations
import __future__

import atexit
import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
import threading
from pathlib import Path
from types import CodeType
from typing import Any

#: Beyond this many kept texts the file is rewritten with this process's alone: the
#: classes of older picode or library versions do not pile up.
MAX_ENTRIES = 4000

_ORIGINAL_EXEC = builtins.exec
#: The flags ``exec`` would compile the text with: the dataclasses module's own futures.
_FLAGS = sum(
    value.compiler_flag
    for value in vars(dataclasses).values()
    if isinstance(value, type(__future__.annotations))
)


def cache_file(cache_dir: Path) -> Path:
    """One file per interpreter and bytecode version: code objects are not portable."""
    magic = importlib.util.MAGIC_NUMBER.hex()
    return cache_dir / f"dataclass-code-{sys.implementation.cache_tag}-{magic}.marshal"


class CodeCache:
    """Compiled texts by their source, read from and written back to one file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.codes: dict[str, CodeType] = _read(path)
        self.used: set[str] = set()
        self.added = 0
        self._lock = threading.Lock()

    def exec(
        self,
        source: Any,
        globals: dict[str, Any] | None = None,  # exec's own names
        locals: Any = None,
        /,
    ) -> None:
        if type(source) is str:
            code = self.codes.get(source)
            if code is None:
                code = compile(source, "<string>", "exec", flags=_FLAGS, dont_inherit=True)
                with self._lock:
                    self.codes[source] = code
                    self.added += 1
            self.used.add(source)
            source = code
        _ORIGINAL_EXEC(source, globals, locals)

    def save(self) -> None:
        """Write the file back if this process compiled anything new (atomically: another
        picode may be reading it)."""
        with self._lock:
            if not self.added:
                return
            codes = self.codes
            if len(codes) > MAX_ENTRIES:
                codes = {text: codes[text] for text in self.used if text in codes}
            self.added = 0
            data = marshal.dumps(codes)
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            temporary.write_bytes(data)
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()


def _read(path: Path) -> dict[str, CodeType]:
    try:
        loaded = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {
        text: code for text, code in loaded.items() if type(text) is str and type(code) is CodeType
    }


_installed: CodeCache | None = None


def install(cache_dir: Path) -> CodeCache:
    """Route the dataclasses module's ``exec`` through the cache in ``cache_dir``."""
    global _installed
    if _installed is None:
        _installed = CodeCache(cache_file(cache_dir))
        # A module-level name shadows the builtin for that module only.
        dataclasses.exec = _installed.exec  # type: ignore[attr-defined]
        atexit.register(save)
    return _installed


def save() -> None:
    """Keep what this process compiled for the next start (nothing when nothing is new)."""
    if _installed is not None:
        _installed.save()


def uninstall() -> None:
    global _installed
    if _installed is not None:
        atexit.unregister(save)
        with contextlib.suppress(AttributeError):
            del dataclasses.exec  # type: ignore[attr-defined]
        _installed = None
