"""Exception hierarchy of dmlops.

Every class derives from a builtin exception as well as :class:`DmlError`, so
``except ValueError`` keeps working for callers that do not know dmlops.
"""

from __future__ import annotations

E_INVALIDARG = 0x80070057
"""HRESULT DirectML returns from IDMLDevice::CreateOperator for an invalid desc."""


class DmlError(Exception):
    """Base class of every error raised by dmlops."""


class InvalidDescError(DmlError, ValueError):
    """An operator or tensor desc violates a rule of the DirectML pages (E_INVALIDARG).

    The message names the DML struct, the member and the offending value, e.g.
    ``DML_SLICE1_OPERATOR_DESC.InputWindowStrides[2]: strides may not be 0; got 0``.
    """

    hresult: int = E_INVALIDARG

    def __init__(self, message: str, *, struct: str = "", member: str = "") -> None:
        super().__init__(message)
        self.struct = struct
        self.member = member


class DescParseError(InvalidDescError):
    """A DxDispatch-shaped desc dict could not be read (wrong JSON kind, missing field...).

    ``detail`` holds DxDispatch's own wording, e.g.
    ``Error parsing field 'DimensionCount': Expected an unsigned integer.``
    """

    def __init__(self, detail: str, *, struct: str = "", member: str = "") -> None:
        prefix = f"{struct}: " if struct else ""
        super().__init__(prefix + detail, struct=struct, member=member)
        self.detail = detail


class TensorMismatchError(DmlError, ValueError):
    """An array passed to :func:`dmlops.execute` does not match its TensorDesc."""


class DataIndexError(DmlError, IndexError):
    """Data holds an index that dmlops refuses (strict gather, ROI batch index)."""


class UnsupportedError(DmlError, NotImplementedError):
    """Valid DirectML, but not something dmlops (or this backend) implements."""


class AllocationError(DmlError, MemoryError):
    """A tensor would need more memory than is available; refused before allocating."""


class BackendUnavailableError(DmlError, RuntimeError):
    """The requested backend cannot run here (missing package, no GPU...)."""


class UnknownFieldWarning(UserWarning):
    """A DxDispatch desc or model carries a field that dmlops does not read."""


class DirectMLError(DmlError, RuntimeError):
    """A call into the real DirectML (the ``directml`` backend) failed.

    ``call`` names the failed call (``IDMLDevice::CompileOperator``...) and ``hresult``
    holds its HRESULT as an unsigned 32-bit integer.
    """

    def __init__(self, message: str, *, call: str = "", hresult: int = 0) -> None:
        super().__init__(message)
        self.call = call
        self.hresult = hresult


class DirectMLRejectedDescError(InvalidDescError):
    """dmlops validated a desc but DirectML's ``IDMLDevice::CreateOperator`` returned E_INVALIDARG.

    Each occurrence is a validation divergence between dmlops and DirectML.
    """


class DirectMLStackLimitError(UnsupportedError):
    """DirectML accepted the desc but this stack cannot run it.

    Seen when ``IDMLDevice::CompileOperator`` fails after ``CreateOperator`` succeeded:
    DirectML chose a DXIL shader, which the Wine/vkd3d translation cannot run.
    """

    def __init__(self, message: str, *, call: str = "", hresult: int = 0) -> None:
        super().__init__(message)
        self.call = call
        self.hresult = hresult


class ArgumentTypeError(DmlError, TypeError):
    """An argument of the Python API has the wrong type (not a value DirectML could reject).

    The message names the function and the argument, e.g.
    ``dmlops.execute: inputs must be a mapping of DML input member name -> array; got list``.
    """


class DescTypeError(InvalidDescError, ArgumentTypeError):
    """A desc or TensorDesc member has the wrong type (``Sizes`` of floats, ``None`` for a tensor...).

    Both an :class:`InvalidDescError` (a desc DirectML could not even be given) and a
    ``TypeError``; the message names the struct and the member as InvalidDescError's do.
    """


class UnknownEnumValueError(DmlError, ValueError):
    """A name or value that is not a member of a DML enum (``DmlEnum.from_any``)."""


class UnknownFeatureLevelError(UnknownEnumValueError):
    """A feature level that is not one of DirectML's; the message lists the known levels."""


class ArgumentValueError(DmlError, ValueError):
    """An argument of the Python API has a value no desc can be built from (a "pair" of three items...).

    Values that make an invalid desc raise :class:`InvalidDescError` instead, naming the member.
    """
