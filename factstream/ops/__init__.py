"""Operations on a running deployment that are not stream agents.

``publish`` (a JSON Lines file onto factstream.documents), ``inspect`` (a namespace's facts
for people), ``rebuild`` (Weaviate state again from the changelog), ``waiting`` (until a
worker has applied given documents) and ``commands`` (``factstream demo``, ``up``,
``config``, ``publish``, ``facts``, ``rebuild``).
"""
