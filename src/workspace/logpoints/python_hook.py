# debug-sidecar's Python logpoints (src/workspace/logpoints/python.rs). `run`
# writes this file as `sitecustomize.py` into a private folder and puts the
# folder first on PYTHONPATH, so every Python process the command starts
# (`python app.py`, `pytest`, what they spawn) loads it before the program.
#
# How a logpoint's line is reached, fastest first:
# - A file the program imports is compiled from its source with one call
#   added before the statement on that line (the file on disk is untouched
#   and no bytecode is cached): between hits the program runs as compiled.
# - A script `run` starts directly (`python app.py`) is started through
#   run_main.py in this folder, which compiles it the same way.
# - pytest's test files: the calls go into pytest's tree just before it
#   rewrites the asserts, and its cache is skipped for those files.
# - A file something else runs (the main script of a process `run` did not
#   start, runpy, exec) is seen by an audit hook and watched with
#   sys.monitoring (3.12+) or a trace function (3.8 to 3.11: every call of the
#   process pays for it, only that file's frames are traced by line).
#
# This file holds what every process needs: the finder, the audit hook and
# run_main. The rest (debug_sidecar_logpoints.py in this folder) is compiled
# the first time a process meets a logpoint's file, so a process that never
# does pays for no more than this file.
#
# Records go to <pid>.jsonl in the folder (each process that loads the hook
# also says so in started.jsonl), one JSON line each, which `run` reads.
# Nothing here may break the program: every failure is caught and reported,
# and the program runs on without logpoints.


def _debug_sidecar_logpoints():
    import os
    import sys

    here = os.path.dirname(os.path.realpath(__file__))

    def real(path):
        try:
            return os.path.realpath(path)
        except Exception:
            return path

    # The program sees sys.path as it would without this folder.
    sys.path[:] = [p for p in sys.path if real(p or ".") != here]
    # Older interpreters get no logpoints (`run` says no Python 3.8+ ran);
    # this file stays readable by them (no syntax newer than Python 2.7).
    if sys.version_info < (3, 8):
        return _chain(here)
    import builtins

    try:
        # JSON with no true, false or null (hook.rs): a Python literal, read
        # without importing json (a process that never reaches a logpoint's
        # file pays for no import).
        with open(os.path.join(here, "spec.json"), encoding="utf-8") as f:
            spec = eval(f.read(), {"__builtins__": {}}, {})
        key = spec["key"]
    except Exception:
        return _chain(here)
    if hasattr(builtins, key):
        return _chain(here)
    # This process loaded the hook (what `run` counts), in a file all share.
    try:
        started = os.open(os.path.join(here, "started.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.write(started, b'{"t": "start"}\n')
        os.close(started)
    except Exception:
        return _chain(here)

    import importlib.machinery

    by_file = {}
    for index, breakpoint in enumerate(spec["breakpoints"]):
        by_file.setdefault(real(breakpoint["path"]), []).append(index)

    # The rest of the hook (debug_sidecar_logpoints.py in this folder),
    # compiled the first time a file needs it; None when it cannot load.
    loaded = []

    def hook():
        if not loaded:
            found = None
            try:
                path = os.path.join(here, "debug_sidecar_logpoints.py")
                with open(path, "rb") as f:
                    source = f.read()
                namespace = {"__name__": "debug_sidecar_logpoints", "__builtins__": builtins}
                exec(compile(source, path, "exec", dont_inherit=True), namespace)
                found = namespace["install"](spec, here, real, by_file)
                found.hit.run_main = run_main
                setattr(builtins, key, found.hit)
            except (KeyboardInterrupt, RecursionError):
                raise
            except Exception:
                found = None
            loaded.append(found)
        return loaded[0]

    names = set()
    for path in by_file:
        stem = os.path.splitext(os.path.basename(path))[0]
        names.add(os.path.basename(os.path.dirname(path)) if stem == "__init__" else stem)
    PathFinder = importlib.machinery.PathFinder
    SourceFileLoader = importlib.machinery.SourceFileLoader

    class Finder:
        @classmethod
        def find_spec(cls, fullname, path=None, target=None):
            if fullname == "_pytest.assertion.rewrite":
                try:
                    found = PathFinder.find_spec(fullname, path)
                    if found is not None and found.loader is not None and hook() is not None:
                        return hook().wrap_pytest(found)
                except Exception:
                    pass
                return None
            if fullname.rpartition(".")[2] not in names:
                return None
            try:
                found = PathFinder.find_spec(fullname, path)
                if (
                    found is not None
                    and found.origin
                    and type(found.loader) is SourceFileLoader
                    and real(found.origin) in by_file
                    and hook() is not None
                ):
                    found.loader = hook().Loader(found.loader.name, found.loader.path)
                    return found
            except Exception:
                pass
            return None

    # Just before the path finder: built-in and frozen modules come first, as
    # they would.
    at = next((i for i, f in enumerate(sys.meta_path) if f is PathFinder), len(sys.meta_path))
    sys.meta_path.insert(at, Finder)

    WANTED = {"exec", "cpython.run_file"}

    # File name as code names it -> whether it is a logpoint's file.
    targeted = {}

    def audit(event, args):
        if event not in WANTED:
            return
        try:
            name = args[0].co_filename if event == "exec" else args[0]
            if type(name) is not str:
                return
            path = targeted.get(name)
            if path is None:
                if len(targeted) > 10000:
                    targeted.clear()
                path = targeted[name] = real(name) if not name.startswith("<") else ""
            if path and path in by_file and hook() is not None:
                hook().audit(event, args, path)
        except Exception:
            pass

    sys.addaudithook(audit)

    # For run_main.py: the program's main script, compiled with the calls.
    def run_main():
        script = sys.argv[1]
        del sys.argv[0]
        if sys.path and real(sys.path[0]) == here:
            sys.path[0] = os.path.dirname(real(script))
        filename = os.path.abspath(script) if sys.version_info >= (3, 9) else script
        with open(script, "rb") as f:
            source = f.read()
        main = type(sys)("__main__")
        main.__file__ = filename
        main.__cached__ = None
        main.__builtins__ = builtins
        main.__loader__ = SourceFileLoader("__main__", filename)
        if sys.version_info < (3, 14):
            main.__annotations__ = {}
        sys.modules["__main__"] = main
        try:
            # A syntax error is reported as Python would, from here too.
            if real(script) in by_file and hook() is not None:
                code = hook().compile_target(source, filename, real(script))
            else:
                code = compile(source, filename, "exec", dont_inherit=True)
            exec(code, main.__dict__)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as error:
            tb = error.__traceback__
            while tb is not None and os.path.dirname(real(tb.tb_frame.f_code.co_filename)) == here:
                tb = tb.tb_next
            error = error.with_traceback(tb)
            sys.last_type, sys.last_value, sys.last_traceback = type(error), error, tb
            if sys.version_info >= (3, 12):
                sys.last_exc = error
            sys.excepthook(type(error), error, tb)
            raise SystemExit(1)

    # What run_main.py calls, and what marks this process as hooked; the
    # calls compiled into a file call the hook's own `hit`, which replaces it.
    def placeholder(*args):
        return None

    placeholder.run_main = run_main
    setattr(builtins, key, placeholder)
    return _chain(here)


# The person's own sitecustomize, if there is one further along sys.path.
def _chain(here):
    import os
    import sys

    path = [p for p in sys.path if os.path.realpath(p or ".") != here]
    try:
        import importlib.machinery
    except ImportError:
        # Python 2.
        import imp

        try:
            found = imp.find_module("sitecustomize", path)
        except ImportError:
            return
        try:
            imp.load_module("sitecustomize", *found)
        finally:
            if found[0] is not None:
                found[0].close()
        return
    found = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if found is None or found.loader is None:
        return
    import importlib.util

    module = importlib.util.module_from_spec(found)
    sys.modules["sitecustomize"] = module
    found.loader.exec_module(module)


_debug_sidecar_logpoints()
del _debug_sidecar_logpoints, _chain
