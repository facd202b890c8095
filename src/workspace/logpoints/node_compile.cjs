'use strict';
// How a logged line's call is compiled into a file's source, for debug-sidecar's
// Node logpoints (node.rs). Required by node_hook.cjs, which compiles calls
// into CommonJS files, and by node_esm.mjs, which does it for ES modules on a
// Node whose module hooks run on a thread of their own. Pure: it reads no file
// and writes none; what it cannot place is handed back for the inspector.
//
// A call goes only where a statement surely starts, found by a lexer (not a
// parser), and each place it finds is checked by V8: the file still compiles
// with the call in it, and would not with an unmatched `)` there (so the
// place is code, not a template's text or a comment). An ES module cannot be
// compiled here without running it, so its check text is the module with its
// imports, the `export` words and `import.meta` blanked out (the same length,
// so every offset holds), compiled as an async arrow function's body.
const vm = require('vm');

// The code that logs a line's probes, the same in an inspector condition and
// compiled in: per probe, while it is still armed, each expression in a try of
// its own, its value or what it threw kept in a local of its own (nothing is
// read from a prototype the program may have replaced), then the record;
// anything else that throws is dropped. `code(expression)` gives an
// expression's code.
const callText = (spec, probes, code) => {
  const V = '__ds_v_' + spec.tag;
  const E = '__ds_e_' + spec.tag;
  const G = '__ds_g_' + spec.tag;
  let text = 'try{const ' + G + '=globalThis[' + JSON.stringify(spec.key) + '];';
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
// An expression passed to eval as a JSON string literal, so it cannot reach
// past its wrapper, in strict mode, so a `var` in it stays its own.
const evaluated = (expression) => 'eval(' + JSON.stringify('"use strict";' + expression) + ')';

// Whether `text` compiles as a CommonJS module's body.
const PARAMS = ['exports', 'require', 'module', '__filename', '__dirname'];
const compilesCommonJs = (text) => {
  try {
    vm.compileFunction(text, PARAMS, { filename: 'debug-sidecar:check' });
    return true;
  } catch (_) {
    return false;
  }
};
// Whether a module's check text compiles: strict, top-level `await` allowed.
const compilesModule = (text) => {
  try {
    new vm.Script("'use strict';(async()=>{" + text + '\n})', { filename: 'debug-sidecar:check' });
    return true;
  } catch (_) {
    return false;
  }
};

// An expression goes into the source as it is when it is one expression on
// one line that cannot leave its parentheses: it compiles both in `(...)` and
// in `[...]`, so it closes neither. Else it is evaluated as in a condition.
const ONE_LINE = /[\n\r\u2028\u2029]/;
const SUSPENDS = /\b(?:yield|await)\b/;
const plainExpression = (expression) =>
  !ONE_LINE.test(expression) &&
  !SUSPENDS.test(expression) &&
  compilesCommonJs('return(' + expression + ')') &&
  compilesCommonJs('return[' + expression + ']');
const expressionText = new Map();
const inline = (expression) => {
  let text = expressionText.get(expression);
  if (text === undefined) {
    text = plainExpression(expression) ? '(' + expression + ')' : evaluated(expression);
    expressionText.set(expression, text);
  }
  return text;
};

// The tokens of a file, as far as the lexer can read it: each with its kind
// (`w` a word or number, `s` a string, `c` a comment, `/` a regular
// expression, `{` or `` ` `` a template's piece that ends at `${` or at its
// end, else the punctuation character), where it starts and ends, its line,
// whether it is the first on that line, and for a template's piece whether
// it continues one (after `}`). `whole` is false when the lexer lost its
// place (a string or regular expression over a line break, an unclosed
// comment) and stopped there.
const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;
const BEFORE_EXPRESSION = new Set([
  'return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void',
  'throw', 'case', 'do', 'else', 'yield', 'await',
]);
const BLANK = /[ \t\r\f\v\ufeff\u00a0]/;
const lex = (text) => {
  const tokens = [];
  const templates = [];
  const n = text.length;
  let i = 0;
  let line = 1;
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
  let from = 0;
  let startLine = 1;
  let first = false;
  const push = (k, allowsRegex, extra) => {
    const token = { k, from, to: i, line: startLine, first };
    if (extra) Object.assign(token, extra);
    tokens.push(token);
    if (k !== 'c') regex = allowsRegex;
  };
  const piece = (cont) => {
    if (template()) {
      templates.push(0);
      push('{', true, { cont });
    } else push('`', false, { cont });
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
    from = i;
    startLine = line;
    first = lineStart;
    lineStart = false;
    if (c === '/' && text[i + 1] === '/') {
      while (i < n && text[i] !== '\n') i++;
      push('c');
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) return { tokens, whole: false };
      for (let j = i; j < end; j++) if (text[j] === '\n') line++;
      i = end + 2;
      push('c');
    } else if (c === '"' || c === "'") {
      i++;
      while (i < n && text[i] !== c) {
        if (text[i] === '\n') return { tokens, whole: false };
        if (text[i] === '\\') {
          if (text[i + 1] === '\n') line++;
          i++;
        }
        i++;
      }
      i++;
      push('s', false);
    } else if (c === '`') {
      i++;
      piece(false);
    } else if (c === '/' && regex) {
      let inClass = false;
      i++;
      while (i < n && (inClass || text[i] !== '/')) {
        if (text[i] === '\n') return { tokens, whole: false };
        if (text[i] === '\\') i++;
        else if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
        i++;
      }
      i++;
      while (i < n && WORD.test(text[i])) i++;
      push('/', false);
    } else if (WORD.test(c)) {
      while (i < n && WORD.test(text[i])) i++;
      const word = text.slice(from, i);
      push('w', BEFORE_EXPRESSION.has(word), { word });
    } else {
      i++;
      if (c === '{' && templates.length > 0) templates[templates.length - 1]++;
      if (c === '}' && templates.length > 0) {
        if (templates[templates.length - 1] === 0) {
          templates.pop();
          piece(true);
          continue;
        }
        templates[templates.length - 1]--;
      }
      push(c, c !== ')' && c !== ']');
    }
  }
  return { tokens, whole: true };
};

// For each wanted line, where its first token is (a comment's too): its
// offset, the last token before it that is not a comment ('' at the start,
// 'w' after a word or number) and the offset just after that one.
const starts = (tokens, wanted) => {
  const found = new Map();
  let last = '';
  let lastEnd = 0;
  for (const token of tokens) {
    if (token.first && wanted.has(token.line)) {
      found.set(token.line, { at: token.from, last, lastEnd });
    }
    if (token.k !== 'c') {
      last = token.k;
      lastEnd = token.to;
    }
  }
  return found;
};

// Statements that a call before them would not log as the inspector does:
// declarations hoisted or run later, loops whose line runs each time round,
// and what continues a statement before it.
const NOT_BEFORE = new Set([
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

// `text` with [from, to) made blank, its line breaks kept.
const blank = (text, from, to, fill) => {
  const kept = text.slice(from, to).replace(/[^\n\r]/g, ' ');
  const head = fill ? fill + kept.slice(fill.length) : kept;
  return text.slice(0, from) + head + text.slice(to);
};
// A module's text as a function body: the same length, with its hashbang,
// its import declarations, `export` words and lists, and `import.meta`
// blanked out, and the spans blanked; null when the lexer cannot tell where
// they end.
const asFunctionBody = (text, tokens) => {
  const next = (k) => {
    for (let j = k + 1; j < tokens.length; j++) if (tokens[j].k !== 'c') return j;
    return -1;
  };
  const is = (k, word) => k >= 0 && tokens[k].k === 'w' && tokens[k].word === word;
  // The end of a declaration that names a module: its string, then an
  // optional `with { ... }` (or `assert`).
  const specifierEnd = (k) => {
    while (k >= 0 && tokens[k].k !== 's' && tokens[k].k !== ';') k = next(k);
    if (k < 0 || tokens[k].k !== 's') return -1;
    let end = tokens[k].to;
    const after = next(k);
    if (is(after, 'with') || is(after, 'assert')) {
      let j = next(after);
      if (j < 0 || tokens[j].k !== '{') return -1;
      while (j >= 0 && tokens[j].k !== '}') j = next(j);
      if (j < 0) return -1;
      end = tokens[j].to;
    }
    return end;
  };
  let out = text;
  const spans = [];
  const cut = (from, to, fill) => {
    out = blank(out, from, to, fill);
    spans.push([from, to]);
  };
  if (text.startsWith('#!')) cut(0, text.indexOf('\n') >>> 0);
  let depth = 0;
  let previous = '';
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k];
    const property = previous === '.';
    if (token.k !== 'c') previous = token.k;
    switch (token.k) {
      case '(': case '[': case '{':
        if (token.cont) depth--;
        depth++;
        continue;
      case ')': case ']': case '}':
        depth--;
        continue;
      case '`':
        if (token.cont) depth--;
        continue;
      case 'w':
        if (property) continue;
        break;
      default:
        continue;
    }
    if (token.word === 'import') {
      const after = next(k);
      if (after >= 0 && tokens[after].k === '.' && is(next(after), 'meta')) {
        cut(token.from, tokens[next(after)].to, '(void 0)');
        continue;
      }
      if (after < 0 || tokens[after].k === '(' || depth !== 0) continue;
      const end = specifierEnd(after);
      if (end < 0) return null;
      cut(token.from, end);
      while (k < tokens.length - 1 && tokens[k + 1].from < end) k++;
    } else if (token.word === 'export' && depth === 0) {
      const after = next(k);
      if (after < 0) return null;
      const what = tokens[after];
      if (what.k === 'w' && what.word === 'default') {
        cut(token.from, what.to, '0,');
      } else if (what.k === 'w' && /^(?:var|let|const|function|class|async)$/.test(what.word)) {
        cut(token.from, token.to);
      } else if (what.k === '{' || what.k === '*') {
        let j = after;
        if (what.k === '{') while (j >= 0 && tokens[j].k !== '}') j = next(j);
        if (j < 0) return null;
        let end = tokens[j].to;
        const from = next(j);
        if (what.k === '*' || is(from, 'from')) {
          end = specifierEnd(from);
          if (end < 0) return null;
        }
        cut(token.from, end);
        while (k < tokens.length - 1 && tokens[k + 1].from < end) k++;
      } else {
        return null;
      }
    }
  }
  return { text: out, spans };
};

// Files V8 counts lines in differently (a lone CR, U+2028, U+2029) or whose
// HTML-like comments (`<!--`, `-->`) the lexer does not read: the inspector.
const UNREAD = /\r(?!\n)|[\u2028\u2029]|<!--|-->/;
// Past this, a file's checks cost more than the inspector (a bundle).
const MAX_COMPILED = 2 << 20;

// Where the calls of the breakpoints `list` (indices into spec.breakpoints)
// go in `content`, a CommonJS file's or (`asModule`) an ES module's: the
// text with them in, the breakpoints compiled in, and those left for the
// inspector.
const plan = (spec, content, list, asModule) => {
  try {
    return placed(spec, content, list, asModule);
  } catch (_) {
    return { text: content, compiled: [], fallback: list.slice() };
  }
};
const placed = (spec, content, list, asModule) => {
  const none = { text: content, compiled: [], fallback: list.slice() };
  if (content.length > MAX_COMPILED || UNREAD.test(content)) return none;
  const { tokens } = lex(content);
  // The text V8 checks: offsets as in `content`.
  let check = content;
  let spans = [];
  if (asModule) {
    const body = asFunctionBody(content, tokens);
    if (body === null) return none;
    ({ text: check, spans } = body);
  } else if (content.startsWith('#!')) check = blank(content, 0, content.indexOf('\n') >>> 0);
  const compiles = asModule ? compilesModule : compilesCommonJs;
  if (!compiles(check)) return none;
  // Where V8 checks blanks, not the module's code.
  const blanked = (at) => spans.some(([from, to]) => from < at && at < to);
  const found = starts(tokens, new Set(list.map((index) => spec.breakpoints[index].line)));
  const chosen = [];
  const fallback = [];
  for (const index of list) {
    const breakpoint = spec.breakpoints[index];
    const start = found.get(breakpoint.line);
    if (!startsStatement(content, start)) {
      fallback.push(index);
      continue;
    }
    // Right after the token before the line (so the line's own columns stay
    // as they are), behind `;` after a `}` (what the line break did).
    const at = start.last === '' ? start.at : start.lastEnd;
    if (blanked(at)) {
      fallback.push(index);
      continue;
    }
    const call = (start.last === '}' ? ';' : '') + callText(spec, breakpoint.probes, inline);
    // Code there: an unmatched `)` cannot compile, as it could in a
    // template's text or a comment.
    if (compiles(check.slice(0, at) + ')' + check.slice(at))) {
      fallback.push(index);
      continue;
    }
    chosen.push({ index, at, call });
  }
  // From the end, so each offset still holds.
  const insert = (text, some) => {
    const sorted = some.slice().sort((a, b) => b.at - a.at || b.index - a.index);
    for (const { at, call } of sorted) text = text.slice(0, at) + call + text.slice(at);
    return text;
  };
  let kept = chosen;
  if (kept.length > 0 && !compiles(insert(check, kept))) {
    // One of them does not compile: each is tried on its own.
    kept = chosen.filter((one) => compiles(insert(check, [one])));
    if (kept.length === 0 || !compiles(insert(check, kept))) kept = [];
  }
  for (const one of chosen) if (!kept.includes(one)) fallback.push(one.index);
  return {
    text: kept.length === 0 ? content : insert(content, kept),
    compiled: kept.map((one) => one.index),
    fallback,
  };
};

// An ES module's text with its calls compiled in, and before its first line
// of code one call that tells the program's thread, as the module starts to
// run, which of its breakpoints were compiled in and which the inspector
// takes (given the line that call is on and the column that line's code now
// starts at). Null when the module keeps its text.
const moduleText = (spec, content, list) => {
  const { text, compiled, fallback } = plan(spec, content, list, true);
  const at = content.startsWith('#!') ? content.indexOf('\n') + 1 : 0;
  if (at === 0 && content.startsWith('#!')) return null;
  const E = '__ds_e_' + spec.tag;
  const head = (column) =>
    'try{globalThis[' + JSON.stringify(spec.key) + '].m(' + JSON.stringify(compiled) + ',' +
    JSON.stringify(fallback) + ',' + (at === 0 ? 1 : 2) + ',' + column + ')}catch(' + E + '){};';
  let column = 0;
  while (head(column).length !== column) column = head(column).length;
  return text.slice(0, at) + head(column) + text.slice(at);
};

// What the module hooks' `load` does with what the next hook loaded: an ES
// module at one of `paths` ([path, breakpoint indices] pairs, by the paths
// and real paths of the logged files) gets its calls.
const rewriter = (spec, paths) => {
  const byPath = new Map(paths);
  const decoder = new TextDecoder();
  return (href, result) => {
    try {
      if (!result || result.format !== 'module' || !href.startsWith('file:')) return result;
      const list = byPath.get(require('url').fileURLToPath(href));
      if (!list || result.source == null) return result;
      const source = result.source;
      const content = typeof source === 'string' ? source : decoder.decode(source);
      const text = moduleText(spec, content, list);
      return text === null ? result : { ...result, source: text };
    } catch (_) {
      return result;
    }
  };
};

module.exports = { callText, evaluated, plan, rewriter };
