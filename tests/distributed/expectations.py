"""What hookgrad's results of each scenario must be (contracts/distributed.md §11.5), checked on
every backend. ``check(name, results_per_rank)`` raises AssertionError on a violation."""

from __future__ import annotations

import json

from tests.distributed._compare import assert_same

# Expected result on every rank (after JSON round-trip) where it is a fixed value.
FIXED = {
    "join_validation": "The join context manager requires at least one joinable",
    "integer_avg_fails": "result type Float can't be cast to the desired output type Long",
    "init_twice": "trying to initialize the default process group twice!",
    "no_trainable_params": ("DistributedDataParallel is not needed when a module doesn't have "
                            "any parameter that requires a gradient."),
    "construction_broadcast": {"ctor_buffer": 10.0, "fwd_buffer": 10.0,
                               "keys": ["module.0.bias", "module.0.weight"]},
    "frozen_param_excluded": {"frozen_grad_none": True, "buckets": [[1, 2, 3]]},
    "hook_sees_buckets_in_order": [[0, True, [[8, 6], [8], [4, 8], [4]]],
                                   [0, False, [[4], [4, 8]]], [1, True, [[8], [8, 6]]]],
    "buckets_default_caps_rebuild": [[[0, 1, 2, 3, 4, 5]], [[5, 4, 3, 2, 1, 0]],
                                     [[5, 4, 3, 2, 1, 0]]],
    "buckets_given_cap_and_find_unused": {
        "cap": [[[0, 1, 2, 3, 4, 5]], [[5, 4, 3, 2], [1, 0]], [[5, 4, 3, 2], [1, 0]]],
        "find_unused": [[[3, 4, 5], [0, 1, 2]]] * 3},
    "bucket_cap_mb_list_caps": [[[5], [1, 2, 3, 4], [0]], [[5, 4], [3, 2, 1, 0]],
                                [[5, 4], [3, 2, 1, 0]]],
    "static_graph_rebuilds": [[[0, 1, 2, 3, 4, 5]], [[0, 1, 2, 3, 4, 5]], [[5, 4, 3, 2, 1, 0]]],
    "unused_parameter_error": {"starts": True, "indices": "1"},
    "find_unused_grads": {"a": [[0.5, 0.5], [0.5, 0.5]], "b": [[0.5, 0.5], [0.5, 0.5]],
                          "b_unused_everywhere": True},
    "register_twice_and_validation": {
        "not_callable": "Communication hook must be callable.",
        "bad_bucket": "Communication hook: bucket annotation should be dist.GradBucket.",
        "bad_return": ("Communication hook: return annotation should be "
                       "torch.futures.Future[torch.Tensor]."),
        "twice": "register_comm_hook or register_builtin_comm_hook can only be called once."},
    "hook_returns_non_future": True,
    "hook_returns_wrong_size": ("Communication hook result has 3 elements, expected 92 (the "
                                "size of bucket 0)"),
    "hook_raises_propagates": "hook failed on purpose",
    "bf16_hook_close_to_mean": "float32",
    "collectives_out_of_order": (
        "collective mismatch: rank 0 called all_reduce of 3 elements, arg=0 (collective #{n}), "
        "rank 1 called broadcast of 3 elements, arg=0 (collective #{n}). Every rank of a group "
        "must issue the same collectives in the same order."),
}
# Expected per rank.
PER_RANK = {
    "join_throw_on_early_termination": [
        "Rank 0 exhausted all inputs.",
        "Detected at least one rank that exhausted inputs. Throwing across all ranks."],
    "mismatched_param_count": [
        "DDP expects same model across all ranks, but Rank 0 has 4 params, while rank 1 has "
        "inconsistent 6 params.",
        "DDP expects same model across all ranks, but Rank 1 has 6 params, while rank 0 has "
        "inconsistent 4 params."],
    "mismatched_param_shape": [
        "[0]: params[0] in this process with sizes [2, 3] appears not to match sizes of the "
        "same param in process 1.",
        "[1]: params[0] in this process with sizes [2, 4] appears not to match sizes of the "
        "same param in process 0."],
}


def _powersgd(results):
    r = results[0]
    assert r["ctor"].startswith("Expect `start_powerSGD_iter` > 1")
    assert r["ranks"][:2] == [[40, 40], [40, 40]]  # warm-up: exact, full rank
    assert r["ranks"][2:] == [[1, 1], [1, 1]]  # compressed: rank <= 1
    assert r["error_keys"] == [0] and r["p_sizes"] == [80] and r["iter"] == 4


def _collectives(results):
    for rank, r in enumerate(results):
        assert r["sum"] == [3.0, 4.0] and r["max"] == [1.0] and r["chained"] == [10.0]
        assert r["bcast"] == [1.0] * 3 and r["gather"] == [[0.0, 0.5], [1.0, 1.5]]
        assert r["objs"] == [{"rank": 0}, {"rank": 1}] and r["lst"] == [0, "x"]
        assert r["rank"] == rank and r["size"] == 2


# Results that legitimately differ across ranks (local gradients, rank numbers).
LOCAL = {"collectives_basics", "no_sync_accumulates", "noop_hook_is_local",
         "ddp_logging_data", "process_group_methods", "join_uneven_inputs",
         "join_divide_by_active_ranks", "composite_collectives",
         "functional_collectives_grads",  # joined ranks keep their last local grads
         "p2p_send_recv", "coalesced_and_single_collectives", "split_and_shrink_groups"}


def _functional(results):
    """Per-rank values differ (scatters, all-to-all); what is reduced or gathered agrees, and
    the all-reduce's gradient (its backward all-reduces) too. Values: test_oracle vs gloo."""
    first, second = results
    for k in (0, 1, 2):  # all_reduce, all_gather dim 0 and dim 1
        assert_same(first["outs"][k], second["outs"][k])
    assert_same(first["grads"][0], second["grads"][0])
    assert_same(first["others"], second["others"])


def _p2p(results):
    """What rank 0 sent arrives on rank 1 (and back), tags and order respected."""
    first, second = results
    assert first["sender"] == 1 and first["anyone"] == [3.0, 2.0, 1.0]
    assert second["tags"] == [[1.0, 2.0], [5.0, 6.0], [7.0, 8.0]]
    assert second["ints"] == [[1, 2, 3], [4, 5, 6]] and second["float64"] == [0.5, 0.25]
    assert second["objs_from"] == 0 and second["objs"] == ["'foo'", "12", "{1: 2}", "None"]
    assert second["batched_obj"] == [[1.5, 1.5, 1.5]] and second["pg_recv"] == [[4.0, 4.0], 0]
    assert first["ring"] == [2.0, 3.0] and second["ring"] == [0.0, 1.0]


def _coalesced(results):
    for rank, r in enumerate(results):
        assert r["coalesced"] == [[[[1.0, 2.0], [3.0, 4.0]], [0.0]],
                                  [[[2.0, 4.0], [6.0, 8.0]], [10.0]]]
        assert r["flat"] == [1.0, 2.0, 2.0, 4.0] and r["old"][0] == r["flat"]
        assert r["rs_sum"] == [[3.0, 6.0], [9.0, 12.0]][rank] and r["old"][1] == r["rs_sum"]
        assert r["stacked"].startswith("ProcessGroupGloo::allgather: invalid tensor size")


def _split(results):
    errors = {"empty_split": "ValueError", "dup_split": "ValueError", "not_list": "TypeError",
              "empty": "ValueError", "out_of_range": "ValueError", "all": "ValueError",
              "self": "RuntimeError", "flags": "ValueError"}
    for rank, r in enumerate(results):
        assert r["alone"] == [rank + 1.0, 1, [rank]] and r["both"] == [3.0, 2, "pair"]
        assert r["only0_is_none"] == (rank == 1) and r["errors"] == errors
    assert results[0]["shrunk"] == [5.0, 1, 0] and "shrunk" not in results[1]


CUSTOM = {"powersgd": _powersgd, "collectives_basics": _collectives,
          "functional_collectives_grads": _functional, "p2p_send_recv": _p2p,
          "coalesced_and_single_collectives": _coalesced, "split_and_shrink_groups": _split}


def check_launched(name, launched):
    """Every rank of a launched run finished scenario `name`, and the results are expected."""
    per_rank = [r[name] for r in launched]
    for rank, r in enumerate(per_rank):
        assert r["ok"], f"rank {rank}: {r['error']}\n{r.get('trace', '')}"
    check(name, [r["result"] for r in per_rank])


def check(name, results):
    results = json.loads(json.dumps(results, default=str))
    if name in CUSTOM:
        CUSTOM[name](results)
    elif name in PER_RANK:
        assert results == PER_RANK[name]
    elif name == "collectives_out_of_order":
        for r in results:
            n = r.split("(collective #")[1].split(")")[0]
            assert r == FIXED[name].format(n=n)
    elif name in FIXED:
        for r in results:
            assert_same(r, FIXED[name])
    if name == "no_sync_accumulates":
        assert all(r["calls_inside"] == 0 and r["calls_after"] == 1 for r in results)
    if name not in PER_RANK and name not in LOCAL:
        for r in results[1:]:  # reductions make every rank agree
            assert_same(r, results[0])
