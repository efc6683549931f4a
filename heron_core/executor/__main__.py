"""``python -m heron_core.executor``: see `heron_core.executor`."""

import sys

from heron_core.executor._main import main

if __name__ == "__main__":
    sys.exit(main())
