// Type-checked by tests/js (tsc --noEmit, strict): the package's types as a TypeScript suite uses them.
import { baseURL, cassetteHeaders, cassettePath, currentCassette, startServer, useCassette, CASSETTE_HEADER } from "promptvcr";
import type { CassetteOptions, RunningServer } from "promptvcr";
import promptvcr from "promptvcr/vitest";
import everything from "promptvcr";

const url: string = baseURL("openai");
const custom: string = baseURL("my-gateway");
const headers: Record<string, string> = cassetteHeaders();
const file: string = cassettePath("tests/a.test.ts", ["block", "test"]);
const running: string | null = currentCassette();
const header: "x-promptvcr-cassette" = CASSETTE_HEADER;
const options: CassetteOptions = { record_mode: "record", on_record_error: "keep", faults: ["http_error:429"] };
await useCassette("cassettes/x.yaml", async (h) => { void h["x-promptvcr-cassette"]; }, options);
const server: RunningServer = await startServer({ usageRecord: ".promptvcr/usage.json" });
const report = await server.stop();
const lines: string = report.text;
const plugin = promptvcr();
const setupFiles: string[] = plugin.config().test.setupFiles;
// @ts-expect-error: a record mode promptvcr does not have
const bad: CassetteOptions = { record_mode: "sometimes" };
void [everything.baseURL("gemini"), url, custom, headers, file, running, header, lines, setupFiles, bad];
