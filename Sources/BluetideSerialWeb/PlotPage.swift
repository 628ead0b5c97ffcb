import BluetideLiveWeb
/// The plot page: every series of numbers the device prints as a line on one canvas chart (a
/// rolling window of the last 30, 60 or 300 seconds, each series its colour, the latest value in
/// the legend), fed by the `/live` WebSocket, with Pause (the chart stops, points keep being
/// collected) and Export CSV (the points the page holds, or `/export.csv` for the server's).
/// One self-contained document, drawn like the ride's live page; it reconnects by itself.
public enum PlotPage {
    /// The page, titled `title` (escaped).
    public static func html(title: String) -> String {
        let safe = escape(title)
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(safe)</title>
            <style>
            body { margin: 0; font-family: system-ui, sans-serif; background: #111; color: #eee; }
            header { display: flex; gap: 1rem; align-items: center; padding: 0.5rem 1rem; color: #aaa; }
            header .grow { flex: 1; }
            #state.down { color: #f66; }
            button, select { background: #222; color: #eee; border: 1px solid #444; border-radius: 0.3rem; padding: 0.3rem 0.8rem; font-size: 1rem; }
            canvas { display: block; width: calc(100% - 2rem); height: 70vh; margin: 0.5rem 1rem; background: #1c1c1c; border-radius: 0.5rem; }
            #legend { padding: 0 1rem; }
            #legend span { margin-right: 1.2rem; font-variant-numeric: tabular-nums; }
            </style>
            </head>
            <body>
            <header><span class="grow">\(safe)</span>
              <select id="window"><option value="30">30 s</option><option value="60" selected>60 s</option><option value="300">5 min</option></select>
              <button id="pause">Pause</button><button id="export">Export CSV</button>
              <span id="state" class="down">connecting…</span></header>
            <canvas id="chart"></canvas>
            <div id="legend"></div>
            <script>
            "use strict";
            const COLOURS = ["#ffb300", "#42a5f5", "#ef5350", "#66bb6a", "#ab47bc", "#26c6da", "#ff7043", "#d4e157"];
            const points = [], names = [];
            let paused = false;
            const $ = (id) => document.getElementById(id);
            const windowSeconds = () => Number($("window").value);
            function add(p) {
              for (const name of Object.keys(p.values)) if (!names.includes(name)) names.push(name);
              points.push(p);
              if (points.length > 100000) points.splice(0, points.length - 100000);
              if (!paused) draw();
            }
            function legend() {
              const last = points[points.length - 1];
              $("legend").innerHTML = "";
              names.forEach((name, i) => {
                const span = document.createElement("span");
                span.style.color = COLOURS[i % COLOURS.length];
                const value = last && last.values[name] !== undefined ? " " + last.values[name] : "";
                span.textContent = "■ " + name + value;
                $("legend").appendChild(span);
              });
            }
            function draw() {
              legend();
              const canvas = $("chart"), ratio = window.devicePixelRatio || 1;
              canvas.width = canvas.clientWidth * ratio; canvas.height = canvas.clientHeight * ratio;
              const g = canvas.getContext("2d"), width = canvas.width, height = canvas.height;
              g.clearRect(0, 0, width, height);
              if (points.length < 2) return;
              const span = windowSeconds(), end = points[points.length - 1].t, start = end - span;
              const shown = points.filter((p) => p.t >= start);
              let low = Infinity, high = -Infinity;
              for (const p of shown) for (const v of Object.values(p.values)) { low = Math.min(low, v); high = Math.max(high, v); }
              if (!isFinite(low)) return;
              if (high - low < 1e-9) { high += 1; low -= 1; }
              const pad = (high - low) * 0.05; low -= pad; high += pad;
              const y = (v) => height - (v - low) / (high - low) * height;
              g.strokeStyle = "#333"; g.lineWidth = ratio; g.fillStyle = "#777"; g.font = (12 * ratio) + "px system-ui";
              for (let i = 0; i <= 4; i++) {
                const v = low + (high - low) * i / 4, yy = y(v);
                g.beginPath(); g.moveTo(0, yy); g.lineTo(width, yy); g.stroke();
                g.fillText(v.toPrecision(4), 4 * ratio, yy - 3 * ratio);
              }
              names.forEach((name, i) => {
                g.strokeStyle = COLOURS[i % COLOURS.length]; g.lineWidth = 2 * ratio; g.beginPath();
                let drawing = false;
                for (const p of shown) {
                  const v = p.values[name];
                  if (v === undefined) continue;
                  const x = (p.t - start) / span * width;
                  if (drawing) g.lineTo(x, y(v)); else g.moveTo(x, y(v));
                  drawing = true;
                }
                g.stroke();
              });
            }
            function csv() {
              const rows = [["seconds"].concat(names).join(",")];
              for (const p of points) rows.push([p.t].concat(names.map((n) => p.values[n] === undefined ? "" : p.values[n])).join(","));
              return rows.join("\\n") + "\\n";
            }
            $("pause").onclick = () => { paused = !paused; $("pause").textContent = paused ? "Resume" : "Pause"; if (!paused) draw(); };
            $("export").onclick = () => {
              const link = document.createElement("a");
              link.href = URL.createObjectURL(new Blob([csv()], { type: "text/csv" }));
              link.download = "plot.csv"; link.click();
            };
            $("window").onchange = draw;
            function connect() {
              const socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/live");
              socket.onopen = () => { points.length = 0; $("state").textContent = "live"; $("state").className = ""; };
              socket.onmessage = (event) => add(JSON.parse(event.data));
              socket.onclose = () => { $("state").textContent = "reconnecting…"; $("state").className = "down"; setTimeout(connect, 2000); };
            }
            window.addEventListener("resize", draw);
            connect();
            </script>
            </body>
            </html>

            """
    }

    /// `text` with the five XML special characters escaped (the live pages' one rule).
    static func escape(_ text: String) -> String { LiveWebServer.escape(text) }
}
