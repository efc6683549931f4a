"""The metrics manager of a container: what its instances and stream manager publish, fanned
out to the sinks of ``heron.metrics.sinks`` (Heron's metrics_sinks.yaml)."""

from heron_core.metricsmgr._shell import path_refusal
from heron_core.metricsmgr._types import AVG, LAST, STMGR_COMPONENT, SUM, MetricTypes

__all__ = ["AVG", "LAST", "STMGR_COMPONENT", "SUM", "MetricTypes", "path_refusal"]
