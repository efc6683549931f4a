"""heronpy's ``heronpy.api``: the component, topology and metrics API of heronpy 0.20.5.

Every module keeps heronpy's path and public names over the native API (`heron_core.api`):
a name is the native class where that already behaves as heronpy's, and a thin subclass or
function where heronpy differs (bolts return None from ``emit``, components take an optional
``delegate``, ``Grouping.DIRECT`` is refused, topology config values are auto-typed as the
Heron instance types them, heronpy's default ``ATMOST_ONCE``). A program submits with
``heron run FILE`` or ``heron submit local FILE`` (see ``heronpy._loader``).
"""
