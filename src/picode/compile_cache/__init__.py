"""What Python compiles at every start, compiled once per machine: dataclass methods and
regular expressions.

A start of picode defines ~300 dataclasses and compiles ~400 regular expressions (its own,
Textual's CSS tokenizer, Pygments' lexers, markdown-it's, the SDK's). Python redoes both in
every process: a dataclass's ``__init__``, ``__repr__``, ``__eq__`` ... are source text
compiled with ``exec`` (0.3–0.8 ms a class on Python 3.11, ~80 % of it the compile), and a
pattern is parsed and turned into the regex engine's code (Pygments' Python lexer alone:
~40 ms). Together ~290 ms of CPU before the first answer (docs/benchmarks.md, "Compiled
once").

Both results depend only on their input, so they are kept in the cache folder, keyed by
that input (a 128-bit digest of a dataclass's method text; a pattern and its flags). A
dataclass's code still runs through the real ``exec`` with the globals and locals Python
passed, compiled with the dataclasses module's own compiler flags; a pattern's engine code
goes to the same ``_sre.compile`` call with the same arguments Python's ``re`` made (the
engine checks that code before using it). So the objects are the ones Python builds.
Anything unexpected (no folder, a damaged or foreign file, another Python, a ``re`` whose
internals differ) falls back to compiling, as without the cache.
"""

from __future__ import annotations
import __future__

import atexit
import builtins
import contextlib
import dataclasses
import importlib
import importlib.util
import marshal
import re
import sys
import threading
from array import array
from pathlib import Path
from types import CodeType
from typing import Any

from picode.compile_cache.store import Store

try:
    from _blake2 import blake2b  # hashlib's own, without loading OpenSSL at start-up
except ImportError:  # pragma: no cover
    from hashlib import blake2b

_ORIGINAL_EXEC = builtins.exec
#: The flags ``exec`` would compile the text with: the dataclasses module's own futures.
_FLAGS = sum(
    value.compiler_flag
    for value in vars(dataclasses).values()
    if isinstance(value, type(__future__.annotations))
)

_re_compiler: Any = None
_SRE: Any = None
_ORIGINAL_RE_COMPILE: Any = None
_SRE_MAGIC = 0
_DIGEST_SIZE = 16
#: The array type of one regex engine code word.
_WORD = "I"
try:  # Python's private regex compiler: without the expected shape, patterns are not kept.
    _re_compiler = importlib.import_module("re._compiler")
    _SRE = _re_compiler._sre
    _ORIGINAL_RE_COMPILE = _re_compiler.compile
    _SRE_MAGIC = int(_SRE.MAGIC)
    _WORD = next(kind for kind in "IL" if array(kind).itemsize == _SRE.CODESIZE)
except (ImportError, AttributeError, TypeError, ValueError, StopIteration):  # pragma: no cover
    _re_compiler = None


def cache_file(cache_dir: Path) -> Path:
    """One file per interpreter, bytecode and regex engine version: none of it is portable."""
    magic = importlib.util.MAGIC_NUMBER.hex()
    return cache_dir / f"compiled-{sys.implementation.cache_tag}-{magic}-{_SRE_MAGIC}.marshal"


class CompileCache:
    """The dataclasses module's ``exec`` and ``re``'s compiler, answered from the store."""

    def __init__(self, path: Path) -> None:
        #: Dataclass texts by a digest, as marshal data; patterns by text and flags, their
        #: ``_sre.compile`` arguments as marshal data with the engine code packed.
        self.store = Store(path, ("dataclasses", "patterns"))
        self._compiling = threading.local()

    # --- dataclasses ----------------------------------------------------------------------

    def exec(
        self,
        source: Any,
        globals: dict[str, Any] | None = None,  # exec's own names
        locals: Any = None,
        /,
    ) -> None:
        if type(source) is str:
            key = _digest(source)
            kept = self.store.get("dataclasses", key)
            code = _code(kept) if kept is not None else None
            if code is None:
                code = compile(source, "<string>", "exec", flags=_FLAGS, dont_inherit=True)
                self.store.put("dataclasses", key, marshal.dumps(code))
            source = code
        _ORIGINAL_EXEC(source, globals, locals)

    # --- regular expressions --------------------------------------------------------------

    def compile_pattern(self, pattern: Any, flags: Any = 0) -> Any:
        """``re._compiler.compile``: the engine code kept for a pattern given as text."""
        if (
            type(pattern) not in (str, bytes)
            or type(flags) not in (int, re.RegexFlag)
            or flags & re.DEBUG  # prints as it compiles
        ):
            return _ORIGINAL_RE_COMPILE(pattern, flags)
        key = (pattern, int(flags))
        kept = self.store.get("patterns", key)
        if kept is not None:
            try:
                return _SRE.compile(pattern, *_unpacked(marshal.loads(kept)))
            except (TypeError, ValueError, RuntimeError, OverflowError, EOFError):
                self.store.drop("patterns", key)  # not this engine's code: compile again
        self._compiling.key = key
        try:
            return _ORIGINAL_RE_COMPILE(pattern, flags)
        finally:
            self._compiling.key = None

    def _engine_compile(self, pattern: Any, *arguments: Any) -> Any:
        """``_sre.compile`` as ``re`` calls it: its arguments kept for the pattern at hand."""
        compiled = _SRE.compile(pattern, *arguments)
        key = getattr(self._compiling, "key", None)
        if key is not None and key[0] is pattern:
            kept = _plain(arguments)
            if kept is not None:
                self.store.put("patterns", key, kept)
        return compiled


class _EngineProxy:
    """Stands for the ``_sre`` module inside ``re._compiler``: ``compile`` is recorded."""

    def __init__(self, cache: CompileCache) -> None:
        self.compile = cache._engine_compile

    def __getattr__(self, name: str) -> Any:
        return getattr(_SRE, name)


def _plain(arguments: tuple[Any, ...]) -> bytes | None:
    """The arguments as marshal data (``re`` passes int subclasses), a list of code words
    packed into bytes."""
    plain: list[Any] = []
    try:
        for value in arguments:
            if isinstance(value, int):
                value = int(value)
            elif isinstance(value, list):
                value = array(_WORD, value).tobytes()
            elif isinstance(value, dict):
                value = dict(value)
            elif isinstance(value, bytes):
                return None  # would read back as packed words
            plain.append(value)
        return marshal.dumps(tuple(plain))
    except (TypeError, ValueError, OverflowError):  # not the shape this was written for
        return None


def _unpacked(arguments: Any) -> list[Any]:
    if type(arguments) is not tuple:
        raise TypeError("not the arguments of _sre.compile")
    return [array(_WORD, value).tolist() if type(value) is bytes else value for value in arguments]


def _digest(text: str) -> bytes:
    """128 bits of BLAKE2: no two texts a start meets share one."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=_DIGEST_SIZE).digest()


def _code(data: bytes) -> CodeType | None:
    try:
        code = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    return code if type(code) is CodeType else None


_installed: CompileCache | None = None


def install(cache_dir: Path) -> CompileCache:
    """Route the dataclasses module's ``exec`` and ``re``'s compiler through the cache in
    ``cache_dir``."""
    global _installed
    if _installed is None:
        cache = _installed = CompileCache(cache_file(cache_dir))
        # A module-level name shadows the builtin for that module only.
        dataclasses.exec = cache.exec  # type: ignore[attr-defined]
        if _re_compiler is not None:
            _re_compiler._sre = _EngineProxy(cache)
            _re_compiler.compile = cache.compile_pattern
        atexit.register(save)
    return _installed


def save() -> None:
    """Keep what this process compiled for the next start (nothing when nothing is new)."""
    if _installed is not None:
        _installed.store.save()


def finish() -> None:
    """Start-up is over: keep what it compiled, then stop caching and let go of the file."""
    save()
    uninstall()


def uninstall() -> None:
    global _installed
    if _installed is not None:
        atexit.unregister(save)
        with contextlib.suppress(AttributeError):
            del dataclasses.exec  # type: ignore[attr-defined]
        if _re_compiler is not None:
            _re_compiler._sre = _SRE
            _re_compiler.compile = _ORIGINAL_RE_COMPILE
        _installed.store.close()
        _installed = None
