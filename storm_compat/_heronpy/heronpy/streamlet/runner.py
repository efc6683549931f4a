"""``Runner``: submits a Streamlet program's topology (heronpy's module path)."""

from __future__ import annotations

from heron_core.api import TopologyBuilder
from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config

__all__ = ["Runner"]


class Runner:
    """Builds the topology of a `Builder` and submits it.

    A Streamlet program calls ``Runner().run(name, config, builder)`` under
    ``if __name__ == '__main__':`` and is started with ``heron run program.py NAME`` or
    ``heron submit local program.py NAME``; started any other way, ``run`` raises and says
    which command to use.
    """

    def run(self, name: str, config: Config, builder: Builder) -> None:
        """Build the topology ``name`` from ``builder`` with ``config`` and submit it.

        Raises:
            TypeError: an argument has the wrong type.
            TopologyValidationError: the Streamlets do not make a valid topology.
            heronpy._submit.SubmitOutsideHeronError: the program was not started by ``heron``.
        """
        from heronpy._submit import submit

        if not isinstance(name, str) or not name:
            raise TypeError(f"the topology name must be a non-empty str, got {name!r}")
        if not isinstance(config, Config):
            raise TypeError(
                f"config must be a heronpy.streamlet.config.Config, got {type(config).__name__}"
            )
        if not isinstance(builder, Builder):
            raise TypeError(
                f"builder must be a heronpy.streamlet.builder.Builder, got {type(builder).__name__}"
            )
        bldr = TopologyBuilder(name)
        builder.build(bldr)
        bldr.set_config(dict(config._api_config))
        submit(bldr)
