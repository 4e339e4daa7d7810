"""The trust fingerprint covers what the loaders can reach: links, bytecode, and past its
bounds it fails closed (asks again) instead of vouching for what it did not read."""

from __future__ import annotations

import importlib.util
import os
import py_compile
from pathlib import Path
from typing import Any

import pytest

from picode.session.extensions.loader import ExtensionHost
from picode.session.paths import Paths
from picode.session.safety.trust import assess_project, record_decision
from picode.session.safety.trust_scan import MAX_BYTES, MAX_FILES

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symlinks and sparse files")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class FakeSink:
    def __init__(self) -> None:
        self.notices: list[str] = []

    def send_message(self, text: str, deliver_as: str) -> None:
        pass

    def append_entry(self, custom_type: str, data: Any) -> None:
        pass

    def notify(self, text: str, level: str, source: str | None) -> None:
        self.notices.append(text)


def trust_now(paths: Paths, cwd: Path) -> None:
    record_decision(paths, assess_project(paths, cwd), "trusted")


def test_a_linked_package_outside_is_listed_named_and_fingerprinted(
    paths: Paths, cwd: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere" / "pkg"
    init = write(elsewhere / "__init__.py", "def register(api): pass\n")
    extensions = cwd / ".picode" / "extensions"
    extensions.mkdir(parents=True)
    (extensions / "pkg").symlink_to(elsewhere, target_is_directory=True)
    trust = assess_project(paths, cwd)
    text = "\n".join(f"{item.source}: {item.description}" for item in trust.items)
    assert "runs Python code at start-up (extensions: pkg)" in text
    assert f".picode/extensions/pkg: is a link to {elsewhere.resolve()}, outside" in text
    trust_now(paths, cwd)
    assert assess_project(paths, cwd).trusted
    init.write_text("import os\ndef register(api): os.system('x')\n", encoding="utf-8")
    assert assess_project(paths, cwd).needs_answer


def test_a_link_inside_the_project_folder_is_fingerprinted_but_not_flagged(
    paths: Paths, cwd: Path
) -> None:
    real = write(cwd / ".picode" / "shared" / "hook.py", "def register(api): pass\n")
    extensions = cwd / ".picode" / "extensions"
    extensions.mkdir(parents=True)
    (extensions / "hook.py").symlink_to(real)
    trust = assess_project(paths, cwd)
    assert not any("is a link" in item.description for item in trust.items)
    trust_now(paths, cwd)
    real.write_text("def register(api): print('changed')\n", encoding="utf-8")
    assert assess_project(paths, cwd).needs_answer


def test_a_linked_system_prompt_outside_is_named(paths: Paths, cwd: Path, tmp_path: Path) -> None:
    target = write(tmp_path / "prompt.md", "You are a pirate.")
    (cwd / ".picode").mkdir()
    (cwd / ".picode" / "SYSTEM.md").symlink_to(target)
    sources = [item.source for item in assess_project(paths, cwd).items]
    assert sources.count(".picode/SYSTEM.md") == 2  # what it does, and where it really is


def _unchecked_pyc_for(source: Path, code: str, tmp_path: Path) -> Path:
    """A ``.pyc`` that Python uses for ``source`` without looking at the source at all."""
    other = write(tmp_path / "payload" / source.name, code)
    cfile = Path(importlib.util.cache_from_source(str(source)))
    cfile.parent.mkdir(parents=True, exist_ok=True)
    py_compile.compile(
        str(other),
        cfile=str(cfile),
        doraise=True,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    return cfile


def test_a_changed_pyc_asks_again(paths: Paths, cwd: Path, tmp_path: Path) -> None:
    hook = write(cwd / ".picode" / "extensions" / "hook.py", "def register(api): pass\n")
    trust_now(paths, cwd)
    _unchecked_pyc_for(hook, "def register(api): api.notify('from the pyc')\n", tmp_path)
    assert assess_project(paths, cwd).needs_answer


def test_project_extensions_run_their_source_never_shipped_bytecode(
    cwd: Path, tmp_path: Path
) -> None:
    extensions = cwd / ".picode" / "extensions"
    hook = write(extensions / "hook.py", "def register(api):\n    api.notify('source')\n")
    _unchecked_pyc_for(hook, "def register(api):\n    api.notify('pyc')\n", tmp_path)
    package = extensions / "pkg"
    write(package / "__init__.py", "from . import helper\ndef register(api): pass\n")
    marker = tmp_path / "helper-ran"
    helper = write(tmp_path / "payload" / "helper.py", f"open({str(marker)!r}, 'w').close()\n")
    py_compile.compile(str(helper), cfile=str(package / "helper.pyc"), doraise=True)
    sink = FakeSink()
    host = ExtensionHost(
        cwd=cwd,
        user_dir=tmp_path / "user-extensions",
        project_dir=extensions,
        use_entry_points=False,
        sink=sink,
    )
    problems = host.load()
    assert sink.notices == ["source"]
    assert [loaded.name for loaded in host.loaded] == ["hook"]
    assert any("'pkg'" in problem and "failed to load" in problem for problem in problems)
    assert not marker.exists()
    assert not list((package / "__pycache__").glob("*.pyc"))  # nothing written back


def test_more_files_than_the_cap_ask_every_time(paths: Paths, cwd: Path) -> None:
    extensions = cwd / ".picode" / "extensions"
    write(extensions / "hook.py", "def register(api): pass\n")
    data = extensions / "data"
    data.mkdir()
    for index in range(MAX_FILES + 1):
        (data / f"{index:05}.txt").write_bytes(b"x")
    first = assess_project(paths, cwd)
    assert any("cannot tell whether they change" in item.description for item in first.items)
    record_decision(paths, first, "trusted")
    again = assess_project(paths, cwd)
    assert again.needs_answer
    assert again.changed
    assert not again.trusted


def test_a_big_file_changed_past_the_byte_cap_asks_again(paths: Paths, cwd: Path) -> None:
    extensions = cwd / ".picode" / "extensions"
    write(extensions / "hook.py", "def register(api): pass\n")
    big = extensions / "blob.bin"
    with big.open("wb") as handle:  # sparse: no disk is written for the hole
        handle.truncate(MAX_BYTES + 10)
    record_decision(paths, assess_project(paths, cwd), "trusted")
    with big.open("r+b") as handle:
        handle.seek(MAX_BYTES + 5)
        handle.write(b"!")
    assert assess_project(paths, cwd).needs_answer
