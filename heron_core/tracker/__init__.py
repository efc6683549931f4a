"""The tracker: a REST API over the topologies of the configured clusters (``heron tracker``).

It watches the state manager of every cluster (localfs and ZooKeeper), keeps a snapshot of
each topology's nodes (`TopologySnapshot`), and answers Heron's tracker routes with the JSON
shapes of Heron's FastAPI tracker (the bare results, not the legacy ``{status, result}``
envelope). Metrics and exceptions are asked of the topology's tmanager (its stats port); logs
and pids of each container's shell (its metrics manager), which serves the container's
``logs/`` and nothing else of its working directory. Only requests whose ``Host`` is a name the
tracker is meant to be reached as are answered (`heron_core._front_door`). See `create_app`
for the routes.

Our clusters have no environs or roles: every topology is in environ ``default`` and its role
is the user who submitted it, as Heron reports for a local cluster.
"""

from heron_core.tracker._app import create_app
from heron_core.tracker._server import serve
from heron_core.tracker._topology import DEFAULT_ENVIRON, TopologySnapshot
from heron_core.tracker._watch import ClusterWatch, Tracker

__all__ = ["DEFAULT_ENVIRON", "ClusterWatch", "TopologySnapshot", "Tracker", "create_app", "serve"]
