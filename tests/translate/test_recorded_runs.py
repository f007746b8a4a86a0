"""The recorded GPU runs behind the README: each recipe is exactly what its runs trained, and
the README quotes their scores as results.json has them."""
import json
from pathlib import Path

import pytest

from minitx.translate.recipes import build_config

ROOT = Path(__file__).resolve().parents[2]
# the two lent H100s of 2026-11-23, each session's runs in its own folder
SESSIONS = [ROOT / "results" / name / "training" for name in ("2026-11-23-h100", "2026-11-23b-h100")]
RUNS = {f"{folder.parent.name}/{run.name}": run for folder in SESSIONS for run in sorted(folder.iterdir())}
# where a run was, on which machine, in which direction: not part of the model a recipe means
NOT_THE_RECIPE = {"output_dir", "recipe", "device", "data_dir", "built", "src_lang", "tgt_lang"}


def recorded(name, file):
    return json.loads((RUNS[name] / file).read_text())


@pytest.mark.parametrize("run, recipe", [("2026-11-23-h100/wide-de-en", "gpu-best"),
                                         ("2026-11-23-h100/wide-de-en-rerun", "gpu-best"),
                                         ("2026-11-23-h100/wide-en-de", "gpu-best"),
                                         ("2026-11-23b-h100/gpu-best-de-en", "gpu-best"),
                                         ("2026-11-23b-h100/seed004-small-de-en", "seed004-small")])
def test_the_recipe_is_the_configuration_the_recorded_runs_trained(run, recipe):
    config = json.loads(json.dumps(build_config(recipe)))  # tuples as the JSON lists
    trained = recorded(run, "config.json")
    keys = (set(config) | set(trained)) - NOT_THE_RECIPE
    assert {k: config.get(k) for k in keys} == {k: trained.get(k) for k in keys}


@pytest.mark.parametrize("run", sorted(RUNS))
def test_the_readme_quotes_each_recorded_score(run):
    results = recorded(run, "results.json")
    readme = (ROOT / "README.md").read_text()
    assert f"| **{results['bleu']:.2f}** | {results['bleu_lowercase']:.2f} |" in readme
