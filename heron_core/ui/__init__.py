"""``heron ui``: a web UI over the tracker's REST API.

The UI's server asks the tracker (and nothing else) and serves every asset itself; pages are
drawn in the browser with hand-written SVG (the logical plan's DAG, the charts).
"""

from heron_core.ui._app import create_app
from heron_core.ui._server import serve
from heron_core.ui._tracker import TrackerClient, TrackerError

__all__ = ["TrackerClient", "TrackerError", "create_app", "serve"]
