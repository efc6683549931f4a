"""The local scheduler: `LocalScheduler`, and the scheduler service under its historical name
``python -m heron_core.scheduler.local`` (the same as ``python -m heron_core.scheduler``)."""

import sys

from heron_core.scheduler._local import LocalScheduler
from heron_core.scheduler._service import main, service_argv

__all__ = ["LocalScheduler", "main", "service_argv"]

if __name__ == "__main__":
    sys.exit(main())
