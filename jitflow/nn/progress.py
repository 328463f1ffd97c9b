"""The progress line fit, evaluate and predict print: verbose=1 redraws a bar with the
steps done, the time per step, the ETA and the running loss and metrics; verbose=2
prints one line per epoch."""
import sys
import time

from .callbacks import Callback

_BAR = 30
_REDRAW_SECONDS = 0.1


class ProgressBar(Callback):
    def __init__(self, verbose, stream=None):
        super().__init__()
        self.verbose = verbose
        self.stream = stream or sys.stdout

    def on_epoch_begin(self, epoch, logs=None):
        if self.verbose == 1:
            self._write(f"Epoch {epoch + 1}/{self.params['epochs']}\n")
        self._begin()

    def on_train_batch_end(self, batch, logs=None):
        self.done = batch + 1
        if self.verbose == 1 and time.perf_counter() - self.drawn > _REDRAW_SECONDS:
            self._draw(batch + 1, logs, final=False)

    def on_epoch_end(self, epoch, logs=None):
        steps = self.done
        if self.verbose == 1:
            self._draw(steps, logs, final=True)
        elif self.verbose == 2:
            self._write(f"Epoch {epoch + 1}/{self.params['epochs']} - "
                        f"{self._timing(steps)}{_logs_text(logs)}\n")

    def _begin(self):
        self.start = time.perf_counter()
        self.drawn = 0.0
        self.drawn_width = 0
        self.done = 0

    def _draw(self, done, logs, final):
        known = self.params["steps"]  # None for an iterable of batches without len()
        steps = done if final or known is None else known
        elapsed = time.perf_counter() - self.start
        if final:
            progress = f"{done}/{done} [{'=' * _BAR}] - {self._timing(done)}"
        elif known is None:
            progress = f"{done}/? - {elapsed:.0f}s"
        else:
            filled = _BAR * done // max(steps, 1)
            bar = ("=" * filled + ">" + "." * _BAR)[:_BAR]
            eta = elapsed / done * (steps - done)
            progress = f"{done:{len(str(steps))}d}/{steps} [{bar}] - ETA: {eta:.0f}s"
        line = progress + _logs_text(logs)
        # Spaces cover what is left of a longer line drawn before.
        self._write("\r" + line.ljust(self.drawn_width) + ("\n" if final else ""))
        self.drawn_width = len(line)
        self.drawn = time.perf_counter()

    def _timing(self, steps):
        elapsed = time.perf_counter() - self.start
        return f"{elapsed:.0f}s {1000 * elapsed / max(steps, 1):.0f}ms/step"

    def _write(self, text):
        self.stream.write(text)
        self.stream.flush()


def _logs_text(logs):
    return "".join(f" - {name}: {value:.4f}" for name, value in (logs or {}).items())
