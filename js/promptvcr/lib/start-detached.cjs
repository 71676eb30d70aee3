"use strict";
// startServerSync's helper: starts `promptvcr serve` detached (it outlives this process) and
// prints, as JSON, where it listens; on failure, why, on stderr, and exits 1.
const { launchServer } = require("./server.cjs");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (text) => {
  input += text;
});
process.stdin.on("end", async () => {
  const { usageRecord } = JSON.parse(input || "{}");
  try {
    const info = await launchServer({ env: process.env, cwd: process.cwd(), usageRecord, detached: true });
    process.stdout.write(JSON.stringify(info));
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 1;
  }
});
