"""``TextFileGenerator``: a Generator of the lines of files (heronpy's module path)."""

from __future__ import annotations

import glob
import logging

from heronpy.streamlet.context import Context
from heronpy.streamlet.generator import Generator

__all__ = ["TextFileGenerator"]


class TextFileGenerator(Generator):
    """Emits every line (with its newline) of the files matching ``filepattern``, then
    nothing.

    The pattern is expanded when the program builds the topology; the partitions share the
    files out (partition i reads files i, i+n, ...). As in heronpy, each partition reads its
    files from the last one, and each file from its last line.

    Args:
        filepattern: a ``glob`` pattern.

    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("one\\ntwo\\n")
    >>> class OnePartition:
    ...     def get_partition_index(self): return 0
    ...     def get_num_partitions(self): return 1
    >>> lines = TextFileGenerator(str(folder / "*.txt"))
    >>> lines.setup(OnePartition())
    >>> lines.get(), lines.get(), lines.get()
    ('two\\n', 'one\\n', None)
    """

    logger = logging.getLogger("heron.user.TextFileGenerator")

    def __init__(self, filepattern: str) -> None:
        super().__init__()
        self._files = sorted(glob.glob(filepattern))

    def setup(self, context: Context) -> None:
        index = context.get_partition_index()
        self._files_to_consume = self._files[index :: context.get_num_partitions()]
        self.logger.info("TextFileGenerator: files to read: %s", self._files_to_consume)
        self._emit_count = 0
        self._lines_to_consume = self._get_next_lines()

    def get(self) -> str | None:
        if self._lines_to_consume is None:
            return None
        next_line = self._lines_to_consume.pop()
        if not self._lines_to_consume:
            self._lines_to_consume = self._get_next_lines()
        self._emit_count += 1
        return next_line

    def _get_next_lines(self) -> list[str] | None:
        while self._files_to_consume:
            path = self._files_to_consume.pop()
            self.logger.info("TextFileGenerator: reading %s", path)
            with open(path, encoding="utf8") as file:
                lines = file.readlines()
            if lines:
                return lines
        self.logger.info("TextFileGenerator: every file read")
        return None
