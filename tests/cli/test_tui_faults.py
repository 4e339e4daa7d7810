"""Fault tolerance of the interactive TUI: the real ``picode`` in a pseudo-terminal against a
misbehaving server. Each case ends with a clear message on screen, the process alive, a
follow-up prompt answered normally, and a clean quit (exit code 0)."""

from __future__ import annotations

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from picode.ai.errors import CONNECTION_LOST, TIMED_OUT
from tests.cli.apis import AnthropicDriver, large_write
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import CTRL_D, CTRL_O, ESCAPE, Start, Terminal
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.server import Cut, Stall, WireServer

API = AnthropicDriver()


# --- helpers --------------------------------------------------------------------------


def idle(terminal: Terminal) -> str:
    """Neither working nor counting down to a retry."""
    return terminal.wait_until(
        lambda screen: "Working…" not in screen and "esc to cancel" not in screen, "idle"
    )


def answers_again(terminal: Terminal, wire: WireServer) -> None:
    """Alive, and a new prompt goes out and is answered: the fault left nothing stuck."""
    assert terminal.alive
    idle(terminal)
    wire.enqueue(API.text("Still ", "here."))
    terminal.type("still there?")
    terminal.wait_for_text("› still there?")  # sent, not queued as steering
    terminal.wait_for_text("Still here.")
    assert "still there?" in wire.requests[-1].body.decode()


def quits_cleanly(terminal: Terminal) -> None:
    idle(terminal)
    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0
    assert b"Traceback" not in terminal.output


# --- HTTP errors ----------------------------------------------------------------------


def test_unauthorized_is_shown_and_not_retried(tui: Start, wire: WireServer) -> None:
    wire.enqueue(API.error(401, "invalid x-api-key"))
    terminal = tui()

    terminal.type("hello")
    terminal.wait_for_text("Error: 401 Unauthorized (check the API key): invalid x-api-key")

    answers_again(terminal, wire)
    assert len(wire.requests) == 2  # the failed prompt once, then the follow-up
    quits_cleanly(terminal)


def test_rate_limit_counts_down_the_servers_wait_then_answers(tui: Start, wire: WireServer) -> None:
    wire.enqueue(API.error(429, "Slow down please", {"retry-after": "1.5"}), API.text("Made it."))
    terminal = tui()

    terminal.type("hello")
    # The wait shown is the one picode keeps (here the server's), not a quote of the server.
    waiting = terminal.wait_for_text("retry 1/3 in 1.5 s")
    assert "(retry after" not in waiting
    terminal.wait_for_text("Made it.")
    # The outcome replaces the retry line once the answer has ended.
    screen = terminal.wait_for_text("Answered after 1 retry")
    assert "Error:" not in screen

    # The configured back-off is 10 ms: a wait this long can only come from the header.
    assert wire.requests[1].received_at - wire.requests[0].received_at >= 1.4
    answers_again(terminal, wire)
    quits_cleanly(terminal)


def test_overloaded_twice_then_the_answer(tui: Start, wire: WireServer) -> None:
    wire.enqueue(
        API.error(529, "Overloaded"), API.error(529, "Overloaded"), API.text("Third time lucky.")
    )
    terminal = tui()

    terminal.type("hello")
    terminal.wait_for_text("Third time lucky.")
    screen = terminal.wait_for_text("Answered after 2 retries")

    # One line for the whole sequence, the failed attempts' errors gone.
    assert "Error:" not in screen
    assert screen.count("Overloaded") == 1
    assert len(wire.requests) == 3
    answers_again(terminal, wire)
    quits_cleanly(terminal)


def test_a_message_typed_during_the_countdown_replaces_the_retry(
    tui: Start, wire: WireServer, picode: PicodeEnv
) -> None:
    picode.set_retry(base_delay_ms=20_000, max_delay_ms=20_000)
    wire.enqueue(API.error(529, "Overloaded"), API.error(529, "Overloaded"))
    terminal = tui()

    terminal.type("hello")
    terminal.wait_for_text("retry 1/3 in 20 s")
    terminal.type("do this instead")

    # At once, not after the 20 s wait: the pending retry is cancelled where it shows...
    screen = terminal.wait_for_text("cancelled: your new message is sent instead")
    # ...and the new message's own failure starts a new sequence at attempt 1.
    screen = terminal.wait_for_text("Overloaded — retry 1/3 in 20 s")
    assert "retry 2/3" not in screen
    assert "do this instead" in wire.requests[1].body.decode()
    terminal.send(ESCAPE)
    terminal.wait_for_text("Retry 1/3 cancelled (529 Overloaded)")
    answers_again(terminal, wire)
    quits_cleanly(terminal)


def test_giving_up_leaves_one_line_not_one_per_attempt(
    tui: Start, wire: WireServer, picode: PicodeEnv
) -> None:
    wire.enqueue(*[API.error(429, "Slow down")] * 4)
    terminal = tui()

    terminal.type("hello")
    screen = terminal.wait_for_text("Gave up after 3 retries")

    assert screen.count("Slow down") == 1 and "Error:" not in screen
    assert len(wire.requests) == 4
    answers_again(terminal, wire)
    quits_cleanly(terminal)


# --- broken streams -------------------------------------------------------------------


def test_error_event_mid_stream_keeps_the_partial_and_retries(tui: Start, wire: WireServer) -> None:
    broken = AnthropicStream().text("Half an ans", stop=False).error("overloaded_error", "busy")
    wire.enqueue(broken.response(), API.text("Whole answer."))
    terminal = tui()

    terminal.type("hello")
    terminal.wait_for_text("Whole answer.")
    screen = terminal.wait_for_text("Answered after 1 retry (Overloaded: busy)")

    assert screen.count("Half an ans") == 1 and "Error:" not in screen
    assert "Half an ans" not in wire.requests[1].body.decode()  # the retry does not replay it
    answers_again(terminal, wire)
    quits_cleanly(terminal)


def test_connection_cut_mid_stream_is_retried(tui: Start, wire: WireServer) -> None:
    wire.enqueue(API.text_then("partial", Cut()), API.text("After the cut."))
    terminal = tui()

    terminal.type("hello")
    terminal.wait_for_text("After the cut.")
    screen = terminal.wait_for_text(f"Answered after 1 retry ({CONNECTION_LOST}")

    assert "Error:" not in screen and "partial" in screen
    answers_again(terminal, wire)
    quits_cleanly(terminal)


def test_server_stalling_after_the_first_bytes_times_out_and_retries(
    tui: Start, wire: WireServer
) -> None:
    wire.enqueue(API.text_then("Hmm", Stall()), API.text("Awake again."))
    terminal = tui(env={"PICODE_IDLE_TIMEOUT": "1"})

    terminal.type("hello")
    terminal.wait_for_text("Awake again.")
    screen = terminal.wait_for_text(f"Answered after 1 retry ({TIMED_OUT}")
    assert "cancel scope" not in screen  # the timeout's internals are not the message
    assert wire.requests[0].wait_closed(), "the stalled connection must be closed"
    answers_again(terminal, wire)
    quits_cleanly(terminal)


def test_malformed_sse_is_reported(tui: Start, wire: WireServer) -> None:
    broken = AnthropicStream().chunk("event: content_block_delta\ndata: {oops\n\n")
    wire.enqueue(broken.response())
    terminal = tui()

    terminal.type("hello")
    terminal.wait_for_text("Error: Malformed data in the server's response")

    answers_again(terminal, wire)
    assert len(wire.requests) == 2  # a broken body is not retried
    quits_cleanly(terminal)


def test_invalid_tool_argument_json_becomes_a_tool_error(tui: Start, wire: WireServer) -> None:
    wire.enqueue(
        API.raw_tool_call("call_bad", "read", ['{"pa', 'th": notes.txt ]]']),
        API.text("Sorry, my call was broken."),
    )
    terminal = tui()

    terminal.type("read the notes")
    screen = terminal.wait_for_text("Sorry, my call was broken.")

    assert "Invalid arguments: 'path' is required" in screen
    answers_again(terminal, wire)
    quits_cleanly(terminal)


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("brand_new_reason", None),  # an unknown value maps to an ordinary stop
        ("refusal", "Error: The model refused to respond (stop reason: refusal)"),
    ],
    ids=["unknown", "refusal"],
)
def test_stop_reasons_end_the_turn_with_the_answer_or_a_message(
    tui: Start, wire: WireServer, reason: str, message: str | None
) -> None:
    wire.enqueue(AnthropicStream().text("Fine ", "answer.").stop(reason).response())
    terminal = tui()

    terminal.type("hello")
    screen = terminal.wait_for_text(message or "Fine answer.")

    assert "Fine answer." in screen
    if message is None:
        assert "Error:" not in screen
    answers_again(terminal, wire)
    assert len(wire.requests) == 2
    quits_cleanly(terminal)


# --- large tool calls -----------------------------------------------------------------


@pytest.mark.parametrize("approve", [False, True], ids=["default", "approval-mode"])
def test_large_streamed_write_lands_on_disk_whole(
    tui: Start, wire: WireServer, picode: PicodeEnv, approve: bool
) -> None:
    call, content = large_write(API)
    wire.enqueue(call, API.text("Written."))
    terminal = tui("--approve") if approve else tui()

    terminal.type("write it")
    if approve:
        terminal.wait_for_text("Write this file?")
        terminal.wait_for_text("… 3181 more lines")  # 19 shown under the title
        terminal.press_until_gone(b"y", "Write this file?")
    screen = terminal.wait_for_text("Written.")

    assert "Wrote 3200 lines" in screen
    assert (picode.project / "out" / "big.txt").read_text(encoding="utf-8") == content
    answers_again(terminal, wire)
    quits_cleanly(terminal)


# --- the process itself dies ----------------------------------------------------------


def test_kill_9_mid_stream_then_continue_keeps_what_completed(
    tui: Start, wire: WireServer, picode: PicodeEnv
) -> None:
    (picode.project / "notes.txt").write_text("kept-after-crash 77\n", encoding="utf-8")
    wire.enqueue(
        API.tool_call("call_r", "read", {"path": "notes.txt"}),
        API.text_then("I was about to", Stall()),
        API.text("Resumed fine."),
    )
    crashed = tui()
    crashed.type("read notes.txt")
    crashed.wait_for_text("I was about to")
    # Within a second of the reply's start, what has arrived is kept beside the session.
    crashed.wait_until(lambda _: any(picode.home.rglob("*.jsonl.draft")), "the reply's draft")
    crashed.kill()
    assert wire.requests[1].wait_closed(), "the dead process's connection must close"

    resumed = tui("-c")
    resumed.wait_for_text("› read notes.txt")
    resumed.wait_for_text("Read 1 line")
    # The reply that was streaming: what had arrived is kept, and says it was cut short.
    resumed.wait_for_text("I was about to")
    resumed.wait_for_text("picode stopped before this reply ended")
    resumed.send(CTRL_O)  # expand the tool output
    resumed.wait_for_text("kept-after-crash 77")
    resumed.type("go on")
    resumed.wait_for_text("Resumed fine.")

    sent = wire.requests[2].body.decode()
    for text in ("read notes.txt", "call_r", "kept-after-crash 77", "I was about to", "go on"):
        assert text in sent
    quits_cleanly(resumed)
