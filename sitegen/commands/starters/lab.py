# Lab __ID__: computed by every build, shown on content/__PAGE__, downloadable as a notebook.
#
# Each `# %% name` line starts a cell (jupytext's percent format: Jupyter and VS Code open this
# file as a notebook). The page shows a cell with `::: cell name`: its code and what it printed.
# Run by hand (`python __SCRIPT__`) it writes its files into outputs/; the build runs it in an
# empty folder of its own, where it may write, and publishes what it wrote:
#   results.json   required: the numbers the page shows as {{ name }} and `::: table name`
#   *.png          each figure a cell saves: the page shows it as ![what it shows](figure:NAME.png)
#   anything else  a download (describe it under `describe:` in site.yaml)
# A failed assert fails the build, naming this file and line: check what must hold.

# %% setup
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

SEED = 20260918                      # fix every random choice, so every build gives the same numbers
rng = np.random.default_rng(SEED)
out = Path("outputs")
out.mkdir(exist_ok=True)

x = np.linspace(0.0, 1.0, 5)
y = x ** 2
print("x =", x)
print("y =", y)

# %% figure
fig, ax = plt.subplots(figsize=(4, 3))
ax.plot(x, y, marker="o")
ax.set_xlabel("x")
ax.set_ylabel("y = x^2")
fig.savefig(out / "curve.png", dpi=200)     # twice the size it is shown at: sharp on phones

# %% save
table = np.stack([x, y], axis=1)     # a 2-D array: the page shows it with `::: table`
assert np.allclose(table[:, 1], table[:, 0] ** 2), "y must be x squared"
results = {"seed": SEED, "x": x.tolist(), "y": y.tolist(), "table": table.tolist(), "total": float(y.sum())}
(out / "results.json").write_text(json.dumps(results, indent=2))
print("total =", results["total"])
