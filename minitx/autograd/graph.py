"""Drawing the graph that backward will walk: Graphviz DOT text, an image, or a text tree.

    from minitx.autograd.graph import render, to_dot, to_tree

    loss = model(src, tgt)
    print(to_tree(loss, names=model))            # an indented tree in the terminal
    render(loss, "graph.svg", names=model)      # an image, when Graphviz's `dot` is installed
    dot_text = to_dot(loss, names=locals())     # the DOT text itself

The graph is read through the public API: ``tensor.grad_fn`` is the op that computed a
tensor (None for a leaf) and ``op.inputs`` the tensors it was applied to; a root that is a stale
view (a view of a tensor written since) is made again first, as a backward from it would. There is one node per
tensor (its name where known, shape, dtype, whether it requires a gradient) and one per op;
edges run the way data flows, from an op's inputs to the op and from the op to its output.

``names`` says what to call the tensors: a Module (its ``named_parameters``), a dict of
name -> tensor (``locals()`` works: values that are not tensors are ignored), or a list of
those. Unnamed tensors show their shape only. After ``backward()``, ``grads=True`` adds the
shape of every ``.grad`` that is filled in.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from minitx.autograd.tensor import Tensor, _StaleView
from minitx.autograd.writes import refresh


def _name_table(names) -> dict:
    """id(tensor) -> name, from a Module, a dict name -> tensor, or a list of those."""
    if names is None:
        return {}
    if isinstance(names, (list, tuple)):
        table = {}
        for item in names:
            table.update(_name_table(item))
        return table
    if hasattr(names, "named_parameters"):
        return {id(p): name for name, p in names.named_parameters()}
    if isinstance(names, dict):
        return {id(t): str(name) for name, t in names.items() if isinstance(t, Tensor)}
    raise TypeError(f"graph: names must be a Module, a dict of name -> Tensor or a list of them, "
                    f"got {type(names).__name__}")


def _as_walked(root):
    """``root`` with the graph a backward from it walks: a stale view (one whose base a recorded
    write changed since, minitx.autograd.writes) is made again first, as backward's reading it
    does; its grad_fn is the op of its old values until then. The tensors behind the root need
    nothing: the ops hold a written tensor's old node, never a stale view."""
    if not isinstance(root, Tensor):
        raise TypeError(f"graph: expected a Tensor, got {type(root).__name__}")
    if type(root) is _StaleView:
        refresh(root)
    return root


def _walk(root):
    """Tensors and ops reachable from ``root``: ([tensors], [ops]), each numbered in the order
    found from the root (an explicit stack: a 100,000-op chain is fine)."""
    root = _as_walked(root)
    tensors, ops, seen = [], [], set()
    stack = [root]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        tensors.append(t)
        fn = t.grad_fn
        if fn is not None:
            ops.append(fn)
            stack.extend(reversed(fn.inputs))
    return tensors, ops


def _tensor_label(t, names, grads) -> list:
    lines = [names[id(t)]] if id(t) in names else []
    lines.append(f"{t.shape} {t.dtype.name}")
    if t.grad_fn is None:
        lines.append("requires_grad" if t.requires_grad else "constant")
    if grads and t.grad is not None:
        lines.append(f"grad {t.grad.shape}")
    return lines


def _quote(text: str) -> str:
    """A DOT string: quotes and backslashes escaped, line breaks as DOT's \\n."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(root: Tensor, names=None, grads: bool = False, title: str | None = None) -> str:
    """The graph that produced ``root`` as Graphviz DOT text (see the module docstring).

    Leaves that require a gradient (parameters, inputs being optimized) are filled, constants
    dashed, op nodes are boxes; the root is drawn with a double border.
    """
    names = _name_table(names)
    tensors, ops = _walk(root)
    tensor_id = {id(t): f"t{k}" for k, t in enumerate(tensors)}
    op_id = {id(fn): f"op{k}" for k, fn in enumerate(ops)}
    lines = ["digraph minitx {", "  rankdir=TB;", '  graph [fontname="Helvetica"];',
             '  node [fontname="Helvetica", fontsize=10];']
    if title:
        lines.append(f"  label={_quote(title)}; labelloc=t;")
    for t in tensors:
        style = ["shape=ellipse"]
        if t.grad_fn is None:
            style.append('style=filled, fillcolor="#cfe2f3"' if t.requires_grad else "style=dashed")
        if t is root:
            style.append("peripheries=2")
        label = _quote("\n".join(_tensor_label(t, names, grads)))
        lines.append(f"  {tensor_id[id(t)]} [label={label}, {', '.join(style)}];")
    for t in tensors:
        fn = t.grad_fn
        if fn is None:
            continue
        node = op_id[id(fn)]
        lines.append(f'  {node} [label={_quote(fn.name)}, shape=box, style="rounded,filled", '
                     'fillcolor="#fde9c9"];')
        for parent in fn.inputs:
            lines.append(f"  {tensor_id[id(parent)]} -> {node};")
        lines.append(f"  {node} -> {tensor_id[id(t)]};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(root: Tensor, path, names=None, grads: bool = False, title: str | None = None) -> Path:
    """Draw the graph into ``path`` (.svg, .png or .pdf) with Graphviz's ``dot`` program.

    Without ``dot`` on PATH nothing is drawn: the DOT text goes to ``path`` with the suffix
    ``.dot`` and a message on stderr says how to draw it. Returns the path written.
    """
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in ("svg", "png", "pdf", "dot"):
        raise ValueError(f"render: cannot draw to {path.name!r}; use a .svg, .png, .pdf or .dot file")
    text = to_dot(root, names=names, grads=grads, title=title)
    dot = shutil.which("dot")
    if fmt == "dot" or dot is None:
        out = path.with_suffix(".dot")
        out.write_text(text)
        if fmt != "dot":
            print(f"render: Graphviz's 'dot' program is not on PATH, so {path} was not drawn; the DOT text is "
                  f"in {out}. Install Graphviz (apt-get install graphviz, brew install graphviz) and run "
                  f"'dot -T{fmt} {out} -o {path}', or paste the text into any Graphviz viewer.", file=sys.stderr)
        return out
    done = subprocess.run([dot, f"-T{fmt}", "-o", str(path)], input=text, text=True, capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"render: 'dot -T{fmt}' failed (exit {done.returncode}): {done.stderr.strip()}")
    return path


def to_tree(root: Tensor, names=None, grads: bool = False) -> str:
    """The graph as an indented tree, the root on top, each tensor followed by the op that
    computed it and that op's inputs. A tensor reached a second time (used by two ops) is
    printed once; later it shows its number ``[k]`` and ``(above)``."""
    names = _name_table(names)
    root = _as_walked(root)
    number: dict = {}
    lines = []
    stack = [(root, "", "")]  # (tensor, prefix of its line, prefix of its inputs' lines)
    while stack:
        t, lead, child_lead = stack.pop()
        head = f"{t.shape} {t.dtype.name}"
        if id(t) in names:
            head = f"{names[id(t)]} {head}"
        if id(t) in number:
            lines.append(f"{lead}[{number[id(t)]}] {head} (above)")
            continue
        number[id(t)] = len(number)
        grad = f"grad {t.grad.shape}" if grads and t.grad is not None else ""
        fn = t.grad_fn
        if fn is None:
            kind = "requires_grad" if t.requires_grad else "constant"
            lines.append(f"{lead}[{number[id(t)]}] {head} ({kind}{', ' + grad if grad else ''})")
            continue
        lines.append(f"{lead}[{number[id(t)]}] {head} = {fn.name}{' (' + grad + ')' if grad else ''}")
        last = len(fn.inputs) - 1
        for k in range(last, -1, -1):  # pushed in reverse: popped in order
            stack.append((fn.inputs[k], child_lead + ("└─ " if k == last else "├─ "),
                          child_lead + ("   " if k == last else "│  ")))
    return "\n".join(lines)


__all__ = ["to_dot", "render", "to_tree"]
