"""Errors raised by spyre_capture. Kept free of torch imports so the version check can use them."""


class UnsupportedTorch(RuntimeError):
    """The installed torch is not the version the Inductor hooks were written against."""


class CaptureError(RuntimeError):
    """A graph cannot be captured (for example symbolic shapes); the message says what to change."""
