"""``/model`` and Ctrl+L: pick a model by provider, id or name."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from textual.content import Content

from picode.ai.models import Model
from picode.tui.completion.fuzzy import rank
from picode.tui.pickers.base import DEFAULT_MAX_ROWS, PickerScreen

_REF_WIDTH = 36
_NAME_WIDTH = 20
CURRENT_MARK = "●"


def format_tokens(count: int) -> str:
    """200000 → ``200k``, 1048576 → ``1M``, 1500000 → ``1.5M``."""
    if count >= 1_000_000:
        return _trim(f"{count / 1_000_000:.1f}") + "M"
    if count >= 1000:
        return f"{round(count / 1000)}k"
    return str(count)


def format_price(model: Model) -> str:
    """Dollars per million tokens in/out, ``—`` when unknown or free."""
    cost = model.cost
    if not cost.input and not cost.output:
        return "—"
    return f"${_trim(f'{cost.input:.3f}')}/${_trim(f'{cost.output:.3f}')}"


def _trim(number: str) -> str:
    return number.rstrip("0").rstrip(".") if "." in number else number


NO_KEY_MARK = "no key"


class ModelPicker(PickerScreen[Model, Model]):
    """Dismisses with the chosen ``Model``, or None. Models whose ref is in ``missing_key``
    are listed (they can still be chosen) but marked: their provider has no API key."""

    title_text = "Select a model"
    hint_text = "↑↓ move · enter select · esc cancel · type to filter · price: $ per Mtok in/out"
    placeholder = "Filter by provider, id or name…"
    empty_text = "No model matches"

    def __init__(
        self,
        models: Sequence[Model],
        current: Model | None,
        *,
        missing_key: Collection[str] = (),
        aliases: Mapping[str, str] | None = None,
        max_rows: int = DEFAULT_MAX_ROWS,
    ) -> None:
        super().__init__(max_rows=max_rows)
        self.models = list(models)
        #: ``sonnet`` → ``anthropic/claude-sonnet-…``: typed whole, its model comes first.
        self.aliases = {name.lower(): ref for name, ref in (aliases or {}).items()}
        self.current = current
        self.missing_key = frozenset(missing_key)
        refs = [m.ref for m in self.models] or [""]
        names = [m.name for m in self.models] or [""]
        self._ref_width = min(max(map(len, refs)), _REF_WIDTH)
        self._name_width = min(max(map(len, names)), _NAME_WIDTH)
        self._context_width = max(
            (len(format_tokens(m.context_window)) for m in self.models), default=4
        )
        self._price_width = max((len(format_price(m)) for m in self.models), default=1)

    def filter_items(self, query: str) -> Sequence[Model]:
        ranked = rank(query, self.models, key=lambda m: f"{m.provider}/{m.id} {m.name}")
        target = self.aliases.get(query.strip().lower())
        named = [m for m in self.models if m.ref == target]
        return named + [m for m in ranked if m.ref != target] if named else ranked

    def initial_cursor(self, matches: Sequence[Model]) -> int:
        current = self.current
        if current is None:
            return 0
        for index, model in enumerate(matches):
            if model.ref == current.ref:
                return index
        return 0

    def render_item(self, item: Model, highlighted: bool) -> Content:
        is_current = self.current is not None and item.ref == self.current.ref
        no_key = item.ref in self.missing_key
        mark = (f"{CURRENT_MARK} ", "$success") if is_current else "  "
        ref_style = "bold" if is_current else "$text-muted" if no_key else ""
        row = Content.assemble(
            mark,
            (_fit(item.ref, self._ref_width), ref_style),
            "  ",
            (_fit(item.name, self._name_width), "$text-muted"),
            "  ",
            format_tokens(item.context_window).rjust(self._context_width),
            "  ",
            (format_price(item).ljust(self._price_width), "$text-muted"),
        )
        if no_key:
            row = row + Content.styled(f"  {NO_KEY_MARK}", "$warning")
        return row

    def result_for(self, item: Model) -> Model:
        return item


def _fit(text: str, width: int) -> str:
    if len(text) > width:
        return text[: width - 1] + "…"
    return text.ljust(width)
