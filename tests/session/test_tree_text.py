"""The first words ``/tree`` shows of each message: a model's Markdown as it reads drawn."""

from __future__ import annotations

from picode.session.store.tree import first_words, plain_words


def test_a_models_markdown_reads_without_its_marks() -> None:
    reply = "Here is what I found.\n\n## Summary\n\nThe project has **7 entries**, see `app.py`."
    assert (
        plain_words(reply) == "Here is what I found. Summary The project has 7 entries, see app.py."
    )
    listed = (
        "- item one\n* item *two*\n> quoted\n```python\ndef f(): ...\n```\n[the docs](https://x.io)"
    )
    assert plain_words(listed) == "item one item two quoted def f(): ... the docs"


def test_what_is_not_markdown_emphasis_stays_as_written() -> None:
    text = "snake_case_name, 2 * 3 * 4, a glob *.py and ~/home"
    assert plain_words(text) == text
    assert plain_words("x" * 100).endswith("…") and len(plain_words("x" * 100)) == 72


def test_a_persons_own_text_keeps_its_marks() -> None:
    assert first_words("## not a heading **to me**") == "## not a heading **to me**"


def test_a_command_run_with_an_exclamation_mark_reads_as_typed() -> None:
    from picode.session.store.format import as_typed, read_shell_run, shell_run_text

    text = shell_run_text("cat notes.md", "```py\nx = 1\n```\n")
    assert read_shell_run(text) == ("cat notes.md", "```py\nx = 1\n```")
    assert as_typed(text) == "!cat notes.md"
    assert as_typed(" ".join(text.split())[:30]) == "!cat notes.md"  # a listing's preview
    assert as_typed("I ran `make` twice and it failed") == "I ran `make` twice and it failed"
    assert read_shell_run("I ran `make`: it failed") is None
