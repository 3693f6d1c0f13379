"""The PagedAttention lesson cites vLLM where its code mirrors it, quotes the metrics its lab
reads, and keeps vLLM's default block size. (Every citation and metric of every lesson is
checked against the pinned release by tests/test_vllm_claims.py.)"""

from block_pool import BLOCK_SIZE

from coursekit import ROOT, vllm_source
from coursekit.vllm_claims import claims


def quoted(kind: str) -> set[tuple[str, str]]:
    return {(claim.name, claim.value) for claim in claims(ROOT)
            if claim.kind == kind and "paged-attention" in claim.where}


def test_the_lesson_cites_vllm_where_it_mirrors_it():
    assert {
        ("vllm/v1/core/block_pool.py", "BlockPool.__init__"),
        ("vllm/v1/core/block_pool.py", "BlockPool.free_blocks"),
        ("vllm/v1/core/block_pool.py", "BlockPool.get_new_blocks"),
        ("vllm/v1/core/block_pool.py", "BlockPool.get_usage"),
        ("vllm/v1/core/kv_cache_utils.py", "get_num_blocks"),
        ("vllm/v1/kv_cache_interface.py", "AttentionSpec.real_page_size_bytes"),
        ("vllm/v1/worker/gpu/block_table.py", "_compute_slot_mappings_kernel"),
        ("vllm/v1/core/single_type_kv_cache_manager.py", "SingleTypeKVCacheManager.free"),
    } <= quoted("source")


def test_the_lesson_quotes_the_metrics_its_lab_reads():
    assert {("vllm:kv_cache_usage_perc", ""), ("vllm:cache_config_info", "")} <= quoted("metric")


def test_the_default_block_size_is_vllms(vllm_src):
    assert vllm_source.default(vllm_src, "block_size") == BLOCK_SIZE
