"""``KeyedWindow``: the key and window of a keyed windowed result (heronpy's module path)."""

from __future__ import annotations

from typing import Any

from heronpy.streamlet.window import Window

__all__ = ["KeyedWindow"]


class KeyedWindow:
    """A key and the `Window` it was reduced or joined over: the first item of each element
    that ``reduce_by_key_and_window`` and the joins emit, ``(KeyedWindow, result)``.

    ``key`` and ``window`` read them and instances compare by value (additions to heronpy).

    >>> kw = KeyedWindow("lamb", Window(100, 110))
    >>> kw
    KeyedWindow {key: lamb, window: Window {start_time: 100, end_time: 110}}
    >>> kw.key, kw.window.end_time
    ('lamb', 110)
    >>> KeyedWindow("lamb", (100, 110))
    Traceback (most recent call last):
    ...
    TypeError: the window of KeyedWindow must be a Window, got tuple
    """

    __slots__ = ("_key", "_window")

    def __init__(self, key: Any, window: Window) -> None:
        if not isinstance(window, Window):
            raise TypeError(
                f"the window of KeyedWindow must be a Window, got {type(window).__name__}"
            )
        self._key = key
        self._window = window

    @property
    def key(self) -> Any:
        """The key."""
        return self._key

    @property
    def window(self) -> Window:
        """The window."""
        return self._window

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KeyedWindow):
            return NotImplemented
        return bool(self._key == other._key and self._window == other._window)

    def __hash__(self) -> int:
        return hash((self._key, self._window))

    def __reduce__(self) -> tuple[Any, ...]:
        return KeyedWindow, (self._key, self._window)

    def __repr__(self) -> str:
        return f"KeyedWindow {{key: {self._key}, window: {self._window}}}"
