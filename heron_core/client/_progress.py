"""What ``heron run`` shows: a live per-component table, plain progress lines, a summary."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import TracebackType

from rich import box
from rich.console import Console
from rich.live import Live
from rich.table import Table

from heron_core.client._metrics import ComponentStats

__all__ = ["ProgressView", "compact_number", "stats_table"]

_HEADERS = ("component", "kind", "tasks", "emitted", "executed", "acked", "failed", "restarts")
_RATE_HEADER = "per sec"


def compact_number(value: float) -> str:
    """``value`` in at most 5 characters past 9,999: three significant digits and a k, M, G
    or T suffix.

    >>> [compact_number(v) for v in (999, 9_999, 12_345, 1_234_567, 123_456_789, 5e12)]
    ['999', '9,999', '12.3k', '1.23M', '123M', '5.00T']
    """
    if abs(value) < 10_000:
        return f"{value:,.0f}"
    for suffix, scale in (("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12)):
        scaled = value / scale
        if abs(scaled) < 999.5 or suffix == "T":
            digits = 2 if abs(scaled) < 9.995 else 1 if abs(scaled) < 99.95 else 0
            return f"{scaled:.{digits}f}{suffix}"
    raise AssertionError("unreachable")


Number = Callable[[float], str]


def _exact(value: float) -> str:
    return f"{value:,.0f}"


def _cells(row: ComponentStats, rate: float, number: Number, rate_number: Number) -> list[str]:
    return [
        row.component,
        "spout" if row.is_spout else "bolt",
        str(row.instances),
        number(row.emitted),
        number(row.executed),
        number(row.acked),
        number(row.failed),
        str(row.restarts),
        rate_number(rate),
    ]


def stats_table(
    title: str,
    stats: Sequence[ComponentStats],
    rates: Sequence[float],
    width: int | None = None,
) -> Table:
    """A table of ``stats`` (one row per component) with ``rates[i]`` in the last column.

    With a ``width``, it is laid out to fit: columns two spaces apart, else one; exact
    numbers (``12,345,678``), else the rates, then the counts too, in three significant
    digits (``12.3M``). Numbers are never wrapped; only a component name too long for what
    is left is folded.
    """
    headers = (*_HEADERS, _RATE_HEADER)
    layouts: list[tuple[Number, Number, int]] = [
        (_exact, _exact, 2),
        (_exact, _exact, 1),
        (_exact, compact_number, 1),
        (compact_number, compact_number, 2),
        (compact_number, compact_number, 1),
    ]
    number, rate_number, gap = layouts[0]
    if width is not None:
        for number, rate_number, gap in layouts:
            rows = [_cells(*pair, number, rate_number) for pair in zip(stats, rates, strict=True)]
            widths = [max(map(len, column)) for column in zip(headers, *rows, strict=True)]
            if sum(widths) + gap * (len(headers) - 1) <= width:
                break
    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, gap - 1, 0, 0),
    )
    table.add_column(headers[0], overflow="fold")
    table.add_column(headers[1], no_wrap=True)
    for header in headers[2:]:
        table.add_column(header, justify="right", no_wrap=True)
    for row, rate in zip(stats, rates, strict=True):
        table.add_row(*_cells(row, rate, number, rate_number))
    return table


class ProgressView:
    """Shows a running topology's counters: on a terminal a table refreshed by every `update`,
    otherwise one plain line at most every ``line_interval`` seconds.

    Args:
        console: where to write.
        topology: the topology's name, for titles.
        line_interval: seconds between plain lines.
    """

    def __init__(self, console: Console, topology: str, line_interval: float = 5.0) -> None:
        self._console = console
        self._topology = topology
        self._line_interval = line_interval
        self._next_line = 0.0
        self._live: Live | None = None

    def __enter__(self) -> ProgressView:
        if self._console.is_terminal:
            self._live = Live(console=self._console, auto_refresh=False, transient=True)
            self._live.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def update(self, stats: Sequence[ComponentStats] | None, elapsed: float, status: str) -> None:
        """Show ``stats`` (None: no metrics yet) after ``elapsed`` seconds, with ``status``."""
        title = f"{self._topology}: {elapsed:.0f} s, {status}"
        if self._live is not None:
            rows = stats or []
            table = stats_table(title, rows, [s.rate for s in rows], self._console.width)
            self._live.update(table, refresh=True)
            return
        if elapsed < self._next_line:
            return
        self._next_line = elapsed + self._line_interval
        if not stats:
            self._console.print(title, highlight=False, markup=False, soft_wrap=True)
            return
        parts = "; ".join(
            f"{s.component} {'emitted' if s.is_spout else 'executed'} {s.throughput:,} "
            f"({s.rate:,.0f}/s{f', {s.restarts} restarts' if s.restarts else ''})"
            for s in stats
        )
        self._console.print(
            f"[{elapsed:.0f} s] {parts}", highlight=False, markup=False, soft_wrap=True
        )
