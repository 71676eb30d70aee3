"use strict";
// Which environment variable points which SDK at which upstream of `promptvcr serve`.
//
// Each row: the variable an SDK reads its base URL from, the upstream name serve knows it by,
// and the path the SDK expects at the end of its base URL (the openai SDKs append
// `/chat/completions` to a base URL ending in `/v1`; the others add their version themselves).
// The same table as serve's own (promptvcr/server/upstreams.py), so that a cassette recorded
// by a JavaScript suite and one recorded by a Python suite key their requests alike.

const PROVIDERS = [
  { variable: "OPENAI_BASE_URL", upstream: "openai", path: "/v1", keys: ["OPENAI_API_KEY"] },
  { variable: "ANTHROPIC_BASE_URL", upstream: "anthropic", path: "", keys: ["ANTHROPIC_API_KEY"] },
  {
    variable: "GOOGLE_GEMINI_BASE_URL",
    upstream: "gemini",
    path: "",
    // @google/genai reads GEMINI_API_KEY or GOOGLE_API_KEY (and warns when both are set), the
    // Vercel AI SDK's google provider GOOGLE_GENERATIVE_AI_API_KEY
    keys: ["GEMINI_API_KEY|GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"],
  },
  { variable: "GROQ_BASE_URL", upstream: "groq", path: "", keys: ["GROQ_API_KEY"] },
  { variable: "CO_API_URL", upstream: "cohere", path: "", keys: ["CO_API_KEY", "COHERE_API_KEY"] },
  { variable: "MISTRAL_BASE_URL", upstream: "mistral", path: "/v1", keys: ["MISTRAL_API_KEY"] },
  { variable: "DEEPSEEK_BASE_URL", upstream: "deepseek", path: "", keys: ["DEEPSEEK_API_KEY"] },
  { variable: "OPENROUTER_BASE_URL", upstream: "openrouter", path: "/api/v1", keys: ["OPENROUTER_API_KEY"] },
  { variable: "XAI_BASE_URL", upstream: "xai", path: "/v1", keys: ["XAI_API_KEY"] },
];

// The base URL a provider's SDK should use to reach it through the server at `serverURL`.
function baseURLOf(serverURL, provider) {
  const row = PROVIDERS.find((p) => p.upstream === provider || p.variable === provider);
  if (row) return `${serverURL}/${row.upstream}${row.path}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(String(provider))) {
    throw new Error(`promptvcr: ${JSON.stringify(provider)} is not an upstream name (one path segment)`);
  }
  return `${serverURL}/${provider}`;
}

// The `--upstream NAME=URL` flags for the base URLs the environment already names, so that a
// recording goes where the suite would have gone without promptvcr (a gateway, a local model,
// a fake provider). A URL ending in the path the SDK expects loses it (the SDK adds it again
// through the server); one that does not keeps it, and the SDK is pointed at the bare name.
//
// $PROMPTVCR_UPSTREAMS adds upstreams of your own, `NAME=URL` separated by spaces or commas
// (a gateway, a realtime server), reached at `baseURL(NAME)`.
function upstreamsFrom(env) {
  const upstreams = {};
  const paths = {};
  for (const pair of (env.PROMPTVCR_UPSTREAMS || "").split(/[\s,]+/).filter(Boolean)) {
    const [name, ...rest] = pair.split("=");
    const url = rest.join("=");
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name) || !/^https?:\/\//.test(url)) {
      throw new Error(
        `promptvcr: PROMPTVCR_UPSTREAMS has ${JSON.stringify(pair)}; give NAME=URL pairs, e.g. ` +
          "PROMPTVCR_UPSTREAMS=\"gateway=http://127.0.0.1:4000 realtime=https://realtime.example\"",
      );
    }
    upstreams[name] = url.replace(/\/+$/, "");
  }
  for (const row of PROVIDERS) {
    const given = env[row.variable];
    if (!given || !/^https?:\/\//.test(given)) continue;
    const url = given.replace(/\/+$/, "");
    if (row.path && url.endsWith(row.path)) {
      upstreams[row.upstream] = url.slice(0, -row.path.length);
    } else {
      upstreams[row.upstream] = url;
      paths[row.upstream] = "";
    }
  }
  return { upstreams, paths };
}

// The variables that point every SDK at the server (`paths`: an upstream given without the
// path its SDK expects, see upstreamsFrom).
function environmentFor(serverURL, paths = {}) {
  const env = {};
  for (const row of PROVIDERS) {
    const path = row.upstream in paths ? paths[row.upstream] : row.path;
    env[row.variable] = `${serverURL}/${row.upstream}${path}`;
  }
  return env;
}

// SDK constructors throw without an API key; a replay needs none, so each missing one gets a
// placeholder (the server never stores or matches a credential). `A|B`: A, unless A or B is set.
function placeholderKeys(env) {
  const keys = {};
  for (const row of PROVIDERS) {
    for (const group of row.keys) {
      const names = group.split("|");
      if (!names.some((name) => env[name])) keys[names[0]] = "promptvcr-replay";
    }
  }
  return keys;
}

module.exports = { PROVIDERS, baseURLOf, environmentFor, placeholderKeys, upstreamsFrom };
