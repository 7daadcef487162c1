// The workbench's only script of its own: draws the figures and polls a running task.
// Figures: every element of class "figure" names, in data-spec, a JSON script element
// holding a Vega-Lite spec. Vega's expression interpreter (ast: true) draws it without
// eval, which the page's Content-Security-Policy forbids.
"use strict";

function drawFigures() {
  for (const element of document.querySelectorAll(".figure[data-spec]")) {
    const spec = JSON.parse(document.getElementById(element.dataset.spec).textContent);
    const options = {actions: false, renderer: "svg", mode: "vega-lite", ast: true};
    window.vegaEmbed(element, spec, options).then((result) => {
      element.dataset.drawn = "true";
      if (element.id === "figure-sweep") listenForPicks(result.view);
    }).catch((error) => {
      element.textContent = "figure not drawn: " + error;
    });
  }
}

// A click on a point of the sweep (its selection parameter "pick") puts that point's k and
// suppression limit into the job, as its table row's "use" button does.
function listenForPicks(view) {
  const form = document.getElementById("pick-form");
  if (!form) return;
  view.addEventListener("click", (event, item) => {
    const datum = item && item.datum;
    if (!datum || datum.k === undefined || datum.max_suppression === undefined) return;
    form.elements.k.value = datum.k;
    form.elements.suppression.value = datum.max_suppression;
    form.submit();
  });
}

// While a task runs, its progress is read every half second; when it ends, the page reloads
// to show what it made.
function pollProgress() {
  const box = document.getElementById("progress");
  if (!box || box.dataset.state !== "running") return;
  const detail = box.querySelector(".detail");
  const tick = () => {
    fetch(box.dataset.statusUrl, {credentials: "same-origin"})
      .then((response) => response.json())
      .then((status) => {
        box.querySelector(".state").textContent = status.state;
        const parts = [];
        if (status.stage) parts.push(status.stage + (status.detail ? " (" + status.detail + ")" : ""));
        if (status.checked) parts.push(status.checked.toLocaleString() + " nodes checked");
        if (status.best_score !== null && status.best_score !== undefined) {
          parts.push("best score " + status.best_score.toPrecision(6));
        }
        if (status.total) parts.push(status.done + " of " + status.total);
        parts.push(status.elapsed + " s");
        detail.textContent = "· " + parts.join(" · ");
        if (status.state === "running") {
          setTimeout(tick, 500);
        } else {
          window.location.reload();
        }
      })
      .catch(() => setTimeout(tick, 2000));
  };
  tick();
}

document.addEventListener("DOMContentLoaded", () => {
  if (window.vegaEmbed) drawFigures();
  pollProgress();
});
