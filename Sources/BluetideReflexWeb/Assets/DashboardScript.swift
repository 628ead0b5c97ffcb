/// The dashboard's only JavaScript (served at `/static/dashboard.js`, nothing fetched from
/// elsewhere): live results on the run page over the `/live` WebSocket, and the sequence
/// editor's target buttons and per-step times. Every page works without it except the live
/// view; user text is only ever set with `textContent`, never parsed as markup.
public enum DashboardScript {
    /// The script text.
    public static let javaScript = #"""
        "use strict";
        (function () {
          const live = document.getElementById("live");
          if (live) startLive(live);
          const editor = document.getElementById("sequence-editor");
          if (editor) startEditor(editor);

          function element(tag, className, text) {
            const node = document.createElement(tag);
            if (className) node.className = className;
            if (text !== undefined) node.textContent = text;
            return node;
          }

          function swatch(target) {
            const node = element("span", "swatch target-" + target, String(target));
            node.title = "target " + target;
            return node;
          }

          // ---- Live run ----------------------------------------------------------------------
          function startLive(root) {
            const state = document.getElementById("run-state");
            const rows = document.querySelector("#live-steps tbody");
            const log = document.getElementById("run-log");
            const heading = document.getElementById("run-heading");
            const summary = document.getElementById("run-summary");
            const form = document.getElementById("run-form");
            const errors = document.getElementById("run-errors");
            const startButton = document.getElementById("start-button");
            const stopButton = document.getElementById("stop-button");
            const sessionLink = document.getElementById("session-link");
            let steps = [];
            let stepCount = 0;

            function setState(name, text) {
              state.dataset.state = name;
              root.dataset.state = name;
              state.textContent = text;
              const running = name === "running";
              startButton.disabled = running;
              stopButton.disabled = !running;
            }

            function updateSummary() {
              const hits = steps.filter(s => s.hit);
              const mean = hits.length ? Math.round(hits.reduce((a, s) => a + s.reactionMilliseconds, 0) / hits.length) : null;
              const best = hits.length ? Math.min.apply(null, hits.map(s => s.reactionMilliseconds)) : null;
              summary.textContent = steps.length + "/" + stepCount + " steps · " + hits.length + " hits" +
                (mean === null ? "" : " · mean " + mean + " ms · best " + best + " ms");
            }

            function addStep(m) {
              steps.push(m);
              const row = element("tr", "step-row fresh");
              row.dataset.step = m.step;
              row.dataset.target = m.target;
              row.dataset.hit = m.hit ? "yes" : "no";
              row.dataset.ms = m.reactionMilliseconds;
              row.appendChild(element("td", "num", String(m.step + 1)));
              const target = element("td");
              target.appendChild(swatch(m.target));
              target.appendChild(document.createTextNode(" " + (m.colour || "")));
              row.appendChild(target);
              const result = element("td", m.hit ? "hit" : "miss", m.hit ? "hit" : "miss");
              if (m.wrongTarget) result.textContent += " (wrong target first)";
              row.appendChild(result);
              row.appendChild(element("td", "num", m.hit ? m.reactionMilliseconds + " ms" : "–"));
              rows.insertBefore(row, rows.firstChild);
              updateSummary();
            }

            function note(text) {
              const item = element("li", "", text);
              log.insertBefore(item, log.firstChild);
            }

            function handle(m) {
              switch (m.kind) {
                case "idle":
                  setState("idle", "No session yet: pick an athlete and a sequence, then press Start.");
                  break;
                case "started":
                  steps = [];
                  stepCount = m.stepCount || 0;
                  rows.textContent = "";
                  log.textContent = "";
                  sessionLink.hidden = true;
                  root.dataset.run = m.run;
                  heading.textContent = m.athlete + " · " + m.sequence + " (" + stepCount + " steps)";
                  setState("running", "Starting…");
                  note(m.text);
                  updateSummary();
                  break;
                case "progress":
                case "status":
                  note(m.text);
                  if (state.dataset.state === "running") state.textContent = "Running: " + m.text;
                  break;
                case "session":
                  sessionLink.href = "/sessions/" + m.sessionId;
                  break;
                case "step":
                  addStep(m);
                  state.textContent = "Running: step " + (m.step + 1) + " of " + stepCount;
                  break;
                case "ended":
                  setState(m.complete ? "complete" : "incomplete",
                    (m.complete ? "Complete" : "Incomplete") + ": " + (m.stepsStored || 0) + "/" + (m.stepCount || stepCount) +
                    " steps stored (" + m.text + ")");
                  if (m.sessionId) { sessionLink.href = "/sessions/" + m.sessionId; sessionLink.hidden = false; }
                  note(m.text);
                  break;
                case "failed":
                  setState("failed", "Could not run: " + m.text);
                  note(m.text);
                  break;
              }
            }

            function connect() {
              const scheme = location.protocol === "https:" ? "wss://" : "ws://";
              const socket = new WebSocket(scheme + location.host + "/live");
              socket.onopen = () => { root.dataset.connected = "yes"; };
              socket.onmessage = event => handle(JSON.parse(event.data));
              socket.onclose = () => { root.dataset.connected = "no"; setTimeout(connect, 1000); };
            }

            function showErrors(list) {
              errors.textContent = "";
              errors.hidden = list.length === 0;
              if (!list.length) return;
              errors.appendChild(element("p", "", "Could not start:"));
              const items = element("ul");
              list.forEach(text => items.appendChild(element("li", "", text)));
              errors.appendChild(items);
            }

            form.addEventListener("submit", event => {
              event.preventDefault();
              showErrors([]);
              fetch("/api/run", { method: "POST", body: new URLSearchParams(new FormData(form)) })
                .then(response => response.json())
                .then(answer => {
                  if (answer.error) showErrors((answer.errors || []).map(e => e.message).concat(answer.errors && answer.errors.length ? [] : [answer.error]));
                })
                .catch(error => showErrors([String(error)]));
            });
            stopButton.addEventListener("click", () => {
              const token = form.querySelector('input[name="_csrf"]');
              fetch("/api/run/stop", { method: "POST", headers: { "X-CSRF-Token": token ? token.value : "" } });
            });
            connect();
          }

          // ---- Sequence editor ---------------------------------------------------------------
          function startEditor(form) {
            const targetsField = document.getElementById("targets");
            const timesField = document.getElementById("times");
            const defaultTime = document.getElementById("default-time");
            const list = document.getElementById("steps");
            const count = document.getElementById("step-count");

            function items(text) { return text.split(/[\s,;]+/).filter(s => s.length > 0); }

            let targets = items(targetsField.value).map(Number);
            let times = items(timesField.value).map(Number);
            if (times.length === 1 && targets.length > 1) times = targets.map(() => times[0]);

            function sync() {
              targetsField.value = targets.join(",");
              timesField.value = times.join(",");
              count.textContent = targets.length + (targets.length === 1 ? " step" : " steps") + " · " +
                (times.reduce((a, t) => a + (t || 0), 0) / 1000).toFixed(1) + " s at most";
            }

            function render(write) {
              list.textContent = "";
              targets.forEach((target, index) => {
                const item = element("li");
                item.dataset.target = target;
                item.appendChild(element("span", "n", String(index + 1)));
                item.appendChild(swatch(target));
                const time = element("input");
                time.type = "number"; time.min = "1"; time.max = "60000"; time.step = "10";
                time.value = times[index] || defaultTime.value;
                time.setAttribute("aria-label", "step " + (index + 1) + " time, ms");
                time.addEventListener("input", () => { times[index] = Number(time.value); sync(); });
                item.appendChild(time);
                item.appendChild(element("span", "muted", "ms"));
                const remove = element("button", "", "✕");
                remove.type = "button";
                remove.setAttribute("aria-label", "remove step " + (index + 1));
                remove.addEventListener("click", () => { targets.splice(index, 1); times.splice(index, 1); render(); });
                item.appendChild(remove);
                list.appendChild(item);
              });
              if (write !== false) sync();
            }

            form.querySelectorAll(".target-button").forEach(button => {
              button.addEventListener("click", () => {
                targets.push(Number(button.dataset.target));
                times.push(Number(defaultTime.value) || 1000);
                render();
              });
            });
            document.getElementById("undo-step").addEventListener("click", () => { targets.pop(); times.pop(); render(); });
            document.getElementById("clear-steps").addEventListener("click", () => { targets = []; times = []; render(); });
            targetsField.addEventListener("change", () => {
              targets = items(targetsField.value).map(Number);
              while (times.length < targets.length) times.push(Number(defaultTime.value) || 1000);
              times.length = targets.length;
              render();
            });
            timesField.addEventListener("change", () => {
              times = items(timesField.value).map(Number);
              if (times.length === 1 && targets.length > 1) times = targets.map(() => times[0]);
              render();
            });
            // A form sent back with errors keeps what was typed until the coach edits the steps.
            const clean = targets.every(t => Number.isInteger(t) && t >= 0 && t <= 5) &&
              times.length === targets.length && times.every(t => Number.isInteger(t) && t >= 1 && t <= 60000);
            render(clean);
          }
        })();

        """#
}
