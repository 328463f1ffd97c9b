"""DOT text rendered to SVG by Graphviz's `dot` program, when it is installed."""
import shutil
import subprocess


class GraphvizNotFoundError(RuntimeError):
    """Graphviz's `dot` program is not on the PATH."""


def render_svg(dot_text, timeout=60):
    """The SVG text Graphviz draws from `dot_text`."""
    program = shutil.which("dot")
    if program is None:
        raise GraphvizNotFoundError(
            "to_svg needs Graphviz's `dot` program, which is not on the PATH: install "
            "Graphviz (e.g. `apt install graphviz`, `brew install graphviz`), or use "
            "to_dot() and render the text elsewhere")
    done = subprocess.run([program, "-Tsvg"], input=dot_text, capture_output=True,
                          text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"Graphviz's dot failed (exit status {done.returncode}): "
                           f"{done.stderr.strip()}")
    return done.stdout
