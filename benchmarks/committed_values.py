"""Do the structured-output and knowledge-base recipes pay values, or only their look? (issue 34)

On the shipped recipes' own data rows, with their own rewards and weights:
- json-output (20 rows of synthetic:json): the weighted total of the gold object against placeholder
  objects built from the prompt's key list (every type's empty value, and each constant);
- kb-qa-cpu (the 30 rows of configs/data/kb_sample.csv): fuzzy_match on every wrong number near the
  gold (off by one or ten, a digit added, dropped, changed or swapped, the point moved, the sign
  flipped), counted at or above the recipe's 0.8 threshold; and the citation reward on the right
  document, another real document, the whole range and the whole list.

    PYTHONPATH=src python -m benchmarks.committed_values [--holders CSV] [--out FILE]

`--holders` reads each row's answer-holding document from a CSV with an `answer_sources` column
(for running this on a checkout whose kb_sample.csv predates that column).
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _recipe(name: str, rows: int):
    from grpokit.config.run_config import load_config
    from grpokit.probe.config import build, data_rows

    cfg = load_config(str(ROOT / "configs" / name), [])
    funcs, weights = build(cfg.rewards, cfg.data.answer_format)
    return funcs, weights, data_rows(cfg, rows)


def _scores(funcs, completion: str, row: dict) -> list[float]:
    columns = {k: [v] for k, v in row.items() if k != "prompt"}
    return [f([completion], prompts=[row["prompt"]], **columns)[0] or 0.0 for f in funcs]


def _placeholders(schema: str) -> list[dict]:
    empty = {"string": "", "integer": 0, "number": 0, "boolean": False}
    types = {k: v.get("type", "string") for k, v in json.loads(schema)["properties"].items()}
    objects = [{k: empty.get(t) for k, t in types.items()}]
    objects += [{k: c for k in types} for c in ("", 0, False, None, "unknown")]
    return objects


def json_output() -> dict:
    funcs, weights, rows = _recipe("json-output.yaml", 20)
    honest, best_cheat, typed_cheat, equal = [], [], [], 0
    for row in rows:
        total = lambda text: sum(w * s for w, s in zip(weights, _scores(funcs, text, row)))  # noqa: E731
        h = total(row["answer"])
        cheats = [total(json.dumps(p)) for p in _placeholders(row["schema"])]
        honest.append(h)
        typed_cheat.append(cheats[0])
        best_cheat.append(max(cheats))
        equal += max(cheats) >= h
    return {"rewards": [f.__name__ for f in funcs], "weights": weights, "rows": len(rows), "max_total": sum(weights),
            "honest_median": statistics.median(honest), "typed_placeholder_median": statistics.median(typed_cheat),
            "best_placeholder_median": statistics.median(best_cheat), "best_placeholder_max": max(best_cheat),
            "rows_where_a_placeholder_earns_as_much_as_the_gold": equal}


def near_numbers(number: str) -> list[str]:
    value = int(number)
    out = {str(value + d) for d in (-10, -1, 1, 10)} | {str(value * 10), number + "0", "1" + number, "-" + number}
    if len(number) > 1:
        out |= {number[:i] + number[i + 1:] for i in range(len(number))}
        out |= {number[:i] + number[i + 1] + number[i] + number[i + 2:] for i in range(len(number) - 1)}
        out |= {number[:i] + "." + number[i:] for i in range(1, len(number))}
    out |= {number[:i] + d + number[i + 1:] for i in range(len(number)) for d in "0123456789"}
    return sorted(v for v in out if v != number and v.lstrip("-").lstrip("0") and float(v) != value)


def kb_qa(holders_csv: Path | None) -> dict:
    from grpokit.rewards import get

    funcs, _, rows = _recipe("kb-qa-cpu.yaml", 30)
    by_name = {f.__name__: f for f in funcs}
    fuzzy = by_name["fuzzy_match"]
    wrong, paid, paid_list = 0, 0, []
    for row in rows:
        gold = row["answer"]
        for number in re.findall(r"\d+", gold):
            for w in near_numbers(number):
                text = re.sub(rf"(?<!\d){number}(?!\d)", w, gold, count=1)
                s = fuzzy([f"<answer>{text}</answer>"], answer=[gold])[0] or 0.0
                wrong += 1
                paid += s >= 0.8
                if s >= 0.8 and len(paid_list) < 5:
                    paid_list.append(f"{text!r} for {gold!r}: {s:.3f}")
    plain = get("fuzzy_match")(["<answer>140 euros</answer>"], answer=["14 euros"])[0]

    with (holders_csv or ROOT / "configs" / "data" / "kb_sample.csv").open(encoding="utf-8") as f:
        holder = {r["answer"]: int(r["answer_sources"].split("|")[0]) for r in csv.DictReader(f)}
    citation = by_name["citation"]
    forms: dict[str, list[float]] = {"right [k]": [], "another real document": [], "[1-n] range": [],
                                     "[1, ..., n] list": [], "right + one more": []}
    for row in rows:
        k, n = holder[row["answer"]], len(row["sources"])
        other = 1 if k != 1 else 2
        columns = {c: [v] for c, v in row.items() if c != "prompt"}
        for label, cite in (("right [k]", f"[{k}]"), ("another real document", f"[{other}]"),
                            ("[1-n] range", f"[1-{n}]"), ("[1, ..., n] list", "[" + ", ".join(map(str, range(1, n + 1))) + "]"),
                            ("right + one more", f"[{k}, {other}]")):
            forms[label].append(citation([f"<answer>{row['answer']}</answer> {cite}"], **columns)[0] or 0.0)
    return {"rows": len(rows), "fuzzy_wrong_numbers": wrong, "fuzzy_wrong_numbers_at_or_above_0.8": paid, "fuzzy_examples_paid": paid_list,
            "fuzzy_140_for_14_euros_no_threshold": plain,
            "citation_mean": {label: round(statistics.mean(v), 3) for label, v in forms.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--holders", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    result = {"json_output": json_output(), "kb_qa": kb_qa(args.holders)}
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
