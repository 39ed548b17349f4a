"""API keys and the namespaces each may read and publish to (HTTP API and Kafka questions).

Keys are configured hashed: ``FACTSTREAM_API_KEYS`` (and/or the file ``FACTSTREAM_API_KEYS_FILE``)
maps the SHA-256 hex digest of a key to ``{"read": [...], "publish": [...]}``; ``"*"`` grants
every namespace. A request presents the key itself; it is hashed and looked up, so the
configuration never holds a usable key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from factstream.config import ApiSettings
from factstream.errors import Forbidden, Unauthenticated

__all__ = ["ALL_NAMESPACES", "Action", "Grant", "KeyTable", "hash_key", "load_key_table"]

ALL_NAMESPACES = "*"
Action = Literal["read", "publish"]


class Grant(BaseModel):
    """What one key may do: read (ask, list facts) and publish (documents) per namespace."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    read: frozenset[str] = frozenset()
    publish: frozenset[str] = frozenset()

    def allows(self, action: Action, namespace: str) -> bool:
        """Whether ``action`` on ``namespace`` is granted."""
        allowed = self.read if action == "read" else self.publish
        return namespace in allowed or ALL_NAMESPACES in allowed


_TABLE = TypeAdapter(dict[str, Grant])


def hash_key(key: str) -> str:
    """The SHA-256 hex digest under which a key is configured."""
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class KeyTable:
    """Configured keys by hash; ``open_access`` grants everything to everyone (no-auth mode)."""

    grants: Mapping[str, Grant] = field(default_factory=dict)
    open_access: bool = False

    def grant_for(self, key: str | None) -> Grant:
        """The grant of a presented key.

        Raises:
            Unauthenticated: no key, or one that is not configured.
        """
        if self.open_access:
            return Grant(read=frozenset({ALL_NAMESPACES}), publish=frozenset({ALL_NAMESPACES}))
        if not key:
            raise Unauthenticated("an API key is required (Authorization: Bearer KEY)")
        digest = hash_key(key)
        for known, grant in self.grants.items():
            if hmac.compare_digest(known, digest):
                return grant
        raise Unauthenticated("the API key is not valid")

    def check(self, key: str | None, action: Action, namespace: str) -> Grant:
        """The key's grant, if it allows ``action`` on ``namespace``.

        Raises:
            Unauthenticated: no key, or an unknown one.
            Forbidden: the key may not do this in this namespace.
        """
        grant = self.grant_for(key)
        if not grant.allows(action, namespace):
            raise Forbidden(namespace, action)
        return grant


def _parse(text: str, where: str) -> dict[str, Grant]:
    try:
        table = _TABLE.validate_python(json.loads(text))
    except (ValueError, ValidationError) as exc:
        raise ValueError(f"{where}: not a valid key table: {exc}") from exc
    for digest in table:
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError(f"{where}: {digest[:12]}... is not a lower-case SHA-256 hex digest")
    return table


def load_key_table(api: ApiSettings) -> KeyTable:
    """The keys of ``FACTSTREAM_API_KEYS`` and ``FACTSTREAM_API_KEYS_FILE`` (no-auth: open).

    Raises:
        ValueError: a key table does not parse.
    """
    if api.no_auth:
        return KeyTable(open_access=True)
    grants: dict[str, Grant] = {}
    if api.keys_file is not None:
        grants.update(_parse(api.keys_file.read_text(), str(api.keys_file)))
    if api.keys.strip():
        grants.update(_parse(api.keys, "FACTSTREAM_API_KEYS"))
    return KeyTable(grants)
