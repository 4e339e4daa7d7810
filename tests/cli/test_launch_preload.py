"""The provider's SDK is imported from the moment the model is known when the first message
is given on the command line (before Textual is even imported), and not otherwise: with no
message, the first frame must not share the interpreter with the import."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from picode import launch
from picode.ai import preload
from picode.cli import build_parser

FAKE_SDK = "tests.fake_modules.sdk"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """What the launcher did, in order: ``gc paused``, ``preload <api>`` and ``tui``."""
    monkeypatch.setenv("PICODE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    seen: list[str] = []
    monkeypatch.setattr(launch, "preload_provider", lambda api: seen.append(f"preload {api}"))

    def run_tui(*args: Any, **kwargs: Any) -> int:
        seen.append("tui")
        return 0

    import picode.tui
    from picode.tui import gc_pause

    monkeypatch.setattr(picode.tui, "run_tui", run_tui)
    monkeypatch.setattr(gc_pause, "pause_collector", lambda: seen.append("gc paused"))
    return seen


def _launch(*words: str) -> int:
    return launch._launch(build_parser().parse_args(list(words)))


def test_a_prompt_on_the_command_line_starts_the_sdk_import_before_the_tui(
    calls: list[str],
) -> None:
    assert _launch("--model", "openai/gpt-5", "hello") == 0
    assert calls == ["gc paused", "preload openai-responses", "tui"]


def test_without_a_prompt_the_first_frame_goes_first(calls: list[str]) -> None:
    assert _launch("--model", "openai/gpt-5") == 0
    assert calls == ["gc paused", "tui"]


def test_print_mode_starts_the_import_before_loading_the_options(
    calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def prepare(*args: Any, **kwargs: Any) -> Any:
        calls.append("prepare")
        raise launch.LaunchError("stop here")

    monkeypatch.setattr(launch, "prepare", prepare)
    assert _launch("-p", "--model", "google/gemini-2.5-flash", "hello") == launch.EXIT_ERROR
    assert calls == ["preload google-generative-ai", "prepare"]


def test_preload_imports_the_provider_module_once_in_a_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from picode.ai import stream

    monkeypatch.delitem(sys.modules, FAKE_SDK, raising=False)
    monkeypatch.setitem(stream.PROVIDER_MODULES, "fake-api", FAKE_SDK)
    monkeypatch.setattr(preload, "_started", {})
    thread = preload.preload_provider("fake-api")
    assert isinstance(thread, threading.Thread) and thread is not threading.current_thread()
    thread.join(10)
    assert FAKE_SDK in sys.modules
    assert preload.preload_provider("fake-api") is None  # under way or done: not again


def test_a_failing_preload_is_left_for_the_first_request(monkeypatch: pytest.MonkeyPatch) -> None:
    from picode.ai import stream

    monkeypatch.setitem(stream.PROVIDER_MODULES, "broken-api", "tests.fake_modules.no_such")
    monkeypatch.setattr(preload, "_started", {})
    raised: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", raised.append)
    thread = preload.preload_provider("broken-api")
    assert thread is not None
    thread.join(10)
    assert not thread.is_alive() and raised == []


def _user_config(text: str) -> None:
    from picode.session.paths import resolve_paths

    config = resolve_paths().user_config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text, encoding="utf-8")


LOCAL_PROVIDER = """
[providers.local]
api = "openai-completions"
base_url = "http://127.0.0.1:9/v1"

[[providers.local.models]]
id = "test-model"
"""


def test_a_provider_of_the_user_config_preloads_its_api(calls: list[str]) -> None:
    _user_config(LOCAL_PROVIDER)
    assert _launch("--model", "local/test-model", "hello") == 0
    assert calls == ["gc paused", "preload openai-completions", "tui"]


@pytest.mark.parametrize(
    ("config", "ref"),
    [
        ("", "local/test-model"),  # no such provider: nothing to import
        ('[providers.local]\nbase_url = "http://127.0.0.1:9"\n', "local/test-model"),
    ],
)
def test_an_unknown_provider_preloads_nothing(calls: list[str], config: str, ref: str) -> None:
    _user_config(config)
    assert _launch("--model", ref, "hello") == 0
    assert calls == ["gc paused", "preload ", "tui"]


def test_the_quick_view_of_a_configured_provider(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PICODE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    _user_config('default_model = "local/test-model"\n' + LOCAL_PROVIDER)
    view = launch.quick_view(build_parser().parse_args([]))
    assert (view.model.provider, view.model.id, view.model.api) == (
        "local",
        "test-model",
        "openai-completions",
    )
    # A built-in provider is still resolved from the packaged models.
    view = launch.quick_view(build_parser().parse_args(["--model", "openai/gpt-5"]))
    assert (view.model.provider, view.model.api) == ("openai", "openai-responses")
