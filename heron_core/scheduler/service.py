"""The per-topology scheduler service, ``python -m heron_core.scheduler`` (see `main`)."""

from heron_core.scheduler._service import MODULE, ServiceReport, main, parse_report, service_argv

__all__ = ["MODULE", "ServiceReport", "main", "parse_report", "service_argv"]
