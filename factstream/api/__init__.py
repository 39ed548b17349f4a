"""The HTTP API (docs/design.md section 6): ask, facts, documents, health, readiness, metrics.

``app`` (``create_app``, the FastAPI factory), ``routes``, ``schemas``, ``auth``, ``limits``,
``health``, ``metrics``, ``state``, ``server`` (``factstream api``) and ``commands``. Import
the modules themselves; this package re-exports nothing, so that the command line loads
FastAPI and the clients only when it serves.
"""

__all__: list[str] = []
