"""The public names of the multilang modules, pinned: an API change shows up as a diff here."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "heron_core.multilang": [
        "HostBoltCollector",
        "IdleFailureHandler",
        "JsonSerializer",
        "MsgpackSerializer",
        "SERIALIZERS",
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
    ],
    "storm_compat.multilang": ["ShellBolt", "ShellSpout"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names(module: str) -> None:
    loaded = importlib.import_module(module)
    assert sorted(loaded.__all__) == sorted(PUBLIC[module])
    assert all(hasattr(loaded, name) for name in loaded.__all__)
