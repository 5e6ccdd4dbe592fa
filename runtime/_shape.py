"""``Shape`` with the constructor and ``array_shape`` parameters the xla_client API documents.

jaxlib's native ``Shape`` names the parameters ``dims``/``layout`` and accepts
only ``np.dtype`` instances; ``Shape`` here takes the documented ``dims_seq``/
``layout_seq``, any dtype-like value, and checks its arguments. It builds and
returns native ``Shape`` objects, and ``isinstance(native_shape, Shape)`` holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import _dtypes
from runtime._compat import native
from runtime._nesting import MAX_TUPLE_DEPTH, check_shape_text, tuple_depth
from runtime._validate import bad_type, bad_value


class _ShapeMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, native.Shape)

    def __getattr__(cls, name: str) -> Any:  # tuple_shape, scalar_shape, token_shape...
        return getattr(native.Shape, name)


def _ints(arg: str, value: Any, call: str, minimum: int) -> list[int]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise bad_type(arg, "a sequence of ints", value, call)
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise bad_value(arg, f"a sequence of ints >= {minimum}", value, call)
        out.append(int(v))
    return out


class Shape(metaclass=_ShapeMeta):
    """An XLA shape: element type, dimensions, layout (``xla_client.Shape``).

    ``Shape("f32[2,3]")`` parses XLA's shape syntax; tuples (``(f32[2], s32[])``)
    nested more than 64 deep (``runtime._nesting.MAX_TUPLE_DEPTH``; deeper text crashed
    jaxlib's parser) are a ValueError naming ``s``. Methods of the returned native
    object: ``dimensions()``, ``rank()``, ``is_array()``, ``is_tuple()``,
    ``element_type()``, ``numpy_dtype()``.
    """

    def __new__(cls, s: str) -> Any:  # type: ignore[misc]
        if not isinstance(s, str):
            raise bad_type("s", "XLA shape text such as 'f32[2,3]'", s, "Shape")
        check_shape_text(s, "Shape")
        try:
            return native.Shape(s)
        except native.XlaRuntimeError as err:
            raise bad_value("s", "XLA shape text such as 'f32[2,3]'", s, "Shape",
                            str(err)) from err

    @staticmethod
    def tuple_shape(shapes: Any) -> Any:
        """A tuple shape of the native ``Shape``s ``shapes`` (a sequence).

        Raises TypeError naming ``shapes`` or ``shapes[i]`` for a non-shape, and
        ValueError naming ``shapes[i]`` when the result would nest tuples more than 64
        deep (``runtime._nesting.MAX_TUPLE_DEPTH``).
        """
        call = "Shape.tuple_shape"
        if isinstance(shapes, (str, bytes)) or not isinstance(shapes, Sequence):
            raise bad_type("shapes", "a sequence of Shapes", shapes, call)
        for i, sub in enumerate(shapes):
            if not isinstance(sub, native.Shape):
                raise bad_type(f"shapes[{i}]", "a Shape", sub, call)
            depth = tuple_depth(sub)
            if depth >= MAX_TUPLE_DEPTH:
                raise ValueError(f"{call}: argument 'shapes[{i}]' must nest tuples at most "
                                 f"{MAX_TUPLE_DEPTH - 1} deep (the new tuple adds one level, "
                                 f"at most {MAX_TUPLE_DEPTH} in all), got "
                                 f"{'more than ' if depth > MAX_TUPLE_DEPTH else ''}"
                                 f"{min(depth, MAX_TUPLE_DEPTH)} deep")
        return native.Shape.tuple_shape(list(shapes))

    @staticmethod
    def array_shape(type: Any, dims_seq: Any = (), layout_seq: Any = None,
                    dynamic_dimensions: list[bool] | None = None) -> Any:
        """An array shape of element ``type`` and dimensions ``dims_seq``.

        ``type``: a ``PrimitiveType`` or dtype-like with an XLA element type.
        ``dims_seq``: sizes >= 0. ``layout_seq``: minor-to-major dimension order,
        a permutation of ``range(len(dims_seq))`` (default: row-major).
        ``dynamic_dimensions``: one bool per dimension. Raises TypeError/ValueError
        naming the bad argument.
        """
        call = "Shape.array_shape"
        if isinstance(type, native.PrimitiveType):
            _dtypes.etype_to_dtype(type)  # rejects TUPLE, TOKEN, ...
            etype = type
        else:
            try:
                etype = _dtypes.dtype_to_etype(type)
            except (TypeError, ValueError) as err:
                raise bad_value("type", "a PrimitiveType or a dtype with an XLA element type",
                                type, call) from err
        dims = _ints("dims_seq", dims_seq, call, 0)
        layout = None
        if layout_seq is not None:
            layout = _ints("layout_seq", layout_seq, call, 0)
            if sorted(layout) != list(range(len(dims))):
                raise bad_value("layout_seq", f"a permutation of range({len(dims)})",
                                layout_seq, call)
        if dynamic_dimensions is not None:
            if (not isinstance(dynamic_dimensions, Sequence)
                    or len(dynamic_dimensions) != len(dims)
                    or not all(isinstance(b, bool) for b in dynamic_dimensions)):
                raise bad_value("dynamic_dimensions", f"{len(dims)} bools (one per dimension)",
                                dynamic_dimensions, call)
            dynamic_dimensions = list(dynamic_dimensions)
        return native.Shape.array_shape(etype, dims, layout, dynamic_dimensions)
