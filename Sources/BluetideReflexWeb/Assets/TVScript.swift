/// The gym screen's script (`/static/tv.js`): listens on `/live` and draws the running game's
/// lanes in big type; fetches `/tv/board` again when a run or game ends. Text goes in through
/// `textContent` only; the board fragment is the server's own escaped markup.
enum TVScript {
    static let javaScript = #"""
    (function () {
      "use strict";
      const root = document.getElementById("tv");
      const title = document.getElementById("tv-title");
      const status = document.getElementById("tv-status");
      const lanesBox = document.getElementById("tv-lanes");
      const board = document.getElementById("tv-board");
      let mode = null, sequence = null, lanes = [], sideOfAthlete = {};

      function element(tag, className, text) {
        const e = document.createElement(tag);
        if (className) e.className = className;
        if (text !== undefined) e.textContent = text;
        return e;
      }

      function makeLanes(names, colours) {
        lanesBox.textContent = "";
        lanes = names.map(function (name, index) {
          const box = element("article", "lane");
          box.dataset.lane = String(index + 1);
          const who = element("div", "who");
          if (colours) {
            const swatch = element("span", "swatch");
            swatch.style.background = ["#D7263D", "#1F6FD1", "#2FA84F", "#F4C430"][index] || "#888";
            who.appendChild(swatch);
          }
          who.appendChild(document.createTextNode(name));
          const last = element("div", "last", "–");
          const figures = element("div", "figures", "0 hits · 0 steps");
          box.appendChild(who); box.appendChild(last); box.appendChild(figures);
          lanesBox.appendChild(box);
          return { box: box, who: who, last: last, figures: figures, steps: 0, hits: 0, sum: 0 };
        });
      }

      function laneFor(m) {
        if (mode === "chase") return lanes[sideOfAthlete[m.athlete]];
        return lanes[(m.lane || 1) - 1];
      }

      function step(m) {
        const lane = laneFor(m);
        if (!lane) return;
        lane.steps += 1;
        if (m.hit) { lane.hits += 1; lane.sum += m.reactionMilliseconds; }
        lane.last.textContent = m.hit ? m.reactionMilliseconds + " ms" : "miss";
        lane.last.className = m.hit ? "last" : "last miss";
        lane.last.style.color = m.hit && m.fill ? m.fill : "";
        const mean = lane.hits ? Math.round(lane.sum / lane.hits) + " ms mean" : "no hits";
        lane.figures.textContent = lane.hits + "/" + lane.steps + " hit · " + mean;
      }

      function refreshBoard() {
        const query = sequence ? "?sequence=" + encodeURIComponent(sequence) : "";
        fetch("/tv/board" + query, { credentials: "same-origin" })
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (html) { if (html !== null) board.innerHTML = html; })
          .catch(function () {});
      }

      function handle(m) {
        root.dataset.run = String(m.run);
        switch (m.kind) {
          case "idle":
            status.textContent = "Waiting for a game…";
            break;
          case "game-started":
            mode = m.mode; sequence = m.sequence; sideOfAthlete = {};
            (m.lanes || []).forEach(function (side, index) { side.forEach(function (name) { sideOfAthlete[name] = index; }); });
            title.textContent = m.mode + " · " + m.sequence;
            makeLanes((m.lanes || []).map(function (side) { return side.join(" & "); }), m.mode === "chase");
            root.dataset.state = "running";
            status.textContent = "Starting…";
            break;
          case "started":
            mode = "single"; sequence = m.sequence;
            title.textContent = m.athlete + " · " + m.sequence;
            makeLanes([m.athlete], false);
            root.dataset.state = "running";
            status.textContent = "Starting…";
            break;
          case "progress":
            if (m.lane && mode === "relay" && lanes[m.lane - 1] && m.athlete && /starts$/.test(m.text || "")) {
              const lane = lanes[m.lane - 1];
              lane.who.textContent = m.athlete;
            }
            break;
          case "status":
            if (root.dataset.state === "running") status.textContent = "Running";
            break;
          case "step":
            step(m);
            break;
          case "decided":
            status.textContent = m.text;
            if (m.winner && lanes[m.winner - 1]) lanes[m.winner - 1].box.classList.add("winner");
            break;
          case "game-over":
            root.dataset.state = "over";
            status.textContent = "Game over: " + m.text;
            if (m.winner && lanes[m.winner - 1]) lanes[m.winner - 1].box.classList.add("winner");
            refreshBoard();
            break;
          case "ended":
            if (mode === "single") {
              root.dataset.state = "over";
              status.textContent = (m.complete ? "Complete" : "Incomplete") + " (" + m.text + ")";
              refreshBoard();
            }
            break;
          case "failed":
            status.textContent = "Failed: " + m.text;
            break;
        }
      }

      function connect() {
        const socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/live");
        socket.onopen = function () { root.dataset.connected = "yes"; };
        socket.onmessage = function (event) { try { handle(JSON.parse(event.data)); } catch (e) {} };
        socket.onclose = function () { root.dataset.connected = "no"; setTimeout(connect, 2000); };
      }
      connect();
    })();
    """#
}
