"""The knowledge model and the editing algorithm: plain async code, no Kafka, no SDKs."""
