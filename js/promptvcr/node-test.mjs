// node's test runner with `--import promptvcr/node-test`: the same as `--require` (node-test.cjs).
import "./node-test.cjs";
