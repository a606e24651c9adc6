// quorum's dashboard works without this script; it adds conveniences only.
// No inline script anywhere: the Content-Security-Policy allows only this
// file.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // A button with data-copy="ID" copies the text of element ID.
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.hidden = false;
    button.addEventListener("click", async () => {
      const source = document.getElementById(button.dataset.copy);
      if (!source) return;
      const status = document.getElementById(button.dataset.copy + "-status");
      try {
        await navigator.clipboard.writeText(source.textContent.trim());
        if (status) status.textContent = "Copied.";
      } catch {
        // No clipboard (an insecure origin): select the text instead.
        const range = document.createRange();
        range.selectNodeContents(source);
        const sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        if (status) status.textContent = "Selected: press Ctrl+C to copy.";
      }
    });
  }
  // A form with data-confirm asks before it is sent.
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
});
