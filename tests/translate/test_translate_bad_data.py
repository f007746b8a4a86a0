"""A damaged or empty Multi30k file stops `train` with one line naming the file, before the run
directory is made (issue 16.8); small files written here, no real data needed."""
import gzip

import pytest
from translate_kit import no_network  # noqa: F401

from minitx.translate.__main__ import main

GOOD = {"de": "Ein Hund läuft.\nZwei Katzen schlafen.\n", "en": "A dog runs.\nTwo cats sleep.\n"}
DAMAGE = {
    "truncated": (lambda text: gzip.compress(text.encode())[:-12], "is truncated or corrupt"),
    "empty": (lambda text: gzip.compress(b""), "holds no sentences"),
    "not utf-8": (lambda text: gzip.compress(b"Ein Hund\n\xff\n"), "is not UTF-8 text: line 2"),
}


@pytest.mark.parametrize("split", ["train", "val", "test_2016_flickr"])
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_train_refuses_a_damaged_file_before_writing_anything(capsys, tmp_path, split, damage):
    data = tmp_path / "data"
    data.mkdir()
    for name in ("train", "val", "test_2016_flickr"):
        for lang, text in GOOD.items():
            (data / f"{name}.{lang}.gz").write_bytes(gzip.compress(text.encode()))
    make, message = DAMAGE[damage]
    bad = data / f"{split}.en.gz"
    bad.write_bytes(make(GOOD["en"]))
    run_dir = tmp_path / "run"
    code = main(["train", "--recipe", "cpu-quick", "--data-dir", str(data), "--output-dir", str(run_dir),
                 "--no-progress", "--device", "cpu"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("python -m minitx.translate train: error: ") and f"{bad} " in err and message in err
    assert not run_dir.exists()
