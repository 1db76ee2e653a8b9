"""A PEP 517 build backend in the standard library: builds the pure-Python wheel of the ttstore package,
so installing needs no build tools from an index (`pip install ./clients/python` offline)."""

import base64
import hashlib
import os
import re
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "ttstore"


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("[project]", 1)[1].split("\n[", 1)[0]
    name = re.search(r'^name\s*=\s*"([^"]+)"', section, re.M).group(1)
    version = re.search(r'^version\s*=\s*"([^"]+)"', section, re.M).group(1)
    summary = re.search(r'^description\s*=\s*"([^"]*)"', section, re.M).group(1)
    python = re.search(r'^requires-python\s*=\s*"([^"]*)"', section, re.M).group(1)
    deps = re.findall(r'"([^"]+)"', re.search(r"^dependencies\s*=\s*\[([^\]]*)\]", section, re.M).group(1))
    return name, version, summary, python, deps


def _metadata():
    name, version, summary, python, deps = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", f"Summary: {summary}", f"Requires-Python: {python}"]
    lines += [f"Requires-Dist: {d}" for d in deps] + ['Provides-Extra: progress', 'Requires-Dist: tqdm; extra == "progress"']
    return name, version, "\n".join(lines) + "\n"


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version, meta = _metadata()
    dist_info = f"{name}-{version}.dist-info"
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(meta)
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version, meta = _metadata()
    dist_info = f"{name}-{version}.dist-info"
    wheel_name = f"{name}-{version}-py3-none-any.whl"
    files = []
    for dirpath, _, names in os.walk(os.path.join(ROOT, PACKAGE)):
        for n in sorted(names):
            if n.endswith(".py") or n == "py.typed":
                full = os.path.join(dirpath, n)
                with open(full, "rb") as f:
                    files.append((os.path.relpath(full, ROOT).replace(os.sep, "/"), f.read()))
    files.append((f"{dist_info}/METADATA", meta.encode()))
    files.append((f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: ttstore-backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    record = [_record_line(p, d) for p, d in files] + [f"{dist_info}/RECORD,,"]
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files:
            z.writestr(p, d)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    import tarfile

    name, version, _ = _metadata()
    base = f"{name}-{version}"
    path = os.path.join(sdist_directory, f"{base}.tar.gz")
    with tarfile.open(path, "w:gz") as t:
        for rel in ("pyproject.toml", "README.md", "_build/backend.py", PACKAGE):
            full = os.path.join(ROOT, rel)
            if os.path.exists(full):
                t.add(full, arcname=f"{base}/{rel}", filter=lambda i: None if "__pycache__" in i.name else i)
    return os.path.basename(path)
