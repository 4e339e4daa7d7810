"""``/init``: ask the model to write or update the project's AGENTS.md."""

from __future__ import annotations

from picode.session.prompts.templates import PromptTemplate

INIT_PROMPT = """\
Write or update AGENTS.md at the root of this repository: the file that tells a coding agent \
(and a new contributor) how to work here. Explore first, write second.

1. Read what exists: AGENTS.md, CLAUDE.md, README, CONTRIBUTING, .cursorrules, \
.github/copilot-instructions.md, the build files (pyproject.toml, package.json, Cargo.toml, \
go.mod, Makefile, ...), CI workflows and a few representative source and test files.
2. If AGENTS.md exists, keep what is still true, correct what is not, and add what is \
missing; do not rewrite it for style.
3. Cover, briefly and concretely:
   - how to set up, build, lint, format and type-check, with the exact commands;
   - how to run the tests: all of them, one file, one test; anything slow or needing \
services;
   - the layout: the main folders and what each owns, entry points, generated files not \
to edit by hand;
   - conventions the code follows that a newcomer would get wrong: naming, error handling, \
imports, dependencies allowed, how commits and changes are expected to look;
   - pitfalls and rules found in the existing docs or CI.
4. Only write what you verified in this repository; no generic advice. Keep it short \
(aim for under 150 lines), in Markdown with headings and bullet lists.

$ARGUMENTS"""

INIT = PromptTemplate(
    name="init",
    body=INIT_PROMPT,
    path=None,
    source="builtin",
    description="Write or update AGENTS.md for this repository",
    argument_hint="[what to focus on]",
)
