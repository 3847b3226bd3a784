"""The on-disk kernel cache.

Layout: <root>/v1/<key[:2]>/<key>/ holds what one compile produced (the .ptx
and .json of each kernel, and entry.json listing them). The key is the sha256
of the MLIR compiled, the pipeline (chip and options) and the compiler's
identity (its git hash and the sha256 of libFAPythonCAPI.so), so a rebuilt
compiler never reads an older compiler's kernels.

Concurrency: an entry is written in a private temporary directory under
<root>/v1/tmp/ and published by one rename(2) of that directory, which is
atomic: a reader sees no entry or a whole one. A second process that finished
the same key first wins; the loser's rename fails (the target is not empty)
and it reads the winner's entry. An advisory lock per key (fcntl.flock on
<root>/v1/locks/<key>) makes the others wait instead of compiling the same
kernel again; it is an optimization only, correctness rests on the rename.

Root: $FA_CACHE_DIR, else $XDG_CACHE_HOME/fa, else ~/.cache/fa. FA_CACHE_DIR=off
disables the disk cache.
"""
import contextlib
import errno
import json
import os
import shutil
import tempfile

FORMAT = "v1"


def root():
    d = os.environ.get("FA_CACHE_DIR")
    if d:
        return None if d.lower() in ("off", "0", "none") else d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fa")


def entry_dir(key, base=None):
    base = base if base is not None else root()
    return os.path.join(base, FORMAT, key[:2], key)


@contextlib.contextmanager
def key_lock(key, base=None):
    """An exclusive advisory lock for `key` (blocks until it is ours)."""
    base = base if base is not None else root()
    d = os.path.join(base, FORMAT, "locks")
    os.makedirs(d, exist_ok=True)
    fd = os.open(os.path.join(d, key), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        import fcntl
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def read(key, base=None):
    """entry.json of `key` with "dir" added, or None when there is no entry."""
    d = entry_dir(key, base)
    try:
        with open(os.path.join(d, "entry.json")) as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    entry["dir"] = d
    return entry


def publish(key, fill, base=None):
    """Makes the entry of `key`: fill(tmpdir) writes the files and returns the
    entry's JSON object (written as entry.json); the directory is then renamed
    into place. Returns the entry that is in place afterwards (ours, or the one
    another process published first)."""
    base = base if base is not None else root()
    tmp_root = os.path.join(base, FORMAT, "tmp")
    os.makedirs(tmp_root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=key[:16] + ".", dir=tmp_root)
    try:
        entry = fill(tmp)
        with open(os.path.join(tmp, "entry.json"), "w") as f:
            json.dump(entry, f, indent=1, sort_keys=True)
        final = entry_dir(key, base)
        os.makedirs(os.path.dirname(final), exist_ok=True)
        try:
            os.rename(tmp, final)
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            # Someone else published this key first: theirs stands.
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return read(key, base)


def discard(key, base=None):
    """Removes a damaged entry (moved aside first, so readers never see half of it)."""
    base = base if base is not None else root()
    d = entry_dir(key, base)
    if not os.path.isdir(d):
        return
    trash = tempfile.mkdtemp(prefix="trash.", dir=os.path.join(base, FORMAT, "tmp"))
    try:
        os.rename(d, os.path.join(trash, "entry"))
    except OSError:
        pass
    shutil.rmtree(trash, ignore_errors=True)
