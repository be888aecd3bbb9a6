# A tiny lab: the smallest thing the error cases can break.

# %% setup
import json
from pathlib import Path
import numpy as np
import matplotlib.pyplot as plt
out = Path('out')
out.mkdir(exist_ok=True)
x = np.arange(6, dtype=float).reshape(2, 3) / 4
print('x =', x)
fig, ax = plt.subplots(figsize=(4, 2))
ax.plot(x[0])
fig.savefig(out / 'line.png')

# %% save
(out / 'results.json').write_text(json.dumps({'x': x.tolist(), 'total': float(x.sum())}))
np.savez(out / 'tensors.npz', x=x)
print('saved')
