"""The real command keeps the index of ``google.genai.types`` in its cache folder: a first
start runs the module as shipped and has the index built in the background; the next start
runs the module in slices from it (``picode.ai.sliced_module``) and sends the same."""

from __future__ import annotations

from pathlib import Path

from tests.cli.apis import GeminiDriver, use
from tests.cli.harness import PicodeEnv
from tests.support import poll_until
from tests.wire.server import WireServer

API = GeminiDriver()


def index(picode: PicodeEnv) -> Path:
    return picode.home / "cache" / "sdk-slices" / "google.genai.types.slice"


def test_a_first_start_builds_the_index_the_next_uses_it(
    wire: WireServer, picode: PicodeEnv
) -> None:
    use(API, wire, picode)
    wire.enqueue(API.text("first ", "answer"), API.text("second ", "answer"))
    first = picode.run("-p", "hello", "--model", API.model)
    assert first.returncode == 0, first.stderr
    assert "first answer" in first.stdout
    poll_until(index(picode).exists, 60, "the index built after a first start")

    second = picode.run("-p", "hello", "--model", API.model)
    assert second.returncode == 0, second.stderr
    assert "second answer" in second.stdout
    assert wire.requests[0].json == wire.requests[1].json
