"""Configuration: the key registry, layered resolution and the cluster configs.

Every dotted key the kernel reads is registered in `REGISTRY` with its type, default and one
line of doc. Keys beginning with ``topology.`` or ``heron.`` must be registered, or fall under
a registered `KeyPrefix` (``heron.scheduler.spark.conf.<spark property>``); any other key is a
user key and passes through untouched. A topology's config is resolved in layers, later
ones winning: registry defaults < cluster YAML < topology config < command line. Every YAML
or JSON file a user hands over is read by `load_yaml` / `load_json_file`, which refuse a file
that is too large or (YAML) expands too much through its aliases.

>>> cfg = build_config(
...     cluster_config=load_cluster_config("local"),
...     topology_config={"topology.workers": 2, "my.threshold": 0.5},
...     overrides=dict([parse_override("topology.debug=true")]),
... )
>>> cfg["topology.stmgrs"], cfg["topology.debug"], cfg["my.threshold"], acking_enabled(cfg)
(2, True, 0.5, True)
"""

from heron_core.config._keys import REGISTRY, SPARK_CONF_PREFIX
from heron_core.config._layers import (
    CONFIG_PATH_ENV,
    RELIABILITY_KEYS,
    Layer,
    acking_enabled,
    build_config,
    inert_settings,
    known_clusters,
    load_cluster_config,
    merge_layers,
    parse_override,
    resolve_path,
    setting,
)
from heron_core.config._registry import RESERVED_PREFIXES, Key, KeyPrefix
from heron_core.config._yaml import (
    MAX_ALIAS_NODES,
    MAX_INPUT_BYTES,
    load_json_file,
    load_yaml,
    load_yaml_file,
    read_input_text,
)
from heron_core.config.codec import config_from_proto, config_to_proto

__all__ = [
    "CONFIG_PATH_ENV",
    "MAX_ALIAS_NODES",
    "MAX_INPUT_BYTES",
    "REGISTRY",
    "RELIABILITY_KEYS",
    "RESERVED_PREFIXES",
    "SPARK_CONF_PREFIX",
    "Key",
    "KeyPrefix",
    "Layer",
    "acking_enabled",
    "build_config",
    "config_from_proto",
    "config_to_proto",
    "inert_settings",
    "known_clusters",
    "load_cluster_config",
    "load_json_file",
    "load_yaml",
    "load_yaml_file",
    "merge_layers",
    "parse_override",
    "read_input_text",
    "resolve_path",
    "setting",
]
