"""The exceptions shardops raises. Each carries the library's message (for the ops,
TensorFlow's text) and ``subject``, the input it is about ("indices", "data[1]", ... or "").
A distributed call raises the same exception with the same text on every rank."""


class Error(Exception):
    """Base of shardops' errors; ``exit_code`` is the command line's exit code for it."""

    exit_code = 1
    subject = ""


class InvalidArgumentError(Error, ValueError):
    """Bad input: shapes, dtypes, indices, names (TensorFlow's InvalidArgumentError)."""

    exit_code = 2


class NotFoundError(InvalidArgumentError):
    """TensorFlow's NotFoundError: the op has no kernel for these dtypes ("Could not find
    device for node: ..."). An InvalidArgumentError too: the command line's exit code 2."""

    exit_code = 2


class ResourceExhaustedError(InvalidArgumentError, MemoryError):
    """TensorFlow's ResourceExhaustedError: the call does not fit this rank's memory (the
    budget refused it before any work, or an allocation failed). An InvalidArgumentError too
    (the command line's exit code 2), and a MemoryError."""

    exit_code = 2


class IOError(Error, OSError):  # noqa: A001 - the library's name for it; also an OSError
    """An HDF5 file could not be read or written."""

    exit_code = 3


class InternalError(Error, RuntimeError):
    """Something that should not happen."""

    exit_code = 1
