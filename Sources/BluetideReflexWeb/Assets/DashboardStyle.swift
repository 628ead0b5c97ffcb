import BluetideReflex

/// The dashboard's stylesheet (served at `/static/dashboard.css`): our own small CSS, phone
/// first, with the six target colours taken from ``TargetPalette`` so buttons, swatches and
/// charts match the LEDs.
public enum DashboardStyle {
    /// The stylesheet text.
    public static let css: String = {
        let targetRules = TargetPalette.colours.map { colour in
            """
            .target-\(colour.target) { background: var(--target-\(colour.target)); border-color: var(--target-\(colour.target)-stroke); color: \(textColour(on: colour.target)); }

            """
        }.joined()
        return """
            :root {
            \(TargetPalette.cssCustomProperties)--ink: #1d2230;
            --muted: #5d6475;
            --line: #d9dce3;
            --accent: #0b5cad;
            --bad: #b3261e;
            --good: #1e7a3a;
            --paper: #f6f7f9;
            }
            * { box-sizing: border-box; }
            html { -webkit-text-size-adjust: 100%; }
            body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--paper); }
            header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .6rem 1rem; background: #141925; color: #fff; }
            header.top a { color: #fff; text-decoration: none; }
            .brand { font-weight: 700; font-size: 1.1rem; margin-right: auto; display: inline-flex; align-items: center; gap: .55rem; }
            .leds { display: inline-grid; grid-template-columns: repeat(3, .5rem); gap: .15rem; }
            .leds i { width: .5rem; height: .5rem; border-radius: 50%; border: 1px solid; }
            nav { display: flex; gap: .25rem; }
            nav a { padding: .45rem .8rem; border-radius: .5rem; }
            nav a[aria-current="page"] { background: #2d3650; }
            main { max-width: 62rem; margin: 0 auto; padding: .75rem 1rem 2rem; }
            h1 { font-size: 1.5rem; margin: .6rem 0 .8rem; }
            h2 { font-size: 1.15rem; margin: 1.6rem 0 .6rem; }
            footer { text-align: center; color: var(--muted); font-size: .8rem; padding: 1rem; }
            a { color: var(--accent); }
            .card > h2:first-child, .card > p.run-state:first-child { margin-top: .1rem; }
            .charts { display: grid; grid-template-columns: 1fr; }
            section.card, form.card { background: #fff; border: 1px solid var(--line); border-radius: .75rem; padding: .9rem 1rem; margin: 0 0 1rem; }
            .table-wrap { overflow-x: auto; -webkit-overflow-scrolling: touch; }
            table { border-collapse: collapse; width: 100%; background: #fff; font-variant-numeric: tabular-nums; }
            th, td { text-align: left; padding: .45rem .55rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
            th { font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
            td.num, th.num { text-align: right; white-space: nowrap; }
            dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: 0; }
            dl.facts dt { color: var(--muted); }
            dl.facts dd { margin: 0; }
            .muted { color: var(--muted); }
            .field { display: flex; flex-direction: column; gap: .2rem; margin: 0 0 .75rem; }
            .field > span { font-weight: 600; font-size: .9rem; }
            .field small { color: var(--muted); }
            input, select, textarea { font: inherit; padding: .55rem .6rem; border: 1px solid #b8bdc9; border-radius: .5rem; background: #fff; width: 100%; }
            textarea { min-height: 4rem; }
            input[aria-invalid="true"], select[aria-invalid="true"], textarea[aria-invalid="true"] { border-color: var(--bad); box-shadow: 0 0 0 2px #f3c7c4; }
            .field-error { color: var(--bad); font-size: .88rem; }
            .errors { border: 2px solid var(--bad); background: #fdecea; border-radius: .6rem; padding: .5rem .9rem; margin: 0 0 1rem; }
            .errors p { margin: .2rem 0; font-weight: 600; }
            .errors ul { margin: .2rem 0 .3rem; padding-left: 1.2rem; }
            .notice { border: 2px solid var(--good); background: #e8f5ec; border-radius: .6rem; padding: .5rem .9rem; margin: 0 0 1rem; }
            .grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); gap: 0 1rem; }
            button, .button { font: inherit; font-weight: 600; padding: .6rem 1.1rem; border-radius: .55rem; border: 1px solid #0a4a8c; background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; display: inline-block; }
            button.secondary { background: #fff; color: var(--accent); }
            button.danger { background: var(--bad); border-color: #7d1a15; }
            button:disabled { opacity: .5; cursor: default; }
            .swatch { display: inline-flex; align-items: center; justify-content: center; min-width: 1.7rem; height: 1.7rem; border-radius: 50%; border: 2px solid; font-weight: 700; font-size: .85rem; }
            .target-pad { display: grid; grid-template-columns: repeat(3, 1fr); gap: .6rem; margin: .4rem 0 1rem; max-width: 24rem; }
            .target-button { height: 4.2rem; border-radius: 1rem; border: 3px solid; font-size: 1.2rem; font-weight: 700; box-shadow: inset 0 -4px 0 rgba(0,0,0,.15); }
            .target-button:active { transform: translateY(2px); }
            fieldset.target-choices { border: 1px solid var(--line); border-radius: .6rem; margin: 0 0 .75rem; padding: .5rem .7rem .3rem; }
            fieldset.target-choices legend { font-weight: 600; font-size: .9rem; padding: 0 .3rem; }
            .target-check { display: inline-flex; align-items: center; gap: .35rem; margin: 0 .6rem .4rem 0; padding: .25rem .55rem .25rem .3rem; border-radius: 2rem; border: 2px solid; }
            .target-check input { width: auto; }
            ol.steps { list-style: none; padding: 0; margin: 0 0 1rem; display: grid; grid-template-columns: repeat(auto-fill, minmax(11.5rem, 1fr)); gap: .45rem; }
            ol.steps li { display: flex; align-items: center; gap: .4rem; background: #fff; border: 1px solid var(--line); border-radius: .6rem; padding: .3rem .4rem; }
            ol.steps li .n { color: var(--muted); font-size: .8rem; min-width: 1.4rem; }
            ol.steps li input { flex: 1; min-width: 0; width: auto; padding: .3rem .4rem; }
            ol.steps li button { padding: .15rem .5rem; background: #fff; color: var(--bad); border-color: var(--line); }
            .chart { background: #fff; border: 1px solid var(--line); border-radius: .75rem; padding: .3rem; margin: 0 0 1rem; }
            .chart svg { display: block; width: 100%; height: auto; }
            .weight-chart { margin: 0 0 1rem; }
            .weight-chart svg { display: block; width: 100%; height: auto; }
            /* Charts never shrink below their drawn width (720 units), so their text keeps its
               11-15 px on a phone; a narrow screen scrolls them sideways instead. */
            .chart, .weight-chart { overflow-x: auto; -webkit-overflow-scrolling: touch; }
            .chart svg, .weight-chart svg { min-width: 720px; }
            .run-state { font-size: 1.1rem; font-weight: 700; padding: .6rem .9rem; border-radius: .6rem; background: #eef1f6; margin: 0 0 .8rem; }
            .run-state[data-state="running"] { background: #e5efff; color: #0b4a8c; }
            .run-state[data-state="complete"] { background: #e8f5ec; color: var(--good); }
            .run-state[data-state="incomplete"], .run-state[data-state="failed"] { background: #fdecea; color: var(--bad); }
            .hit { color: var(--good); font-weight: 700; }
            .miss { color: var(--bad); font-weight: 700; }
            tr.step-row.fresh { animation: fresh 1s ease-out; }
            @keyframes fresh { from { background: #fff6c9; } to { background: transparent; } }
            .big-number { font-size: 2.2rem; font-weight: 800; line-height: 1.1; }
            .stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(7rem, 1fr)); gap: .5rem; margin: 0 0 1rem; }
            .stats div { background: #fff; border: 1px solid var(--line); border-radius: .6rem; padding: .5rem .7rem; }
            .stats span { display: block; color: var(--muted); font-size: .8rem; }
            .actions { display: flex; flex-wrap: wrap; gap: .6rem; align-items: center; }
            @media (max-width: 40rem) {
              main { padding: .5rem .6rem 2rem; }
              th, td { padding: .4rem .35rem; }
              .hide-small { display: none; }
            }
            \(targetRules)
            """
    }()

    /// Dark text on light LED colours (yellow, white, orange, green), white on the others.
    static func textColour(on target: UInt8) -> String {
        [3, 4].contains(target) ? "#1d2230" : "#ffffff"
    }
}
