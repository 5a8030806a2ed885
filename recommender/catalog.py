"""Load the bundled GPU and model catalogs from profiles/ (YAML files with per-figure sources)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from recommender.hardware import Gpu
from recommender.model.spec import FirstRelease
from recommender.node_gpu import LABEL_KINDS, InstanceType, NodeGpuTables, NodeLabel
from recommender.resources import profiles_dir
from recommender.units import MiB
from recommender.vllm_flags import FlagTable

_GPU_KEYS = {
    "key",
    "name",
    "vendor",
    "aliases",
    "memory",
    "bandwidth_gbps",
    "dense_tflops",
    "compute_capability",
    "supports",
    "interconnect",
    "gfd_product_label",
    "estimated",
    "sources",
}


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: 10x faster


def _load_yaml(path: Path) -> dict[str, Any]:
    """A profile as a mapping: YAML, or JSON for the few model files whose quantization lists run to megabytes
    (JSON is YAML's subset, and the stdlib reads it ~100x faster than PyYAML builds Python objects)."""
    with path.open(encoding="utf-8") as fh:
        data = json.load(fh) if path.suffix == ".json" else yaml.load(fh, Loader=_Loader)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping")
    return data


def gpu_from_profile(d: dict[str, Any], origin: str) -> Gpu:
    """Build a Gpu from one profile document, rejecting unknown keys."""
    unknown = set(d) - _GPU_KEYS
    if unknown:
        raise ValueError(f"{origin}: unknown keys {sorted(unknown)}")
    mem, tf, sup = d["memory"], d.get("dense_tflops") or {}, d.get("supports") or {}
    return Gpu(
        key=d["key"],
        name=d["name"],
        vendor=d["vendor"],
        total_bytes=int(mem["cuda_total_mib"]) * MiB,
        marketed_gb=mem.get("marketed_gb"),
        smi_total_mib=mem.get("nvidia_smi_total_mib"),
        memory_type=str(mem.get("type", "")),
        unified_memory=bool(mem.get("unified", False)),
        bandwidth_gbps=d.get("bandwidth_gbps"),
        bf16_tflops=tf.get("bf16"),
        fp16_tflops=tf.get("fp16"),
        fp8_tflops=tf.get("fp8"),
        int8_tflops=tf.get("int8"),
        fp4_tflops=tf.get("fp4"),
        compute_capability=str(d["compute_capability"]),
        fp8=bool(sup.get("fp8")),
        fp4=bool(sup.get("fp4")),
        interconnect=str(d.get("interconnect", "")),
        gfd_product_label=d.get("gfd_product_label"),
        aliases=tuple(d.get("aliases") or ()),
        estimated=tuple(d.get("estimated") or ()),
        sources=dict(d.get("sources") or {}),
    )


@cache
def load_gpus() -> tuple[Gpu, ...]:
    """Every GPU profile, sorted by vendor then memory."""
    folder = profiles_dir() / "gpus"
    gpus = [gpu_from_profile(_load_yaml(p), p.name) for p in sorted(folder.glob("*.yaml"))]
    return tuple(sorted(gpus, key=lambda g: (g.vendor != "nvidia", g.total_bytes, g.key)))


@cache
def load_node_gpu_tables() -> NodeGpuTables:
    """profiles/instance-types.yaml: cloud instance types and node labels that name a GPU (each row sourced)."""
    d = _load_yaml(profiles_dir() / "instance-types.yaml")
    sources = d["sources"]
    rows = [
        InstanceType(str(r["name"]), provider, str(r["gpu"]), int(r["count"]), sources[r["source"]])
        for provider, items in d["instance_types"].items()
        for r in items
    ]
    labels = tuple(_node_label(item, sources) for item in d["labels"])
    return NodeGpuTables(
        instance_types={r.name.lower(): r for r in rows},
        labels=labels,
        count_labels=tuple(d["count_labels"]),
        memory_labels=tuple(d["memory_labels"]),
        mig_labels=tuple(d.get("mig_labels") or ()),
    )


def _node_label(item: dict[str, Any], sources: dict[str, str]) -> NodeLabel:
    if item["kind"] not in LABEL_KINDS:
        raise ValueError(f"instance-types.yaml: label {item['key']}: unknown kind {item['kind']!r}")
    values = {
        str(v).lower(): tuple(keys) if isinstance(keys, list) else (str(keys),)
        for v, keys in (item.get("values") or {}).items()
    }
    return NodeLabel(item["key"], item["kind"], values, sources.get(item["source"], item["source"]))


@dataclass(frozen=True, slots=True)
class CatalogModel:
    """One bundled model: its real config.json (and quant config) with where it came from."""

    id: str
    source: str
    config: dict[str, Any]
    hf_quant_config: dict[str, Any] | None
    variants: tuple[str, ...]
    base_model: str | None
    published_params: int | None
    published_params_source: str | None
    note: str | None
    reconstructed: str | None = None  # why config.json is rebuilt (the repository's own file not found), else None
    pooling: str | None = None  # why vLLM picks the pooling runner (a sentence-transformers modules.json), with source


@cache
def model_files() -> dict[str, Path]:
    """Bundled model files keyed by lower-cased Hugging Face id (file `org--name.yaml` or `.json` holds `org/name`)."""
    folder = profiles_dir() / "models"
    paths = sorted([*folder.glob("*.yaml"), *folder.glob("*.json")])
    return {p.stem.replace("--", "/", 1).lower(): p for p in paths}


def load_model(model_id: str) -> CatalogModel | None:
    """One bundled model by Hugging Face id (case-insensitive), or None."""
    return _load_model(model_id.lower())


@cache
def _load_model(key: str) -> CatalogModel | None:
    path = model_files().get(key)
    return _model_from_profile(_load_yaml(path)) if path else None


def load_models() -> dict[str, CatalogModel]:
    """Every bundled model keyed by lower-cased Hugging Face id."""
    return {key: m for key in model_files() if (m := load_model(key)) is not None}


@dataclass(frozen=True, slots=True)
class Alias:
    """One explicit alternative id for a catalog entry, with why it is safe (profiles/aliases.yaml)."""

    alias: str
    target: str
    kind: str  # renamed | base-of | instruct-of | mirror | sibling-of | local-dir
    reason: str
    differs: tuple[str, ...]  # config keys that differ from the target's file (none the planner reads)
    checked_on: tuple[tuple[str, str], ...] = ()  # bundled (alias-like, target-like) pairs showing `differs`
    # sibling-of: the architecture the alias's own model card states (config keys and values), the parameter
    # counts it states in billions (total, non-embedding, at the card's precision) and where the card was read.
    card: tuple[tuple[str, int], ...] = ()
    card_params_b: tuple[str, str] = ("", "")
    card_source: str = ""

    @property
    def same_model(self) -> bool:
        """The alias names the very checkpoint of the target (a renamed repository, a byte-identical mirror, or the
        local directory a public recipe downloads the target into)."""
        return self.kind in ("renamed", "mirror", "local-dir")


@dataclass(frozen=True, slots=True)
class Rename:
    """A repository prefix the hub renamed (`old` ids redirect to `new` ids); tried in both directions."""

    old: str
    new: str
    reason: str


@dataclass(frozen=True, slots=True)
class CatalogMatch:
    """A catalog entry found for a model reference, and how (None: the reference is the entry's id)."""

    entry: CatalogModel
    via: str | None = None
    same_model: bool = True


_ALIAS_KINDS = ("renamed", "base-of", "instruct-of", "mirror", "sibling-of", "local-dir")


@cache
def load_aliases() -> tuple[dict[str, Alias], tuple[Rename, ...]]:
    """The explicit alias table and the renamed repository prefixes, keyed by lower-cased alias."""
    path = profiles_dir() / "aliases.yaml"
    d = _load_yaml(path)
    aliases: dict[str, Alias] = {}
    for row in d.get("aliases") or []:
        kind = str(row["kind"])
        if kind not in _ALIAS_KINDS:
            raise ValueError(f"{path.name}: alias {row['alias']!r} has kind {kind!r}, not one of {_ALIAS_KINDS}")
        if kind == "local-dir" and "/" in str(row["alias"]):
            raise ValueError(f"{path.name}: local-dir alias {row['alias']!r} is a directory name, not an id with '/'")
        pairs = tuple((str(x), str(y)) for x, y in row.get("checked_on") or ())
        card = row.get("card") or {}
        a = Alias(
            str(row["alias"]),
            str(row["target"]),
            kind,
            str(row["reason"]),
            tuple(row.get("differs") or ()),
            pairs,
            tuple((str(k), int(v)) for k, v in (card.get("states") or {}).items()),
            (str(card.get("total_params_b", "")), str(card.get("non_embedding_params_b", ""))),
            str(card.get("source", "")),
        )
        aliases[a.alias.lower()] = a
    renames = tuple(Rename(str(r["old"]), str(r["new"]), str(r["reason"])) for r in d.get("renames") or [])
    return aliases, renames


def _renamed(ref: str, renames: tuple[Rename, ...]) -> list[tuple[str, Rename]]:
    low = ref.lower()
    out = []
    for r in renames:
        for old, new in ((r.old, r.new), (r.new, r.old)):
            if low.startswith(old.lower()):
                out.append((new + ref[len(old) :], r))
    return out


def _renamed_bare(ref: str, renames: tuple[Rename, ...]) -> list[tuple[str, Rename]]:
    """A name written without organisation in a renamed-away spelling that names the repository too
    (`Meta-Llama-3.1-70B-Instruct`, as a local directory downloaded under the old id is often called): the full id
    under the new spelling. Only the old side: the current spelling (`Llama-3.1-8B`) is also what other publishers
    call their copies and fine-tunes, so a bare current name stays unresolved (tests/test_models.py). Organisation-
    only renames (neuralmagic/ -> RedHatAI/) say nothing about a bare name and are not used."""
    low = ref.lower()
    out = []
    for r in renames:
        name = r.old.split("/", 1)[1] if "/" in r.old else ""
        if name and low.startswith(name.lower()):
            out.append((r.new + ref[len(name) :], r))
    return out


def _original_of_copies(ids: list[str]) -> CatalogModel | None:
    """Among entries sharing one repository name, the original when every other one is a copy naming it as its
    base model (unsloth/Qwen2-7B-Instruct of Qwen/Qwen2-7B-Instruct): a bare name then means the same checkpoint
    whichever was downloaded. None when the entries are not one original and its copies."""
    entries = [e for i in ids if (e := load_model(i)) is not None]
    for e in entries:
        others = [o for o in entries if o is not e]
        if others and all((o.base_model or "").lower() == e.id.lower() for o in others):
            return e
    return None


def bare_name_matches(ref: str) -> list[str]:
    """Catalog ids whose repository name (after the organisation) equals `ref`, case-insensitively."""
    low = ref.lower()
    return [spelled_id(path) for key, path in model_files().items() if key.split("/", 1)[1] == low]


def spelled_id(path: Path) -> str:
    """The catalog id of a bundled model file as the catalog spells it (`org--Name.yaml` holds `org/Name`)."""
    return path.stem.replace("--", "/", 1)


def find_model(ref: str) -> CatalogMatch | None:
    """The catalog entry for `ref`: its id, an explicit alias, a renamed repository, or an id without organisation
    that names exactly one entry; or the same written as people write ids (`written_forms`). Nothing else (no
    fuzzy matching)."""
    match = _find_id(ref)
    if match is not None:
        return match
    for written, how in written_forms(ref):
        if (match := _find_id(written)) is not None:
            via = match.via or f"the catalog entry {match.entry.id}"
            return CatalogMatch(match.entry, f"{how}; {via}", match.same_model)
    return None


_CACHE_FOLDER = re.compile(r"^models--(?P<org>[^/]+?)--(?P<name>[^/]+)$")


def written_forms(ref: str) -> list[tuple[str, str]]:
    """The ids `ref` may stand for when it is not one as written, each with how it was read: trailing slashes
    dropped; a Hugging Face cache folder `models--org--name` (alone or anywhere in a path, snapshots included);
    and for a path (`/models/Qwen2.5-7B-Instruct`, `~/ckpt/Qwen/Qwen3-8B/`), its last two components as
    `org/name`, then its last component as a name without organisation (which `find_model` resolves only when it
    names exactly one checkpoint), each also with ModelScope's cache escape undone (`Qwen2___5-7B-Instruct` is
    `Qwen2.5-7B-Instruct`). The caller reads a path that exists on this machine before asking this."""
    stripped = ref.strip().rstrip("/")
    parts = [p for p in stripped.split("/") if p]
    for part in parts:
        if m := _CACHE_FOLDER.match(part):
            return [(f"{m['org']}/{m['name']}", f"{part!r} is the Hugging Face cache folder of that id")]
    forms = [(stripped, "trailing '/' dropped")] if stripped != ref.strip() and stripped.count("/") <= 1 else []
    if not stripped.startswith(("/", "~", ".")) and stripped.count("/") <= 1:
        return forms
    where = f"{stripped!r} is not a directory here"
    if len(parts) >= 2 and not parts[-2].startswith((".", "~")):
        forms.append((f"{parts[-2]}/{parts[-1]}", f"{where}; its last two components name a hub id"))
    if parts and parts[-1] not in (".", "..", "~"):
        forms.append((parts[-1], f"{where}; its last component is read as a model name"))
    return forms + [
        (written.replace("___", "."), f"{how} (ModelScope's cache writes '.' in a name as '___')")
        for written, how in forms
        if "___" in written
    ]


def _find_id(ref: str) -> CatalogMatch | None:
    """`find_model` for a reference as written (id, alias, renamed repository, name without organisation)."""
    entry = load_model(ref)
    if entry is not None:
        return CatalogMatch(entry)
    aliases, renames = load_aliases()
    alias = aliases.get(ref.lower())
    if alias is not None and (entry := load_model(alias.target)) is not None:
        return CatalogMatch(entry, f"alias of {entry.id} ({alias.kind}): {alias.reason}", alias.same_model)
    for new_id, rename in _renamed(ref, renames):
        if (entry := load_model(new_id)) is not None:
            return CatalogMatch(entry, f"renamed repository, now {entry.id}: {rename.reason}")
        if (alias := aliases.get(new_id.lower())) is not None and (entry := load_model(alias.target)) is not None:
            via = f"renamed repository, now {new_id}: an alias of {entry.id} ({alias.kind}): {alias.reason}"
            return CatalogMatch(entry, via, alias.same_model)
    if "/" not in ref and len(found := bare_name_matches(ref)) == 1 and (entry := load_model(found[0])) is not None:
        return CatalogMatch(entry, f"no organisation given; {entry.id} is the only catalog entry with that name")
    if "/" not in ref and (entry := _original_of_copies(found)) is not None:
        return CatalogMatch(
            entry, f"no organisation given; the other catalog entries of that name are copies of {entry.id}"
        )
    for new_id, rename in _renamed_bare(ref, renames) if "/" not in ref else ():
        if (entry := load_model(new_id)) is not None:
            return CatalogMatch(entry, f"no organisation given; a renamed repository, now {entry.id}: {rename.reason}")
        if (alias := aliases.get(new_id.lower())) is not None and (entry := load_model(alias.target)) is not None:
            via = f"no organisation given; a renamed repository, now {new_id}: an alias of {entry.id} ({alias.kind})"
            return CatalogMatch(entry, f"{via}: {alias.reason}", alias.same_model)
    return _bare_alias(ref, aliases) if "/" not in ref and not found else None


def _bare_alias(ref: str, aliases: dict[str, Alias]) -> CatalogMatch | None:
    """A name without organisation that is the repository name of exactly one alias, or of several aliases that all
    name one target (google/gemma-4-26B-A4B-it and unsloth's re-upload of it), and of no catalog entry."""
    named = [a for key, a in aliases.items() if key.split("/", 1)[-1] == ref.lower()]
    if not named or len({a.target.lower() for a in named}) != 1 or (entry := load_model(named[0].target)) is None:
        return None
    alias = named[0]
    if len(named) == 1:
        via = f"no organisation given; {alias.alias} is the only id of that name, an alias of {entry.id} ({alias.kind})"
        return CatalogMatch(entry, f"{via}: {alias.reason}", alias.same_model)
    ids = ", ".join(f"{a.alias} ({a.kind})" for a in named)
    via = f"no organisation given; every id of that name is an alias of {entry.id}: {ids}"
    return CatalogMatch(entry, f"{via}: {alias.reason}", all(a.same_model for a in named))


def _model_from_profile(d: dict[str, Any]) -> CatalogModel:
    return CatalogModel(
        id=d["id"],
        source=d["source"],
        config=d["config"],
        hf_quant_config=d.get("hf_quant_config"),
        variants=tuple(d.get("variants") or ()),
        base_model=d.get("base_model"),
        published_params=d.get("published_params"),
        published_params_source=d.get("published_params_source"),
        note=d.get("note"),
        reconstructed=d.get("reconstructed"),
        pooling=d.get("pooling"),
    )


@cache
def load_flag_table() -> FlagTable:
    """profiles/vllm-flags.yaml: vLLM's serve options per release."""
    return FlagTable.from_yaml(_load_yaml(profiles_dir() / "vllm-flags.yaml"))


_RELEASE_ROW_KEYS = ({"first", "source"}, {"after", "by", "source"})
_RELEASE = re.compile(r"\d+\.\d+\.\d+(?:\.\d+|\.post\d+)?")  # 0.9.0.1 and 0.6.1.post1 are tags too


def first_release_from_row(arch: str, row: Any, origin: str) -> FirstRelease:
    """One architecture's row: `first` (pinned) or the bracket `after`/`by`, each with its source."""
    if not isinstance(row, dict) or set(row) not in _RELEASE_ROW_KEYS:
        raise ValueError(f"{origin} {arch}: a row holds first + source, or after + by + source")
    versions = [str(row[k]) for k in ("first", "after", "by") if k in row]
    if not all(_RELEASE.fullmatch(v) for v in versions) or not str(row["source"]).strip():
        raise ValueError(f"{origin} {arch}: releases are written 0.N.M and every row names its source")
    return FirstRelease(arch, row.get("first"), row.get("after"), row.get("by"), str(row["source"]))


@cache
def load_first_releases() -> dict[str, FirstRelease]:
    """profiles/architectures.yaml: the first vLLM release that can load each architecture (hand-pinned rows
    override the generated brackets)."""
    doc = _load_yaml(profiles_dir() / "architectures.yaml")
    rows = {**(doc.get("releases") or {}), **(doc.get("pinned") or {})}
    return {arch: first_release_from_row(arch, row, "profiles/architectures.yaml") for arch, row in rows.items()}


@cache
def load_release_variants() -> tuple[FirstRelease, ...]:
    """profiles/architectures.yaml `variants:`: an architecture whose model code gained a config key's layers in a
    later release than the architecture itself (oldest first)."""
    out = []
    for i, row in enumerate(_load_yaml(profiles_dir() / "architectures.yaml").get("variants") or []):
        if not isinstance(row, dict) or not isinstance(row.get("architecture"), str) or "config_key" not in row:
            raise ValueError(f"profiles/architectures.yaml variants[{i}]: needs architecture and config_key")
        rest = {k: v for k, v in row.items() if k not in ("architecture", "config_key")}
        base = first_release_from_row(row["architecture"], rest, f"profiles/architectures.yaml variants[{i}]")
        out.append(replace(base, config_key=str(row["config_key"])))
    return tuple(out)


def first_release_for(architecture: str, config: dict[str, Any]) -> FirstRelease | None:
    """The row that decides for this config: the latest variant whose key the config (or its text_config) sets,
    else the architecture's own row."""
    text = config.get("text_config")
    text = text if isinstance(text, dict) else {}
    keys = {k for k, v in {**config, **text}.items() if v is not None}
    hits = [v for v in load_release_variants() if v.architecture == architecture and v.config_key in keys]
    base = load_first_releases().get(architecture)
    return replace(hits[-1], base=base) if hits else base
