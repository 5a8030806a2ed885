"""DeepSeek-V4's KV cache as vLLM 0.23.0-0.26.0 packed it and priced a request for "Maximum concurrency"
(memory/kv_dsv4.py _slot_packing, KvLayout.concurrency_blocks), checked by hand and against field15 W004 / W013."""

from __future__ import annotations

from recommender.memory.engine import VllmVersion
from recommender.memory.kv_cache import KvLayout
from recommender.memory.kv_dsv4 import dsv4_layout
from recommender.sources.resolve import resolve_model
from recommender.units import GiB, cdiv

# Flash's padded pages up to 0.26: window 37,440; full group 37,440 (C4), 8,640 (indexer), 1,728 (C128); the C4 and
# C128 compressor states (32,832) padded to 37,440, the indexer's states (8,640) stay.
SWA22, SWA21, FULL, STATE4, STATE128 = 22 * 37_440, 21 * 37_440, 1_002_240, 21 * 37_440 + 21 * 8_640, 20 * 37_440


def _flash(*, slot_packing: bool) -> KvLayout:
    s = resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    assert s.compressed_attention is not None
    return dsv4_layout(s.compressed_attention, range(s.num_layers), slot_packing=slot_packing)


def _by_group(layout: KvLayout, values: list[int]) -> dict[tuple[int | None, int, int], int]:
    return {
        (g.window, g.block_size or layout.block_size, g.layers): v for g, v in zip(layout.groups, values, strict=True)
    }


def test_flash_block_is_one_slot_per_page_size() -> None:
    """_get_kv_cache_config_packed of 0.25.0: per page size, the most layers of that size in any group: 37,440 x 22
    (the larger window group; the C4 states padded to 37,440 are 21) + 8,640 x 21 + 1,728 x 20 = 1,039,680 bytes,
    where 0.27+ takes the widest group (1,002,240)."""
    legacy, current = _flash(slot_packing=True), _flash(slot_packing=False)
    assert legacy.bytes_per_block == 22 * 37_440 + 21 * 8_640 + 20 * 1_728 == 1_039_680
    assert current.bytes_per_block == 1_002_240
    assert legacy.first_group_page == FULL
    assert _by_group(legacy, list(legacy.group_pages)) == {
        (128, 64, 22): SWA22,
        (128, 64, 21): SWA21,
        (None, 256, 62): FULL,
        (8, 4, 42): STATE4,
        (128, 8, 20): STATE128,
    }
    assert current.group_pages == ()
    s = resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    assert s.compressed_attention is not None
    v022 = dsv4_layout(s.compressed_attention, range(s.num_layers), slot_packing=True, tuple_blocks=True)
    assert v022.bytes_per_block == 22 * (37_440 + 8_640 + 1_728) == 1_051_776  # 0.22.0: whole layer tuples


def test_flash_concurrency_in_pages_of_the_full_group() -> None:
    """4,096 tokens, 2,048 batched (W004's shape): blocks per group 2 x (cdiv(2,175, 64) + 1) = 35, cdiv(4,096, 256)
    = 16, cdiv(2,055, 4) + 1 = 515, cdiv(2,175, 8) + 1 = 273; priced in the full group's 1,002,240-byte pages:
    cdiv(35 x 823,680 + 35 x 786,240 + 16 x 1,002,240 + 515 x 967,680 + 273 x 748,800, 1,002,240) = 774, where the
    sum of blocks (0.27+) is 874. The admission check's blocks stay the sum."""
    legacy = _flash(slot_packing=True)
    by_hand = cdiv(35 * SWA22 + 35 * SWA21 + 16 * FULL + 515 * STATE4 + 273 * STATE128, FULL)
    assert by_hand == 774
    assert legacy.concurrency_blocks(4_096, 2_048, prefix_caching=False) == by_hand
    assert legacy.blocks_per_request(4_096, 2_048, prefix_caching=False) == 35 + 35 + 16 + 515 + 273 == 874
    assert _flash(slot_packing=False).concurrency_blocks(4_096, 2_048, prefix_caching=False) == 874


def test_field15_logs_tokens_from_their_own_kv() -> None:
    """From the KV each log prints: W004 (MI355X TP 8, 191.04 GiB, 4,096 tokens, 2,048 batched) logs 1,041,802
    tokens; W013 (0.23.0, H200 NVL TP 2, 32.08 GiB, 262,144 tokens, 8,192 batched) 2,175,276 tokens and 8.30x. The
    0.27+ arithmetic (1,002,240-byte blocks, the sum of blocks) gives W004 959,181 tokens (-7.9 %) and W013
    2,057,872 (-5.4 %)."""
    legacy = _flash(slot_packing=True)
    for kv_gib, length, batched, logged in ((191.04, 4_096, 2_048, 1_041_802), (32.08, 262_144, 8_192, 2_175_276)):
        blocks = int(kv_gib * GiB) // legacy.bytes_per_block
        concurrency = blocks / legacy.concurrency_blocks(length, batched, prefix_caching=False)
        assert abs(int(concurrency * length) / logged - 1) < 0.005  # the GiB printed to 2 decimals
    w013 = int(32.08 * GiB) // legacy.bytes_per_block / legacy.concurrency_blocks(262_144, 8_192, prefix_caching=False)
    assert round(w013, 2) == 8.30


def test_release_switches() -> None:
    """kv_cache_utils.py / kv_cache_interface.py of the wheels: the slot packing through 0.26.0 (0.27.0 takes the
    widest group), 0.22.0's block of whole layer tuples; the window's in-flight batches from 0.26.0 (0.24.0 and 0.25.0 reserve max_num_batched_tokens)."""
    assert VllmVersion(0, 26).dsv4_slot_packing and VllmVersion(0, 23).dsv4_slot_packing
    assert VllmVersion(0, 22).dsv4_tuple_blocks and not VllmVersion(0, 23).dsv4_tuple_blocks
    assert not VllmVersion(0, 27).dsv4_slot_packing
    assert not VllmVersion(0, 25).sliding_window_counts_in_flight_batches
    assert VllmVersion(0, 26).sliding_window_counts_in_flight_batches
