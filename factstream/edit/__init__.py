"""The editing algorithm (ERASE): retrieve, classify, rewrite, extract, ground, apply.

Plain async code over the store and LM interfaces: no Kafka, no SDKs. The editor agent
(``agents/editor.py``) drives it; the materializer applies its changelog to the store.
"""
