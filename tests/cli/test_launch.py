"""Command-line handling of the real executable: prompts from arguments, files and stdin;
problems found before any request (exit 1 or 2, with what to do); Ctrl+C."""

from __future__ import annotations

import pytest

from tests.cli.apis import AnthropicDriver, ChatDriver
from tests.cli.harness import PicodeEnv
from tests.wire.server import Stall, WireServer


def test_missing_api_key_names_the_variable(picode: PicodeEnv) -> None:
    result = picode.run("-p", "hello", "--model", AnthropicDriver.model)

    assert result.returncode == 1
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr


def test_no_key_at_all_lists_every_variable(picode: PicodeEnv) -> None:
    result = picode.run("-p", "hello")

    assert result.returncode == 1
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        assert variable in result.stderr


@pytest.mark.parametrize(
    ("model", "suggestion"),
    [
        ("claude-sonet-4-6", "anthropic/claude-sonnet-4-6"),
        ("antropic/claude-sonnet-4-6", "anthropic/"),
    ],
)
def test_unknown_model_lists_close_matches(picode: PicodeEnv, model: str, suggestion: str) -> None:
    result = picode.run("-p", "hello", "--model", model)

    assert result.returncode == 1
    assert "Unknown" in result.stderr
    assert suggestion in result.stderr


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        (["-p", "-c", "--no-session", "hi"], 2, "cannot be combined"),
        (["-p", "-r"], 1, "needs the TUI"),
        (["-p", "--tools", "read,telepathy", "hi"], 1, "telepathy"),
        (["-p", "--session", "abc123", "hi"], 1, "abc123"),
        (["-p"], 2, "needs a prompt"),
        (["--mode", "rpc", "a prompt"], 2, "stdin"),
    ],
    ids=["continue-without-session", "resume-picker", "tools", "session-id", "no-prompt", "rpc"],
)
def test_bad_invocations_explain_themselves(
    wire: WireServer, picode: PicodeEnv, arguments: list[str], code: int, message: str
) -> None:
    picode.add_config(ChatDriver().config(wire))

    result = picode.run(*arguments, "--model", ChatDriver.model)

    assert result.returncode == code, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert wire.requests == []


def test_at_file_and_piped_stdin_join_the_prompt(wire: WireServer, picode: PicodeEnv) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    (picode.project / "spec.md").write_text("# Spec\nthe-attached-file-body\n", encoding="utf-8")
    wire.enqueue(api.text("Summary."))

    result = picode.run(
        "-p",
        "--no-session",
        "summarise @spec.md and @missing.md",
        "--model",
        api.model,
        stdin="piped-diff-text\n",
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Summary.\n"
    sent = str(wire.requests[0].json["messages"])
    for text in ("summarise @spec.md", "@missing.md", "the-attached-file-body", "piped-diff-text"):
        assert text in sent
    assert "@missing.md: no such file" in result.stderr
    assert '<file path="spec.md" lines="2">' in sent
    assert picode.session_files() == []  # --no-session writes nothing


def test_ctrl_c_aborts_closes_the_connection_and_saves(wire: WireServer, picode: PicodeEnv) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    wire.enqueue(api.text_then("Let me think", Stall()))
    child = picode.start("-p", "a long question", "--model", api.model)
    child.close_stdin()
    try:
        assert wire.wait_for_requests(1, timeout=60)
        child.interrupt()
        assert child.wait() == 130
    finally:
        child.stop()

    assert wire.requests[0].wait_closed(timeout=5)
    assert "interrupted" in child.stderr()
    messages = [e["message"] for e in picode.session_entries() if e["type"] == "message"]
    assert messages[0]["role"] == "user"
    assert messages[0]["content"] in (
        "a long question",
        [{"type": "text", "text": "a long question"}],
    )
    assert messages[-1]["role"] == "assistant" and messages[-1]["stop_reason"] == "aborted"


def test_approve_without_a_terminal_refuses_instead_of_running(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    wire.enqueue(
        api.tool_call("call_sh", "bash", {"command": "touch made-by-bash"}),
        api.text("I was not allowed."),
    )

    result = picode.run("-p", "--approve", "make a file", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "I was not allowed.\n"
    assert not (picode.project / "made-by-bash").exists()
    assert "without a terminal" in wire.requests[1].body.decode()
