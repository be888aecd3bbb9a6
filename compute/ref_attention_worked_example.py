# Illustrated reference: a worked read-back with scalar q, k, v, then the full layer.
#
# The first cells are their own small computation (three tokens, d = 1), not
# LAB 09's weights. The last cell follows LAB 09's published trace
# (inputs/lab09/results.json) stage by stage through the whole layer.

# %% scalars
import json
from pathlib import Path
import numpy as np
import matplotlib.pyplot as plt
np.set_printoptions(precision=4, suppress=True)
OUTPUT = Path('outputs/attention-worked-example')
OUTPUT.mkdir(parents=True, exist_ok=True)
plt.rcParams.update({'font.size': 11, 'figure.dpi': 120, 'savefig.dpi': 160,
                     'axes.spines.top': False, 'axes.spines.right': False})
q = np.array([1.0, -0.5, 2.0])     # one query per token
k = np.array([0.8, -1.2, 0.3])     # one key per token
v = np.array([1.0, 2.0, -1.0])     # one value per token
d = 1                              # each q, k, v is a single number
scores = np.outer(q, k) / np.sqrt(d)
print('scores[i, j] = q[i] * k[j] / sqrt(d):\n', scores)

# %% softmax
# Softmax along the key axis, after subtracting each row's maximum (same result, no overflow).
shifted = scores - scores.max(axis=1, keepdims=True)
exp = np.exp(shifted)
attention = exp / exp.sum(axis=1, keepdims=True)
assert np.allclose(attention.sum(axis=1), 1), 'each query row of attention must sum to 1'
print('exp(score - row max):\n', exp)
print('attention (rows sum to 1):\n', attention)

# %% readback
read = attention @ v
terms = attention[0] * v               # query 0, term by term
assert np.isclose(terms.sum(), read[0]), 'term-by-term read-back differs'
print('query 0 reads', ' + '.join(f'{a:.4f}*{b:.1f}' for a, b in zip(attention[0], v)), f'= {read[0]:.4f}')
print('read-back for every query:', read)
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), layout='constrained')
for ax, (title, M, cmap, lim) in zip(axes[:2], [('分数 q·k', scores, 'RdBu_r', (-3, 3)),
                                                 ('Attention（对 key 做 softmax）', attention, 'Blues', (0, 1))]):
    ax.imshow(M, cmap=cmap, vmin=lim[0], vmax=lim[1])
    for i in range(3):
        for j in range(3):
            ax.text(j, i, f'{M[i, j]:.2f}', ha='center', va='center')
    ax.set(title=title, xticks=range(3), yticks=range(3), xlabel='key j', ylabel='query i')
axes[2].bar(np.arange(3) - .2, v, width=.4, label='value v[j]（token j）', color='#8c8c8c')
axes[2].bar(np.arange(3) + .2, read, width=.4, label='query i 读回的值', color='#1f77b4')
axes[2].axhline(0, color='black', lw=.8)
axes[2].set(title='各 value 与每个 query 读回的值', xticks=range(3), xlabel='token')
axes[2].legend(fontsize=9, loc='upper center', bbox_to_anchor=(.5, -.22), ncol=2, frameon=False)
fig.savefig(OUTPUT / 'readback.png'); plt.show()

# %% full-layer
# The same steps, with vectors and two heads, inside LAB 09's full pre-norm layer:
# the L2 norm of every token at every stage of its published trace.
lab = json.loads(Path('inputs/lab09/results.json').read_text(encoding='utf-8'))
stages = ['input', 'ln1', 'projected_attention', 'residual1', 'ln2', 'mlp_output', 'output']
trace = {name: np.array(lab['trace'][name]) for name in stages}
assert np.allclose(trace['residual1'], trace['input'] + trace['projected_attention']), 'first residual'
assert np.allclose(trace['output'], trace['residual1'] + trace['mlp_output']), 'second residual'
norms = np.stack([np.linalg.norm(trace[name], axis=1) for name in stages], axis=1)
print('L2 norm, token x stage (' + ', '.join(stages) + '):\n', norms)
fig, ax = plt.subplots(figsize=(9, 3.8), layout='constrained')
for t in range(4):
    ax.plot(range(len(stages)), norms[t], 'o-', label=f'token {t}')
ax.set(xticks=range(len(stages)), xticklabels=stages, ylabel='L2 范数', title='每个 token 走过完整一层（LAB 09）')
ax.tick_params(axis='x', labelrotation=20)
ax.legend(fontsize=9, ncol=4, loc='upper center', bbox_to_anchor=(.5, -.35), frameon=False)
fig.savefig(OUTPUT / 'full-layer.png'); plt.show()

# %% save
results = {'d': d, 'q': q.tolist(), 'k': k.tolist(), 'v': v.tolist(), 'scores': scores.tolist(),
           'exp': exp.tolist(), 'attention': attention.tolist(), 'terms': terms.tolist(), 'read': read.tolist(),
           'full_layer': {'stages': ['input', 'LN1', 'attention 分支', 'residual1', 'LN2', 'MLP 分支', 'output'],
                          'norms': norms.tolist()}}
(OUTPUT / 'results.json').write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding='utf-8')
print('Saved:', sorted(p.name for p in OUTPUT.iterdir()))
