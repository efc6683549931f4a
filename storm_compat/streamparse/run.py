"""``python -m storm_compat.streamparse.run [-s SERIALIZER] pkg.module.Class``.

What multilang subprocesses of streamparse components run: streamparse's own
``streamparse_run`` (``streamparse.run.main``), with the current directory first on
``sys.path``. That directory is the topology's code directory, a copy of the project's
``src/``, as Storm runs ``streamparse_run`` in the jar's ``resources/`` directory (where
``sparse`` puts ``src/``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Run the pystorm component named in ``argv`` (default: ``sys.argv[1:]``) over
    stdin/stdout; returns only when the component's loop ends (it exits the process)."""
    code = str(Path.cwd())
    if code not in sys.path:
        sys.path.insert(0, code)
    sys.argv = ["streamparse_run", *(sys.argv[1:] if argv is None else argv)]
    from streamparse.run import main as streamparse_run

    streamparse_run()


if __name__ == "__main__":
    main()
