"""Fault tolerance of ``picode -p`` against a misbehaving server: each case ends with a
clear message and the right exit code, and nothing already completed is lost."""

from __future__ import annotations

from picode.ai.errors import TIMED_OUT
from tests.cli.apis import (
    AnthropicDriver,
    ApiDriver,
    ChatDriver,
    GeminiDriver,
    ResponsesDriver,
    large_write,
    use,
)
from tests.cli.harness import PicodeEnv
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.chat_protocol import ChatStream
from tests.wire.responses_protocol import ResponsesStream
from tests.wire.server import Cut, Stall, WireServer

# --- HTTP errors, every API -----------------------------------------------------------


def test_rate_limit_is_retried_after_the_servers_wait(
    api: ApiDriver, wire: WireServer, picode: PicodeEnv
) -> None:
    wire.enqueue(api.error(429, "Slow down please", {"retry-after": "0.3"}), api.text("Made it."))

    result = picode.run("-p", "hello", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Made it.\n"
    assert len(wire.requests) == 2
    assert "429" in result.stderr
    # The configured back-off is 10 ms: the 0.3 s can only come from the retry-after header.
    assert "retrying in 0.3 s" in result.stderr


def test_unauthorized_exits_1_naming_the_key(
    api: ApiDriver, wire: WireServer, picode: PicodeEnv
) -> None:
    wire.enqueue(api.error(401, "invalid x-api-key"))

    result = picode.run("-p", "hello", "--model", api.model)

    assert result.returncode == 1
    assert result.stdout == ""
    assert "401" in result.stderr and "invalid x-api-key" in result.stderr
    assert (api.key_env or "[providers.local]") in result.stderr  # the hint says what to fix
    assert "picode login" in result.stderr  # a key saved there may be the one refused
    assert "Traceback" not in result.stderr
    assert len(wire.requests) == 1  # an auth failure is not retried


# --- transient failures are retried -----------------------------------------------------


def test_overloaded_twice_then_success(wire: WireServer, picode: PicodeEnv) -> None:
    api = use(AnthropicDriver(), wire, picode)
    wire.enqueue(
        api.error(529, "Overloaded"), api.error(529, "Overloaded"), api.text("Third time lucky.")
    )

    result = picode.run("-p", "hello", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Third time lucky.\n"
    assert len(wire.requests) == 3
    assert "(attempt 1/3)" in result.stderr and "(attempt 2/3)" in result.stderr
    assert "529 Overloaded" in result.stderr


def test_error_event_mid_stream_keeps_the_partial_and_retries(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(AnthropicDriver(), wire, picode)
    broken = AnthropicStream().text("Half an ans", stop=False).error("overloaded_error", "busy")
    wire.enqueue(broken.response(), api.text("Whole answer."))

    result = picode.run("-p", "hello", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Whole answer.\n"
    assert "busy" in result.stderr
    assistants = [
        entry["message"]
        for entry in picode.session_entries()
        if entry["type"] == "message" and entry["message"]["role"] == "assistant"
    ]
    # The partial reply stays in the file, marked as failed; the retry does not replay it.
    assert [m["stop_reason"] for m in assistants] == ["error", "stop"]
    assert assistants[0]["content"][0]["text"] == "Half an ans"
    assert "Half an ans" not in wire.requests[1].body.decode()


def test_connection_cut_mid_stream_is_retried(wire: WireServer, picode: PicodeEnv) -> None:
    api = use(ChatDriver(), wire, picode)
    wire.enqueue(api.text_then("partial", Cut()), api.text("After the cut."))

    result = picode.run("-p", "hello", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "After the cut.\n"
    assert "retrying" in result.stderr
    assert len(wire.requests) == 2


def test_server_stalling_after_the_first_byte_times_out_and_retries(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(GeminiDriver(), wire, picode)
    wire.enqueue(api.text_then("Hmm", Stall()), api.text("Awake again."))

    result = picode.run("-p", "hello", "--model", api.model, env={"PICODE_IDLE_TIMEOUT": "1"})

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Awake again.\n"
    assert f"picode: {TIMED_OUT}" in result.stderr
    assert wire.requests[0].wait_closed(timeout=5), "the stalled connection must be closed"


def test_retries_exhausted_exit_1_with_the_last_error(wire: WireServer, picode: PicodeEnv) -> None:
    api = use(ChatDriver(), wire, picode)
    picode.set_retry(max_retries=1)
    wire.enqueue(api.error(503, "down for maintenance"), api.error(503, "still down"))

    result = picode.run("-p", "hello", "--model", api.model)

    assert result.returncode == 1
    assert "503" in result.stderr and "still down" in result.stderr
    assert result.stdout == ""


# --- broken streams -----------------------------------------------------------------


def test_malformed_sse_is_reported(wire: WireServer, picode: PicodeEnv) -> None:
    api = use(ResponsesDriver(), wire, picode)
    stream = ResponsesStream().created().raw("event: response.output_text.delta\ndata: {oops\n\n")
    wire.enqueue(stream.response())

    result = picode.run("-p", "hello", "--model", api.model)

    assert result.returncode == 1
    assert result.stdout == ""
    assert "picode: error:" in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_tool_argument_json_becomes_a_tool_error(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(ChatDriver(), wire, picode)
    wire.enqueue(
        api.raw_tool_call("call_bad", "read", ['{"pa', 'th": notes.txt ]]']),
        api.text("Sorry, my call was broken."),
    )

    result = picode.run("-p", "read the notes", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Sorry, my call was broken.\n"
    follow_up = wire.requests[1].json
    tool_message = next(m for m in follow_up["messages"] if m["role"] == "tool")
    assert tool_message["tool_call_id"] == "call_bad"
    assert "path" in str(tool_message["content"])  # says which argument is missing


def test_large_streamed_write_is_written_completely(wire: WireServer, picode: PicodeEnv) -> None:
    api = use(ChatDriver(), wire, picode)
    call, content = large_write(api)
    wire.enqueue(call, api.text("Written."))

    result = picode.run("-p", "write it", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Written.\n"
    assert (picode.project / "out" / "big.txt").read_text(encoding="utf-8") == content


def test_unknown_stop_reason_still_prints_the_answer(wire: WireServer, picode: PicodeEnv) -> None:
    api = use(ChatDriver(), wire, picode)
    wire.enqueue(ChatStream().text("Fine ", "answer.").end("brand_new_reason").response())

    result = picode.run("-p", "hello", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Fine answer.\n"


# --- the process itself dies -----------------------------------------------------------


def test_kill_9_mid_stream_loses_no_completed_message(wire: WireServer, picode: PicodeEnv) -> None:
    api = use(ChatDriver(), wire, picode)
    (picode.project / "notes.txt").write_text("kept-after-crash 77\n", encoding="utf-8")
    wire.enqueue(
        api.tool_call("call_r", "read", {"path": "notes.txt"}),
        api.text_then("I was about to", Stall()),
        api.text("Resumed fine."),
    )
    child = picode.start("-p", "read notes.txt", "--model", api.model)
    child.close_stdin()  # print mode reads piped stdin to its end before starting
    try:
        assert wire.wait_for_requests(2, timeout=60)
        child.kill()
        child.wait()
    finally:
        child.stop()

    result = picode.run("-p", "-c", "go on", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Resumed fine.\n"
    resumed = wire.requests[2].body.decode()
    for text in ("read notes.txt", "call_r", "kept-after-crash 77", "go on"):
        assert text in resumed
