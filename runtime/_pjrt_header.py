"""Read the ``PJRT_Api`` header of a plugin library without jaxlib (for the
plugin registry).

Run as a script in a child process by :mod:`runtime._plugin_library`, so that a
library whose ``GetPjrtApi`` crashes kills the child, not the caller::

    python _pjrt_header.py /path/to/plugin.so   ->  one JSON line on stdout

The layout read is the start of ``PJRT_Api`` in ``xla/pjrt/c/pjrt_c_api.h``:
``size_t struct_size; void* extension_start; PJRT_Api_Version pjrt_api_version``
with ``PJRT_Api_Version = {size_t struct_size; void* extension_start;
int major_version; int minor_version}``. This file imports only the standard
library (no package imports), so the child starts in milliseconds.
"""

from __future__ import annotations

import ctypes
import json
import sys


class _ApiVersion(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("major_version", ctypes.c_int), ("minor_version", ctypes.c_int)]


class _ApiHeader(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("pjrt_api_version", _ApiVersion)]


def read_header(library_path: str) -> dict:
    """``{"ok": True, "struct_size", "major", "minor"}`` or ``{"ok": False, "error"}``.

    ``struct_size`` is in bytes. Never raises for a bad library: the error text
    says whether dlopen failed, ``GetPjrtApi`` is missing or it returned NULL.
    """
    try:
        lib = ctypes.CDLL(library_path, mode=getattr(ctypes, "RTLD_LOCAL", 0))
    except OSError as err:
        return {"ok": False, "error": f"cannot be opened as a shared library: {err}"}
    try:
        get_api = lib.GetPjrtApi
    except AttributeError:
        return {"ok": False, "error": "is not a PJRT plugin: it has no GetPjrtApi symbol"}
    get_api.restype = ctypes.POINTER(_ApiHeader)
    get_api.argtypes = []
    api = get_api()
    if not api:
        return {"ok": False, "error": "GetPjrtApi() returned NULL"}
    head = api.contents
    return {"ok": True, "struct_size": int(head.struct_size),
            "major": int(head.pjrt_api_version.major_version),
            "minor": int(head.pjrt_api_version.minor_version)}


if __name__ == "__main__":
    print(json.dumps(read_header(sys.argv[1])))
