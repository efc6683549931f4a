"""Example spouts."""

from .multi_stream_spout import MultiStreamSpout
from .word_spout import WordSpout

__all__ = ["MultiStreamSpout", "WordSpout"]
