// The ESM face of index.d.cts, as index.mjs is of index.cjs.
import promptvcr from "./index.cjs";

export * from "./index.cjs";
export default promptvcr;
