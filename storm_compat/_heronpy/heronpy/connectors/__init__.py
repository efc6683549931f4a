"""heronpy's connectors: sources for the Streamlet API (``mock.arraylooper.ArrayLooper``,
``textfiles.textfilesgenerator.TextFileGenerator``; the Pulsar connector is not available)."""
