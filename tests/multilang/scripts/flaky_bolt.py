# A storm.py-style BasicBolt that misbehaves on the first tuple it ever sees (a marker file in
# its working directory remembers): argv[1] "crash" exits with status 3, "hang" stops
# answering. Later tuples are passed on.
import os
import sys
import time

import storm

MARKER = f"flaky-{sys.argv[1]}.marker"


class FlakyBolt(storm.BasicBolt):
    def process(self, tup):
        if not os.path.exists(MARKER):
            open(MARKER, "w").close()
            if sys.argv[1] == "crash":
                sys.exit(3)
            time.sleep(3600)
        storm.emit(tup.values)


FlakyBolt().run()
