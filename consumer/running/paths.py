"""Local paths made absolute on the client, before any Spark call.

Spark resolves a relative path against the working directory of the process that reads or writes it: the driver.
On Spark Connect the driver is the server, so `--output-dir ../out` or `--table t=data/t.parquet` meant a folder
relative to the *server's* working directory (it failed, and left `.substrait-*` folders there). A path the client
is given means the client's working directory, as for any command-line tool; URIs (`s3://`, `file:///`,
`hdfs://`) are left as they are.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit


def is_uri(location: str) -> bool:
    """`scheme://…` or `scheme:/…` (a scheme of two letters or more: `C:\\data` is a Windows path)."""
    scheme = urlsplit(location).scheme
    return len(scheme) > 1 and location[len(scheme) + 1 :].startswith("/")


def absolute(location: str) -> str:
    """`location` as an absolute local path (`~` expanded), unless it is a URI."""
    if not location or is_uri(location):
        return location
    return os.path.abspath(os.path.expanduser(location))
