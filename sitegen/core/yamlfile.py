"""YAML as the author wrote it: site.yaml and front matter, with the line of every key.

Mappings become LineDicts, which remember their line and each key's. A file
cannot make the build eat memory or stack: aliases expanding to too many values
and nesting too deep are refused. What a text parses to is remembered in the
memo, so a build whose YAML did not change never imports PyYAML.
"""
from __future__ import annotations

import functools

from .errors import BuildError, Problem

MAX_VALUES = 100_000  # values a file stands for, aliases expanded: a "billion laughs" bomb stands for 10^9
MAX_DEPTH = 100


class LineDict(dict):
    line = 0
    key_lines: dict


def load_yaml(text: str, path: str, line_offset: int = 0, memo=None):
    """Parse YAML keeping line numbers; syntax errors become a Problem. With a Memo, what a text
    parses to is remembered (its lines are the text's own; `path` only names it in a Problem)."""
    if memo is not None:
        return _remembered(memo, text, line_offset, lambda: load_yaml(text, path, line_offset))
    import yaml
    loader, limit = _loader()
    try:
        return yaml.load(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + 1 + line_offset) if mark else line_offset or 1
        col = f", column {mark.column + 1}" if mark else ""
        what = "YAML" if isinstance(exc, limit) else "YAML syntax error"
        raise BuildError(Problem(path, line, f"{what}{col}: {exc.problem}")) from None
    except yaml.reader.ReaderError as exc:       # a character YAML does not allow
        line = text[: exc.position].count("\n") + 1 + line_offset
        raise BuildError(Problem(path, line, f"YAML cannot read character {exc.character!r}: "
                                             "remove it or quote the value")) from None


@functools.lru_cache(maxsize=None)
def _loader():
    """The safe loader whose mappings remember their lines, and the error it raises for a file
    beyond the limits (made on first use: PyYAML is imported only to parse)."""
    import yaml

    class Limit(yaml.MarkedYAMLError):
        """Valid YAML that no site file needs: aliases expanding to too many values, or nesting too deep."""

    class LineLoader(yaml.SafeLoader):
        depth = 0
        first_alias = None

        def compose_node(self, parent, index):
            mark = self.peek_event().start_mark
            if self.check_event(yaml.AliasEvent) and self.first_alias is None:
                self.first_alias = mark
            self.depth += 1
            try:
                if self.depth > MAX_DEPTH:
                    raise Limit(problem=f"nested more than {MAX_DEPTH} levels deep", problem_mark=mark)
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def compose_document(self):
            node = super().compose_document()
            if self.first_alias is not None and _expanded_size(node, {}) > MAX_VALUES:
                raise Limit(problem=f"its aliases (*name) stand for more than {MAX_VALUES} values: write the "
                                    "values out instead", problem_mark=self.first_alias)
            return node

    def construct_mapping(loader, node):
        loader.flatten_mapping(node)
        result = LineDict()
        result.line = node.start_mark.line + 1
        result.key_lines = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in result:
                raise yaml.MarkedYAMLError(problem=f"duplicate key {key!r}", problem_mark=key_node.start_mark)
            result[key] = loader.construct_object(value_node, deep=True)
            result.key_lines[key] = key_node.start_mark.line + 1
        return result

    LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return LineLoader, Limit


def _expanded_size(node, sizes: dict) -> int:
    """How many values a node stands for with every alias written out (each shared node counted once here)."""
    import yaml
    if id(node) not in sizes:
        sizes[id(node)] = 0         # a recursive alias counts as nothing more
        children = node.value if isinstance(node, yaml.SequenceNode) else (
            [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else [])
        sizes[id(node)] = min(1 + sum(_expanded_size(child, sizes) for child in children), MAX_VALUES + 1)
    return sizes[id(node)]


def load_generator_yaml(text: str, memo=None):
    """The generator's own YAML (vocabulary.yaml): no line numbers needed, libyaml's loader where
    there is one (3 ms -> 0.4 ms), remembered like an author's file."""
    if memo is not None:
        return _remembered(memo, text, "generator", lambda: load_generator_yaml(text))
    import yaml
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _remembered(memo, text: str, how, parse):
    """What `text` parses to (`how`: the line offset, or which loader), from the memo."""
    return memo.value("yaml", (text, how), parse)
