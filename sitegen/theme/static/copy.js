// A copy button on every code block. Without JavaScript the code is still there to select.
// Its words are the site's (vocabulary: copy, copy_label, copied, copy_failed), on <body>.
const words = document.body.dataset;
for (const block of document.querySelectorAll(".highlight")) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "copy-button";
  button.textContent = words.copy;
  button.setAttribute("aria-label", words.copyLabel);
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(block.querySelector("pre").innerText);
      button.textContent = words.copied;
    } catch (error) {
      button.textContent = words.copyFailed;
    }
    setTimeout(() => { button.textContent = words.copy; }, 1600);
  });
  block.prepend(button);
}
