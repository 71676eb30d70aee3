"use strict";
// promptvcr for JavaScript and TypeScript suites: the runner set-ups are in promptvcr/vitest,
// promptvcr/jest (or the "promptvcr" jest preset) and promptvcr/node-test; this module is what
// a test or a custom set-up calls.

const session = require("./lib/session.cjs");
const { startServer } = require("./lib/server.cjs");
const { cassettePath } = require("./lib/naming.cjs");

module.exports = {
  CASSETTE_HEADER: session.CASSETTE_HEADER,
  baseURL: session.baseURL,
  cassetteHeaders: session.cassetteHeaders,
  cassettePath,
  currentCassette: session.currentCassette,
  startServer,
  useCassette: session.useCassette,
};
