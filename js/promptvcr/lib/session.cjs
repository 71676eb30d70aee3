"use strict";
// A test process's side: its environment points the SDKs at the run's server, each test starts
// its own cassette there (POST /_promptvcr/start) and stops it (POST /_promptvcr/stop), and the
// process's `fetch` names the test's cassette on each request it sends to the server (the
// `x-promptvcr-cassette` header), so test files running in parallel never share a cassette.
//
// A miss is answered by serve in the provider's error shape, so the SDK raises its own error;
// the fetch here shortens that message to its first line, and the test's stop prints the
// fields that differ: once, whether the code under test raised the SDK's error, swallowed it,
// or failed for another reason.

const path = require("node:path");
const { baseURLOf } = require("./providers.cjs");
const { cassettePath } = require("./naming.cjs");
const { describeTest } = require("./report.cjs");

const CASSETTE_HEADER = "x-promptvcr-cassette";
const MISS_CODE = "promptvcr_cassette_miss";
const MISS_NOTE = "(promptvcr prints the fields that differ with this test's failure)";

// `fetch`: the process's own, before wrapping (the admin calls name no cassette); `misses`:
// the whole messages of the running test's misses, as the server answered them.
// `outer`: the cassettes of the tests around the running one (node's subtests, `t.test()`),
// each the running one again when its inner test ends.
const state = { current: null, fetch: null, misses: [], outer: [] };

function serverURL(env = process.env) {
  const url = env.PROMPTVCR_URL;
  if (!url) {
    throw new Error(
      "promptvcr: no server for this test process ($PROMPTVCR_URL is unset). Add the runner's set-up " +
        "(vitest: plugins: [promptvcr()]; jest: preset: \"promptvcr\"; node --test: --require promptvcr/node-test)," +
        " or start `promptvcr serve` yourself and set PROMPTVCR_URL to its URL.",
    );
  }
  return url.replace(/\/+$/, "");
}

// The base URL of `provider` ("openai", "anthropic", "gemini", ..., or an --upstream name)
// through the run's server: for SDKs that take no base URL from the environment, e.g.
// `new GoogleGenAI({ apiKey, httpOptions: { baseUrl: baseURL("gemini") } })`.
function baseURL(provider) {
  return baseURLOf(serverURL(), provider);
}

// The header naming the running test's cassette, for a client that does not send its requests
// through `fetch` (give it to its `defaultHeaders` / `headers` option).
function cassetteHeaders() {
  return state.current ? { [CASSETTE_HEADER]: state.current } : {};
}

function urlOf(input) {
  if (typeof input === "string") return input;
  if (input instanceof URL) return input.href;
  return input && typeof input.url === "string" ? input.url : String(input);
}

// A miss's answer: its message kept for the test (takeMisses), and, `shorten`, cut to its
// first line in what the SDK gets.
async function missed(response, shorten) {
  let body;
  try {
    body = JSON.parse(await response.clone().text());
  } catch {
    return response;
  }
  const error = body && typeof body.error === "object" && body.error !== null ? body.error : null;
  if (!error || typeof error.message !== "string") return response;
  state.misses.push(error.message);
  if (!shorten) return response;
  error.message = `${error.message.split("\n", 1)[0]} ${MISS_NOTE}`;
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
  return new Response(JSON.stringify(body), { status: response.status, statusText: response.statusText, headers });
}

// Wrap the process's fetch once: requests to the server carry the running test's cassette.
// SDKs that keep a reference to `fetch` take it when they are constructed, after this ran.
function wrapFetch(scope = globalThis) {
  if (typeof scope.fetch !== "function" || scope.fetch.promptvcr) return; // none (jsdom): see admin
  const original = scope.fetch;
  state.fetch = state.fetch || original;
  const server = serverURL();
  async function promptvcrFetch(input, init) {
    const url = urlOf(input);
    if (!state.current || !(url === server || url.startsWith(`${server}/`))) return original(input, init);
    const headers = new Headers(init && init.headers ? init.headers : input instanceof Request ? input.headers : undefined);
    if (!headers.has(CASSETTE_HEADER)) headers.set(CASSETTE_HEADER, state.current);
    const response = await original(input, { ...init, headers });
    return response.headers.get("x-promptvcr") === MISS_CODE ? missed(response, true) : response;
  }
  promptvcrFetch.promptvcr = true;
  scope.fetch = promptvcrFetch;
}

async function admin(action, body) {
  const send = state.fetch || globalThis.fetch;
  if (typeof send !== "function") {
    throw new Error(
      "promptvcr: this test environment has no fetch (jest's jsdom environment?), which the npm SDKs " +
        "and promptvcr need: run LLM tests in the node environment (`@jest-environment node` in the file's docblock).",
    );
  }
  const answer = await send(`${serverURL()}/_promptvcr/${action}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await answer.text();
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(`promptvcr: the server answered ${action} with ${answer.status}: ${text.slice(0, 500)}`);
  }
  if (!answer.ok) throw new Error(data.error || `promptvcr: ${action} answered ${answer.status}`);
  return data;
}

// Start the cassette of one test (`names`: its describe blocks and its own name). `options`:
// serve's start options (record_mode, allow_playback_repeats, on_record_error, ...).
async function begin(testFile, names, options = {}) {
  const cassette = options.cassette || cassettePath(testFile, names);
  const { cassette: _ignored, ...rest } = options;
  const started = await admin("start", { cassette, ...rest });
  if (state.current) state.outer.push({ current: state.current, misses: state.misses });
  state.current = started.cassette;
  state.misses = [];
  return started;
}

// The whole messages of the running test's misses so far, each given once.
function takeMisses() {
  const misses = state.misses;
  state.misses = [];
  return misses;
}

// Stop the running test's cassette; resolves to its report, or rejects with why it failed the
// test (a miss with the fields that differ, a cassette not written, a response cut short).
// `quiet`: the test's own error already says it (see node-test.cjs).
async function end({ passed = true, quiet = false } = {}) {
  const cassette = state.current;
  if (!cassette) return null;
  const outer = state.outer.pop() || { current: null, misses: [] };
  state.current = outer.current;
  state.misses = outer.misses;
  const report = await admin("stop", { cassette, passed });
  if (!report.ok && !quiet) {
    const error = new Error(describeTest(report));
    error.name = "PromptvcrCassetteError";
    error.stack = `${error.name}: ${error.message}`; // the message is the story; no frames of ours
    throw error;
  }
  return report;
}

// Run `body` with the cassette at `cassette` (relative to the working directory): outside any
// runner's set-up, or inside a test that wants another cassette than its own, whose cassette
// is the running one again afterwards.
async function useCassette(cassette, body, options = {}) {
  wrapFetch();
  await begin("", [], { ...options, cassette: path.resolve(cassette) });
  let failure = null;
  try {
    await body(cassetteHeaders());
  } catch (error) {
    failure = error;
  }
  try {
    await end({ passed: failure === null });
  } catch (error) {
    if (failure === null) throw error;
    failure.message += `\n${error.message}`;
  }
  if (failure !== null) throw failure;
}

function currentCassette() {
  return state.current;
}

module.exports = {
  CASSETTE_HEADER,
  admin,
  baseURL,
  begin,
  cassetteHeaders,
  currentCassette,
  end,
  serverURL,
  takeMisses,
  useCassette,
  wrapFetch,
};
