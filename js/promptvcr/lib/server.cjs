"use strict";
// The process that owns `promptvcr serve` for a run: starts it on a free port, waits until it
// listens, and stops it at the end, printing what it served (lib/report.cjs).
//
// One process owns the server (vitest's and jest's global setup, node's test runner process or
// a test file's), and every test process reaches it through $PROMPTVCR_URL, so a run has one
// server, one report and one usage record.
//
// The server writes its output to files in a scratch folder, not to pipes, and is stopped by
// its URL and process id, so that a server started by a short-lived helper process outlives it
// (startServerSync, for node's `--require`, which cannot wait for a promise).

const { execFileSync, spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { environmentFor, placeholderKeys, upstreamsFrom } = require("./providers.cjs");
const { describeRun } = require("./report.cjs");

const READY_PREFIX = "promptvcr serve: listening on ";
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 60_000;
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

function read(file) {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Run one candidate command; resolves when it prints that it listens.
function launch(words, args, { cwd, env, scratch, detached }) {
  const out = path.join(scratch, "stdout.log");
  const err = path.join(scratch, "stderr.log");
  const stdio = ["ignore", fs.openSync(out, "w"), fs.openSync(err, "w")];
  return new Promise((resolve, reject) => {
    const child = spawn(words[0], [...words.slice(1), ...args], { cwd, env, stdio, detached });
    fs.closeSync(stdio[1]);
    fs.closeSync(stdio[2]);
    let settled = false;
    const settle = (action) => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      clearTimeout(timer);
      action();
    };
    const poll = setInterval(() => {
      const line = read(out).split("\n").find((l) => l.startsWith(READY_PREFIX));
      if (line) settle(() => resolve({ child, url: line.slice(READY_PREFIX.length).trim(), log: () => read(err) }));
    }, 20);
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      settle(() => reject(new Error(`promptvcr: \`${[...words, ...args].join(" ")}\` did not start within ${START_TIMEOUT_MS / 1000} s:\n${read(err)}`)));
    }, START_TIMEOUT_MS);
    child.on("error", (error) => settle(() => reject(error)));
    child.on("exit", (code) => {
      settle(() => reject(new Error(`promptvcr serve exited ${code} before it listened:\n${read(err) || read(out)}`)));
    });
  });
}

// Start `promptvcr serve`; resolves to what running() takes. `usageRecord`: the path of the
// run's usage record (for `promptvcr prune --record`), or none. `detached`: the server
// outlives this process (startServerSync's helper).
async function launchServer({ env = process.env, cwd = process.cwd(), usageRecord, detached = false } = {}) {
  const mode = recordMode(env);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "promptvcr-js-"));
  const report = path.join(scratch, "report.json");
  const args = ["serve", "--port", "0", "--record-mode", mode, "--report", report];
  const { upstreams, paths } = upstreamsFrom(env);
  // Replaying, the cassette's own upstream keys each request (serve keeps it in the cassette):
  // a base URL the environment names only matters when requests go out.
  if (mode !== "replay") for (const [name, url] of Object.entries(upstreams)) args.push("--upstream", `${name}=${url}`);
  const record = usageRecord ? path.resolve(cwd, usageRecord) : null;
  if (record) args.push("--usage-record", record);
  const options = { cwd, env: { ...env, PYTHONUNBUFFERED: "1" }, scratch, detached };
  const tried = [];
  for (const words of candidates(env)) {
    let running;
    try {
      running = await launch(words, args, options);
    } catch (error) {
      if (error.code !== "ENOENT" && !/No module named promptvcr/.test(error.message)) throw error;
      tried.push(words.join(" "));
      continue;
    }
    if (detached) running.child.unref();
    const environment = {
      PROMPTVCR_URL: running.url,
      PROMPTVCR_RECORD_MODE: mode,
      ...environmentFor(running.url, paths),
      ...(mode === "replay" ? placeholderKeys(env) : {}),
    };
    return { url: running.url, pid: running.child.pid, mode, environment, scratch, report, record };
  }
  fs.rmSync(scratch, { recursive: true, force: true });
  throw new Error(
    `promptvcr: cannot start \`promptvcr serve\`: tried ${tried.map((t) => `\`${t}\``).join(", ")}. ` +
      "Install it (`pip install 'promptvcr[serve]'`) where one of those finds it, or set " +
      "PROMPTVCR_SERVE_COMMAND to the command that runs it (e.g. `uv run promptvcr`).",
  );
}

// A running server, from what launchServer gave (in this process or in startServerSync's helper).
function running(info) {
  return {
    ...info,
    // Stop the server (it writes what it recorded and the usage record), and give its report:
    // { cassettes: [...], errors, text } (text: the lines for the end of the run). `failed`: a
    // test of the run failed, which the server was not told (see markIncomplete).
    async stop({ failed = false } = {}) {
      try {
        await fetch(`${info.url}/_promptvcr/shutdown`, { method: "POST" });
      } catch {
        if (alive(info.pid)) process.kill(info.pid, "SIGTERM");
      }
      for (let waited = 0; alive(info.pid) && waited < STOP_TIMEOUT_MS; waited += 50) await sleep(50);
      const log = read(path.join(info.scratch, "stderr.log"));
      let data = { cassettes: [], errors: [] };
      try {
        data = JSON.parse(fs.readFileSync(info.report, "utf8"));
      } catch {
        data.errors.push(`promptvcr serve wrote no report:\n${log}`);
      }
      fs.rmSync(info.scratch, { recursive: true, force: true });
      if (info.record && failed) markIncomplete(info.record, "a test failed in this run");
      return { ...data, log, text: describeRun(data, info.mode) };
    },
  };
}

async function startServer(options = {}) {
  return running(await launchServer(options));
}

// The same, blocking until the server listens: a helper process starts it (detached, so it
// outlives the helper) and prints where it listens.
function startServerSync({ env = process.env, cwd = process.cwd(), usageRecord } = {}) {
  const helper = path.join(__dirname, "start-detached.cjs");
  let printed;
  try {
    printed = execFileSync(process.execPath, [helper], {
      cwd,
      env: { ...env, NODE_OPTIONS: "" },
      input: JSON.stringify({ usageRecord: usageRecord || null }),
      encoding: "utf8",
      stdio: ["pipe", "pipe", "pipe"],
      timeout: START_TIMEOUT_MS + 5_000,
    });
  } catch (error) {
    throw new Error(String(error.stderr || error.message).trim());
  }
  return running(JSON.parse(printed));
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

module.exports = { MODES, READY_PREFIX, launchServer, recordMode, startServer, startServerSync };
