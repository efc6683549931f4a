"""heronpy example topologies (after Heron's ``examples/src/python``)."""
