"""Tests for the Multi30k loader: local files, errors, checksums and (faked) downloads.

No test here touches the network: an autouse fixture replaces the URL opener
with one that fails, and download tests install a fake that serves bytes.
"""

import gzip
import hashlib
import http.server
import io
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

try:
    import fcntl
except ImportError:  # (Windows)
    fcntl = None

from minitx.data import multi30k
from minitx.data.multi30k import (
    ChecksumError,
    DataFileError,
    DataNotFoundError,
    default_cache_dir,
    find_data_dir,
    load_pairs,
    read_lines,
    verify_file,
)

REPO = Path(__file__).resolve().parents[2]
REAL_DATA_DIR = Path(os.environ.get("MINITX_DATA_DIR", REPO.parent / "shared" / "data" / "multi30k"))
needs_real_data = pytest.mark.skipif(
    not (REAL_DATA_DIR / "train.en.gz").is_file(),
    reason=f"Multi30k raw files not found in {REAL_DATA_DIR} (set MINITX_DATA_DIR to run this test)",
)


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """No network, no MINITX_DATA_DIR, and a private cache directory."""

    def no_network(url, *args, **kwargs):
        raise AssertionError(f"test tried to open {url}")

    monkeypatch.setattr(multi30k, "_urlopen", no_network)
    monkeypatch.delenv("MINITX_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    return tmp_path


def write_gz(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb") as f:
        f.write(text.encode("utf-8"))
    return path


def gz_bytes(text):
    return gzip.compress(text.encode("utf-8"))


class FakeResponse(io.BytesIO):
    """Just enough of an HTTP response: read(), headers, context manager."""

    def __init__(self, data):
        super().__init__(data)
        self.headers = {"Content-Length": str(len(data))}


class FakeOpener:
    """Serves fixed bytes per file name and records the URLs asked for."""

    def __init__(self, files):
        self.files = files
        self.urls = []

    def __call__(self, url, timeout=None):
        self.urls.append(url)
        name = url.rsplit("/", 1)[-1]
        if name not in self.files:
            raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)
        return FakeResponse(self.files[name])


# ------------------------------------------------------------ real data
@needs_real_data
@pytest.mark.parametrize("split, n", [("train", 29000), ("val", 1014), ("test_2016_flickr", 1000)])
def test_real_line_counts(split, n):
    pairs = load_pairs(split, "de", "en", data_dir=REAL_DATA_DIR, download=False)
    assert len(pairs) == n == multi30k.EXPECTED_LINES[split]
    assert all(isinstance(s, str) and isinstance(t, str) for s, t in pairs[:10])


@needs_real_data
def test_real_first_pair_and_verbatim_text():
    pairs = load_pairs("train", "en", "de", data_dir=REAL_DATA_DIR, download=False)
    assert pairs[0] == (
        "Two young, White males are outside near many bushes.",
        "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche.",
    )
    # Quirks are kept, not normalized away (README: 40 lines end with whitespace).
    assert sum(de != de.rstrip() for _, de in pairs) == 40
    assert not any("\n" in en or "\n" in de for en, de in pairs)


@needs_real_data
def test_real_files_match_known_checksums():
    for name in multi30k.KNOWN_SHA256:
        assert verify_file(REAL_DATA_DIR / name) is True, name


def test_downloads_come_from_the_commit_the_checksums_were_taken_from():
    """The URL named the repository's master branch: a commit there that changed a file would
    fail every user's download on its checksum. It names the commit whose files have the
    sums of KNOWN_SHA256."""
    assert multi30k.URL_TEMPLATE.format(split="val", lang="de") == (
        "https://raw.githubusercontent.com/multi30k/dataset/a3d2e0d26b56f3846f66a952536ffed4e401d05a/"
        "data/task1/raw/val.de.gz")


def test_checksum_table_covers_the_known_splits():
    for split in ("train", "val", "test_2016_flickr"):
        for lang in multi30k.LANGUAGES:
            assert f"{split}.{lang}.gz" in multi30k.KNOWN_SHA256
    assert verify_file("test_2018_flickr.en.gz") is None


# ------------------------------------------------------------ local files
def test_read_lines_keeps_text_verbatim(tmp_path):
    path = write_gz(tmp_path / "x.gz", "a  b \n\tc\r\nü ß\u2028x\nlast")
    assert read_lines(path) == ["a  b ", "\tc", "ü ß\u2028x", "last"]  # (the "\r" of a "\r\n" end goes)
    assert read_lines(write_gz(tmp_path / "y.gz", "")) == []
    assert read_lines(write_gz(tmp_path / "z.gz", "\n\n")) == ["", ""]


def test_read_lines_drops_a_byte_order_mark_before_the_first_line_only(tmp_path):
    """A corpus saved with a UTF-8 byte-order mark: sentence 1 is read without it (it would be
    trained on, hashed and scored as part of the sentence); a U+FEFF inside the text stays."""
    path = write_gz(tmp_path / "x.gz", "\ufeffEin Hund.\nzwei\ufeffWörter\n")
    assert read_lines(path) == ["Ein Hund.", "zwei\ufeffWörter"]


def test_load_pairs_from_data_dir(tmp_path):
    d = tmp_path / "data"
    write_gz(d / "val.en.gz", "A dog.\nTwo  cats. \n")
    write_gz(d / "val.fr.gz", "Un chien.\nDeux chats.\n")
    assert load_pairs("val", "en", "fr", data_dir=d) == [("A dog.", "Un chien."), ("Two  cats. ", "Deux chats.")]
    assert load_pairs("val", "fr", "en", data_dir=str(d))[0] == ("Un chien.", "A dog.")


def test_unequal_line_counts_error_names_both_files(tmp_path):
    d = tmp_path / "data"
    write_gz(d / "train.en.gz", "one\ntwo\nthree\n")
    write_gz(d / "train.de.gz", "eins\nzwei\n")
    with pytest.raises(ValueError) as info:
        load_pairs("train", "en", "de", data_dir=d)
    message = str(info.value)
    assert "train.en.gz" in message and "train.de.gz" in message
    assert "3" in message and "2" in message


TRAIN_DE = "Ein Hund läuft.\nZwei Katzen schlafen.\n" * 50


def damaged(kind):
    """The gzip bytes of TRAIN_DE damaged in one way, and what the error must say."""
    good = gz_bytes(TRAIN_DE)
    middle = len(good) // 2
    return {
        "truncated": (good[:middle], "truncated or corrupt.*EOFError"),
        "header only": (good[:10], "truncated or corrupt.*EOFError"),
        "not gzip": (TRAIN_DE.encode("utf-8"), "truncated or corrupt.*BadGzipFile"),
        "bit flip": (good[:middle] + bytes([good[middle] ^ 0xFF]) + good[middle + 1:],
                     "truncated or corrupt"),
        "bad crc": (good[:-8] + bytes([good[-8] ^ 1]) + good[-7:], "truncated or corrupt.*CRC"),
        "not utf-8": (gzip.compress(b"Ein Hund.\nZwei K\xe4tzchen.\n"),
                      r"not UTF-8 text: line 2 has the invalid byte 0xe4 \(decompressed offset 16\)"),
        "empty": (gz_bytes(""), r"holds no sentences \(0 lines.*'train' split cannot be empty"),
        "blank lines": (gz_bytes("\n \n\t\n"), r"holds no sentences \(3 lines, none with text\)"),
    }[kind]


@pytest.mark.parametrize("side", ["de", "en"])
@pytest.mark.parametrize("kind", ["truncated", "header only", "not gzip", "bit flip", "bad crc",
                                  "not utf-8", "empty", "blank lines"])
def test_a_damaged_or_empty_file_is_an_error_naming_it(tmp_path, kind, side):
    d = tmp_path / "data"
    write_gz(d / "train.de.gz", TRAIN_DE)
    write_gz(d / "train.en.gz", "A dog runs.\nTwo cats sleep.\n" * 50)
    data, message = damaged(kind)
    bad = d / f"train.{side}.gz"
    bad.write_bytes(data)
    with pytest.raises(DataFileError, match=f"{re.escape(str(bad))} .*{message}"):
        load_pairs("train", "de", "en", data_dir=d, download=False)
    assert issubclass(DataFileError, ValueError)  # the CLI prints ValueErrors without a traceback
    if kind not in ("empty", "blank lines"):
        with pytest.raises(DataFileError, match=re.escape(str(bad))):
            read_lines(bad)


def test_unknown_split_and_language_list_valid_ones():
    with pytest.raises(ValueError, match="test_2016_flickr") as info:
        load_pairs("training", "en", "de")
    assert "'training'" in str(info.value) and "val" in str(info.value)
    with pytest.raises(ValueError, match="en, de, fr, cs"):
        load_pairs("train", "en", "xx")
    with pytest.raises(ValueError, match="en, de, fr, cs"):
        load_pairs("train", "EN", "de")


def test_same_language_twice_is_an_error():
    with pytest.raises(ValueError, match="different"):
        load_pairs("train", "de", "de")


def test_find_data_dir_search_order(tmp_path, monkeypatch):
    given, env = tmp_path / "given", tmp_path / "env"
    cache = default_cache_dir()
    assert cache == tmp_path / "xdg-cache" / "minitx" / "multi30k"
    for d in (given, env, cache):
        write_gz(d / "val.en.gz", "x\n")
    monkeypatch.setenv("MINITX_DATA_DIR", str(env))
    assert find_data_dir(given) == given
    assert find_data_dir() == env
    assert find_data_dir(tmp_path / "nowhere") == env
    # A directory lacking the requested files is skipped.
    assert find_data_dir(given, ["val.de.gz"]) is None
    write_gz(cache / "val.de.gz", "y\n")
    assert find_data_dir(given, ["val.en.gz", "val.de.gz"]) == cache
    monkeypatch.delenv("MINITX_DATA_DIR")
    assert find_data_dir(tmp_path / "nowhere") == cache


@pytest.mark.parametrize("damage, what", [
    ("lacks train.en.gz", "has no file train.en.gz"),
    ("has a directory train.en.gz", "has no file train.en.gz (it is a directory)"),
    ("does not exist", "does not exist"),
])
def test_a_data_dir_given_is_the_only_place_looked(tmp_path, monkeypatch, damage, what):
    env, given = tmp_path / "env", tmp_path / "given"
    for d in (env, given):
        write_gz(d / "train.de.gz", "Ein Hund.\n")
        write_gz(d / "train.en.gz", "A dog.\n")
    monkeypatch.setenv("MINITX_DATA_DIR", str(env))
    (given / "train.en.gz").unlink()
    if damage == "has a directory train.en.gz":
        (given / "train.en.gz").mkdir()
    if damage == "does not exist":
        for path in given.iterdir():
            path.unlink() if path.is_file() else path.rmdir()
        given.rmdir()
    with pytest.raises(DataNotFoundError) as info:
        load_pairs("train", "de", "en", data_dir=given)  # never $MINITX_DATA_DIR's file in its place
    assert f"the data directory {given} (data_dir, --data-dir) {what}" in str(info.value)
    assert load_pairs("train", "de", "en") == [("Ein Hund.", "A dog.")]  # without it, the search order stands


def test_a_windows_line_end_is_a_line_end(tmp_path):
    d = tmp_path / "data"
    write_gz(d / "val.en.gz", "A dog.\r\nTwo\rcats.\r\n")
    write_gz(d / "val.de.gz", "Ein Hund.\nZwei Katzen.\n")
    assert load_pairs("val", "en", "de", data_dir=d) == [("A dog.", "Ein Hund."), ("Two\rcats.", "Zwei Katzen.")]


def test_default_cache_dir_without_xdg(monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "minitx" / "multi30k"


# ------------------------------------------------------------ downloads
def test_download_via_fake_opener_then_uses_cache(monkeypatch):
    # The 2017 test set has no known checksum: only gzip validity is checked.
    opener = FakeOpener({
        "test_2017_flickr.en.gz": gz_bytes("A man.\nA woman.\n"),
        "test_2017_flickr.de.gz": gz_bytes("Ein Mann.\nEine Frau.\n"),
    })
    monkeypatch.setattr(multi30k, "_urlopen", opener)
    pairs = load_pairs("test_2017_flickr", "de", "en")
    assert pairs == [("Ein Mann.", "A man."), ("Eine Frau.", "A woman.")]
    assert opener.urls == [multi30k.URL_TEMPLATE.format(split="test_2017_flickr", lang=lang) for lang in ("de", "en")]
    cache = default_cache_dir()
    assert sorted(p.name for p in cache.iterdir()) == ["test_2017_flickr.de.gz", "test_2017_flickr.en.gz"]
    # Second call: served from the cache, no network.
    assert load_pairs("test_2017_flickr", "de", "en") == pairs
    assert len(opener.urls) == 2


def test_download_verifies_known_checksum(monkeypatch):
    good = gz_bytes("ok\n")
    monkeypatch.setitem(multi30k.KNOWN_SHA256, "val.en.gz", hashlib.sha256(good).hexdigest())
    monkeypatch.setattr(multi30k, "_urlopen", FakeOpener({"val.en.gz": good}))
    path = multi30k.download_file("val", "en", progress=False)
    assert path == default_cache_dir() / "val.en.gz"
    assert path.read_bytes() == good
    assert verify_file(path) is True


@pytest.mark.skipif(os.name != "posix", reason="file modes and the umask are POSIX's")
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640)], ids=["umask-022", "umask-027"])
def test_a_downloaded_file_has_the_mode_the_umask_gives(monkeypatch, umask, mode):
    """A download was made by tempfile.mkstemp and kept its mode 0600 in the cache, where a file
    the user writes is 0644 (umask 022): it has the mode the umask gives."""
    good = gz_bytes("ok\n")
    monkeypatch.setitem(multi30k.KNOWN_SHA256, "val.en.gz", hashlib.sha256(good).hexdigest())
    monkeypatch.setattr(multi30k, "_urlopen", FakeOpener({"val.en.gz": good}))
    old = os.umask(umask)
    try:
        path = multi30k.download_file("val", "en", progress=False)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_checksum_mismatch_deletes_download(monkeypatch):
    monkeypatch.setattr(multi30k, "_urlopen", FakeOpener({"val.en.gz": gz_bytes("tampered\n")}))
    with pytest.raises(ChecksumError, match="val.en.gz"):
        multi30k.download_file("val", "en", progress=False)
    cache = default_cache_dir()
    assert list(cache.iterdir()) == []  # neither the file nor a temporary leftover


def test_checksum_mismatch_through_load_pairs(monkeypatch):
    monkeypatch.setattr(multi30k, "_urlopen", FakeOpener({"val.en.gz": b"garbage", "val.de.gz": b"garbage"}))
    with pytest.raises(ChecksumError):
        load_pairs("val", "de", "en")
    assert list(default_cache_dir().iterdir()) == []


def test_unknown_checksum_file_must_be_gzip(monkeypatch):
    monkeypatch.setattr(multi30k, "_urlopen", FakeOpener({"test_2018_flickr.cs.gz": b"<html>not gzip</html>"}))
    with pytest.raises(ChecksumError, match="gzip"):
        multi30k.download_file("test_2018_flickr", "cs", progress=False)
    assert list(default_cache_dir().iterdir()) == []


@needs_real_data
def test_download_real_bytes_with_progress_bar(monkeypatch):
    served = {n: (REAL_DATA_DIR / n).read_bytes() for n in ("val.en.gz", "val.de.gz")}
    monkeypatch.setattr(multi30k, "_urlopen", FakeOpener(served))
    pairs = load_pairs("val", "en", "de")  # default: progress bar on
    assert len(pairs) == 1014
    for name in served:
        assert verify_file(default_cache_dir() / name) is True


def test_a_file_in_the_cache_that_is_not_the_releases_is_downloaded_again(monkeypatch):
    """The cache is minitx's: a file there edited by hand (still gzip) was read silently; it is
    checked against its known SHA-256 on reuse and downloaded again. Files of no known sum stay."""
    good_en, good_de = gz_bytes("A dog.\n"), gz_bytes("Ein Hund.\n")
    for name, data in (("val.en.gz", good_en), ("val.de.gz", good_de)):
        monkeypatch.setitem(multi30k.KNOWN_SHA256, name, hashlib.sha256(data).hexdigest())
    opener = FakeOpener({"val.en.gz": good_en, "val.de.gz": good_de})
    monkeypatch.setattr(multi30k, "_urlopen", opener)
    assert load_pairs("val", "de", "en") == [("Ein Hund.", "A dog.")] and len(opener.urls) == 2
    write_gz(default_cache_dir() / "val.en.gz", "EDITED BY HAND\n")
    assert load_pairs("val", "de", "en") == [("Ein Hund.", "A dog.")]
    assert [url.rsplit("/", 1)[1] for url in opener.urls[2:]] == ["val.en.gz"]  # only the differing one
    assert load_pairs("val", "de", "en") == [("Ein Hund.", "A dog.")] and len(opener.urls) == 3


def test_a_dropped_connection_says_so_and_names_the_url(monkeypatch):
    """A server that sends fewer bytes than its Content-Length (a dropped connection: the read ends
    quietly) was reported as a checksum mismatch; the error names the URL and says to run again."""
    class Short(FakeResponse):
        def __init__(self, data):
            super().__init__(data[: len(data) // 2])
            self.headers = {"Content-Length": str(len(data))}

    data = gz_bytes("A dog.\n" * 100)
    monkeypatch.setattr(multi30k, "_urlopen", lambda url, timeout=None: Short(data))
    url = multi30k.URL_TEMPLATE.format(split="val", lang="de")
    with pytest.raises(DataNotFoundError, match=rf"downloading {re.escape(url)} failed: the connection dropped "
                                                rf"after {len(data) // 2} of {len(data)} bytes; run again"):
        load_pairs("val", "de", "en")
    assert list(default_cache_dir().iterdir()) == []


@pytest.fixture
def trickling_server(monkeypatch):
    """A local HTTP server that promises 1000 bytes and sends one every 0.05 s for 3 s (then
    hangs up), with URL_TEMPLATE pointing at it and the real URL opener."""
    stop = threading.Event()

    class Trickle(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            for _ in range(60):
                if stop.wait(0.05):
                    return
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:  # (the client gave up)
                    return

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    monkeypatch.setattr(multi30k, "URL_TEMPLATE", url + "{split}.{lang}.gz")
    monkeypatch.setattr(multi30k, "_urlopen", urllib.request.urlopen)
    yield url
    stop.set()
    server.shutdown()
    server.server_close()


def test_a_server_that_trickles_bytes_is_given_up_at_the_files_deadline(monkeypatch, trickling_server):
    """Only each read had a timeout: a server sending a byte every few seconds held a download for
    days. One file's download has a deadline (here 0.5 s), and the error says so, naming the file,
    the URL and how much came."""
    monkeypatch.setattr(multi30k, "_DOWNLOAD_DEADLINE_S", 0.5)
    started = time.monotonic()
    with pytest.raises(DataNotFoundError) as info:
        load_pairs("val", "de", "en")
    assert time.monotonic() - started < 2.5  # (the server hangs up after 3 s)
    assert isinstance(info.value.__cause__, TimeoutError)
    assert re.search(rf"gave up on val\.de\.gz after 0\.5 s, the limit for one file's download: "
                     rf"{re.escape(trickling_server)}val\.de\.gz sent \d+ of 1000 bytes in that time, too slowly",
                     str(info.value))
    assert list(default_cache_dir().iterdir()) == []


# what a run that gets killed while downloading does: download val.en.gz from argv[1] into argv[2]
DOWNLOADING_CHILD = """
import sys
from minitx.data import multi30k
multi30k.URL_TEMPLATE = sys.argv[1] + "{split}.{lang}.gz"
multi30k.download_file("val", "en", sys.argv[2], progress=False)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL is POSIX's")
def test_the_part_file_of_a_killed_download_is_deleted_by_the_next(monkeypatch, tmp_path, trickling_server):
    """A run killed mid-download (SIGKILL: no clean-up runs) left its .val.en.gz.<random>.part in
    the data directory for ever, and every such kill one more; the next download of the file
    deletes it."""
    dest = tmp_path / "data"
    child = subprocess.Popen([sys.executable, "-c", DOWNLOADING_CHILD, trickling_server, str(dest)],
                             env={**os.environ, "PYTHONPATH": str(REPO)}, stderr=subprocess.PIPE, text=True)
    try:
        started = time.monotonic()
        while not any(dest.glob(".val.en.gz.*.part")):
            if child.poll() is not None or time.monotonic() - started > 60:
                pytest.fail(f"the download to kill did not start or ended:\n{child.stderr.read() if child.poll() else ''}")
            time.sleep(0.02)
    finally:
        child.send_signal(signal.SIGKILL)
        _, err = child.communicate()
    assert child.returncode == -signal.SIGKILL, err
    assert len(list(dest.glob(".val.en.gz.*.part"))) == 1  # what the killed run left
    good = gz_bytes("ok\n")
    monkeypatch.setitem(multi30k.KNOWN_SHA256, "val.en.gz", hashlib.sha256(good).hexdigest())
    monkeypatch.setattr(multi30k, "_urlopen", FakeOpener({"val.en.gz": good}))
    multi30k.download_file("val", "en", dest, progress=False)
    assert sorted(path.name for path in dest.iterdir()) == ["val.en.gz"]


@pytest.mark.skipif(fcntl is None, reason="no file locks here (Windows)")
def test_only_part_files_of_the_file_that_no_download_is_writing_are_deleted(monkeypatch, tmp_path):
    """A part file another download is writing (it holds the file's lock) is left to it; so are
    other files' part files and files not named as ours are."""
    dest = tmp_path / "data"
    dest.mkdir()
    live, dead = ".val.en.gz.live0000.part", ".val.en.gz.dead0000.part"
    others = [".val.de.gz.dead0000.part", ".val.en.gz.notes", "val.en.gz.dead0000.part", "x.val.en.gz.0.part"]
    for name in (live, dead, *others):
        (dest / name).write_bytes(b"half a download")
    good = gz_bytes("ok\n")
    monkeypatch.setitem(multi30k.KNOWN_SHA256, "val.en.gz", hashlib.sha256(good).hexdigest())
    monkeypatch.setattr(multi30k, "_urlopen", FakeOpener({"val.en.gz": good}))
    writer = os.open(dest / live, os.O_RDONLY)
    try:
        fcntl.flock(writer, fcntl.LOCK_EX)  # as its download holds it
        multi30k.download_file("val", "en", dest, progress=False)
        assert sorted(path.name for path in dest.iterdir()) == sorted([live, *others, "val.en.gz"])
    finally:
        os.close(writer)
    multi30k.download_file("val", "en", dest, progress=False)  # its download is gone: stale now
    assert sorted(path.name for path in dest.iterdir()) == sorted([*others, "val.en.gz"])


def test_where_files_cannot_be_locked_a_part_file_is_stale_by_its_age(monkeypatch, tmp_path):
    """Without locks (Windows), a part file not written to for twice as long as a download may take
    is a killed run's; a younger one may be a download's under way, and is left."""
    monkeypatch.setattr(multi30k, "fcntl", None)
    dest = tmp_path / "data"
    dest.mkdir()
    old, young = dest / ".val.en.gz.old00000.part", dest / ".val.en.gz.young000.part"
    for path, age in ((old, 2 * multi30k._DOWNLOAD_DEADLINE_S + 60), (young, multi30k._DOWNLOAD_DEADLINE_S)):
        path.write_bytes(b"half a download")
        os.utime(path, (time.time() - age, time.time() - age))
    good = gz_bytes("ok\n")
    monkeypatch.setitem(multi30k.KNOWN_SHA256, "val.en.gz", hashlib.sha256(good).hexdigest())
    monkeypatch.setattr(multi30k, "_urlopen", FakeOpener({"val.en.gz": good}))
    multi30k.download_file("val", "en", dest, progress=False)
    assert sorted(path.name for path in dest.iterdir()) == sorted([young.name, "val.en.gz"])


# ------------------------------------------------------------ offline
def test_offline_error_says_what_where_and_how(monkeypatch, tmp_path):
    def offline(url, *args, **kwargs):
        raise urllib.error.URLError("no route to host")

    monkeypatch.setattr(multi30k, "_urlopen", offline)
    monkeypatch.setenv("MINITX_DATA_DIR", str(tmp_path / "env-dir"))
    with pytest.raises(DataNotFoundError) as info:
        load_pairs("train", "de", "en")
    assert isinstance(info.value, FileNotFoundError)
    message = str(info.value)
    for expected in (
        "train.de.gz",
        "train.en.gz",
        str(tmp_path / "env-dir"),
        str(default_cache_dir()),
        "--data-dir",
        "MINITX_DATA_DIR",
        "no route to host",
    ):
        assert expected in message
    assert not any(p.suffix == ".part" for p in default_cache_dir().iterdir())


def test_download_disabled_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MINITX_DATA_DIR", str(tmp_path))
    with pytest.raises(DataNotFoundError) as info:
        load_pairs("val", "en", "cs", download=False)
    message = str(info.value)
    assert "val.en.gz" in message and "val.cs.gz" in message
    assert "download=False" in message and "MINITX_DATA_DIR" in message
