"""Reading the YAML files users write (regression suites, sweep specs): errors name the file,
the line and the key, and say what was expected; a misspelt name gets the nearest valid one.
Every check runs before anything is simulated."""

from __future__ import annotations

import difflib
import os
import re

import yaml


class SpecError(Exception):
    """Bad input in a spec file: `file:line: key: what was expected`. Exit status 2."""


class Mapping(dict):
    """A YAML mapping that remembers the line of each key (1-based) and its own."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.line = 0
        self.lines = {}

    def line_of(self, key) -> int:
        return self.lines.get(key, self.line)


class _Loader(yaml.SafeLoader):
    pass


def _construct_mapping(loader, node):
    loader.flatten_mapping(node)
    m = Mapping()
    m.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, (str, int, float, bool)):
            raise SpecError(f"line {key_node.start_mark.line + 1}: a key must be a plain name")
        if key in m:
            raise SpecError(f"line {key_node.start_mark.line + 1}: {key}: given twice")
        m[key] = loader.construct_object(value_node, deep=True)
        m.lines[key] = key_node.start_mark.line + 1
    return m


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class Spec:
    """A loaded file: `where(mapping, key, path)` makes the `file:line: path` prefix."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.dir = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isfile(self.path):
            raise SpecError(f"{self.path}: no such file")
        try:
            with open(self.path, encoding="utf-8") as f:
                self.root = yaml.load(f, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
            raise SpecError(f"{self.path}{line}: malformed YAML: {e.problem or e}") from e
        except SpecError as e:
            raise SpecError(f"{self.path}: {e}") from e
        except (yaml.YAMLError, UnicodeDecodeError) as e:
            raise SpecError(f"{self.path}: malformed YAML: {e}") from e
        if not isinstance(self.root, Mapping):
            raise SpecError(f"{self.path}: expected a mapping of keys at the top level")

    def error(self, mapping, key, path: str, what: str) -> SpecError:
        line = mapping.line_of(key) if isinstance(mapping, Mapping) else 0
        return SpecError(f"{self.path}{f':{line}' if line else ''}: {path}: {what}")

    def check_keys(self, mapping, allowed, path: str) -> None:
        """Every key of `mapping` is one of `allowed` (else: the nearest one)."""
        for key in mapping:
            if key not in allowed:
                raise self.error(mapping, key, f"{path}{key}" if path else str(key),
                                 "unknown key" + did_you_mean(str(key), allowed)
                                 + f" (known: {', '.join(allowed)})")

    def resolve(self, rel: str) -> str:
        """A path written in the file, relative to the file's folder."""
        return rel if os.path.isabs(rel) else os.path.normpath(os.path.join(self.dir, rel))


def did_you_mean(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def parse_fraction(value, what: str) -> float:
    """A non-negative relative amount: 0.01, "1%", "0.5 %"."""
    if isinstance(value, bool):
        raise ValueError(f"expected a fraction (0.01) or a percentage ('1%'), got {value!r}")
    if isinstance(value, (int, float)):
        v = float(value)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(%?)\s*", str(value))
        if not m:
            raise ValueError(f"expected a fraction (0.01) or a percentage ('1%'), got {value!r}")
        v = float(m.group(1)) / (100.0 if m.group(2) else 1.0)
    if not v >= 0:
        raise ValueError(f"{what} must not be negative, got {value!r}")
    return v


def parse_sets(spec: Spec, m, key: str, path: str | None = None) -> tuple:
    """A `set:` entry: a mapping {parameter: value} or a list of "key=value" strings."""
    value = m[key]
    if isinstance(value, Mapping):
        return tuple(set_text(k, v) for k, v in value.items())
    if isinstance(value, list) and all(isinstance(v, str) and "=" in v for v in value):
        return tuple(value)
    raise spec.error(m, key, path or key, "expected a mapping of parameters or a list of "
                     "key=value")


def plain(value):
    """A YAML value as the user meant it: YAML reads on/off as booleans; they stay on/off."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return value


def set_text(key: str, value) -> str:
    """`key=value` as `--set` takes it."""
    return f"{key}={plain(value)}"


def known_set_keys() -> list:
    """Every key `--set` takes: the chip's parameters and the compiler's options."""
    from ._core import core

    return [p["key"] for p in core.param_table()] + list(core.compiler_option_keys())


def check_set_key(key: str) -> str | None:
    """None when `key` is a `--set` key, else a message naming the nearest valid one."""
    known = known_set_keys()
    if key in known:
        return None
    return "unknown parameter" + did_you_mean(key, known) + " (`spyre-sim arch show` lists them)"
