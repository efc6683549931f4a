"""The public surface of storm_compat, pinned: any change shows up as a diff here."""

from __future__ import annotations

import importlib
import inspect

import pytest

from heron_core.config import REGISTRY
from storm_compat import Config

PUBLIC = {
    "storm_compat": ["Config", "LocalCluster", "StormSubmitter", "StormTopology"],
    "storm_compat.grouping": ["CustomStreamGrouping"],
    "storm_compat.hooks": ["BaseTaskHook", "ITaskHook"],
    "storm_compat.hooks.info": [
        "BoltAckInfo",
        "BoltExecuteInfo",
        "BoltFailInfo",
        "EmitInfo",
        "SpoutAckInfo",
        "SpoutFailInfo",
    ],
    "storm_compat.metric": [],
    "storm_compat.metric.api": [
        "AssignableMetric",
        "CombinedMetric",
        "CountMetric",
        "ICombiner",
        "IMetric",
        "IReducer",
        "MeanReducer",
        "MultiCountMetric",
        "MultiReducedMetric",
        "ReducedMetric",
    ],
    "storm_compat.spout": ["ISpout", "SpoutOutputCollector"],
    "storm_compat.state": ["InMemoryKeyValueState", "KeyValueState", "State"],
    "storm_compat.task": ["IBolt", "OutputCollector", "TopologyContext"],
    "storm_compat.testing": [
        "CompleteTopologyParam",
        "FixedTuple",
        "FixedTupleSpout",
        "MockedSources",
        "TestWordCounter",
        "TestWordSpout",
        "Testing",
    ],
    "storm_compat.topology": [
        "BasicOutputCollector",
        "BoltDeclarer",
        "FailedException",
        "IBasicBolt",
        "IComponent",
        "IRichBolt",
        "IRichSpout",
        "IStatefulBolt",
        "IStatefulComponent",
        "IWindowedBolt",
        "OutputFieldsDeclarer",
        "ReportedFailedException",
        "SpoutDeclarer",
        "StormTopology",
        "TopologyBuilder",
        "TupleFieldTimestampExtractor",
        "WindowedBoltExecutor",
    ],
    "storm_compat.topology.base": [
        "BaseBasicBolt",
        "BaseComponent",
        "BaseRichBolt",
        "BaseRichSpout",
        "BaseStatefulBolt",
        "BaseWindowedBolt",
    ],
    "storm_compat.tuple": ["Fields", "Tuple", "Values"],
    "storm_compat.utils": ["TupleUtils", "Utils"],
    "storm_compat.windowing": [
        "TimeUnit",
        "TimestampExtractor",
        "TupleWindow",
        "TupleWindowImpl",
        "Window",
    ],
}

STORM_METHODS = {
    "storm_compat.topology:TopologyBuilder": ["createTopology", "setBolt", "setSpout"],
    "storm_compat.topology:BoltDeclarer": [
        "addConfiguration",
        "addConfigurations",
        "allGrouping",
        "customGrouping",
        "directGrouping",
        "fieldsGrouping",
        "globalGrouping",
        "localOrShuffleGrouping",
        "noneGrouping",
        "partialKeyGrouping",
        "setCPULoad",
        "setDebug",
        "setMaxSpoutPending",
        "setMaxTaskParallelism",
        "setMemoryLoad",
        "setNumTasks",
        "shuffleGrouping",
    ],
    "storm_compat.topology:OutputFieldsDeclarer": ["declare", "declareStream"],
    "storm_compat.spout:SpoutOutputCollector": [
        "emit",
        "emitDirect",
        "flush",
        "getPendingCount",
        "reportError",
    ],
    "storm_compat.task:OutputCollector": [
        "ack",
        "emit",
        "emitDirect",
        "fail",
        "flush",
        "reportError",
        "resetTimeout",
    ],
    "storm_compat.task:TopologyContext": [
        "addTaskHook",
        "getCodeDir",
        "getComponentId",
        "getComponentIds",
        "getComponentOutputFields",
        "getComponentStreams",
        "getComponentTasks",
        "getConf",
        "getExecutorData",
        "getHooks",
        "getPIDDir",
        "getRawTopology",
        "getRegisteredMetricByName",
        "getResource",
        "getSharedExecutor",
        "getSources",
        "getStormId",
        "getTargets",
        "getTaskData",
        "getTaskToComponent",
        "getThisComponentId",
        "getThisInputFields",
        "getThisOutputFields",
        "getThisOutputFieldsForStreams",
        "getThisSources",
        "getThisStreams",
        "getThisTargets",
        "getThisTaskId",
        "getThisTaskIndex",
        "getThisWorkerPort",
        "getThisWorkerTasks",
        "maxTopologyMessageTimeout",
        "registerMetric",
        "setAllSubscribedState",
        "setExecutorData",
        "setSubscribedState",
        "setTaskData",
    ],
    "storm_compat.hooks:BaseTaskHook": [
        "boltAck",
        "boltExecute",
        "boltFail",
        "cleanup",
        "emit",
        "prepare",
        "spoutAck",
        "spoutFail",
    ],
    "storm_compat:Config": [
        "registerDecorator",
        "registerEventLogger",
        "registerMetricsConsumer",
        "registerSerialization",
        "setAutoTaskHooks",
        "setClasspath",
        "setDebug",
        "setEnableMessageTimeouts",
        "setEnvironment",
        "setFallBackOnJavaSerialization",
        "setKryoFactory",
        "setMaxSpoutPending",
        "setMaxTaskParallelism",
        "setMessageTimeoutSecs",
        "setMultilangSerializer",
        "setNumAckers",
        "setNumEventLoggers",
        "setNumWorkers",
        "setShellBoltMaxPending",
        "setSkipMissingKryoRegistrations",
        "setSleepSpoutWaitStrategyTimeMs",
        "setStatsSampleRate",
        "setSubprocessTimeoutSecs",
        "setTickTupleFrequency",
        "setTopologyComponentWorkerConstraints",
        "setTopologyConstraintsMaxStateSearch",
        "setTopologyPriority",
        "setTopologyStrategy",
        "setTopologyVersion",
        "setTopologyWorkerMaxHeapSize",
    ],
    "storm_compat.metric.api:CountMetric": ["getValueAndReset", "incr", "incrBy"],
    "storm_compat.metric.api:MultiCountMetric": ["getValueAndReset", "scope"],
    "storm_compat.metric.api:ReducedMetric": ["getValueAndReset", "update"],
    "storm_compat.metric.api:MultiReducedMetric": ["getValueAndReset", "scope"],
    "storm_compat.metric.api:CombinedMetric": ["getValueAndReset", "update"],
    "storm_compat.metric.api:AssignableMetric": ["getValueAndReset", "setValue"],
    "storm_compat.metric.api:MeanReducer": ["extractResult", "init", "reduce"],
    "storm_compat.tuple:Tuple": [
        "contains",
        "fieldIndex",
        "getBinary",
        "getBoolean",
        "getDouble",
        "getFields",
        "getInteger",
        "getLong",
        "getMessageId",
        "getSourceComponent",
        "getSourceStreamId",
        "getSourceTask",
        "getString",
        "getStringByField",
        "getValue",
        "getValueByField",
        "getValues",
        "select",
        "size",
    ],
    "storm_compat:LocalCluster": [
        "activate",
        "deactivate",
        "killTopology",
        "shutdown",
        "submitTopology",
    ],
    "storm_compat:StormSubmitter": ["submitTopology"],
    "storm_compat.testing:MockedSources": ["addMockData"],
    "storm_compat.testing:CompleteTopologyParam": [
        "setMockedSources",
        "setStormConf",
        "setTimeoutMs",
    ],
    "storm_compat.testing:Testing": ["completeTopology", "readTuples"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_are_pinned(module: str) -> None:
    imported = importlib.import_module(module)
    assert sorted(imported.__all__) == PUBLIC[module]
    for name in PUBLIC[module]:
        assert getattr(imported, name) is not None


@pytest.mark.parametrize("where", sorted(STORM_METHODS))
def test_storm_method_names_exist(where: str) -> None:
    module, _, name = where.partition(":")
    cls = getattr(importlib.import_module(module), name)
    missing = [m for m in STORM_METHODS[where] if not callable(getattr(cls, m, None))]
    assert missing == []


def test_every_config_key_constant_is_a_registered_key() -> None:
    keys = {
        name: value
        for name, value in inspect.getmembers(Config)
        if name.startswith("TOPOLOGY_") and isinstance(value, str)
    }
    assert len(keys) == 25
    assert [name for name, key in keys.items() if REGISTRY.lookup(key, "test") is None] == []
