"""Dataclass methods compiled once per machine (``picode.dataclass_code``): the classes are
the ones Python builds, a second start compiles nothing, and a bad file costs nothing."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from picode import dataclass_code


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[dataclass_code.CodeCache]:
    installed = dataclass_code.install(tmp_path)
    yield installed
    dataclass_code.uninstall()


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


def test_the_classes_behave_as_those_python_builds(cache: dataclass_code.CodeCache) -> None:
    cached_run = _behaviour(_shapes())
    assert cache.added > 0
    dataclass_code.uninstall()
    assert _behaviour(_shapes()) == cached_run


def test_the_same_text_is_compiled_once(cache: dataclass_code.CodeCache) -> None:
    _shapes()
    added = cache.added
    _shapes()  # the same classes again: every text is known
    assert cache.added == added


SCRIPT = textwrap.dedent(
    """
    import dataclasses, sys
    from pathlib import Path
    from picode import dataclass_code

    cache = dataclass_code.install(Path(sys.argv[1]))

    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: int = 0

    assert Point(1) == Point(1, 0) and repr(Point(2, 3)) == "Point(x=2, y=3)"
    print(cache.added, len(cache.codes))
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
    assert list(tmp_path.iterdir()) == [dataclass_code.cache_file(tmp_path)]
    again, known = _start(tmp_path)
    assert again == 0
    assert known >= added


@pytest.mark.parametrize("content", [b"", b"not marshal at all", b"\x00" * 64, b"\xe9"])
def test_a_damaged_file_is_ignored_and_replaced(tmp_path: Path, content: bytes) -> None:
    dataclass_code.cache_file(tmp_path).write_bytes(content)
    added, _ = _start(tmp_path)
    assert added > 0
    assert _start(tmp_path)[0] == 0


def test_a_file_of_other_things_is_ignored(tmp_path: Path) -> None:
    import marshal

    foreign = {"def f(): pass": "not code", 3: compile("x = 1", "<string>", "exec")}
    dataclass_code.cache_file(tmp_path).write_bytes(marshal.dumps(foreign))
    assert dataclass_code.CodeCache(dataclass_code.cache_file(tmp_path)).codes == {}


def test_an_unwritable_folder_costs_only_the_saving(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    cache = dataclass_code.CodeCache(dataclass_code.cache_file(blocker))
    cache.exec("def f():\n return 1\n", namespace := {})
    cache.save()  # must not raise
    assert namespace["f"]() == 1
    assert blocker.read_text() == ""


def test_a_file_grown_past_the_limit_keeps_this_process_texts_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dataclass_code, "MAX_ENTRIES", 3)
    path = dataclass_code.cache_file(tmp_path)
    old = dataclass_code.CodeCache(path)
    for n in range(4):
        old.exec(f"v{n} = {n}\n", {})
    old.save()
    assert len(dataclass_code.CodeCache(path).codes) == 4  # saved whole: 4 > 3 only now
    new = dataclass_code.CodeCache(path)
    new.exec("v9 = 9\n", {})
    new.exec("v0 = 0\n", {})
    new.save()
    assert set(dataclass_code.CodeCache(path).codes) == {"v9 = 9\n", "v0 = 0\n"}
