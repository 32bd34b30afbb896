"""``ProgramResult``: what a program's ``dspy.Prediction`` holds, typed and declared once.

Each program package has one result model (``commands/result.py``: ``CommandsResult``), a subclass of this one
that lists the fields its ``forward`` returns. The program builds its prediction through it
(``CommandsResult.prediction(candidates=..., ...)``), so a field the model does not declare, or one it lacks,
fails at once instead of drifting apart; the service answers with it (the HTTP response model and the MCP
tool's return type are the result model), and the program's evaluation reads a prediction through it
(``CommandsResult.of(pred)``).

Why the prediction is not validated on every call: its values stay the objects the program made (a
``Candidate``, a ``Hint``) and a call costs no validation. The service's JSON is validated against the model
where it is typed (the MCP tools), and tests/test_program_results.py validates a real prediction of each.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from .errors import TraceragError

__all__ = ["FieldsDisagree", "ProgramResult", "attribute_docstrings"]


class FieldsDisagree(TraceragError, TypeError):
    """A prediction built with fields its result model does not declare, or without some it does: a bug of the
    program, named here rather than left for a client to find."""


class ProgramResult(BaseModel):
    """The base of each program's result model: its fields are the prediction's, under the same names.

    A field a program gains later still reaches a client through a program built otherwise (an app's own
    subclass), so fields beyond the model are kept, never refused."""

    # the fields' docstrings are their descriptions (the service's schemas), read by ``attribute_docstrings``:
    # pydantic's own ``use_attribute_docstrings`` finds a class's source by scanning the path of every module
    # loaded (a thousand after DSPy), which cost a fresh process's first answer a tenth of a second
    model_config = ConfigDict(extra="allow")

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        docs = attribute_docstrings(cls)
        described = [name for name, field in cls.model_fields.items() if field.description is None and name in docs]
        for name in described:
            cls.model_fields[name].description = docs[name]
        if described:
            cls.model_rebuild(force=True)

    @classmethod
    def prediction(cls, **fields: Any):
        """The ``dspy.Prediction`` holding ``fields``, as given and in the order given, once their names are
        exactly this model's (``FieldsDisagree`` otherwise)."""
        import dspy  # imported on use: reading a service's models loads no DSPy

        return dspy.Prediction(**cls._named(fields))

    @classmethod
    def from_fields(cls, **fields: Any) -> Self:
        """This model holding ``fields`` as given (the objects the program made, not validated, like
        ``prediction``'s), once their names are exactly this model's: the answer of a program run without DSPy."""
        return cls.model_construct(**cls._named(fields))

    @classmethod
    def _named(cls, fields: dict[str, Any]) -> dict[str, Any]:
        declared = cls.model_fields.keys()
        if fields.keys() != declared:
            extra, missing = sorted(fields.keys() - declared), sorted(declared - fields.keys())
            raise FieldsDisagree(f"{cls.__name__}: the prediction's fields are not the model's "
                                 f"(not declared: {extra or 'none'}; missing: {missing or 'none'})")
        return fields

    @classmethod
    def of(cls, prediction) -> Self:
        """The prediction's fields as this model, typed for the reader, without a copy or a validation."""
        return cls.model_construct(**dict(prediction.items()))  # toDict() would turn its models into dicts


def attribute_docstrings(cls: type) -> dict[str, str]:
    """{field: the string literal right after its annotation in the class body}, as pydantic's
    ``use_attribute_docstrings`` reads them (cleaned like a docstring); {} when the source cannot be read."""
    import ast
    import inspect
    import textwrap

    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = next((node.body for node in ast.parse(source).body if isinstance(node, ast.ClassDef)), [])
    docs = {}
    for node, after in zip(body, body[1:], strict=False):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
            docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs
