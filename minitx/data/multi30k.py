"""The Multi30k translation data (WMT16 multimodal task 1), raw text.

Multi30k holds English descriptions of Flickr30k images with German, French
and Czech translations. The raw files are gzipped UTF-8 text, one sentence
per line, named ``<split>.<lang>.gz`` (e.g. ``train.de.gz``); line ``i`` of
``train.en.gz`` and of ``train.de.gz`` are translations of each other.

Where the files are looked for: a ``data_dir`` argument (e.g. from a
``--data-dir`` command-line option) is the only place looked, and a file
missing there is an error naming it (a split read from somewhere else would
train on other data than the one named). Without it, in order:

1. the directory in the environment variable ``MINITX_DATA_DIR``,
2. the cache directory ``$XDG_CACHE_HOME/minitx/multi30k``
   (``~/.cache/minitx/multi30k`` when ``XDG_CACHE_HOME`` is not set).

When a file is in neither and ``download=True``, it is downloaded from
the Multi30k GitHub repository into the cache directory and checked against
its known SHA-256 checksum.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import secrets
import shutil
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path

try:
    import fcntl
except ImportError:  # (Windows: a part file is then told stale by its age alone)
    fcntl = None

SPLITS = ("train", "val", "test_2016_flickr", "test_2017_flickr", "test_2017_mscoco", "test_2018_flickr")
LANGUAGES = ("en", "de", "fr", "cs")

#: The commit of github.com/multi30k/dataset the files are downloaded from: the one the
#: checksums below were taken from (its data/task1/raw/ files have been unchanged since
#: ea6abd96, 2018, the 2018 test set aside). A branch (``master``) would follow the repository:
#: a change to a file there would fail every user's download on its checksum.
DATASET_COMMIT = "a3d2e0d26b56f3846f66a952536ffed4e401d05a"

#: ``{split}`` and ``{lang}`` are filled in.
URL_TEMPLATE = (f"https://raw.githubusercontent.com/multi30k/dataset/{DATASET_COMMIT}/data/task1/raw/"
                "{split}.{lang}.gz")

#: SHA-256 of the ``.gz`` files (DATASET_COMMIT's data/task1/raw/).
#: The 2017/2018 test sets are not listed: we have no checksum for them, so a
#: download of those is only checked to decompress, and :func:`load_pairs`
#: then checks that both languages have the same number of lines.
KNOWN_SHA256 = {
    "test_2016_flickr.cs.gz": "200a4a74cc9560f051924abb9803be008d1908d77f747e9141aeb86dfd2797f1",
    "test_2016_flickr.de.gz": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
    "test_2016_flickr.en.gz": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
    "test_2016_flickr.fr.gz": "6d326e188d259fb1d04ac19eae3af956559b3a0b93d7635e56c90987c40c8b90",
    "train.cs.gz": "a65adb8b32e3bc664f21ecba7a6e7f6950fd1f405e135f7c312faabdb6255077",
    "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "train.fr.gz": "622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c",
    "val.cs.gz": "b63226e05c4bd5dd6a42897d74b86a1b9d2c31498252c572b1ea7f7996927fcc",
    "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "val.fr.gz": "ca3106f1a72390591d25f6c45cb4cd39dec4cd3f123e099748a3ce5256c160e9",
}

#: Number of sentences per split (the same in every language), where known.
EXPECTED_LINES = {"train": 29000, "val": 1014, "test_2016_flickr": 1000}

DATA_DIR_ENV = "MINITX_DATA_DIR"

# Indirection so tests can serve bytes without touching the network.
_urlopen = urllib.request.urlopen
_DOWNLOAD_TIMEOUT_S = 30  # seconds one read of the socket may wait
#: The most seconds one file's download may take, all its reads together: the timeout above
#: bounds each read only, and a server that sends a byte every few seconds would hold a download
#: for days. The largest file (train.de.gz, 0.64 MB) arrives in time at 1.1 kB/s.
_DOWNLOAD_DEADLINE_S = 600


class DataNotFoundError(FileNotFoundError):
    """The Multi30k files are neither on disk nor downloadable."""


class ChecksumError(RuntimeError):
    """A downloaded file does not have the expected SHA-256."""


class DataFileError(ValueError):
    """A Multi30k file on disk that cannot be used: not gzip, truncated or corrupt, not UTF-8,
    empty, or not parallel to its other side. The message names the file and what is wrong."""


# ------------------------------------------------------------------ locations
def file_name(split: str, lang: str) -> str:
    """``"train", "de"`` -> ``"train.de.gz"`` (after validating both)."""
    _check_split(split)
    _check_lang(lang)
    return f"{split}.{lang}.gz"


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/minitx/multi30k``, or ``~/.cache/minitx/multi30k``."""
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache_home) / "minitx" / "multi30k"


def candidate_dirs(data_dir: str | os.PathLike | None = None) -> list[Path]:
    """The directories searched, in order (see the module docstring)."""
    dirs = []
    if data_dir is not None:
        dirs.append(Path(data_dir).expanduser())
    env_dir = os.environ.get(DATA_DIR_ENV)
    if env_dir:
        dirs.append(Path(env_dir).expanduser())
    dirs.append(default_cache_dir())
    return dirs


def find_data_dir(data_dir: str | os.PathLike | None = None, files: list[str] | tuple[str, ...] = ()) -> Path | None:
    """The first searched directory that holds all ``files`` (or just exists, if none are named).

    Returns None when no directory qualifies.
    """
    for directory in candidate_dirs(data_dir):
        if directory.is_dir() and all((directory / f).is_file() for f in files):
            return directory
    return None


# ------------------------------------------------------------------- loading
def utf8_text(data: bytes, name, error=ValueError, where="") -> str:
    """``data`` decoded as UTF-8, less the byte-order mark some editors write first (it is not
    part of the first line's sentence); else ``error`` naming ``name``, the line and the byte
    that is not UTF-8 (``where``: more to say, formatted with the byte's ``offset``)."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise error(f"{name} is not UTF-8 text: line {line} has the invalid byte 0x{data[err.start]:02x}"
                    + where.format(offset=err.start)) from None


def read_lines(path: str | os.PathLike) -> list[str]:
    """All lines of a gzipped UTF-8 file, without their ``"\\n"``.

    A ``"\\r\\n"`` line end (a file saved on Windows) is a line end too: its
    ``"\\r"`` is dropped, as ``translate`` drops it from its input, so the
    sentences are the same as the file's with ``"\\n"`` ends. Nothing else is
    changed: no whitespace is stripped or collapsed (a few training sentences
    have a trailing space, a double space or a tab, and they are kept as they
    are). Lines are split on ``"\\n"`` only, not on other Unicode line breaks.
    A last line without ``"\\n"`` still counts. A leading byte-order mark is dropped (utf8_text).

    Raises :class:`DataFileError` naming the file for one that is truncated, corrupt or not
    UTF-8 (the whole file is read and checked before any line is returned).
    """
    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
    except (gzip.BadGzipFile, EOFError, zlib.error) as err:
        # BadGzipFile: not gzip, bad CRC or trailing garbage; EOFError: truncated; zlib.error:
        # damaged compressed data
        raise DataFileError(f"{path} is truncated or corrupt: it does not decompress as gzip "
                            f"({type(err).__name__}: {err}); delete it to download it again, or "
                            "replace it") from err
    return text_lines(utf8_text(data, path, DataFileError, " (decompressed offset {offset})"))


def text_lines(text: str) -> list[str]:
    """The lines of ``text`` as read_lines takes them: split on "\n" only (a lone "\r" or another
    Unicode line break stays inside its line), a "\r\n" end's "\r" dropped, a last line without
    "\n" counted, the split after a final "\n" not."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the split after the final newline
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def load_pairs(
    split: str,
    src_lang: str,
    tgt_lang: str,
    data_dir: str | os.PathLike | None = None,
    download: bool = True,
    progress: bool = True,
) -> list[tuple[str, str]]:
    """Load one split as a list of ``(source, target)`` sentence pairs.

    Args:
        split: one of :data:`SPLITS`, e.g. ``"train"``, ``"val"``, ``"test_2016_flickr"``.
        src_lang, tgt_lang: two different languages from :data:`LANGUAGES`.
        data_dir: the directory to read from, the only one looked in (see the module docstring).
        download: fetch missing files into the cache directory.
        progress: a progress bar for each file downloaded.

    Raises:
        ValueError: unknown split or language, or same language twice.
        DataFileError (a ValueError): a file is truncated, corrupt, not UTF-8 or
            holds no sentence, or the two files do not have the same number of lines.
        DataNotFoundError: files missing and not downloadable.
        ChecksumError: a downloaded file is corrupt.
    """
    _check_split(split)
    _check_lang(src_lang)
    _check_lang(tgt_lang)
    if src_lang == tgt_lang:
        raise ValueError(f"source and target language are both {src_lang!r}; choose two different languages")

    paths = ensure_files(split, (src_lang, tgt_lang), data_dir=data_dir, download=download, progress=progress)
    return read_pairs(split, paths)


def read_pairs(split: str, paths) -> list[tuple[str, str]]:
    """The ``(source, target)`` pairs of the two files ``paths`` (ensure_files'), checked as
    :func:`load_pairs` says."""
    src_lines, tgt_lines = read_lines(paths[0]), read_lines(paths[1])
    for path, lines in zip(paths, (src_lines, tgt_lines)):
        # an empty split would train 0 steps or score nothing, and look like a success
        if not any(line.strip() for line in lines):
            raise DataFileError(f"{path} holds no sentences ({len(lines)} lines, none with text); "
                                f"the {split!r} split cannot be empty")
    if len(src_lines) != len(tgt_lines):
        raise DataFileError(
            f"the two sides of {split!r} differ in length: {paths[0]} has {len(src_lines)} lines "
            f"but {paths[1]} has {len(tgt_lines)}"
        )
    return list(zip(src_lines, tgt_lines))


def ensure_files(
    split: str,
    langs: tuple[str, ...] | list[str],
    data_dir: str | os.PathLike | None = None,
    download: bool = True,
    progress: bool = True,
) -> list[Path]:
    """Paths of ``<split>.<lang>.gz`` for each language, downloading if needed.

    With ``data_dir``, all are taken from it (a file missing there is a
    DataNotFoundError naming it). Otherwise all files are taken from the same
    directory: $MINITX_DATA_DIR when it holds all of them, else the cache directory,
    where a file with a known SHA-256 is checked (one that differs is downloaded
    again, as a missing one is, when ``download`` is true).
    """
    names = [file_name(split, lang) for lang in langs]
    if data_dir is not None:
        return [_given_file(Path(data_dir).expanduser(), name) for name in names]
    directory, cache = find_data_dir(None, names), default_cache_dir()
    if directory is not None and directory != cache:
        return [directory / n for n in names]
    # the cache is minitx's own: a file there that is not the release's (edited, another version)
    # is downloaded again
    missing = [n for n in names if not (cache / n).is_file() or verify_file(cache / n) is False]
    if missing and not download:
        raise DataNotFoundError(_missing_message(names, data_dir, "downloading is turned off (download=False)"))
    for lang, name in zip(langs, names):
        if name not in missing:
            continue
        try:
            download_file(split, lang, cache, progress=progress)
        except (urllib.error.URLError, OSError) as err:
            # URLError (and timeouts, ConnectionError) are OSErrors too.
            url = URL_TEMPLATE.format(split=split, lang=lang)
            raise DataNotFoundError(_missing_message(names, data_dir, f"downloading {url} failed: {err}")) from err
    return [cache / n for n in names]


def _given_file(directory: Path, name: str) -> Path:
    """``directory / name``, where ``directory`` was named explicitly (data_dir): a file missing
    there is an error naming it, never a silent read of the same split from another directory."""
    path = directory / name
    if path.is_file():
        return path
    what = ("is not a directory" if directory.exists() and not directory.is_dir() else
            "does not exist" if not directory.exists() else
            f"has no file {name}" + (" (it is a directory)" if path.exists() else ""))
    raise DataNotFoundError(
        f"the data directory {directory} (data_dir, --data-dir) {what}; a data directory given explicitly is the "
        f"only place looked. Put {name} there ({URL_TEMPLATE.format(split='<split>', lang='<lang>')}), or leave "
        f"--data-dir out to read the files from {DATA_DIR_ENV}, the cache directory {default_cache_dir()}, or a "
        "download")


def _missing_message(names: list[str], data_dir, reason: str) -> str:
    looked = "\n".join(f"  - {d}" for d in candidate_dirs(data_dir))
    return (
        f"Multi30k files not found: {', '.join(names)}\n"
        f"Looked in (in this order):\n{looked}\n"
        f"and {reason}.\n"
        f"Put the files ({URL_TEMPLATE.format(split='<split>', lang='<lang>')}) in one directory and "
        f"pass it with --data-dir (data_dir=...), or set {DATA_DIR_ENV} to it, "
        f"or place them in the cache directory {default_cache_dir()}."
    )


# ---------------------------------------------------------------- download
def download_file(
    split: str,
    lang: str,
    dest_dir: str | os.PathLike | None = None,
    progress: bool = True,
) -> Path:
    """Download ``<split>.<lang>.gz`` into ``dest_dir`` (default: the cache) and verify it.

    The data goes to a temporary file in ``dest_dir`` first and is renamed to
    its final name only once complete and verified, so an interrupted or
    corrupt download never leaves a file that looks valid; the temporary files
    of ``name`` that a killed run left (``.<name>.*.part``) are deleted first
    (:func:`_remove_stale_parts`). Verification: the
    SHA-256 from :data:`KNOWN_SHA256` where known (mismatch: the file is
    deleted and :class:`ChecksumError` raised); for other files, only that the
    file decompresses as gzip. A download that takes longer than
    ``_DOWNLOAD_DEADLINE_S`` is given up (TimeoutError naming the file and the URL).
    """
    name = file_name(split, lang)
    dest_dir = Path(dest_dir) if dest_dir is not None else default_cache_dir()
    dest_dir.mkdir(parents=True, exist_ok=True)
    url = URL_TEMPLATE.format(split=split, lang=lang)

    _remove_stale_parts(dest_dir, name)
    fd, tmp_path = _new_part_file(dest_dir, name)
    # a second descriptor keeps the part file's lock (held while any descriptor of it is open)
    # once `out` is closed, until the file is renamed or deleted: it is never taken for stale
    held = os.dup(fd)
    try:
        digest = hashlib.sha256()
        deadline = time.monotonic() + _DOWNLOAD_DEADLINE_S
        with os.fdopen(fd, "wb") as out, _urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as response:
            total = _content_length(response)
            bar = _progress_bar(total, name, enabled=progress)
            received = 0
            # read1: the bytes that have come (one read of the socket), so the deadline is looked at
            # between reads; read(n) would wait for all n bytes, however slowly they trickle in
            read = getattr(response, "read1", response.read)
            try:
                while True:
                    chunk = read(1 << 16)
                    if not chunk:
                        break
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
                    received += len(chunk)
                    if time.monotonic() > deadline:
                        raise TimeoutError(
                            f"gave up on {name} after {_DOWNLOAD_DEADLINE_S:g} s, the limit for one file's download: "
                            f"{url} sent {received} of {total if total is not None else 'an unknown number of'} "
                            "bytes in that time, too slowly. Run again later, or download the file yourself and pass "
                            "its directory with --data-dir")
            finally:
                bar.close()
        if total is not None and received < total:  # (a dropped connection ends the read quietly)
            raise ConnectionError(f"the connection dropped after {received} of {total} bytes; run again")

        expected = KNOWN_SHA256.get(name)
        if expected is not None:
            actual = digest.hexdigest()
            if actual != expected:
                raise ChecksumError(
                    f"checksum mismatch for {name} downloaded from {url}: "
                    f"sha256 {actual}, expected {expected}; the download was deleted. Run again (a damaged "
                    "download), or download the release's file yourself and pass its directory with --data-dir"
                )
        else:
            _check_gzip(tmp_path, name)
        os.replace(tmp_path, dest_dir / name)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    finally:
        os.close(held)
    return dest_dir / name


def _new_part_file(dest_dir: Path, name: str) -> tuple[int, Path]:
    """``(descriptor, path)`` of a new, empty file ``.<name>.<random>.part`` in ``dest_dir`` for
    ``name``'s download, open for writing and locked (:func:`_lock`) to tell it from a killed
    run's. It is made as any file the user writes is, mode 0666 less the umask (0644 for the usual
    022), and keeps that mode when renamed into place: tempfile.mkstemp's files are 0600, whatever
    the umask."""
    while True:
        path = dest_dir / f".{name}.{secrets.token_hex(4)}.part"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:  # (another download's, by a chance of one in 4 billion)
            continue
        if _lock(fd, wait=True) and os.fstat(fd).st_nlink == 0:
            # another download took it for stale in the instant between its creation and the lock,
            # and deleted it: a new one
            os.close(fd)
            continue
        return fd, path


def _remove_stale_parts(dest_dir: Path, name: str) -> None:
    """Delete the part files of ``name`` in ``dest_dir`` that no download is writing: a run killed
    mid-download (SIGKILL, a power cut) never reached its clean-up, and its part file would stay
    for ever. Each download holds a lock on its own part file from its creation until it is
    renamed or deleted, and a process's locks go with it; where files cannot be locked, a part
    file not written to for twice as long as a download may take (_DOWNLOAD_DEADLINE_S; its last
    read may overrun it) is stale. Only ``.<name>.*.part`` files are looked at; one that cannot
    be deleted is left."""
    for path in dest_dir.glob(f".{name}.*.part"):
        try:
            with open(path, "rb") as part:
                locked = _lock(part.fileno(), wait=False)
                if locked:  # deleted before the lock is let go (see _new_part_file)
                    path.unlink()
                    continue
                old = locked is None and time.time() - os.fstat(part.fileno()).st_mtime > 2 * _DOWNLOAD_DEADLINE_S
            if old:  # (once closed: Windows deletes no open file)
                path.unlink()
        except OSError:  # (renamed or deleted meanwhile by its download, or not ours to delete)
            continue


def _lock(fd: int, wait: bool) -> bool | None:
    """Lock the file of ``fd`` exclusively (flock; released when all its descriptors are closed,
    so also when its process dies): True once locked; False when another holds it and not
    ``wait``; None where there are no locks (Windows, a file system without them)."""
    if fcntl is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    except OSError:
        return None
    return True


def sha256_of(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_file(path: str | os.PathLike) -> bool | None:
    """Check a local file against :data:`KNOWN_SHA256` by its name.

    Returns True (matches), False (differs) or None (no known checksum).
    """
    expected = KNOWN_SHA256.get(Path(path).name)
    if expected is None:
        return None
    return sha256_of(path) == expected


def _check_gzip(path: Path, name: str) -> None:
    try:
        with gzip.open(path, "rb") as f:
            shutil.copyfileobj(f, _NullWriter())
    except (OSError, EOFError) as err:
        raise ChecksumError(f"downloaded {name} is not a valid gzip file ({err}); the download was deleted") from err


class _NullWriter:
    def write(self, data: bytes) -> int:
        return len(data)


def _content_length(response) -> int | None:
    headers = getattr(response, "headers", None)
    value = headers.get("Content-Length") if headers is not None else None
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int | None, name: str, enabled: bool):
    if not enabled:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is a declared dependency; stay usable without it
        return _NoBar()
    # disable=None: no bar where stderr is no terminal (a log file would fill with \r frames)
    return tqdm(total=total, desc=f"download {name}", unit="B", unit_scale=True, leave=False, disable=None)


# -------------------------------------------------------------- validation
def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"unknown Multi30k split {split!r}; valid splits: {', '.join(SPLITS)}")


def _check_lang(lang: str) -> None:
    if lang not in LANGUAGES:
        raise ValueError(f"unknown Multi30k language {lang!r}; valid languages: {', '.join(LANGUAGES)}")
