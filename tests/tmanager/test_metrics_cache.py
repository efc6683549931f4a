"""The tmanager's metrics cache and exception log, driven by a fake clock (no sockets)."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heron_core.config import REGISTRY
from heron_core.errors import ConfigurationError
from heron_core.metricsmgr import AVG, LAST, SUM, MetricTypes
from heron_core.proto import common_pb2, metrics_pb2, packing_plan_pb2, tmanager_pb2, topology_pb2
from heron_core.tmanager import MetricsCache, planned_instances

T0 = 1_700_000_040  # unix seconds, the start of a minute
WORD1, WORD2 = "container_1_word_1", "container_2_word_2"
COUNT3, COUNT4 = "container_1_count_3", "container_2_count_4"
SINKS = "heron.metrics.sinks"
PLANNED = {"word": {WORD1, WORD2}, "count": {COUNT3, COUNT4}}  # as conftest's plan gives them


class Clock:
    """Unix seconds, moved by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def message(
    instance: str,
    at: float,
    metrics: dict[str, str] | None = None,
    *,
    component: str = "word",
    hint: metrics_pb2.MetricType.ValueType = metrics_pb2.METRIC_TYPE_UNSET,
    exceptions: Sequence[metrics_pb2.ExceptionData] = (),
    hostname: str = "host-a",
) -> metrics_pb2.MetricPublisherPublishMessage:
    """One export interval of ``instance`` stamped ``at`` (unix seconds)."""
    return metrics_pb2.MetricPublisherPublishMessage(
        publisher=metrics_pb2.MetricPublisher(
            component_name=component, instance_id=instance, hostname=hostname
        ),
        timestamp=int(at * 1000),
        metrics=[
            metrics_pb2.MetricDatum(name=name, value=value, type=hint)
            for name, value in (metrics or {}).items()
        ],
        exceptions=exceptions,
    )


def new_cache(clock: Clock, **kwargs: int) -> MetricsCache:
    """A cache of topology "wc" with the default type table and the test plan's instances."""
    types = MetricTypes.from_config(
        {"heron.metrics.sinks": REGISTRY["heron.metrics.sinks"].default}
    )
    return MetricsCache(types, topology_name="wc", components=PLANNED, clock=clock, **kwargs)


def query(
    cache: MetricsCache,
    component: str = "word",
    *,
    metrics: Iterable[str] = (),
    instances: Iterable[str] = (),
    interval: int = -1,
    explicit: tuple[int, int] | None = None,
    minutely: bool = False,
) -> tmanager_pb2.MetricResponse:
    request = tmanager_pb2.MetricRequest(
        component_name=component,
        metric=list(metrics),
        instance_id=list(instances),
        interval=interval,
        minutely=minutely,
    )
    if explicit is not None:
        request.explicit_interval.start, request.explicit_interval.end = explicit
    return cache.metrics(request)


def values(response: tmanager_pb2.MetricResponse) -> dict[str, dict[str, str]]:
    """instance -> metric -> value of an OK answer."""
    assert response.status.status == common_pb2.OK, response.status.message
    return {t.instance_id: {m.name: m.value for m in t.metric} for t in response.metric}


def minutely(response: tmanager_pb2.MetricResponse, instance: str, name: str) -> list[tuple]:
    """[(bucket start, bucket end, value)] of one metric of an OK minutely answer."""
    (task,) = [t for t in response.metric if t.instance_id == instance]
    (metric,) = [m for m in task.metric if m.name == name]
    return [(v.interval.start, v.interval.end, v.value) for v in metric.interval_values]


# --------------------------------------------------------------------------- aggregation


def test_each_type_aggregates_its_intervals_all_time_and_per_minute() -> None:
    clock = Clock(T0 + 200)
    cache = new_cache(clock)
    cache.publish(
        [
            message(WORD1, T0 + 1, {"__emit-count/default": "3", "__execute-latency/a": "2"}),
            message(WORD1, T0 + 2, {"__emit-count/default": "4", "__execute-latency/a": "4"}),
            message(WORD1, T0 + 61, {"__emit-count/default": "5", "__execute-latency/a": "9"}),
            message(WORD1, T0 + 3, {"gauge": "7"}),
            message(WORD1, T0 + 62, {"gauge": "8"}),
            message(WORD1, T0 + 10, {"gauge": "1"}),  # older than the newest: not LAST
        ]
    )
    assert values(query(cache)) == {
        WORD1: {"__emit-count/default": "12", "__execute-latency/a": "5.0", "gauge": "8"}
    }
    answer = query(cache, interval=3600, minutely=True)
    assert values(answer) == values(query(cache))
    assert answer.interval == 3600
    assert minutely(answer, WORD1, "__emit-count/default") == [
        (T0, T0 + 59, "7"),
        (T0 + 60, T0 + 119, "5"),
    ]
    assert minutely(answer, WORD1, "__execute-latency/a") == [
        (T0, T0 + 59, "3.0"),
        (T0 + 60, T0 + 119, "9.0"),
    ]
    assert minutely(answer, WORD1, "gauge") == [(T0, T0 + 59, "1"), (T0 + 60, T0 + 119, "8")]


def test_the_type_table_wins_over_the_hint_and_the_default_is_last() -> None:
    cache = new_cache(Clock(T0 + 10))
    cache.publish(
        [
            message(
                WORD1, T0 + t, {"__emit-count/x": "1", "hinted": "2", "plain": str(t)}, hint=AVG
            )
            for t in (1, 2)
        ]
        + [message(WORD1, T0 + 3, {"summed": "2"}, hint=SUM)] * 2
    )
    assert values(query(cache))[WORD1] == {
        "__emit-count/x": "2",  # the table says SUM; the hint AVG is ignored
        "hinted": "2.0",
        "plain": "1.5",  # hinted AVG
        "summed": "4",
    }
    (legacy,) = cache.latest("word")
    types = {d.name: d.type for d in legacy.metrics}
    assert types == {"__emit-count/x": SUM, "hinted": AVG, "plain": AVG, "summed": SUM}
    unhinted = new_cache(Clock(T0 + 10))
    unhinted.publish([message(WORD1, T0 + 1, {"g": "1"}), message(WORD1, T0 + 2, {"g": "2"})])
    unhinted.publish(
        [
            message(WORD1, T0 + t, {"odd": str(t)}, hint=metrics_pb2.MetricType.ValueType(7))
            for t in (1, 2)
        ]
    )
    assert values(query(unhinted))[WORD1] == {"g": "2", "odd": "2"}  # an unknown hint: LAST
    assert [d.type for d in unhinted.latest()[0].metrics] == [LAST, LAST]


def test_integers_answer_without_a_fraction_and_floats_keep_theirs() -> None:
    cache = new_cache(Clock(T0 + 10))
    cache.publish(
        [
            message(WORD1, T0 + 1, {"__emit-count/a": "2", "__emit-count/b": "1.5", "g": "10"}),
            message(WORD1, T0 + 2, {"__emit-count/a": "3", "__emit-count/b": "2", "g": "2.5"}),
            message(WORD1, T0 + 3, {"g": " 7 "}),
        ]
    )
    assert values(query(cache, interval=60))[WORD1] == {
        "__emit-count/a": "5",
        "__emit-count/b": "3.5",
        "g": "7.0",  # LAST of a series that was once fractional
    }


def test_a_restarted_instance_adds_up_and_its_newest_publisher_is_answered() -> None:
    clock = Clock(T0 + 30)
    cache = new_cache(clock)
    cache.publish([message(WORD1, T0 + t, {"__emit-count/default": "10"}) for t in (1, 2)])
    # The instance restarts on another host: its counts are deltas again from zero.
    cache.publish([message(WORD1, T0 + 20, {"__emit-count/default": "4"}, hostname="host-b")])
    (legacy,) = cache.latest()
    assert legacy.publisher.hostname == "host-b"
    assert legacy.timestamp == (T0 + 20) * 1000
    assert [(d.name, d.value) for d in legacy.metrics] == [("__emit-count/default", "24")]
    # A late interval from before the restart counts but does not make the publisher older.
    cache.publish([message(WORD1, T0 + 3, {"__emit-count/default": "1"})])
    (legacy,) = cache.latest()
    assert (legacy.publisher.hostname, legacy.metrics[0].value) == ("host-b", "25")


def test_the_legacy_answer_has_one_message_per_instance_sorted_and_filtered() -> None:
    cache = new_cache(Clock(T0 + 30))
    cache.publish(
        [
            message(WORD2, T0 + 2, {"b": "1", "a": "2"}),
            message(COUNT3, T0 + 1, {"__execute-count/word/default": "1"}, component="count"),
            message(WORD1, T0 + 1, {}),
        ]
    )
    assert [m.publisher.instance_id for m in cache.latest()] == [COUNT3, WORD1, WORD2]
    words = cache.latest("word")
    assert [m.publisher.instance_id for m in words] == [WORD1, WORD2]
    assert [d.name for d in words[1].metrics] == ["a", "b"]
    assert cache.latest("nothing") == []


def test_a_message_without_timestamp_counts_as_now_and_one_without_instance_is_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock(T0 + 75)
    cache = new_cache(clock)
    cache.publish([message(WORD1, 0, {"g": "1"}), message("", T0, {"g": "2"})])
    assert minutely(query(cache, minutely=True), WORD1, "g") == [(T0 + 60, T0 + 119, "1")]
    assert [m.publisher.instance_id for m in cache.latest()] == [WORD1]
    assert "topology 'wc': dropping metrics without publisher.instance_id" in caplog.messages


# --------------------------------------------------------------------------- the window


def test_buckets_older_than_the_window_are_neither_answered_nor_kept() -> None:
    clock = Clock(T0)
    cache = new_cache(clock, max_minutes=3)
    for minute in range(5):
        clock.now = T0 + 60 * minute + 30
        cache.publish([message(WORD1, clock.now, {"__emit-count/default": str(minute + 1)})])
    # Window: the minute of "now" and the two before it.
    timeline = minutely(query(cache, minutely=True), WORD1, "__emit-count/default")
    assert timeline == [(T0 + 60 * m, T0 + 60 * m + 59, str(m + 1)) for m in (2, 3, 4)]
    assert values(query(cache, interval=10_000))[WORD1] == {"__emit-count/default": "12"}
    assert values(query(cache))[WORD1] == {"__emit-count/default": "15"}  # all time keeps all

    clock.now = T0 + 60 * 6 + 1  # minute 6: only minute 4 is still in the window
    answer = query(cache, minutely=True, metrics=["__emit-count/default"])
    assert minutely(answer, WORD1, "__emit-count/default") == [(T0 + 240, T0 + 299, "5")]
    # An interval older than the window reaches the all-time value only.
    cache.publish([message(WORD1, T0 + 1, {"__emit-count/default": "100"})])
    assert values(query(cache))[WORD1] == {"__emit-count/default": "115"}
    assert values(query(cache, interval=10_000))[WORD1] == {"__emit-count/default": "5"}
    # Once purged (publish purges about once a minute), nothing old is held any more.
    clock.now = T0 + 60 * 9
    cache.publish([])
    assert values(query(cache, interval=10_000, minutely=True)) == {WORD1: {}}
    assert values(query(cache))[WORD1] == {"__emit-count/default": "115"}


def test_interval_and_explicit_interval_select_the_overlapping_buckets() -> None:
    clock = Clock(T0 + 150)
    cache = new_cache(clock)
    cache.publish(
        [
            message(WORD1, T0 + s, {"__emit-count/default": "1", "g": str(s)})
            for s in range(0, 150, 10)
        ]
    )
    # Minutes T0 (6 intervals), T0+60 (6), T0+120 (3).
    assert values(query(cache, interval=20)) == {WORD1: {"__emit-count/default": "3", "g": "140"}}
    assert values(query(cache, interval=31)) == {WORD1: {"__emit-count/default": "9", "g": "140"}}
    answer = query(cache, explicit=(T0 + 59, T0 + 60))
    assert values(answer) == {WORD1: {"__emit-count/default": "12", "g": "110"}}
    assert answer.interval == 1
    early = query(cache, explicit=(T0 - 600, T0 - 1))
    assert values(early) == {WORD1: {}}
    assert query(cache).interval == 0  # all time: seconds since the cache started
    clock.now += 42
    assert query(cache).interval == 42


# --------------------------------------------------------------------------- selection


def test_metric_names_select_exactly_or_by_a_prefix_ending_in_a_slash() -> None:
    cache = new_cache(Clock(T0 + 10))
    names = ["__emit-count/default", "__emit-count/x", "__emit-countx", "__ack-count/default"]
    cache.publish([message(WORD1, T0 + 1, dict.fromkeys(names, "1"))])
    assert sorted(values(query(cache, metrics=["__emit-count/"]))[WORD1]) == [
        "__emit-count/default",
        "__emit-count/x",
    ]
    assert sorted(values(query(cache, metrics=["__emit-countx", "nothing"]))[WORD1]) == [
        "__emit-countx"
    ]
    assert sorted(values(query(cache, metrics=["__emit-count"]))[WORD1]) == []
    assert sorted(values(query(cache))[WORD1]) == sorted(names)


def test_instances_filter_and_a_planned_silent_instance_answers_empty() -> None:
    cache = new_cache(Clock(T0 + 10))
    cache.publish(
        [
            message(WORD1, T0 + 1, {"g": "1"}),
            message(COUNT3, T0 + 1, {"g": "2"}, component="count"),
            message("stmgr-1", T0 + 1, {"__server/__bytes_to_workers": "9"}, component="__stmgr__"),
        ]
    )
    assert values(query(cache)) == {WORD1: {"g": "1"}}
    assert values(query(cache, instances=[WORD2, WORD1])) == {WORD1: {"g": "1"}, WORD2: {}}
    assert [t.instance_id for t in query(cache, instances=[WORD2, WORD1]).metric] == [WORD1, WORD2]
    assert values(query(cache, "__stmgr__")) == {"stmgr-1": {"__server/__bytes_to_workers": "9"}}


@pytest.mark.parametrize(
    ("component", "instances", "interval", "explicit", "expected"),
    [
        ("", (), -1, None, "topology 'wc': a component_name is required"),
        (
            "nope",
            (),
            -1,
            None,
            "topology 'wc': no component 'nope' (components: ['count', 'word'])",
        ),
        (
            "word",
            ["container_1_count_3", WORD1, "x"],
            -1,
            None,
            "topology 'wc', component 'word': no instance 'container_1_count_3', 'x' "
            f"(instances: ['{WORD1}', '{WORD2}'])",
        ),
        (
            "word",
            (),
            0,
            None,
            "topology 'wc', component 'word': interval 0: expected -1 (all time) or a number "
            "of seconds > 0",
        ),
        ("word", (), -2, None, "interval -2: expected -1"),
        (
            "word",
            (),
            -1,
            (T0, T0 - 1),
            f"topology 'wc', component 'word': explicit_interval start {T0}, end {T0 - 1}: "
            "expected unix seconds with 0 <= start <= end",
        ),
        ("word", (), -1, (-5, 10), "explicit_interval start -5, end 10"),
    ],
)
def test_bad_metric_queries_answer_notok_naming_topology_and_component(
    component: str,
    instances: Sequence[str],
    interval: int,
    explicit: tuple[int, int] | None,
    expected: str,
) -> None:
    cache = new_cache(Clock(T0 + 10))
    cache.publish([message(WORD1, T0 + 1, {"g": "1"})])
    answer = query(cache, component, instances=instances, interval=interval, explicit=explicit)
    assert answer.status.status == common_pb2.NOTOK
    assert expected in answer.status.message
    assert not answer.metric


def test_bad_values_are_dropped_with_a_rate_limited_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock(T0 + 10)
    cache = new_cache(clock)
    bad = {"g": "1", "a": "abc", "b": "nan", "c": "inf", "d": ""}
    cache.publish([message(WORD1, T0 + 1, bad)])
    assert values(query(cache)) == {WORD1: {"g": "1"}}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"topology 'wc': instance '{WORD1}', metric 'a': value 'abc' is not a finite number; "
        "dropped"
    ]
    clock.now += 10
    cache.publish([message(WORD1, T0 + 2, {"e": "x"})])
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings[1:] == [
        f"topology 'wc': instance '{WORD1}', metric 'e': value 'x' is not a finite number; "
        "dropped (3 more like it in the last 10 s)"
    ]


def test_series_beyond_the_cap_are_dropped_with_a_warning_naming_the_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cache = new_cache(Clock(T0 + 10), max_series=2)
    cache.publish([message(WORD1, T0 + 1, {"a": "1", "b": "1", "c": "1"})])
    cache.publish([message(WORD1, T0 + 2, {"a": "2", "b": "2"}), message(WORD2, T0 + 2, {})])
    cache.publish([message(COUNT3, T0 + 2, {"a": "2"}, component="count")])
    assert values(query(cache)) == {WORD1: {"a": "2", "b": "2"}, WORD2: {}}
    assert cache.latest("count") == []
    assert any(
        "metric 'c' dropped: the metrics cache holds 2 series or instances (raise "
        "'heron.tmanager.metrics.collector.maximum.metrics')" in m
        for m in caplog.messages
    )


def test_from_config_reads_the_topology_config_and_rejects_bad_values() -> None:
    table = {"tmanager-sink": {"tmanager-metrics-type": {"mine": "SUM"}}}
    cache = MetricsCache.from_config(
        {"heron.metrics.sinks": table}, topology_name="wc", clock=Clock(T0 + 10)
    )
    cache.publish([message(WORD1, T0 + t, {"mine": "2", "__emit-count/d": "2"}) for t in (1, 2)])
    assert values(query(cache)) == {WORD1: {"mine": "4", "__emit-count/d": "2"}}
    with pytest.raises(ConfigurationError, match=r"maximum\.interval\.min.*the topology config"):
        MetricsCache.from_config(
            {"heron.tmanager.metrics.collector.maximum.interval.min": 0}, topology_name="wc"
        )


# --------------------------------------------------------------------------- exceptions


def exception(
    stacktrace: str, first: str, last: str, count: int, logging_: str = ""
) -> metrics_pb2.ExceptionData:
    return metrics_pb2.ExceptionData(
        stacktrace=stacktrace, firsttime=first, lasttime=last, count=count, logging=logging_
    )


def exceptions(
    cache: MetricsCache, component: str = "word", instances: Iterable[str] = ()
) -> tmanager_pb2.ExceptionLogResponse:
    return cache.exceptions(
        tmanager_pb2.ExceptionLogRequest(component_name=component, instances=list(instances))
    )


def test_exceptions_merge_per_instance_and_stack_trace() -> None:
    cache = new_cache(Clock(T0 + 100))
    boom = "Traceback ...\nValueError: boom"
    cache.publish(
        [
            message(
                WORD1,
                T0 + 5,
                exceptions=[
                    exception(
                        boom, "2024-01-01T00:00:05+00:00", "2024-01-01T00:00:06+00:00", 2, "b2"
                    ),
                    exception("other", "2024-01-01T00:00:01Z", "2024-01-01T00:00:01Z", 1),
                ],
            ),
            message(
                WORD1,
                T0 + 4,
                exceptions=[
                    exception(
                        boom, "2024-01-01T00:00:01+00:00", "2024-01-01T00:00:02+00:00", 3, "b1"
                    )
                ],
                hostname="host-z",
            ),
            message(
                WORD2,
                T0 + 5,
                exceptions=[exception(boom, "2024-01-01T00:00:09Z", "2024-01-01T00:00:09Z", 1)],
            ),
        ]
    )
    answer = exceptions(cache)
    assert answer.status.status == common_pb2.OK
    got = [
        (e.instance_id, e.stacktrace, e.firsttime, e.lasttime, e.count, e.logging, e.hostname)
        for e in answer.exceptions
    ]
    assert got == [  # the most recent first
        (WORD2, boom, "2024-01-01T00:00:09Z", "2024-01-01T00:00:09Z", 1, "", "host-a"),
        (WORD1, boom, "2024-01-01T00:00:01+00:00", "2024-01-01T00:00:06+00:00", 5, "b2", "host-a"),
        (WORD1, "other", "2024-01-01T00:00:01Z", "2024-01-01T00:00:01Z", 1, "", "host-a"),
    ]
    assert {e.component_name for e in answer.exceptions} == {"word"}
    assert [e.instance_id for e in exceptions(cache, instances=[WORD2]).exceptions] == [WORD2]
    assert exceptions(cache, "count").exceptions == []
    bad = exceptions(cache, "nope")
    assert bad.status.status == common_pb2.NOTOK and "no component 'nope'" in bad.status.message
    bad = exceptions(cache, instances=["x"])
    assert bad.status.status == common_pb2.NOTOK and "no instance 'x'" in bad.status.message


def test_exception_times_default_to_the_message_and_counts_saturate() -> None:
    cache = new_cache(Clock(T0 + 100))
    cache.publish(
        [
            message(WORD1, T0 + 5, exceptions=[exception("t", "", "garbage", 0)]),
            message(WORD1, T0 + 6, exceptions=[exception("t", "", "", 2**31 - 1)]),
            message(WORD2, 2**52, exceptions=[exception("far", "", "", 1)]),
        ]
    )
    assert [e.lasttime for e in exceptions(cache, instances=[WORD2]).exceptions] == [""]
    (entry,) = exceptions(cache, instances=[WORD1]).exceptions
    assert entry.count == 2**31 - 1
    assert (entry.firsttime, entry.lasttime) == (
        "2023-11-14T22:14:05+00:00",
        "2023-11-14T22:14:06+00:00",
    )


def test_the_exception_log_keeps_the_most_recently_seen_entries() -> None:
    cache = new_cache(Clock(T0 + 100), max_exceptions=3)
    for second in (5, 1, 3, 2):
        at = f"2024-01-01T00:00:0{second}Z"
        cache.publish([message(WORD1, T0, exceptions=[exception(f"t{second}", at, at, 1)])])
    assert sorted(e.stacktrace for e in exceptions(cache).exceptions) == ["t2", "t3", "t5"]
    # Seeing t2 again makes it recent; t3 is now the oldest and goes first.
    late = "2024-01-01T00:00:09Z"
    cache.publish([message(WORD1, T0, exceptions=[exception("t2", late, late, 1)])])
    cache.publish([message(WORD1, T0, exceptions=[exception("t7", late, late, 1)])])
    assert [e.stacktrace for e in exceptions(cache).exceptions] == ["t2", "t7", "t5"]


# --------------------------------------------------------------------------- properties

_INTERVALS = st.lists(
    st.tuples(
        st.integers(0, 600),  # seconds after T0
        # quarters: their sums are exact in any order
        st.integers(-1000, 1000) | st.integers(-4000, 4000).map(lambda q: q / 4),
    ),
    max_size=40,
)


@given(_INTERVALS, st.randoms(use_true_random=False))
def test_answers_do_not_depend_on_arrival_order(
    intervals: list[tuple[int, int | float]], shuffle: random.Random
) -> None:
    """Any arrival order of the same intervals gives the same answers (distinct timestamps,
    as each instance stamps its messages in order)."""
    first: dict[int, int | float] = {}
    for second, value in intervals:
        first.setdefault(second, value)
    distinct = list(first.items())

    def answers(order: list[tuple[int, int | float]]) -> tuple[object, ...]:
        cache = new_cache(Clock(T0 + 700))
        cache.publish(
            [
                message(
                    WORD1,
                    T0 + s,
                    {"__emit-count/a": str(v), "__execute-latency/a": str(v), "g": str(v)},
                )
                for s, v in order
            ]
        )
        return (
            values(query(cache, interval=500, minutely=True)),
            [
                (m.name, [(v.interval.start, v.value) for v in m.interval_values])
                for t in query(cache, minutely=True).metric
                for m in t.metric
            ],
            [(d.name, d.value) for d in cache.latest()[0].metrics] if order else [],
        )

    shuffled = list(distinct)
    shuffle.shuffle(shuffled)
    assert answers(distinct) == answers(shuffled)


@given(_INTERVALS)
def test_sums_agree_with_a_simple_model(intervals: list[tuple[int, int | float]]) -> None:
    """SUM is the sum of every interval in range; AVG their mean; per minute the same."""
    cache = new_cache(Clock(T0 + 700))
    cache.publish(
        [
            message(WORD1, T0 + s, {"__emit-count/a": str(v), "__execute-latency/a": str(v)})
            for s, v in intervals
        ]
    )
    if not intervals:
        assert values(query(cache)) == {}
        return
    got = values(query(cache))[WORD1]
    total = sum(v for _, v in intervals)
    assert float(got["__emit-count/a"]) == pytest.approx(total)
    assert ("." not in got["__emit-count/a"]) == all(isinstance(v, int) for _, v in intervals)
    assert float(got["__execute-latency/a"]) == pytest.approx(total / len(intervals))
    recent = [(s, v) for s, v in intervals if (T0 + s) // 60 >= (T0 + 700 - 300) // 60]
    answer = query(cache, interval=300, minutely=True)
    got_recent = values(answer)[WORD1]
    if not recent:
        assert got_recent == {}
        return
    assert float(got_recent["__emit-count/a"]) == pytest.approx(sum(v for _, v in recent))
    per_minute: dict[int, list[int | float]] = {}
    for s, v in recent:
        per_minute.setdefault((T0 + s) // 60 * 60, []).append(v)
    timeline = minutely(answer, WORD1, "__emit-count/a")
    assert [start for start, _, _ in timeline] == sorted(per_minute)
    for start, end, value in timeline:
        assert end == start + 59
        assert float(value) == pytest.approx(sum(per_minute[start]))


def test_planned_instances_name_every_component_of_the_topology(
    topology: topology_pb2.Topology, packing_plan: packing_plan_pb2.PackingPlan
) -> None:
    assert planned_instances(topology, packing_plan) == {
        **PLANNED,
        "__stmgr__": {"stmgr-1", "stmgr-2"},
    }
