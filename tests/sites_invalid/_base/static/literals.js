// The fixture site's own module (not the course's): template literals nested, a comment, a regex.
const fmt = (v) => v.toFixed(4);
export function rows(values) {
  return values.map((v, i) => `token ${i} ${fmt(v)}`).join("\n"); // `not ${a} template`
}
export const slash = /[/'"]/g;
