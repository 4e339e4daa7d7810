"""What "always" approves for a ``bash`` call: the commands that start the same way, not
every command (docs/security.md "Approval").

A plain command (words only: no pipe, list, redirection, substitution or subshell) is
covered by its first word and, for a program run by subcommands (``git diff``, ``npm
test``, ``cargo build``), the subcommand too; a later command is covered when its words
start with those.
Anything else is covered only exactly: a compound command, a command that starts with a
variable assignment, and a program that runs whatever its arguments say (a shell, an
interpreter, ``sudo``, ``xargs``, ``find``...) or deletes or moves files.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

#: Characters that make a command more than words: lists, pipes, redirections,
#: substitutions, subshells, escapes and line breaks (inside quotes too: ``$(`` runs there).
_NOT_PLAIN = re.compile(r"[;&|<>`$()\\\n\r]")
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9-]*")
#: Programs whose second word says what they do: "always" covers that subcommand only.
_BY_SUBCOMMAND = frozenset(
    {
        "git", "hg", "svn", "gh", "npm", "pnpm", "yarn", "npx", "cargo", "rustup", "go",
        "pip", "pip3", "uv", "poetry", "pdm", "hatch", "rye", "pixi", "conda", "tox", "nox",
        "make", "just", "mvn", "gradle", "dotnet", "bundle", "composer", "mix", "swift",
        "zig", "terraform", "helm", "brew", "apt", "apt-get",
    }
)  # fmt: skip
#: Subcommands that run what the next word names (``npm run test``, ``uv run pytest``):
#: "always" covers that word too.
_RUNNERS = frozenset({"run", "exec", "x", "dlx", "tool"})
#: Interpreters under their versioned names too (``python3.12``, ``pypy3``).
_INTERPRETER = re.compile(r"(?:python|pypy|perl|ruby|php|lua)[0-9.]*")
#: Programs whose first word says nothing of what they will do, or that delete and move.
_EXACT_ONLY = frozenset(
    {
        "bash", "sh", "zsh", "fish", "dash", "ksh", "env", "exec", "eval", "command",
        "sudo", "su", "doas", "xargs", "find", "nohup", "timeout", "watch", "time", "nice",
        "node", "deno", "bun", "awk", "sed", "rm", "rmdir", "mv", "dd", "chmod", "chown",
        "kill", "pkill", "killall", "ssh", "scp", "rsync", "curl", "wget", "docker", "kubectl",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class CommandScope:
    """The commands one "always" covers: those starting with ``words``, or ``exact`` alone."""

    words: tuple[str, ...] = ()
    exact: str | None = None

    def covers(self, command: str) -> bool:
        if self.exact is not None:
            return command.strip() == self.exact
        words = plain_words(command)
        return words is not None and tuple(words[: len(self.words)]) == self.words

    def describe(self) -> str:
        if self.exact is not None:
            return "this exact command"
        return f"commands starting with `{shlex.join(self.words)}`"

    def describe_granted(self) -> str:
        """As a list of what was approved says it (the command named when exact)."""
        return f"the command `{self.exact}`" if self.exact is not None else self.describe()


def command_scope(command: str) -> CommandScope:
    """What saying "always" to ``command`` approves from then on."""
    words = plain_words(command)
    program = words[0].rsplit("/", 1)[-1] if words else ""
    if not words or "=" in words[0] or program in _EXACT_ONLY or _INTERPRETER.fullmatch(program):
        return CommandScope(exact=command.strip())
    if program not in _BY_SUBCOMMAND:
        return CommandScope(words=(words[0],))
    second = words[1] if len(words) > 1 else ""
    if not _SUBCOMMAND.fullmatch(second):
        return CommandScope(exact=command.strip())  # `git -C dir push`: no subcommand to go by
    if second not in _RUNNERS:
        return CommandScope(words=(words[0], second))
    third = words[2] if len(words) > 2 else ""
    if third and not third.startswith("-") and _INTERPRETER.fullmatch(third) is None:
        return CommandScope(words=(words[0], second, third))
    return CommandScope(exact=command.strip())


def plain_words(command: str) -> list[str] | None:
    """The words of a command that is nothing but words; None for any other command."""
    if _NOT_PLAIN.search(command):
        return None
    try:
        return shlex.split(command)
    except ValueError:  # an unclosed quote
        return None
