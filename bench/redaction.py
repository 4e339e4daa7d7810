"""Cost of redaction (``picode.ai.redaction.redact``): 1 MB texts, and the json stream.

1. One megabyte each of picode's own source code, English prose, JSON (the source as one
   JSON string, as a session line or a json event holds it), a base64 blob (a thinking
   signature's alphabet) and the source with 200 tokens of every shape mixed in. Baselines
   in the same run: ``str.count`` of a character that never occurs (one C pass over the
   text) and ``json.dumps`` of the text (what every JSON edge already pays).
2. The ``--mode json`` / rpc line writer: ``dumps(event_to_dict(event))`` for the events of
   a streamed reply (message_update deltas as the 50 ms throttle merges them, 4 characters
   to 16 kB, then message_end with the whole 8 kB text), against what the writers do now:
   ``RedactedEvents`` (deltas hold back their last word) and each line redacted.

Times are CPU time (``time.process_time``), the median of ``--runs``, interleaved.

Usage: python bench/redaction.py [--runs 9]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import time
from collections.abc import Callable
from pathlib import Path

from _stats import Summary, fmt, machine
from picode.agent.events import MessageEnd, MessageUpdate
from picode.ai.events import TextDeltaEvent
from picode.ai.redaction import redact
from picode.ai.types import AssistantMessage, TextContent
from picode.modes.serialize import RedactedEvents, dumps, event_to_dict

MB = 1_000_000
SOURCE = Path(__file__).resolve().parents[1] / "src" / "picode"
TOKENS = (
    "ghp_" + "A1b2C3d4" * 4 + "wxyz",
    "github_pat_11ABCDEFG0" + "x1" * 11 + "_" + "y2" * 29,
    "xoxb-1234567890-0987654321-" + "AbCdEf" * 4,
    "AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    "sk-ant-api03-" + "x7" * 20,
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq7BFUpkGp3\n-----END RSA PRIVATE KEY-----",
)


def texts() -> dict[str, str]:
    code = "".join(p.read_text(encoding="utf-8") for p in sorted(SOURCE.rglob("*.py")))
    code = (code * (MB // len(code) + 1))[:MB]
    prose = ("The quick brown fox jumps over the lazy dog, and then it rests. " * 16000)[:MB]
    rng = random.Random(7)
    blob = base64.b64encode(rng.randbytes(MB))[:MB].decode()
    lines = code.splitlines(keepends=True)
    for index in range(200):
        at = rng.randrange(len(lines))
        lines[at] = f"token = {TOKENS[index % len(TOKENS)]}\n" + lines[at]
    return {
        "source code": code,
        "English prose": prose,
        "JSON string of the source": json.dumps(code)[:MB],
        "base64 blob": blob,
        "source with 200 tokens": "".join(lines)[:MB],
    }


def stream_events() -> list[object]:
    reply = ("Here is the plan: read the parser, fix the off-by-one, run the tests. " * 120)[:8192]
    message = AssistantMessage(
        content=[TextContent(reply)], api="bench", provider="bench", model="bench"
    )
    sizes = [4] * 40 + [64] * 20 + [1024] * 6 + [16384]
    events: list[object] = [
        MessageUpdate(message, TextDeltaEvent(0, reply[:size], message)) for size in sizes
    ]
    events.append(MessageEnd(message))
    return events


def _redacted_lines(events: list[object]) -> list[str]:
    """What the json and rpc writers do: held-back deltas, then each line redacted."""
    stream = RedactedEvents()
    return [redact(dumps(payload))[0] for e in events for payload in stream.dicts(e)]


def cpu(action: Callable[[], object], repeat: int = 1) -> float:
    started = time.process_time()
    for _ in range(repeat):
        action()
    return (time.process_time() - started) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    print(machine())
    print()
    print("| 1 MB of | redact | str.count (one C pass) | json.dumps | redact ÷ dumps | masked |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, text in texts().items():
        samples: dict[str, list[float]] = {"redact": [], "count": [], "dumps": []}
        for _ in range(args.runs):
            samples["count"].append(cpu(lambda text=text: text.count("\x00")))
            samples["dumps"].append(cpu(lambda text=text: json.dumps(text)))
            samples["redact"].append(cpu(lambda text=text: redact(text)))
        found = redact(text)[1]
        red, count, dump = (Summary.of(samples[k]) for k in ("redact", "count", "dumps"))
        print(
            f"| {name} | {fmt(red)} | {fmt(count, digits=2)} | {fmt(dump)} "
            f"| {red.ratio(dump):.2f} | {found} |"
        )

    events = stream_events()
    lines = [dumps(event_to_dict(event)) for event in events]
    plain: list[float] = []
    redacted: list[float] = []
    repeat = 200
    for _ in range(args.runs):
        plain.append(cpu(lambda: [dumps(event_to_dict(e)) for e in events], repeat))
        redacted.append(cpu(lambda: _redacted_lines(events), repeat))
    base, red = Summary.of(plain), Summary.of(redacted)
    per_event = len(events)
    size = sum(len(line) for line in lines)
    print()
    print(f"json line writer, one 8 kB reply: {per_event} events, {size / 1000:.0f} kB of lines")
    print()
    print("| path | per reply | µs per event | ratio |")
    print("|---|---:|---:|---:|")
    base_us = base.median / per_event * 1e6
    print(f"| dumps(event_to_dict) (baseline) | {fmt(base)} | {base_us:.1f} | 1.00 |")
    red_us = red.median / per_event * 1e6
    print(f"| RedactedEvents + redact | {fmt(red)} | {red_us:.1f} | {red.ratio(base):.2f} |")


if __name__ == "__main__":
    main()
