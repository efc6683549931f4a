"""Heron's join Streamlet example: two looping sources of (key, value) pairs joined over a
2 s window sliding every 1 s; here a TransformOperator describes each result before it is
logged."""

import sys

from heronpy.connectors.mock.arraylooper import ArrayLooper
from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config
from heronpy.streamlet.runner import Runner
from heronpy.streamlet.transformoperator import TransformOperator
from heronpy.streamlet.windowconfig import WindowConfig


class Describe(TransformOperator):
    """Emits 'joined <value> at <keyed window> in partition <i>' for each join result."""

    def setup(self, context):
        self.context = context
        self.partition = context.get_partition_index()

    def transform(self, tup):
        keyed_window, joined = tup.values[0]
        self.context.emit(f"joined {joined} at {keyed_window} in partition {self.partition}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("Topology's name is not specified")
        sys.exit(1)

    builder = Builder()

    source_1 = builder.new_source(
        ArrayLooper([["key1", "a"], ["key1", "b"], ["key2", "x"]], sleep=0.1)
    )

    source_2 = builder.new_source(ArrayLooper([["key1", "c"], ["key3", "y"]], sleep=0.1))

    source_1.join(source_2, WindowConfig.create_sliding_window(2, 1), lambda x, y: x + y).transform(
        Describe()
    ).log()

    runner = Runner()
    config = Config()
    runner.run(sys.argv[1], config, builder)
