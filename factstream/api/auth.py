"""The HTTP side of API keys: the bearer key of a request, checked against the key table."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

__all__ = ["ApiKey", "bearer"]

bearer = HTTPBearer(auto_error=False, description="An API key: Authorization: Bearer KEY")


def _key(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> str | None:
    return credentials.credentials if credentials is not None else None


ApiKey = Annotated[str | None, Depends(_key)]
