"""What ``heron run`` shows: a live per-component table, plain progress lines, a summary."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

from rich import box
from rich.console import Console
from rich.live import Live
from rich.table import Table

from heron_core.client._metrics import ComponentStats

__all__ = ["ProgressView", "stats_table"]


def stats_table(title: str, stats: Sequence[ComponentStats], rates: Sequence[float]) -> Table:
    """A table of ``stats`` (one row per component) with ``rates[i]`` in the last column."""
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("component", overflow="fold")
    table.add_column("kind")
    for column in ("tasks", "emitted", "executed", "acked", "failed", "per sec"):
        table.add_column(column, justify="right", no_wrap=True)
    for row, rate in zip(stats, rates, strict=True):
        table.add_row(
            row.component,
            "spout" if row.is_spout else "bolt",
            str(row.instances),
            f"{row.emitted:,}",
            f"{row.executed:,}",
            f"{row.acked:,}",
            f"{row.failed:,}",
            f"{rate:,.0f}",
        )
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
            self._live.update(stats_table(title, rows, [s.rate for s in rows]), refresh=True)
            return
        if elapsed < self._next_line:
            return
        self._next_line = elapsed + self._line_interval
        if not stats:
            self._console.print(title, highlight=False, markup=False)
            return
        parts = "; ".join(
            f"{s.component} {'emitted' if s.is_spout else 'executed'} {s.throughput:,} "
            f"({s.rate:,.0f}/s)"
            for s in stats
        )
        self._console.print(f"[{elapsed:.0f} s] {parts}", highlight=False, markup=False)
