"""Typed outputs by construction: a JSON schema built from a signature's typed output fields, handed to the LM
call so a model that decodes against it (llama.cpp's grammars, an OpenAI-compatible server's structured
outputs) can only write a reply that parses.

Why: DSPy's ``JSONAdapter`` asks for structured outputs from the signature alone, and only for models its
capability table knows. A small local model left to itself writes prose, echoes the schema, or opens a string
it never closes; decoded against the schema it writes one JSON object with every field, each enum field one of
its values. The schema here is that of DSPy's structured outputs (every property required, objects closed)
plus what the signature's types do not say but the call knows:

- **bounds a program declares** for a model it outputs or for a signature's own output fields (``bound``): a
  string's length, a list's items, and choices read from the call's own inputs (``QueryIR.scope_include``
  takes only the rooms this home has). A free string with no bound is where a small model loops: SmolLM2-135M
  wrote a plan and a judge's reason until the token cap, and a reply cut there does not parse;
- nothing else: a field without a declared bound is held only by the LM's token cap.

``TypedJSONAdapter`` is DSPy's ``JSONAdapter`` that passes this schema as ``response_format`` to an LM that
takes one; the reply still goes through DSPy's own parsing (``JSONAdapter.parse``). For an LM that does not
take a schema it is DSPy's ``JSONAdapter`` as it is.
"""

from __future__ import annotations

import json
import threading
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pydantic
from dspy.adapters.json_adapter import JSONAdapter

__all__ = ["Bound", "TypedJSONAdapter", "bound", "output_schema", "response_format"]


@dataclass(frozen=True)
class Bound:
    """What one field of an output model may hold when decoded against a schema (never checked on parse: the
    model's own validators still read what comes back).

    ``max_length``: characters of a string (of each item, for a list of strings); ``max_items``: items of a
    list; ``choices``: a function of the call's inputs giving the only values allowed (of the string, or of
    each item of the list), or None to leave the field open for that call."""

    max_length: int | None = None
    max_items: int | None = None
    choices: Callable[[dict[str, Any]], list | None] | None = None


_bounds: dict[type, dict[str, Bound]] = {}
_lock = threading.Lock()


def bound(model: type[pydantic.BaseModel], **fields: Bound) -> None:
    """Declare the bounds of ``model``'s fields for typed decoding (a program declares them beside the
    signature whose output the model is). ``model`` may be the signature itself, for its own output fields
    (a ``str`` or ``list[str]`` output: a free string a small model may write until the token cap)."""
    unknown = sorted(set(fields) - set(model.model_fields))
    if unknown:
        from ..errors import UnknownKey

        raise UnknownKey(f"{model.__name__} has no field {', '.join(unknown)}")
    with _lock:
        _bounds[model] = {**_bounds.get(model, {}), **fields}


def _models(annotation: Any) -> Iterator[type[pydantic.BaseModel]]:
    """The pydantic models an annotation holds (itself, its arguments, their fields), each once."""
    seen: set[type] = set()
    stack = [annotation]
    while stack:
        item = stack.pop()
        if isinstance(item, type) and issubclass(item, pydantic.BaseModel):
            if item in seen:
                continue
            seen.add(item)
            yield item
            stack.extend(field.annotation for field in item.model_fields.values())
        else:
            stack.extend(typing.get_args(item))


def output_schema(signature, inputs: dict[str, Any] | None = None) -> dict:
    """The JSON schema of ``signature``'s output fields as one object, shaped for strict structured outputs,
    with the declared bounds (``bound``) applied for these ``inputs``."""
    fields = {name: (field.annotation, ...) for name, field in signature.output_fields.items()}
    outputs = pydantic.create_model(f"{signature.__name__}Outputs", __config__=pydantic.ConfigDict(extra="forbid"),
                                    **fields)
    schema = outputs.model_json_schema()
    models = {model.__name__: model for field in signature.output_fields.values()
              for model in _models(field.annotation)}
    for name, definition in schema.get("$defs", {}).items():
        model = models.get(name)
        for field, limit in (_bounds.get(model, {}) if model is not None else {}).items():
            prop = definition.get("properties", {}).get(field)
            if prop is not None:
                definition["properties"][field] = _apply(prop, limit, inputs or {})
    for field, limit in _bounds.get(signature, {}).items():  # the signature's own output fields
        prop = schema.get("properties", {}).get(field)
        if prop is not None and field in signature.output_fields:
            schema["properties"][field] = _apply(prop, limit, inputs or {})
    return _strict(schema)


def _apply(prop: dict, limit: Bound, inputs: dict[str, Any]) -> dict:
    if isinstance(prop.get("anyOf"), list):  # an optional field: bound each kind of value but null
        return {**prop, "anyOf": [v if v.get("type") == "null" else _apply(v, limit, inputs) for v in prop["anyOf"]]}
    prop = dict(prop)
    target = prop
    if prop.get("type") == "array":
        if limit.max_items is not None:
            prop["maxItems"] = limit.max_items
        target = prop["items"] = dict(prop.get("items") or {})
    choices = limit.choices(inputs) if limit.choices is not None else None
    if choices:
        target["enum"] = list(dict.fromkeys(choices))
    elif limit.max_length is not None and target.get("type") == "string":
        target["maxLength"] = limit.max_length
    return prop


def _strict(schema: Any) -> Any:
    """Every property required and every object closed (strict structured outputs); ``default`` dropped
    (a decoded reply writes each field)."""
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "default":
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _strict(sub) for name, sub in value.items()}  # names, then schemas
        elif key in ("enum", "const", "required", "examples"):
            out[key] = value  # values, not schemas
        else:
            out[key] = _strict(value)
    if isinstance(out.get("properties"), dict):
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def response_format(signature, inputs: dict[str, Any] | None = None) -> dict:
    """``response_format`` for an OpenAI-style call: the signature's output schema, strict."""
    return {"type": "json_schema", "json_schema": {"name": f"{signature.__name__}Outputs", "strict": True,
                                                   "schema": output_schema(signature, inputs)}}


def schema_of(format_: Any) -> dict | None:
    """The JSON schema a ``response_format`` asks for, in OpenAI's shape (``json_schema.schema``) or lm15's
    (``schema`` beside ``type``); None for JSON without a schema, or no format."""
    if not isinstance(format_, dict):
        return None
    inner = format_.get("json_schema")
    schema = inner.get("schema") if isinstance(inner, dict) else format_.get("schema")
    return schema if isinstance(schema, dict) else None


def _open_ended(signature) -> bool:
    """An output field DSPy cannot describe as a closed object (``dict[str, Any]``, tool calls)."""
    from dspy.adapters.types.tool import ToolCalls

    return any(typing.get_origin(field.annotation) is dict or field.annotation == ToolCalls
               for field in signature.output_fields.values())


class TypedJSONAdapter(JSONAdapter):
    """DSPy's ``JSONAdapter`` that hands an LM taking a JSON schema (``lm.supports_response_schema`` with
    ``response_format`` among its parameters) the schema of ``output_schema`` for this call's inputs; any
    other LM gets ``JSONAdapter``'s own format. ``schema_always``: send the schema whatever the LM declares
    (an OpenAI-compatible server you know takes one: llama.cpp's server, vLLM, Ollama)."""

    def __init__(self, *args, schema_always: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.schema_always = schema_always

    def _typed(self, lm, lm_kwargs: dict, signature, inputs: dict) -> None:
        takes = self.schema_always or ("response_format" in lm.supported_params and lm.supports_response_schema)
        if takes and "response_format" not in lm_kwargs and not _open_ended(signature):
            lm_kwargs["response_format"] = response_format(signature, inputs)

    def _prepare_response_format(self, lm, lm_kwargs, signature):
        if "response_format" not in lm_kwargs:  # the typed schema was set for this call: keep it
            super()._prepare_response_format(lm, lm_kwargs, signature)

    def __call__(self, lm, lm_kwargs, signature, demos, inputs):
        lm_kwargs = dict(lm_kwargs)
        self._typed(lm, lm_kwargs, signature, inputs)
        return super().__call__(lm, lm_kwargs, signature, demos, inputs)

    async def acall(self, lm, lm_kwargs, signature, demos, inputs):
        lm_kwargs = dict(lm_kwargs)
        self._typed(lm, lm_kwargs, signature, inputs)
        return await super().acall(lm, lm_kwargs, signature, demos, inputs)


# DSPy wraps ``format`` and ``parse`` with its callbacks again in every adapter subclass
# (``Adapter.__init_subclass__``), so a subclass of JSONAdapter would report each parse twice to a callback (a reply
# that did not parse counted twice, by ``optimizer_calls`` too). This class changes neither: it keeps JSONAdapter's,
# reported as JSONAdapter reports them.
TypedJSONAdapter.format = JSONAdapter.format
TypedJSONAdapter.parse = JSONAdapter.parse


def dumps(schema: dict) -> str:
    """A schema as one canonical string (a cache key for the grammar built from it)."""
    return json.dumps(schema, sort_keys=True, ensure_ascii=False)


def adapter_for(lm) -> JSONAdapter | Any:
    """The adapter ``tracerag.configure`` sets when none is set: ``TypedJSONAdapter`` for an LM that decodes
    against a schema by construction (``typed_decoding = True``: the in-process model), else ``ChatAdapter``
    without the JSON fallback (an unparsable reply costs one call, then the stage's fallback)."""
    import dspy

    if getattr(lm, "typed_decoding", False):
        return TypedJSONAdapter()
    return dspy.ChatAdapter(use_json_adapter_fallback=False)
