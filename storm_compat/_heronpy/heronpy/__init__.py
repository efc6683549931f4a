"""heronpy, Heron's Python API, as the ``heronpy`` import name over the native API.

This directory installs as the top-level package ``heronpy`` (``setup.py`` maps it), so a
topology written for heronpy 0.20.5 imports ``heronpy.api...`` and ``heronpy.streamlet...``
unchanged. Its parent ``storm_compat/_heronpy`` is a plain directory, not a package, so
``heronpy`` is its only module name.
"""
