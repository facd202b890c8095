// debug-sidecar's module hooks for a Node whose hooks run on a thread of their
// own (module.register, Node 20.6 to 22.14): node_hook.cjs registers this file
// with the logpoints, and each ES module at a logged path gets its calls
// compiled in (node_compile.cjs) as it loads.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { rewriter } = require('./node_compile.cjs');
let rewrite = (href, result) => result;

export function initialize(data) {
  try {
    rewrite = rewriter(data.spec, data.paths);
  } catch (_) {}
}

export async function load(href, context, next) {
  return rewrite(href, await next(href, context));
}
