"""heronpy's ``bolt``: ``Bolt``, ``BaseBolt`` and the windowed bolts."""
