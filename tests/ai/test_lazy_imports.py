"""Start-up stays light: the streaming core and --version/--help import no SDK or Textual."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import picode

HEAVY = ("anthropic", "openai", "google.genai", "textual")

_REPORT_HEAVY = f"""
import json, sys
print("HEAVY=" + json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
"""


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def _printed(stdout: str) -> str:
    line = next(line for line in stdout.splitlines() if line.startswith("OUT="))
    text: str = ast.literal_eval(line.removeprefix("OUT="))
    return text


def _heavy_loaded(stdout: str) -> list[str]:
    line = next(line for line in stdout.splitlines() if line.startswith("HEAVY="))
    loaded: list[str] = json.loads(line.removeprefix("HEAVY="))
    return loaded


def test_streaming_through_the_core_imports_no_sdk() -> None:
    code = (
        """
import asyncio
from picode.ai.stream import stream_simple
from picode.ai.providers.faux import FauxProvider, text_turn
from picode.ai.types import Context, UserMessage

async def main():
    faux = FauxProvider([text_turn("hello")])
    message = await stream_simple(faux.model, Context(messages=[UserMessage("hi")])).result()
    assert message.text == "hello", message

asyncio.run(main())
"""
        + _REPORT_HEAVY
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert _heavy_loaded(result.stdout) == []


def test_the_report_would_see_an_sdk_import() -> None:
    # Guards the guard: the same probe notices a loaded SDK (a stand-in: importing the real
    # one takes seconds on a cold cache).
    code = "import sys, types; sys.modules['openai'] = types.ModuleType('openai')"
    result = _python(code + _REPORT_HEAVY)
    assert result.returncode == 0, result.stderr
    assert _heavy_loaded(result.stdout) == ["openai"]


def _run_cli(flag: str) -> subprocess.CompletedProcess[str]:
    code = (
        f"""
import contextlib, io, sys
sys.argv = ["picode", {flag!r}]
import picode.cli
out = io.StringIO()
code = 0
with contextlib.redirect_stdout(out):
    try:
        code = picode.cli.main() or 0
    except SystemExit as exc:
        code = exc.code or 0
print("OUT=" + repr(out.getvalue()))
print("CODE=" + str(code))
"""
        + _REPORT_HEAVY
    )
    return _python(code)


def test_version_imports_no_sdk_and_no_textual() -> None:
    result = _run_cli("--version")
    assert result.returncode == 0, result.stderr
    assert _printed(result.stdout).strip() == f"picode {picode.__version__}"
    assert "CODE=0" in result.stdout
    assert _heavy_loaded(result.stdout) == []


def test_help_imports_no_sdk_and_no_textual() -> None:
    result = _run_cli("--help")
    assert result.returncode == 0, result.stderr
    assert _printed(result.stdout).startswith("usage: picode")
    assert "--model" in _printed(result.stdout)
    assert "CODE=0" in result.stdout
    assert _heavy_loaded(result.stdout) == []


def test_python_dash_m_picode_version() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "picode", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"picode {picode.__version__}"
