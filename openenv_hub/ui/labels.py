"""Accessible names for the form fields gradio renders without one.

gradio wraps a text box in a ``<label>`` that also holds the field's hint, so its accessible
name is "message * Message to echo back · string", and it gives its JSON editors (CodeMirror)
and drop-downs no name at all: a screen reader says "edit text", and
``page.get_by_label("message")`` finds nothing. :data:`LABELS_SCRIPT` runs in the page and
gives every input of a labelled block ``aria-label`` = the field's name (without the
required-field star), ``aria-required`` for required fields, and keeps doing so for widgets
drawn later (the tool picker's argument fields).

Layer: ui.
"""

from __future__ import annotations

__all__ = ["LABELS_SCRIPT"]

LABELS_SCRIPT = """
<script>
(() => {
  const INPUTS = "textarea, input:not([type=hidden]), [contenteditable=true], select";
  const name = (block) => {
    const title = block.querySelector(
      "[data-testid=block-info], [data-testid=block-label], [data-testid=block-title]");
    return title ? title.textContent.replace(/\\s+/g, " ").trim() : "";
  };
  const label = () => {
    document.querySelectorAll(".block").forEach((block) => {
      const text = name(block);
      if (!text) return;
      const required = /\\s\\*$/.test(text);
      const field = text.replace(/\\s\\*$/, "");
      block.querySelectorAll(INPUTS).forEach((input) => {
        if (input.closest(".block") !== block || input.getAttribute("aria-label") === field) return;
        if (input.type === "checkbox" || input.type === "radio") return;  // labelled already
        input.setAttribute("aria-label", field);
        if (required) input.setAttribute("aria-required", "true");
      });
    });
  };
  let queued = false;
  const later = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; label(); });
  };
  const start = () => {
    label();
    new MutationObserver(later).observe(document.body, { childList: true, subtree: true });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
</script>
"""
