"""The Apache Pulsar connector of heronpy: not available in this runtime (see `pulsarspout`)."""
