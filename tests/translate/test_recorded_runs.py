"""The recorded GPU runs behind the results: each recipe is exactly what its runs trained, the
dated record (results/README.md) quotes their scores as results.json has them, and each line of
the README's results table links a record that exists, quoting a run's score as that run has it."""
import io
import json
import re
import sys
import tarfile
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from minitx.train.rundir import DATA_KEYS, check_data
from minitx.translate.recipes import DEFAULTS, build_config
from minitx.translate.training import _upgrade_saved

ROOT = Path(__file__).resolve().parents[2]
# the lent GPUs (two H100s of 2026-11-23; four H200s and two H100s of 2026-11-26), each session's runs in its own folder
SESSIONS = [ROOT / "results" / name / "training"
            for name in ("2026-11-23-h100", "2026-11-23b-h100", "2026-11-26-h200", "2026-11-26b-h200",
                         "2026-11-26c-h200", "2026-11-26d-h200", "2026-11-26e-h100", "2026-11-26f-h100",
                         "2026-11-27e-h100")]
RUNS = {f"{folder.parent.name}/{run.name}": run for folder in SESSIONS for run in sorted(folder.iterdir())}
# where a run was, on which machine, in which direction, which files it kept, the digest of the data it
# read and where it read them (DATA_KEYS): not part of the model a recipe means
NOT_THE_RECIPE = {"output_dir", "recipe", "device", "data_dir", "built", "src_lang", "tgt_lang", "keep_epochs",
                  *DATA_KEYS}
# what a recipe leaves to the device (None: resolved when a run starts, and recorded): how a
# step computes, checked below against what the run recorded
CHOSEN_FOR_THE_DEVICE = {"precision", "static_shapes", "cuda_graphs", "attention_kernels"}
# runs of a recipe at a seed other than its own, given on the command line (--seed)
OTHER_SEEDS = {"2026-11-26f-h100/gpu-best-s2-de-en": 2, "2026-11-26f-h100/gpu-best-s3-de-en": 3,
               **{f"2026-11-27e-h100/tiny-{direction}-s{seed}": seed for direction in ("en-de", "de-en")
                  for seed in (2, 3)}}


def recorded(name, file):
    return json.loads((RUNS[name] / file).read_text())


@pytest.mark.parametrize("run, recipe", [("2026-11-23-h100/wide-de-en", "gpu-best"),
                                         ("2026-11-23-h100/wide-de-en-rerun", "gpu-best"),
                                         ("2026-11-23-h100/wide-en-de", "gpu-best"),
                                         ("2026-11-23b-h100/gpu-best-de-en", "gpu-best"),
                                         ("2026-11-23b-h100/seed004-small-de-en", "seed004-small"),
                                         ("2026-11-26c-h200/gpu-best-graphs-de-en", "gpu-best"),
                                         ("2026-11-26c-h200/gpu-best-bf16-graphs-de-en", "gpu-best"),
                                         ("2026-11-26d-h200/gpu-best-graphs-de-en", "gpu-best"),
                                         ("2026-11-26d-h200/gpu-best-tensor-cores-de-en", "gpu-best"),
                                         ("2026-11-26e-h100/gpu-best-graphs-de-en", "gpu-best"),
                                         ("2026-11-26f-h100/gpu-best-s2-de-en", "gpu-best"),
                                         ("2026-11-26f-h100/gpu-best-s3-de-en", "gpu-best"),
                                         *((f"2026-11-27e-h100/tiny-{direction}-s{seed}", "multi30k-tiny")
                                           for direction in ("en-de", "de-en") for seed in (1, 2, 3))])
def test_the_recipe_is_the_configuration_the_recorded_runs_trained(run, recipe):
    # the recipe at the seed the run was given (--seed; the recipe's own where a run's name has none)
    assert_trained_the_recipe(recorded(run, "config.json"), recipe, seed=OTHER_SEEDS.get(run))


def assert_trained_the_recipe(saved: dict, recipe: str, seed=None):
    """A run's config.json (``saved``) is ``recipe`` at ``seed``, but for NOT_THE_RECIPE and what the
    device chose."""
    config = json.loads(json.dumps(build_config(recipe, seed=seed)))  # tuples as the JSON lists
    # a key the run's config.json lacks came after it: the run trained with what the upgrade of an
    # old config.json says (precision fp32, the batches as they came) or what is now its default
    trained = {**DEFAULTS, **_upgrade_saved(saved)}
    assert all(config[k] is None for k in CHOSEN_FOR_THE_DEVICE)
    keys = (set(config) | set(trained)) - NOT_THE_RECIPE - CHOSEN_FOR_THE_DEVICE
    assert {k: config.get(k) for k in keys} == {k: json.loads(json.dumps(trained.get(k))) for k in keys}


def test_a_new_run_that_records_its_data_still_trained_its_recipe():
    """Every run now records the digest of its data and where it was read (check_data: data_sha256,
    data_read_from) and the model it built: where the data was is not the recipe, so a run recorded
    from now on still matches its recipe."""
    config = build_config("multi30k-tiny-published", seed=None)
    config["built"] = {"src_vocab": 10000, "tgt_vocab": 10000, "parameters": 2_600_000}
    check_data(config, {"train": [["ein Hund", "a dog"]], "val": [["eine Katze", "a cat"]]},
               {"train": "/data/train.de.gz, /data/train.en.gz", "val": "/data/val.de.gz, /data/val.en.gz"})
    saved = json.loads(json.dumps(config))  # as config.json holds it
    assert set(DATA_KEYS) <= set(saved)
    assert_trained_the_recipe(saved, "multi30k-tiny-published")


def test_the_tf32_runs_recorded_their_precision_and_the_shapes_auto_chose():
    """gpu-best with --precision tf32 (given then; the GPU default since) and validation BLEU every
    epoch, on an H200 with nvmath-python: static shapes chosen by auto and recorded, cuda_graphs
    left None in config.json (chosen again at each start)."""
    for run in ("2026-11-26b-h200/gpu-best-tf32-graphs-de-en", "2026-11-26b-h200/gpu-best-tf32-graphs-2000-de-en"):
        trained = recorded(run, "config.json")
        assert (trained["precision"], trained["static_shapes"], trained["cuda_graphs"]) == ("tf32", True, None)


@pytest.mark.parametrize("run, precision", [("2026-11-26c-h200/gpu-best-graphs-de-en", "tf32"),
                                            ("2026-11-26c-h200/gpu-best-bf16-graphs-de-en", "bf16")])
def test_a_run_at_the_gpu_defaults_recorded_what_they_resolved_to(run, precision):
    """gpu-best given no --precision resolved it to tf32 on the H200 (bf16 when asked) and chose static
    shapes; each config.json says so, and cuda_graphs stays None (chosen again at each start)."""
    trained = recorded(run, "config.json")
    assert (trained["precision"], trained["static_shapes"], trained["cuda_graphs"]) == (precision, True, None)


@pytest.mark.parametrize("run, kernels", [("2026-11-26d-h200/gpu-best-graphs-de-en", "cuda-cores"),
                                          ("2026-11-26d-h200/gpu-best-tensor-cores-de-en", "tensor-cores"),
                                          ("2026-11-26e-h100/gpu-best-graphs-de-en", "cuda-cores"),
                                          ("2026-11-26f-h100/gpu-best-s2-de-en", "cuda-cores"),
                                          ("2026-11-26f-h100/gpu-best-s3-de-en", "cuda-cores")])
def test_a_run_recorded_the_attention_kernels_it_trained_with(run, kernels):
    """auto resolved to the CUDA cores on the H200 and the H100 (the tensor cores when asked), at the TF32
    default."""
    trained = recorded(run, "config.json")
    assert (trained["attention_kernels"], trained["precision"], trained["cuda_graphs"]) == (kernels, "tf32", None)


def quoted(results: dict) -> str:
    """How results/README.md quotes a run's scores: its BLEU in bold, then the lowercased BLEU."""
    return f"| **{results['bleu']:.2f}** | {results['bleu_lowercase']:.2f} |"


@pytest.mark.parametrize("run", sorted(RUNS))
def test_the_record_quotes_each_recorded_score(run):
    results = recorded(run, "results.json")
    record = (ROOT / "results" / "README.md").read_text()
    assert quoted(results) in record


def test_the_gpu_kits_table_quotes_a_run_as_the_record_must(tmp_path):
    """tools/gpu_session/record.py prints the rows results/README.md takes: a run's row as printed
    passes the check above."""
    sys.path.insert(0, str(ROOT / "tools" / "gpu_session"))
    import record  # noqa: PLC0415

    run = tmp_path / "work" / "published-en-de-s1"
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps(build_config("multi30k-tiny-published", seed=1), default=list))
    (run / "history.json").write_text(json.dumps([{"epoch": 1, "step": 65, "complete": True, "train_loss": 3.0,
                                                           "val_loss": 2.0, "seconds": 4.5}]))
    results = {"bleu": 39.004, "bleu_lowercase": 40.0, "bleu_moses_lowercase": 41.0, "steps": 8000,
               "train_seconds": 600.0}
    (run / "results.json").write_text(json.dumps(results))
    files_at = tmp_path / "out"
    files_at.mkdir()
    with tarfile.open(files_at / "published-en-de.tar.gz", "w:gz") as archive:
        archive.add(run.parent, arcname=".")
    printed = io.StringIO()
    with redirect_stdout(printed):
        assert record.main([str(files_at), str(tmp_path / "results" / "2026-12-01-h100")]) == 0
    assert quoted(results) in printed.getvalue()


def readme_results_rows():
    """(row text, linked path) for each line of the README's results table."""
    readme = (ROOT / "README.md").read_text()
    table = readme.split("\n## Results\n", 1)[1].split("\n## ", 1)[0]
    return [(row, link) for row in table.splitlines() if row.startswith("| ") and "](results/" in row
            for link in re.findall(r"\]\((results/[^)]+)\)", row)]


def test_the_readme_results_table_links_existing_records():
    rows = readme_results_rows()
    assert len(rows) >= 8
    for row, link in rows:
        assert (ROOT / link).exists(), link


def test_the_readme_results_table_quotes_each_linked_score_as_recorded():
    """A row linking a run (its folder, or its results JSON) states that run's BLEU in bold."""
    checked = 0
    for row, link in readme_results_rows():
        path = ROOT / link
        results = path / "results.json" if path.is_dir() else path
        if results.suffix == ".json" and results.exists() and "bleu" in json.loads(results.read_text()):
            scores = json.loads(results.read_text())
            quoted = re.findall(r"\*\*(\d+\.\d\d)\*\*", row)
            assert quoted, row
            assert float(quoted[0]) in (scores["bleu"], scores.get("bleu_tokens_lowercase")), row
            checked += 1
    assert checked >= 5
