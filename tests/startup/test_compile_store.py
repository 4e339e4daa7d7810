"""The compile cache's file (``picode.compile_cache.store``): what one process adds the
next finds, a bad file costs nothing, and the file does not pile up."""

from __future__ import annotations

import marshal
import struct
import zlib
from pathlib import Path

import pytest

from picode.compile_cache import store
from picode.compile_cache.store import Store

KINDS = ("texts", "pairs")


def test_what_a_process_adds_the_next_reads(tmp_path: Path) -> None:
    path = tmp_path / "cache"
    first = Store(path, KINDS)
    first.put("texts", b"key", b"data")
    first.put("pairs", ("a", 1), b"other")
    first.save()
    second = Store(path, KINDS)
    assert second.get("texts", b"key") == b"data"
    assert second.get("pairs", ("a", 1)) == b"other"
    assert second.get("texts", ("a", 1)) is None
    assert second.added == 0


def test_nothing_new_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cache"
    first = Store(path, KINDS)
    first.put("texts", b"key", b"data")
    first.save()
    before = path.stat().st_mtime_ns
    second = Store(path, KINDS)
    assert second.get("texts", b"key") == b"data"
    second.save()
    assert path.stat().st_mtime_ns == before


def _file(header: object, data: bytes = b"", magic: bytes = store.MAGIC) -> bytes:
    if isinstance(header, dict):
        header.setdefault("crc", zlib.crc32(data))
    head = marshal.dumps(header)
    return struct.pack("<4sI", magic, len(head)) + head + data


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"PCC1",
        b"not a cache at all",
        _file({"index": {}, "unused": {}}, magic=b"XXXX"),
        _file([1, 2]),
        _file({"index": "no", "unused": {}}),
        _file({"index": {"texts": []}, "unused": {}}),
        struct.pack("<4sI", store.MAGIC, 1000) + b"short",
    ],
    ids=["empty", "magic only", "text", "other magic", "list", "bad index", "bad kind", "cut"],
)
def test_a_damaged_file_is_ignored_and_replaced(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "cache"
    path.write_bytes(content)
    damaged = Store(path, KINDS)
    assert damaged.keys("texts") == set()
    damaged.put("texts", b"k", b"v")
    damaged.save()
    assert Store(path, KINDS).get("texts", b"k") == b"v"


def test_entries_pointing_outside_the_data_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "cache"
    index = {"texts": {b"in": 4, b"out": 2 << 32 | 40, b"odd": -1, b"bad": "x", b"tuple": (0, 4)}}
    path.write_bytes(_file({"index": index, "unused": {"texts": {b"in": "x"}}}, b"datadata"))
    read = Store(path, KINDS)
    assert read.get("texts", b"in") == b"data"
    assert [read.get("texts", key) for key in (b"out", b"odd", b"bad", b"tuple")] == [None] * 4
    read.put("texts", b"new", b"v")
    read.save()  # the entries it could not read are not written back
    assert Store(path, KINDS).keys("texts") == {b"in", b"new"}


def test_data_that_does_not_match_its_crc_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "cache"
    first = Store(path, KINDS)
    first.put("texts", b"k", b"value")
    first.save()
    content = bytearray(path.read_bytes())
    content[-1] ^= 0x01  # one bit of the data flipped
    path.write_bytes(bytes(content))
    assert Store(path, KINDS).get("texts", b"k") is None


def test_an_unwritable_folder_costs_only_the_saving(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    unsaved = Store(blocker / "cache", KINDS)
    unsaved.put("texts", b"k", b"v")
    unsaved.save()  # must not raise
    assert blocker.read_text() == ""
    assert list(tmp_path.iterdir()) == [blocker]


def test_an_entry_no_process_uses_is_dropped_after_a_few_saves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "KEEP_UNUSED_SAVES", 1)
    path = tmp_path / "cache"

    def process(*used: bytes, saves: int = 1) -> set[bytes]:
        one = Store(path, KINDS)
        for key in used:
            if one.get("texts", key) is None:
                one.put("texts", key, b"v")
        for _ in range(saves):
            one.added += 1  # as if something new came each time
            one.save()
        return Store(path, KINDS).keys("texts")

    assert process(b"a") == {b"a"}
    assert process(b"b", saves=3) == {b"a", b"b"}  # one process counts once
    assert process(b"c") == {b"b", b"c"}
    assert process(b"a", b"c") == {b"a", b"c"}


def test_past_the_limit_the_file_keeps_this_process_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "MAX_ENTRIES", 3)
    path = tmp_path / "cache"
    old = Store(path, KINDS)
    for n in range(3):
        old.put("texts", bytes([n]), b"v")
    old.save()
    new = Store(path, KINDS)
    new.put("texts", b"new", b"v")
    assert new.get("texts", bytes([0])) == b"v"
    new.save()
    assert Store(path, KINDS).keys("texts") == {b"new", bytes([0])}


def test_a_closed_store_answers_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cache"
    first = Store(path, KINDS)
    first.put("texts", b"k", b"v")
    first.save()
    second = Store(path, KINDS)
    second.close()
    assert second.get("texts", b"k") is None
