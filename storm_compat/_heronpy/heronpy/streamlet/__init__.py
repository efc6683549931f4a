"""heronpy's Streamlet API: functional pipelines built into spouts and bolts.

The names live in heronpy's modules (``heronpy.streamlet.builder.Builder``, ...), which
programs import unchanged; they are also re-exported here.

>>> from heronpy.streamlet import Builder, Config, Runner, WindowConfig
>>> WindowConfig.create_sliding_window(10, 2)
WindowConfig(duration=10s, slide=2s)
"""

from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config
from heronpy.streamlet.context import Context
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.keyedwindow import KeyedWindow
from heronpy.streamlet.resources import Resources
from heronpy.streamlet.runner import Runner
from heronpy.streamlet.streamlet import Streamlet
from heronpy.streamlet.transformoperator import TransformOperator
from heronpy.streamlet.window import Window
from heronpy.streamlet.windowconfig import WindowConfig

__all__ = [
    "Builder",
    "Config",
    "Context",
    "Generator",
    "KeyedWindow",
    "Resources",
    "Runner",
    "Streamlet",
    "TransformOperator",
    "Window",
    "WindowConfig",
]
