"""Windows onto the engine: graph drawing, the backward trace, anomaly mode (minitx.autograd)."""
import inspect
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import minitx
import minitx.functional as F
from minitx.autograd import detect_anomaly, engine, function, graph, trace_backward
from minitx.nn import Linear


def leaf(values, dtype="float64"):
    return minitx.tensor(values, dtype=dtype, requires_grad=True)


def dot_nodes_and_edges(text):
    """{node id: label}, [(from, to)] parsed from to_dot's output."""
    nodes = dict(re.findall(r'^\s+(\w+) \[label="((?:[^"\\]|\\.)*)"', text, re.M))
    edges = re.findall(r"^\s+(\w+) -> (\w+);", text, re.M)
    return nodes, edges


# ---------------------------------------------------------------- public access to the graph

def test_grad_fn_and_inputs_are_the_public_view_of_the_graph():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = x * w
    assert x.grad_fn is None and y.grad_fn is not None and y.grad_fn.name == "mul"
    assert y.grad_fn.inputs[0] is x and y.grad_fn.inputs[1] is w
    with pytest.raises(AttributeError):
        y.grad_fn.inputs = ()
    with minitx.no_grad():
        assert (x * w).grad_fn is None


# ---------------------------------------------------------------- to_dot, render, to_tree

def test_to_dot_has_a_node_per_tensor_and_op_and_edges_along_the_data_flow():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    c = minitx.tensor([1.0, 1.0], dtype="float64")
    y = ((x * w) + c).sum()
    nodes, edges = dot_nodes_and_edges(graph.to_dot(y, names={"x": x, "w": w, "c": c, "y": y}))
    by_label = {label.split("\\n")[0]: node for node, label in nodes.items()}
    assert sorted(n for n in nodes if n.startswith("op")) == ["op0", "op1", "op2"]  # sum, add, mul
    assert len([n for n in nodes if n.startswith("t")]) == 6  # y, x*w+c, x*w, x, w, c
    mul = next(n for n, label in nodes.items() if label == "mul")
    assert (by_label["x"], mul) in edges and (by_label["w"], mul) in edges
    s = next(n for n, label in nodes.items() if label == "sum")
    assert (s, by_label["y"]) in edges and not any(a == by_label["y"] for a, _ in edges)
    assert nodes[by_label["x"]] == "x\\n(2,) float64\\nrequires_grad"
    assert nodes[by_label["c"]] == "c\\n(2,) float64\\nconstant"


def test_to_dot_names_parameters_of_a_module_and_shows_gradient_shapes():
    minitx.manual_seed(0)
    layer = Linear(3, 2)
    x = minitx.tensor(np.ones((4, 3)), dtype="float32")
    loss = layer(x).sum()
    before = graph.to_dot(loss, names=layer)
    assert "weight\\n(2, 3) float32\\nrequires_grad" in before and "bias\\n(2,) float32" in before
    assert "grad" not in before.replace("requires_grad", "")
    loss.backward()
    after = graph.to_dot(loss, names=[layer, {"x": x}], grads=True, title='a "quoted" title')
    assert "weight\\n(2, 3) float32\\nrequires_grad\\ngrad (2, 3)" in after
    assert 'label="a \\"quoted\\" title"' in after
    with pytest.raises(TypeError, match="names must be a Module"):
        graph.to_dot(loss, names=42)


def test_to_tree_prints_each_tensor_once_and_refers_back():
    x = leaf([1.0, 2.0])
    h = F.tanh(x)
    y = (h * h).sum()
    tree = graph.to_tree(y, names={"x": x, "h": h, "y": y}).splitlines()
    assert tree == [
        "[0] y () float64 = sum",
        "└─ [1] (2,) float64 = mul",
        "   ├─ [2] h (2,) float64 = tanh",
        "   │  └─ [3] x (2,) float64 (requires_grad)",
        "   └─ [2] h (2,) float64 (above)",
    ]
    y.backward()
    assert graph.to_tree(y, names={"x": x}, grads=True).splitlines()[-2].endswith("(requires_grad, grad (2,))")


def test_a_stale_view_is_drawn_with_the_graph_backward_walks_from_it():
    w = leaf([1.0, 2.0, 3.0])
    h = w * 1.0
    v = h[1:]  # a view of h ...
    h.exp_()  # ... made stale by a recorded write into h: backward from v goes through exp
    names = {"w": w, "h": h, "v": v}
    tree = graph.to_tree(v, names=names).splitlines()
    assert tree[:3] == ["[0] v (2,) float64 = get_item", "└─ [1] h (3,) float64 = exp",
                        "   └─ [2] (3,) float64 = mul"]
    u = w * 1.0
    view = u[1:]
    u.exp_()
    nodes, _ = dot_nodes_and_edges(graph.to_dot(view))
    assert "exp" in nodes.values()


def test_a_chain_deeper_than_the_recursion_limit_draws():
    x = leaf(1.0)
    y = x
    for _ in range(3_000):
        y = F.neg(y)
    assert len(graph.to_tree(y).splitlines()) == 3_001
    assert graph.to_dot(y).count(" -> ") == 6_000


def test_render_without_graphviz_writes_the_dot_text_and_says_how(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` here
    x = leaf([1.0, 2.0])
    out = graph.render((x * x).sum(), tmp_path / "g.svg", names={"x": x})
    assert out == tmp_path / "g.dot" and out.read_text() == graph.to_dot((x * x).sum(), names={"x": x})
    assert not (tmp_path / "g.svg").exists()
    message = capsys.readouterr().err
    assert "'dot' program is not on PATH" in message and f"dot -Tsvg {out}" in message
    with pytest.raises(ValueError, match="use a .svg, .png, .pdf or .dot file"):
        graph.render(x, tmp_path / "g.jpg")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_render_with_graphviz_draws_an_svg(tmp_path):
    x = leaf([1.0, 2.0])
    out = graph.render(F.exp(x).sum(), tmp_path / "g.svg", names={"x": x})
    text = Path(out).read_text()
    assert out == tmp_path / "g.svg" and "<svg" in text and ">exp<" in text


# ---------------------------------------------------------------- trace_backward

def test_the_trace_lists_every_op_in_engine_order_with_shapes_and_norms():
    xv, wv = np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([0.3, -0.7])
    x, w = leaf(xv), leaf(wv)
    with trace_backward() as trace:
        F.tanh(x @ w).sum().backward()
    assert not engine.backward_hooks
    assert [r.op for r in trace.rows] == ["sum", "tanh", "matmul"]
    dz = 1 - np.tanh(xv @ wv) ** 2  # d sum(tanh(z)) / dz
    expected = [((), 1.0, [((2,), np.sqrt(2))]),
                ((2,), np.sqrt(2), [((2,), np.linalg.norm(dz))]),
                ((2,), np.linalg.norm(dz), [((2, 2), np.linalg.norm(np.outer(dz, wv))),
                                            ((2,), np.linalg.norm(xv.T @ dz))])]
    for row, (dy_shape, dy_norm, grads) in zip(trace.rows, expected):
        assert row.dy_shape == dy_shape and row.dy_norm == pytest.approx(dy_norm)
        assert [g[0] for g in row.grads] == [g[0] for g in grads]
        assert [g[1] for g in row.grads] == pytest.approx([g[1] for g in grads])
    lines = str(trace).splitlines()
    assert lines[0].split()[:4] == ["#", "op", "dy", "shape"] and set(lines[1]) == {"-"}
    assert len(lines) == 2 + 3 and lines[4].split()[:2] == ["2", "matmul"]


def test_the_trace_shows_inputs_without_a_gradient_as_a_dash():
    logits = leaf(np.zeros((2, 3)))
    with trace_backward() as trace:
        F.cross_entropy(logits, minitx.tensor([0, 2])).backward()
    assert trace.rows[0].op == "cross_entropy" and trace.rows[0].grads[1] is None
    assert str(trace).splitlines()[-1].rstrip().endswith("; -")


def test_the_trace_tells_two_ops_of_one_name_apart_by_forward_order_and_line():
    """Two matmuls gave two rows "matmul" a reader could not match to the code: an op whose forward
    ran in the block gets its place in forward order and the user's line that called it."""
    x, w1, w2 = leaf(np.ones((2, 3))), leaf(np.ones((3, 3))), leaf(np.ones((3, 2)))
    with trace_backward() as trace:
        first = inspect.currentframe().f_lineno + 1  # the line below
        h = x @ w1
        y = h @ w2
        y.sum().backward()
    assert not function.forward_hooks and not engine.backward_hooks  # off again: no op pays for it
    matmuls = [r for r in trace.rows if r.op == "matmul"]
    assert [(r.forward_index, r.site) for r in matmuls] == [(1, f"{__file__}:{first + 1}"), (0, f"{__file__}:{first}")]
    lines = str(trace).splitlines()
    assert lines[0].split()[5:8] == ["forward", "created", "at"]
    second, first_made = [line for line in lines[2:] if line.split()[1] == "matmul"]
    assert re.search(rf"e[+-]\d+  1 +test_autograd_debug\.py:{first + 1}  ", second)  # after |dy|
    assert re.search(rf"e[+-]\d+  0 +test_autograd_debug\.py:{first}  ", first_made)


@pytest.mark.parametrize("outermost", ["<frozen runpy>", "minitx"])
def test_the_trace_names_no_site_for_minitx_own_programs(monkeypatch, outermost):
    """Under python -m minitx.translate the only frame outside minitx is runpy's, and where none is
    outside, the frames found end on a minitx one: neither is the user's line, so the site is None."""
    from minitx.autograd import debug

    path = "<frozen runpy>" if outermost == "<frozen runpy>" else str(Path(debug.__file__).with_name("engine.py"))
    monkeypatch.setattr(debug, "_creation_site", lambda frame: [(path, 88, "code")])
    x = leaf([1.0, 2.0])
    with trace_backward() as trace:
        F.exp(x).sum().backward()
    assert [(r.op, r.forward_index, r.site) for r in trace.rows] == [("sum", 1, None), ("exp", 0, None)]


def test_the_trace_of_backward_alone_leaves_out_where_ops_came_from():
    """Ops made before the trace: their rows hold None (backward cannot know), the table leaves the
    columns out; beside ops made in the block, theirs read "-"."""
    x = leaf([1.0, 2.0])
    loss = F.exp(x).sum()
    with trace_backward() as trace:
        loss.backward()
    assert [(r.op, r.forward_index, r.site) for r in trace.rows] == [("sum", None, None), ("exp", None, None)]
    assert "forward" not in str(trace).splitlines()[0]
    x.grad = None
    y = F.exp(x)
    with trace_backward() as trace:
        (y * 2.0).sum().backward()
    assert [r.forward_index for r in trace.rows] == [1, 0, None]
    assert str(trace).splitlines()[-1].split()[:6] == ["2", "exp", "(2,)", f"{np.sqrt(8):.3e}", "-", "-"]


class MLP(minitx.nn.Module):
    """Two linear layers with a ReLU between, and an op of its own after them (``* 2``)."""

    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.fc2 = Linear(3, 4), minitx.nn.ReLU(), Linear(4, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * 2.0


def hooked(model):
    """The modules of ``model`` that hold a forward pre-hook or forward hook."""
    return [name for name, m in model.named_modules() if m.__dict__.get("_forward_pre_hooks")
            or m.__dict__.get("_forward_hooks")]


def modules_by_op(trace):
    return [(r.op, r.module) for r in trace.rows]


def test_the_trace_of_a_model_names_the_module_that_ran_each_op():
    """Every op of a model called from one line shares that line: model= names the module too."""
    minitx.manual_seed(0)
    model = MLP()
    x = minitx.tensor(np.ones((5, 3)), dtype="float32")
    with trace_backward(model=model) as trace:
        assert hooked(model) == ["", "fc1", "act", "fc2"]
        model(x).sum().backward()
    assert hooked(model) == []
    assert modules_by_op(trace) == [("sum", None), ("mul", ""), ("linear", "fc2"), ("relu", "act"),
                                    ("linear", "fc1")]
    assert model.get_submodule(trace.rows[2].module) is model.fc2
    lines = str(trace).splitlines()
    assert lines[0].split()[5:9] == ["forward", "created", "at", "module"]
    column = lines[0].index("module")
    assert [line[column:].split()[0] for line in lines[2:]] == ["-", "(MLP)", "fc2", "act", "fc1"]


def test_the_trace_names_the_innermost_module_and_the_outer_one_again_after_it():
    class Block(minitx.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = minitx.nn.Sequential(Linear(3, 3))

        def forward(self, x):
            return F.tanh(self.inner(x))

    model = minitx.nn.Sequential(Block(), Block())
    with trace_backward(model=model) as trace:
        model(minitx.tensor(np.ones((2, 3)), dtype="float32")).sum().backward()
    assert modules_by_op(trace) == [("sum", None), ("tanh", "1"), ("linear", "1.inner.0"),
                                    ("tanh", "0"), ("linear", "0.inner.0")]


def test_a_module_called_twice_or_held_twice_is_named_at_each_call_by_its_first_name():
    class Twice(minitx.nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = Linear(3, 3)
            self.again = self.shared  # one module under two names

        def forward(self, x):
            return self.again(F.tanh(self.shared(x)))

    model = Twice()
    with trace_backward(model=model) as trace:
        model(minitx.tensor(np.ones((2, 3)), dtype="float32")).sum().backward()
    assert [(r.op, r.forward_index, r.module) for r in trace.rows] == [
        ("sum", 3, None), ("linear", 2, "shared"), ("tanh", 1, ""), ("linear", 0, "shared")]
    assert hooked(model) == []


class Failing(minitx.nn.Module):
    """Raises in the middle of its forward while ``fail`` is set."""

    fail = True

    def forward(self, x):
        y = x * 3.0
        if self.fail:
            raise ValueError("failing on purpose")
        return y


def test_a_forward_that_raises_leaves_no_module_on_the_trace_and_no_hook_after_it():
    """A forward that raises never reaches its forward hook: the next op and the next module call
    must still see where they run, not the call that ended."""

    class Tolerant(minitx.nn.Module):
        def __init__(self):
            super().__init__()
            self.failing, self.fc = Failing(), Linear(3, 3)

        def forward(self, x):
            try:
                x = self.failing(x)
            except ValueError:
                pass  # caught here, inside the model: this forward runs on
            return self.fc(x) - 1.0

    model = Tolerant()
    own = model.fc.register_forward_hook(lambda m, args, output: None)  # the user's: it stays
    x = minitx.tensor(np.ones((2, 3)), dtype="float32", requires_grad=True)
    with trace_backward(model=model) as trace:
        with pytest.raises(ValueError, match="on purpose"):
            model.failing(x)  # raises out of the model
        (x * 4.0).sum().backward()  # outside any module
        x.grad = None
        model(x).sum().backward()
    assert modules_by_op(trace) == [("sum", None), ("mul", None),
                                    ("sum", None), ("sub", ""), ("linear", "fc")]
    assert hooked(model) == ["fc"] and list(model.fc._forward_hooks.values()) == [own.hooks[own.id]]
    with pytest.raises(ValueError), trace_backward(model=model):  # an exception out of the block too
        model.failing(x)
    assert hooked(model) == ["fc"] and not function.forward_hooks and not engine.backward_hooks
    model.failing.fail = False
    with trace_backward(model=model) as trace:
        model(x).sum().backward()
    assert modules_by_op(trace) == [("sum", None), ("sub", ""), ("linear", "fc"), ("mul", "failing")]


def test_the_trace_without_a_model_hooks_no_module_and_its_rows_name_none():
    minitx.manual_seed(0)
    model, other = MLP(), MLP()
    x = minitx.tensor(np.ones((5, 3)), dtype="float32")
    with trace_backward() as trace:
        assert hooked(model) == []
        model(x).sum().backward()
    assert [r.module for r in trace.rows] == [None] * 5 and "module" not in str(trace).splitlines()[0]
    with trace_backward(model=other) as trace:
        assert hooked(model) == []  # only the model named
        model(x).sum().backward()
    assert [r.module for r in trace.rows] == [None] * 5
    with pytest.raises(TypeError, match="model must be a minitx nn.Module \\(or None\\), got str"):
        trace_backward(model="MLP")


# ---------------------------------------------------------------- detect_anomaly

def test_anomaly_mode_names_the_forward_op_and_the_users_line():
    a = leaf([0.0, 1.0])
    with detect_anomaly():
        with pytest.raises(FloatingPointError) as caught:
            F.log(a - 2.0)  # log of negative numbers
    message = str(caught.value)
    assert "the forward of 'log' produced NaN in its output (2,) float64" in message
    assert "inputs: 0: (2,) float64" in message
    assert f"created at {__file__}:" in message and "F.log(a - 2.0)" in message
    assert not function.forward_hooks and not engine.backward_hooks


def test_anomaly_mode_names_the_backward_op_and_where_it_was_created():
    a = leaf([0.0, 4.0])
    with detect_anomaly():
        root = F.sqrt(a)  # d sqrt(a) / da = 1 / (2 sqrt a): inf at 0
        loss = root.sum()
        with pytest.raises(FloatingPointError) as caught:
            loss.backward()
    message = str(caught.value)
    assert "the backward of 'sqrt' produced inf in the gradient for input 0 (2,) float64" in message
    assert "root = F.sqrt(a)" in message and "via minitx/ops/elementwise.py" in message


def test_anomaly_mode_says_which_input_already_held_nan_and_spots_it_inside_modules():
    minitx.manual_seed(0)
    layer = Linear(2, 2)
    layer.weight.data[...] = np.nan
    with detect_anomaly(), pytest.raises(FloatingPointError) as caught:
        layer(minitx.tensor([[1.0, 2.0]]))
    message = str(caught.value)
    assert "forward of 'linear'" in message and "1: (2, 2) float32 (held NaN already)" in message
    assert "via minitx/nn/layers.py" in message and "layer(minitx.tensor" in message


def test_anomaly_mode_reports_what_an_input_held_at_forward_time_after_a_write_into_it():
    w, a = leaf([1000.0], dtype="float32"), leaf([2.0], dtype="float32")
    with detect_anomaly(allow_inf=True), pytest.raises(FloatingPointError) as caught:
        h = F.exp(w)  # inf, allowed
        y = h * a  # mul's gradient for a is dy * h = inf
        h.zero_()  # a recorded write: mul now holds a placeholder for h's old values
        y.sum().backward()
    message = str(caught.value)
    assert "backward of 'mul' produced inf in the gradient for input 1" in message
    assert "inputs: 0: (1,) float32 (held inf already), 1: (1,) float32" in message


def test_anomaly_mode_names_the_users_line_however_deep_the_op_ran_inside_minitx():
    from minitx.nn.transformer import EncoderLayer

    minitx.manual_seed(0)
    model = minitx.nn.Sequential(EncoderLayer(8, num_heads=2, d_ff=16, dropout=0.0, norm_first=True))
    h = minitx.tensor(np.full((2, 3, 8), np.nan), dtype="float32")
    with detect_anomaly(), pytest.raises(FloatingPointError) as caught:
        model(h)  # the layer norm, 8 frames deep in minitx, makes the first NaN
    message = str(caught.value)
    assert f"created at {__file__}:" in message and "model(h)" in message
    last = message.splitlines()[-1]  # the via lines run from the user's call in to the op
    assert last.startswith("    via minitx/ops/norm.py:") and last.endswith(" in layer_norm")


def test_anomaly_mode_counts_a_file_beside_the_package_as_the_users():
    import os

    from minitx.autograd import debug

    scratch = os.path.join(os.path.dirname(debug._PACKAGE), "minitx_scratch.py")  # not inside minitx/
    namespace = {"F": F, "a": leaf([-1.0])}
    with detect_anomaly(), pytest.raises(FloatingPointError) as caught:
        exec(compile("F.log(a)", scratch, "exec"), namespace)
    assert f"created at {scratch}:1 in <module>" in str(caught.value)  # not this file's exec line


def test_anomaly_mode_catches_an_inf_the_engine_makes_adding_finite_gradients():
    w = leaf([1e-30], dtype="float32")
    with detect_anomaly():
        y = (w * 3e38 + w * 3e38).sum()  # each mul's gradient for w is 3e38; their float32 sum is inf
        with pytest.raises(FloatingPointError) as caught:
            y.backward()
    message = str(caught.value)
    assert "the gradient of a tensor (a leaf (1,) float32) holds inf, though the 2 gradients ops sent it" in message
    assert message.count(f"'mul' created at {__file__}:") == 2
    assert not engine.gradient_hooks


def test_anomaly_mode_names_only_the_senders_of_its_own_walk():
    """autograd.grad(h, [x]) leaves w out of its walk, though mul sent w a gradient: a later
    walk's overflow at w names its own two muls, not that one too."""
    w, x = leaf([1e38], dtype="float32"), leaf([1.0], dtype="float32")
    with detect_anomaly():
        h = x * w  # (a mul of another line than the two below)
        minitx.autograd.grad(h.sum(), [x])
        y = w * 1.0 + w * 1.0  # 2e38 + 2e38 overflows float32
        with pytest.raises(FloatingPointError) as caught:
            y.backward(minitx.tensor(np.float32([2e38])))
    message = str(caught.value)
    assert "the 2 gradients ops sent it" in message and message.count("'mul' created at") == 2


def test_anomaly_mode_catches_a_grad_that_overflows_as_backward_accumulates_into_it():
    w = leaf([1e-30], dtype="float32")
    (w * 3e38).sum().backward()  # .grad 3e38, finite
    with detect_anomaly(), pytest.raises(FloatingPointError, match=r"the \.grad of a tensor \(a leaf \(1,\) "
                                                                   r"float32\) holds inf after this backward"):
        (w * 3e38).sum().backward()


def test_allow_inf_lets_masks_through_but_not_nan():
    x = leaf([[1.0, 2.0, 3.0]])
    mask = minitx.tensor([[True, False, True]])
    with detect_anomaly(), pytest.raises(FloatingPointError, match="forward of 'masked_fill' produced inf"):
        x.masked_fill(mask, -np.inf)
    with detect_anomaly(allow_inf=True):
        F.softmax(x.masked_fill(mask, -np.inf), axis=-1).sum().backward()
        with pytest.raises(FloatingPointError, match="produced NaN"):
            x * np.nan


def test_anomaly_mode_is_off_by_default_and_ops_made_before_it_have_no_site():
    a = leaf([0.0, 4.0])
    assert np.isnan(F.log(a - 2.0).numpy()).any()  # no error: the mode is off
    loss = F.sqrt(a).sum()
    with detect_anomaly(), pytest.raises(FloatingPointError, match="no creation site recorded"):
        loss.backward()
