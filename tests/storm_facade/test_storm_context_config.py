"""Storm's TopologyContext over the kernel's, and Config's setters."""

from __future__ import annotations

import pytest
from storm_support import FakeContext

from heron_core.api import GlobalStreamId, Grouping
from storm_compat import Config
from storm_compat.task import TopologyContext
from storm_compat.tuple import Fields


def test_context_answers_from_the_kernel_context() -> None:
    sources = {GlobalStreamId("split", "default"): Grouping.fields("word")}
    native = FakeContext(
        "count",
        task=7,
        index=1,
        tasks={"count": [6, 7], "split": [3, 4, 5]},
        fields={("split", "default"): ["word"], ("count", "totals"): ["word", "n"]},
        sources=sources,
        config={"topology.debug": False},
    )
    context = TopologyContext(native)
    assert (context.getThisTaskId(), context.getThisComponentId(), context.getThisTaskIndex()) == (
        7,
        "count",
        1,
    )
    assert context.getComponentTasks("split") == [3, 4, 5]
    assert context.getComponentTasks("nope") == []
    assert context.getComponentOutputFields("split", "default") == Fields("word")
    assert context.getComponentOutputFields("split") == Fields("word")
    assert context.getThisOutputFields("totals") == Fields("word", "n")
    assert context.getThisSources() == sources
    assert context.getThisTargets() == {"default": {"sink": Grouping.SHUFFLE}}
    assert context.getStormId() == "t-1"
    assert context.getConf() == {"topology.debug": False}
    assert TopologyContext(FakeContext("spout")).getThisSources() == {}


def test_config_setters_set_storm_keys() -> None:
    conf = Config()
    conf.setDebug(True)
    conf.setNumWorkers(3)
    conf.setNumAckers(0)
    conf.setNumEventLoggers(0)
    conf.setMessageTimeoutSecs(5)
    conf.setMaxSpoutPending(10)
    conf.setMaxTaskParallelism(4)
    conf.setStatsSampleRate(0.5)
    conf.setFallBackOnJavaSerialization(False)
    conf.setSkipMissingKryoRegistrations(True)
    conf.setKryoFactory("my.Factory")
    conf.registerSerialization("my.Type")
    conf.registerSerialization(Fields, "my.Serializer")
    conf.setTopologyWorkerMaxHeapSize(512.0)
    conf.setEnvironment({"A": "1"})
    assert dict(conf) == {
        "topology.debug": True,
        "topology.workers": 3,
        "topology.acker.executors": 0,
        "topology.eventlogger.executors": 0,
        "topology.message.timeout.secs": 5,
        "topology.max.spout.pending": 10,
        "topology.max.task.parallelism": 4,
        "topology.stats.sample.rate": 0.5,
        "topology.fall.back.on.java.serialization": False,
        "topology.skip.missing.kryo.registrations": True,
        "topology.kryo.factory": "my.Factory",
        "topology.kryo.register": [
            "my.Type",
            {"storm_compat.tuple._fields:Fields": "my.Serializer"},
        ],
        "topology.worker.max.heap.size.mb": 512.0,
        "topology.environment": {"A": "1"},
    }


def test_register_serialization_names_a_class_as_instances_import_it() -> None:
    conf = Config()
    conf.registerSerialization(Fields)
    conf.registerSerialization("app.model.Point")
    assert conf["topology.kryo.register"] == [
        "storm_compat.tuple._fields:Fields",
        "app.model.Point",
    ]

    class Local:
        pass

    with pytest.raises(ValueError, match="defined inside a function"):
        conf.registerSerialization(Local)
