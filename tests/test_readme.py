"""The README's IR example prints exactly what the README says it prints."""
import contextlib
import io
import os
import re

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "README.md")


def test_readme_ir_example_output_is_current():
    text = open(README).read()
    code = re.search(r"## Inspecting the IR\s+```python\n(.*?)```", text, re.S).group(1)
    expected = re.search(r"prints\n\n```\n(.*?)```", text, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue() == expected


def test_readme_training_example_trains():
    text = open(README).read()
    code = re.search(r"## Training\s+```python\n(.*?)```", text, re.S).group(1)
    namespace = {}
    exec(compile("import jitflow\n" + code, "README.md", "exec"), namespace)
    import jitflow
    (images, labels), _ = jitflow.datasets.load_digits()
    losses = [float(namespace["train_step"](images[:64], labels[:64])) for _ in range(30)]
    assert losses[-1] < 0.7 * losses[0]
