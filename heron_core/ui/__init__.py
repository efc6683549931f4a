"""``heron ui``: a web UI over the tracker's REST API.

The UI's server asks the tracker for everything it shows and serves every asset itself; pages
are drawn in the browser with hand-written SVG (the logical plan's DAG, the charts). A
topology's page also activates, deactivates, restarts and kills it: those actions go to the
cluster through `heron_core.client`, as the CLI verbs do, need the server's token and a page
of the UI's own origin, and are written to an audit log. Only requests whose ``Host`` is a
name the UI is meant to be reached as are answered (`heron_core._front_door`).
"""

from heron_core.ui._app import TOKEN_HEADER, create_app
from heron_core.ui._server import serve
from heron_core.ui._tracker import TrackerClient, TrackerError

__all__ = ["TOKEN_HEADER", "TrackerClient", "TrackerError", "create_app", "serve"]
