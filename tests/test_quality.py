"""The linters are part of the suite: ruff (lint and format) and strict mypy stay clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_ruff_lint_is_clean() -> None:
    result = _run("ruff", "check", "src", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = _run("ruff", "format", "--check", "src", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = _run("mypy", "--no-incremental")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_points_to_the_docs_it_ships() -> None:
    """References name files under docs/ that exist; none names a spec outside the repo."""
    import re

    missing: list[str] = []
    for path in sorted((ROOT / "src" / "picode").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bSPEC §", text), f"{path.name} cites SPEC; point to docs/"
        for name in re.findall(r"docs/([\w-]+\.md)", text):
            if not (ROOT / "docs" / name).is_file():
                missing.append(f"{path.relative_to(ROOT)}: docs/{name}")
    assert not missing
