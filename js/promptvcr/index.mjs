// The ESM face of index.cjs (one implementation, so both share the running test's cassette).
import promptvcr from "./index.cjs";

export const { CASSETTE_HEADER, baseURL, cassetteHeaders, cassettePath, currentCassette, startServer, useCassette } =
  promptvcr;
export default promptvcr;
