"""Evaluations on CLARK-News.

``floor`` (calibrate the retrieval similarity floor), ``retrieval`` (recall of superseded
facts by the editor's retrieval, no LM), ``clark`` (the ERASE paper's protocol on the real
stack) with ``protocol`` (its checkpoints and scoring), ``datasets`` (the data as read),
``report`` (results JSON, token counts, the plot), ``progress`` (progress bars) and
``commands`` (``factstream eval``).
"""
