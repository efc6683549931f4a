"""The ``heron`` command: submit, kill, list and run topologies.

Errors raised on purpose (`heron_core.errors.HeronError`) are printed as one line on stderr
with exit status 2; usage errors also exit 2.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from heron_core._logging import enable_stack_dumps
from heron_core.cli._activate import activate_command, deactivate_command
from heron_core.cli._kill import kill_command
from heron_core.cli._list import list_command
from heron_core.cli._restart import restart_command
from heron_core.cli._run import run_command
from heron_core.cli._submit import submit_command
from heron_core.cli._tracker import tracker_command
from heron_core.cli._ui import ui_command
from heron_core.cli._update import update_command
from heron_core.errors import HeronError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ["cli", "main"]

ERROR_EXIT = 2


COMMANDS_GROUP = "heron.cli"
"""Entry-point group of extra verbs: each entry is a click command or group (e.g. the Storm
facade's ``heron sparse``), added under the entry's name."""


class _Verbs(click.Group):
    """The built-in verbs plus those registered under `COMMANDS_GROUP`, loaded on demand. One
    whose module cannot be imported is left out of ``--help``; asked for by name, it is an
    error that says why (a missing extra, typically) instead of "No such command"."""

    @staticmethod
    def _entries() -> list[EntryPoint]:
        """The entries of `COMMANDS_GROUP` (importlib.metadata is imported here, not when the
        module is: a built-in verb never reads the installed distributions)."""
        from importlib.metadata import entry_points

        return list(entry_points(group=COMMANDS_GROUP))

    def _extra(self, name: str) -> click.Command | None:
        """The registered verb ``name``, None when there is none.

        Raises:
            click.UsageError: it is registered but cannot be loaded.
        """
        for entry in self._entries():
            if entry.name == name:
                return self._load(entry)
        return None

    @staticmethod
    def _load(entry: EntryPoint) -> click.Command | None:
        """The verb ``entry`` registers, None when it is not a click command.

        Raises:
            click.UsageError: it cannot be loaded.
        """
        try:
            command = entry.load()
        except Exception as exc:
            raise click.UsageError(
                f"'heron {entry.name}' is registered ({entry.value}) but cannot be loaded: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        return command if isinstance(command, click.Command) else None

    def list_commands(self, ctx: click.Context) -> list[str]:
        extra = []
        seen: set[str] = set()
        for entry in self._entries():  # read once; the first entry of a name is the verb
            if entry.name in seen:
                continue
            seen.add(entry.name)
            with contextlib.suppress(click.UsageError):
                if self._load(entry):
                    extra.append(entry.name)
        return sorted({*super().list_commands(ctx), *extra})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or self._extra(cmd_name)


@click.group(cls=_Verbs, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    None,
    "--version",
    package_name="heron-storm",  # read when --version is given
    prog_name="heron",
    message="%(prog)s %(version)s",
    help="Print the version and exit.",
)
def cli() -> None:
    """Run stream-processing topologies with Heron's architecture.

    \b
    heron run topologies/word_count.py --time 30
    heron submit local topologies/word_count.py
    heron list local
    heron kill local WordCount
    """


cli.add_command(submit_command)
cli.add_command(kill_command)
cli.add_command(activate_command)
cli.add_command(deactivate_command)
cli.add_command(restart_command)
cli.add_command(update_command)
cli.add_command(list_command)
cli.add_command(run_command)
cli.add_command(tracker_command)
cli.add_command(ui_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the ``heron`` command with ``argv`` (default: ``sys.argv[1:]``); exits.

    >>> main(["--version"])
    Traceback (most recent call last):
    ...
    SystemExit: 0
    """
    enable_stack_dumps()
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="heron")
    except HeronError as exc:
        click.echo(f"heron: error: {exc}", err=True)
        sys.exit(ERROR_EXIT)
