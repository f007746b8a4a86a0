"""Random sampling: rand, randn, randint, randperm, normal, bernoulli, multinomial, poisson, binomial and the
*_like forms.

Their values are not PyTorch's (another generator), so they are checked by what they must be:
shapes, dtypes (PyTorch's), bounds, distributions within a tolerance of several standard
errors (the seed is fixed, so a pass is a pass every run), repeats under manual_seed, resumes
through get_state/set_state, and errors that name the function. A minitx.Generator, given as
``generator=``, draws apart from the global generator, as a torch.Generator does.
"""
import itertools
import json

import numpy as np
import pytest

import minitx
from minitx import random as mrandom
from torch_reference import import_torch

SAMPLERS = {
    "rand": lambda: minitx.rand(2, 3),
    "randn": lambda: minitx.randn(2, 3),
    "randint": lambda: minitx.randint(0, 1000, (2, 3)),
    "randperm": lambda: minitx.randperm(50),
    "normal": lambda: minitx.normal(1.0, 2.0, (2, 3)),
    "bernoulli": lambda: minitx.bernoulli(minitx.full((50,), 0.5)),
    "multinomial": lambda: minitx.multinomial(minitx.ones(2, 50), 10),
    "multinomial(replacement)": lambda: minitx.multinomial(minitx.ones(50), 10, replacement=True),
    "poisson": lambda: minitx.poisson(minitx.full((50,), 3.0)),
    "binomial": lambda: minitx.binomial(minitx.full((50,), 20.0), minitx.tensor(0.5)),
    "rand_like": lambda: minitx.rand_like(minitx.zeros(2, 3)),
    "randn_like": lambda: minitx.randn_like(minitx.zeros(2, 3)),
    "randint_like": lambda: minitx.randint_like(minitx.zeros(2, 3), 1000),
}


@pytest.mark.parametrize("name", SAMPLERS)
def test_samples_repeat_under_manual_seed_and_resume_from_get_state(name):
    sample = SAMPLERS[name]
    minitx.manual_seed(7)
    first, second = sample().numpy(), sample().numpy()
    assert not np.array_equal(first, second)
    minitx.manual_seed(7)
    np.testing.assert_array_equal(sample().numpy(), first)
    state = mrandom.get_state()
    np.testing.assert_array_equal(sample().numpy(), second)
    mrandom.set_state(state)  # a resumed run draws what the first run drew next
    np.testing.assert_array_equal(sample().numpy(), second)


def next_draws():
    """Draws of several kinds from the global generator, dropout's mask among them."""
    return [minitx.randn(5).numpy(), minitx.randint(0, 1000, (4,)).numpy(), minitx.randperm(20).numpy(),
            minitx.functional.dropout(minitx.ones(30), 0.5, training=True).numpy()]


def test_get_rng_state_and_set_rng_state_resume_the_draws():
    """PyTorch's names for get_state and set_state: a state saved (through JSON, as a checkpoint
    keeps it) and set again after other draws and another seed gives the draws that followed it."""
    minitx.manual_seed(11)
    minitx.randn(3)
    state = json.loads(json.dumps(minitx.get_rng_state()))
    expected = next_draws()
    minitx.manual_seed(12)
    minitx.rand(7)
    minitx.set_rng_state(state)
    for got, want in zip(next_draws(), expected):
        np.testing.assert_array_equal(got, want)
    assert minitx.initial_seed() == 11  # the state's seed, as PyTorch's set_rng_state restores it
    assert minitx.get_rng_state() == mrandom.get_state()


def test_initial_seed_and_seed_as_pytorchs():
    torch = import_torch()
    for s in (0, 1234, 2 ** 64 - 1):
        minitx.manual_seed(s)
        torch.manual_seed(s)
        assert minitx.initial_seed() == torch.initial_seed() == s
    fresh = minitx.seed()
    assert isinstance(fresh, int) and 0 <= fresh < 2 ** 64
    assert minitx.initial_seed() == fresh
    drawn = minitx.randn(4).numpy()
    minitx.manual_seed(fresh)  # a seed() run repeats from the number it returned
    np.testing.assert_array_equal(minitx.randn(4).numpy(), drawn)
    assert len({minitx.seed() for _ in range(5)}) == 5  # from the operating system, not from the seed before


def test_set_rng_state_refuses_what_get_rng_state_never_gave():
    minitx.manual_seed(5)
    before = minitx.get_rng_state()
    good = json.loads(json.dumps(before))
    bad = {
        r"set_rng_state: expected a dict with 'seed' and 'cpu', got tensor": minitx.zeros(3),
        r"set_rng_state: expected a dict with 'seed' and 'cpu', got \{'seed': 1\}": {"seed": 1},
        r"set_rng_state: invalid seed -1; expected a whole number from 0 to 2\*\*64 - 1": {**good, "seed": -1},
        r"set_rng_state: the CPU generator's state .* is not \{'bit_generator': 'PCG64'":
            {**good, "cpu": {"bit_generator": "MT19937"}},
        r"set_rng_state: invalid philox \{'cuda': -2\}; expected \{device: next offset >= 0\}":
            {**good, "philox": {"cuda": -2}},
    }
    for message, state in bad.items():
        with pytest.raises(ValueError, match=message):
            minitx.set_rng_state(state)
        assert minitx.get_rng_state() == before  # refused: nothing changed


def test_fork_rng_leaves_the_global_state_as_it_was():
    """PyTorch's torch.random.fork_rng: the block draws what would have come next (dropout too,
    and a manual_seed inside), and after it the draws are those that followed the state before it;
    a Generator is not the global state and moves on. enabled=False forks nothing."""
    torch = import_torch()
    assert callable(torch.random.fork_rng) and callable(minitx.random.fork_rng)
    minitx.manual_seed(13)
    minitx.randn(2)
    before = minitx.get_rng_state()
    expected = next_draws()
    minitx.set_rng_state(before)
    g = minitx.Generator().manual_seed(1)
    with minitx.random.fork_rng():
        inner = next_draws()
        minitx.randn(3, generator=g)
        minitx.manual_seed(99)
        minitx.randn(3)
    assert minitx.get_rng_state() == before and minitx.initial_seed() == 13
    for got, want in zip(inner, expected):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(next_draws(), expected):
        np.testing.assert_array_equal(got, want)
    assert g.get_state() != minitx.Generator().manual_seed(1).get_state()
    minitx.set_rng_state(before)
    with minitx.random.fork_rng(enabled=False):
        minitx.randn(3)
    assert minitx.get_rng_state() != before
    minitx.manual_seed(14)  # nothing drawn before the block: after it, the seed's first draws
    with minitx.random.fork_rng(devices=[], device_type="cuda"):
        first = minitx.randn(4).numpy()
    np.testing.assert_array_equal(minitx.randn(4).numpy(), first)


def test_generator_seed_reseeds_it_from_the_operating_system():
    """PyTorch's Generator.seed: a fresh 64-bit seed, returned, from which manual_seed draws again."""
    torch = import_torch()
    assert callable(torch.Generator().seed)
    g = minitx.Generator()
    fresh = g.seed()
    assert 0 <= fresh < 2 ** 64 and g.initial_seed() == fresh
    drawn = minitx.randn(5, generator=g).numpy()
    np.testing.assert_array_equal(minitx.randn(5, generator=minitx.Generator().manual_seed(fresh)).numpy(), drawn)
    assert len({minitx.Generator().seed() for _ in range(5)}) == 5


def test_a_seed_past_64_bits_is_refused_as_pytorch_refuses_it():
    """A saved state holds a 64-bit seed: manual_seed(2**64) was taken, and its state then
    refused by set_rng_state."""
    torch = import_torch()
    minitx.manual_seed(2 ** 64 - 1)
    minitx.set_rng_state(minitx.get_rng_state())
    before = minitx.get_rng_state()
    for set_seed in (minitx.manual_seed, minitx.Generator().manual_seed):
        with pytest.raises(ValueError, match=r"manual_seed: expected a non-negative integer below 2\*\*64, "
                                             r"got 18446744073709551616"):
            set_seed(2 ** 64)
    assert minitx.get_rng_state() == before
    with pytest.raises((ValueError, RuntimeError)):
        torch.manual_seed(2 ** 64)


def test_the_rng_names_are_pytorchs_top_level_ones():
    torch = import_torch()
    for name in ("manual_seed", "initial_seed", "seed", "get_rng_state", "set_rng_state"):
        assert getattr(minitx, name) is getattr(mrandom, name) and name in minitx.__all__
        assert callable(getattr(torch, name))


# the draws that take generator= (those the samplers of minitx.utils.data make)
GENERATOR_DRAWS = {
    "randint": lambda g: minitx.randint(0, 1000, (20,), generator=g),
    "randperm": lambda g: minitx.randperm(50, generator=g),
    "multinomial": lambda g: minitx.multinomial(minitx.ones(50), 10, generator=g),
    "multinomial(replacement)": lambda g: minitx.multinomial(minitx.ones(50), 10, replacement=True, generator=g),
    # and those PyTorch's take it on too (the *_like forms take none in PyTorch, nor here)
    "rand": lambda g: minitx.rand(4, 5, generator=g),
    "randn": lambda g: minitx.randn((20,), generator=g),
    "normal": lambda g: minitx.normal(1.0, 2.0, (20,), generator=g),
    "normal(tensor, tensor)": lambda g: minitx.normal(minitx.zeros(20), minitx.ones(20), generator=g),
    "bernoulli": lambda g: minitx.bernoulli(minitx.full((50,), 0.5), generator=g),
    "bernoulli(input, p)": lambda g: minitx.bernoulli(minitx.zeros(50), 0.5, generator=g),
    "poisson": lambda g: minitx.poisson(minitx.full((50,), 3.0), generator=g),
    "binomial": lambda g: minitx.binomial(minitx.full((50,), 20.0), minitx.full((50,), 0.5), g),
    "Tensor.uniform_": lambda g: minitx.zeros(20).uniform_(-1.0, 1.0, generator=g),
    "Tensor.normal_": lambda g: minitx.zeros(20).normal_(0.0, 2.0, generator=g),
}


@pytest.mark.parametrize("name", GENERATOR_DRAWS)
def test_a_generator_draws_apart_from_the_global_one(name):
    """Seeded alike, two Generators draw alike, whatever the global generator has drawn, and
    leave it as it was; a saved state (through JSON, as a checkpoint keeps it) resumes the draws."""
    draw = GENERATOR_DRAWS[name]
    minitx.manual_seed(0)
    first = draw(minitx.Generator().manual_seed(5)).numpy()
    minitx.randn(7)
    before = mrandom.get_state()
    g = minitx.Generator().manual_seed(5)
    np.testing.assert_array_equal(draw(g).numpy(), first)
    assert mrandom.get_state() == before
    state = json.loads(json.dumps(g.get_state()))
    second = draw(g).numpy()
    assert not np.array_equal(first, second)
    resumed = minitx.Generator().set_state(state)
    np.testing.assert_array_equal(draw(resumed).numpy(), second)
    assert resumed.initial_seed() == 5
    assert not np.array_equal(draw(minitx.Generator().manual_seed(6)).numpy(), first)


def test_generator_starts_from_pytorchs_seed_and_refuses_what_it_cannot_use():
    torch = import_torch()
    assert minitx.Generator().initial_seed() == torch.Generator().initial_seed()
    g = minitx.Generator()
    assert g.manual_seed(3) is g and g.device == "cpu"
    with pytest.raises(TypeError, match=r"generator: expected a minitx.Generator or None, got torch\S*Generator"):
        minitx.randperm(3, generator=torch.Generator())
    with pytest.raises(ValueError, match=r"Generator.manual_seed: expected a non-negative integer below 2\*\*64, got -1"):
        g.manual_seed(-1)
    with pytest.raises(ValueError, match="Generator.set_state: expected a dict with 'seed' and 'cpu'"):
        g.set_state({"seed": 1})
    with pytest.raises(ValueError, match="Generator.set_state: the CPU generator's state"):
        g.set_state({"seed": 1, "cpu": {"bit_generator": "MT19937"}})
    assert g.initial_seed() == 3  # refused states change nothing


@pytest.mark.gpu
def test_generator_is_cpu_only():
    with pytest.raises(ValueError, match="Generator: device='cuda' is not supported"):
        minitx.Generator("cuda")
    g = minitx.Generator()
    for draw in (lambda: minitx.randperm(3, device="cuda", generator=g),
                 lambda: minitx.rand(3, device="cuda", generator=g),
                 lambda: minitx.randn(3, device="cuda", generator=g),
                 lambda: minitx.normal(0.0, 1.0, (3,), device="cuda", generator=g),
                 lambda: minitx.normal(minitx.zeros(3, device="cuda"), 1.0, generator=g),
                 lambda: minitx.bernoulli(minitx.full((3,), 0.5, device="cuda"), generator=g)):
        with pytest.raises(ValueError, match="Generator: this one draws on 'cpu', not on 'cuda'"):
            draw()


# What the global generator drew from manual_seed(2024) before rand, randn, normal, bernoulli and
# Tensor.uniform_/normal_ took generator= (at ea0f6e3): without one they must draw the same, bit for bit.
BEFORE_GENERATOR = {
    "rand": [0.6758313179016113, 0.21432320773601532, 0.30945202708244324],
    "randn": [-0.9731795191764832, -1.3928000926971436, 0.06719635426998138],
    "normal": [2.7227017879486084, 2.018373489379883, 4.620571136474609],
    "bernoulli": [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0],
    "Tensor.uniform_": [0.5988568663597107, 0.19364473223686218, -0.34930068254470825],
    "Tensor.normal_": [1.8061261177062988, -2.961162567138672, -1.0681856870651245],
}


def test_without_a_generator_the_global_draws_are_as_before():
    minitx.manual_seed(2024)  # one run of draws, in this order, as the values were taken
    drawn = {"rand": minitx.rand(3), "randn": minitx.randn(3), "normal": minitx.normal(1.0, 2.0, (3,)),
             "bernoulli": minitx.bernoulli(minitx.full((8,), 0.5)),
             "Tensor.uniform_": minitx.zeros(3).uniform_(-1, 1), "Tensor.normal_": minitx.zeros(3).normal_(0, 2)}
    for name, values in BEFORE_GENERATOR.items():
        np.testing.assert_array_equal(drawn[name].numpy(), np.array(values, dtype=np.float32), err_msg=name)


def test_generator_is_keyword_only_where_pytorchs_is():
    """PyTorch's rand, randn, normal, bernoulli and Tensor.uniform_/normal_ take generator= by name only."""
    import inspect  # noqa: PLC0415
    torch = import_torch()
    for name, ours, theirs in [("rand", minitx.rand, torch.rand), ("randn", minitx.randn, torch.randn),
                               ("normal", minitx.normal, torch.normal),
                               ("bernoulli", minitx.bernoulli, torch.bernoulli),
                               ("uniform_", minitx.Tensor.uniform_, torch.Tensor.uniform_),
                               ("normal_", minitx.Tensor.normal_, torch.Tensor.normal_)]:
        parameter = inspect.signature(ours).parameters["generator"]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is None, name
        assert "*, generator" in theirs.__doc__.split("->")[0], name  # torch's documented signature


# (minitx call, torch call): the same arguments, the shape and dtype PyTorch gives
SHAPES_AND_DTYPES = [
    ("randint(10, (3,))", lambda m: m.randint(10, (3,))),
    ("randint(3, 10, (2, 2))", lambda m: m.randint(3, 10, (2, 2))),
    ("randint(0, 10, size=(4,))", lambda m: m.randint(0, 10, size=(4,))),
    ("randint(10, size=(4,))", lambda m: m.randint(10, size=(4,))),
    ("randint float32", lambda m: m.randint(0, 10, (3,), dtype=m.float32)),
    ("randperm(5)", lambda m: m.randperm(5)),
    ("randperm(0)", lambda m: m.randperm(0)),
    ("normal(numbers, size)", lambda m: m.normal(2.0, 3.0, (2, 3))),
    ("normal(tensor, number)", lambda m: m.normal(m.zeros(3, dtype=m.float64), 1.0)),
    ("normal(tensor, tensor)", lambda m: m.normal(m.zeros(3), m.ones(2, 1))),
    ("bernoulli(probabilities)", lambda m: m.bernoulli(m.full((3,), 0.5))),
    ("bernoulli(input, p)", lambda m: m.bernoulli(m.zeros(2, 2, dtype=m.float64), 0.3)),
    ("multinomial 1-d", lambda m: m.multinomial(m.ones(4), 2)),
    ("multinomial 2-d", lambda m: m.multinomial(m.ones(3, 4), 5, True)),
    ("poisson", lambda m: m.poisson(m.ones(2, 3))),
    ("poisson float64 0-d", lambda m: m.poisson(m.ones((), dtype=m.float64))),
    ("poisson empty", lambda m: m.poisson(m.ones(0, 3))),
    ("binomial", lambda m: m.binomial(m.full((2, 3), 4.0), m.full((2, 3), 0.5))),
    ("binomial float64", lambda m: m.binomial(m.full((3,), 4.0, dtype=m.float64), m.full((3,), 0.5, dtype=m.float64))),
    ("rand_like float64", lambda m: m.rand_like(m.zeros(2, dtype=m.float64))),
    ("randn_like", lambda m: m.randn_like(m.zeros(2, 1))),
    ("randint_like float", lambda m: m.randint_like(m.zeros(3), 10)),
    ("randint_like int32", lambda m: m.randint_like(m.zeros(3, dtype=m.int32), 3, 10)),
]


@pytest.mark.parametrize("call", [c[1] for c in SHAPES_AND_DTYPES], ids=[c[0] for c in SHAPES_AND_DTYPES])
def test_shapes_and_dtypes_match_pytorch(call):
    torch = import_torch()
    ours, theirs = call(minitx), call(torch)
    assert ours.shape == tuple(theirs.shape)
    assert ours.dtype == str(theirs.dtype).removeprefix("torch.")


def test_randint_stays_in_bounds_and_is_uniform():
    minitx.manual_seed(1)
    draws = minitx.randint(-3, 7, (100_000,)).numpy()
    assert draws.min() == -3 and draws.max() == 6
    counts = np.bincount(draws + 3, minlength=10)
    assert np.abs(counts - 10_000).max() < 5 * np.sqrt(10_000 * 0.9)  # 5 standard errors


def test_randint_and_randperm_draw_to_the_ends_of_their_dtype():
    """The largest ranges a dtype holds are drawn, as PyTorch draws them (the checks above stop
    only those past its ends)."""
    minitx.manual_seed(8)
    assert sorted(minitx.randperm(256, dtype="uint8").tolist()) == list(range(256))
    assert sorted(minitx.randperm(2049, dtype="float16").tolist()) == list(range(2049))
    assert set(minitx.randint(0, 2, (100,), dtype="bool").tolist()) == {False, True}
    assert set(minitx.randint(-128, 128, (10_000,), dtype="int8").tolist()) == set(range(-128, 128))
    assert minitx.randperm(0, dtype="uint8").shape == (0,)


def test_randperm_is_a_permutation_and_every_order_is_equally_likely():
    minitx.manual_seed(2)
    assert sorted(minitx.randperm(100).tolist()) == list(range(100))
    orders = [tuple(minitx.randperm(3).tolist()) for _ in range(6000)]
    counts = np.array([orders.count(order) for order in itertools.permutations(range(3))])
    assert np.abs(counts - 1000).max() < 5 * np.sqrt(1000 * 5 / 6)


def test_poisson_draws_have_the_mean_and_variance_of_each_rate():
    minitx.manual_seed(4)
    rates = minitx.tensor([0.0, 0.5, 4.0, 100.0], dtype="float64")
    draws = np.stack([minitx.poisson(rates).numpy() for _ in range(20_000)])
    assert (draws[:, 0] == 0).all() and (draws == np.round(draws)).all() and draws.min() >= 0
    for column, rate in enumerate([0.5, 4.0, 100.0], start=1):  # mean = variance = rate
        assert abs(draws[:, column].mean() - rate) < 5 * np.sqrt(rate / len(draws))
        assert abs(draws[:, column].var() / rate - 1) < 0.05


def test_binomial_draws_have_the_mean_and_variance_of_each_count_and_chance():
    minitx.manual_seed(5)
    count, prob = minitx.tensor([[0.0], [1.0], [30.0]]), minitx.tensor([0.0, 0.25, 1.0])
    draws = np.stack([minitx.binomial(count, prob).numpy() for _ in range(20_000)])  # count and prob broadcast
    assert draws.shape[1:] == (3, 3) and (draws[:, 0] == 0).all() and (draws[:, :, 0] == 0).all()
    np.testing.assert_array_equal(draws[:, :, 2], np.broadcast_to([0.0, 1.0, 30.0], (20_000, 3)))  # prob 1: all
    for n in (1, 30):  # mean n p, variance n p (1 - p)
        row = draws[:, [0, 1, 30].index(n), 1]
        assert abs(row.mean() - n / 4) < 5 * np.sqrt(n * 3 / 16 / len(row))
        assert abs(row.var() / (n * 3 / 16) - 1) < 0.05


def test_normal_has_the_mean_and_std_asked_for_numbers_and_tensors():
    minitx.manual_seed(3)
    x = minitx.normal(2.0, 3.0, (200_000,), dtype="float64").numpy()
    assert abs(x.mean() - 2) < 5 * 3 / np.sqrt(x.size) and abs(x.std() - 3) < 0.05
    mean, std = minitx.tensor([[-10.0], [10.0]]), minitx.tensor([0.0, 1.0, 5.0])
    y = minitx.normal(mean, std, dtype="float64")
    assert y.shape == (2, 3) and y.numpy()[:, 0].tolist() == [-10.0, 10.0]  # std 0: the mean itself
    many = minitx.normal(minitx.full((100_000,), 4.0), 0.5).numpy()
    assert many.dtype == np.float32 and abs(many.mean() - 4) < 0.01 and abs(many.std() - 0.5) < 0.01


def test_bernoulli_ones_come_with_the_probability_of_each_entry():
    minitx.manual_seed(4)
    p = minitx.tensor([0.0, 0.1, 0.5, 0.9, 1.0], dtype="float64")
    draws = np.stack([minitx.bernoulli(p).numpy() for _ in range(20_000)])
    assert draws.dtype == np.float64 and set(np.unique(draws)) <= {0.0, 1.0}
    assert draws[:, 0].sum() == 0 and draws[:, 4].all()
    np.testing.assert_allclose(draws.mean(axis=0), p.numpy(), atol=5 * np.sqrt(0.25 / 20_000))
    assert abs(minitx.bernoulli(minitx.zeros(100_000), 0.3).numpy().mean() - 0.3) < 0.01


def test_multinomial_with_replacement_draws_each_category_with_its_share_of_the_weight():
    minitx.manual_seed(5)
    weights = minitx.tensor([[1.0, 0.0, 3.0, 4.0], [0.0, 5.0, 0.0, 5.0]])  # rows need not sum to 1
    draws = minitx.multinomial(weights, 40_000, replacement=True).numpy()
    assert draws.shape == (2, 40_000) and draws.dtype == np.int64
    for row, w in zip(draws, weights.numpy()):
        share = np.bincount(row, minlength=4) / row.size
        np.testing.assert_allclose(share, w / w.sum(), atol=5 * np.sqrt(0.25 / row.size))
        assert share[w == 0].sum() == 0


def test_multinomial_searches_each_row_in_its_own_weights():
    """All rows are searched at once, each shifted by its index: many rows, each with one category
    of weight, must each draw that category only."""
    n, rows = 7, 5000
    weights = np.zeros((rows, n), np.float32)
    weights[np.arange(rows), np.arange(rows) % n] = 1.0
    draws = minitx.multinomial(minitx.tensor(weights), 3, replacement=True).numpy()
    assert (draws == (np.arange(rows) % n)[:, None]).all()


def test_multinomial_without_replacement_draws_distinct_categories_in_the_order_drawn():
    """Weights 1, 2, 3: the pair (i, j) comes first with chance w_i / 6 * w_j / (6 - w_i)."""
    minitx.manual_seed(6)
    draws = minitx.multinomial(minitx.tensor([1.0, 2.0, 3.0]).reshape(1, 3).expand(30_000, 3), 2).numpy()
    assert (draws[:, 0] != draws[:, 1]).all()
    w = np.array([1.0, 2.0, 3.0])
    for i, j in itertools.permutations(range(3), 2):
        expected = w[i] / 6 * w[j] / (6 - w[i])
        observed = np.mean((draws[:, 0] == i) & (draws[:, 1] == j))
        assert abs(observed - expected) < 5 * np.sqrt(expected * (1 - expected) / len(draws)), (i, j)
    everything = minitx.multinomial(minitx.tensor([5.0, 1.0, 0.5, 2.0]), 4).numpy()
    assert sorted(everything.tolist()) == [0, 1, 2, 3]
    # weight 0 is drawn only once the categories of weight > 0 have run out, as in PyTorch
    assert minitx.multinomial(minitx.tensor([0.0, 1.0, 0.0]), 2).tolist()[0] == 1


@pytest.mark.parametrize("call, error, message", [
    (lambda: minitx.rand(2, dtype="int64"), TypeError, "rand: needs a floating dtype, got int64"),
    (lambda: minitx.randn(2, dtype="bool"), TypeError, "randn: needs a floating dtype, got bool"),
    (lambda: minitx.randint(5, 5, (2,)), ValueError, "randint: low must be less than high, got low=5, high=5"),
    (lambda: minitx.randint(10), TypeError, "randint: missing the size"),
    (lambda: minitx.randint(0.5, 3, (2,)), TypeError, "randint: low and high must be whole numbers"),
    (lambda: minitx.randperm(-1), ValueError, "randperm: n must be a whole number >= 0, got -1"),
    # a range the dtype does not hold would wrap when cast: not uniform, not a permutation
    (lambda: minitx.randint(0, 300, (2,), dtype="uint8"), ValueError,
     r"randint: \[low, high\) = \[0, 300\) draws whole numbers from 0 to 299, which dtype uint8 does not hold "
     r"\(it holds those from 0 to 255\)"),
    (lambda: minitx.randint(-1, 2, (2,), dtype="uint8"), ValueError, "randint: .* dtype uint8 does not hold"),
    (lambda: minitx.randint(0, 3, (2,), dtype="bool"), ValueError, "randint: .* dtype bool does not hold"),
    (lambda: minitx.randint(0, 70000, (2,), dtype="float16"), ValueError, "randint: .* dtype float16 does not hold"),
    (lambda: minitx.randint_like(minitx.zeros(2, dtype="int8"), 200), ValueError, "^randint_like: .* dtype int8 does not"),
    (lambda: minitx.randint(0, 2 ** 64, (2,)), ValueError, "randint: .* dtype int64 does not hold"),
    (lambda: minitx.randperm(257, dtype="uint8"), ValueError,
     "randperm: n = 257 draws whole numbers from 0 to 256, which dtype uint8 does not hold"),
    (lambda: minitx.randperm(2050, dtype="float16"), ValueError,  # 2049 is the first whole number float16 lacks
     r"randperm: n = 2050 .* dtype float16 does not hold \(it holds those from -2048 to 2048\)"),
    (lambda: minitx.normal(0.0, -1.0, (2,)), ValueError, "normal: std must be >= 0, got -1.0"),
    (lambda: minitx.normal(minitx.zeros(2), -minitx.ones(2)), ValueError, "normal: std must be >= 0"),
    (lambda: minitx.normal(minitx.zeros(2, dtype="int64"), 1.0), TypeError, "normal: needs a floating dtype"),
    # a NaN std would give NaN samples: refused as PyTorch refuses it
    (lambda: minitx.normal(0.0, float("nan"), (2,)), ValueError, "normal: std must be >= 0, got nan"),
    (lambda: minitx.normal(minitx.zeros(2), minitx.tensor([np.nan, 1.0])), ValueError, "normal: std must be >= 0"),
    (lambda: minitx.zeros(2).normal_(0.0, float("nan")), ValueError, "normal_: std must be >= 0, got nan"),
    (lambda: minitx.nn.init.normal_(minitx.zeros(2), 0.0, -1.0), ValueError, "normal_: std must be >= 0, got -1.0"),
    (lambda: minitx.zeros(2).uniform_(1.0, 0.0), ValueError, "uniform_: expected low <= high, got low=1.0, high=0.0"),
    (lambda: minitx.bernoulli(minitx.tensor([1.5])), ValueError, r"bernoulli: probabilities must be in \[0, 1\]"),
    (lambda: minitx.bernoulli(minitx.zeros(2), -0.1), ValueError, r"bernoulli: probabilities must be in \[0, 1\]"),
    (lambda: minitx.bernoulli(minitx.tensor([1, 0])), TypeError, "bernoulli: needs a floating dtype, got int64"),
    (lambda: minitx.multinomial(minitx.tensor([0.0, 0.0]), 1), ValueError, "multinomial: every row of weights"),
    (lambda: minitx.multinomial(minitx.tensor([[1.0, 1.0], [0.0, 0.0]]), 1, True), ValueError,
     "multinomial: every row of weights needs a sum > 0"),
    (lambda: minitx.multinomial(minitx.tensor([-1.0, 2.0]), 1), ValueError, "multinomial: the weights must be"),
    (lambda: minitx.multinomial(minitx.tensor([np.nan, 1.0]), 1), ValueError, "multinomial: the weights must be"),
    (lambda: minitx.multinomial(minitx.tensor([np.inf, 1.0]), 1), ValueError, "multinomial: the weights must be"),
    (lambda: minitx.multinomial(minitx.ones(2), 3), ValueError,
     "multinomial: cannot draw 3 samples from 2 categories without replacement"),
    (lambda: minitx.multinomial(minitx.ones(2), 0, True), ValueError, "multinomial: num_samples must be"),
    (lambda: minitx.multinomial(minitx.ones(1, 1, 2), 1), ValueError, "multinomial: input must be 1-d or 2-d"),
    (lambda: minitx.multinomial(minitx.tensor([1, 2]), 1), TypeError, "multinomial: needs a floating dtype"),
    (lambda: minitx.poisson(minitx.tensor([-1.0, 2.0])), ValueError, "poisson: the rates must be finite and >= 0"),
    (lambda: minitx.poisson(minitx.tensor([np.nan])), ValueError, "poisson: the rates must be finite and >= 0"),
    (lambda: minitx.poisson(minitx.tensor([np.inf])), ValueError, "poisson: the rates must be finite and >= 0"),
    (lambda: minitx.poisson(minitx.tensor([2])), TypeError, "poisson: needs a floating dtype, got int64"),
    (lambda: minitx.binomial(minitx.tensor([5.5]), minitx.tensor([0.5])), ValueError,
     "binomial: count must hold whole numbers >= 0"),
    (lambda: minitx.binomial(minitx.tensor([-1.0]), minitx.tensor([0.5])), ValueError, "binomial: count must hold"),
    (lambda: minitx.binomial(minitx.tensor([np.inf]), minitx.tensor([0.5])), ValueError, "binomial: count must hold"),
    (lambda: minitx.binomial(minitx.tensor([5.0]), minitx.tensor([1.5])), ValueError,
     r"binomial: prob must hold numbers in \[0, 1\]"),
    (lambda: minitx.binomial(minitx.tensor([5.0]), minitx.tensor([np.nan])), ValueError, "binomial: prob must hold"),
    (lambda: minitx.binomial(minitx.tensor([5]), minitx.tensor([1])), TypeError, "binomial: needs a floating dtype"),
    (lambda: minitx.binomial(minitx.ones(2), minitx.ones(3)), ValueError,
     r"binomial: count of shape \(2,\) and prob of shape \(3,\) do not broadcast"),
])
def test_errors_name_the_function(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_pytorch_refuses_the_same_calls():
    """The errors above answer what PyTorch refuses (its messages and types differ)."""
    torch = import_torch()
    refused = [lambda: torch.randint(5, 5, (2,)), lambda: torch.normal(0.0, -1.0, (2,)),
               lambda: torch.bernoulli(torch.tensor([1.5])), lambda: torch.multinomial(torch.tensor([0.0, 0.0]), 1),
               lambda: torch.multinomial(torch.tensor([-1.0, 2.0]), 1), lambda: torch.multinomial(torch.ones(2), 3),
               lambda: torch.multinomial(torch.ones(1, 1, 2), 1), lambda: torch.rand(2, dtype=torch.int64),
               lambda: torch.normal(0.0, float("nan"), (2,)), lambda: torch.normal(torch.zeros(2), torch.tensor([np.nan, 1.0])),
               lambda: torch.zeros(2).normal_(0.0, float("nan")), lambda: torch.nn.init.normal_(torch.zeros(2), 0.0, -1.0),
               lambda: torch.zeros(2).uniform_(1.0, 0.0), lambda: torch.randint(0, 300, (2,), dtype=torch.uint8),
               lambda: torch.randint(-1, 2, (2,), dtype=torch.uint8), lambda: torch.randint(0, 3, (2,), dtype=torch.bool),
               lambda: torch.randint(0, 70000, (2,), dtype=torch.float16),
               lambda: torch.randint_like(torch.zeros(2, dtype=torch.int8), 200),
               lambda: torch.randperm(257, dtype=torch.uint8), lambda: torch.randperm(2050, dtype=torch.float16)]
    for call in refused:
        with pytest.raises((RuntimeError, NotImplementedError)):
            call()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_rand_in_a_narrow_dtype_never_reaches_one(dtype):
    """Drawn in float64, values just below 1 would round to 1.0 in 16 bits (one in 2,000 in
    float16): rand keeps them at the dtype's largest value below 1, so log(1 - u) stays finite."""
    minitx.manual_seed(0)
    for u in (minitx.rand(200_000, dtype=dtype), minitx.rand_like(minitx.zeros(200_000, dtype=dtype))):
        values = u.numpy().astype(np.float64)
        assert values.max() < 1 and values.min() >= 0 and u.dtype.name == dtype


def test_a_gpu_draw_takes_the_next_philox_pair_and_a_resumed_run_draws_it_again(monkeypatch):
    """minitx.random.uniform on a GPU (rrelu's slopes, gumbel_softmax's noise, dropout's reference
    mask) draws from the dropout kernels' Philox pairs, whose offsets get_state saves: after
    set_state the draws are the uninterrupted run's (CuPy's own generator state is not saved: a
    restored run drew its first numbers again). The CuPy branch runs here on NumPy; the words are
    tests/kernels/_reference.py's Philox (its dropout keep mask at p = 0.25, exact in float32)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("_reference", Path(__file__).parent / "kernels" / "_reference.py")
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    monkeypatch.setattr(mrandom.backend, "cuda_available", lambda: True)
    monkeypatch.setattr(mrandom.backend, "xp_for", lambda device: np)
    minitx.manual_seed(2 ** 40 + 7)
    first = mrandom.uniform((3, 5), np.float32, "cuda")
    state = json.loads(json.dumps(mrandom.get_state()))  # (as a checkpoint keeps it)
    second = mrandom.uniform((3, 5), np.float64, "cuda")
    mrandom.set_state(state)
    np.testing.assert_array_equal(mrandom.uniform((3, 5), np.float64, "cuda"), second)
    assert second.dtype == np.float64 and not np.array_equal(first, second)
    for u, offset in ((first, 0), (second, 1)):
        assert 0 <= u.min() and u.max() < 1
        np.testing.assert_array_equal((u >= 0.25).reshape(-1), ref.dropout_keep(15, 0.25, 2 ** 40 + 7, offset))
    # a replayed CUDA graph moves the base in device memory that the pairs' offsets are taken past
    from minitx.kernels import _runtime, philox_memory

    memory = philox_memory(_runtime.backend_for(np.empty(0)), 2 ** 40 + 7)
    memory[1] = 5
    try:
        np.testing.assert_array_equal(mrandom.uniform((3, 5), np.float32, "cuda"),
                                      mrandom.philox_uniform(np, (3, 5), 2 ** 40 + 7, 2 + 5))
    finally:
        memory[1] = 0
    minitx.manual_seed(3)  # the CPU draws are NumPy's generator's, as before
    np.testing.assert_array_equal(mrandom.uniform((4,), np.float32, "cpu"),
                                  np.random.default_rng(3).random(4, dtype=np.float32))
