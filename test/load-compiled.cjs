// Loaded into each of ava's test processes by `npm test` (test/ava.config.mjs): ava requires the test file
// by its .ts path, and this hands it the module test/compile.ts built from it. ava thus knows the file by
// its source path and shows a failure with the test's own lines (the compiled code's source maps point
// there). The compiled code is ES modules, which require() loads (Node 20.19 and later).
const Module = require('node:module')
const path = require('node:path')

const sources = path.resolve('test') + path.sep
const compiled = path.resolve('test-output', 'compiled') + path.sep

Module._extensions['.ts'] = function loadCompiled(module, filename) {
  if (!filename.startsWith(sources)) throw new Error(`${filename}: only test files are compiled for npm test; run it with tsx`)
  try {
    module.exports = module.require(compiled + filename.slice(sources.length).replace(/\.ts$/, '.mjs'))
  } catch (err) {
    if (err.code !== 'ERR_REQUIRE_ASYNC_MODULE') throw err
    throw new Error(
      `${filename}: npm test loads test files with require(), which cannot wait for a top-level await: do that work in test.before`,
      { cause: err },
    )
  }
}
