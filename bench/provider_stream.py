"""A provider's own cost: CPU per streamed delta, and what its first request loads.

Each figure comes from a fresh interpreter running ``stream_simple`` through the ``--api``
provider (``anthropic-messages``, ``openai-completions``, ``openai-responses`` or
``google-generative-ai``) against
the wire test server on 127.0.0.1, with a consumer draining the stream:

- **one chunk**: a reply of ``--deltas`` text deltas sent at once: the decoding and mapping
  of the events alone;
- **paced**: ``--paced`` deltas, each written on its own 3 ms after the last, as a model
  streams: every delta is a read of its own (the HTTP client's read path included);
- **first request**: the process's CPU time for it (all threads: the provider and its SDK
  are imported on the way, off the event loop), the modules it imports (all, and the
  SDK's), and the process's RSS after it (``VmRSS``), the interpreter and the test server
  counted alike.

With ``--tls`` the server speaks TLS (a certificate of the tests' own CA, trusted through
``SSL_CERT_FILE``), as every hosted API does.

CPU per delta is the event-loop thread's (``time.thread_time``), the median of ``--reps``
replies after a warm-up one; the server's threads do not count. ``--compare SRC`` runs
another build the same way (its ``src`` folder first on ``PYTHONPATH``, same venv), the two
builds in turns for ``--runs`` rounds; the table gives medians (min–max) over the rounds.

Usage: python bench/provider_stream.py [--api anthropic-messages] [--runs 5]
       [--compare OTHER/src] [--deltas 2000] [--paced 400] [--reps 5] [--tls]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Per API: the SDK's top-level package, and a text that only its delta events contain.
APIS = {
    "anthropic-messages": ("anthropic", "text_delta"),
    "openai-completions": ("openai", '"content": "abc "'),
    "openai-responses": ("openai", "response.output_text.delta"),
    "google-generative-ai": ("google", '"text": "abc "'),
}


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return 0.0


def child(args: argparse.Namespace) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from tests.providers.models import wire_model
    from tests.wire.anthropic_protocol import AnthropicStream
    from tests.wire.chat_protocol import ChatStream
    from tests.wire.gemini_protocol import GeminiStream
    from tests.wire.gemini_protocol import text as gemini_text
    from tests.wire.responses_protocol import ResponsesStream, usage
    from tests.wire.server import Chunk, Pause, WireResponse, WireServer

    from picode.ai.models import Model
    from picode.ai.options import StreamOptions
    from picode.ai.stream import stream_simple
    from picode.ai.types import Context, UserMessage

    sdk, delta_mark = APIS[args.api]

    def chunks(deltas: int) -> list[Chunk]:
        pieces = ["abc "] * deltas
        if args.api == "anthropic-messages":
            return AnthropicStream().text(*pieces).stop().body()
        if args.api == "openai-completions":
            return ChatStream().text(*pieces).end("stop").body()
        if args.api == "google-generative-ai":
            stream = GeminiStream()
            for piece in pieces[:-1]:
                stream.chunk(gemini_text(piece))
            return stream.chunk(gemini_text(pieces[-1]), finish="STOP").chunks
        return ResponsesStream().created().message(pieces).completed(usage(10, deltas)).chunks

    def one_chunk(deltas: int) -> WireResponse:
        return WireResponse(body=["".join(c for c in chunks(deltas) if isinstance(c, str))])

    def paced(deltas: int) -> WireResponse:
        body: list[Chunk] = []
        for chunk in chunks(deltas):
            body.append(chunk)
            if isinstance(chunk, str) and delta_mark in chunk:
                body.append(Pause(0.003))
        return WireResponse(body=body)

    async def reply(model: Model) -> float:
        started = time.thread_time()
        options = StreamOptions(api_key="bench", max_tokens=1024)
        stream = stream_simple(model, Context(messages=[UserMessage("go")]), options)
        async for _event in stream:
            pass
        message = await stream.result()
        assert message.stop_reason == "stop", message.error_message
        return time.thread_time() - started

    async def run(wire: WireServer) -> dict[str, float]:
        model = wire_model(args.api, wire, reasoning=False)
        before = set(sys.modules)
        wire.enqueue(one_chunk(10))
        started = time.process_time()  # all threads: the SDK is imported off the loop
        await reply(model)
        loaded = set(sys.modules) - before
        result = {
            "first_ms": (time.process_time() - started) * 1e3,
            "modules": float(len(loaded)),
            "sdk_modules": float(sum(1 for m in loaded if m.split(".")[0] == sdk)),
            "rss_mb": rss_mb(),
        }
        for name, body, deltas in (
            ("one_chunk_us", one_chunk(args.deltas), args.deltas),
            ("paced_us", paced(args.paced), args.paced),
        ):
            times = []
            for _ in range(args.reps):
                wire.enqueue(body)
                gc.collect()
                times.append(await reply(model))
            result[name] = statistics.median(times) / deltas * 1e6
        return result

    if not args.tls:
        with WireServer() as wire:
            return asyncio.run(run(wire))
    import tempfile

    from tests.wire.tls import local_tls

    with tempfile.TemporaryDirectory() as folder:
        server_tls, ca_file = local_tls(Path(folder))
        os.environ["SSL_CERT_FILE"] = str(ca_file)
        with WireServer(tls=server_tls) as wire:
            return asyncio.run(run(wire))


def measure(src: Path | None, args: argparse.Namespace) -> dict[str, float]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    command = [sys.executable, __file__, "--child", "--api", args.api]
    command += ["--deltas", str(args.deltas)]
    command += ["--paced", str(args.paced), "--reps", str(args.reps)]
    command += ["--tls"] if args.tls else []
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


ROWS = (
    ("one_chunk_us", "CPU per delta, reply in one chunk (µs)", 1),
    ("paced_us", "CPU per delta, paced 3 ms apart (µs)", 1),
    ("first_ms", "CPU of the first request, SDK import included (ms)", 0),
    ("modules", "modules imported by the first request", 0),
    ("sdk_modules", "of which the SDK's", 0),
    ("rss_mb", "RSS after the first request (MB)", 1),
)


def cell(values: list[float], digits: int) -> str:
    low, high = min(values), max(values)
    return f"{statistics.median(values):.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", choices=sorted(APIS), default="anthropic-messages")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--paced", type=int, default=400)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--compare", type=Path, help="another build's src folder")
    parser.add_argument("--tls", action="store_true", help="the server speaks TLS")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    sys.path.insert(0, str(ROOT / "bench"))
    from _stats import machine

    builds: list[tuple[str, Path | None]] = [("this tree", None)]
    if args.compare:
        builds.append(("compared", args.compare.resolve()))
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _ in builds}
    for _ in range(args.runs):
        for name, src in builds:
            results[name].append(measure(src, args))
    print(machine())
    print(f"\nAPI: {args.api}" + (" over TLS" if args.tls else ""))
    print(f"\n{args.runs} rounds, builds in turns; median (min–max) over the rounds.\n")
    header = " | ".join(name for name, _ in builds)
    print(f"| measure | {header} |" + (" ratio |" if args.compare else ""))
    print("|---|" + "---:|" * (len(builds) + (1 if args.compare else 0)))
    for key, label, digits in ROWS:
        columns = [[run[key] for run in results[name]] for name, _ in builds]
        line = f"| {label} | " + " | ".join(cell(values, digits) for values in columns) + " |"
        if args.compare:
            line += f" {statistics.median(columns[0]) / statistics.median(columns[1]):.2f}× |"
        print(line)


if __name__ == "__main__":
    main()
