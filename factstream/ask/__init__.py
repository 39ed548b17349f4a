"""Answering questions from the facts: valid time, retrieval, single and multi-hop answers.

Plain async code over the store and LM interfaces: no Kafka, no SDKs. The query agent
(``agents/query.py``) and the HTTP API drive it.
"""
