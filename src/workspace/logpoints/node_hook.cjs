'use strict';
// debug-sidecar's Node logpoints (src/workspace/logpoints/node.rs). `run` puts
// `--require <this file>` into NODE_OPTIONS, so every Node process the command
// starts loads it before its own code. It reads the logpoints from
// $DEBUG_SIDECAR_LOGPOINTS/spec.json, opens an in-process inspector session
// (the Chrome DevTools Protocol, no port, no adapter), and sets each line as a
// breakpoint whose condition evaluates the expressions, hands their values to
// the function below and answers false: the program never pauses. Records go
// to `run`'s file in memory (spec.hits, a /proc path), else to
// $DEBUG_SIDECAR_LOGPOINTS/<pid>-<thread>.jsonl, one JSON line each, written
// synchronously, which `run` reads. Nothing here may break the program: every
// failure is caught and reported, and the program runs on without logpoints.
(function () {
  const dir = process.env.DEBUG_SIDECAR_LOGPOINTS;
  if (!dir) return;
  let inspector, fs, url, threadId;
  try {
    inspector = require('inspector');
    fs = require('fs');
    url = require('url');
    threadId = require('worker_threads').threadId;
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
  // A value as plain JSON: at most 200 nodes, about twice the cap in text, 6
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
            if (entries.push(item) > 100) break;
          }
        }
        if (entries !== null) {
          const list = [];
          const n = Math.min(entries.length, 100);
          for (let i = 0; i < n; i++) list.push(walk(entries[i], depth + 1));
          if (entries.length > 100) list.push('…');
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
  const hits = [];
  // What a condition calls: the probe's index and, per expression, [1, value]
  // or [0, what it threw].
  const hit = (index, results) => {
    try {
      hits[index] = (hits[index] || 0) + 1;
      if (hits[index] > spec.maxHits) return;
      const values = [];
      for (let i = 0; i < results.length; i++) {
        const [ok, value] = results[i];
        if (!ok) {
          values.push([0, describe(value)]);
          continue;
        }
        try {
          values.push([1, plain(value)]);
        } catch (error) {
          values.push([0, 'the value could not be read: ' + describe(error)]);
        }
      }
      send({ t: 'hit', p: index, v: values });
    } catch (_) {}
  };
  try {
    Object.defineProperty(globalThis, spec.key, { value: hit });
  } catch (_) {
    return;
  }
  // A condition: each expression passed to eval as a JSON string literal, in
  // its own try, so no expression can reach past its own wrapper.
  const V = '__ds_v_' + spec.tag;
  const E = '__ds_e_' + spec.tag;
  const condition = (probes) => {
    let text = '{';
    for (const probe of probes) {
      text += '{let ' + V + '=[];';
      for (const expression of probe.expressions) {
        text += 'try{' + V + '.push([1,eval(' + stringify(expression) + ')])}';
        text += 'catch(' + E + '){' + V + '.push([0,' + E + '])}';
      }
      text += 'try{globalThis[' + stringify(spec.key) + '](' + probe.index + ',' + V + ')}';
      text += 'catch(' + E + '){}}';
    }
    return text + '}false';
  };
  send({ t: 'start' });
  let session;
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
  try {
    session = new inspector.Session();
    session.connect();
    session.on('Debugger.breakpointResolved', (message) => {
      const index = byId.get(message.params.breakpointId);
      if (index === undefined || resolved.has(index)) return;
      resolved.add(index);
      send({ t: 'resolved', b: index, line: message.params.location.lineNumber + 1 });
    });
    session.on('Debugger.scriptParsed', (message) => {
      const list = byUrl.get(message.params.url);
      if (list) for (const index of list) loaded.add(index);
    });
    post('Debugger.enable');
    // A `debugger;` statement or an exception would pause this thread for a
    // session on this same thread: a hang. Conditions still run.
    post('Debugger.setSkipAllPauses', { skip: true });
  } catch (error) {
    send({ t: 'error', m: 'the inspector could not be used: ' + describe(error) });
    return;
  }
  spec.breakpoints.forEach((breakpoint, index) => {
    try {
      const href = url.pathToFileURL(breakpoint.path).href;
      const answer = post('Debugger.setBreakpointByUrl', {
        url: href,
        lineNumber: breakpoint.line - 1,
        condition: condition(breakpoint.probes),
      });
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
  });
  process.on('exit', () => {
    for (const index of loaded) {
      if (!resolved.has(index)) send({ t: 'unresolved', b: index });
    }
  });
})();
