"""The build backend of dtperf_collect (PEP 517): the package's files and the [project]
table of pyproject.toml, as a wheel or a source archive. It needs nothing beyond Python
(and tomli before Python 3.11), so `python3 -m pip install ./collect` builds offline, in
pip's isolated build environment too."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import re
import sys
import tarfile
import zipfile
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # collect/
PACKAGE = "dtperf_collect"
# The [project] keys the metadata is made from; any other is refused rather than dropped.
PROJECT_KEYS = {"name", "version", "description", "requires-python", "dependencies"}
# Every archive member gets this time, so the same sources give the same archive.
DATE_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest a zip file holds
EPOCH = 315532800  # the same, in seconds (tar)
WHEEL = "Wheel-Version: 1.0\nGenerator: dtperf_collect_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _project() -> dict[str, Any]:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project: dict[str, Any] = tomllib.load(f)["project"]
    unknown = sorted(set(project) - PROJECT_KEYS)
    if unknown:
        raise ValueError(f"pyproject.toml: [project] keys this backend does not handle: {', '.join(unknown)}")
    return project


def _metadata(project: dict[str, Any]) -> str:
    """Core metadata 2.1 (PKG-INFO, METADATA)."""
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    return "\n".join(lines) + "\n"


def _base_name(project: dict[str, Any]) -> str:
    """NAME-VERSION as archive file names spell it (PEP 427, PEP 625)."""
    return f"{re.sub(r'[-_.]+', '_', project['name']).lower()}-{project['version']}"


def _sources(*top: str) -> list[str]:
    """The Python files (and PEP 561's marker) under ROOT/top, as paths relative to ROOT."""
    found = []
    for name in top:
        path = os.path.join(ROOT, name)
        if os.path.isfile(path):
            found.append(name)
            continue
        for folder, subfolders, files in os.walk(path):
            subfolders[:] = [s for s in subfolders if s != "__pycache__"]
            found += [os.path.relpath(os.path.join(folder, f), ROOT) for f in files
                      if f.endswith(".py") or f == "py.typed"]
    return sorted(p.replace(os.sep, "/") for p in found)


def _read(path: str) -> bytes:
    with open(os.path.join(ROOT, path), "rb") as f:
        return f.read()


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    project = _project()
    base = _base_name(project)
    dist_info = f"{base}.dist-info"
    members = [(path, _read(path)) for path in _sources(PACKAGE)]
    members += [(f"{dist_info}/METADATA", _metadata(project).encode()), (f"{dist_info}/WHEEL", WHEEL.encode())]
    record = "".join(_record_line(path, data) for path, data in members) + f"{dist_info}/RECORD,,\n"
    members.append((f"{dist_info}/RECORD", record.encode()))
    name = f"{base}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as wheel:
        for path, data in members:
            info = zipfile.ZipInfo(path, date_time=DATE_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return name


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    project = _project()
    base = _base_name(project)
    members = [(path, _read(path)) for path in _sources("pyproject.toml", "backend", PACKAGE)]
    members.append(("PKG-INFO", _metadata(project).encode()))
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path, data in sorted(members):
            info = tarfile.TarInfo(f"{base}/{path}")
            info.size, info.mtime, info.mode = len(data), EPOCH, 0o644
            archive.addfile(info, io.BytesIO(data))
    name = f"{base}.tar.gz"
    with open(os.path.join(sdist_directory, name), "wb") as out, \
            gzip.GzipFile(fileobj=out, mode="wb", mtime=EPOCH) as compressed:
        compressed.write(tar.getvalue())
    return name
