"""Rewards shipped to spawned worker processes score exactly as they do in-process.

A spawn pool is the strictest carrier: the child is a fresh interpreter that
gets the reward only through pickle (as TRL's async rollout workers, a
DataLoader with the spawn start method, or Ray do). Rewards that hold worker
pools (math_equivalence, code_execution) start their own in the child.
"""
from __future__ import annotations

import multiprocessing

from judge_local import available as judge_available
from reward_cases import BUILTINS, CASES, SAMPLES, SERVER_REWARDS, as_messages, build, columns_for

from grpokit.rewards import get


def test_every_builtin_reward_scores_the_same_in_two_spawned_workers():
    # Judge rewards go too (their copies call the same local judge) wherever the judge server is installed.
    names = [n for n in BUILTINS if n not in SERVER_REWARDS or judge_available()]
    rewards = [build(name) for name in names]
    batches = [(SAMPLES, columns_for(CASES[name], len(SAMPLES))) for name in names]
    expected = [reward(completions, **columns) for reward, (completions, columns) in zip(rewards, batches)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pending = [pool.apply_async(reward, (completions,), columns)
                   for reward, (completions, columns) in zip(rewards, batches)]
        got = [job.get(timeout=240) for job in pending]
    assert dict(zip(names, got)) == dict(zip(names, expected))


def test_a_preset_and_its_chat_completions_travel_to_a_spawned_worker():
    # The shape a training run ships: several rewards, message-list completions, the gold column.
    funcs = [get("math_equivalence"), get("numeric_match"), get("strict_xml_format")]
    completions = as_messages(["<think>1+1</think>\n<answer>\n2\n</answer>", "\\boxed{3}", "no idea"])
    answer = ["2", "2", "Answer is forty two."]
    expected = [f(completions, answer=answer) for f in funcs]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        got = [pool.apply_async(f, (completions,), {"answer": answer}).get(timeout=240) for f in funcs]
    assert got == expected
    assert expected[0][2] is None and expected[1][2] is None  # the unreadable gold is unscored on both sides
