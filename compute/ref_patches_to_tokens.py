# Illustrated reference: how an image becomes patch tokens.
#
# It reads LAB 09's published results (inputs/lab09/results.json, which the
# build puts in the working folder) so that the image, projection and
# position here are the lab's own, not retyped copies. Each `# %% name`
# starts a cell that the reference page shows with its printed output.

# %% load
import json
from pathlib import Path
import numpy as np
import matplotlib.pyplot as plt
np.set_printoptions(precision=4, suppress=True)
OUTPUT = Path('outputs/patches-to-tokens')
OUTPUT.mkdir(parents=True, exist_ok=True)
plt.rcParams.update({'font.size': 11, 'figure.dpi': 120, 'savefig.dpi': 160,
                     'axes.spines.top': False, 'axes.spines.right': False})
lab = json.loads(Path('inputs/lab09/results.json').read_text(encoding='utf-8'))
image = np.array(lab['image'])
W_patch = np.array(lab['patch_projection'])
position = np.array(lab['position'])
print('image', image.shape, '\n', image)

# %% patchify
# An explicit loop: which pixel of the image fills which slot of which token.
P = 2
corners = [(0, 0), (0, 1), (1, 0), (1, 1)]          # row-major: left-to-right, then down
patches = np.zeros((4, P * P))
pixel_of = []                                       # [token][slot] -> [row, col]
for t, (pr, pc) in enumerate(corners):
    pixel_of.append([])
    for s, (r, c) in enumerate(corners):
        row, col = pr * P + r, pc * P + c
        patches[t, s] = image[row, col]
        pixel_of[t].append([row, col])
# The loop and the lab's reshape/transpose must agree exactly.
assert np.array_equal(patches, np.array(lab['patches'])), 'loop patchify differs from the lab'
for t in range(4):
    print(f'token {t}:', ', '.join(f'image[{r},{c}]={image[r, c]:.1f}' for r, c in pixel_of[t]))
fig, ax = plt.subplots(1, 2, figsize=(9, 3.9), layout='constrained')
ax[0].imshow(image, cmap='gray', vmin=0, vmax=1)
for t in range(4):
    for s, (r, c) in enumerate(pixel_of[t]):
        ink = 'white' if image[r, c] < .5 else 'black'
        ax[0].text(c, r, f'T{t}·{s}', ha='center', va='center', color=ink, fontsize=10)
ax[0].axvline(1.5, color='#e6b450', lw=2); ax[0].axhline(1.5, color='#e6b450', lw=2)
ax[0].set(title='图像：像素 → token T·位置', xticks=range(4), yticks=range(4), xlabel='列', ylabel='行')
ax[1].imshow(patches, cmap='gray', vmin=0, vmax=1)
for t in range(4):
    for s in range(4):
        ax[1].text(s, t, f'{patches[t, s]:.1f}', ha='center', va='center',
                   color='white' if patches[t, s] < .5 else 'black')
ax[1].set(title='patch 向量（每行一个 token）', xticks=range(4), yticks=range(4),
          xlabel='patch 内位置', ylabel='token')
fig.savefig(OUTPUT / 'patchify.png'); plt.show()

# %% project
embedded = patches @ W_patch
X = embedded + position
assert np.allclose(X, np.array(lab['trace']['input']), rtol=0, atol=1e-15), 'X differs from the lab'
print('embedded = patches @ W_patch:\n', embedded)
print('X = embedded + position:\n', X)
# Without position, reordering the patches only reorders the rows of X:
# nothing in a token says where it came from.
permutation = [2, 0, 3, 1]
print('rows permute with the tokens:', np.array_equal((patches @ W_patch)[permutation], patches[permutation] @ W_patch))
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), layout='constrained')
for ax, (title, M) in zip(axes, [('patches', patches), ('patches @ W_patch', embedded), ('+ position = X', X)]):
    im = ax.imshow(M, cmap='viridis', vmin=-0.1, vmax=1.3)
    for t in range(4):
        for c in range(4):
            ax.text(c, t, f'{M[t, c]:.2f}', ha='center', va='center',
                    color='white' if M[t, c] < .6 else 'black', fontsize=9)
    ax.set(title=title, xticks=range(4), yticks=range(4), xlabel='通道', ylabel='token')
fig.colorbar(im, ax=list(axes), fraction=.02)
fig.savefig(OUTPUT / 'projection.png'); plt.show()

# %% save
results = {'image': image.tolist(), 'pixel_of': pixel_of, 'patches': patches.tolist(),
           'patch_projection': W_patch.tolist(), 'position': position.tolist(),
           'embedded': embedded.tolist(), 'X': X.tolist()}
(OUTPUT / 'results.json').write_text(json.dumps(results, indent=2), encoding='utf-8')
print('Saved:', sorted(p.name for p in OUTPUT.iterdir()))
