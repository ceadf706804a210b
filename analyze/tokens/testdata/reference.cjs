// Counts the texts of reference.json with the reference tokenizer: OpenAI's tiktoken (Rust,
// compiled to WebAssembly in the npm package "tiktoken"), as encode_ordinary (special tokens
// are plain text).
//
//   NODE_PATH=interop/node_modules node tokens/testdata/reference.cjs tokens/testdata/reference.json          # print the counts
//   NODE_PATH=interop/node_modules node tokens/testdata/reference.cjs tokens/testdata/reference.json --write  # fill them in
"use strict";
const fs = require("fs");
const { get_encoding } = require("tiktoken");

const [file, mode] = process.argv.slice(2);
const entries = JSON.parse(fs.readFileSync(file, "utf8"));
const encoders = {};
for (const name of ["cl100k_base", "o200k_base"]) encoders[name] = get_encoding(name);
for (const e of entries) {
  for (const name of Object.keys(encoders)) e.counts[name] = encoders[name].encode_ordinary(e.text).length;
}
for (const enc of Object.values(encoders)) enc.free();
if (mode === "--write") {
  fs.writeFileSync(file, JSON.stringify(entries, null, 2) + "\n");
} else {
  process.stdout.write(JSON.stringify(entries.map((e) => ({ label: e.label, counts: e.counts }))) + "\n");
}
