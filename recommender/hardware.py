"""GPU facts as frozen values, and the variants of a card (a given total, a vGPU type, a MIG slice, a unified-memory
share, a memory-modified board) (pure: no file access). Finding a card by its name: gpu_names.py."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from recommender.errors import InputError, UnknownGpuError
from recommender.quoting import quoted
from recommender.units import GiB, MiB


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU type. `total_bytes` is the device total as CUDA reports it (vLLM's utilization base)."""

    key: str
    name: str
    vendor: str
    total_bytes: int
    marketed_gb: float | None = None
    smi_total_mib: int | None = None  # what nvidia-smi prints as the card's memory (MiB), where known
    memory_type: str = ""
    unified_memory: bool = False
    share_as_written: bool = False  # a total_is_a_setting card with the share the user wrote or a tool reported
    vgpu: bool = False  # an NVIDIA vGPU type (`A40-48Q`): a slice of a board's framebuffer handed to a VM
    bandwidth_gbps: float | None = None
    bf16_tflops: float | None = None
    fp16_tflops: float | None = None
    fp8_tflops: float | None = None
    int8_tflops: float | None = None  # dense INT8 tensor TOPS (W8A8-INT8 GEMMs)
    fp4_tflops: float | None = None
    compute_capability: str = ""
    fp8: bool = False
    fp4: bool = False
    interconnect: str = ""
    gfd_product_label: str | None = None
    aliases: tuple[str, ...] = ()
    estimated: tuple[str, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def max_per_node(self) -> int | None:
        """1 for a single-GPU system (DGX Spark's GB10, Jetson: the profile's interconnect says "single GPU"): a
        second GPU is another machine, so a plan grows across nodes, not tensor parallel within one."""
        return 1 if "single gpu" in self.interconnect.lower() else None

    @property
    def nvlink(self) -> bool:
        """True where GPUs of one node talk over NVLink / Infinity Fabric (custom all-reduce is used). NVLink-C2C
        joins a GPU to its Grace CPU, not to another GPU (GB10 "NVLink-C2C to the Grace CPU (single GPU)"), so it
        does not count; GH200 also names "NVLink 4.0 between superchips" and does."""
        text = self.interconnect.lower().replace("nvlink-c2c", "c2c")
        nvlink = "nvlink" in text and "bridge" not in text and "no nvlink" not in text  # "PCIe Gen4 (no NVLink)"
        return nvlink or "infinity fabric" in text

    @property
    def nvswitch_multicast(self) -> bool:
        """True where NCCL's NVLS algorithm runs (the device reports CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED): NVIDIA
        NVLink boards of compute capability 9.0 and later, whose GPUs meet at NVSwitch (memory/overheads.py
        NVLS_EAGER_UNTIL). PCIe cards with an NVLink bridge (H100 NVL) are not NVLink boards here."""
        cc = self.cc_major_minor
        return self.vendor == "nvidia" and self.nvlink and cc is not None and cc >= (9, 0)

    @property
    def total_is_a_setting(self) -> bool:
        """True for an integrated GPU whose device total is the BIOS carve-out plus the GTT limit the machine is set
        to (Strix Halo: 59.6 to 124 GiB seen on one 128 GB machine type), not a property of the chip."""
        return self.unified_memory and "GTT" in self.memory_type and not self.share_as_written

    @property
    def cc_major_minor(self) -> tuple[int, int] | None:
        """Compute capability as numbers, None for non-CUDA devices."""
        m = re.fullmatch(r"(\d+)\.(\d+)", self.compute_capability)
        return (int(m.group(1)), int(m.group(2))) if m else None

    @property
    def supports_bf16(self) -> bool:
        """bf16 needs compute capability 8.0 or newer on NVIDIA; AMD Instinct MI200+ has it."""
        cc = self.cc_major_minor
        return cc is None or cc >= (8, 0)


def custom_gpu(memory_gib: float, *, name: str = "custom") -> Gpu:
    """A card described only by its memory (`--gpu-memory-gib`): CUDA total = that many GiB."""
    if not memory_gib > 0:
        raise InputError(f"--gpu-memory-gib must be positive, got {memory_gib}")
    return Gpu(
        key=f"custom-{memory_gib:g}gib",  # resolve_gpu reads it back (a plan's inputs.gpu, render's annotation)
        name=f"{name} ({memory_gib:g} GiB)",
        vendor="unknown",
        total_bytes=int(memory_gib * 1024) * MiB,
        compute_capability="8.0",
        sources={"memory.cuda_total_mib": "given on the command line (--gpu-memory-gib)"},
    )


def with_given_total(card: Gpu, memory_gib: float) -> Gpu:
    """A named card with the total given by `--gpu-memory-gib` (a smaller share of it, a card whose CUDA total
    differs from the catalog's): its chip (compute capability, FP8, bandwidth, interconnect), that total."""
    if not memory_gib > 0:
        raise InputError(f"--gpu-memory-gib must be positive, got {memory_gib}")
    total = int(memory_gib * 1024) * MiB
    return _variant(
        card,
        f"{memory_gib:g}gib",
        f"{card.name} ({memory_gib:g} GiB)",
        total,
        "given on the command line (--gpu-memory-gib)",
        estimated=False,
    )


def vgpu_type(board: Gpu, gib: int, series: str, memory_mib: int | None = None) -> Gpu:
    """A vGPU type of a catalog board (`A40-48Q`): the board's chip with the type's framebuffer as its total (the
    total a tool reported, when given). The framebuffer reservation of the type (NVML nvmlVgpuTypeGetFbReservation)
    is not modelled: a vLLM log on an A40-48Q (vllm-project/vllm#11230) printed a 47.74 GiB total and 4.09 GiB of
    non-torch memory, where a bare card shows about 0.5."""
    if board.marketed_gb is not None and gib > board.marketed_gb + 0.5:
        raise UnknownGpuError(f"a {gib} GiB vGPU type is larger than the {board.marketed_gb:g} GB {board.name}")
    how = "as the tool reported it" if memory_mib else "ESTIMATE: the vGPU type's framebuffer, N GiB by its name"
    return replace(
        board,
        key=f"{board.key}-{gib}{series.lower()}",
        name=f"{_vgpu_board_name(board)}-{gib}{series} (vGPU type of the {board.name})",
        total_bytes=(memory_mib or gib * 1024) * MiB,
        marketed_gb=float(gib),
        aliases=(),
        vgpu=True,
        gfd_product_label=None,
        estimated=(*board.estimated, *(() if memory_mib else ("memory.cuda_total_mib",))),
        sources={
            **board.sources,
            "memory.cuda_total_mib": f"{how} (NVIDIA vGPU type naming <board>-<GiB><series>); the type's "
            "framebuffer reservation is not modelled (an A40-48Q logged 4.09 GiB of non-torch memory, vllm#11230)",
        },
    )


def _vgpu_board_name(board: Gpu) -> str:
    """The board as a vGPU type's name starts: the catalog name before its form factor and size (`NVIDIA A100`)."""
    return re.split(r"[- ](?:SXM|PCIE|\d+GB)", board.name, maxsplit=1, flags=re.I)[0]


def _variant(card: Gpu, suffix: str, name: str, total: int, source: str, *, estimated: bool, **more: object) -> Gpu:
    """`card` with another device total (a memory-modified board, a unified-memory share, a MIG instance): its own
    key and name, no catalog aliases or GFD label, and the total's source (marked estimated when it is one)."""
    return replace(
        card,
        key=f"{card.key}-{suffix}",
        name=name,
        total_bytes=total,
        aliases=(),
        gfd_product_label=None,
        estimated=(*card.estimated, "memory.cuda_total_mib") if estimated else card.estimated,
        sources={**card.sources, "memory.cuda_total_mib": source},
        **more,  # type: ignore[arg-type]
    )


def modified_card(stock: Gpu, memory_gb: float, memory_mib: int | None = None) -> Gpu:
    """A memory-modified board: the stock chip; the total a tool or log printed decides, and without one the
    written size at the stock board's ratio of CUDA total to marketed size (marked estimated: an RTX 4090 48 GB
    printed 47.37 GiB where this gives 47.97, field3 H030)."""
    ratio = stock.total_bytes / ((stock.marketed_gb or memory_gb) * GiB)
    total = memory_mib * MiB if memory_mib else int(memory_gb * GiB * ratio) // MiB * MiB
    how = (
        "as the tool reported it"
        if memory_mib
        else (
            f"ESTIMATE: {memory_gb:g} GB at {stock.key}'s CUDA total per marketed GB; the total a log prints decides "
            "(give --gpu-memory-gib or explain --log)"
        )
    )
    return _variant(
        stock,
        f"{memory_gb:g}g",
        f"{stock.name} (modified, {memory_gb:g} GB)",
        total,
        f"a memory-modified {stock.name}: {how}",
        estimated=not memory_mib,
        marketed_gb=memory_gb,
    )


_MIG_PROFILE = re.compile(r"(?:^|[^\d])(\d)g\.(\d{1,4})gb\b")


def mig_slice(card: Gpu, profile: str) -> Gpu:
    """One MIG instance of `card` ("3g.40gb": 3 compute slices, 40 GB), the device CUDA and vLLM see. A100 and
    H100-class cards split their memory into 8 slices and a profile holds the share its name gives (NVIDIA
    Multi-Instance GPU User Guide, "Supported MIG Profiles"; "Each of the memory slice will contain 1/8th of the total
    vram", suraj.ind.in/posts), so the instance's total is the card's CUDA total x profile GB / marketed GB, an
    estimate: the driver keeps a little of each instance. Instances have no NVLink or P2P between them."""
    m = _MIG_PROFILE.search(profile)
    if not m or not card.marketed_gb:
        raise UnknownGpuError(
            f"MIG profile {quoted(profile)} on {card.name}: not a <compute>g.<memory>gb profile of a known size"
        )
    gb = int(m.group(2))
    if gb > card.marketed_gb + 0.5:
        raise UnknownGpuError(f"MIG profile {profile} is larger than {card.name}'s {card.marketed_gb:g} GB")
    return _variant(
        card,
        f"mig-{m.group(1)}g.{gb}gb",
        f"{card.name} MIG {m.group(1)}g.{gb}gb",
        int(card.total_bytes * gb / card.marketed_gb),
        f"ESTIMATE: MIG {m.group(1)}g.{gb}gb of {card.name}: its CUDA total x {gb}/{card.marketed_gb:g} (the "
        "profile's share of the card's memory slices)",
        estimated=True,
        interconnect="MIG instance (no NVLink)",
    )


def unified_share(apu: Gpu, memory_gb: float, memory_mib: int | None = None) -> Gpu:
    """An integrated GPU with the device total its memory setting gives it: the total a tool reported, else the
    written size in GiB (hipMemGetInfo reports the carve-out plus GTT limit: 'Total VRAM: 98304 MiB' with a 96 GiB
    GTT, noamsto/nix-amd-ai#42)."""
    total = memory_mib * MiB if memory_mib else int(memory_gb * 1024) * MiB
    how = "as the tool reported it" if memory_mib else f"{memory_gb:g} GiB as written with the name"
    return _variant(
        apu,
        f"{memory_gb:g}g",
        f"{apu.name} ({memory_gb:g} GB GPU share)",
        total,
        f"the GPU's share of the unified memory: {how}",
        estimated=False,
        share_as_written=True,
    )
