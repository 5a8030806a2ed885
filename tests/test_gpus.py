"""GPU catalog: coverage, sources for every figure, name resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.catalog import load_gpus
from recommender.errors import InputError, UnknownGpuError
from recommender.gpu_names import resolve_gpu
from recommender.hardware import custom_gpu
from recommender.units import GiB, MiB


def test_at_least_50_gpus_with_nvidia_and_amd() -> None:
    gpus = load_gpus()
    assert len(gpus) >= 50
    assert {"nvidia", "amd"} <= {g.vendor for g in gpus}
    for key in (
        "t4",
        "v100-16gb",
        "a10g",
        "a10",
        "l4",
        "l40s",
        "a100-40gb",
        "a100-80gb",
        "h100-pcie",
        "h100-sxm",
        "h100-nvl",
        "h200",
        "gh200",
        "b200",
        "rtx3090",
        "rtx4090",
        "rtx5090",
        "rtx-a6000",
        "rtx6000-ada",
        "rtx-pro-6000",
        "mi300x",
        "mi325x",
        # issue #11: cards people deploy that were missing
        "a800-80gb",
        "a800-40gb-pcie",
        "h800",
        "h20",
        "l20",
        "rtx5080",
        "rtx5070ti",
        "rtx4070ti-super",
        "rtx4060ti-16gb",
        "rtx-a4000",
        "rtx-a4500",
        "rtx-a5000",
        "rtx-a5500",
        "rtx-pro-6000-ws",
        "rtx-pro-6000-maxq",
        "mi250x",
        "mi355x",
        "a40",
        "gb10",
        # issue #11 item 4: names field logs and vLLM issues print (H11b's list)
        "v100-pcie-16gb",
        "v100s-pcie-32gb",
        "rtx3060",
        "rtx3090ti",
        "rtx2080ti",
        "rtx4090d",
        "rtx4000-ada",
        "quadro-rtx8000",
        "mi210",
        "p40",
        "p100-pcie-16gb",
        "v100-pcie-32gb",
        "h20-3e",
        "rtx5060ti-16gb",
        "rtx5060ti-8gb",
        "rx7900xtx",
        "radeon-pro-w7900",
        # issue #11 round 3 (H42): the cards people run vLLM on, as nvidia-smi, torch and rocm-smi name them
        "rtx3050",
        "rtx3060ti",
        "rtx3070",
        "rtx3070ti",
        "rtx3080-12gb",
        "rtx3070-laptop",
        "rtx3050-laptop",
        "rtx3050-6gb-laptop",
        "rtx4060",
        "rtx4070ti",
        "rtx4090-laptop",
        "rtx4080-laptop",
        "rtx4070-laptop",
        "rtx4060-laptop",
        "rtx4050-laptop",
        "rtx5070",
        "rtx5060",
        "rtx2060",
        "rtx2070",
        "rtx2080",
        "titan-rtx",
        "rtx5000-ada",
        "rtx4500-ada",
        "rtx2000-ada",
        "rtx-pro-5000",
        "rtx-pro-4500",
        "rtx-pro-4000",
        "rtx-a2000-12gb",
        "a16",
        "mi100",
        "mi300a",
        "rx9070xt",
        "rx9070",
        "radeon-ai-pro-r9700",
        "rx7900xt",
        "rx7900gre",
        "jetson-agx-orin-64gb",
        "jetson-thor",
        # issue #11 round 7 (H87): field7's MI50 (gfx906, the nlzy/vllm-gfx906 fork) and Strix Halo (gfx1151), and
        # M011's 4.00 GiB card (vllm-project/vllm#25837: an RTX A500 Laptop GPU under WSL 2)
        "mi50-16gb",
        "mi50-32gb",
        "mi60",
        "radeon-8060s",
        "radeon-8050s",
        "rtx-a500-laptop",
        "gtx1650",
        # issue #11 round 16: field16 X021 (RHOAI 3.4 on a GTX 1660 SUPER)
        "gtx1660-super",
    ):
        assert any(g.key == key for g in gpus), key


def _leaves(prefix: str, value: object) -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(f"{prefix}.{k}" if prefix else k, v)]
    return [prefix] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def test_every_number_names_its_source() -> None:
    import yaml

    from recommender.resources import profiles_dir

    for path in sorted((profiles_dir() / "gpus").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        sources = doc["sources"]
        for leaf in _leaves("", {k: v for k, v in doc.items() if k not in ("sources", "estimated")}):
            assert leaf in sources or leaf.split(".")[0] in sources, f"{path.name}: {leaf} has no source"
        for field in doc["estimated"]:
            assert "ESTIMATE" in sources[field], f"{path.name}: estimated {field} must say how"


@pytest.mark.parametrize("name", ["h100", "H100 80GB", "NVIDIA H100 80GB HBM3", "h100-sxm", "NVIDIA-H100-80GB-HBM3"])
def test_h100_aliases_resolve(name: str) -> None:
    gpu = resolve_gpu(name, load_gpus())
    assert gpu.key == "h100-sxm"
    # vLLM prints 79.19 GiB as the H100's total (calibration logs).
    assert round(gpu.total_bytes / GiB, 2) == 79.19


def test_unknown_gpu_names_closest_matches() -> None:
    with pytest.raises(UnknownGpuError, match=r"closest: .*h100"):
        resolve_gpu("h10", load_gpus())


def test_custom_card() -> None:
    gpu = custom_gpu(24)
    assert gpu.total_bytes == 24 * GiB
    with pytest.raises(InputError):
        custom_gpu(0)


# GPU names as tools print them and people write them, with where each spelling was seen.
REAL_WORLD_NAMES = [
    ("NVIDIA A100-SXM4-80GB", "a100-80gb", "vllm-project/vllm#17269 collect_env 'GPU 0: NVIDIA A100-SXM4-80GB'"),
    ("NVIDIA H100 80GB HBM3", "h100-sxm", "NVIDIA/nccl#1264 nvidia-smi"),
    ("NVIDIA GeForce RTX 4090", "rtx4090", "vllm-project/vllm#7553 nvidia-smi"),
    ("NVIDIA L40S", "l40s", "modal-labs/modal-client#2797 nvidia-smi totals"),
    ("Tesla T4", "t4", "torch.cuda.get_device_properties name (profiles/gpus/t4.yaml source)"),
    ("NVIDIA RTX 6000 Ada Generation", "rtx6000-ada", "torch device name (profiles/gpus/rtx6000-ada.yaml source)"),
    ("AMD Instinct MI300X", "mi300x", "rocm-smi/torch device name, e.g. Azure ND MI300X v5 notes"),
    ("AMD_Instinct_MI300X_OAM", "mi300x", "AMD node labeller amd.com/gpu.product-name (ROCm k8s-device-plugin docs)"),
    ("NVIDIA A10G", "a10g", "NVIDIA/DCGM#232 nvidia-smi"),
    ("NVIDIA_H200", "h200", "vLLM fused_moe config device_name (shared calibration record C001)"),
    ("NVIDIA-H100-80GB-HBM3", "h100-sxm", "GFD nvidia.com/gpu.product in public nodeSelectors"),
    ("NVIDIA-A100-SXM4-40GB", "a100-40gb", "GFD label, vllm-project/aibrix#2388"),
    ("Tesla-V100-SXM2-16GB", "v100-16gb", "GFD label, vllm-project/aibrix#2388"),
    ("RTX 3090 24GB", "rtx3090", "shared calibration records C004-C009 'gpu' field"),
    ("L40S 48GB", "l40s", "shared calibration record C002 'gpu' field"),
    ("L4 24GB", "l4", "issue #11 (names people write)"),
    ("H100 80GB HBM3", "h100-sxm", "issue #11 (names people write)"),
    ("RTX 4080 16GB", "rtx4080", "shared calibration record C000 'gpu' field"),
    ("A100-80GB", "a100-80gb", "shared calibration record C074 'gpu' field"),
    ("A100 80G", "a100-80gb", "hiyouga/LlamaFactory#4056 ('A100 80G')"),
    ("A100 40GB", "a100-40gb", "shared calibration record C010 'gpu' field"),
    ("h100-sxm", "h100-sxm", "this catalog's key"),
    ("H100", "h100-sxm", "documented default: the SXM card"),
    ("A100", "a100-80gb", "documented default: the 80 GB SXM card"),
    ("Tesla V100-PCIE-16GB", "v100-pcie-16gb", "NVIDIA/nccl-tests output 'device 0 [0x84] Tesla V100-PCIE-16GB'"),
    ("Tesla V100S-PCIE-32GB", "v100s-pcie-32gb", "nccl-tests output '[0x89] Tesla V100S-PCIE-32GB' (same file)"),
    ("TeslaV100S-PCIE-32GB", "v100s-pcie-32gb", "Slurm feature '-C \"TeslaV100S-PCIE-32GB\"' (public sbatch script)"),
    (
        "NVIDIAA100-SXM4-80GB",
        "a100-80gb",
        "Slurm GPU list 'NVIDIAA100-SXM4-80GB|TeslaV100-PCIE-32GB|...' (public script)",
    ),
    ("Tesla V100-SXM2-16GB", "v100-16gb", "the SXM2 board keeps its own entry (NVLink), GFD label above"),
    ("NVIDIA GeForce RTX 3060", "rtx3060", "torch device name 'NVIDIA GeForce RTX 3060' (profiles/gpus/rtx3060.yaml)"),
    ("NVIDIA GeForce RTX 3090 Ti", "rtx3090ti", "nvidia-smi/torch name (profiles/gpus/rtx3090ti.yaml source)"),
    ("GeForce RTX 2080 Ti", "rtx2080ti", "torch 1.x device name without the NVIDIA prefix (rtx2080ti.yaml source)"),
    ("NVIDIA GeForce RTX 2080 Ti", "rtx2080ti", "nvidia-smi name with current drivers"),
    ("NVIDIA GeForce RTX 4090 D", "rtx4090d", "nvidia-smi name 'NVIDIA GeForce RTX 4090 D, 24564 MiB'"),
    ("NVIDIA GeForce RTX 4090", "rtx4090", "the D model does not capture the plain 4090"),
    ("NVIDIA RTX 4000 Ada Generation", "rtx4000-ada", "RunPod gpuTypeId / nvidia-smi name (rtx4000-ada.yaml)"),
    ("Quadro RTX 8000", "quadro-rtx8000", "torch device name (quadro-rtx8000.yaml source)"),
    ("NVIDIA Quadro RTX 8000", "quadro-rtx8000", "torch device name with newer drivers (same source)"),
    ("AMD Instinct MI210", "mi210", "rocm-smi / torch device name on ROCm"),
    ("Tesla P40", "p40", "nvidia-smi '|   0  Tesla P40           Off  |' (p40.yaml source)"),
    ("Tesla P100-PCIE-16GB", "p100-pcie-16gb", "torch device name on Colab (p100-pcie-16gb.yaml source)"),
    ("TeslaV100-PCIE-32GB", "v100-pcie-32gb", "Slurm GPU list '...|TeslaV100-PCIE-32GB|...' (public script)"),
    ("NVIDIA H20-3e", "h20-3e", "nvidia-smi CSV check {'NVIDIA H20-3e'} (h20-3e.yaml source)"),
    ("H20 141GB", "h20-3e", "the 141 GB H20 as people write it"),
    ("NVIDIA H20", "h20", "the 96 GB board keeps the plain name"),
    ("RTX 5060 Ti 16GB", "rtx5060ti-16gb", "names people write (the nvidia-smi name is shared by 8 and 16 GB)"),
    ("Radeon RX 7900 XTX", "rx7900xtx", "torch device name on ROCm (rx7900xtx.yaml source)"),
    ("AMD Radeon RX 7900 XTX", "rx7900xtx", "rocm-smi / amd-smi marketing name"),
    ("AMD Radeon PRO W7900", "radeon-pro-w7900", "rocm-smi / amd-smi marketing name"),
    ("AMD Instinct MI50 32GB", "mi50-32gb", "field7 M009/M010 'dual Mi50 32GB' (nlzy/vllm-gfx906#10)"),
    ("MI50 16GB", "mi50-16gb", "AlphaMine-Tech/alpha-miner#5 'AMD Instinct MI50 ... VRAM: 16GB'"),
    ("Radeon Instinct MI60", "mi60", "ROCm/ROCm#4143 ('GPU: Radeon Instinct MI60')"),
    ("AMD Radeon 8060S", "radeon-8060s", "torch name='AMD Radeon 8060S' gcnArchName='gfx1151' (radeon-8060s.yaml)"),
    (
        "AMD Radeon 8060S Graphics",
        "radeon-8060s",
        "rocminfo 'Marketing Name: AMD Radeon 8060S Graphics' (antirez/ds4#475)",
    ),
    (
        "Radeon 8060S Graphics",
        "radeon-8060s",
        "amdgpu_top 'DeviceName: Radeon 8060S Graphics' (magnitudedev/magnitude#44)",
    ),
    ("AMD_Radeon_8060S", "radeon-8060s", "vLLM 0.33 platforms/rocm.py device name of 0x1586 (kernel config paths)"),
    ("NVIDIA RTX A500 Laptop GPU", "rtx-a500-laptop", "vllm-project/vllm#25837 'GPU: NVIDIA RTX A500 Laptop GPU'"),
    ("NVIDIA GeForce GTX 1650", "gtx1650", "torch _CudaDeviceProperties(name='NVIDIA GeForce GTX 1650', ...)"),
    ("NVIDIA GeForce GTX 1660 SUPER", "gtx1660-super", "nvidia-smi name (field16 X021)"),
]


@pytest.mark.parametrize(("name", "key", "seen"), REAL_WORLD_NAMES)
def test_real_world_names_resolve(name: str, key: str, seen: str) -> None:
    assert resolve_gpu(name, load_gpus()).key == key, seen


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("A100 PCIe", r"ambiguous: one of a100-40gb-pcie \(40 GB\), a100-80gb-pcie \(80 GB\)"),
        # a GeForce board with a larger size is a memory-modified card (tests/test_gpu_variants.py); an L4 is not
        ("L4 48GB", r"no 48 GB card named 'L4 48GB' in the catalog \(known: l4 \(24 GB\)\)"),
        # 'H100 96GB' is the H100 NVL (nvidia-smi 95830MiB, tests/test_gpu_variants.py); 120 GB is no H100
        ("H100 120GB", r"no 120 GB card .*known: h100-sxm \(80 GB\)"),
        ("NVIDIA A100-SXM4-40GB MIG 1g.5gb", r"MIG slice"),
        ("", r"empty GPU name"),
    ],
)
def test_names_that_do_not_identify_one_card(name: str, message: str) -> None:
    with pytest.raises(UnknownGpuError, match=message):
        resolve_gpu(name, load_gpus())


def test_every_name_in_the_catalog_resolves_to_its_own_card() -> None:
    catalog = load_gpus()
    for gpu in catalog:
        assert resolve_gpu(gpu.key, catalog).key == gpu.key
        for alias in gpu.aliases:
            assert resolve_gpu(alias, catalog).key == gpu.key, alias
        # nvidia-smi names and GFD labels may be shared by memory variants (RTX 4060 Ti 8/16 GB): the memory
        # total a tool reports beside them (GFD's nvidia.com/gpu.memory) tells them apart.
        mib = gpu.total_bytes // MiB
        for name in (gpu.name, *((gpu.gfd_product_label,) if gpu.gfd_product_label else ())):
            assert resolve_gpu(name, catalog, memory_mib=mib).key == gpu.key, name


def test_a_name_two_memory_variants_share_needs_the_memory() -> None:
    catalog = load_gpus()
    with pytest.raises(UnknownGpuError, match=r"ambiguous: one of rtx4060ti-8gb \(8 GB\), rtx4060ti-16gb \(16 GB\)"):
        resolve_gpu("NVIDIA GeForce RTX 4060 Ti", catalog)
    assert resolve_gpu("RTX 4060 Ti 16GB", catalog).key == "rtx4060ti-16gb"
    assert resolve_gpu("NVIDIA-GeForce-RTX-4060-Ti", catalog, memory_mib=8188).key == "rtx4060ti-8gb"
    # nvidia-smi prints 'NVIDIA GeForce RTX 5060 Ti, 16311 MiB' (profiles/gpus/rtx5060ti-16gb.yaml source).
    with pytest.raises(UnknownGpuError, match=r"ambiguous: one of rtx5060ti-8gb \(8 GB\), rtx5060ti-16gb \(16 GB\)"):
        resolve_gpu("NVIDIA GeForce RTX 5060 Ti", catalog)
    assert resolve_gpu("NVIDIA GeForce RTX 5060 Ti", catalog, memory_mib=16311).key == "rtx5060ti-16gb"


@pytest.mark.parametrize(
    ("key", "expected"),
    [("h100-sxm", (1024, 8192)), ("a100-80gb", (256, 2048)), ("a800-80gb", (1024, 8192)), ("gb10", (256, 2048))],
)
def test_batch_defaults_follow_vllm_device_checks(key: str, expected: tuple[int, int]) -> None:
    # vllm/engine/arg_utils.py get_batch_defaults: >= 70 GiB gets the large tier unless the device name holds
    # "a100" (an A800 does not) or the device is a GB10 (cc 12.1, DGX Spark).
    from recommender.memory.engine import DEFAULT_VERSION, VllmVersion, batch_defaults

    gpu = next(g for g in load_gpus() if g.key == key)
    assert batch_defaults(gpu, VllmVersion.parse(DEFAULT_VERSION)) == expected


# Dense tensor rates the performance model reads (profiles/gpus dense_tflops; sources checked above).
RATES = ("bf16", "fp16", "fp8", "int8", "fp4")
# Where INT8 is not at least twice the 16-bit rate: Blackwell Ultra cut INT8 (aiconfigurator b300_sxm.yaml, 153.5
# dense TOPS; gb300.yaml 165); CDNA 2 runs INT8 at its FP16 rate (MI250X datasheet, 383 TOPS and TFLOPS per package; MI210 181 and 181).
# RDNA 3 WMMA runs INT8 at its FP16 rate too (RX 7900 XTX/XT/GRE, Radeon PRO W7900), and so does CDNA 1 (MI100: 184.6).
# RDNA 3.5 (Strix Halo's Radeon 8060S/8050S) keeps RDNA 3's WMMA rates.
SLOW_INT8 = {"b300", "gb300", "mi250x", "mi210", "rx7900xtx", "rx7900xt", "rx7900gre", "radeon-pro-w7900", "mi100"}
SLOW_INT8 |= {"radeon-8060s", "radeon-8050s"}
# CDNA 1 runs BF16 at half its FP16 rate (MI100 datasheet: 92.3 vs 184.6 TFLOPS); every later card at one rate. Vega 20
# (gfx906: MI50, MI60) has packed FP16 at twice its FP32 rate and no BF16 arithmetic (converted to FP32): half too.
HALF_RATE_BF16 = {"mi100", "mi50-16gb", "mi50-32gb", "mi60"}
# Turing without tensor cores (TU117: GTX 1650): FP16 on the shader ALUs at 2x FP32, INT8 dp4a at 4x FP32, so INT8 is
# twice the FP16 rate, not the tensor cores' 4x of the GeForce boards.
NO_TENSOR_CORES = {"gtx1650", "gtx1660-super"}  # and TU116 (GTX 1660 SUPER)


def _rates(gpu_key: str) -> dict[str, float | None]:
    g = next(g for g in load_gpus() if g.key == gpu_key)
    return {r: getattr(g, f"{r}_tflops") for r in RATES}


@pytest.mark.parametrize("gpu", load_gpus(), ids=lambda g: g.key)
def test_every_card_has_a_bandwidth_and_a_16_bit_rate(gpu: object) -> None:
    from recommender.hardware import Gpu

    assert isinstance(gpu, Gpu)
    assert gpu.bandwidth_gbps and gpu.bandwidth_gbps > 0
    sixteen = gpu.bf16_tflops or gpu.fp16_tflops
    assert sixteen and sixteen > 0
    # BF16 and FP16 (FP32 accumulate) share one tensor-core rate wherever both are given; no BF16 before sm_80.
    if gpu.bf16_tflops and gpu.fp16_tflops:
        assert gpu.bf16_tflops == gpu.fp16_tflops / (2 if gpu.key in HALF_RATE_BF16 else 1)
    assert (gpu.bf16_tflops is not None) == gpu.supports_bf16
    # FP8/FP4 figures exactly where the hardware has them, at twice the next wider format (dense, FP32 accumulate);
    # GeForce Blackwell runs FP4 at 4x its FP32-accumulate FP8.
    assert (gpu.fp8_tflops is not None) == gpu.fp8
    assert (gpu.fp4_tflops is not None) == gpu.fp4
    if gpu.fp8_tflops:
        assert gpu.fp8_tflops == pytest.approx(2 * sixteen, rel=0.015)
    if gpu.fp4_tflops and gpu.fp8_tflops:
        assert gpu.fp4_tflops >= 2 * gpu.fp8_tflops * 0.999
    # INT8 tensor cores from Turing (sm_75) on, and on every Instinct card.
    cc = gpu.cc_major_minor
    assert (gpu.int8_tflops is not None) == (cc is None or cc >= (7, 5))
    if gpu.int8_tflops and gpu.key not in SLOW_INT8:
        assert gpu.int8_tflops >= 2 * sixteen * 0.99


# The A10G's tensor cores are GeForce-like: AWS's datasheet gives FP16 70 and TF32 35 TFLOPS on 80 GA102 SMs.
# Pascal GeForce (GTX 10 series, sm_61) has no tensor cores: the test above asserts it carries no INT8 figure.
@pytest.mark.parametrize(
    "gpu",
    [
        g
        for g in load_gpus()
        if ("GeForce" in g.name and (g.cc_major_minor or (0, 0)) >= (7, 5) and g.key not in NO_TENSOR_CORES)
        or g.key == "a10g"
    ],
    ids=lambda g: g.key,
)
def test_geforce_cards_carry_the_fp32_accumulate_rate(gpu: object) -> None:
    # GeForce runs FP16/BF16 with FP32 accumulate (what vLLM's kernels use) at half the FP16-accumulate rate NVIDIA
    # often quotes, while INT8 (INT32 accumulate) runs at the full rate: INT8 = 4 x BF16, as the GA102, AD102 and
    # GB202 whitepapers list (RTX 3090 284 vs 71, RTX 4090 660.6 vs 165.2). A 2x ratio would mean the quoted rate.
    from recommender.hardware import Gpu

    sixteen = gpu.bf16_tflops or gpu.fp16_tflops  # Turing (RTX 2080 Ti) has no BF16: its FP16 rate
    assert isinstance(gpu, Gpu) and gpu.int8_tflops and sixteen
    assert gpu.int8_tflops == pytest.approx(4 * sixteen, rel=0.01)


@pytest.mark.parametrize(
    ("key", "expected", "where"),
    [
        ("rtx3090", {"bf16": 71.0, "int8": 284}, "GA102 whitepaper appendix A"),
        ("rtx-a6000", {"bf16": 154.8, "int8": 309.7}, "GA102 whitepaper appendix C (full-rate FP32 accumulate)"),
        ("rtx4090", {"bf16": 165.2, "fp8": 330.3, "int8": 660.6}, "Ada whitepaper"),
        ("rtx4080", {"bf16": 97.5, "fp8": 194.9, "int8": 389.9}, "Ada whitepaper"),
        ("t4", {"bf16": None, "fp16": 65, "int8": 130}, "T4 datasheet"),
        ("v100-16gb", {"bf16": None, "fp16": 125, "int8": None}, "V100 datasheet (no INT8 tensor cores)"),
        ("h100-sxm", {"bf16": 989, "fp8": 1979, "int8": 1978}, "aiconfigurator h100_sxm.yaml"),
        ("b300", {"fp8": 4500, "int8": 153.5, "fp4": 14000}, "aiconfigurator b300_sxm.yaml"),
    ],
)
def test_hand_checked_rates(key: str, expected: dict[str, float | None], where: str) -> None:
    rates = _rates(key)
    assert {r: rates[r] for r in expected} == expected, where


def test_rtx4080_has_its_bandwidth() -> None:
    # 22.4 Gbps GDDR6X on a 256-bit bus (Ada whitepaper appendix): 22.4 * 256 / 8 GB/s.
    assert _rates("rtx4080")["bf16"] and next(g for g in load_gpus() if g.key == "rtx4080").bandwidth_gbps == 716.8


def test_gpus_command_shows_the_rates() -> None:
    import json

    from tests.conftest import invoke

    listed = {g["key"]: g for g in json.loads(invoke(["gpus", "--format", "json"]).stdout)}
    assert listed["t4"]["dense_tflops"] == {"bf16": None, "fp16": 65, "fp8": None, "int8": 130, "fp4": None}
    table = invoke(["gpus"]).stdout
    assert "16-bit TF" in table
    assert any(line.startswith("rtx5090 ") and " 209.5* " in line for line in table.splitlines())


GEMM_PEAKS = Path(__file__).parent / "data" / "gemm_peaks.yaml"
# B300's 14 PFLOPS dense FP4 is NVIDIA's figure (aiconfigurator b300_sxm.yaml) that no collected kernel approaches.
FAR_FROM_PEAK = {("b300", "fp4")}


def _gemm_data() -> dict[str, list[dict[str, object]]]:
    import yaml

    data: dict[str, list[dict[str, object]]] = yaml.safe_load(GEMM_PEAKS.read_text())
    return data


@pytest.mark.parametrize("point", _gemm_data()["aiconfigurator"], ids=lambda p: f"{p['gpu']}-{p['dtype']}")
def test_nvidia_measured_gemms_stay_below_the_dense_peaks(point: dict[str, object]) -> None:
    # NVIDIA's own GEMM measurements (aiconfigurator's collected tables) never exceed a dense peak, and reach at
    # least half of it: a 2:4-sparse or FP16-accumulate figure (2x) would fail the second.
    m, n, k, ms = (float(point[x]) for x in ("m", "n", "k", "latency_ms"))  # type: ignore[arg-type]
    measured = 2 * m * n * k / (ms * 1e-3) / 1e12
    assert measured == pytest.approx(float(point["tflops"]), abs=0.06)  # type: ignore[arg-type]
    _within_peak(str(point["gpu"]), str(point["dtype"]), measured)


@pytest.mark.parametrize(
    "point", _gemm_data()["torch_matmul"] + _gemm_data()["reported"], ids=lambda p: f"{p['gpu']}-{p['dtype']}"
)
def test_public_gemm_measurements_stay_below_the_dense_peaks(point: dict[str, object]) -> None:
    # torch.matmul on real cards: professional boards below their full-rate FP32-accumulate peak (the RTX A6000's
    # 123 TFLOPS rules out a GeForce-style half rate of 77), GeForce boards near their half rate.
    _within_peak(str(point["gpu"]), str(point["dtype"]), float(point["tflops"]))  # type: ignore[arg-type]


def _within_peak(key: str, dtype: str, measured: float) -> None:
    gpu = next(g for g in load_gpus() if g.key == key)
    peak = _rates(key)[dtype]
    assert peak is not None
    # GeForce boards boost above their rated clock (RTX 5090: 2407 MHz rated, ~2.8 GHz under load).
    assert measured <= peak * (1.2 if "GeForce" in gpu.name else 1.0)
    if (key, dtype) not in FAR_FROM_PEAK:
        assert measured >= 0.5 * peak


# vLLM documents "GPU: compute capability 7.5 or higher" from v0.21 (7.0 before) and has no check of its own: its
# kernels simply have no code for older cards. explain, check and recommend say so in one line instead of planning
# memory for a card that cannot run.
PASCAL_REFUSAL = (
    "The Tesla P40 has compute capability 6.1; vLLM supports compute capability 7.5 or higher: its prebuilt kernels "
    "have no code for this GPU (CUDA error: no kernel image is available for execution on the device)."
)


def test_cards_below_the_floor_are_refused_with_the_reason() -> None:
    import json

    from tests.conftest import invoke

    explained = json.loads(
        invoke(["explain", "Qwen/Qwen2.5-0.5B-Instruct", "--gpu", "Tesla P40", "--format", "json"]).stdout
    )
    assert not explained["fits"] and explained["error_kinds"] == ["gpu-below-compute-capability-floor"]
    assert explained["errors"] == [PASCAL_REFUSAL]
    checked = invoke(["check", "vllm serve Qwen/Qwen2.5-0.5B-Instruct", "--gpu", "p40"], exit_code=1)
    assert f"FAIL <argument> (command): {PASCAL_REFUSAL}" in checked.stdout
    refused = invoke(["recommend", "--model", "Qwen/Qwen2.5-0.5B-Instruct", "--gpu", "p40", "--concurrency", "4"], 3)
    assert (
        refused.stderr.strip()
        == f"Error: no configuration serves 4 concurrent requests on 8 x Tesla P40: {PASCAL_REFUSAL}"
    )


def test_the_floor_follows_the_vllm_release() -> None:
    from recommender.memory.engine import VllmVersion
    from recommender.memory.precision import gpu_refusal

    catalog = load_gpus()
    new, old = VllmVersion(0, 33), VllmVersion(0, 20)
    v100 = resolve_gpu("Tesla V100-PCIE-16GB", catalog)
    refused = gpu_refusal(v100, new)
    assert refused is not None and "compute capability 7.0; vLLM supports compute capability 7.5" in refused.message
    assert gpu_refusal(v100, old) is None  # Volta was documented as supported up to v0.14 at least
    assert gpu_refusal(resolve_gpu("GeForce RTX 2080 Ti", catalog), new) is None
    assert gpu_refusal(resolve_gpu("AMD Instinct MI210", catalog), new) is None  # gfx90a: no CUDA compute capability
    pascal = gpu_refusal(resolve_gpu("Tesla P100-PCIE-16GB", catalog), old)
    assert pascal is not None and "compute capability 6.0; vLLM supports compute capability 7.0" in pascal.message


# ROCm names a device by its offload architecture in vLLM's logs (clang's --offload-arch=gfx1201), torch's
# gcnArchName ('gfx942:sramecc+:xnack-') and kernel config paths: one card per architecture resolves, several are
# listed (with the memory given beside the architecture picking one).
@pytest.mark.parametrize(
    ("name", "key"),
    [("gfx1100 48GB", "radeon-pro-w7900"), ("gfx1201 32GB", "radeon-ai-pro-r9700")],
)
def test_an_offload_architecture_of_one_card_resolves(name: str, key: str) -> None:
    assert resolve_gpu(name, load_gpus()).key == key


def test_an_offload_architecture_of_several_cards_lists_them() -> None:
    catalog = load_gpus()
    with pytest.raises(
        UnknownGpuError, match=r"offload architecture gfx942 of several cards: one of .*mi300x \(192 GB\)"
    ):
        resolve_gpu("gfx942:sramecc+:xnack-", catalog)
    assert resolve_gpu("gfx942:sramecc+:xnack-", catalog, memory_mib=196592).key == "mi300x"
    # gfx950 is the MI350X and the MI355X (one chip, 2.2 and 2.4 GHz): alike in memory, not in rate
    with pytest.raises(UnknownGpuError, match=r"gfx950 of several cards: one of mi350x \(288 GB\), mi355x"):
        resolve_gpu("AMD gfx950 (ROCm)", catalog)
    with pytest.raises(UnknownGpuError, match=r"no catalog card has the offload architecture 'gfx1030'"):
        resolve_gpu("gfx1030", catalog)


# The new cards (issue #11, H42) by the names tools print, with where each spelling was seen.
NEW_CARD_NAMES = [
    (
        "NVIDIA GeForce RTX 3070",
        "rtx3070",
        "nvidia-smi CSV 'NVIDIA GeForce RTX 3070, 8192 MiB' (code index 70403350594)",
    ),
    ("NVIDIA GeForce RTX 3070 Laptop GPU", "rtx3070-laptop", "field record F057 (WSL2)"),
    ("NVIDIA GeForce RTX 3050 Laptop GPU", "rtx3050-laptop", "the 4 GB board keeps the plain nvidia-smi name"),
    ("NVIDIA GeForce RTX 3050 6GB Laptop GPU", "rtx3050-6gb-laptop", "nvidia-smi name of the 6 GB refresh"),
    ("NVIDIA GeForce RTX 3050 Laptop GPU 6GB", "rtx3050-6gb-laptop", "field record R005's card with its size"),
    ("NVIDIA GeForce RTX 4060 Laptop GPU", "rtx4060-laptop", "torch device name (code index 55598647577)"),
    ("NVIDIA-GeForce-RTX-4090-Laptop-GPU", "rtx4090-laptop", "GFD label form of the torch name"),
    ("RTX 4090 Laptop", "rtx4090-laptop", "as people write it"),
    ("NVIDIA GeForce RTX 4060", "rtx4060", "the desktop card keeps the plain name"),
    ("RTX 3080 12GB", "rtx3080-12gb", "names people write (nvidia-smi prints 'NVIDIA GeForce RTX 3080' for both)"),
    ("rtx3080", "rtx3080", "a catalog key names its card even where the nvidia-smi name is shared"),
    ("TITAN RTX", "titan-rtx", "torch 1.x device name without the NVIDIA prefix"),
    ("NVIDIA RTX 5000 Ada Generation", "rtx5000-ada", "nvidia-smi name, as the RTX 6000 Ada's"),
    ("NVIDIA RTX PRO 4500 Blackwell", "rtx-pro-4500", "nvidia-smi name, as the RTX PRO 6000's"),
    ("NVIDIA RTX PRO 5000 72GB Blackwell", "rtx-pro-5000-72gb", "the 72 GB board's name carries its memory"),
    ("NVIDIA RTX A2000 12GB", "rtx-a2000-12gb", "nvidia-smi name of the 12 GB board"),
    ("NVIDIA RTX A2000", "rtx-a2000", "nvidia-smi name of the 6 GB board"),
    ("AMD Radeon RX 9070 XT", "rx9070xt", "torch device name on ROCm 6.4 (code index 57024792846)"),
    ("AMD_Radeon_RX9070XT", "rx9070xt", "vLLM 0.33 platforms/rocm.py device name (kernel config paths)"),
    ("AMD_Radeon_R9700", "radeon-ai-pro-r9700", "vLLM 0.33 platforms/rocm.py device name"),
    ("AMD_Instinct_MI300A", "mi300a", "vLLM 0.33 platforms/rocm.py device name"),
    ("gfx1201 32GB", "radeon-ai-pro-r9700", "the one 32 GB gfx1201 card"),
    ("NVIDIA Thor", "jetson-thor", "torch device name on Jetson AGX Thor"),
]


@pytest.mark.parametrize(("name", "key", "seen"), NEW_CARD_NAMES)
def test_new_card_names_resolve(name: str, key: str, seen: str) -> None:
    assert resolve_gpu(name, load_gpus()).key == key, seen


@pytest.mark.parametrize(
    ("name", "mib", "message"),
    [
        ("NVIDIA GeForce RTX 3080", None, r"ambiguous: one of rtx3080 \(10 GB\), rtx3080-12gb \(12 GB\)"),
        # torch names every Jetson Orin module 'Orin' (code index 36890280458): the memory tells them apart.
        ("Orin", None, r"ambiguous: one of jetson-agx-orin-32gb \(32 GB\), jetson-agx-orin-64gb \(64 GB\)"),
        # field2 G019/G020 print only the offload architecture: three cards have it, two of 16 GB.
        (
            "AMD gfx1201",
            None,
            r"gfx1201 of several cards: one of .*rx9070 \(16 GB\).*rx9070xt \(16 GB\).*r9700 \(32 GB\)",
        ),
        ("AMD gfx1201", 16304, r"gfx1201 of several cards: one of rx9070 \(16 GB\), rx9070xt \(16 GB\)"),
    ],
)
def test_new_names_that_several_cards_share(name: str, mib: int | None, message: str) -> None:
    with pytest.raises(UnknownGpuError, match=message):
        resolve_gpu(name, load_gpus(), memory_mib=mib)
    assert resolve_gpu("Orin", load_gpus(), memory_mib=30622).key == "jetson-agx-orin-32gb"


def test_a_logged_total_of_two_alike_cards_resolves_to_the_family() -> None:
    from recommender.gpu_totals import resolve_total

    # field2 G020 (gfx1201) prints 'total capacity of 15.92 GiB': the RX 9070 and 9070 XT, alike for the memory model.
    match = resolve_total(15.92, load_gpus(), vendor="amd", arch="gfx1201")
    assert {g.key for g in match.cards} == {"rx9070", "rx9070xt"}
    # field3 H021 prints 7.65 GiB: the 8 GB Ada cards (an RTX 4060 Laptop GPU prints it), all alike.
    h021 = resolve_total(7.65, load_gpus(), vendor="nvidia")
    assert "rtx4060-laptop" in {g.key for g in h021.cards}
    assert {g.compute_capability for g in h021.cards} == {"8.9"}


def test_the_gfx906_boards_share_one_rocminfo_name() -> None:
    # rocminfo (and torch on older ROCm) names every gfx906 Instinct board 'AMD Instinct MI60 / MI50'
    # (lamikr/rocm_sdk_builder#180); the memory beside it tells the 16 GB MI50 from the 32 GB boards, and the two
    # 32 GB boards (same memory, 60 or 64 CUs) are listed, not guessed. ROCm 6.3+ says 'AMD Radeon Graphics'
    # (ROCm/ROCm#4143): the offload architecture and the memory decide.
    catalog = load_gpus()
    assert resolve_gpu("AMD Instinct MI60 / MI50", catalog, memory_mib=16368).key == "mi50-16gb"
    with pytest.raises(UnknownGpuError, match=r"ambiguous: one of mi50-32gb \(32 GB\), mi60 \(32 GB\)"):
        resolve_gpu("AMD Instinct MI60 / MI50", catalog, memory_mib=32752)
    with pytest.raises(UnknownGpuError, match=r"ambiguous: one of mi50-16gb \(16 GB\), mi50-32gb \(32 GB\)"):
        resolve_gpu("AMD Instinct MI50", catalog)
    assert resolve_gpu("gfx906:sramecc+:xnack-", catalog, memory_mib=16368).key == "mi50-16gb"
    # the MI60's 32 GiB pool: rocminfo 'Size: 33538048(0x1ffc000) KB' (ROCm/ROCm#4143)
    assert next(g for g in catalog if g.key == "mi60").total_bytes == 33538048 * 1024
    # a slash between names no card carries is still an unknown GPU
    with pytest.raises(UnknownGpuError, match=r"unknown GPU"):
        resolve_gpu("Foo 1 / Bar 2", catalog)


def test_strix_halo_total_is_the_gpu_share_of_the_machine() -> None:
    # The Radeon 8060S's device total is what the BIOS carve-out and GTT limit give it: 64 GiB by default (torch
    # total_memory=68719476736), a written size up to the machine's 128 GB is that share, larger is refused.
    catalog = load_gpus()
    card = resolve_gpu("AMD Radeon 8060S", catalog)
    assert card.unified_memory and card.total_bytes == 64 * GiB and card.max_per_node == 1
    share = resolve_gpu("Radeon 8060S 96GB", catalog)
    assert (share.key, share.total_bytes, share.compute_capability) == ("radeon-8060s-96g", 96 * GiB, "gfx1151")
    assert resolve_gpu("Radeon 8060S 64GB", catalog).key == "radeon-8060s"
    with pytest.raises(UnknownGpuError, match=r"no 200 GB card named"):
        resolve_gpu("Radeon 8060S 200GB", catalog)
    # a size on a discrete card is still its marketed size, never a share
    with pytest.raises(UnknownGpuError, match=r"no 12 GB card named"):
        resolve_gpu("AMD Radeon RX 7900 XTX 12GB", catalog)
    with pytest.raises(UnknownGpuError, match=r"offload architecture gfx1151 of several cards"):
        resolve_gpu("gfx1151", catalog)


def test_quadro_rtx_6000_is_a_24_gb_turing_board() -> None:
    """nvidia-smi prints 'Quadro RTX 6000, 24576 MiB' (compute capability 7.5); the board is the TITAN RTX's TU102
    with 24 GB, so the memory model reads the same figures for both, and the RTX 6000 Ada is a different card."""
    from recommender.catalog import load_gpus
    from recommender.gpu_names import resolve_gpu

    cards = load_gpus()
    quadro, titan = resolve_gpu("Quadro RTX 6000", cards), resolve_gpu("NVIDIA TITAN RTX", cards)
    assert quadro.key == "quadro-rtx6000" and quadro.compute_capability == "7.5" and not quadro.fp8
    assert quadro.smi_total_mib == 24576 and quadro.total_bytes == titan.total_bytes == 24331 * 2**20
    assert resolve_gpu("NVIDIA RTX 6000 Ada Generation", cards).key == "rtx6000-ada"
