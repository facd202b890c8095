'use strict';
// debug-sidecar's Node logpoints (src/workspace/logpoints/node.rs). `run` puts
// `--require <this file>` into NODE_OPTIONS, so every Node process the command
// starts loads it before its own code. It reads the logpoints from
// $DEBUG_SIDECAR_LOGPOINTS/spec.json. A logged line gets its call compiled
// into the source Node compiles (node_compile.cjs), where a statement surely
// starts: a CommonJS file's through Module.prototype._compile, an ES module's
// through Node's module hooks. Between hits the program runs as compiled.
// Any other line goes to an in-process inspector session (the Chrome DevTools
// Protocol, no port, no adapter), opened only then, as a breakpoint whose
// condition evaluates the expressions, hands their values to the function
// below and answers false: the program never pauses. Records go to `run`'s
// file in memory (spec.hits, a /proc path), else to
// $DEBUG_SIDECAR_LOGPOINTS/<pid>-<thread>.jsonl, one JSON line each, written
// synchronously, which `run` reads. Nothing here may break the program: every
// failure is caught and reported, and the program runs on without logpoints.
(function () {
  const dir = process.env.DEBUG_SIDECAR_LOGPOINTS;
  // Node 20 to 22 run the preloads again on the module hooks' own thread.
  if (!dir || process.env.DEBUG_SIDECAR_NODE_HOOKS_THREAD === '1') return;
  let fs, url;
  try {
    fs = require('fs');
    url = require('url');
  } catch (_) {
    return;
  }
  let spec;
  try {
    spec = JSON.parse(fs.readFileSync(dir + '/spec.json', 'utf8'));
  } catch (_) {
    return;
  }
  if (Object.prototype.hasOwnProperty.call(globalThis, spec.key)) return;
  // `run`'s file in memory (spec.hits, so values never reach a disk), else
  // a file of this process's own.
  let out;
  try {
    out = fs.openSync(spec.hits, 'a');
  } catch (_) {
    try {
      // Loaded only here: loading `worker_threads` was most of this file's
      // start (3-4 ms on Node 24).
      const { threadId } = require('worker_threads');
      out = fs.openSync(dir + '/' + process.pid + '-' + threadId + '.jsonl', 'a');
    } catch (_) {
      return;
    }
  }
  // Taken now, before the program's code could replace them.
  const stringify = JSON.stringify;
  const writeSync = fs.writeSync;
  const isArray = Array.isArray;
  const keys = Object.keys;
  const isView = ArrayBuffer.isView;
  const MapType = Map;
  const SetType = Set;
  const DateType = Date;
  const ErrorType = Error;
  const cap = spec.cap;
  const send = (record) => {
    try {
      writeSync(out, stringify(record) + '\n');
    } catch (_) {}
  };
  // Loaded when a logged file loads or the inspector starts, not before: a
  // process that loads no logged file pays for neither (the inspector's
  // module alone took 3-5 ms to load on Node 24).
  let compile = null;
  const compiler = () => {
    if (compile === null) compile = require(dir + '/node_compile.cjs');
    return compile;
  };
  const describe = (error) => {
    try {
      if (error instanceof ErrorType || (error && typeof error === 'object' && 'message' in error)) {
        return (String(error.name) + ': ' + String(error.message)).slice(0, 300);
      }
      return ('threw ' + String(error)).slice(0, 300);
    } catch (_) {
      return 'threw a value that cannot be shown';
    }
  };
  // A value as plain JSON (arrays filled by index: the program may have
  // replaced Array.prototype.push): at most 200 nodes, about twice the cap in text, 6
  // levels and 100 entries a level; strings over the cap cut; what JSON lacks
  // (undefined, BigInt, functions, symbols, cycles) as text. `run` cuts the
  // whole to the cap.
  const plain = (value) => {
    let budget = 200;
    let size = 0;
    const path = new SetType();
    const walk = (v, depth) => {
      if (--budget < 0 || size > 2 * cap) return '…';
      size += typeof v === 'string' ? Math.min(v.length, cap) : 8;
      switch (typeof v) {
        case 'string':
          // Cut so that the cut string and its length stay within the cap.
          return v.length > cap ? { $truncated: v.slice(0, cap - 100), length: v.length } : v;
        case 'number':
          return Number.isFinite(v) ? v : String(v);
        case 'boolean':
          return v;
        case 'undefined':
          return 'undefined';
        case 'bigint':
          return v.toString() + 'n';
        case 'symbol':
          return v.toString();
        case 'function':
          return '[Function' + (v.name ? ': ' + String(v.name).slice(0, 100) : '') + ']';
      }
      if (v === null) return null;
      if (path.has(v)) return '[Circular]';
      if (depth >= 6) return isArray(v) ? '[Array]' : '[Object]';
      path.add(v);
      try {
        if (v instanceof ErrorType) return describe(v);
        if (v instanceof DateType) return isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
        let entries = null;
        if (isArray(v) || isView(v)) entries = v;
        else if (v instanceof SetType || v instanceof MapType) {
          entries = [];
          for (const item of v instanceof SetType ? v.values() : v.entries()) {
            entries[entries.length] = item;
            if (entries.length > 100) break;
          }
        }
        if (entries !== null) {
          const list = [];
          const n = Math.min(entries.length, 100);
          for (let i = 0; i < n; i++) list[i] = walk(entries[i], depth + 1);
          if (entries.length > 100) list[n] = '…';
          return list;
        }
        const object = {};
        const names = keys(v);
        for (let i = 0; i < names.length && i < 100; i++) {
          let item;
          try {
            item = v[names[i]];
          } catch (error) {
            item = '[getter threw ' + describe(error) + ']';
          }
          object[names[i]] = walk(item, depth + 1);
        }
        if (names.length > 100) object['…'] = names.length - 100 + ' more keys';
        return object;
      } finally {
        path.delete(v);
      }
    };
    return walk(value, 0);
  };
  // What `plain` would give back unchanged, told without its walk (most
  // logged values: the walk's set and closures cost more than the write).
  const scalar = (v) => {
    const type = typeof v;
    if (type === 'number') return Number.isFinite(v);
    if (type === 'string') return v.length <= cap;
    return type === 'boolean' || v === null;
  };
  const counts = [];
  // Whether hit `index` is still recorded (its first spec.maxHits hits).
  const armed = (index) => (counts[index] = (counts[index] || 0) + 1) <= spec.maxHits;
  // A hit's values: per expression, [1, value] or [0, what it threw].
  const record = (index, results) => {
    try {
      const values = [];
      for (let i = 0; i < results.length; i++) {
        const ok = results[i][0];
        const value = results[i][1];
        if (!ok) {
          values[i] = [0, describe(value)];
          continue;
        }
        try {
          values[i] = [1, scalar(value) ? value : plain(value)];
        } catch (error) {
          values[i] = [0, 'the value could not be read: ' + describe(error)];
        }
      }
      send({ t: 'hit', p: index, v: values });
    } catch (_) {}
  };
  // What an inspector condition calls; code compiled in calls its `a` first
  // and evaluates its expressions only while that answers true.
  const hit = (index, results) => {
    try {
      if (armed(index)) record(index, results);
    } catch (_) {}
  };
  hit.a = (index) => {
    try {
      return armed(index);
    } catch (_) {
      return false;
    }
  };
  hit.h = record;
  try {
    Object.defineProperty(globalThis, spec.key, { value: hit });
  } catch (_) {
    return;
  }
  send({ t: 'start' });
  const real = (path) => {
    try {
      return fs.realpathSync(path);
    } catch (_) {
      return path;
    }
  };

  // --- The inspector: the fallback, started only when a breakpoint needs it.
  // A condition runs the code that logs the line's probes (node_compile.cjs)
  // and answers false.
  const condition = (probes) => compiler().callText(spec, probes, compiler().evaluated) + 'false';
  let session = null;
  let broken = false;
  const post = (method, params) => {
    let failure = null;
    let answer;
    session.post(method, params || {}, (error, result) => {
      failure = error;
      answer = result;
    });
    if (failure) throw failure;
    return answer;
  };
  const byId = new MapType();
  const byUrl = new MapType();
  const resolved = new SetType();
  const loaded = new SetType();
  const inspected = new SetType();
  const openInspector = () => {
    if (session !== null || broken) return !broken;
    try {
      session = new (require('inspector').Session)();
      session.connect();
      session.on('Debugger.breakpointResolved', (message) => {
        const index = byId.get(message.params.breakpointId);
        if (index === undefined || resolved.has(index)) return;
        resolved.add(index);
        send({ t: 'resolved', b: index, line: message.params.location.lineNumber + 1 });
      });
      session.on('Debugger.scriptParsed', (message) => {
        const list = byUrl.get(message.params.url);
        if (list) for (const index of list) if (inspected.has(index)) loaded.add(index);
      });
      post('Debugger.enable');
      // A `debugger;` statement or an exception would pause this thread for a
      // session on this same thread: a hang. Conditions still run.
      post('Debugger.setSkipAllPauses', { skip: true });
      return true;
    } catch (error) {
      broken = true;
      send({ t: 'error', m: 'the inspector could not be used: ' + describe(error) });
      return false;
    }
  };
  // `column`: where the line's own code starts, when code was put before it.
  const inspect = (index, column) => {
    if (inspected.has(index) || !openInspector()) return;
    const breakpoint = spec.breakpoints[index];
    try {
      const href = url.pathToFileURL(breakpoint.path).href;
      const where = { url: href, lineNumber: breakpoint.line - 1 };
      if (column) where.columnNumber = column;
      where.condition = condition(breakpoint.probes);
      const answer = post('Debugger.setBreakpointByUrl', where);
      inspected.add(index);
      byId.set(answer.breakpointId, index);
      if (!byUrl.has(href)) byUrl.set(href, []);
      byUrl.get(href).push(index);
      for (const location of answer.locations || []) {
        resolved.add(index);
        send({ t: 'resolved', b: index, line: location.lineNumber + 1 });
      }
    } catch (error) {
      send({ t: 'error', b: index, m: describe(error) });
    }
  };
  process.on('exit', () => {
    for (const index of loaded) {
      if (!resolved.has(index)) send({ t: 'unresolved', b: index });
    }
  });
  // A breakpoint whose call was compiled into its file.
  const compiledIn = (index) => {
    if (inspected.has(index)) {
      // Set before the file was known to take its calls compiled in: the
      // code compiled in takes its place.
      for (const [id, b] of byId) {
        if (b === index) {
          post('Debugger.removeBreakpoint', { breakpointId: id });
          byId.delete(id);
        }
      }
      inspected.delete(index);
    }
    if (!resolved.has(index)) {
      resolved.add(index);
      send({ t: 'resolved', b: index, line: spec.breakpoints[index].line });
    }
  };
  // What an ES module whose text the module hooks changed calls as it starts
  // to run (node_compile.cjs's moduleText): its breakpoints compiled in, and
  // those the inspector takes (the module is parsed: they resolve now).
  hit.m = (compiled, fallback, line, column) => {
    try {
      for (const index of compiled) compiledIn(index);
      for (const index of fallback) {
        inspect(index, spec.breakpoints[index].line === line ? column : 0);
        loaded.add(index);
      }
    } catch (_) {}
  };

  // --- Compiled in: a file's logged lines get their calls in the source
  // Node compiles (the file on disk is untouched), so between hits the
  // program runs at full speed. CommonJS through Module.prototype._compile;
  // ES modules through Node's module hooks (node_esm.mjs), where Node has
  // them. `DEBUG_SIDECAR_NODE_INSPECTOR=1` leaves every line to the inspector.
  let Module = null;
  try {
    if (process.env.DEBUG_SIDECAR_NODE_INSPECTOR !== '1') Module = require('module');
  } catch (_) {}
  const byPath = new MapType();
  const compileIn = (content, filename) => {
    const list = byPath.get(filename) || byPath.get(real(filename));
    if (!list) return content;
    let planned = { text: content, compiled: [], fallback: list };
    try {
      planned = compiler().plan(spec, content, list, false);
    } catch (_) {
      // Left to the inspector, whose breakpoints say what went wrong.
    }
    const { text, compiled, fallback } = planned;
    for (const index of fallback) inspect(index);
    for (const index of compiled) compiledIn(index);
    return text;
  };
  // Whether Node loads `path` as CommonJS (through Module.prototype._compile):
  // `.cjs`, or `.js` in a package that is not `"type": "module"` (and no
  // flag makes ES modules the default).
  const esmByDefault = [...process.execArgv, process.env.NODE_OPTIONS || ''].some((option) =>
    option.includes('--experimental-default-type=module'),
  );
  const commonJs = (path) => {
    if (path.endsWith('.cjs')) return true;
    if (!path.endsWith('.js') || esmByDefault) return false;
    let dir = path;
    for (;;) {
      const parent = dir.slice(0, dir.lastIndexOf('/'));
      if (parent === dir || parent === '') return true;
      dir = parent;
      let text;
      try {
        text = fs.readFileSync(dir + '/package.json', 'utf8');
      } catch (_) {
        continue;
      }
      try {
        return JSON.parse(text).type !== 'module';
      } catch (_) {
        return false;
      }
    }
  };
  let patched = false;
  if (Module !== null && typeof Module.prototype._compile === 'function') {
    const original = Module.prototype._compile;
    try {
      // Whatever else Node passes (its format, from Node 22) passes on.
      Module.prototype._compile = function _compile(content, filename, ...rest) {
        let text = content;
        try {
          if (typeof content === 'string') text = compileIn(content, filename);
        } catch (_) {
          text = content;
        }
        return original.call(this, text, filename, ...rest);
      };
      patched = true;
    } catch (_) {}
  }
  // Each logged file's real path, and whether Node loads it as CommonJS.
  const realPaths = spec.breakpoints.map((breakpoint) => real(breakpoint.path));
  const loadsAsCommonJs = realPaths.map(commonJs);
  spec.breakpoints.forEach((breakpoint, index) => {
    for (const key of new SetType([breakpoint.path, realPaths[index]])) {
      if (!byPath.has(key)) byPath.set(key, []);
      byPath.get(key).push(index);
    }
  });
  // The files Node's module hooks see as Node reads them.
  const HOOKED = /\.m?js$/;
  // ES modules: where Node runs module hooks on this thread
  // (module.registerHooks, Node 22.15 and 23.5 on), always, as a `.js` may
  // load as one. Where they run on a thread of their own (module.register,
  // Node 20.6 on), starting it costs about twice what the inspector's start
  // does (45 ms against 22 here), so only when the program is an ES module
  // and a logged file is too; an ES module a CommonJS program imports (a test
  // runner's) is left to the inspector.
  let modules = false;
  const esm = loadsAsCommonJs.includes(false);
  const entry = process.argv[1];
  const moduleProgram = typeof entry === 'string' && HOOKED.test(entry) && !commonJs(real(entry));
  if (Module !== null && (typeof Module.registerHooks === 'function' || (esm && moduleProgram))) {
    try {
      const paths = [...byPath];
      if (typeof Module.registerHooks === 'function') {
        let rewrite = null;
        // The breakpoints of the file at `href`, if it is logged.
        const logged = (href) => {
          try {
            return href.startsWith('file:') ? byPath.get(url.fileURLToPath(href)) : undefined;
          } catch (_) {
            return undefined;
          }
        };
        Module.registerHooks({
          load: (href, context, next) => {
            const result = next(href, context);
            const list = logged(href);
            if (list === undefined) return result;
            try {
              if (rewrite === null) rewrite = compiler().rewriter(spec, paths);
            } catch (_) {
              // Left to the inspector, whose breakpoints say what went wrong.
              for (const index of list) inspect(index);
              return result;
            }
            return rewrite(href, result);
          },
        });
        modules = true;
      } else if (typeof Module.register === 'function') {
        // The preload runs again on the hooks' thread: this tells it to stop.
        process.env.DEBUG_SIDECAR_NODE_HOOKS_THREAD = '1';
        try {
          Module.register(url.pathToFileURL(dir + '/node_esm.mjs').href, {
            data: { spec, paths },
          });
          modules = true;
        } finally {
          delete process.env.DEBUG_SIDECAR_NODE_HOOKS_THREAD;
        }
      }
    } catch (error) {
      send({ t: 'error', m: 'the module hooks could not be used: ' + describe(error) });
    }
  }
  spec.breakpoints.forEach((_, index) => {
    if (patched && loadsAsCommonJs[index]) return;
    // Any other file (TypeScript through a loader) is watched by the
    // inspector from the start.
    if (modules && HOOKED.test(realPaths[index])) return;
    inspect(index);
  });
})();
