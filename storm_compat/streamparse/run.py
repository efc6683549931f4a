"""``python -m storm_compat.streamparse.run [-s SERIALIZER] pkg.module.Class``.

What multilang subprocesses of streamparse components run: what streamparse's own
``streamparse_run`` does (the same arguments, the same class lookup, the component's
``run()``), with the current directory first on ``sys.path``. That directory is the topology's
code directory, a copy of the project's ``src/``, as Storm runs ``streamparse_run`` in the
jar's ``resources/`` directory (where ``sparse`` puts ``src/``).

With the ``json`` serializer (the default) the component's messages go through
`BatchedJSONSerializer`, a subclass of pystorm's ``JSONSerializer`` that writes the same bytes
in the same order, with two differences in how:

- pystorm writes each message with a system call of its own (it flushes after every message):
  one wake-up of the host instance per emit and per ack. Here the emits, acks and fails that
  the component's main thread writes stay in a 64 KiB buffer until the component is about to
  wait for input, the buffer fills or the first of them has waited `LINGER_S` (10 ms: a
  ``process`` that takes long, a ``next_tuple`` that sleeps after emitting); every other
  message (``sync``, logs, errors, metrics, the pid) is written at once with what was kept
  before it, as are messages written by any other thread (a ``TicklessBatchingBolt``'s timer,
  a user's thread). Nothing is kept while the component waits for input, so the host never
  waits for an answer that sits in a buffer.
- Messages are encoded and decoded with the standard library's ``json`` (C encoder and
  scanner, one encoder for all messages; the whole messages in the input buffer decoded by
  one call) instead of ``simplejson`` with a new encoder per message and a ``readline`` per
  line; a message holding a value only simplejson encodes (``decimal.Decimal``) falls back
  to pystorm's own encoding, so the bytes stay what pystorm writes.

The ``msgpack`` serializer is pystorm's own, unchanged.
"""

from __future__ import annotations

import _thread
import argparse
import collections
import importlib
import io
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pystorm.exceptions import StormWentAwayError
from pystorm.serializers.json_serializer import JSONSerializer

from heron_core.multilang import json_encoder, whole_json_messages

__all__ = ["BatchedJSONSerializer", "main"]

log = logging.getLogger(__name__)

_BUFFER = 1 << 16
_KEPT = frozenset(("emit", "ack", "fail"))
"""Commands a main-thread message of which may wait for the next read."""
LINGER_S = 0.01
"""The longest a kept message waits while the component computes (a long ``process``, a
``next_tuple`` that sleeps after emitting): a thread writes it then."""
_RESOURCES = "resources"
_encode = json_encoder()
_decode = json.JSONDecoder().decode


class _Stdin(io.RawIOBase):
    """The subprocess's stdin (file descriptor ``fd``): calls `before_wait` before every read
    of the pipe, so the component never waits for input with output of its own unwritten."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self.before_wait: Callable[[], None] | None = None

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def readinto(self, buffer: Any) -> int:
        if self.before_wait is not None:
            self.before_wait()
        return os.readv(self._fd, [buffer])


class BatchedJSONSerializer(JSONSerializer):
    """pystorm's JSON serializer, writing and reading the same messages (see the module doc).
    Made by `taking_over` the component's own, whose streams and locks it keeps."""

    _main: int
    _readline: Callable[[], bytes]
    _peek: Callable[[], bytes]
    _take: Callable[[int], bytes]
    _ready: collections.deque[Any]
    _write: Callable[[bytes], int]
    _flush: Callable[[], None]
    _kept: bool
    _kept_event: threading.Event

    @classmethod
    def taking_over(cls, serializer: JSONSerializer, stdin: _Stdin) -> BatchedJSONSerializer:
        """A serializer in place of ``serializer`` (pystorm's, built by the component over
        the streams of `main`), with its state: the streams pystorm wrapped and the locks it
        shares with the component. Reads of ``stdin`` first write what it kept."""
        batched: BatchedJSONSerializer = cls.__new__(cls)
        batched.__dict__.update(vars(serializer))
        batched._main = threading.get_ident()
        # the text streams pystorm made stay unused: bytes are read and written beneath them
        batched._readline = batched.input_stream.buffer.readline
        batched._peek = batched.input_stream.buffer.peek
        batched._take = batched.input_stream.buffer.read
        batched._ready = collections.deque()
        batched._write = batched.output_stream.buffer.write
        batched._flush = batched.output_stream.buffer.flush
        batched._kept = False
        batched._kept_event = threading.Event()
        stdin.before_wait = batched.write_kept
        # not a threading.Thread: pystorm ends the process with os._exit, skipping the user's
        # atexit handlers, when threading counts more than one thread
        _thread.start_new_thread(batched._linger, ())
        return batched

    def write_kept(self) -> None:
        """Write the messages kept back (the component is about to wait for input)."""
        with self._writer_lock:
            self._flush()
            self._kept = False

    def _linger(self) -> None:
        """Write what was kept `LINGER_S` after the first of it, if still kept by then."""
        while True:
            self._kept_event.wait()
            self._kept_event.clear()
            time.sleep(LINGER_S)
            with self._writer_lock:
                if self._kept:
                    try:
                        self._flush()
                    except (OSError, ValueError):
                        return  # the host went away: the main thread finds out
                    self._kept = False

    def read_message(self) -> Any:
        """The next message: its lines up to ``end``, blank lines skipped, as pystorm reads.
        What the input buffer holds of whole messages is decoded at once (the usual case:
        one-line messages back to back) and handed out one by one."""
        with self._reader_lock:
            ready = self._ready
            if ready:
                return ready.popleft()
            messages, taken = whole_json_messages(self._peek(), lists=True)
            if taken:
                self._take(taken)
                ready.extend(messages)
                return ready.popleft()
            line = self._readline()
            if line != b"\n" and line != b"end\n" and line:
                end = self._readline()
                if end == b"end\n":  # the usual one-line message
                    return self._decoded(line)
                lines = [line]
            else:
                lines, end = [], line
            blank = 0
            while end != b"end\n":
                if not end:
                    raise StormWentAwayError()
                if end == b"\n":
                    blank += 1
                    if blank % 1000 == 0:
                        log.warning(
                            "While trying to read a command or pending task ID, Storm has "
                            "instead sent %s '\\n' messages.",
                            blank,
                        )
                else:
                    lines.append(end)
                end = self._readline()
        return self._decoded(b"".join(lines))

    @staticmethod
    def _decoded(data: bytes) -> Any:
        try:
            return _decode(data.decode("utf-8"))
        except Exception:
            log.error("JSON decode error for message: %r", data, exc_info=True)
            raise

    def serialize_dict(self, msg_dict: dict[str, Any]) -> str:
        """``msg_dict`` as pystorm's JSON serializer writes it."""
        try:
            return _encode(msg_dict) + "\nend\n"
        except TypeError:  # a value only simplejson encodes
            return str(super().serialize_dict(msg_dict))

    def send_message(self, msg_dict: dict[str, Any]) -> None:
        """Write ``msg_dict``; written through at once unless the main thread sends an emit, an
        ack or a fail (those wait for the next read of input, a full buffer or `LINGER_S`)."""
        with self._writer_lock:
            try:
                self._write(self.serialize_dict(msg_dict).encode("utf-8"))
                if msg_dict.get("command") not in _KEPT or threading.get_ident() != self._main:
                    self._flush()
                    self._kept = False
                elif not self._kept:
                    self._kept = True
                    self._kept_event.set()
            except OSError as exc:
                raise StormWentAwayError() from exc
            except Exception:
                log.exception("Failed to send message: %r", msg_dict)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m storm_compat.streamparse.run",
        description="Run a streamparse (pystorm) spout or bolt class as a multilang "
        "subprocess over stdin/stdout, as streamparse_run does.",
    )
    parser.add_argument("target_class", help="the spout or bolt class, as pkg.module.Class")
    parser.add_argument(
        "-s",
        "--serializer",
        choices=("json", "msgpack"),
        default="json",
        help="the multilang serialization the host speaks (default: json)",
    )
    return parser


def _component_class(target: str) -> type:
    """The class ``pkg.module.Class``, imported as streamparse_run imports it: the working
    directory on ``sys.path``, or its ``resources/`` when the module is there (Storm 1.0.3+)."""
    module_name, _, class_name = target.rpartition(".")
    if not module_name:
        raise SystemExit(f"streamparse_run: {target!r} is not pkg.module.Class")
    here = Path.cwd()
    code = str(here)
    if code not in sys.path:
        sys.path.insert(0, code)
    resources = here / _RESOURCES
    if (resources / (module_name.replace(".", os.sep) + ".py")).is_file():
        sys.path.append(str(resources))
    cls = getattr(importlib.import_module(module_name), class_name)
    if not isinstance(cls, type):
        raise SystemExit(f"streamparse_run: {target!r} is not a class")
    return cls


def main(argv: Sequence[str] | None = None) -> None:
    """Run the pystorm component named in ``argv`` (default: ``sys.argv[1:]``) over
    stdin/stdout; returns only when the component's loop ends (it exits the process)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 1:  # Storm passes the script as one string
        args = args[0].split()
    options = _parser().parse_args(args)
    cls = _component_class(options.target_class)
    if options.serializer != "json":
        cls(serializer=options.serializer).run()
        return
    stdin = _Stdin(sys.stdin.fileno())
    sys.stdout.flush()
    output = io.BufferedWriter(io.FileIO(sys.stdout.fileno(), "wb", closefd=False), _BUFFER)
    # pystorm wraps these streams' buffers in text streams of its own; a print() of the user's
    # goes through this line-buffered one, as whole lines between two messages
    sys.stdin = io.TextIOWrapper(io.BufferedReader(stdin, _BUFFER), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(output, encoding="utf-8", line_buffering=True)
    component = cls(input_stream=sys.stdin, output_stream=sys.stdout, serializer="json")
    component.serializer = BatchedJSONSerializer.taking_over(component.serializer, stdin)
    component.run()


if __name__ == "__main__":
    main()
