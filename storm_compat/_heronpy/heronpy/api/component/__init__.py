"""heronpy's ``component``: ``BaseComponent`` and the ``HeronComponentSpec`` specs."""
