import BluetideLiveWeb
/// The live page: big numbers (speed, cadence, power, heart rate, distance, time, target,
/// workout progress) and a rolling five-minute chart of power, heart rate and cadence drawn on a
/// canvas, fed by the `/live` WebSocket. One self-contained document (no external scripts), laid
/// out for a tablet in landscape or portrait; it reconnects by itself when the socket drops.
/// With a control token it also has the controls (target power and grade with their buttons,
/// pause, start, lap, workout, free), sent over the `/control` WebSocket with the token, each
/// answer shown under them.
public enum RidePage {
    /// The page, titled `title` (escaped), with controls when `controlToken` is given.
    public static func html(title: String, controlToken: String? = nil) -> String {
        let safe = escape(title)
        let controls = controlToken.map { token in
            """
            <section id="controls" data-token="\(escape(token))">
              <label>Power <input id="watts" type="number" min="0" max="4000" step="5" value="200"> W</label>
              <button id="erg">Set ERG</button>
              <label>Grade <input id="grade" type="number" min="-40" max="40" step="0.5" value="2"> %</label>
              <button id="slope">Set grade</button>
              <button id="pause">Pause</button><button id="start">Start</button><button id="lap">Lap</button>
              <button id="workout">Start workout</button><button id="free">Free ride</button>
              <div id="reply" class="label"></div>
            </section>
            """
        } ?? ""
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(safe)</title>
            <style>
            body { margin: 0; font-family: system-ui, sans-serif; background: #111; color: #eee; }
            header { display: flex; justify-content: space-between; padding: 0.5rem 1rem; font-size: 1rem; color: #aaa; }
            #state.down { color: #f66; }
            main { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: 0.5rem; padding: 0 1rem; }
            .metric { background: #1c1c1c; border-radius: 0.5rem; padding: 0.5rem 0.8rem; }
            .metric .label { font-size: 0.9rem; color: #999; }
            .metric .value { font-size: 3rem; font-variant-numeric: tabular-nums; }
            .metric .unit { font-size: 1rem; color: #999; margin-left: 0.3rem; }
            #progress { height: 0.6rem; background: #333; border-radius: 0.3rem; margin-top: 0.4rem; }
            #bar { height: 100%; width: 0; background: #4caf50; border-radius: 0.3rem; }
            canvas { display: block; width: calc(100% - 2rem); height: 40vh; margin: 0.5rem 1rem; background: #1c1c1c; border-radius: 0.5rem; }
            .legend span { margin-right: 1rem; }
            #controls { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; padding: 0.5rem 1rem; }
            #controls button { font-size: 1.2rem; padding: 0.6rem 1rem; border-radius: 0.4rem; border: 0; background: #2e7d32; color: #fff; }
            #controls input { font-size: 1.2rem; width: 5rem; }
            #reply { width: 100%; min-height: 1.2rem; }
            #reply.refused { color: #f66; }
            </style>
            </head>
            <body>
            <header><span>\(safe)</span><span id="state" class="down">connecting…</span></header>
            <main>
              <div class="metric"><div class="label">Power</div><span class="value" id="power">–</span><span class="unit">W</span></div>
              <div class="metric"><div class="label">Heart rate</div><span class="value" id="hr">–</span><span class="unit">bpm</span></div>
              <div class="metric"><div class="label">Cadence</div><span class="value" id="cadence">–</span><span class="unit">rpm</span></div>
              <div class="metric"><div class="label">Speed</div><span class="value" id="speed">–</span><span class="unit">km/h</span></div>
              <div class="metric"><div class="label">Distance</div><span class="value" id="distance">–</span><span class="unit">km</span></div>
              <div class="metric"><div class="label">Time</div><span class="value" id="time">–</span></div>
              <div class="metric"><div class="label">Target</div><span class="value" id="target">–</span>
                <div id="workout" class="label"></div><div id="progress"><div id="bar"></div></div></div>
            </main>
            \(controls)
            <canvas id="chart"></canvas>
            <div class="legend" style="padding: 0 1rem; color: #999">
              <span style="color: #ffb300">■ power (W)</span><span style="color: #ef5350">■ heart rate (bpm)</span><span style="color: #42a5f5">■ cadence (rpm)</span>
              <span>last 5 minutes</span></div>
            <script>
            "use strict";
            const WINDOW = 300;
            const points = [];
            const $ = (id) => document.getElementById(id);
            const show = (id, value, digits) => { $(id).textContent = value === undefined ? "–" : value.toFixed(digits); };
            function clock(seconds) {
              const s = Math.floor(seconds), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
              return (h > 0 ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + String(r).padStart(2, "0");
            }
            function target(t) {
              if (!t) return "–";
              if (t.powerWatts !== undefined) return t.powerWatts + " W";
              if (t.gradePercent !== undefined) return t.gradePercent.toFixed(1) + " %";
              if (t.resistancePercent !== undefined) return "R " + t.resistancePercent.toFixed(0) + " %";
              return "–";
            }
            function update(s) {
              s.t = s.time.monotonic;
              show("power", s.powerWatts, 0); show("hr", s.heartRateBPM, 0); show("cadence", s.cadenceRPM, 0);
              show("speed", s.speedKilometresPerHour, 1); show("distance", s.distanceMetres / 1000, 2);
              $("time").textContent = clock(s.t); $("target").textContent = target(s.target);
              const w = s.workout;
              $("workout").textContent = w ? (w.finished ? "workout finished" : "step " + w.step + "/" + w.steps) : "";
              $("bar").style.width = w ? (w.progress * 100).toFixed(1) + "%" : "0";
              points.push(s);
              while (points.length && points[points.length - 1].t - points[0].t > WINDOW) points.shift();
              draw();
            }
            function draw() {
              const canvas = $("chart"), ratio = window.devicePixelRatio || 1;
              canvas.width = canvas.clientWidth * ratio; canvas.height = canvas.clientHeight * ratio;
              const g = canvas.getContext("2d"), width = canvas.width, height = canvas.height;
              g.clearRect(0, 0, width, height);
              if (points.length < 2) return;
              const end = points[points.length - 1].t, start = end - WINDOW;
              const top = Math.max(200, ...points.map((p) => Math.max(p.powerWatts || 0, p.heartRateBPM || 0, p.cadenceRPM || 0))) * 1.1;
              g.strokeStyle = "#333"; g.lineWidth = ratio;
              for (let v = 100; v < top; v += 100) { const y = height - v / top * height; g.beginPath(); g.moveTo(0, y); g.lineTo(width, y); g.stroke(); }
              for (const [key, colour] of [["powerWatts", "#ffb300"], ["heartRateBPM", "#ef5350"], ["cadenceRPM", "#42a5f5"]]) {
                g.strokeStyle = colour; g.lineWidth = 2 * ratio; g.beginPath();
                let drawing = false;
                for (const p of points) {
                  const v = p[key];
                  if (v === undefined) { drawing = false; continue; }  // a gap stays a gap
                  const x = (p.t - start) / WINDOW * width, y = height - v / top * height;
                  if (drawing) g.lineTo(x, y); else g.moveTo(x, y);
                  drawing = true;
                }
                g.stroke();
              }
            }
            function connect() {
              const socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/live");
              socket.onopen = () => { $("state").textContent = "live"; $("state").className = ""; };
              socket.onmessage = (event) => update(JSON.parse(event.data));
              socket.onclose = () => {
                $("state").textContent = "reconnecting…"; $("state").className = "down";
                points.length = 0; setTimeout(connect, 2000);
              };
            }
            window.addEventListener("resize", draw);
            connect();
            const panel = $("controls");
            if (panel) {
              let control = null, next = 1;
              const pending = [];
              const answer = (text, ok) => { $("reply").textContent = text; $("reply").className = ok ? "label" : "label refused"; };
              function openControl() {
                control = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host
                  + "/control?token=" + encodeURIComponent(panel.dataset.token));
                control.onopen = () => { while (pending.length) control.send(pending.shift()); };
                control.onmessage = (event) => { const r = JSON.parse(event.data); answer(r.text, r.ok); };
                control.onclose = () => { control = null; };
              }
              function send(command) {
                const message = JSON.stringify({ id: next++, command: command });
                answer("…", true);
                if (control && control.readyState === WebSocket.OPEN) control.send(message);
                else { pending.push(message); if (!control) openControl(); }
              }
              $("erg").onclick = () => send("erg " + $("watts").value);
              $("slope").onclick = () => send("grade " + $("grade").value);
              for (const id of ["pause", "start", "lap", "workout", "free"]) $(id).onclick = () => send(id);
              openControl();
            }
            </script>
            </body>
            </html>

            """
    }

    /// `text` with the five XML special characters escaped (the live pages' one rule).
    static func escape(_ text: String) -> String { LiveWebServer.escape(text) }
}
