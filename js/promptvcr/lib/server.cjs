"use strict";
// The process that owns `promptvcr serve` for a run: starts it on a free port, waits until it
// listens, and stops it at the end, printing what it served (lib/report.cjs).
//
// One process owns the server (vitest's and jest's global setup, node's test runner process or
// a test file's), and every test process reaches it through $PROMPTVCR_URL, so a run has one
// server, one report and one usage record.

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { environmentFor, placeholderKeys, upstreamsFrom } = require("./providers.cjs");
const { describeRun } = require("./report.cjs");

const READY_PREFIX = "promptvcr serve: listening on ";
const START_TIMEOUT_MS = 60_000;
const MODES = ["replay", "record", "rewrite", "passthrough", "verify", "once"];

// The commands tried in turn: $PROMPTVCR_SERVE_COMMAND (a command line, split on spaces, or a
// JSON array), `promptvcr` on PATH, then `python3 -m promptvcr` and `python -m promptvcr`.
function candidates(env) {
  const given = env.PROMPTVCR_SERVE_COMMAND;
  if (given) {
    const words = given.trim().startsWith("[") ? JSON.parse(given) : given.trim().split(/\s+/);
    return [words];
  }
  return [["promptvcr"], ["python3", "-m", "promptvcr"], ["python", "-m", "promptvcr"]];
}

function recordMode(env) {
  const mode = (env.PROMPTVCR_RECORD_MODE || "replay").trim();
  if (!MODES.includes(mode)) {
    throw new Error(
      `promptvcr: PROMPTVCR_RECORD_MODE=${JSON.stringify(mode)} is not a record mode; use one of ${MODES.join(", ")}` +
        " (replay, the default, needs no network and no key; record records what the cassettes miss)",
    );
  }
  return mode;
}

function launch(words, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(words[0], [...words.slice(1), ...args], options);
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`promptvcr: \`${[...words, ...args].join(" ")}\` did not start within ${START_TIMEOUT_MS / 1000} s:\n${stderr}`));
    }, START_TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text) => {
      stderr += text;
    });
    child.stdout.setEncoding("utf8");
    const onData = (text) => {
      stdout += text;
      const line = stdout.split("\n").find((l) => l.startsWith(READY_PREFIX));
      if (line) {
        clearTimeout(timer);
        child.stdout.off("data", onData);
        child.stdout.resume();
        resolve({ child, url: line.slice(READY_PREFIX.length).trim(), log: () => stderr });
      }
    };
    child.stdout.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`promptvcr serve exited ${code} before it listened:\n${stderr || stdout}`));
    });
  });
}

// Start `promptvcr serve`; resolves to the running server. `usageRecord`: the path of the
// run's usage record (for `promptvcr prune --record`), or none.
async function startServer({ env = process.env, cwd = process.cwd(), usageRecord } = {}) {
  const mode = recordMode(env);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "promptvcr-js-"));
  const report = path.join(scratch, "report.json");
  const args = ["serve", "--port", "0", "--record-mode", mode, "--report", report];
  const { upstreams, paths } = upstreamsFrom(env);
  // Replaying, the cassette's own upstream keys each request (serve keeps it in the cassette):
  // a base URL the environment names only matters when requests go out.
  if (mode !== "replay") for (const [name, url] of Object.entries(upstreams)) args.push("--upstream", `${name}=${url}`);
  if (usageRecord) args.push("--usage-record", path.resolve(cwd, usageRecord));
  const options = { cwd, env: { ...env, PYTHONUNBUFFERED: "1" }, stdio: ["ignore", "pipe", "pipe"] };
  let running = null;
  const tried = [];
  for (const words of candidates(env)) {
    try {
      running = await launch(words, args, options);
      break;
    } catch (error) {
      if (error.code !== "ENOENT" && !/No module named promptvcr/.test(error.message)) throw error;
      tried.push(words.join(" "));
    }
  }
  if (running === null) {
    throw new Error(
      `promptvcr: cannot start \`promptvcr serve\`: tried ${tried.map((t) => `\`${t}\``).join(", ")}. ` +
        "Install it (`pip install 'promptvcr[serve]'`) where one of those finds it, or set " +
        "PROMPTVCR_SERVE_COMMAND to the command that runs it (e.g. `uv run promptvcr`).",
    );
  }
  const { child, url, log } = running;
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const environment = {
    PROMPTVCR_URL: url,
    PROMPTVCR_RECORD_MODE: mode,
    ...environmentFor(url, paths),
    ...(mode === "replay" ? placeholderKeys(env) : {}),
  };
  return {
    url,
    mode,
    environment,
    // Let this process end while the server runs (node's test runner waits for its event loop
    // to empty, and `beforeExit` stops the server); stop() holds it again until the server exits.
    detach() {
      child.unref();
      child.stdout.unref();
      child.stderr.unref();
    },
    // Stop the server (it writes what it recorded and the usage record), and give its report:
    // { cassettes: [...], errors, exitCode, text } (text: the lines for the end of the run).
    async stop({ failed = false } = {}) {
      child.ref();
      child.stdout.ref();
      child.stderr.ref();
      try {
        await fetch(`${url}/_promptvcr/shutdown`, { method: "POST" });
      } catch {
        child.kill("SIGTERM");
      }
      const exitCode = await exited;
      let data = { cassettes: [], errors: [] };
      try {
        data = JSON.parse(fs.readFileSync(report, "utf8"));
      } catch {
        data.errors.push(`promptvcr serve wrote no report (exit ${exitCode}):\n${log()}`);
      }
      fs.rmSync(scratch, { recursive: true, force: true });
      if (usageRecord && failed) markIncomplete(path.resolve(cwd, usageRecord), "a test failed in this run");
      return { ...data, exitCode, log: log(), text: describeRun(data, mode) };
    },
  };
}

// A usage record of a run with a failed test proves nothing unused (prune refuses it): a test
// that failed early may need recordings it did not reach. serve learns of a failed test from
// its stop's `passed`; where the runner does not tell a hook, the run's result does.
function markIncomplete(file, why) {
  try {
    const record = JSON.parse(fs.readFileSync(file, "utf8"));
    record.incomplete = [...new Set([...(record.incomplete || []), why])];
    fs.writeFileSync(file, JSON.stringify(record, null, 2));
  } catch {
    // no record written: serve said why on its stderr, and prune finds none
  }
}

module.exports = { MODES, READY_PREFIX, recordMode, startServer };
