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
that input: the exact source text of a dataclass's methods, a pattern and its flags. A
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
import os
import re
import sys
import threading
from array import array
from pathlib import Path
from types import CodeType
from typing import Any

try:
    from _blake2 import blake2b  # hashlib's own, without loading OpenSSL at start-up
except ImportError:  # pragma: no cover
    from hashlib import blake2b

#: An entry no process used in this many saves in a row is dropped: the classes and patterns
#: of older picode or library versions, and texts that differ in every process (the
#: standard tokenizer's pattern is built from a set), do not pile up.
KEEP_UNUSED_SAVES = 8
#: Per kind, beyond this many entries the file keeps this process's alone.
MAX_ENTRIES = 4000

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
    """Compiled dataclass texts and regex engine code, read from one file and written back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        codes, patterns, self.unused = _read(path)
        #: By a digest of the text, kept as marshal data, and patterns' engine code as
        #: packed words: a few blocks of bytes rather than many objects, for as long as
        #: start-up lasts.
        self.codes: dict[bytes, bytes] = codes
        self.patterns: dict[tuple[str | bytes, int], tuple[Any, ...]] = patterns
        self.used_codes: set[bytes] = set()
        self.used_patterns: set[tuple[str | bytes, int]] = set()
        self.added = 0
        self._lock = threading.Lock()
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
            kept = self.codes.get(key)
            code = _code(kept) if kept is not None else None
            if code is None:
                code = compile(source, "<string>", "exec", flags=_FLAGS, dont_inherit=True)
                with self._lock:
                    self.codes[key] = marshal.dumps(code)
                    self.added += 1
            self.used_codes.add(key)
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
        arguments = self.patterns.get(key)
        if arguments is not None:
            self.used_patterns.add(key)
            try:
                return _SRE.compile(pattern, *_unpacked(arguments))
            except (TypeError, ValueError, RuntimeError, OverflowError):
                with self._lock:  # not this engine's code after all: compile it again
                    self.patterns.pop(key, None)
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
                with self._lock:
                    self.patterns[key] = kept
                    self.added += 1
                self.used_patterns.add(key)
        return compiled

    # --- the file ---------------------------------------------------------------------------

    def save(self) -> None:
        """Write the file back if this process compiled anything new (atomically: another
        picode may be reading it)."""
        with self._lock:
            if not self.added:
                return
            codes, unused_codes = _kept(self.codes, self.used_codes, self.unused[0])
            patterns, unused_patterns = _kept(self.patterns, self.used_patterns, self.unused[1])
            self.added = 0
            data = marshal.dumps(
                {
                    "dataclasses": codes,
                    "patterns": patterns,
                    "unused": [unused_codes, unused_patterns],
                }
            )
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            temporary.write_bytes(data)
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()


class _EngineProxy:
    """Stands for the ``_sre`` module inside ``re._compiler``: ``compile`` is recorded."""

    def __init__(self, cache: CompileCache) -> None:
        self.compile = cache._engine_compile

    def __getattr__(self, name: str) -> Any:
        return getattr(_SRE, name)


def _plain(arguments: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The arguments as plain values marshal can keep (``re`` passes int subclasses), a
    list of code words packed into bytes."""
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
        marshal.dumps(plain)
    except (TypeError, ValueError, OverflowError):  # not the shape this was written for
        return None
    return tuple(plain)


def _unpacked(arguments: tuple[Any, ...]) -> list[Any]:
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


def _kept(
    entries: dict[Any, Any], used: set[Any], unused_before: dict[Any, int]
) -> tuple[dict[Any, Any], dict[Any, int]]:
    """The entries to write and the saves since each was last used (this process counts
    once, however often it saves)."""
    unused = {key: 0 if key in used else unused_before.get(key, 0) + 1 for key in entries}
    kept = {key: value for key, value in entries.items() if unused[key] <= KEEP_UNUSED_SAVES}
    if len(kept) > MAX_ENTRIES:
        kept = {key: value for key, value in kept.items() if key in used}
    return kept, {key: unused[key] for key in kept}


Unused = tuple[dict[bytes, int], dict[tuple[str | bytes, int], int]]


def _read(
    path: Path,
) -> tuple[dict[bytes, bytes], dict[tuple[str | bytes, int], tuple[Any, ...]], Unused]:
    try:
        loaded = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}, {}, ({}, {})
    if not isinstance(loaded, dict):
        return {}, {}, ({}, {})
    codes = loaded.get("dataclasses")
    patterns = loaded.get("patterns")
    unused = loaded.get("unused")
    if not (
        isinstance(unused, list)
        and len(unused) == 2
        and all(
            isinstance(counts, dict) and all(type(n) is int for n in counts.values())
            for counts in unused
        )
    ):
        unused = [{}, {}]
    return (
        {
            text: code
            for text, code in (codes.items() if isinstance(codes, dict) else ())
            if type(text) is bytes and len(text) == _DIGEST_SIZE and type(code) is bytes
        },
        {
            key: arguments
            for key, arguments in (patterns.items() if isinstance(patterns, dict) else ())
            if type(key) is tuple
            and len(key) == 2
            and type(key[0]) in (str, bytes)
            and type(key[1]) is int
            and type(arguments) is tuple
        },
        (unused[0], unused[1]),
    )


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
        _installed.save()


def finish() -> None:
    """Start-up is over: keep what it compiled, then stop caching and let go of the entries
    (~2 MB that would otherwise stay for the session)."""
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
        _installed = None
