"""Which data column each built-in reward cannot score without, checked against the config's data.

A reward whose column is missing returns None (or raises) on every row, and the
run trains on nothing: the recipe for code with its `columns:` mapping removed
passed `--dry-run`, `rewards probe` and `doctor --no-probe`, and only a sampling
probe noticed `code_execution returned None for 100% of samples`. This check
needs no model and no data load: it compares the columns the data section
delivers with the columns the rewards read.
"""
from __future__ import annotations

from grpokit.errors import ConfigError
from grpokit.rewards.registry import canonical

# reward -> (the keyword column it reads, the parameter that can supply it instead, how to map it).
_GOLD = ("answer", None, "set data.answer_column to the column with the gold answers")
NEEDS: dict[str, tuple[str, str | None, str]] = {
    **{name: _GOLD for name in ("exact_match", "fuzzy_match", "numeric_match", "numeric_closeness", "math_equivalence",
                                "multiple_choice", "contains_answer", "json_object_match", "json_field_match")},
    "code_execution": ("tests", None, "map your tests column onto it: data.columns: {test_list: tests}"),
    "json_schema": ("schema", "schema", "map your schema column onto it (data.columns: {json_schema: schema}) "
                                        "or give one schema for every row as params.schema"),
    "reference_overlap": ("reference", None, "map your reference column onto it: data.columns: {summary: reference}"),
}


def delivered_columns(data) -> set[str] | None:
    """The keyword columns rewards will receive, or None when only loading can tell."""
    from grpokit.data.config import parse_source
    from grpokit.data import synthetic

    delivered = set(data.columns.values())
    if data.answer_column:
        delivered.add("answer")
    src = parse_source(data.source)
    if src.kind == "synthetic":
        try:
            delivered |= set(synthetic.task(src.name).passthrough)
        except ConfigError:
            return None  # the data check reports an unknown task
    return delivered


def check_reward_columns(specs, where: str, data) -> None:
    """ConfigError naming the reward and the missing column, with the mapping to add."""
    delivered = delivered_columns(data)
    if delivered is None:
        return
    for i, spec in enumerate(specs):
        try:
            name = canonical(spec.name)
        except ValueError:
            continue  # unknown names are reported by the reward check
        if name == "citation":
            _check_sources(spec, i, where, data, delivered)
            _check_answer_holders(spec, i, where, delivered)
        need = NEEDS.get(name)
        if need is None:
            continue
        column, param, fix = need
        column = (spec.params or {}).get("column", column) if column == "answer" else column
        if column in delivered or (param and (spec.params or {}).get(param) is not None):
            continue
        given = ", ".join(sorted(delivered)) or "none"
        raise ConfigError(f"{where}[{i}] {name} reads the `{column}` column, which the data does not provide "
                          f"(it provides: {given}); {fix}")


def _check_sources(spec, i: int, where: str, data, delivered: set[str]) -> None:
    """citation runs without `sources` (it then only counts citations), so a missing column is no error,
    except when the file has a documents column that no mapping passes on: that is a forgotten line."""
    from grpokit.data.columns import guess_column
    from grpokit.data.config import parse_source
    from grpokit.data.files import columns_of

    src = parse_source(data.source)
    if "sources" in delivered or src.kind != "file" or (spec.params or {}).get("check_sources") is False:
        return
    found = guess_column(columns_of(src.name, src.fmt), "sources")
    if found is not None:
        raise ConfigError(f"{where}[{i}] citation checks citations against the `sources` column, and {data.source} has "
                          f"a `{found}` column that data.columns does not pass on; add data.columns: {{{found}: sources}} "
                          "(or set the reward's check_sources: false)")


def _check_answer_holders(spec, i: int, where: str, delivered: set[str]) -> None:
    """citation's answer_sources / answer_column name columns; one the data does not deliver fails every batch."""
    params = spec.params or {}
    for param in ("answer_sources", "answer_column"):
        column = params.get(param)
        if isinstance(column, str) and column and column not in delivered:
            given = ", ".join(sorted(delivered)) or "none"
            how = ("set data.answer_column" if column == "answer"
                   else f"map it in data.columns (data.columns: {{{column}: {column}}})")
            raise ConfigError(f"{where}[{i}] citation's {param} reads the `{column}` column, which the data does not "
                              f"provide (it provides: {given}); {how}, or leave {param} out")
