"""The model reader's error class: one message with a DxDispatch-style context chain."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import DescParseError, DmlError


class ModelError(Exception):
    """A DxDispatch model is invalid, or cannot be read, written or run.

    The message is a context chain joined by ``": "``, outermost first, as DxDispatch
    prints it, e.g. ``Failed to parse dispatchable 'slice': Error parsing field
    'DimensionCount': Expected an unsigned integer.``

    Attributes
    ----------
    reason : str
        The innermost message.
    context : tuple of str
        The enclosing contexts, outermost first.
    """

    def __init__(self, reason: str, *, context: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.context = context

    def within(self, *outer: str) -> ModelError:
        """The same error wrapped in more outer contexts."""
        return ModelError(self.reason, context=(*outer, *self.context))

    def __str__(self) -> str:
        return ": ".join([*self.context, self.reason])


@contextmanager
def context(*outer: str) -> Iterator[None]:
    """Prefix ModelError and dmlops errors raised inside the block with ``outer``.

    A :class:`~dmlops.errors.DescParseError` contributes its ``detail`` (DxDispatch's
    wording); any other :class:`~dmlops.errors.DmlError` its full message.
    """
    try:
        yield
    except ModelError as exc:
        raise exc.within(*outer) from None
    except DescParseError as exc:
        raise ModelError(exc.detail, context=outer) from None
    except DmlError as exc:
        raise ModelError(str(exc), context=outer) from None


def field_error(name: str, reason: str) -> ModelError:
    """DxDispatch's ``Error parsing field 'X': <reason>``."""
    return ModelError(reason, context=(f"Error parsing field '{name}'",))
