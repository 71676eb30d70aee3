/** The request header that names a request's cassette to `promptvcr serve`. */
export declare const CASSETTE_HEADER: "x-promptvcr-cassette";

/** The name of an upstream `promptvcr serve` knows, or one given with `--upstream NAME=URL`. */
export type Provider =
  | "openai"
  | "anthropic"
  | "gemini"
  | "groq"
  | "cohere"
  | "mistral"
  | "deepseek"
  | "openrouter"
  | "xai"
  | (string & {});

/**
 * The base URL of `provider` through the run's server, for an SDK that reads none from the
 * environment: `new GoogleGenAI({ apiKey, httpOptions: { baseUrl: baseURL("gemini") } })`.
 */
export declare function baseURL(provider: Provider): string;

/** The header naming the running test's cassette, for a client that does not use `fetch`. */
export declare function cassetteHeaders(): Record<string, string>;

/** The cassette file of a test: `<test file's folder>/cassettes/<file name>/<names joined by ".">.yaml`. */
export declare function cassettePath(testFile: string, names: string[]): string;

/** The absolute path of the running test's cassette, or null between tests. */
export declare function currentCassette(): string | null;

/** Options of a cassette's start (`POST /_promptvcr/start`). */
export interface CassetteOptions {
  record_mode?: "replay" | "record" | "rewrite" | "passthrough" | "verify" | "once";
  allow_playback_repeats?: boolean;
  on_record_error?: "skip" | "keep";
  max_age?: string;
  on_stale?: "warn" | "fail" | "rewrite";
  timing?: "none" | "recorded" | number;
  faults?: string[];
}

/**
 * Run `body` with the cassette at `cassette` (outside a runner's set-up, or for a test that
 * wants another cassette than its own); rejects when a request missed, with the fields that differ.
 */
export declare function useCassette(
  cassette: string,
  body: (headers: Record<string, string>) => unknown | Promise<unknown>,
  options?: CassetteOptions,
): Promise<void>;

/** What one cassette served (serve's report). */
export interface CassetteReport {
  path: string;
  mode: string;
  played: number;
  outcomes: Record<string, number>;
  missed: string[];
  misses: { request: string; message: string }[];
  unused: string[];
  drift: unknown[];
  cut_short: string[];
  errors: string[];
  tokens?: Record<string, { input: number; output: number }>;
}

export interface RunningServer {
  url: string;
  mode: string;
  /** The variables that point the SDKs at it (`OPENAI_BASE_URL`, ...), and `PROMPTVCR_URL`. */
  environment: Record<string, string>;
  /** The server's process id. */
  pid: number;
  stop(options?: { failed?: boolean }): Promise<{
    cassettes: CassetteReport[];
    errors: string[];
    log: string;
    text: string;
  }>;
}

/**
 * Start `promptvcr serve` (the command in `$PROMPTVCR_SERVE_COMMAND`, else `promptvcr` on PATH,
 * else `python3 -m promptvcr`) on a free port, in the record mode `$PROMPTVCR_RECORD_MODE` names.
 */
export declare function startServer(options?: {
  env?: Record<string, string | undefined>;
  cwd?: string;
  usageRecord?: string;
}): Promise<RunningServer>;
