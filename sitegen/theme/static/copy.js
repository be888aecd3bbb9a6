// A copy button on every code block. Without JavaScript the code is still there to select.
for (const block of document.querySelectorAll(".highlight")) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "copy-button";
  button.textContent = "复制";
  button.setAttribute("aria-label", "复制这段代码");
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(block.querySelector("pre").innerText);
      button.textContent = "已复制";
    } catch (error) {
      button.textContent = "请手动选择复制";
    }
    setTimeout(() => { button.textContent = "复制"; }, 1600);
  });
  block.prepend(button);
}
