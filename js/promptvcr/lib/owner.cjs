"use strict";
// Owning the run's server from a runner's global set-up: start it, point this process's
// environment (inherited by the test processes started after) at it, and at the end stop it
// and print what it served on stderr, whatever reporter the run uses.

const { startServer, startServerSync } = require("./server.cjs");

// $PROMPTVCR_URL already set: a server someone else owns (a shell, a CI step, an outer run),
// used as is. Else a new one, with the usage record $PROMPTVCR_USAGE_RECORD names (give it on
// runs of the whole suite only: the server cannot tell that the runner ran one file).
async function own({ usageRecord = process.env.PROMPTVCR_USAGE_RECORD } = {}) {
  if (process.env.PROMPTVCR_URL) return null;
  return adopted(await startServer({ env: process.env, usageRecord }));
}

// A process that ends without stopping its server (process.exit, a runner's forced exit) sends
// it SIGTERM, on which it writes what it recorded and exits: no server outlives its run.
const owned = new Set();
process.on("exit", () => {
  for (const server of owned) {
    try {
      process.kill(server.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
});

function adopted(server) {
  owned.add(server);
  Object.assign(process.env, server.environment);
  return server;
}

// The same, blocking (node's `--require`, where nothing waits for a promise).
function ownSync({ usageRecord = process.env.PROMPTVCR_USAGE_RECORD } = {}) {
  if (process.env.PROMPTVCR_URL) return null;
  return adopted(startServerSync({ env: process.env, usageRecord }));
}

async function finish(server, { failed = false, write = (text) => process.stderr.write(text) } = {}) {
  if (!server) return null;
  owned.delete(server);
  for (const name of Object.keys(server.environment)) delete process.env[name];
  const report = await server.stop({ failed });
  write(`\n${report.text}\n`);
  return report;
}

module.exports = { finish, own, ownSync };
