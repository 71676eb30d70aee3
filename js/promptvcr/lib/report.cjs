"use strict";
// What the end of a run and a failed test print, from serve's reports (one per cassette:
// played, outcomes, misses, unused, drift, errors, cut_short, tokens).

const path = require("node:path");

function shown(file) {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith("..") ? relative : file;
}

// Why one test's cassette fails it: each miss with the fields that differ (printed here only:
// the client that missed was answered with the first line), writing errors, cut responses.
function describeTest(report) {
  const lines = [`promptvcr: cassette ${shown(report.path)} (${report.mode}) failed this test:`];
  for (const miss of report.misses || []) lines.push(miss.message);
  for (const error of report.errors || []) lines.push(error);
  for (const cut of report.cut_short || []) lines.push(`cut short: ${cut}`);
  return lines.join("\n");
}

function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

function add(total, tokens) {
  if (!tokens) return;
  total.input += tokens.input || 0;
  total.output += tokens.output || 0;
}

// The lines printed at the end of a run: what was served, the recordings no test played (which
// `promptvcr prune` can remove), drift found by `verify`, and the tokens replaying did not spend.
function describeRun(data, mode) {
  const cassettes = data.cassettes || [];
  const outcomes = {};
  const saved = { input: 0, output: 0 };
  const spent = { input: 0, output: 0 };
  let played = 0;
  for (const entry of cassettes) {
    played += entry.played || 0;
    for (const [outcome, count] of Object.entries(entry.outcomes || {})) outcomes[outcome] = (outcomes[outcome] || 0) + count;
    add(saved, entry.tokens && entry.tokens.replayed);
    add(spent, entry.tokens && entry.tokens.recorded);
  }
  const counts = Object.entries(outcomes).map(([outcome, count]) => `${count} ${outcome}`).join(", ");
  const lines = [`promptvcr (${mode}): ${plural(played, "request")} in ${plural(cassettes.length, "cassette")}${counts ? `: ${counts}` : ""}`];
  const missed = cassettes.filter((e) => (e.missed || []).length);
  if (missed.length) {
    lines.push(`  ${plural(missed.reduce((n, e) => n + e.missed.length, 0), "request")} missed (their tests failed, each with the fields that differ):`);
    for (const entry of missed) lines.push(`    ${shown(entry.path)}: ${entry.missed.join(", ")}`);
  }
  const unused = cassettes.filter((e) => (e.unused || []).length && e.mode !== "record" && e.mode !== "rewrite");
  if (unused.length) {
    lines.push(`  ${plural(unused.reduce((n, e) => n + e.unused.length, 0), "recording")} no test played (\`promptvcr prune --record <usage record> --dry-run\` lists what a whole run proves unused):`);
    for (const entry of unused) lines.push(`    ${shown(entry.path)}: ${entry.unused.join(", ")}`);
  }
  const drifted = cassettes.filter((e) => (e.drift || []).length);
  if (drifted.length) {
    lines.push("  drift: live answers whose structure differs from their recording:");
    for (const entry of drifted) {
      for (const drift of entry.drift) lines.push(`    ${shown(entry.path)}: ${typeof drift === "string" ? drift : JSON.stringify(drift)}`);
    }
  }
  for (const error of data.errors || []) lines.push(`  error: ${error}`);
  if (saved.input || saved.output) {
    lines.push(`  tokens not spent: replaying saved ${saved.input.toLocaleString("en")} input and ${saved.output.toLocaleString("en")} output tokens`);
  }
  if (spent.input || spent.output) {
    lines.push(`  tokens spent recording: ${spent.input.toLocaleString("en")} input and ${spent.output.toLocaleString("en")} output`);
  }
  return lines.join("\n");
}

module.exports = { describeRun, describeTest };
