// The Tests tab's search: hides the rows that do not match. A hidden row keeps its checkbox,
// so "Group selected" takes every ticked row, shown or not.
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
