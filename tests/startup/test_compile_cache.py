"""What Python compiles at every start, compiled once per machine (``picode.compile_cache``):
the classes and patterns are the ones Python builds, a second start compiles nothing, and
a bad file costs nothing."""

from __future__ import annotations

import dataclasses
import marshal
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from picode import compile_cache

digest = compile_cache._digest


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[compile_cache.CompileCache]:
    installed = compile_cache.install(tmp_path)
    yield installed
    compile_cache.uninstall()


def _shapes() -> dict[str, type]:
    """Classes covering what dataclasses generate: defaults, factories, frozen, slots,
    order, keyword-only fields, ``__post_init__`` and ``InitVar``."""

    @dataclasses.dataclass
    class Plain:
        a: int
        b: str = "b"
        c: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True, order=True)
    class FrozenSlots:
        x: int
        y: float = 1.5

    @dataclasses.dataclass(kw_only=True)
    class Keywords:
        name: str
        scale: dataclasses.InitVar[int] = 2
        doubled: str = dataclasses.field(init=False, default="")

        def __post_init__(self, scale: int) -> None:
            self.doubled = self.name * scale

    return {"plain": Plain, "frozen": FrozenSlots, "keywords": Keywords}


def _behaviour(shapes: dict[str, type]) -> list[object]:
    plain, frozen, keywords = shapes["plain"], shapes["frozen"], shapes["keywords"]
    one = plain(1)
    seen: list[object] = [repr(one), one == plain(1), one == plain(2), one.c is not plain(1).c]
    point = frozen(3)
    seen += [repr(point), hash(point) == hash(frozen(3)), point < frozen(4)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 4  # type: ignore[misc]
    seen += [hasattr(point, "__dict__"), keywords(name="ab").doubled, repr(keywords(name="c"))]
    for shape in shapes.values():
        seen.append(shape.__init__.__annotations__)  # type: ignore[misc]
        seen.append(shape.__init__.__defaults__)  # type: ignore[misc]
        seen.append(shape.__init__.__kwdefaults__)  # type: ignore[misc]
    return seen


def test_the_classes_behave_as_those_python_builds(cache: compile_cache.CompileCache) -> None:
    cached_run = _behaviour(_shapes())
    assert cache.store.added > 0
    compile_cache.uninstall()
    assert _behaviour(_shapes()) == cached_run


def test_the_same_text_is_compiled_once(cache: compile_cache.CompileCache) -> None:
    _shapes()
    added = cache.store.added
    _shapes()  # the same classes again: every text is known
    assert cache.store.added == added


SCRIPT = textwrap.dedent(
    """
    import dataclasses, re, sys
    from pathlib import Path
    from picode import compile_cache

    cache = compile_cache.install(Path(sys.argv[1]))

    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: int = 0

    assert Point(1) == Point(1, 0) and repr(Point(2, 3)) == "Point(x=2, y=3)"
    assert re.compile(r"(?P<word>[a-z]+)-(\\d+)", re.I).match("Ab-12").groups() == ("Ab", "12")
    print(cache.store.added, len(cache.store.keys("dataclasses") | cache.store.keys("patterns")))
    """
)


def _start(folder: Path) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(folder)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    added, known = done.stdout.split()
    return int(added), int(known)


def test_a_second_start_compiles_nothing(tmp_path: Path) -> None:
    added, _ = _start(tmp_path)
    assert added > 0
    assert list(tmp_path.iterdir()) == [compile_cache.cache_file(tmp_path)]
    again, known = _start(tmp_path)
    assert again == 0
    assert known >= added


@pytest.mark.parametrize("content", [b"", b"not marshal at all", b"\x00" * 64, b"\xe9"])
def test_a_damaged_file_is_ignored_and_replaced(tmp_path: Path, content: bytes) -> None:
    compile_cache.cache_file(tmp_path).write_bytes(content)
    added, _ = _start(tmp_path)
    assert added > 0
    assert _start(tmp_path)[0] == 0


#: Patterns of every kind the engine compiles: groups by name and number, flags given and
#: inline, bytes, look-arounds, repeats, Unicode classes, and Pygments-sized alternations.
PATTERNS: list[tuple[str | bytes, int]] = [
    (r"(?P<word>[a-z]+)-(\d+)", re.IGNORECASE),
    (r"(?x) ^ \s* (?:def|class) \s+ (\w+) # a name", 0),
    (rb"\x1b\[[0-9;]*[A-Za-z]", 0),
    (r"(?<=\$)\d+(?:\.\d\d)?(?!\d)", re.MULTILINE | re.DOTALL),
    (r"[^\W\d_]{2,5}?|\u00e9+", re.ASCII),
    ("|".join(f"k{n}w" for n in range(300)), 0),
    (r"(a)(b)?(?(2)c|d)", 0),
]


@pytest.mark.parametrize(
    ("pattern", "flags"),
    PATTERNS,
    ids=["named", "verbose", "bytes", "look-around", "ascii", "alternation", "conditional"],
)
def test_a_kept_pattern_is_the_one_re_builds(
    cache: compile_cache.CompileCache, pattern: str | bytes, flags: int
) -> None:
    compiled = re.compile(pattern, flags)
    assert (pattern, int(flags)) in cache.store.keys("patterns")
    re.purge()  # re's own cache would answer without asking the compiler
    kept = re.compile(pattern, flags)
    assert kept is not compiled
    # Pattern equality compares the flags, the text and the engine code itself.
    assert kept == compiled
    assert (kept.groups, kept.groupindex, kept.flags) == (
        compiled.groups,
        compiled.groupindex,
        compiled.flags,
    )
    compile_cache.uninstall()
    re.purge()
    assert re.compile(pattern, flags) == kept


def test_a_kept_pattern_is_not_compiled_again(
    cache: compile_cache.CompileCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    re.compile(r"(?P<x>once)+")
    re.purge()
    calls: list[object] = []
    original = compile_cache._ORIGINAL_RE_COMPILE
    monkeypatch.setattr(
        compile_cache, "_ORIGINAL_RE_COMPILE", lambda *a: calls.append(a) or original(*a)
    )
    assert re.compile(r"(?P<x>once)+").match("onceonce")
    assert calls == []


def test_engine_code_that_does_not_fit_is_compiled_again(
    cache: compile_cache.CompileCache,
) -> None:
    bad = marshal.dumps((0, b"\xff\xff\x00\x00", 0, {}, ()))  # not code this engine takes
    cache.store.put("patterns", ("abc", 0), bad)
    re.purge()
    assert re.compile("abc").match("abc")
    assert cache.store.get("patterns", ("abc", 0)) != bad


def test_finishing_keeps_what_start_up_compiled_and_lets_go(tmp_path: Path) -> None:
    compile_cache.install(tmp_path)
    _shapes()
    re.compile(r"finish(ed)?")
    compile_cache.finish()
    assert "exec" not in vars(dataclasses)
    assert compile_cache._re_compiler.compile is compile_cache._ORIGINAL_RE_COMPILE
    kept = compile_cache.CompileCache(compile_cache.cache_file(tmp_path)).store
    assert kept.keys("dataclasses") and ("finish(ed)?", 0) in kept.keys("patterns")


def test_a_start_whose_cache_cannot_be_set_up_goes_on_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from picode import cli
    from picode.session import paths

    def no_paths() -> None:
        raise RuntimeError("no home")

    monkeypatch.setattr(paths, "resolve_paths", no_paths)
    cli.compile_once()  # must not raise
    assert "exec" not in vars(dataclasses)
    assert compile_cache._installed is None
