"""`tasks check` reads each task's program_html checks as the benchmark's evaluator does
(issue 18, item 8): every task of the real task files passes; a locator or helper the evaluator
cannot run is named. Host-only: the rules are the evaluators' source (sitectl/ops/task_evals.py
cites them); the data is the family's real task files in ../shared/data."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sitectl.ops.task_evals import VISUALWEBARENA, WEBARENA, WEBARENA_LITE, evaluator_of, program_html_problems

DATA = Path(__file__).resolve().parents[3] / "shared/data"
FILES = {
    "webarena/test.raw.json": WEBARENA,
    "webarena-lite/test_webarena_lite.raw.json": WEBARENA_LITE,
    "visualwebarena/test_classifieds.raw.json": VISUALWEBARENA,
    "visualwebarena/test_reddit.raw.json": VISUALWEBARENA,
    "visualwebarena/test_shopping.raw.json": VISUALWEBARENA,
}


def filled(tasks: list[dict]) -> list[dict]:
    """The tasks with every __SITE__ placeholder replaced by a URL (as `tasks check` does)."""
    return json.loads(re.sub(r"__([A-Z_]+)__", lambda m: "http://127.0.0.1:1/" + m.group(1).lower(), json.dumps(tasks)))


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_task_of_the_real_files_can_be_run_by_its_evaluator(name):
    tasks = json.loads((DATA / name).read_text())
    assert evaluator_of(tasks) == FILES[name]
    with_html = [t for t in tasks if (t.get("eval") or {}).get("program_html")]
    assert with_html, name
    problems = {t["task_id"]: p for t in filled(tasks) if (p := program_html_problems(t, FILES[name]))}
    assert problems == {}, list(problems.items())[:5]


def test_webarena_verified_has_no_program_html_to_read():
    # Its `eval` is a list of its own evaluators (research/family-formats.md): nothing here applies.
    tasks = json.loads((DATA / "webarena-verified/webarena-verified.json").read_text())
    assert all(isinstance(t["eval"], list) for t in tasks)
    assert [p for t in tasks for p in program_html_problems(t, WEBARENA)] == []


def task(locator: str = "", url: str = "last", required=None, **more) -> dict:
    return {"task_id": 1, "sites": ["shopping"], **more,
            "eval": {"program_html": [{"url": url, "locator": locator,
                                       "required_contents": required if required is not None else {"must_include": ["x"]}}]}}


@pytest.mark.parametrize("locator,evaluator,why", [
    # A spread that does not start the way the evaluator looks for: "Unknown locator".
    ("[ ...document.querySelectorAll('a')].length", WEBARENA, "is none of the forms"),
    ("Array.from(document.querySelectorAll('a')).length", WEBARENA, "is none of the forms"),
    ("lambda:(() => document.title)()", WEBARENA, "is none of the forms"),  # VisualWebArena's form only
    ("func:shopping_get_product_price(__page__)", WEBARENA, "not a helper of webarena's evaluator (a helper of visualwebarena"),
    ("func:no_such_helper(__page__, 'x')", VISUALWEBARENA, "no_such_helper is not a helper"),
    ("func:gitlab_get_project_memeber_role(__page__, user)", WEBARENA, "neither a literal nor __page__"),
    ("func:gitlab_get_project_memeber_role(__page__, 'x'", WEBARENA, "not a Python expression"),
    ("func:__import__('os').system('id')", WEBARENA, "not a call of a helper function"),
    ("document.querySelector('.a').outerText)", WEBARENA, "closes nothing open"),
    ("document.querySelector('.a).outerText", WEBARENA, "quote opened at character 24 is never closed"),
    ("[...document.querySelectorAll('a')].map(e => e.href.join(' ')", WEBARENA, "'(' opened at"),
    ("lambda:document.title", VISUALWEBARENA, "also strips 'd'"),
])
def test_a_check_the_evaluator_cannot_run_is_named(locator, evaluator, why):
    (p,) = program_html_problems(task(locator), evaluator)
    assert why in p and p.startswith("program_html[1].locator"), p


@pytest.mark.parametrize("locator", [
    "", "document.querySelector('.a').outerText", "[...document.querySelectorAll('a')].map(e => e.href).join(' ')",
    "document.querySelector('[name=\"x\"]')?.value || ''", "document.body.innerText.match(/a[)(]b/g).length",
    # Valid JavaScript a breaker run found refused (node parses every one): a / inside a regular
    # expression's class, a regular expression after => or return, templates inside templates.
    "document.URL.split(/[/?]/).length", "document.title.replace(/[/]/g, '-')",
    "[...document.querySelectorAll('a')].filter(a => /\\(/.test(a.href)).length",
    "[...document.querySelectorAll('a')].map(a => { return /'/.test(a.title) })",
    "document.title + /[(]/.source", "document.title.includes(`${'`'}`)", "document.x(`a${`b${1}`}c`)",
    "document.title.split('/').length / 2 / 1",
    "func:gitlab_get_project_memeber_role(__page__, 'byteblaze')",
    "func:shopping_get_sku_latest_review_rating('B09')",
])
def test_what_webarena_runs_passes(locator):
    assert program_html_problems(task(locator), WEBARENA) == []


def test_hostile_task_text_is_a_reason_not_a_crash():
    """A breaker run crashed `tasks check` with a helper argument nested 30,000 deep
    (RecursionError) and a 200,000-character one (MemoryError)."""
    (p,) = program_html_problems(task(url="func:reddit_get_post_url(" + "-" * 200_000 + "1)"), WEBARENA)
    assert "characters long" in p, p
    (p,) = program_html_problems(task("func:gitlab_get_project_memeber_role(__page__, " + "+".join(["1"] * 6000) + ")"), WEBARENA)
    assert "cannot be read (RecursionError)" in p or "neither a literal" in p, p
    (p,) = program_html_problems(task("document.x(" + "`${" * 3000 + "1" + "}`" * 3000 + ")"), WEBARENA)
    assert "nested too deeply" in p, p


def test_a_task_file_nested_too_deeply_is_a_usage_error(tmp_path):
    from sitectl.errors import UsageError
    from sitectl.ops.tasks import load_tasks

    f = tmp_path / "deep.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(UsageError, match="nested too deeply"):
        load_tasks(f)


@pytest.mark.parametrize("required,evaluator,why", [
    ({"exact_match": None}, WEBARENA, "exact_match is not a string"),
    ({"exact_match": ["a"]}, WEBARENA, "exact_match is not a string"),
    ({"must_include": [None, 1]}, WEBARENA, "must_include is not a list of strings"),
    ({"must_exclude": "x"}, VISUALWEBARENA, "must_exclude is not a list of strings"),
    ({"fuzzy_match": 3}, VISUALWEBARENA, "fuzzy_match is not a string or a list of strings"),
])
def test_required_contents_the_evaluator_would_crash_on_are_named(required, evaluator, why):
    """The evaluators compare `exact_match` as a string and split every list item on ` |OR| `:
    anything else raises inside them (WebArena's beartype check, `str.split`)."""
    (p,) = program_html_problems(task(required=required), evaluator)
    assert why in p, p


def test_urls_and_required_contents_are_read_as_the_evaluator_does():
    assert program_html_problems(task(url="func:reddit_get_post_url('__last_url__')"), WEBARENA) == []
    assert program_html_problems(task(url="func:shopping_get_latest_order_url()"), WEBARENA) == []
    (p,) = program_html_problems(task(url="func:shopping_get_sku_product_page_url('B0')"), WEBARENA)
    assert "not a helper of webarena's evaluator" in p, p
    (p,) = program_html_problems(task(url="__SHOPPING__/x"), WEBARENA)  # left unfilled
    assert "neither 'last', a URL nor func:" in p, p
    (p,) = program_html_problems(task(required={"fuzzy_match": ["x"]}), WEBARENA)
    assert "has none of exact_match, must_include (has fuzzy_match)" in p, p
    assert program_html_problems(task(required={"fuzzy_match": ["x"]}), WEBARENA_LITE) == []
    (p,) = program_html_problems(task(required={"fuzzy_match": "x"}), WEBARENA_LITE)
    assert "fuzzy_match is not a list" in p, p
    (p,) = program_html_problems(task(required={"must_include": "yjlou"}), WEBARENA)
    assert "must_include is not a list" in p, p
    assert program_html_problems(task(required={"required_values": ["< 700"]}), VISUALWEBARENA) == []


def test_the_evaluator_is_told_by_the_task_files_fields():
    assert evaluator_of([task()]) == WEBARENA
    assert evaluator_of([task(old_task_id=3)]) == WEBARENA_LITE
    assert evaluator_of([task(image=None)]) == VISUALWEBARENA
    assert evaluator_of([{**task(), "sites": ["classifieds"]}]) == VISUALWEBARENA
