"""The mirror's tables in PostgreSQL (created if missing; the DDL is the contract).

``facts``: each fact's current state as the knowledge base holds it, its history as JSONB,
its valid interval as a ``tstzrange`` and the conversation turns it was said in
(``turn_ids``, in the document of its first history entry; added to tables made before);
``edits``: every edit applied, once, with where it was read and why it changed nothing if
it did not; ``dead_letters``: changelog records the mirror could not apply (a newer
schema version, unreadable), with the reason;
``mirror_batches``: the document batches applied (the first per document wins, as in the
knowledge base); ``mirror_offsets``: per partition, the offset reading resumes at
(``next_offset``, before any edit of a batch still incomplete) and how far it had read
(``read_to``: below it, every record not of such a batch is in the tables), written in the
same transaction as the rows they account for; ``mirror_stats``: running counts.
"""

from __future__ import annotations

__all__ = ["DDL"]

DDL = """
CREATE TABLE IF NOT EXISTS facts (
    namespace text NOT NULL,
    fact_id text NOT NULL,
    text text NOT NULL,
    truth boolean NOT NULL,
    valid tstzrange NOT NULL,
    valid_from timestamptz,
    valid_to timestamptz,
    closed_at timestamptz,
    first_seen timestamptz NOT NULL,
    last_changed timestamptz NOT NULL,
    replaces text,
    replaced_by text,
    subject text,
    relation text,
    object text,
    object_type text,
    history jsonb NOT NULL,
    record jsonb NOT NULL,
    turn_ids text[],
    PRIMARY KEY (namespace, fact_id)
);
ALTER TABLE facts ADD COLUMN IF NOT EXISTS turn_ids text[];
CREATE INDEX IF NOT EXISTS facts_valid ON facts USING gist (valid);
CREATE TABLE IF NOT EXISTS edits (
    edit_id text PRIMARY KEY,
    namespace text NOT NULL,
    fact_id text NOT NULL,
    op text NOT NULL,
    truth boolean NOT NULL,
    event_time timestamptz NOT NULL,
    document_id text NOT NULL,
    batch_id text NOT NULL,
    position integer NOT NULL,
    schema_version integer NOT NULL,
    changelog_partition integer NOT NULL,
    changelog_offset bigint NOT NULL,
    skipped text,
    record jsonb NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS edits_fact ON edits (namespace, fact_id);
CREATE TABLE IF NOT EXISTS dead_letters (
    topic text NOT NULL,
    partition integer NOT NULL,
    "offset" bigint NOT NULL,
    key text,
    value bytea NOT NULL,
    kind text NOT NULL,
    schema_version integer,
    reason text NOT NULL,
    failed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (topic, partition, "offset")
);
CREATE TABLE IF NOT EXISTS mirror_batches (
    namespace text NOT NULL,
    document_id text NOT NULL,
    batch_id text NOT NULL,
    size integer NOT NULL,
    PRIMARY KEY (namespace, document_id)
);
CREATE TABLE IF NOT EXISTS mirror_offsets (
    topic text NOT NULL,
    partition integer NOT NULL,
    next_offset bigint NOT NULL,
    read_to bigint NOT NULL,
    PRIMARY KEY (topic, partition)
);
CREATE TABLE IF NOT EXISTS mirror_stats (
    topic text PRIMARY KEY,
    rounds bigint NOT NULL DEFAULT 0,
    edits_applied bigint NOT NULL DEFAULT 0,
    batches_applied bigint NOT NULL DEFAULT 0,
    duplicate_batches bigint NOT NULL DEFAULT 0,
    dead_letters bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);
"""
