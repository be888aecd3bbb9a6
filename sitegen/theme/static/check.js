// Self-checks (::: check): the reader types a number; the page says whether it is within the
// tolerance of the value the build computed. Offline, no server; the messages come from the page.
for (const form of document.querySelectorAll(".check-form")) {
  const input = form.querySelector("input");
  const result = form.querySelector(".check-result");
  const answer = Number(form.dataset.answer);
  const tolerance = Number(form.dataset.tolerance);
  // Full-width digits and signs (NFKC), the true minus sign, and spaces are read as typed elsewhere.
  const read = (text) => {
    const plain = text.normalize("NFKC").replace(/[\u2212\u2013]/g, "-").replace(/\s+/g, "");
    return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(plain) ? Number(plain) : NaN;
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const given = read(input.value);
    const right = Math.abs(given - answer) <= tolerance * (1 + 1e-9);
    result.textContent = Number.isNaN(given) ? form.dataset.invalid : right ? form.dataset.right : form.dataset.wrong;
    result.className = `check-result ${Number.isNaN(given) ? "" : right ? "is-right" : "is-wrong"}`;
    input.setAttribute("aria-invalid", String(!Number.isNaN(given) && !right));
  });
  form.hidden = false;
}
