// Type-checked by tests/js (tsc --noEmit, strict): the package's types as a TypeScript suite uses them.
import promptvcr = require("promptvcr");
const url: string = promptvcr.baseURL("anthropic");
void url;
