// The Tests tab's search: hides the rows that do not match. A hidden row keeps its checkbox,
// so "Group selected" takes every ticked row, shown or not. The Labels tab: the labeller's
// name remembered by this browser, and the keys p / f / s (the verdict), n (the note),
// Enter (submit) and Esc (leave the note).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const search = document.getElementById("search");
  if (!search) return;
  search.addEventListener("input", () => {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const row of document.querySelectorAll("#tests tr[data-search]")) {
      const text = row.dataset.search;
      row.hidden = !words.every((w) => text.includes(w));
    }
  });
  search.addEventListener("keydown", (event) => {
    if (event.key === "Enter") event.preventDefault();  // searching never submits the form
  });
});

document.addEventListener("DOMContentLoaded", () => {
  const next = document.getElementById("next");
  if (next) next.focus();  // after an answer: Enter goes on to the next verdict
  const who = document.getElementById("who");
  if (!who) return;
  const name = document.getElementById("by");
  const remembered = localStorage.getItem("labeller") || "";
  if (!name.value && remembered) {
    location.replace("/labels?by=" + encodeURIComponent(remembered));
    return;
  }
  if (name.value) localStorage.setItem("labeller", name.value);
  who.addEventListener("submit", () => localStorage.setItem("labeller", name.value.trim()));
  const form = document.getElementById("label-form");
  if (!form) return;
  const note = document.getElementById("note");
  const verdicts = { p: "pass", f: "fail", s: "skip" };
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = event.target instanceof HTMLInputElement && event.target.type === "text";
    if (typing) {
      if (event.key === "Escape") event.target.blur();
      return;  // Enter in the note submits the form as any text field does
    }
    if (verdicts[event.key]) {
      form.querySelector(`input[name=verdict][value=${verdicts[event.key]}]`).checked = true;
    } else if (event.key === "n") {
      note.focus();
    } else if (event.key === "Enter" && event.target.tagName !== "BUTTON") {
      form.requestSubmit();
    } else {
      return;
    }
    event.preventDefault();
  });
});
