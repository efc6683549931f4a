"""The ``heron`` command line (click), one module per verb; the entry point is `main`."""

from heron_core.cli.main import cli, main

__all__ = ["cli", "main"]
