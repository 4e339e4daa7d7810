"""Command line entry point. Parses arguments with nothing heavy imported: ``--version`` and
``--help`` never load an SDK or Textual; each mode imports what it needs when chosen."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from picode import __version__
from picode.ai.text_repair import repair_os_text

THINKING_CHOICES = ("off", "minimal", "low", "medium", "high", "xhigh")

EPILOG = """\
examples:
  picode                                 start the interactive TUI here
  picode -c                              continue the latest session in this folder
  picode -r                              pick a session to resume
  picode -p "explain src/app.py"         print mode: answer once and exit
  git diff | picode -p "review this"     piped stdin is added to the prompt
  picode -p "summarise @README.md"       @file attaches a file as text
  picode --model openai/gpt-5.4:high     provider/id[:thinking]
  picode --list-models qwen              models, key state, local servers found
  picode --mode rpc                      JSON commands on stdin, events on stdout
  picode mcp list                        MCP servers from config.toml (docs/mcp.md)
  picode mcp add NAME -- CMD ARGS...     add a stdio MCP server to your config.toml
  picode mcp login NAME                  log in to an HTTP MCP server (OAuth, browser)
  picode login [PROVIDER]                save an API key in picode's auth file (logout: remove)

keys: ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (or GOOGLE_API_KEY), and the
presets' own (OPENROUTER_API_KEY, GROQ_API_KEY, ...; --list-models shows which are set),
or one saved with picode login;
base URLs: ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL, <PRESET>_BASE_URL;
local servers (ollama, lmstudio, llamacpp, vllm) need no key;
PICODE_HOME=<dir> keeps config, sessions and cache under one folder.
exit codes (headless): 0 done, 1 failed (reason on stderr), 2 bad usage, 130 interrupted.
"""


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (no limit) or more")
    return value


def _dollars(text: str) -> float:
    try:
        value = float(text.removeprefix("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount of dollars") from None
    if not value >= 0 or value == float("inf"):  # NaN and infinity too
        raise argparse.ArgumentTypeError("must be 0 (no limit) or more")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="picode",
        description="An interactive terminal coding agent.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("prompt", nargs="*", help="initial prompt; @path attaches a file")
    parser.add_argument("--version", action="version", version=f"picode {__version__}")
    parser.add_argument(
        "-p",
        "--print",
        dest="print_mode",
        action="store_true",
        help="run the prompt, print the final answer and exit",
    )
    parser.add_argument(
        "--mode",
        choices=("text", "json", "rpc", "acp"),
        default=None,
        help=(
            "headless output: text (with -p), json (one event per line), "
            "rpc (stdin commands), acp (Agent Client Protocol over stdio)"
        ),
    )
    parser.add_argument("--model", metavar="PROVIDER/ID[:THINKING]", help="model to use")
    parser.add_argument("--thinking", choices=THINKING_CHOICES, help="thinking level")
    parser.add_argument(
        "--list-models",
        nargs="?",
        const="",
        default=None,
        metavar="FILTER",
        help="list the models and providers picode can use, with key state, and exit",
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_session",
        action="store_true",
        help="continue the latest session in this folder",
    )
    parser.add_argument(
        "-r",
        "--resume",
        nargs="?",
        const="",
        default=None,
        metavar="ID",
        help="resume a session by id or unique prefix (no id: pick one)",
    )
    parser.add_argument("--session", metavar="PATH|ID", help="open this session file or id")
    parser.add_argument(
        "--no-session", action="store_true", help="do not save this session to disk"
    )
    parser.add_argument(
        "--tools",
        metavar="LIST",
        help="comma-separated tools to enable (read,write,edit,bash,grep,find,ls); '' for none",
    )
    parser.add_argument("--system-prompt", metavar="TEXT", help="replace the system prompt")
    parser.add_argument(
        "--append-system-prompt", metavar="TEXT", help="append text to the system prompt"
    )
    parser.add_argument("--theme", metavar="NAME", help="TUI theme (dark, light, ansi, ...)")
    parser.add_argument(
        "--approve", action="store_true", help="ask before bash, write and edit run"
    )
    parser.add_argument(
        "--max-turns",
        type=_count,
        metavar="N",
        help="stop after N model requests in a row without a message from you (0: no limit)",
    )
    parser.add_argument(
        "--max-cost",
        type=_dollars,
        metavar="USD",
        help="stop once USD dollars are spent in a row without a message from you (0: none)",
    )
    parser.add_argument(
        "--plan",
        action="store_true",
        help="start in plan mode: only tools that read run until you approve the model's plan "
        "(in print mode the plan is printed and nothing is changed)",
    )
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="use this folder's .picode/ providers, extensions, rules and SYSTEM.md for this "
        "run without asking (see docs/security.md)",
    )
    return parser


def compile_once() -> None:
    """Before the modules that define most dataclasses and patterns load, the caches of
    start-up's work (docs/architecture.md, "Compiled once" and "Provider SDKs")."""
    from picode import compile_cache
    from picode.ai import sdk_cache
    from picode.session.paths import resolve_paths

    try:
        cache_dir = resolve_paths().cache_dir
        compile_cache.install(cache_dir)
    except Exception:  # without these caches picode starts as it always did, only slower
        compile_cache.uninstall()
        return
    # Where the indexes of SDK modules run in slices are kept (picode.ai.sliced_module).
    sdk_cache.set_folder(cache_dir)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(argv) if argv is not None else sys.argv[1:]
    # Only a bare first word "mcp", "login" or "logout" is a command; ``picode -- mcp ...``
    # sends it as a prompt.
    if words[:1] == ["mcp"]:
        from picode.mcp_command import run_mcp_command

        return run_mcp_command(words[1:])
    if words[:1] in (["login"], ["logout"]):
        from picode.login_command import run_login_command

        return run_login_command(words)
    parser = build_parser()
    words = sys.argv[1:] if argv is None else list(argv)
    # Undecodable bytes arrive as lone surrogates; repaired here, they cannot reach a
    # request or the session file.
    args = parser.parse_args([repair_os_text(word) for word in words])
    if args.continue_session and (args.resume is not None or args.session):
        parser.error("-c/--continue cannot be combined with --resume or --session")
    if args.no_session and (args.continue_session or args.resume is not None or args.session):
        parser.error("--no-session cannot be combined with -c, -r or --session")
    if args.list_models is not None:
        from picode.list_models import run_list_models

        return run_list_models(args)
    if argv is None:
        compile_once()
    from picode.launch import launch

    # A real command line (no argv given) may end the process without the interpreter's
    # slow clean-up; a caller passing argv gets control back.
    return launch(args, exit_when_done=argv is None)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
