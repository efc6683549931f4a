"""Storm's ``storm.thrift`` as a thriftpy2 module: the one streamparse builds and uses.

streamparse 5 embeds Storm's ``storm.thrift`` and loads it with thriftpy2 as the module
``storm_thrift``; its ``Topology`` classes hold structs of that module. Reusing that very module
(instead of loading another copy) keeps ``isinstance`` checks and equality between those structs
and ours working.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from heron_core.errors import ConfigurationError

__all__ = ["storm_thrift"]


@functools.cache
def storm_thrift() -> ModuleType:
    """The thriftpy2 module of Storm's ``storm.thrift`` (``StormTopology``, ``SpoutSpec``, ...).

    Raises:
        ConfigurationError: the ``streamparse`` package, which carries ``storm.thrift``, is not
            installed.

    >>> storm_thrift().StreamInfo(output_fields=["word"], direct=False)
    StreamInfo(output_fields=['word'], direct=False)
    """
    try:
        module = importlib.import_module("streamparse.thrift")
    except ImportError as exc:
        raise ConfigurationError(
            "Storm's storm.thrift is loaded from the streamparse package, which is not "
            f"installed ({exc}); install it with: pip install 'heron-storm[streamparse]'"
        ) from exc
    thrift: ModuleType = module.storm_thrift
    return thrift
