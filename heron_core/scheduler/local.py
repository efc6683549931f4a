"""The local scheduler: `LocalScheduler`, and ``python -m heron_core.scheduler.local``."""

import sys

from heron_core.scheduler._local import LocalScheduler
from heron_core.scheduler._service import main, service_argv

__all__ = ["LocalScheduler", "main", "service_argv"]

if __name__ == "__main__":
    sys.exit(main())
