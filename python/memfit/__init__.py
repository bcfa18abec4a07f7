"""memfit: how much memory a model needs to load, serve and train, from Python.

Each function is one memfit command, run in this process by memfit's request layer (the same code
as the CLI and the server's JSON API, memfit::RunApi): its keyword arguments are the command's
flags in Python spelling (``--kv-dtype`` is ``kv_dtype=``), checked against memfit's option table,
and every default and assumption is the request layer's::

    import memfit
    r = memfit.inference("Qwen/Qwen3-8B", context=32768, batch=4, gpu="rtx4090", offline=True)
    r.to_dict()["total_bytes"]      # the API's JSON (docs/json.md): sizes are ints in bytes
    print(r)                        # the CLI's table

Errors raise memfit.Error (ModelNotFound, GatedRepo, Offline, BadInput, Unsupported) with the
CLI's one-line message. The Hub client reads HF_TOKEN, HF_HOME, HF_HUB_OFFLINE and HF_ENDPOINT
from the environment, as the CLI does. ``python3 -m memfit ...`` runs the CLI.
"""

import difflib as _difflib
import html as _html
import json as _json
import os as _os

from . import _memfit

__version__ = _memfit.__version__

__all__ = [
    "Error", "ModelNotFound", "GatedRepo", "Offline", "BadInput", "Unsupported", "Result",
    "estimate_memory", "inspect", "inference", "train", "fit", "gpus", "models", "options",
]


class Error(Exception):
    """A request memfit could not answer; str() is the CLI's one-line message.

    kind is the request layer's error kind ("bad_input", "usage", "not_found", "forbidden",
    "unavailable", "unsupported"), status the HTTP status the server would answer.
    """

    def __init__(self, message, kind="", status=0):
        super().__init__(message)
        self.kind = kind
        self.status = status


class ModelNotFound(Error, LookupError):
    """No such model, file or revision (locally, in the catalog, on the Hub)."""


class GatedRepo(Error):
    """Gated or private on the Hub: accepted terms and a token (token=, HF_TOKEN) would help."""


class Offline(Error):
    """Offline (offline=True, HF_HUB_OFFLINE) without the files cached, or the Hub unreachable."""


class BadInput(Error, ValueError):
    """A malformed or hostile file, impossible settings, or an unknown keyword or wrong value."""


class Unsupported(Error):
    """A valid input memfit cannot estimate (yet)."""


_ERRORS = {
    "not_found": ModelNotFound,
    "forbidden": GatedRepo,
    "unavailable": Offline,
    "bad_input": BadInput,
    "usage": BadInput,
    "unsupported": Unsupported,
}

_FUNCTIONS = {
    "estimate-memory": "estimate_memory", "inspect": "inspect", "inference": "inference",
    "train": "train", "fit": "fit", "gpus": "gpus", "models": "models",
}

_table = None


def options():
    """memfit's option table (memfit::ApiOptionsJson): {"commands": {command: [option, ...]}}."""
    global _table
    if _table is None:
        _table = _json.loads(_memfit.options_json())
    return _json.loads(_json.dumps(_table))


def _python_name(flag):
    return flag.replace("-", "_")


_keyword_cache = {}


def _keywords(command):
    """{python keyword: option} for a command: each option's name and aliases, snake_case."""
    if command not in _keyword_cache:
        options()
        table = {}
        for option in _table["commands"].get(command, []):
            for name in [option["name"]] + list(option.get("aliases") or []):
                if name.startswith("-") or len(name) == 1:
                    continue  # short flags (-c) have no Python spelling
                table[_python_name(name)] = option
        _keyword_cache[command] = table
    return _keyword_cache[command]


def _value(value):
    if isinstance(value, _os.PathLike):
        return _os.fspath(value)
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    return value


def _body(function, command, model, kwargs):
    body = {}
    if model is not None:
        body["model"] = _os.fspath(model) if isinstance(model, _os.PathLike) else model
    keywords = _keywords(command)
    for key, value in kwargs.items():
        option = keywords.get(key)
        if option is None:
            close = _difflib.get_close_matches(key, keywords.keys(), n=1)
            hint = f" (did you mean {close[0]}=?)" if close else ""
            raise BadInput(f"memfit.{function}: unknown keyword {key}={hint}", "usage", 400)
        if value is None:
            continue  # the request layer's default
        # The JSON key is the keyword as the user spelled it (an alias stays an alias), so the
        # request layer's "one option under two names" check still applies.
        flag = option["name"]
        for name in [option["name"]] + list(option.get("aliases") or []):
            if _python_name(name) == key:
                flag = name
        body[flag] = _value(value)
    return _json.dumps(body)


def _raise(status, text, kind):
    try:
        message = _json.loads(text).get("error", text)
    except ValueError:
        message = text
    raise _ERRORS.get(kind, Error)(message, kind, status)


def _run(function, command, model, kwargs):
    body = _body(function, command, model, kwargs)
    status, data, kind, fits = _memfit.run_api(command, body, "json")
    text = data.decode("utf-8", "replace")
    if kind:
        _raise(status, text, kind)
    return Result(command, body, text, fits)


class Result:
    """One answer: to_dict() is the API's JSON (docs/json.md), str() the CLI's table."""

    def __init__(self, command, request_json, text, fits=True):
        self.command = command
        self._request = request_json
        self._json = text
        self._fits = fits
        self._table = None

    @property
    def request(self):
        """The API body this answer is for (keys = the CLI's long flags, "model" = MODEL)."""
        return _json.loads(self._request)

    def to_dict(self):
        """Exactly the API's JSON, parsed (a fresh object each call); sizes are ints in bytes."""
        return _json.loads(self._json)

    def to_json(self, indent=None):
        """The API's JSON text (re-indented when indent is given)."""
        if indent is None:
            return self._json
        return _json.dumps(_json.loads(self._json), indent=indent)

    def __getitem__(self, key):
        return self.to_dict()[key]

    def _text(self, fmt):
        status, data, kind, _ = _memfit.run_api(self.command, self._request, fmt)
        text = data.decode("utf-8", "replace")
        if kind:
            _raise(status, text, kind)
        return text

    def __str__(self):
        if self._table is None:
            self._table = self._text("table")
        return self._table

    def to_markdown(self):
        """The CLI's --format markdown."""
        return self._text("markdown")

    def to_csv(self):
        """The CLI's --format csv."""
        return self._text("csv")

    @property
    def rows(self):
        """The answer's rows as dicts (accelerate's table, dtypes, GPUs, catalog models, ...)."""
        data = self.to_dict()
        if isinstance(data, list):
            return data
        for key in ("rows", "gpus", "models", "devices"):
            if isinstance(data.get(key), list):
                return data[key]
        return [data]

    @property
    def verdict(self):
        """"fits", "fits with offload", "does not fit", ... when the answer has one, else None."""
        data = self.to_dict()
        if not isinstance(data, dict):
            return None
        if isinstance(data.get("verdict"), str):
            return data["verdict"]
        if isinstance(data.get("fits"), bool):
            return "fits" if data["fits"] else "does not fit"
        rows = data.get("rows")
        if isinstance(rows, list) and rows and isinstance(rows[0], dict) and "verdict" in rows[0]:
            first = rows[0]
            where = " ".join(str(first[k]) for k in ("gpus", "gpu", "layout") if k in first)
            return f"{first['verdict']} ({where})" if where else first["verdict"]
        return None

    def _repr_html_(self):
        verdict = self.verdict
        head = ""
        if verdict is not None:
            color = "#1a7f37" if verdict.startswith("fits") else "#cf222e"
            head = (f'<p><b>memfit {_html.escape(self.command)}:</b> '
                    f'<span style="color:{color}"><b>{_html.escape(verdict)}</b></span></p>')
        return f'{head}<pre style="line-height:1.2">{_html.escape(str(self))}</pre>'

    def to_pandas(self):
        """The rows as a pandas DataFrame (needs pandas)."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("memfit: Result.to_pandas needs pandas (apt-get install "
                              "python3-pandas, or pip install pandas)") from e
        return pandas.json_normalize(self.rows)

    def __repr__(self):
        data = self.to_dict()
        model = data.get("model") if isinstance(data, dict) else None
        what = f" {model}" if model else ""
        return f"<memfit.Result {self.command}{what}>"


def _doc(function, command, summary):
    lines = [summary, "", "Keywords (the CLI's flags; None = the request layer's default):"]
    for option in _table["commands"].get(command, []):
        if option["name"] == "model":
            continue
        default = option.get("default")
        extra = "" if default in (None, "", [], False) else f" [default: {default}]"
        unit = f" ({option['unit']})" if option.get("unit") else ""
        lines.append(f"  {_python_name(option['name'])}: {option.get('type', '')}{unit}"
                     f"{extra} -- {option.get('help', '')}")
    lines += ["", f"Returns a Result; raises memfit.Error. The CLI: memfit {command} --help."]
    return "\n".join(lines)


def estimate_memory(model, **options):
    return _run("estimate_memory", "estimate-memory", model, options)


def inspect(model, **options):
    return _run("inspect", "inspect", model, options)


def inference(model, **options):
    return _run("inference", "inference", model, options)


def train(model, **options):
    return _run("train", "train", model, options)


def fit(model, **options):
    return _run("fit", "fit", model, options)


def gpus(**options):
    return _run("gpus", "gpus", None, options)


def models(**options):
    return _run("models", "models", None, options)


_SUMMARIES = {
    "estimate-memory": "Load size per dtype, largest block, training with AdamW "
                       "(accelerate=True: accelerate's table).",
    "inspect": "Tensors by module, dtype histogram, parameter count.",
    "inference": "Serving memory: weights, KV cache, activations, per GPU.",
    "train": "Training memory: model loaded, forward, backward, optimizer step.",
    "fit": "Whether and how the model fits the GPUs: verdict, device map, advice.",
    "gpus": "The GPU catalog.",
    "models": "The built-in model catalog.",
}


def _attach_docs():
    options()
    for command, name in _FUNCTIONS.items():
        globals()[name].__doc__ = _doc(name, command, _SUMMARIES[command])


_attach_docs()
