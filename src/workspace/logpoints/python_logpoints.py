# debug-sidecar's Python logpoints: the part a process compiles only when it
# needs it (src/workspace/logpoints/python.rs). sitecustomize.py in this folder
# (python_hook.py) runs this file the first time a logpoint's file is imported
# or run, something else compiles one, or pytest loads its assert rewriting,
# and calls install(): what a hit records, how a file is compiled with the
# calls, pytest's tree, and the files something else compiled, watched as they
# run. A process that reaches none of these never compiles it (about 7 ms of
# an interpreter's start, as no bytecode of it is cached).


def install(spec, here, real, by_file):
    import _thread
    import importlib.machinery
    import os
    import sys

    key = spec["key"]

    write = os.write
    cap = spec["cap"]
    max_hits = spec["maxHits"]
    CodeType = type(install.__code__)
    # Never swallowed: the person's Ctrl-C, and the program's own recursion
    # at its limit (Python 3.8 aborts if the overflow is caught and the stack
    # grows on).
    FATAL = (KeyboardInterrupt, RecursionError)
    lazy = {}

    def module(name):
        found = lazy.get(name)
        if found is None:
            found = lazy[name] = __import__(name, fromlist=["_"])
        return found

    try:
        from _json import encode_basestring_ascii as quote
    except Exception:

        def quote(text):
            return module("json").dumps(text)

    # JSON for what `plain` makes (and the hook's own records), without
    # importing json (it imports re: milliseconds at every start).
    def encode(v):
        t = type(v)
        if t is str:
            return quote(v)
        if v is None:
            return "null"
        if t is bool:
            return "true" if v else "false"
        if t is int or t is float:
            return repr(v)
        if t is list:
            return "[" + ", ".join([encode(item) for item in v]) + "]"
        if t is dict:
            return "{" + ", ".join([quote(k) + ": " + encode(item) for k, item in v.items()]) + "}"
        return quote(repr(v))

    # The process's own record file, opened at its first record. Its
    # descriptor is checked before each write: a program that closed it and
    # opened a file of its own on that number never gets records written in.
    out = [None, None]
    fstat = os.fstat

    def record_file():
        fd, identity = out
        if fd is not None:
            try:
                st = fstat(fd)
                if (st.st_dev, st.st_ino) == identity:
                    return fd
            except OSError:
                pass
        # `run`'s file in memory, else a file of this process's own.
        try:
            fd = os.open(spec["hits"], os.O_WRONLY | os.O_APPEND)
        except Exception:
            fd = os.open(os.path.join(here, "%d.jsonl" % os.getpid()), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        st = fstat(fd)
        out[0], out[1] = fd, (st.st_dev, st.st_ino)
        return fd

    # json's own C encoder, built without importing json; `encode` when this
    # Python has none.
    try:
        from _json import make_encoder

        def refuse(value):
            raise TypeError(type(value).__name__)

        c_encode = make_encoder(None, refuse, quote, None, ": ", ", ", False, False, False)

        def dumps(record):
            try:
                return "".join(c_encode(record, 0))
            except FATAL:
                raise
            except Exception:
                return encode(record)

    except Exception:
        dumps = encode

    def send(record):
        try:
            write(record_file(), (dumps(record) + "\n").encode("ascii", "replace"))
        except FATAL:
            raise
        except Exception:
            pass

    def describe(error):
        try:
            return clean(("%s: %s" % (type(error).__name__, error))[:300])
        except Exception:
            return type(error).__name__

    # Text JSON can carry: a lone surrogate (from surrogateescape) becomes
    # U+FFFD, which serde_json reads, not an escape it refuses.
    def clean(text):
        try:
            text.encode("utf-8")
            return text
        except UnicodeEncodeError:
            return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")

    # A value as plain JSON: at most 200 nodes, about twice the cap in text,
    # 6 levels and 100 entries a level; strings over the cap cut; what JSON
    # lacks as its repr (cut). `run` cuts the whole to the cap.
    SAFE_INT = 2**53
    INFINITIES = (float("inf"), float("-inf"))

    def plain(value):
        # The common values first, without building the walk below.
        t = type(value)
        if value is None or t is bool or (t is int and -SAFE_INT < value < SAFE_INT):
            return value
        if t is float and value == value and value not in INFINITIES:
            return value
        budget = [200, 2 * cap]
        on_path = set()

        def text(v):
            try:
                s = repr(v)
            except FATAL:
                raise
            except Exception as error:
                return "[repr failed: %s]" % describe(error)
            return clean(s if len(s) <= cap else s[: cap - 100] + "...")

        def walk(v, depth):
            budget[0] -= 1
            if budget[0] < 0 or budget[1] < 0:
                return "..."
            budget[1] -= 8
            t = type(v)
            if v is None or t is bool:
                return v
            if t is str:
                budget[1] -= min(len(v), cap)
                v = clean(v)
                return v if len(v) <= cap else {"$truncated": v[: cap - 100], "length": len(v)}
            if t is int:
                if -(2**53) < v < 2**53:
                    return v
                return text(v) if v.bit_length() < 3000 else "[int of %d bits]" % v.bit_length()
            if t is float:
                return v if v == v and v not in (float("inf"), float("-inf")) else repr(v)
            if depth >= 6:
                return "[%s]" % t.__name__
            if id(v) in on_path:
                return "[Circular]"
            on_path.add(id(v))
            try:
                if isinstance(v, (list, tuple, set, frozenset)):
                    items = []
                    for i, item in enumerate(v):
                        if i >= 100:
                            items.append("...")
                            break
                        items.append(walk(item, depth + 1))
                    return items
                if isinstance(v, dict):
                    obj = {}
                    for i, (k, item) in enumerate(v.items()):
                        if i >= 100:
                            obj["..."] = "%d more keys" % (len(v) - 100)
                            break
                        name = clean(k) if type(k) is str else text(k)
                        obj[name[:cap]] = walk(item, depth + 1)
                    return obj
                fields = getattr(v, "__dict__", None) if t.__repr__ is object.__repr__ else None
                if type(fields) is dict:
                    obj = {"$type": t.__name__}
                    for i, (k, item) in enumerate(fields.items()):
                        if i >= 100:
                            break
                        obj[clean(str(k))[:cap]] = walk(item, depth + 1)
                    return obj
                return text(v)
            finally:
                on_path.discard(id(v))

        return walk(value, 0)

    breakpoints = spec["breakpoints"]
    for breakpoint in breakpoints:
        for probe in breakpoint["probes"]:
            codes = []
            for expression in probe["expressions"]:
                try:
                    code = compile(expression, "<logpoint>", "eval", dont_inherit=True)
                except Exception as error:
                    codes.append(describe(error))
                    continue
                # A comprehension or lambda in it has a scope of its own, which
                # sees the frame's globals only: it gets them merged with the
                # locals.
                # So does `:=` in a comprehension, which 3.12 inlines.
                nested = ":=" in expression or any(type(c) is CodeType for c in code.co_consts)
                codes.append((code, nested))
            probe["codes"] = codes

    hits = {}
    busy = _thread._local()

    # A breakpoint's line ran in `frame`: each probe's values, or why not.
    # True when every probe of it has had its last hit.
    def fire(index, frame):
        if getattr(busy, "on", False):
            return False
        busy.on = True
        live = False
        try:
            local, merged = None, None
            for probe in breakpoints[index]["probes"]:
                n = hits.get(probe["index"], 0) + 1
                hits[probe["index"]] = n
                live = live or n < max_hits
                if n > max_hits:
                    continue
                if local is None:
                    # A copy: what an expression assigns (`:=`) never reaches
                    # the program's variables.
                    local = dict(frame.f_locals)
                values = []
                for code in probe["codes"]:
                    if type(code) is str:
                        values.append([0, code])
                        continue
                    code, nested = code
                    try:
                        if nested:
                            if merged is None:
                                merged = dict(frame.f_globals)
                                merged.update(local)
                            value = eval(code, merged)
                        else:
                            value = eval(code, frame.f_globals, local)
                    except FATAL:
                        raise
                    except BaseException as error:
                        values.append([0, describe(error)])
                        continue
                    try:
                        values.append([1, plain(value)])
                    except FATAL:
                        raise
                    except Exception as error:
                        values.append([0, "the value could not be read: " + describe(error)])
                send({"t": "hit", "p": probe["index"], "v": values})
            return not live
        except FATAL:
            raise
        except BaseException:
            return False
        finally:
            busy.on = False

    # The syntax tree through _ast, built in: the ast module imports re and
    # enum, tens of milliseconds at a start. Its few helpers are below.
    class ast:
        pass

    def need_ast():
        if not hasattr(ast, "AST"):
            for name in dir(module("_ast")):
                setattr(ast, name, getattr(module("_ast"), name))

    def parse(source, filename):
        return compile(source, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)

    def iter_fields(node):
        for field in node._fields:
            try:
                yield field, getattr(node, field)
            except AttributeError:
                pass

    def walk(node):
        todo = [node]
        while todo:
            node = todo.pop()
            for _, value in iter_fields(node):
                if isinstance(value, ast.AST):
                    todo.append(value)
                elif isinstance(value, list):
                    todo.extend(item for item in value if isinstance(item, ast.AST))
            yield node

    POSITION = ("lineno", "col_offset", "end_lineno", "end_col_offset")

    def copy_location(new, old):
        for name in POSITION:
            if name in old._attributes and name in new._attributes:
                value = getattr(old, name, None)
                if value is not None:
                    setattr(new, name, value)
        return new

    def fix_missing_locations(node, parent=(1, 0, 1, 0)):
        here = parent
        if "lineno" in node._attributes:
            here = []
            for name, inherited in zip(POSITION, parent):
                value = getattr(node, name, None)
                if value is None:
                    value = inherited
                    setattr(node, name, value)
                here.append(value)
        for _, value in iter_fields(node):
            if isinstance(value, ast.AST):
                fix_missing_locations(value, here)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        fix_missing_locations(item, here)
        return node

    def spent(index):
        return all(hits.get(p["index"], 0) >= max_hits for p in breakpoints[index]["probes"])

    # Breakpoints whose probes all reached maxHits: their calls return at once.
    done = set()

    def hit(index):
        if index in done:
            return
        if fire(index, sys._getframe(1)):
            done.add(index)

    # Where each breakpoint of a file goes: the statement starting on its
    # line, the statement a continuation line belongs to, or the next one.
    def statements(tree):
        found = []

        def visit(node):
            for field, value in iter_fields(node):
                if isinstance(value, ast.AST):
                    visit(value)
                    continue
                if not isinstance(value, list):
                    continue
                for i, item in enumerate(value):
                    if isinstance(item, ast.stmt) and not skipped(node, field, i, item):
                        found.append(item)
                    if isinstance(item, ast.AST):
                        visit(item)

        visit(tree)
        return found

    # A docstring or a __future__ import: nothing may go before it.
    def skipped(owner, field, i, stmt):
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            return True
        return (
            i == 0
            and field == "body"
            and isinstance(owner, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        )

    def first_child_line(stmt):
        lines = [
            child.lineno
            for child in walk(stmt)
            if child is not stmt and isinstance(child, ast.stmt)
        ]
        return min(lines) if lines else None

    def resolve(found, line):
        for stmt in found:
            if stmt.lineno == line:
                return stmt
        inner = None
        for stmt in found:
            end = getattr(stmt, "end_lineno", None) or stmt.lineno
            if stmt.lineno < line <= end:
                inner = stmt
        if inner is not None:
            child = first_child_line(inner)
            if child is None or line < child:
                return inner
        later = [stmt for stmt in found if stmt.lineno > line]
        return min(later, key=lambda s: s.lineno) if later else None

    reported = set()

    # Which statement of this tree each breakpoint of `path` goes before
    # (a file compiled again, by a reload, is placed again; said once).
    def placement(path, tree):
        need_ast()
        found = statements(tree)
        targets = {}
        for index in by_file.get(path, ()):
            stmt = resolve(found, breakpoints[index]["line"])
            if index not in reported:
                reported.add(index)
                if stmt is None:
                    send({"t": "unresolved", "b": index})
                else:
                    send({"t": "resolved", "b": index, "line": stmt.lineno})
            if stmt is not None:
                targets.setdefault(id(stmt), (stmt, []))[1].append(index)
        return targets

    def call(index, at):
        node = ast.Call(ast.Name(key, ast.Load()), [ast.Constant(index)], [])
        return copy_location(node, at)

    def transform(tree, targets):
        def fix(node):
            for field, value in iter_fields(node):
                if isinstance(value, list):
                    if any(isinstance(item, ast.stmt) for item in value):
                        new = []
                        for stmt in value:
                            fix(stmt)
                            target = targets.get(id(stmt))
                            if target is None:
                                new.append(stmt)
                                continue
                            for index in target[1]:
                                if isinstance(stmt, ast.While):
                                    # The test runs before every pass, as the line does.
                                    stmt.test = copy_location(
                                        ast.BoolOp(ast.Or(), [call(index, stmt), stmt.test]), stmt.test
                                    )
                                    continue
                                new.append(copy_location(ast.Expr(call(index, stmt)), stmt))
                                if isinstance(stmt, (ast.For, ast.AsyncFor)):
                                    stmt.body.insert(
                                        0, copy_location(ast.Expr(call(index, stmt)), stmt.body[0])
                                    )
                            new.append(stmt)
                        setattr(node, field, new)
                    else:
                        for item in value:
                            if isinstance(item, ast.AST):
                                fix(item)
                elif isinstance(value, ast.AST):
                    fix(value)

        fix(tree)
        return fix_missing_locations(tree)

    keep = []

    # Whether code was compiled with the logpoints' calls in (by this hook or
    # by pytest from a tree the hook changed): the calls name the key.
    def ours(code):
        todo = [code]
        while todo:
            item = todo.pop()
            if key in item.co_names:
                return True
            todo.extend(c for c in item.co_consts if type(c) is CodeType)
        return False

    # The module's code from its source, with the logpoints' calls in.
    def compile_target(source, filename, path):
        need_ast()
        code = None
        try:
            tree = parse(source, filename)
        except Exception:
            # Not ours to report: compiled plainly below, it raises as it would.
            tree = None
        if tree is not None:
            try:
                code = compile(transform(tree, placement(path, tree)), filename, "exec", dont_inherit=True)
            except Exception as error:
                for index in by_file.get(path, ()):
                    send({"t": "error", "b": index, "m": "the file could not be compiled with it: " + describe(error)})
        if code is None:
            return compile(source, filename, "exec", dont_inherit=True)
        return code

    class Loader(importlib.machinery.SourceFileLoader):
        def get_code(self, fullname):
            path = self.get_filename(fullname)
            source = self.get_data(path)
            return compile_target(source, path, real(path))

    # pytest compiles test files itself, after rewriting their asserts: the
    # logpoints' calls go into its tree too, and its cache of compiled test
    # files is neither read nor written for a logpoint's file.
    def patch_pytest(rewrite):
        read_pyc = getattr(rewrite, "_read_pyc", None)
        write_pyc = getattr(rewrite, "_write_pyc", None)
        rewrite_asserts = getattr(rewrite, "rewrite_asserts", None)
        if not (callable(read_pyc) and callable(write_pyc) and callable(rewrite_asserts)):
            return

        def _read_pyc(source, pyc, *args, **kwargs):
            if real(str(source)) in by_file:
                return None
            return read_pyc(source, pyc, *args, **kwargs)

        def _write_pyc(state, co, *args, **kwargs):
            if real(co.co_filename) in by_file:
                return False
            return write_pyc(state, co, *args, **kwargs)

        # The calls go in first: pytest rewrites asserts only, and a line
        # inside an assert is then placed on the assert itself.
        def _rewrite_asserts(mod, source, module_path=None, *args, **kwargs):
            path = real(str(module_path)) if module_path else None
            if path in by_file:
                try:
                    transform(mod, placement(path, mod))
                except Exception as error:
                    for index in by_file[path]:
                        send({"t": "error", "b": index, "m": "pytest's tree could not take it: " + describe(error)})
            rewrite_asserts(mod, source, module_path, *args, **kwargs)

        rewrite._read_pyc = _read_pyc
        rewrite._write_pyc = _write_pyc
        rewrite.rewrite_asserts = _rewrite_asserts

    def wrap_pytest(found):
        run = found.loader.exec_module

        def exec_module(module):
            run(module)
            try:
                patch_pytest(module)
            except Exception:
                pass

        found.loader.exec_module = exec_module
        return found

    # Files something else compiled: their lines watched as they run.
    watched = {}
    seen = {}

    def lines_of(filename):
        lines = seen.get(filename)
        if lines is None:
            lines = watched.get(real(filename), {})
            seen[filename] = lines
        return lines

    NESTED = {"<lambda>", "<genexpr>", "<listcomp>", "<setcomp>", "<dictcomp>"}
    monitoring = getattr(sys, "monitoring", None)
    tracer = []

    def start_watching(path):
        try:
            need_ast()
            with open(path, "rb") as f:
                source = f.read()
            targets = placement(path, parse(source, path))
        except Exception as error:
            for index in by_file.get(path, ()):
                send({"t": "error", "b": index, "m": "the file could not be read: " + describe(error)})
            return
        # A target line -> its breakpoints and the last line of the statement's
        # own text (a compound statement's header): a line event there after
        # one on a later line of that text is the same statement going on.
        lines = {}
        for stmt, indexes in targets.values():
            # A loop's header runs again after its body; a `with` line runs
            # again at its exit, which is not another hit.
            line = stmt.lineno
            last = getattr(stmt, "end_lineno", None) or stmt.lineno
            if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
                last = first_child_line(stmt) - 1
            decorators = getattr(stmt, "decorator_list", None)
            if decorators:
                # Its decorators run first, and its line comes twice (made,
                # then named): the first decorator's line is the hit.
                line, last = decorators[0].lineno, stmt.lineno
            lines.setdefault(line, ([], max(last, line)))[0].extend(indexes)
        if not tracer and not begin_tracing(path):
            return
        watched[path] = lines
        seen.clear()

    def begin_tracing(path):
        if monitoring is not None:
            DISABLE = monitoring.DISABLE
            LINE = monitoring.events.LINE

            skips = {}

            # Where a target line comes back within its own statement.
            def continuations(code, lines):
                found, previous = set(), None
                for start, _end, line in code.co_lines():
                    if line is None:
                        continue
                    target = lines.get(line)
                    if target is not None and previous is not None and line < previous <= target[1]:
                        found.add(start)
                    previous = line
                return found

            def on_line(code, line):
                lines = lines_of(code.co_filename)
                target = lines.get(line)
                if target is None or code.co_name in NESTED or key in code.co_names:
                    return DISABLE
                skip = skips.get(id(code))
                if skip is None:
                    skip = skips[id(code)] = continuations(code, lines)
                    keep.append(code)
                frame = sys._getframe(1)
                if frame.f_lasti in skip:
                    return DISABLE
                for index in target[0]:
                    fire(index, frame)
                if all(spent(index) for index in target[0]):
                    return DISABLE

            for tool in (4, 3):
                try:
                    monitoring.use_tool_id(tool, "debug-sidecar")
                except Exception:
                    continue
                monitoring.register_callback(tool, LINE, on_line)
                monitoring.set_events(tool, LINE)
                tracer.append(tool)
                return True
            why = "no sys.monitoring tool id is free"
        elif sys.gettrace() is None:

            def trace(frame, event, arg):
                code = frame.f_code
                lines = lines_of(code.co_filename)
                if not lines or code.co_name in NESTED or key in code.co_names:
                    return None
                last = [0]

                def local(frame, event, arg):
                    if event == "line":
                        line = frame.f_lineno
                        target = lines.get(line)
                        if target is not None and not line < last[0] <= target[1]:
                            for index in target[0]:
                                fire(index, frame)
                        last[0] = line
                    return local

                return local

            sys.settrace(trace)
            module("threading").settrace(trace)
            tracer.append(trace)
            return True
        else:
            why = "another trace function (a debugger or coverage) is active"
        for index in by_file.get(path, ()):
            send({"t": "error", "b": index, "m": "that file was not compiled through the hook and " + why})
        return False

    # What sitecustomize.py's audit hook hands on: a logpoint's file `path`
    # that something else compiled and now runs.
    def audit(event, args, path):
        if path in watched:
            return
        if event == "exec" and (type(args[0]) is not CodeType or ours(args[0])):
            return
        start_watching(path)

    class Hook:
        pass

    hook = Hook()
    hook.hit = hit
    hook.Loader = Loader
    hook.wrap_pytest = wrap_pytest
    hook.audit = audit
    hook.compile_target = compile_target
    return hook
