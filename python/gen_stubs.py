"""Writes memfit/__init__.pyi from memfit's option table (memfit::ApiOptionsJson), at build time.

Each command's keywords, their types, choices and defaults come from the same table as the CLI's
flags and the API's JSON keys, so the stubs cannot drift from them.
Usage: PYTHONPATH=<build>/python python3 python/gen_stubs.py OUTPUT
"""

import json
import keyword
import os
import sys

# This script sits beside the package's sources (python/memfit): import the built one instead.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]
from memfit import _memfit  # noqa: E402

FUNCTIONS = [("estimate-memory", "estimate_memory"), ("inspect", "inspect"),
             ("inference", "inference"), ("train", "train"), ("fit", "fit"), ("gpus", "gpus"),
             ("models", "models")]

TYPES = {
    "count": "int",
    "number": "float",
    "text": "str",
    "flag": "bool",
    "list": "Sequence[str] | str",
    "size": "str | int",
    "gpu": "str | Sequence[str]",
    "gpus": "int | str",
    "model": "str | PathLike[str]",
}

HEADER = '''# memfit's type stubs, written by python/gen_stubs.py from the option table at build time.
# Do not edit: the keywords are the CLI's flags (memfit <command> --help), snake_case.
from os import PathLike
from typing import Any, Literal, Sequence

__version__: str

class Error(Exception):
    kind: str
    status: int
    def __init__(self, message: str, kind: str = ..., status: int = ...) -> None: ...

class ModelNotFound(Error, LookupError): ...
class GatedRepo(Error): ...
class Offline(Error): ...
class BadInput(Error, ValueError): ...
class Unsupported(Error): ...

class Result:
    command: str
    @property
    def request(self) -> dict[str, Any]: ...
    def to_dict(self) -> Any: ...
    def to_json(self, indent: int | None = ...) -> str: ...
    def to_markdown(self) -> str: ...
    def to_csv(self) -> str: ...
    def to_pandas(self) -> Any: ...
    @property
    def rows(self) -> list[dict[str, Any]]: ...
    @property
    def verdict(self) -> str | None: ...
    def __getitem__(self, key: str) -> Any: ...
    def _repr_html_(self) -> str: ...

def options() -> dict[str, Any]: ...
'''


def annotation(option):
    kind = option.get("type", "text")
    choices = option.get("choices") or []
    if choices and kind in ("text", "list"):
        literal = "Literal[" + ", ".join(json.dumps(c) for c in choices) + "]"
        return f"Sequence[{literal}] | {literal}" if kind == "list" else literal
    return TYPES.get(kind, "Any")


def comment(option):
    parts = []
    if option.get("unit"):
        parts.append(option["unit"])
    default = option.get("default")
    if default not in (None, "", [], False):
        parts.append(f"default {json.dumps(default)}")
    help_text = " ".join(str(option.get("help", "")).split())
    if help_text:
        parts.append(help_text)
    text = "; ".join(parts)
    return (text[:150] + "...") if len(text) > 150 else text


def function_stub(command, name, options):
    lines = [f"def {name}("]
    if command not in ("gpus", "models"):
        lines.append("    model: str | PathLike[str],")
    lines.append("    *,")
    seen = set()
    for option in options:
        if option["name"] == "model":
            continue
        keyword_name = option["name"].replace("-", "_")
        if keyword.iskeyword(keyword_name) or not keyword_name.isidentifier():
            continue
        if keyword_name in seen:
            continue
        seen.add(keyword_name)
        note = comment(option)
        note = f"  # {note}" if note else ""
        lines.append(f"    {keyword_name}: {annotation(option)} | None = ...,{note}")
    lines.append(") -> Result: ...")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_stubs.py OUTPUT")
    table = json.loads(_memfit.options_json())["commands"]
    parts = [HEADER]
    for command, name in FUNCTIONS:
        if command not in table:
            sys.exit(f"gen_stubs.py: the option table has no command {command}")
        parts.append(function_stub(command, name, table[command]))
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write("\n\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
