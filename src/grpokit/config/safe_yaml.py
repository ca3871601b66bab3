"""YAML for files people and scripts hand us: bounded, and strict about duplicate keys.

PyYAML's safe loader still lets a few hundred bytes expand into billions of
nodes through aliases ("billion laughs"), builds a cycle from `&a [*a]`, and
recurses once per nesting level. Each of those ends in a hang or a traceback
further on, so `load` refuses them up front with a message that names the line.
A key written twice in one mapping is refused too: PyYAML keeps the last one
silently, which hides typos and merge mistakes in configs.
"""
from __future__ import annotations

import yaml

from grpokit.errors import ConfigError

MAX_BYTES = 1 << 20  # 1 MiB: the largest shipped recipe is ~2 KB
MAX_DEPTH = 64  # nesting levels; configs use 4
MAX_ALIASES = 1000  # `*name` references
MAX_NODES = 100_000  # nodes after expanding every alias


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that counts depth and aliases while composing, and refuses duplicate keys."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise _LimitError(f"line {mark.line + 1}: more than {MAX_ALIASES} aliases (*name); write the values out")
        self._depth += 1
        if self._depth > MAX_DEPTH:
            mark = self.peek_event().start_mark
            raise _LimitError(f"line {mark.line + 1}: nested more than {MAX_DEPTH} levels deep; flatten the structure")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *base` is meant to be overridden by the keys beside it
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                continue  # an unhashable key; the base constructor reports it
            if first is None:
                seen[key] = key_node.start_mark.line + 1
            else:
                raise _LimitError(f"line {key_node.start_mark.line + 1}: key {key!r} appears twice in one mapping "
                                  f"(first on line {first}); keep one")
        return super().construct_mapping(node, deep=deep)


class _LimitError(yaml.YAMLError):
    pass


def _expanded_size(node, depth: int, seen: dict[int, tuple[int, int]], open_nodes: set[int]) -> tuple[int, int]:
    """(values, levels) of the tree once aliases are expanded; a shared node counts each time it is used."""
    if id(node) in open_nodes:
        raise _LimitError(f"line {node.start_mark.line + 1}: an alias refers to a node that contains it; "
                          "a config cannot be recursive")
    size, height = seen.get(id(node), (0, 0))
    if not size:
        open_nodes.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = []
        size, height = 1, 1
        for child in children:
            if depth + 1 > MAX_DEPTH:
                raise _LimitError(f"line {child.start_mark.line + 1}: nested more than {MAX_DEPTH} levels deep "
                                  "(aliases included); flatten the structure")
            child_size, child_height = _expanded_size(child, depth + 1, seen, open_nodes)
            size, height = size + child_size, max(height, child_height + 1)
            if size > MAX_NODES:
                raise _LimitError(f"line {node.start_mark.line + 1}: expands to more than {MAX_NODES} values through "
                                  "aliases; write the values out instead of nesting aliases")
        open_nodes.discard(id(node))
        seen[id(node)] = (size, height)
    if depth + height - 1 > MAX_DEPTH:
        raise _LimitError(f"line {node.start_mark.line + 1}: nested more than {MAX_DEPTH} levels deep "
                          "(aliases included); flatten the structure")
    return size, height


def load(text: str | bytes, where: str):
    """The YAML document in `text`, or ConfigError naming `where` and what to change."""
    if len(text) > MAX_BYTES:
        raise ConfigError(f"{where} is {len(text)} bytes; a config is at most {MAX_BYTES} (is this the right file?)")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = text[: exc.start].count(b"\n") + 1
            raise ConfigError(f"{where}:{line}: not UTF-8 text ({exc.reason}); re-save the file as UTF-8") from None
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, 1, {}, set())
        return loader.construct_document(node)
    except _LimitError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where} is not valid YAML: {exc}") from None
    except RecursionError:  # deep nesting inside one flow scalar or a parser path we did not bound
        raise ConfigError(f"{where}: nested too deeply to read; flatten the structure") from None
    finally:
        loader.dispose()
