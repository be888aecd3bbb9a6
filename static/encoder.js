// The lab's encoder layer in float64 JavaScript: the same steps, in the same order, as
// compute/lab09_vision_attention.py. Weights and inputs come from the lab's results.json.

const matmul = (A, B) => A.map((row) => B[0].map((_, j) => {
  let sum = 0;
  for (let k = 0; k < row.length; k++) sum += row[k] * B[k][j];
  return sum;
}));

const add = (A, B) => A.map((row, i) => row.map((value, j) => value + B[i][j]));

// LayerNorm over each row, no affine: (x - mean) / sqrt(var + eps).
export const layerNorm = (X, eps) => X.map((row) => {
  let mean = 0;
  for (const v of row) mean += v;
  mean /= row.length;
  let variance = 0;
  for (const v of row) variance += (v - mean) * (v - mean);
  variance /= row.length;
  const scale = Math.sqrt(variance + eps);
  return row.map((v) => (v - mean) / scale);
});

// Softmax along the last axis (the keys), after subtracting the row maximum.
export const softmax = (row) => {
  const max = Math.max(...row);
  const e = row.map((v) => Math.exp(v - max));
  let sum = 0;
  for (const v of e) sum += v;
  return e.map((v) => v / sum);
};

// GELU, tanh approximation, written out as in the lab.
export const gelu = (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));

// Row-major patches: token = (patch row, patch column), slot = (row, column) inside the patch.
export const patchify = (image, size = 2) => {
  const grid = image.length / size;
  const tokens = [];
  for (let pr = 0; pr < grid; pr++) {
    for (let pc = 0; pc < grid; pc++) {
      const token = [];
      for (let r = 0; r < size; r++) for (let c = 0; c < size; c++) token.push(image[pr * size + r][pc * size + c]);
      tokens.push(token);
    }
  }
  return tokens;
};

// The tokens X for an image: patches @ W_patch (+ position unless `position` is false).
export const embed = (lab, image, { position = true, identical = false, permutation = null } = {}) => {
  const size = Math.round(Math.sqrt(lab.patches[0].length));      // a patch holds size × size pixels
  let X = matmul(patchify(image, size), lab.patch_projection);
  if (identical) X = X.map(() => X[0].slice());
  if (permutation) X = permutation.map((i) => X[i]);
  return position ? add(X, lab.position) : X;
};

const heads = (M, count, size) =>
  Array.from({ length: count }, (_, h) => M.map((row) => row.slice(h * size, (h + 1) * size)));

// One pre-norm encoder layer; every intermediate tensor, named as in the lab's trace.
export const encoder = (lab, X) => {
  const { heads: H, d_head: DH, epsilon } = lab.structure;
  const W = lab.weights;
  const t = { input: X.map((row) => row.slice()) };
  t.ln1 = layerNorm(X, epsilon);
  for (const name of ["Q", "K", "V"]) {
    t[name] = matmul(t.ln1, W["W_" + name]);
    t[name + "_heads"] = heads(t[name], H, DH);
  }
  t.scores = t.Q_heads.map((Q, h) => Q.map((q) => t.K_heads[h].map((k) => {
    let dot = 0;
    for (let d = 0; d < DH; d++) dot += q[d] * k[d];
    return dot / Math.sqrt(DH);
  })));
  t.attention = t.scores.map((S) => S.map(softmax));
  t.read_values = t.attention.map((A, h) => matmul(A, t.V_heads[h]));
  t.concat = X.map((_, i) => t.read_values.flatMap((R) => R[i]));
  t.projected_attention = matmul(t.concat, W.W_O);
  t.residual1 = add(X, t.projected_attention);
  t.ln2 = layerNorm(t.residual1, epsilon);
  t.mlp_hidden_pre = matmul(t.ln2, W.W_1);
  t.mlp_hidden = t.mlp_hidden_pre.map((row) => row.map(gelu));
  t.mlp_output = matmul(t.mlp_hidden, W.W_2);
  t.output = add(t.residual1, t.mlp_output);
  return t;
};

// Per-token L2 norm of the difference between two [tokens][channels] tensors.
export const tokenChange = (A, B) => A.map((row, i) => Math.hypot(...row.map((v, j) => v - B[i][j])));
