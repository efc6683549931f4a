"""``heron ui``."""

from __future__ import annotations

import click

from heron_core.cli._http_options import allowed_host_option
from heron_core.cli._options import config_path_option, heron_home_option

__all__ = ["ui_command"]


@click.command("ui")
@click.option(
    "--tracker-url",
    required=True,
    metavar="URL",
    help="Where the tracker (`heron tracker`) answers, e.g. http://127.0.0.1:8888. The UI "
    "asks it for everything it shows; browsers only talk to the UI.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8889,
    show_default=True,
    help="TCP port the UI listens on (0: any free port, printed at start).",
)
@click.option(
    "--address",
    default="127.0.0.1",
    show_default=True,
    help="Address the UI listens on (0.0.0.0 for every interface: whoever reaches the UI can "
    "also deactivate, restart and kill the topologies).",
)
@click.option(
    "--base-url",
    default="",
    metavar="PATH",
    help="Path prefix the UI is served under, e.g. /heron behind a reverse proxy "
    "(default: none, the UI is at /).",
)
@allowed_host_option
@click.option(
    "--audit-log",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="File each Activate, Deactivate, Restart and Kill request (refused or not) is "
    "appended to, one JSON line: time, client, Host, Origin, action, topology, result; "
    "created 0600. Default: <heron home>/logs/ui-audit.log.",
)
@config_path_option
@heron_home_option
def ui_command(
    tracker_url: str,
    port: int,
    address: str,
    base_url: str,
    allowed_hosts: tuple[str, ...],
    audit_log: str | None,
    config_path: str | None,
    heron_home: str | None,
) -> None:
    """Serve a web UI over the tracker: the topologies, each one's logical plan, counters,
    charts, physical plan, exceptions and instance logs. Runs until Ctrl-C or SIGTERM.

    A topology's page also has Activate, Deactivate, Restart and Kill buttons (each asks for
    confirmation); the UI server does them as the verbs of those names do, on the clusters
    of --config-path with --heron-home: give it the ones the tracker has. Whoever reaches
    the UI can use them; each request is written to the --audit-log. Requests whose Host
    is not the --address with its port (or localhost, 127.0.0.1, [::1] on a loopback or
    wildcard address) nor an --allowed-host are refused (400), and so are actions sent by
    another site's page (403).

    \b
    heron tracker --port 8888 &
    heron ui --tracker-url http://127.0.0.1:8888
    """
    from heron_core.ui import serve  # fastapi and uvicorn load only for this verb

    serve(
        tracker_url,
        port=port,
        address=address,
        base_url=base_url,
        config_path=config_path,
        heron_home=heron_home,
        allowed_hosts=allowed_hosts,
        audit_log=audit_log,
        announce=lambda line: click.echo(line),
    )
