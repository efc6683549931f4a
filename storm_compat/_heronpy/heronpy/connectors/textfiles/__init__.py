"""File sources: ``textfilesgenerator.TextFileGenerator``."""
