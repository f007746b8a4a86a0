"""The recorded GPU runs behind the README: the gpu-best recipe is exactly what they trained, and
the README quotes their scores as results.json has them."""
import json
from pathlib import Path

import pytest

from minitx.translate.recipes import build_config

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "results" / "2026-11-23-h100" / "training"
# where a run was, on which machine, in which direction: not part of the model a recipe means
NOT_THE_RECIPE = {"output_dir", "recipe", "device", "data_dir", "built", "src_lang", "tgt_lang"}


def recorded(name, file):
    return json.loads((RUNS / name / file).read_text())


@pytest.mark.parametrize("run", ["wide-de-en", "wide-de-en-rerun", "wide-en-de"])
def test_gpu_best_is_the_configuration_the_recorded_runs_trained(run):
    config = json.loads(json.dumps(build_config("gpu-best")))  # tuples as the JSON lists
    trained = recorded(run, "config.json")
    keys = (set(config) | set(trained)) - NOT_THE_RECIPE
    assert {k: config.get(k) for k in keys} == {k: trained.get(k) for k in keys}


@pytest.mark.parametrize("run", sorted(p.name for p in RUNS.iterdir()))
def test_the_readme_quotes_each_recorded_score(run):
    results = recorded(run, "results.json")
    readme = (ROOT / "README.md").read_text()
    assert f"| **{results['bleu']:.2f}** | {results['bleu_lowercase']:.2f} |" in readme
