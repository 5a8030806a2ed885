"""The sustained GEMM fractions: measured / datasheet per card, class medians for the others, and where the
performance model applies them. Numbers are worked out by hand in the comments."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.perf.costs import engine_costs
from recommender.perf.params import Efficiency, PerfParams, SustainedGemm, gpu_class
from recommender.perf.predict import facts_for, startup
from recommender.perf.sustained import read_ceiling_table, sustained_table
from recommender.perf_profile import bundled_params, read_ceiling, sustained_gemm
from recommender.resources import profiles_dir
from recommender.sources.resolve import resolve_model

GPUS = load_gpus()


def _gpu(name: str):  # type: ignore[no-untyped-def]
    return resolve_gpu(name, GPUS)


def test_fractions_are_measured_over_datasheet_and_classes_take_the_median() -> None:
    rows = [("rtx4090", "bf16", 173.31), ("rtx3090", "bf16", 76.68), ("a100-80gb", "bf16", 264.53)]
    rows += [("l40s", "bf16", 269.15), ("l4", "bf16", 70.89), ("h100-pcie", "bf16", 495.93)]
    table = sustained_table(rows, GPUS)
    assert table.by_gpu["rtx4090"] == round(173.31 / 165.2, 4) == 1.0491  # boosts above its rated clock
    assert table.by_gpu["h100-pcie"] == round(495.93 / 756.5, 4) == 0.6556  # 350 W cap
    # ada (not GeForce): L40S 0.7434 and L4 0.5859 -> median 0.6646, what an L40 or RTX 6000 Ada takes
    assert table.by_class["ada"] == round((0.7434 + 0.5859) / 2, 4)
    assert table.fraction(_gpu("l40")) == table.by_class["ada"]
    assert table.fraction(_gpu("rtx 4080")) == table.by_class["ada-geforce"] == 1.0491
    # no Blackwell row: the median of the non-GeForce cards (L4 0.5859, H100 PCIe 0.6556, L40S 0.7434, A100 0.8479)
    assert table.fraction(_gpu("b200")) == table.default == round((0.6556 + 0.7434) / 2, 4)


def test_classes_split_geforce_boards_from_the_others() -> None:
    assert gpu_class(_gpu("rtx 3090")) == "ampere-geforce"
    assert gpu_class(_gpu("rtx a6000")) == "ampere"
    assert gpu_class(_gpu("h100")) == "hopper"
    assert gpu_class(_gpu("mi300x")) == "cdna"
    assert gpu_class(_gpu("mi60")) == "cdna"  # "AMD Instinct MI60": HBM2, a data-centre card
    assert gpu_class(_gpu("rx 7900 xtx")) == "cdna-radeon"  # RDNA 3, GDDR6
    assert gpu_class(_gpu("radeon pro w7900")) == "cdna-radeon"


def test_a_row_for_an_unknown_card_is_an_error() -> None:
    with pytest.raises(ValueError, match="no catalogued bf16 peak"):
        sustained_table([("no-such-gpu", "bf16", 100.0)], GPUS)


def test_the_bundled_rows_are_the_checked_public_measurements() -> None:
    # profiles/gemm_measured.yaml is the torch_matmul list tests/test_gpus.py checks against the peaks
    checked = yaml.safe_load((Path(__file__).parent / "data" / "gemm_peaks.yaml").read_text())["torch_matmul"]
    bundled = yaml.safe_load((profiles_dir() / "gemm_measured.yaml").read_text())["measured"]
    assert bundled == checked
    assert bundled_params().sustained == sustained_gemm()
    assert all(0.5 <= f <= 1.2 for f in sustained_gemm().by_gpu.values())


def test_the_fraction_scales_every_tensor_core_rate_and_nothing_else() -> None:
    m, g = resolve_model("Qwen/Qwen3-8B"), _gpu("h100 pcie")
    flags = EngineFlags(max_model_len=8192)
    facts = facts_for(m, g, flags, startup(m, g, flags, VllmVersion(0, 33)))
    plain = PerfParams()
    scaled = replace(plain, sustained=SustainedGemm({g.key: 0.5}))
    a, b = engine_costs(facts, g, plain), engine_costs(facts, g, scaled)
    assert b.dense_compute == pytest.approx(a.dense_compute / 2)
    assert b.expert_compute == pytest.approx(a.expert_compute / 2)
    assert b.attention_compute == pytest.approx(a.attention_compute / 2)
    assert (b.bandwidth, b.link_bandwidth, b.step_overhead) == (a.bandwidth, a.link_bandwidth, a.step_overhead)
    # the built-in defaults take the datasheet as it is: 756.5 TFLOPS x compute_efficiency 0.39
    assert a.dense_compute == pytest.approx(756.5e12 * 0.39)


def test_the_read_ceiling_is_measured_over_datasheet_bandwidth_per_card_and_class() -> None:
    rows = [("a100-80gb", 1800.0), ("a100-40gb", 1355.0), ("a800-80gb-pcie", 1727.486), ("rtx3090", 854.2)]
    table = read_ceiling_table(rows, GPUS)
    assert table.by_gpu["a100-80gb"] == round(1800 / 2039, 4) == 0.8828
    assert table.by_gpu["a100-40gb"] == round(1355 / 1555, 4) == 0.8714
    assert table.by_gpu["rtx3090"] == round(854.2 / 936, 4) == 0.9126
    # ampere (not GeForce): 0.8714, 0.8828, 0.8928 -> median 0.8828, what an A10G or RTX A6000 takes
    assert table.by_class == {"ampere": 0.8828, "ampere-geforce": 0.9126}
    assert table.fraction(_gpu("a10g")) == table.fraction(_gpu("rtx a6000")) == 0.8828
    assert table.fraction(_gpu("rtx 3070")) == 0.9126
    # a class without a measurement is not capped below the datasheet
    assert table.fraction(_gpu("h100")) == table.fraction(_gpu("rtx 4090")) == 1.0


def test_a_read_ceiling_row_must_name_a_catalogued_card_and_a_possible_fraction() -> None:
    with pytest.raises(ValueError, match="no catalogued bandwidth"):
        read_ceiling_table([("no-such-gpu", 1000.0)], GPUS)
    with pytest.raises(ValueError, match="measures 107% of its datasheet"):
        read_ceiling_table([("rtx3090", 1000.0)], GPUS)


def test_the_read_ceiling_caps_the_streams_and_local_calibration_applies_on_top() -> None:
    m, a100, h100 = resolve_model("Qwen/Qwen3-8B"), _gpu("a100"), _gpu("h100")
    flags = EngineFlags(max_model_len=8192)
    capped = replace(PerfParams(), read_ceiling=SustainedGemm({"a100-80gb": 0.8828}))
    fa = facts_for(m, a100, flags, startup(m, a100, flags, VllmVersion(0, 33)))
    # the default efficiency 0.95 streams above what an A100 measures: 2039 GB/s x 0.8828 instead
    assert engine_costs(fa, a100, PerfParams()).bandwidth == pytest.approx(2039e9 * 0.95)
    assert engine_costs(fa, a100, capped).bandwidth == pytest.approx(2039e9 * 0.8828)
    # an efficiency below the ceiling is left as it is
    low = replace(capped, bandwidth_efficiency=0.8)
    assert engine_costs(fa, a100, low).bandwidth == pytest.approx(2039e9 * 0.8)
    # the user's own calibration multiplies the capped figure
    local = capped.with_local("a100-80gb", Efficiency(bandwidth=1.05))
    assert engine_costs(fa, a100, local).bandwidth == pytest.approx(2039e9 * 0.8828 * 1.05)
    # cards without a row keep the fitted figure
    fh = facts_for(m, h100, flags, startup(m, h100, flags, VllmVersion(0, 33)))
    assert engine_costs(fh, h100, capped).bandwidth == engine_costs(fh, h100, PerfParams()).bandwidth


def test_the_bundled_read_ceiling_is_the_measured_file() -> None:
    rows = yaml.safe_load((profiles_dir() / "bandwidth_measured.yaml").read_text())["measured"]
    assert all(str(r["source"]).strip() for r in rows)  # every figure names where it came from
    assert bundled_params().read_ceiling == read_ceiling()
    assert read_ceiling().fraction(_gpu("a100")) == round(1800 / 2039, 4)


def test_the_mi300x_read_ceiling_is_its_measured_roofline_bandwidth() -> None:
    # ROCm/legacy-rocm-build#5070: the ROCm roofline tool measures 4.2 TB/s on an MI300X (datasheet 5.3 TB/s)
    rc = read_ceiling()
    assert rc.fraction(_gpu("mi300x")) == round(4200 / 5300, 4) == 0.7925
    # below the fitted CDNA figure (0.95 x 0.9162 = 0.870), so the cap binds: 5.3 TB/s x 0.7925 = 4.2 TB/s
    m, mi300x = resolve_model("Qwen/Qwen3-8B"), _gpu("mi300x")
    flags = EngineFlags(max_model_len=8192)
    f = facts_for(m, mi300x, flags, startup(m, mi300x, flags, VllmVersion(0, 33)))
    assert engine_costs(f, mi300x, bundled_params()).bandwidth == pytest.approx(5300e9 * 0.7925)
    # the other CDNA cards take the family's median (the MI300X's alone); NVIDIA's Hopper has no row
    assert rc.fraction(_gpu("mi325x")) == 0.7925
    assert rc.fraction(_gpu("h100")) == 1.0
    # a Radeon's GDDR6 is not an MI300X's HBM3: no cap until a Radeon is measured
    assert rc.fraction(_gpu("rx 7900 xtx")) == 1.0
