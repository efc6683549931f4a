"""Windows over a stream of events: count and duration, sliding and tumbling, processing time
and event time with watermarks. Pure logic with an injected clock; no Storm names.

The semantics are Apache Storm 2.x's windowing (``org.apache.storm.windowing``:
``WindowManager``, the trigger and eviction policies, ``WaterMarkEventGenerator``; and
``org.apache.storm.topology.WindowedBoltExecutor``), read for this package and restated in
each module's docstrings. The points users notice:

* A window that slides by count fires with every ``slide``-th event, from the first: the first
  window holds the events so far, fewer than the length.
* A processing-time window that slides by duration fires every interval from the start; it
  holds the events that arrived in the last ``length`` ms (the first one, every event so far).
* ``new`` holds the events not in the previous window; ``expired`` those that left the window
  since the previous one. An event expires (and the listener's ``on_expiry`` gets it) when a
  scan finds it out of the window: when a window fires, or every 100 additions.
* Event time: a watermark, every ``watermark_interval_ms``, is the slowest input stream's
  latest timestamp minus the lag; it fires every window that ends at or before it. Duration
  windows end at multiples of the sliding interval (since the epoch), empty ones are skipped.
  An event older than the last watermark is late and is not added.

>>> from heron_core.windowing import WindowSpec, Windower
>>> class Sums:
...     def on_activation(self, window):
...         print(window.start_ts, window.end_ts, sum(window.items))
...     def on_expiry(self, items):
...         pass
>>> now = [0]
>>> windows = Windower(WindowSpec(length_ms=100, slide_ms=100), Sums(), clock=lambda: now[0])
>>> for now[0] in (10, 50, 120):
...     _ = windows.add(now[0])
...     windows.poll()
-1 99 60
>>> now[0] = 200
>>> windows.poll()
99 199 120
"""

from heron_core.windowing._spec import (
    DEFAULT_WATERMARK_INTERVAL_MS,
    LATE_TUPLE_STREAM,
    LENGTH_COUNT,
    LENGTH_DURATION_MS,
    MAX_LAG_MS,
    SLIDING_COUNT,
    SLIDING_DURATION_MS,
    TIMESTAMP_FIELD,
    WATERMARK_INTERVAL_MS,
    WindowConfigError,
    WindowSpec,
)
from heron_core.windowing._windower import Window, Windower, WindowListener, wall_clock_ms

__all__ = [
    "DEFAULT_WATERMARK_INTERVAL_MS",
    "LATE_TUPLE_STREAM",
    "LENGTH_COUNT",
    "LENGTH_DURATION_MS",
    "MAX_LAG_MS",
    "SLIDING_COUNT",
    "SLIDING_DURATION_MS",
    "TIMESTAMP_FIELD",
    "WATERMARK_INTERVAL_MS",
    "Window",
    "WindowConfigError",
    "WindowListener",
    "WindowSpec",
    "Windower",
    "wall_clock_ms",
]
