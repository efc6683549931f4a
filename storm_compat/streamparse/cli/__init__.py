"""``heron sparse``: streamparse's ``sparse`` verbs for a project's topologies on heron.

``run`` runs the topology in the foreground; ``submit``, ``kill`` and ``list`` act on the
cluster the environment names (its ``cluster`` key, default ``local``), with the cluster's
settings from the ``heron.*`` keys of its ``options``; ``tail`` prints and follows the
instances' logs. Run them in the project directory (or pass ``--config``).

>>> sorted(sparse.commands)
['kill', 'list', 'run', 'submit', 'tail']
"""

from __future__ import annotations

import click

from storm_compat.streamparse.cli._kill import kill_command
from storm_compat.streamparse.cli._list import list_command
from storm_compat.streamparse.cli._run import run_command
from storm_compat.streamparse.cli._submit import submit_command
from storm_compat.streamparse.cli._tail import tail_command

__all__ = ["sparse"]


@click.group("sparse", context_settings={"help_option_names": ["-h", "--help"]})
def sparse() -> None:
    """streamparse projects: run, submit, kill, list and tail the topologies of a project
    made by 'sparse quickstart' (run inside it, or pass --config)."""


for _command in (run_command, submit_command, kill_command, list_command, tail_command):
    sparse.add_command(_command)
