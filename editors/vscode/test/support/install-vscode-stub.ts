// Makes `require('vscode')` return the stub (import this before extension.ts). API names
// the stub does not define (LanguageClient features we never use: CompletionItem, Hover,
// CodeActionKind, ...) resolve to inert placeholders so the library can load.
import Module from 'node:module';
import * as stub from './vscode-stub';

function placeholder(name: string): unknown {
  const target = class {
    constructor(..._args: unknown[]) {}
  };
  return new Proxy(target, {
    get(t, key) {
      if (key in t) return (t as unknown as Record<string | symbol, unknown>)[key];
      if (key === 'then') return undefined;
      if (key === Symbol.toPrimitive || key === 'toString') return () => name;
      return placeholder(`${name}.${String(key)}`);
    },
    apply() {
      return placeholder(`${name}()`);
    },
  });
}

const api = new Proxy(stub as Record<string, unknown>, {
  get(t, key: string) {
    if (key in t) return t[key];
    if (key === 'then' || key === '__esModule' || key === 'default') return undefined;
    return placeholder(key);
  },
});

const M = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
const load = M._load;
M._load = function (request: string, parent: unknown, isMain: boolean): unknown {
  if (request === 'vscode') return api;
  return load.call(this, request, parent, isMain);
};
