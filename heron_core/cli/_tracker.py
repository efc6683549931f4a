"""``heron tracker``."""

from __future__ import annotations

import logging
import sys

import click

from heron_core.cli._http_options import allowed_host_option
from heron_core.cli._options import config_path_option, heron_home_option
from heron_core.client import client_config
from heron_core.config import known_clusters
from heron_core.errors import ConfigurationError

__all__ = ["tracker_command"]


@click.command("tracker")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8888,
    show_default=True,
    help="TCP port to serve the REST API on (0: any free port; the address is printed).",
)
@click.option(
    "--address",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (0.0.0.0: every interface; the API serves the topologies' "
    "plans, metrics and logs to whoever reaches it).",
)
@allowed_host_option
@config_path_option
@heron_home_option
def tracker_command(
    port: int,
    address: str,
    allowed_hosts: tuple[str, ...],
    config_path: str | None,
    heron_home: str | None,
) -> None:
    """Serve Heron's tracker REST API over every configured cluster.

    Watches the state manager of each cluster of the config directory (localfs and
    ZooKeeper), so topologies appear and disappear as they are submitted and killed. Every
    topology is in environ "default", with the submitting user as its role. Prints the
    address it serves on; stops on Ctrl-C or SIGTERM. Routes (OpenAPI page at /):

    \b
    /health, /clusters, /topologies, /topologies/states
    /topologies/{info,logicalplan,physicalplan,packingplan,executionstate}
    /topologies/{schedulerlocation,metadata,runtimestate,config}
    /topologies/{metrics,metricstimeline,exceptions,exceptionsummary,pid}
    /topologies/{containerfiledata,containerfilestats,containerfiledownload}

    The container file routes serve each container's logs (logs/<file>) and nothing else
    of its working directory. Requests whose Host header is not the address it listens
    on (or, on 127.0.0.1 or 0.0.0.0, localhost, 127.0.0.1 or [::1]) with its port, nor a
    name given with --allowed-host, are refused (400).

    \b
    heron tracker --port 8888
    curl 'http://127.0.0.1:8888/topologies'
    """
    from heron_core.tracker import serve  # FastAPI and uvicorn load only for this verb

    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("kazoo").setLevel(logging.ERROR)  # the tracker reports unreachable stores
    clusters = known_clusters(config_path)
    if not clusters:
        raise ConfigurationError(
            f"no cluster configs (<cluster>.yaml) in {config_path or 'the config directory'}"
        )
    configs = {
        name: client_config(name, config_path=config_path, heron_home=heron_home)
        for name in clusters
    }
    serve(
        configs,
        address=address,
        port=port,
        allowed_hosts=allowed_hosts,
        announce=lambda text: click.echo(f"heron tracker: {text}"),
    )
