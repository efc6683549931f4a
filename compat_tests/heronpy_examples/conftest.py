"""Not test modules: heronpy example programs, run by ``compat_tests/test_heronpy_examples.py``
through ``heron run`` (they import ``examples.src.python...`` from this directory, as Heron's
examples import from their repository root)."""

collect_ignore_glob = ["*"]
