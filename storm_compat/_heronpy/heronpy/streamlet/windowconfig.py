"""``WindowConfig``: the duration and slide of a time window (heronpy's module path)."""

from __future__ import annotations

import datetime

__all__ = ["WindowConfig"]


def _as_delta(value: int | datetime.timedelta, what: str) -> datetime.timedelta:
    if isinstance(value, bool) or not isinstance(value, int | datetime.timedelta):
        raise TypeError(
            f"the {what} must be whole seconds (int) or a datetime.timedelta, got {value!r}"
        )
    return datetime.timedelta(seconds=value) if isinstance(value, int) else value


class WindowConfig:
    """A time window: ``window_duration`` long, computed every ``slide_interval``.

    Both are whole seconds (Python windows tick once per second at the finest) and the
    duration is at least the slide.

    >>> WindowConfig.create_sliding_window(10, 2)
    WindowConfig(duration=10s, slide=2s)
    >>> import datetime
    >>> WindowConfig.create_tumbling_window(datetime.timedelta(seconds=5))
    WindowConfig(duration=5s, slide=5s)
    >>> WindowConfig.create_sliding_window(datetime.timedelta(milliseconds=1500), 1)
    Traceback (most recent call last):
    ...
    ValueError: window times must be whole seconds (Python windows have second resolution), \
got duration 0:00:01.500000 and slide 0:00:01
    """

    def __init__(
        self, window_duration: datetime.timedelta, slide_interval: datetime.timedelta
    ) -> None:
        for what, value in (("window duration", window_duration), ("slide", slide_interval)):
            if not isinstance(value, datetime.timedelta):
                raise TypeError(f"the {what} must be a datetime.timedelta, got {value!r}")
        if window_duration.microseconds or slide_interval.microseconds:
            raise ValueError(
                "window times must be whole seconds (Python windows have second resolution), "
                f"got duration {window_duration} and slide {slide_interval}"
            )
        duration, slide = int(window_duration.total_seconds()), int(slide_interval.total_seconds())
        if slide < 1 or duration < slide:
            raise ValueError(
                "a window needs a slide of at least 1 s and a duration no shorter than the "
                f"slide, got duration {duration}s and slide {slide}s"
            )
        self._window_duration = window_duration
        self._slide_interval = slide_interval

    @property
    def duration_secs(self) -> int:
        """The window's length in seconds."""
        return int(self._window_duration.total_seconds())

    @property
    def slide_secs(self) -> int:
        """Seconds between two computations of the window."""
        return int(self._slide_interval.total_seconds())

    @staticmethod
    def create_tumbling_window(window_duration: int | datetime.timedelta) -> WindowConfig:
        """Windows of ``window_duration`` one after another (the slide is the duration).

        heronpy takes only a timedelta here; whole seconds as an int work too.
        """
        duration = _as_delta(window_duration, "window duration")
        return WindowConfig(duration, duration)

    @staticmethod
    def create_sliding_window(
        window_duration: int | datetime.timedelta, slide_interval: int | datetime.timedelta
    ) -> WindowConfig:
        """Windows of ``window_duration``, one every ``slide_interval`` (seconds or timedelta)."""
        return WindowConfig(
            _as_delta(window_duration, "window duration"), _as_delta(slide_interval, "slide")
        )

    def __repr__(self) -> str:
        return f"WindowConfig(duration={self.duration_secs}s, slide={self.slide_secs}s)"
