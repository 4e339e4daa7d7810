"""A scripted Anthropic-compatible server on 127.0.0.1 for driving the real TUI by hand
(tmux) and for the end-to-end timing benches.

    python bench/demo_server.py [--port 8765] [--delay 0.01]
    ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=demo picode

Each prompt gets thinking, a tool call (bash, read or edit, chosen from words in the
prompt: "edit <file>", "read <file>", "run: <command>", otherwise `ls -la`), and after the
tool result a markdown answer with a code block. "slow" in the prompt streams a long reply
slowly (to try Esc and steering); "fail" answers 529 once (to see the retry countdown),
"fail N" N times in a row (to see a retry sequence give up, or to type during its
countdown). "todo" calls the todo tool with a three-item list, "plan" calls exit_plan_mode
with a plan (try it in plan mode, Shift+Tab), "delegate" hands two jobs to subagents (each
runs a short command, so the server answers the children too).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.wire.anthropic_protocol import AnthropicStream, anthropic_error
from tests.wire.server import Pause, RecordedRequest, WireResponse, WireServer

ANSWER = """Here is what I found.

## Summary

The project has **{count} entries** at the top level. The interesting part:

```python
def main() -> None:
    print("hello from picode")
```

- It reads the configuration first
- Then it runs the tests (`pytest -q`)

That's all — ask me to change something next.
"""


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        for block in content or []:
            if block.get("type") == "text":
                return str(block.get("text", ""))
            if block.get("type") == "tool_result":
                return ""
    return ""


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class Demo:
    def __init__(self, delay: float) -> None:
        self.delay = delay
        #: How often each prompt has been answered 529 so far.
        self.failures: dict[str, int] = {}

    def _paced(self, stream: AnthropicStream, delay: float) -> WireResponse:
        body: list[Any] = []
        for chunk in stream.body():
            body.append(chunk)
            if delay:
                body.append(Pause(delay))
        return WireResponse(body=body)

    def respond(self, request: RecordedRequest) -> WireResponse:
        body = request.json
        last = body["messages"][-1]
        is_tool_result = isinstance(last.get("content"), list) and any(
            block.get("type") == "tool_result" for block in last["content"]
        )
        prompt = _last_user_text(body)
        wanted = re.search(r"\bfail(?:\s+(\d+))?\b", prompt.lower())
        if wanted and self.failures.get(prompt, 0) < int(wanted.group(1) or 1):
            self.failures[prompt] = self.failures.get(prompt, 0) + 1
            return anthropic_error(529, "overloaded_error", "Overloaded")
        stream = AnthropicStream(model=body.get("model", "demo"), input_tokens=1200)
        if is_tool_result:
            answer = ANSWER.format(count=7)
            stream.text(*_pieces(answer, 12)).stop("end_turn", output_tokens=len(answer) // 4)
            return self._paced(stream, self.delay)
        if "slow" in prompt.lower():
            long = "This is a long, slowly streamed answer. " * 200
            stream.thinking(*_pieces("Taking my time to think about this. " * 4, 10))
            stream.text(*_pieces(long, 8)).stop("end_turn", output_tokens=len(long) // 4)
            return self._paced(stream, 0.05)
        stream.thinking(*_pieces("The user wants me to look at the project. Let me check.", 9))
        stream.text(*_pieces("Let me look at that.", 6))
        call_id = f"toolu_{int(time.time() * 1000) % 10**8}"
        match = re.search(r"\b(edit|read)\s+(\S+)", prompt)
        run = re.search(r"\brun:\s*(.+)$", prompt)
        lowered = prompt.lower()
        if "delegate" in lowered:
            for n in (1, 2):
                job = {"description": f"Job {n}", "prompt": f"run: sleep 1; echo child {n}"}
                stream.tool_use(f"{call_id}_{n}", "task", _pieces(json.dumps(job), 9))
        elif "todo" in lowered:
            todos = [
                {"content": "Read the code", "status": "completed"},
                {"content": "Write the fix", "status": "in_progress"},
                {"content": "Run the tests", "status": "pending"},
            ]
            stream.tool_use(call_id, "todo", _pieces(json.dumps({"todos": todos}), 9))
        elif "plan" in lowered:
            plan = {"plan": "## Plan\n\n1. Read `main.py`\n2. Add a `--verbose` flag\n3. Test it"}
            stream.tool_use(call_id, "exit_plan_mode", _pieces(json.dumps(plan), 9))
        elif run:
            command = {"command": run.group(1).strip()}
            stream.tool_use(call_id, "bash", _pieces(json.dumps(command), 5))
        elif match and match.group(1) == "edit" and Path(match.group(2)).is_file():
            path = match.group(2)
            first = Path(path).read_text().splitlines()[0] if Path(path).read_text() else ""
            args = {"path": path, "old_text": first, "new_text": first + "  # edited by demo"}
            stream.tool_use(call_id, "edit", _pieces(json.dumps(args), 7))
        elif match:
            stream.tool_use(call_id, "read", _pieces(json.dumps({"path": match.group(2)}), 5))
        else:
            command = {"command": "ls -la && sleep 1 && echo done"}
            stream.tool_use(call_id, "bash", _pieces(json.dumps(command), 5))
        stream.stop("tool_use", output_tokens=80)
        return self._paced(stream, self.delay)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.01, help="seconds between events")
    args = parser.parse_args()
    demo = Demo(args.delay)
    server = WireServer(port=args.port)
    server.start()
    # An endless supply of the same responder.
    server.default_responder = demo.respond
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
