// Draws the guides' diagrams as SVG at build time, offline, with no browser: a sequence diagram and
// a state diagram, each from a tiny text source kept in the contract's markdown (a fenced block
// with the language `sequence` or `states`), so that every other reader of the contract still sees
// readable text. The pictures use `currentColor` for lines and text, so they take the page's text
// colour in light and dark themes alike, and one mid-tone accent that reads on both backgrounds.
//
// Sequence source:                      States source:
//   participants: Browser | App | Tenant    access token (15 minutes)      <- a group title
//   App -> Browser: a message               issued: active                 <- the initial state
//   App -> App: a note on App's line        active -> expired: 15 minutes  <- a transition
//
// The layout is deliberately simple: fixed columns and rows, labels wrapped to a column's width.

const FONT = 13;
const CHAR = 7.2; // average advance of a 13px sans-serif character, for sizing boxes and wrapping
const LINE = 17;
const ACCENT = "#6366f1"; // indigo 500: legible on white and on near-black

const STYLE =
  `<style>` +
  `text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans",Arial,sans-serif;font-size:${FONT}px;fill:currentColor}` +
  `.box{fill:currentColor;fill-opacity:.06;stroke:currentColor;stroke-width:1.2}` +
  `.life{stroke:currentColor;stroke-opacity:.45;stroke-dasharray:4 4}` +
  `.arrow{stroke:${ACCENT};stroke-width:1.6;fill:none}` +
  `.head{fill:${ACCENT}}` +
  `.note{fill:${ACCENT};fill-opacity:.12;stroke:${ACCENT};stroke-width:1}` +
  `.title{font-weight:600}` +
  `</style>`;

const escapeXml = (text) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Splits `text` into lines of at most `max` characters, at spaces. */
export function wrap(text, max) {
  const lines = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== "" && line.length + 1 + word.length > max) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** A `<text>` of one or more lines, centred on x (or starting at x), the first baseline at y. */
function textBlock(lines, x, y, anchor = "middle", className = "") {
  const cls = className ? ` class="${className}"` : "";
  const spans = lines
    .map((line, i) => `<tspan x="${x}" dy="${i === 0 ? 0 : LINE}">${escapeXml(line)}</tspan>`)
    .join("");
  return `<text x="${x}" y="${y}" text-anchor="${anchor}"${cls}>${spans}</text>`;
}

const arrowHead = (x, y, direction) => `<path class="head" d="M${x} ${y} l${-10 * direction} -5 v10 z"/>`;

function svg(width, height, title, body) {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeXml(title)}" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}" style="max-width:100%;height:auto">` +
    `<title>${escapeXml(title)}</title>${STYLE}${body}</svg>`
  );
}

/** Parses a sequence source: its participants, and its messages in order. */
export function parseSequence(source) {
  const lines = source
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const header = lines.shift() ?? "";
  const match = /^participants:\s*(.+)$/.exec(header);
  if (!match) throw new Error(`a sequence starts with "participants: A | B | C", not "${header}"`);
  const participants = match[1].split("|").map((name) => name.trim());
  const messages = lines.map((line) => {
    const m = /^(.+?)\s*->\s*(.+?):\s*(.+)$/.exec(line);
    if (!m) throw new Error(`not a message ("From -> To: text"): "${line}"`);
    const [from, to] = [participants.indexOf(m[1]), participants.indexOf(m[2])];
    if (from === -1 || to === -1)
      throw new Error(`unknown participant in "${line}" (participants: ${participants.join(", ")})`);
    return { from, to, text: m[3] };
  });
  return { participants, messages };
}

/** Draws a sequence diagram: participants in columns, lifelines, messages as arrows in rows. */
export function renderSequence(source, title = "Sequence diagram") {
  const { participants, messages } = parseSequence(source);
  const column = 250;
  const margin = 20;
  const boxWidth = Math.max(...participants.map((name) => name.length * CHAR + 28), 110);
  const x = (i) => margin + boxWidth / 2 + i * column;
  const width = margin * 2 + boxWidth + (participants.length - 1) * column;
  const top = margin + 34;
  let y = top + 20;
  let body = "";
  for (const [i, message] of messages.entries()) {
    const step = `${i + 1}. ${message.text}`;
    if (message.from === message.to) {
      // A step on one participant's own line: a note box centred on its lifeline.
      const lines = wrap(step, 40);
      const w = Math.max(...lines.map((line) => line.length)) * CHAR + 20;
      const h = lines.length * LINE + 10;
      body += `<rect class="note" x="${x(message.from) - w / 2}" y="${y}" width="${w}" height="${h}" rx="4"/>`;
      body += textBlock(lines, x(message.from), y + 5 + FONT, "middle");
      y += h + 16;
    } else {
      const lines = wrap(step, Math.floor((column * Math.abs(message.to - message.from) - 20) / CHAR));
      const arrowY = y + lines.length * LINE + 4;
      const [x1, x2] = [x(message.from), x(message.to)];
      const direction = Math.sign(x2 - x1);
      body += textBlock(lines, (x1 + x2) / 2, y + FONT, "middle");
      body +=
        `<line class="arrow" x1="${x1}" y1="${arrowY}" x2="${x2 - 2 * direction}" y2="${arrowY}"/>` +
        arrowHead(x2, arrowY, direction);
      y = arrowY + 18;
    }
  }
  const bottom = y + 4;
  let frame = "";
  for (const [i, name] of participants.entries()) {
    frame += `<line class="life" x1="${x(i)}" y1="${top}" x2="${x(i)}" y2="${bottom}"/>`;
    for (const boxY of [margin, bottom]) {
      frame += `<rect class="box" x="${x(i) - boxWidth / 2}" y="${boxY}" width="${boxWidth}" height="34" rx="6"/>`;
      frame += textBlock([name], x(i), boxY + 22, "middle", "title");
    }
  }
  return svg(width, bottom + 34 + margin, title, frame + body);
}

/** Parses a states source: groups, each with a title, an initial state and its transitions. */
export function parseStates(source) {
  const groups = [];
  for (const line of source
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)) {
    const transition = /^(.+?)\s*->\s*(.+?):\s*(.+)$/.exec(line);
    const initial = /^(.+?):\s*(.+)$/.exec(line);
    if (transition) {
      const group = groups.at(-1);
      if (!group) throw new Error(`a transition before any group title: "${line}"`);
      group.transitions.push({ from: transition[1], to: transition[2], text: transition[3] });
    } else if (initial) {
      const group = groups.at(-1);
      if (!group) throw new Error(`an initial state before any group title: "${line}"`);
      group.initial = { text: initial[1], state: initial[2] };
    } else groups.push({ title: line, initial: undefined, transitions: [] });
  }
  for (const group of groups) {
    if (!group.initial) throw new Error(`group "${group.title}" has no initial state ("issued: <state>")`);
    for (const t of group.transitions) {
      if (t.from !== group.initial.state)
        throw new Error(
          `"${t.from} -> ${t.to}": only transitions out of the initial state "${group.initial.state}" are drawn`,
        );
    }
  }
  return groups;
}

/** Draws a state diagram: per group, the initial state on the left and the states it moves to on the right. */
export function renderStates(source, title = "State diagram") {
  const groups = parseStates(source);
  const margin = 20;
  const rowGap = 58;
  const boxHeight = 36;
  const startX = margin + 6;
  const boxWidth = (text) => text.length * CHAR + 32;
  const sourceWidth = Math.max(...groups.map((g) => boxWidth(g.initial.state)));
  const sourceX = startX + 120;
  const gap = Math.max(...groups.flatMap((g) => g.transitions.map((t) => t.text.length * CHAR + 60)), 200);
  const targetX = sourceX + sourceWidth + gap;
  const targetWidth = Math.max(...groups.flatMap((g) => g.transitions.map((t) => boxWidth(t.to))));
  const width = targetX + targetWidth + margin;
  let y = margin;
  let body = "";
  for (const group of groups) {
    body += textBlock([group.title], margin, y + FONT, "start", "title");
    y += 28;
    const rows = Math.max(group.transitions.length, 1);
    const centre = (row) => y + row * rowGap + boxHeight / 2;
    const sourceY = (centre(0) + centre(rows - 1)) / 2;
    // The initial state: a filled dot, an arrow labelled with what creates it, the state's box.
    body += `<circle cx="${startX}" cy="${sourceY}" r="6" class="head"/>`;
    body += textBlock([group.initial.text], (startX + sourceX) / 2, sourceY - 8, "middle");
    body +=
      `<line class="arrow" x1="${startX + 6}" y1="${sourceY}" x2="${sourceX - 2}" y2="${sourceY}"/>` +
      arrowHead(sourceX, sourceY, 1);
    body += `<rect class="box" x="${sourceX}" y="${sourceY - boxHeight / 2}" width="${sourceWidth}" height="${boxHeight}" rx="18"/>`;
    body += textBlock([group.initial.state], sourceX + sourceWidth / 2, sourceY + 5, "middle", "title");
    const outX = sourceX + sourceWidth;
    const bendX = outX + 20;
    for (const [row, transition] of group.transitions.entries()) {
      const ty = centre(row);
      // Out of the source box, down or up to the target's row, then across with the label on top.
      body +=
        `<path class="arrow" d="M${outX} ${sourceY} H${bendX} V${ty} H${targetX - 2}"/>` + arrowHead(targetX, ty, 1);
      body += textBlock([transition.text], (bendX + targetX) / 2, ty - 8, "middle");
      body += `<rect class="box" x="${targetX}" y="${ty - boxHeight / 2}" width="${boxWidth(transition.to)}" height="${boxHeight}" rx="18"/>`;
      body += textBlock([transition.to], targetX + boxWidth(transition.to) / 2, ty + 5, "middle", "title");
    }
    y += rows * rowGap + 10;
  }
  return svg(width, y + margin - 10, title, body);
}

const RENDERERS = { sequence: renderSequence, states: renderStates };

/**
 * Replaces every fenced `sequence` or `states` block of `markdown` with its SVG, inline, on a line
 * of its own (an HTML block for the markdown renderer). The fence's first line may carry a title
 * after the language: ```` ```states Token lifecycle ````.
 */
export function renderDiagrams(markdown) {
  return markdown.replace(
    /^```(sequence|states)[^\S\n]*([^\n]*)\n([\s\S]*?)^```[^\S\n]*$/gm,
    (_block, kind, title, source) => {
      const fallback = kind === "sequence" ? "Sequence diagram" : "State diagram";
      return `<div class="diagram diagram-${kind}">${RENDERERS[kind](source, title.trim() || fallback)}</div>`;
    },
  );
}
