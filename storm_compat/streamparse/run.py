"""``python -m storm_compat.streamparse.run [-s SERIALIZER] pkg.module.Class``.

What multilang subprocesses of streamparse components run: streamparse's own
``streamparse_run`` (``streamparse.run.main``), with the project's ``src/`` and root on
``sys.path``. The current directory is the topology's code directory (a copy of the project),
where Storm's ``streamparse_run`` would find the code under ``resources/`` instead.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Run the pystorm component named in ``argv`` (default: ``sys.argv[1:]``) over
    stdin/stdout; returns only when the component's loop ends (it exits the process)."""
    code = Path.cwd()
    for entry in (code, code / "src"):
        if str(entry) not in sys.path:
            sys.path.insert(0, str(entry))
    sys.argv = ["streamparse_run", *(sys.argv[1:] if argv is None else argv)]
    from streamparse.run import main as streamparse_run

    streamparse_run()


if __name__ == "__main__":
    main()
