"""What the idiom tests observe: each call appends ``event n time`` to a file of this
process under ``$IDIOM_OUT`` (test instrumentation, not part of the idiom)."""

import os
import time


def record(event, n):
    path = os.path.join(os.environ["IDIOM_OUT"], f"{event}-{os.getpid()}.txt")
    with open(path, "a") as out:
        out.write(f"{event} {n} {time.time()}\n")
