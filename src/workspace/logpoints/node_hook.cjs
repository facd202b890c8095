'use strict';
// debug-sidecar's Node logpoints (src/workspace/logpoints/node.rs). `run` puts
// `--require <this file>` into NODE_OPTIONS, so every Node process the command
// starts loads it before its own code. It reads the logpoints from
// $DEBUG_SIDECAR_LOGPOINTS/spec.json. A CommonJS file's logged line gets its
// call compiled into the source Node compiles (Module.prototype._compile),
// where a statement surely starts: between hits the program runs as compiled.
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
          values[i] = [1, plain(value)];
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
  const V = '__ds_v_' + spec.tag;
  const E = '__ds_e_' + spec.tag;
  const G = '__ds_g_' + spec.tag;
  const KEY = stringify(spec.key);
  send({ t: 'start' });
  const real = (path) => {
    try {
      return fs.realpathSync(path);
    } catch (_) {
      return path;
    }
  };

  // The code that logs a line's probes, the same in a condition and
  // compiled in: per probe, while it is still armed, each expression in a try
  // of its own, its value or what it threw kept in a local of its own
  // (nothing is read from a prototype the program may have replaced), then
  // the record; anything else that throws is dropped. `code(expression)`
  // gives an expression's code.
  const callText = (probes, code) => {
    let text = 'try{const ' + G + '=globalThis[' + KEY + '];';
    for (const probe of probes) {
      const names = probe.expressions.map((_, k) => V + k);
      text += 'if(' + G + '.a(' + probe.index + ')){';
      if (names.length > 0) text += 'let ' + names.join(',') + ';';
      probe.expressions.forEach((expression, k) => {
        text += 'try{' + names[k] + '=[1,' + code(expression) + ']}';
        text += 'catch(' + E + '){' + names[k] + '=[0,' + E + ']}';
      });
      text += G + '.h(' + probe.index + ',[' + names.join(',') + '])}';
    }
    return text + '}catch(' + E + '){}';
  };
  // An expression passed to eval as a JSON string literal, so it cannot
  // reach past its wrapper, in strict mode, so a `var` in it stays its own.
  const evaluated = (expression) => 'eval(' + stringify('"use strict";' + expression) + ')';

  // --- The inspector: the fallback, started only when a breakpoint needs it.
  // A condition runs the code above and answers false.
  const condition = (probes) => callText(probes, evaluated) + 'false';
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
  const inspect = (index) => {
    if (inspected.has(index) || !openInspector()) return;
    const breakpoint = spec.breakpoints[index];
    try {
      const href = url.pathToFileURL(breakpoint.path).href;
      const answer = post('Debugger.setBreakpointByUrl', {
        url: href,
        lineNumber: breakpoint.line - 1,
        condition: condition(breakpoint.probes),
      });
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

  // --- Compiled in: a CommonJS file's logged lines get their calls in the
  // source Node compiles (the file on disk is untouched), so between hits
  // the program runs at full speed. Only where a statement surely starts;
  // anything else goes to the inspector.
  let vm = null;
  let Module = null;
  try {
    vm = require('vm');
    Module = require('module');
  } catch (_) {}
  // Whether `text` compiles as a CommonJS module's body.
  const PARAMS = ['exports', 'require', 'module', '__filename', '__dirname'];
  const compiles = (text) => {
    try {
      vm.compileFunction(text, PARAMS, { filename: 'debug-sidecar:check' });
      return true;
    } catch (_) {
      return false;
    }
  };
  // An expression goes into the source as it is when it is one expression
  // on one line that cannot leave its parentheses: it compiles both in
  // `(...)` and in `[...]`, so it closes neither. Else it is evaluated as in
  // a condition.
  const ONE_LINE = /[\n\r\u2028\u2029]/;
  const SUSPENDS = /\b(?:yield|await)\b/;
  const plainExpression = (expression) =>
    !ONE_LINE.test(expression) &&
    !SUSPENDS.test(expression) &&
    compiles('return(' + expression + ')') &&
    compiles('return[' + expression + ']');
  const expressionText = new MapType();
  const inline = (expression) => {
    let text = expressionText.get(expression);
    if (text === undefined) {
      text = plainExpression(expression) ? '(' + expression + ')' : evaluated(expression);
      expressionText.set(expression, text);
    }
    return text;
  };
  // For each wanted line, where its first token is: its offset when that is
  // code (not in a string, template, comment or regular expression), the
  // last significant character before it ('' at the start, 'w' after a word
  // or number) and the offset just after that one. A lexer, not a parser:
  // each place it finds is then checked by V8.
  const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;
  const BEFORE_EXPRESSION = new SetType([
    'return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void',
    'throw', 'case', 'do', 'else', 'yield', 'await',
  ]);
  const BLANK = /[ \t\r\f\v\ufeff\u00a0]/;
  const starts = (text, wanted) => {
    const found = new MapType();
    const templates = [];
    const n = text.length;
    let i = 0;
    let line = 1;
    let last = '';
    let lastEnd = 0;
    let regex = true;
    let lineStart = true;
    if (text.startsWith('#!')) while (i < n && text[i] !== '\n') i++;
    // Scans a template's text from i; true when it stops at `${`.
    const template = () => {
      while (i < n) {
        const c = text[i];
        if (c === '\\') {
          if (text[i + 1] === '\n') line++;
          i += 2;
        } else if (c === '`') {
          i++;
          return false;
        } else if (c === '$' && text[i + 1] === '{') {
          i += 2;
          return true;
        } else {
          if (c === '\n') line++;
          i++;
        }
      }
      return false;
    };
    const token = (c, end, allowsRegex) => {
      last = c;
      lastEnd = end;
      regex = allowsRegex;
    };
    while (i < n) {
      const c = text[i];
      if (c === '\n') {
        line++;
        i++;
        lineStart = true;
        continue;
      }
      if (BLANK.test(c)) {
        i++;
        continue;
      }
      if (lineStart) {
        lineStart = false;
        if (wanted.has(line)) found.set(line, { at: i, last, lastEnd });
      }
      if (c === '/' && text[i + 1] === '/') {
        while (i < n && text[i] !== '\n') i++;
      } else if (c === '/' && text[i + 1] === '*') {
        const end = text.indexOf('*/', i + 2);
        if (end < 0) return found;
        for (let j = i; j < end; j++) if (text[j] === '\n') line++;
        i = end + 2;
      } else if (c === '"' || c === "'") {
        i++;
        while (i < n && text[i] !== c) {
          if (text[i] === '\n') return found;
          if (text[i] === '\\') {
            if (text[i + 1] === '\n') line++;
            i++;
          }
          i++;
        }
        i++;
        token(c, i, false);
      } else if (c === '`') {
        i++;
        if (template()) {
          templates.push(0);
          token('{', i, true);
        } else token('`', i, false);
      } else if (c === '/' && regex) {
        let inClass = false;
        i++;
        while (i < n && (inClass || text[i] !== '/')) {
          if (text[i] === '\n') return found;
          if (text[i] === '\\') i++;
          else if (text[i] === '[') inClass = true;
          else if (text[i] === ']') inClass = false;
          i++;
        }
        i++;
        while (i < n && WORD.test(text[i])) i++;
        token('/', i, false);
      } else if (WORD.test(c)) {
        const from = i;
        while (i < n && WORD.test(text[i])) i++;
        token('w', i, BEFORE_EXPRESSION.has(text.slice(from, i)));
      } else {
        i++;
        if (c === '{' && templates.length > 0) templates[templates.length - 1]++;
        if (c === '}' && templates.length > 0) {
          if (templates[templates.length - 1] === 0) {
            templates.pop();
            if (template()) {
              templates.push(0);
              token('{', i, true);
            } else token('`', i, false);
            continue;
          }
          templates[templates.length - 1]--;
        }
        token(c, i, c !== ')' && c !== ']');
      }
    }
    return found;
  };
  // Statements that a call before them would not log as the inspector does:
  // declarations hoisted or run later, loops whose line runs each time round,
  // and what continues a statement before it.
  const NOT_BEFORE = new SetType([
    'function', 'class', 'async', 'for', 'while', 'do', 'else', 'case',
    'default', 'import', 'export', 'catch', 'finally',
  ]);
  const startsStatement = (text, start) => {
    if (!start) return false;
    const { at, last } = start;
    if (last !== '' && last !== ';' && last !== '{' && last !== '}') return false;
    const c = text[at];
    if (/[A-Za-z_$]/.test(c)) {
      const head = /^([A-Za-z_$][\w$]*)[ \t]*(.?)/.exec(text.slice(at, at + 64));
      const word = head[1];
      // A label (the loop it names may run its line each time round).
      if (head[2] === ':') return false;
      // A declaration with no value: the inspector finds no code there.
      if ((word === 'var' || word === 'let') && !/=/.test(text.slice(at, text.indexOf('\n', at) >>> 0))) {
        return false;
      }
      return !NOT_BEFORE.has(word);
    }
    // After `}`, a line that opens with these may continue an expression.
    if (last === '}') return c === '!' || c === '~';
    return '([!~+-'.includes(c);
  };
  // Files V8 counts lines in differently (a lone CR, U+2028, U+2029) or whose
  // HTML-like comments (`<!--`, `-->`) the lexer does not read: the inspector.
  const UNREAD = /\r(?!\n)|[\u2028\u2029]|<!--|-->/;
  // Past this, a file's checks cost more than the inspector (a bundle).
  const MAX_COMPILED = 2 << 20;
  const byPath = new MapType();
  const compileIn = (content, filename) => {
    const list = byPath.get(filename) || byPath.get(real(filename));
    if (!list || vm === null) return content;
    const fallBack = () => {
      for (const index of list) inspect(index);
      return content;
    };
    if (content.length > MAX_COMPILED || UNREAD.test(content)) return fallBack();
    const found = starts(content, new SetType(list.map((index) => spec.breakpoints[index].line)));
    const chosen = [];
    for (const index of list) {
      const breakpoint = spec.breakpoints[index];
      const start = found.get(breakpoint.line);
      if (!startsStatement(content, start)) {
        inspect(index);
        continue;
      }
      // Right after the token before the line (so the line's own columns
      // stay as they are), behind `;` after a `}` (what the line break did).
      const at = start.last === '' ? start.at : start.lastEnd;
      const call = (start.last === '}' ? ';' : '') + callText(breakpoint.probes, inline);
      // Code there: an unmatched `)` cannot compile, as it could in a
      // template's text or a comment.
      if (compiles(content.slice(0, at) + ')' + content.slice(at))) {
        inspect(index);
        continue;
      }
      chosen.push({ index, at, call });
    }
    if (chosen.length === 0) return content;
    // From the end, so each offset still holds.
    const insert = (list) => {
      let text = content;
      const sorted = list.slice().sort((a, b) => b.at - a.at || b.index - a.index);
      for (const { at, call } of sorted) text = text.slice(0, at) + call + text.slice(at);
      return text;
    };
    let text = insert(chosen);
    if (!compiles(text)) {
      // One of them does not compile: each is tried on its own.
      const kept = chosen.filter((one) => compiles(insert([one])));
      for (const one of chosen) if (!kept.includes(one)) inspect(one.index);
      text = insert(kept);
      if (kept.length === 0 || !compiles(text)) {
        for (const one of kept) inspect(one.index);
        return content;
      }
      chosen.length = 0;
      chosen.push(...kept);
    }
    for (const { index } of chosen) {
      if (inspected.has(index)) {
        // Set before the file was known to be CommonJS: the code compiled in
        // takes its place.
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
    }
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
  if (vm !== null && Module !== null && typeof Module.prototype._compile === 'function') {
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
  spec.breakpoints.forEach((breakpoint, index) => {
    if (patched) {
      const path = real(breakpoint.path);
      for (const key of new SetType([breakpoint.path, path])) {
        if (!byPath.has(key)) byPath.set(key, []);
        byPath.get(key).push(index);
      }
      // Only a file that may load otherwise (as an ES module, through a
      // loader) is watched by the inspector from the start.
      if (commonJs(path)) return;
    }
    inspect(index);
  });
})();
