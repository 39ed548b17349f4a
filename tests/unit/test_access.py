"""API keys: hashed configuration, read and publish grants per namespace, no-auth mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factstream.access import KeyTable, hash_key, load_key_table
from factstream.api.server import check_serving
from factstream.config import ApiSettings
from factstream.errors import Forbidden, Unauthenticated

TABLE = {
    hash_key("desk-key"): {"read": ["desk"], "publish": ["desk"]},
    hash_key("admin"): {"read": ["*"]},
}


def table() -> KeyTable:
    return load_key_table(ApiSettings(keys=json.dumps(TABLE)))


def test_grants_by_namespace_and_action() -> None:
    keys = table()
    assert keys.check("desk-key", "read", "desk").allows("publish", "desk")
    assert keys.check("admin", "read", "anything").allows("read", "other")
    with pytest.raises(Forbidden, match="may not read namespace 'other'"):
        keys.check("desk-key", "read", "other")
    with pytest.raises(Forbidden, match="publish"):
        keys.check("admin", "publish", "desk")


@pytest.mark.parametrize("key", [None, "", "desk-key ", "unknown"])
def test_missing_or_unknown_keys_are_unauthenticated(key: str | None) -> None:
    with pytest.raises(Unauthenticated):
        table().check(key, "read", "desk")


def test_keys_file_and_env_merge_and_bad_tables_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({hash_key("filed"): {"read": ["x"]}}))
    keys = load_key_table(ApiSettings(keys=json.dumps(TABLE), keys_file=path))
    assert keys.grant_for("filed").allows("read", "x") and keys.grant_for("admin")
    with pytest.raises(ValueError, match="SHA-256"):
        load_key_table(ApiSettings(keys=json.dumps({"plain-key": {"read": ["x"]}})))
    with pytest.raises(ValueError, match="not a valid key table"):
        load_key_table(ApiSettings(keys="{not json"))


def test_no_auth_only_on_loopback_and_keys_required_otherwise() -> None:
    assert load_key_table(ApiSettings(no_auth=True)).check(None, "publish", "any")
    assert "NO-AUTH" in check_serving(ApiSettings(no_auth=True))
    with pytest.raises(ValueError, match="only allowed"):
        check_serving(ApiSettings(no_auth=True, host="0.0.0.0"))  # noqa: S104
    with pytest.raises(ValueError, match="no API keys"):
        check_serving(ApiSettings())
    assert "1 API key" in check_serving(ApiSettings(keys=json.dumps({hash_key("k"): {}})))
