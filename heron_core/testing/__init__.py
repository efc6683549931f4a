"""Public test helpers: conformance suites for plug-ins, fixtures and testing components."""

__all__: list[str] = []
