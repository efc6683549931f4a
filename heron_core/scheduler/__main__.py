"""``python -m heron_core.scheduler``: the per-topology scheduler service ``heron submit``
starts (see `heron_core.scheduler.service`)."""

import sys

from heron_core.scheduler._service import main

if __name__ == "__main__":
    sys.exit(main())
