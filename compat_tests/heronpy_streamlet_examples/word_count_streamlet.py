"""Heron's word count Streamlet example: sentences -> words -> (word, 1) -> counts per
sliding window, logged. Here the source stops after a fixed number of sentences."""

import sys

from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.runner import Runner
from heronpy.streamlet.windowconfig import WindowConfig

SENTENCES = ["Mary had a little lamb", "I love you", "Mary had a little lamb"]
ROUNDS = 4


class Sentences(Generator):
    """Each sentence ROUNDS times, then nothing."""

    def setup(self, context):
        self.left = [s for _ in range(ROUNDS) for s in SENTENCES]

    def get(self):
        if not self.left:
            return None
        return self.left.pop(0)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("Topology's name is not specified")
        sys.exit(1)

    builder = Builder()
    builder.new_source(Sentences()).flat_map(lambda line: line.split()).map(
        lambda word: (word, 1)
    ).reduce_by_key_and_window(WindowConfig.create_sliding_window(2, 1), lambda x, y: x + y).log()
    runner = Runner()
    config = Config()
    runner.run(sys.argv[1], config, builder)
