"""heronpy's ``spout``: ``Spout`` and ``BaseSpout``."""
