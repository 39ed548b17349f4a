"""The local stack (Apache Kafka, Weaviate, the LM server), provisioned into a cache folder."""
