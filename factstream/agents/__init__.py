"""The stream agents the worker runs on faust.

``editor`` (a document in, its edit batch on the changelog and applied), ``query``
(factstream.questions in, factstream.answers out), ``gauges`` (the per-partition lag and
facts gauges), ``worker`` (the faust app and its runtime) and ``commands``
(``factstream worker``, ``factstream ask``).
"""
