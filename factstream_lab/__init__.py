"""factstream's laboratory: the local stack, the demo, the evaluations and the world generator.

The product (:mod:`factstream`) is what a deployment runs and never imports this package; the
laboratory is what the developers run around it (``pip install -e '.[lab]'``). Its commands are
``factstream-lab ...`` and, registered through the ``factstream.commands`` entry points, the same
commands under ``factstream`` (``factstream demo``, ``up``, ``services``, ``eval``, ``world``).
"""
