"""Storm's multilang protocol in the kernel: spouts and bolts whose code is a subprocess.

A plan's ``ShellSpec`` (``heron_core.api.shell_component``) runs as a :class:`ShellSpout` or
:class:`ShellBolt`; these drive the subprocess through
:class:`ShellSpoutHost` / :class:`ShellBoltHost` (also used by the Storm facade's
``ShellSpout``/``ShellBolt``). The wire formats are :data:`SERIALIZERS` (``json``, Storm's
default, and ``msgpack``).

>>> from heron_core.multilang import SERIALIZERS, serializer
>>> sorted(SERIALIZERS)
['json', 'msgpack']
>>> serializer("json").decode(b'{"command": "sync"}\\nend\\n')
[{'command': 'sync'}]
"""

from heron_core.multilang._components import ShellBolt, ShellSpout
from heron_core.multilang._context import ShellMetric, handshake_conf, handshake_context
from heron_core.multilang._hosts import HostBoltCollector, ShellBoltHost, ShellSpoutHost
from heron_core.multilang._process import IdleFailureHandler, ShellProcess, raise_in_main_thread
from heron_core.multilang._serializers import (
    SERIALIZERS,
    JsonSerializer,
    MsgpackSerializer,
    Serializer,
    Stray,
    json_encoder,
    serializer,
    whole_json_messages,
)

__all__ = [
    "SERIALIZERS",
    "HostBoltCollector",
    "IdleFailureHandler",
    "JsonSerializer",
    "MsgpackSerializer",
    "Serializer",
    "ShellBolt",
    "ShellBoltHost",
    "ShellMetric",
    "ShellProcess",
    "ShellSpout",
    "ShellSpoutHost",
    "Stray",
    "handshake_conf",
    "handshake_context",
    "json_encoder",
    "raise_in_main_thread",
    "serializer",
    "whole_json_messages",
]
