"""What ``heron run`` prints: the summary table within 80 columns, plain progress lines."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from heron_core.client import ComponentStats
from heron_core.client._progress import ProgressView, compact_number, stats_table

WORD_COUNT = [
    ComponentStats("word_spout", True, 2, 3_456_789, 0, 3_456_001, 788, 115_226.3, 3),
    ComponentStats("split_bolt", False, 4, 34_567_890, 3_456_001, 3_456_001, 0, 115_226.3),
    ComponentStats("count_bolt", False, 8, 34_567_890, 34_567_890, 34_567_890, 0, 1_152_263, 12),
]
RATES = [s.rate for s in WORD_COUNT]


def render(stats: list[ComponentStats], rates: list[float], width: int = 80) -> list[str]:
    out = io.StringIO()
    console = Console(file=out, width=width)
    console.print(stats_table("WordCount: ran 30.0 s, stopped by time limit", stats, rates, width))
    return out.getvalue().splitlines()


def numbers(line: str) -> list[str]:
    return re.findall(r"\d[\d,.]*[kMGT]?", line)


@pytest.mark.parametrize("scale", [1, 30, 1000], ids=["millions", "a billion", "tens of billions"])
def test_the_summary_fits_80_columns_with_every_number_whole(scale: int) -> None:
    stats = [
        ComponentStats(
            s.component,
            s.is_spout,
            s.instances,
            s.emitted * scale,
            s.executed * scale,
            s.acked * scale,
            s.failed,
            restarts=s.restarts,
        )
        for s in WORD_COUNT
    ]
    lines = render(stats, [r * scale for r in RATES])
    assert max(len(line) for line in lines) <= 80, "\n".join(lines)
    header = lines[1].split()
    assert header == [
        "component",
        "kind",
        "tasks",
        "emitted",
        "executed",
        "acked",
        "failed",
        "restarts",
        "per",
        "sec",
    ]
    rows = {line.split()[0]: line for line in lines[3:] if line.strip()}
    assert list(rows) == ["word_spout", "split_bolt", "count_bolt"]  # one line per component
    for stat in stats:
        cells = rows[stat.component].split()
        assert cells[1] == ("spout" if stat.is_spout else "bolt")
        assert cells[2] == str(stat.instances)
        assert cells[7] == str(stat.restarts)
        assert len(numbers(rows[stat.component])) == 7  # tasks, 4 counts, restarts, rate


def test_the_summary_keeps_exact_counts_when_they_fit() -> None:
    lines = render(WORD_COUNT[:1], RATES[:1])
    assert "3,456,789" in lines[3] and "115,226" in lines[3]
    wide = render(WORD_COUNT, RATES, width=120)
    assert "34,567,890" in wide[5] and "115,226" in wide[4] and "1,152,263" in wide[5]


def test_a_long_component_name_is_folded_never_a_number() -> None:
    stats = [ComponentStats("a_component_with_a_very_long_name_" * 3, True, 1, 123_456_789)]
    lines = render(stats, [4_567_890.0])
    assert max(len(line) for line in lines) <= 80
    assert "123,456,789" in "".join(lines) or "123M" in "".join(lines)


def test_compact_numbers() -> None:
    assert [compact_number(v) for v in (0, 9_999, 10_000, 999_499, 999_500, 12_345_678)] == [
        "0",
        "9,999",
        "10.0k",
        "999k",
        "1.00M",
        "12.3M",
    ]


def test_plain_progress_lines_are_never_wrapped() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80)
    with ProgressView(console, "WordCount", line_interval=0.0) as view:
        view.update(None, 0.0, "starting")
        view.update(WORD_COUNT, 5.0, "running")
    first, second = out.getvalue().splitlines()
    assert first == "WordCount: 0 s, starting"
    assert second.startswith("[5 s] word_spout emitted 3,456,789 (115,226/s, 3 restarts); ")
    assert "; split_bolt executed 3,456,001 (115,226/s); " in second
    assert second.endswith("count_bolt executed 34,567,890 (1,152,263/s, 12 restarts)")
