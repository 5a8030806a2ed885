"""Finding a GPU by name over a catalog (pure: no file access): keys, vendor and tool names, whole nvidia-smi
lines, vGPU types, AMD offload architectures, sizes written with a name, and the errors for an ambiguous or unknown
one. The cards themselves and their variants: hardware.py."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from recommender.errors import UnknownGpuError
from recommender.hardware import (
    Gpu,
    custom_gpu,
    mig_slice,
    modified_card,
    unified_share,
    vgpu_type,
    with_given_total,
)
from recommender.quoting import quoted
from recommender.units import GiB

_GIVEN_TOTAL_KEY = re.compile(r"(?P<key>[a-z0-9.-]+)-(?P<gib>\d+(?:\.\d+)?)gib")


def given_card(name: str | None, memory_gib: float, catalog: Sequence[Gpu]) -> Gpu:
    """`--gpu-memory-gib N`, with `--gpu NAME` naming the chip when the catalog knows it (the total also picks
    between cards of one name; a MIG instance's board, `NVIDIA A100-SXM4-80GB MIG 3g.40gb` as torch names it, is
    its chip); an unknown name is a custom card called that."""
    if not name:
        return custom_gpu(memory_gib)
    for written in (name, _board_of_mig(name)):
        try:
            card = resolve_gpu(written, catalog, memory_mib=int(memory_gib * 1024)) if written else None
        except UnknownGpuError:
            card = None
        if card is not None:
            return with_given_total(_instance(card, name) if written != name else card, memory_gib)
    return custom_gpu(memory_gib, name=name)


def _instance(board: Gpu, name: str) -> Gpu:
    """The MIG instance `name` names on `board` (no NVLink between instances), or the board when no profile says."""
    profile = _MIG_PROFILE.search(name.lower())
    try:
        return mig_slice(board, profile.group(0)) if profile else board
    except UnknownGpuError:
        return board


def _board_of_mig(name: str) -> str | None:
    """The board a MIG instance's name starts with (`NVIDIA A100-SXM4-80GB MIG 3g.40gb`), else None."""
    mig = _MIG_START.search(name)
    return (name[: mig.start()].strip(" -_") or None) if mig else None


_MEMORY = re.compile(r"(?<![a-z0-9])(\d+(?:\.\d+)?)\s*(?:gib|gb|g)(?![a-z0-9])")
# Words that vendors and tools put around a model name without changing the card: "NVIDIA GeForce RTX 4090",
# "Tesla T4", "AMD Instinct MI300X OAM" (rocm-smi / the AMD node labeller), "... VF" (an SR-IOV function of
# the whole card), "-SHARED" (GPU feature discovery's suffix for a time-sliced card).
# "... Laptop GPU" (torch and nvidia-smi on notebooks) keeps "laptop" and drops "gpu".
# "GRID ..." is the older brand of NVIDIA's vGPU types, as a VM's nvidia-smi names them ("GRID A100-40C").
_NOISE_WORDS = frozenset({"nvidia", "amd", "geforce", "tesla", "instinct", "oam", "vf", "shared", "gpu", "grid"})
# The lines nvidia-smi prints a card's name in, pasted whole: `nvidia-smi -L` ("GPU 0: NVIDIA A100-SXM4-80GB (UUID:
# GPU-...)") and `--query-gpu=name,memory.total --format=csv,noheader` ("NVIDIA A100-SXM4-80GB, 81920 MiB").
_SMI_LIST = re.compile(r"^\s*GPU\s+\d+:\s*(.+?)\s*\(UUID:[^)]*\)\s*$", re.I)
_SMI_CSV = re.compile(r"^\s*([^,]+?)\s*,\s*(\d{3,7})\s*MiB\s*$", re.I)
# The lines AMD's tools print it in: `rocm-smi --showproductname` ("GPU[0]  : Card Series:  AMD Instinct MI300X OAM")
# and `amd-smi static` ("MARKET_NAME: AMD Instinct MI300X").
_AMD_SMI = re.compile(r"^\s*(?:GPU\[\d+\]\s*:\s*Card Series|MARKET_NAME|PRODUCT_NAME)\s*:\s*(.+?)\s*$", re.I)
# NVIDIA vGPU type names: `<board>-<framebuffer GiB><series>`, series Q (virtual workstation), C (compute), B (virtual
# PC), A (virtual applications) (NVIDIA Virtual GPU Software User Guide, "Virtual GPU Types for Supported GPUs"; the
# size is the type's framebuffer in GiB, as vSphere's VgpuProfileInfo.fbSizeInGib and NVML's
# nvmlVgpuTypeGetFramebufferSize report it). A VM's nvidia-smi and CUDA print that name ("NVIDIA A40-48Q").
_VGPU = re.compile(r"^\s*(?P<board>.*?[a-z0-9])-(?P<gib>\d{1,3})(?P<series>[qcba])\s*$", re.I)
# A ROCm offload architecture as torch (gcnArchName 'gfx942:sramecc+:xnack-'), vLLM's logs and clang print it.
_ARCH = re.compile(r"(?<![a-z0-9])(gfx[0-9a-f]{3,4})(?![0-9a-f])")
# A slash between card names (`AMD Instinct MI60 / MI50`): one marketing name for several boards.
_ALTERNATIVES = re.compile(r"\s*/\s*")
# A MIG profile as nvidia-smi, the device plugin's resources and GFD print it (`1g.10gb`, `3g.40gb`, `1g.10gb+me`),
# also without the word MIG: `<compute slices>g.<memory>gb`.
_MIG_PROFILE = re.compile(r"(?<![a-z0-9])\d+g\.\d+gb(?:\+me)?(?![a-z0-9])")
_MIG_START = re.compile(r"(?<![a-z0-9])(?:mig|\d+g\.\d+gb)(?![a-z0-9])", re.I)
# A count written with the card, as people write a machine (`h100x8`, `8xH100`, `8 x A100`, Modal's `H100:8`).
_COUNTED = (
    re.compile(r"^\s*(?P<count>\d{1,3})\s*[x*\u00d7]\s*(?P<card>\S.*?)\s*$", re.I),
    re.compile(r"^\s*(?P<card>.*?\S)\s*[x*\u00d7:]\s*(?P<count>\d{1,3})\s*$", re.I),
)


@dataclass(frozen=True, slots=True)
class GpuName:
    """A GPU name reduced to what identifies the card: the model words and, if written, the memory in GB."""

    model: str
    memory_gb: float | None
    mig: bool = False

    @classmethod
    def parse(cls, text: str) -> GpuName:
        """Deterministic rules: lower-case; take out one `<n>GB`/`<n>G`/`<n>GiB` token as the memory; drop
        vendor words; join the remaining letters and digits (`NVIDIA A100-SXM4-80GB` -> a100sxm4, 80)."""
        lowered = text.lower().replace("_", " ")
        memory: float | None = None
        m = _MEMORY.search(lowered)
        if m:
            memory = float(m.group(1))
            lowered = lowered[: m.start()] + " " + lowered[m.end() :]
        words = [w for w in re.split(r"[^a-z0-9.]+", lowered) if w]
        mig = "mig" in words
        if mig:
            words = words[: words.index("mig")]
        model = "".join(re.sub(r"[^a-z0-9]", "", w) for w in words if w not in _NOISE_WORDS)
        return cls(_without_glued_vendor(model), memory, mig)


def _without_glued_vendor(model: str) -> str:
    """Slurm GRES/feature names drop the spaces (`TeslaV100S-PCIE-32GB`, `NVIDIAA100-SXM4-80GB`): a vendor word
    glued to the front of the model is noise too."""
    for word in ("nvidia", "tesla", "geforce"):
        if model.startswith(word) and len(model) > len(word):
            model = model[len(word) :]
    return model


def _names(gpu: Gpu) -> set[GpuName]:
    texts = (gpu.key, gpu.name, *gpu.aliases, *((gpu.gfd_product_label,) if gpu.gfd_product_label else ()))
    return {GpuName.parse(t) for t in texts}


def _same_memory(gpu: Gpu, memory_gb: float) -> bool:
    """The written size is the marketed one, or the CUDA total in GiB as vLLM and torch print it, cut or rounded
    to a whole number (`NVIDIA H20 (95 GiB)`: 95.58 GiB printed), or nvidia-smi's MiB total read in thousands
    (`H100 96GB`: the 94 GB H100 NVL, whose nvidia-smi prints 95830MiB)."""
    printed = gpu.total_bytes / GiB
    smi = round(gpu.smi_total_mib / 1000) if gpu.smi_total_mib else None  # nvidia-smi's MiB read in thousands
    return (gpu.marketed_gb is not None and abs(gpu.marketed_gb - memory_gb) < 0.5) or (
        memory_gb == int(memory_gb) and (int(printed) <= memory_gb <= round(printed) or memory_gb == smi)
    )


def _by_memory_hint(candidates: list[Gpu], memory_mib: int | None) -> list[Gpu]:
    """Among variants of one name, the one whose marketed size is nearest to a reported MiB total."""
    if memory_mib is None or len(candidates) < 2 or any(g.marketed_gb is None for g in candidates):
        return candidates
    gib = memory_mib / 1024
    best = min(abs((g.marketed_gb or 0) - gib) for g in candidates)
    return [g for g in candidates if abs((g.marketed_gb or 0) - gib) == best]


def _unique(gpus: list[Gpu]) -> list[Gpu]:
    return list({g.key: g for g in gpus}.values())


def _ambiguous(query: str, gpus: list[Gpu]) -> UnknownGpuError:
    choices = ", ".join(f"{g.key} ({g.marketed_gb:g} GB)" if g.marketed_gb else g.key for g in gpus)
    return UnknownGpuError(f"GPU {quoted(query)} is ambiguous: one of {choices}")


def _by_key(key: str, catalog: Sequence[Gpu]) -> Gpu | None:
    """A catalog key, which names one card even where memory variants share its nvidia-smi name (rtx3080), or the
    key of a card planned with --gpu-memory-gib (a plan's inputs.gpu, render's annotation: `h100-sxm-40gib`,
    `custom-40gib`)."""
    by_key = [g for g in catalog if g.key == key]
    if by_key:
        return by_key[0]
    given = _GIVEN_TOTAL_KEY.fullmatch(key)
    if given is None:
        return None
    if given.group("key") == "custom":
        return custom_gpu(float(given.group("gib")))
    base = [g for g in catalog if g.key == given.group("key")]
    return with_given_total(base[0], float(given.group("gib"))) if base else None


def resolve_gpu(query: str, catalog: Sequence[Gpu], *, memory_mib: int | None = None) -> Gpu:
    """Find a GPU by key, name, alias, nvidia-smi/rocm-smi name or GPU-feature-discovery label.

    Names are compared after `GpuName.parse`. A memory size in the query picks the variant with that marketed
    size (`L4 24GB`, `A100 80G`); `memory_mib` (a MiB total a tool reported, e.g. GFD's nvidia.com/gpu.memory)
    picks the nearest variant when the name alone is shared. A name that several cards share without a
    catalogued default raises UnknownGpuError listing them; so does an unknown name, with the closest keys.
    An AMD offload architecture (`gfx1201`, `gfx942:sramecc+:xnack-`) resolves only when one card has it.
    """
    query, memory_mib = _smi_line(query, memory_mib)
    by_key = _by_key(query.strip().lower(), catalog)
    if by_key is not None:
        return by_key
    vgpu = _VGPU.match(query)
    if vgpu:
        board = resolve_gpu(vgpu.group("board"), catalog)
        return vgpu_type(board, int(vgpu.group("gib")), vgpu.group("series").upper(), memory_mib)
    arch = _ARCH.search(query.lower())
    if arch:
        return _by_offload_arch(query, arch.group(1), catalog, memory_mib)
    shared = _shared_name(query, catalog, memory_mib)
    if shared is not None:
        return shared
    wanted = GpuName.parse(query)
    if wanted.mig or _MIG_PROFILE.search(query.lower()):
        raise UnknownGpuError(
            f"{quoted(query)} is a MIG slice: its memory is a fraction of the card's; give --gpu-memory-gib"
        )
    if not wanted.model:  # '' or only a memory size ('80g', a Slurm site's GPU type)
        named = f"{quoted(query.strip())} names no GPU model" if query.strip() else "empty GPU name"
        raise UnknownGpuError(f"{named}; run `vllm-plan gpus` to list the known GPUs")
    exact = _unique([g for g in catalog if wanted in _names(g)])
    same_model = _unique([g for g in catalog if any(n.model == wanted.model for n in _names(g))])
    if wanted.memory_gb is not None and not exact:
        written = _by_written_size(query, wanted.memory_gb, same_model, memory_mib)
        if isinstance(written, Gpu):
            return written
        exact = written
    found = exact or same_model
    found = _by_memory_hint(found, memory_mib)
    if len(found) == 1:
        return found[0]
    if found:
        raise _ambiguous(query, found)
    raise _counted(query, catalog) or _unknown(query, wanted, catalog)


def _counted(query: str, catalog: Sequence[Gpu]) -> UnknownGpuError | None:
    """`h100x8`, `8 x A100`, `H100:8`: a card and a count, where --gpu takes one card; the error says where the
    count goes. None when the name without the count is no card either."""
    for pattern in _COUNTED:
        m = pattern.match(query)
        if m is None or int(m.group("count")) < 1:
            continue
        try:
            card = resolve_gpu(m.group("card"), catalog)
        except UnknownGpuError:
            continue
        n = int(m.group("count"))
        return UnknownGpuError(
            f"GPU {quoted(query)} is {n} x {card.name}: --gpu names one card (--gpu {card.key}); give the count "
            f"as --gpus-per-node {n} to `recommend`, as -tp/-pp/-dp to `explain` and `perf`"
        )
    return None


def _by_written_size(query: str, memory_gb: float, same_model: list[Gpu], memory_mib: int | None) -> Gpu | list[Gpu]:
    """The cards of one name with the size written beside it; else a memory-modified GeForce board or an integrated
    GPU's share of its machine; else, when the name is catalogued, an error naming its known sizes."""
    exact = [g for g in same_model if _same_memory(g, memory_gb)]
    if exact or not same_model:
        return exact
    modified = _memory_modified(same_model, memory_gb)
    if modified is not None:
        return modified_card(modified, memory_gb, memory_mib)
    apu = _configurable_apu(same_model, memory_gb)
    if apu is not None:
        return unified_share(apu, memory_gb, memory_mib)
    known = ", ".join(f"{g.key} ({g.marketed_gb:g} GB)" for g in same_model)
    raise UnknownGpuError(
        f"no {memory_gb:g} GB card named {quoted(query)} in the catalog (known: {known}); "
        "run `vllm-plan gpus` for the full names, or give --gpu-memory-gib"
    )


def _memory_modified(same_model: list[Gpu], memory_gb: float) -> Gpu | None:
    """The stock GeForce board a written size larger than every catalogued variant's belongs to: a board re-fitted
    with larger memory chips (`RTX 2080 Ti 22G`, `RTX 4090 48G`); the largest variant's chip, else None."""
    sized = [g for g in same_model if g.marketed_gb is not None]
    if not sized or len(sized) < len(same_model) or not all("GEFORCE" in g.name.upper() for g in sized):
        return None
    stock = max(sized, key=lambda g: g.marketed_gb or 0.0)
    return stock if memory_gb > (stock.marketed_gb or 0.0) + 0.5 else None


def _shared_name(query: str, catalog: Sequence[Gpu], memory_mib: int | None) -> Gpu | None:
    """One marketing name for several cards, written with a slash: rocminfo and older ROCm torch builds name every
    gfx906 Instinct board `AMD Instinct MI60 / MI50` (lamikr/rocm_sdk_builder#180). Each part is looked up by model;
    the reported memory picks among them, else they are listed (never guessed). None when the query has no slash or
    no part names a catalog card."""
    parts = [p for p in _ALTERNATIVES.split(query) if p.strip()]
    if len(parts) < 2:
        return None
    models = {GpuName.parse(p).model for p in parts} - {""}
    cards = _unique([g for g in catalog if any(n.model in models for n in _names(g))])
    cards = _by_memory_hint(cards, memory_mib)
    if len(cards) == 1:
        return cards[0]
    if cards:
        raise _ambiguous(query, cards)
    return None


def _configurable_apu(same_model: list[Gpu], memory_gb: float) -> Gpu | None:
    """The integrated GPU a written size belongs to when that size is the share of the machine's memory its BIOS
    carve-out and GTT limit give the GPU (`Radeon 8060S 96GB` on a 128 GB Strix Halo): one unified-memory card whose
    memory type names the GTT, and a size no larger than the machine's."""
    if len(same_model) != 1:
        return None
    card = same_model[0]
    configurable = card.unified_memory and "GTT" in card.memory_type
    fits = card.marketed_gb is None or memory_gb <= card.marketed_gb + 0.5
    return card if configurable and fits else None


def _smi_line(query: str, memory_mib: int | None) -> tuple[str, int | None]:
    """The card's name out of a whole nvidia-smi line (its MiB total as the memory hint), else the query as is."""
    listed = _SMI_LIST.match(query)
    if listed:
        return listed.group(1), memory_mib
    amd = _AMD_SMI.match(query)
    if amd:
        return amd.group(1), memory_mib
    csv = _SMI_CSV.match(query)
    if csv:
        return csv.group(1), memory_mib if memory_mib is not None else int(csv.group(2))
    return query, memory_mib


def _by_offload_arch(query: str, arch: str, catalog: Sequence[Gpu], memory_mib: int | None) -> Gpu:
    """An AMD offload architecture names a card only when one catalog card has it (or one of its cards has the
    memory given beside it); otherwise the candidates are listed, never guessed."""
    cards = [g for g in catalog if g.vendor == "amd" and g.compute_capability.lower() == arch]
    wanted = GpuName.parse(query).memory_gb
    if wanted is not None:
        cards = [g for g in cards if _same_memory(g, wanted)]
    cards = _by_memory_hint(cards, memory_mib)
    if len(cards) == 1:
        return cards[0]
    if not cards:
        raise UnknownGpuError(
            f"no catalog card has the offload architecture {quoted(arch)} ({quoted(query)}); "
            "run `vllm-plan gpus` for the list, or give --gpu-memory-gib"
        )
    choices = ", ".join(f"{g.key} ({g.marketed_gb:g} GB)" if g.marketed_gb else g.key for g in cards)
    raise UnknownGpuError(
        f"GPU {quoted(query)} is the offload architecture {arch} of several cards: one of {choices}; "
        "name the card (rocm-smi --showproductname prints it)"
    )


# Accelerators vLLM runs through other platforms than CUDA and ROCm (Intel XPU, Gaudi/HPU, TPU, AWS Neuron, Ascend
# NPU): their memory accounting is not modelled, so no catalog card is "close" to them.
_OTHER_PLATFORM = re.compile(
    r"(?<![a-z0-9])(intel|arc|gaudi\d*|habana|hl-?\d+|tpu|v\d+[ep]|trainium\d*|trn\d|inferentia\d*|inf\d|neuron|ascend|npu)"
    r"(?![a-z0-9])",
    re.I,
)


def _unknown(query: str, wanted: GpuName, catalog: Sequence[Gpu]) -> UnknownGpuError:
    other = _OTHER_PLATFORM.search(query)
    if other:
        return UnknownGpuError(
            f"GPU {quoted(query)} ({other.group(1)}) runs vLLM through another platform than CUDA or ROCm: vllm-plan "
            "models NVIDIA and AMD GPUs only (run `vllm-plan gpus` for the list)"
        )
    choices = {n.model: g.key for g in catalog for n in _names(g)}
    close = difflib.get_close_matches(wanted.model, list(choices), n=5, cutoff=0.5)
    hint = ", ".join(dict.fromkeys(choices[c] for c in close))
    suffix = f"; closest: {hint}" if hint else ""
    return UnknownGpuError(
        f"unknown GPU {quoted(query)}{suffix} (run `vllm-plan gpus` for the list, or give --gpu-memory-gib)"
    )
